/* Tolerant readers for the report tree, shared by the renderers.
 *
 * A saved report can come from an older or newer build, or be hand-edited:
 * renderers read optional fields through these and show "" or nothing for a
 * missing or mistyped one instead of failing the whole page. */
#ifndef AITK_REPORTS_FIELDS_H
#define AITK_REPORTS_FIELDS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/str.h"

/* The string at obj.key, or `fallback` when obj is NULL, the key is absent
 * or its value is not a string. A string item whose text is NULL (a tree
 * built by hand, not parsed) counts as absent, so callers never get NULL
 * unless they ask for it as the fallback. This is the one reader of a
 * string field for every layer above reports/ too: probes, models, CLI. */
static inline const char *aitk_field_str_or(const cJSON *obj, const char *key,
                                            const char *fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : fallback;
}

/* The string at obj.key, or "" when absent or not a string. */
static inline const char *aitk_field_str(const cJSON *obj, const char *key)
{
    return aitk_field_str_or(obj, key, "");
}

/* true and *out when obj.key is a number. */
static inline bool aitk_field_num(const cJSON *obj, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v))
        return false;
    *out = v->valuedouble;
    return true;
}

static inline const cJSON *aitk_field_obj(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsObject(v) ? v : NULL;
}

static inline const cJSON *aitk_field_array(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsArray(v) ? v : NULL;
}

/* Frees a scratch string used to build part of `out`. An allocation that
 * failed in the scratch marks `out` failed too, so the caller sees NOMEM
 * instead of a document with a piece silently missing. */
static inline void aitk_field_scratch_free(aitk_str *out, aitk_str *scratch)
{
    if (out && scratch->failed)
        out->failed = true;
    aitk_str_free(scratch);
}

#endif
