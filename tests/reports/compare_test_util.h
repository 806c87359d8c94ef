/* Shared by the compare tests: the fixture, paths into it, literal edits,
 * a row by its metric, and a rendered comparison. */
#ifndef AITK_TESTS_COMPARE_TEST_UTIL_H
#define AITK_TESTS_COMPARE_TEST_UTIL_H

#include "reports/compare.h"
#include "report_test_util.h"

static inline cJSON *base_report(void)
{
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    return r;
}

static inline cJSON *obj_path(cJSON *r, const char *array, int index, const char *section)
{
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, array), index);
    assert_non_null(e);
    return section ? cJSON_GetObjectItemCaseSensitive(e, section) : e;
}

static inline void set_num(cJSON *obj, const char *key, double v)
{
    assert_non_null(obj);
    assert_non_null(cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateNumber(v)) ? obj
                                                                                            : NULL);
}

static inline const aitk_compare_row *row(const aitk_compare *c, const char *metric)
{
    for (size_t i = 0; i < c->count; i++)
        if (strcmp(c->rows[i].metric, metric) == 0)
            return &c->rows[i];
    fail_msg("no row '%s'", metric);
    return NULL;
}

static inline aitk_str render(const aitk_compare *c, aitk_compare_format fmt)
{
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_compare_render(c, fmt, &out), AITK_OK);
    return out;
}

/* A benchmark that silently stopped producing numbers must not pass: every
 * microbenchmark BASE had and NEW lacks is shown and is a regression. */
#endif
