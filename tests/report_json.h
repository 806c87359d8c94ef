/* Reading the JSON a test run wrote: the whole file parsed (the test fails
 * when it is missing or malformed), a check by id, a string or number field. */
#ifndef AITK_TESTS_REPORT_JSON_H
#define AITK_TESTS_REPORT_JSON_H

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/fileio.h"

static inline cJSON *load_json(const char *path)
{
    char *data = NULL;
    size_t len = 0;
    aitk_str err = AITK_STR_INIT;
    if (aitk_file_read(path, 64 << 20, &data, &len, &err))
        fail_msg("cannot read %s: %s", path, aitk_str_cstr(&err));
    aitk_str_free(&err);
    cJSON *j = cJSON_ParseWithLength(data, len);
    free(data);
    if (!j)
        fail_msg("%s is not valid JSON", path);
    return j;
}

/* The check with this id, or NULL. */
static inline const cJSON *find_check(const cJSON *report, const char *id)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "checks"))
    {
        const cJSON *i = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (cJSON_IsString(i) && !strcmp(i->valuestring, id))
            return c;
    }
    return NULL;
}

/* A string field, or "" when absent or not a string. */
static inline const char *json_str(const cJSON *o, const char *key)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(s) ? s->valuestring : "";
}

/* A number field; the test fails when it is absent or not a number. */
static inline double json_num(const cJSON *o, const char *key)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(n))
        fail_msg("no number '%s'", key);
    return n->valuedouble;
}

#endif
