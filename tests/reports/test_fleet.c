/* The robust rule of the fleet report (reports/robust.h) on values whose
 * median, MAD and modified z-score are worked out by hand in the comments,
 * and the merge's refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fleet.h"
#include "reports/report.h"
#include "reports/robust.h"

/* A node report with only what the merge reads: a verdict, one check, one
 * workload step time, one microbenchmark and the NVIDIA driver. */
static cJSON *node(const char *check_status, const char *observed, double step,
                   const char *unit, const char *driver)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"schema_version\": \"1.0\", \"summary\": {\"verdict\": \"pass\", "
             "\"counts\": {\"pass\": 1, \"warn\": 0, \"fail\": 0, \"skip\": 0, "
             "\"total\": 1}}, \"checks\": [{\"id\": \"host.memory\", \"title\": \"RAM\", "
             "\"status\": \"%s\", \"observed\": \"%s\"}], \"workloads\": [{\"name\": "
             "\"flux1-dev\", \"status\": \"completed\", \"step_time_s\": {\"median\": %g}}], "
             "\"micro\": [{\"name\": \"memcpy.host\", \"value\": 20, \"unit\": \"%s\"}], "
             "\"environment\": {\"gpu\": {\"nvml\": {\"driver_version\": \"%s\"}}}}",
             check_status, observed, step, unit, driver);
    cJSON *r = cJSON_Parse(text);
    assert_non_null(r);
    return r;
}

static double summary_num(const cJSON *fleet, const char *key)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(fleet, "summary");
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, key));
}

static cJSON *merge(cJSON **reports, size_t n)
{
    static const char *const names[] = {"a", "b", "c", "d", "e"};
    aitk_fleet_node nodes[5];
    for (size_t i = 0; i < n; i++)
        nodes[i] = (aitk_fleet_node){names[i], reports[i]};
    cJSON *fleet = NULL;
    assert_int_equal(aitk_fleet_merge(nodes, n, &fleet, NULL), AITK_OK);
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(reports[i]);
    return fleet;
}

static void test_median_mad_z(void **state)
{
    (void)state;
    /* sorted 1 2 3 4 100: median 3; |x - 3| = 2 1 0 1 97, sorted 0 1 1 2 97:
     * MAD 1. z(100) = 0.6745 * 97 / 1 = 65.43; z(1) = -1.349. */
    const double x[] = {100, 2, 3, 4, 1};
    const aitk_robust_rule *r = &aitk_robust_default_rule;
    aitk_robust_centre c;
    assert_int_equal(aitk_robust_centre_of(x, 5, r, &c), AITK_OK);
    assert_true(c.judged);
    assert_true(fabs(c.median - 3) < 1e-12);
    assert_true(fabs(c.mad - 1) < 1e-12);
    aitk_robust_verdict v = aitk_robust_judge(&c, r, 100);
    assert_true(v.has_z && fabs(v.z - 65.4265) < 1e-3 && v.outlier);
    v = aitk_robust_judge(&c, r, 1);
    assert_true(v.has_z && fabs(v.z + 1.349) < 1e-3 && !v.outlier);
    /* even count: 1 2 3 4 -> median 2.5, deviations 1.5 .5 .5 1.5 -> MAD 1 */
    assert_int_equal(aitk_robust_centre_of(x + 1, 4, r, &c), AITK_OK);
    assert_true(fabs(c.median - 2.5) < 1e-12 && fabs(c.mad - 1) < 1e-12);
}

static void test_relative_floor(void **state)
{
    (void)state;
    const aitk_robust_rule *r = &aitk_robust_default_rule;
    aitk_robust_centre c;
    /* 1.00 1.00 1.01 0.99 1.05: median 1.00, deviations 0 0 .01 .01 .05,
     * MAD 0.01; z(1.05) = 0.6745 * 5 = 3.37: within 3.5 anyway. */
    const double tight[] = {1.00, 1.00, 1.01, 0.99, 1.05};
    assert_int_equal(aitk_robust_centre_of(tight, 5, r, &c), AITK_OK);
    assert_false(aitk_robust_judge(&c, r, 1.05).outlier);
    /* 1.000 1.001 0.999 1.000 1.080: MAD 0.001, z(1.08) = 53.96, but only 8%
     * from the median: noise of a tight cluster, not an outlier. */
    const double tighter[] = {1.000, 1.001, 0.999, 1.000, 1.080};
    assert_int_equal(aitk_robust_centre_of(tighter, 5, r, &c), AITK_OK);
    aitk_robust_verdict v = aitk_robust_judge(&c, r, 1.08);
    assert_true(v.has_z && fabs(v.z) > 3.5);
    assert_false(v.outlier);
    /* MAD 0: the relative rule alone. 5 5 5 5 6 -> 6 is 20% off: outlier;
     * 5.2 would be 4%: not. */
    const double same[] = {5, 5, 5, 5, 6};
    assert_int_equal(aitk_robust_centre_of(same, 5, r, &c), AITK_OK);
    assert_true(c.mad == 0);
    v = aitk_robust_judge(&c, r, 6);
    assert_false(v.has_z);
    assert_true(v.outlier && fabs(v.relative - 0.2) < 1e-12);
    assert_false(aitk_robust_judge(&c, r, 5.2).outlier);
}

static void test_too_few(void **state)
{
    (void)state;
    const aitk_robust_rule *r = &aitk_robust_default_rule;
    aitk_robust_centre c;
    const double two[] = {1, 10};
    assert_int_equal(aitk_robust_centre_of(two, 2, r, &c), AITK_OK);
    assert_false(c.judged);
    assert_false(aitk_robust_judge(&c, r, 10).outlier);
    assert_int_equal(aitk_robust_centre_of(two, 0, r, &c), AITK_E_INVAL);
}

static void test_merge_refuses(void **state)
{
    (void)state;
    cJSON *fleet = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_fleet_merge(NULL, 0, &fleet, &err), AITK_E_INVAL);
    /* No verdict: the node is named, the place said. */
    cJSON *r = cJSON_Parse("{\"summary\": {\"counts\": {}}}");
    aitk_fleet_node n = {"rack1/node\x1b[2J", r};
    assert_int_equal(aitk_fleet_merge(&n, 1, &fleet, &err), AITK_E_PARSE);
    assert_non_null(strstr(aitk_str_cstr(&err), "rack1/node\\x1b[2J"));
    assert_non_null(strstr(aitk_str_cstr(&err), "summary.verdict"));
    assert_null(fleet);
    cJSON_Delete(r);
    aitk_str_free(&err);
}

/* Two nodes that disagree on the driver: the difference counts (exit 1),
 * but with no majority neither node is blamed. */
static void test_two_drivers_no_majority(void **state)
{
    (void)state;
    cJSON *r[] = {node("pass", "64 GiB", 1, "GB/s", "550.54"),
                  node("pass", "64 GiB", 1, "GB/s", "535.10")};
    cJSON *f = merge(r, 2);
    assert_int_equal(summary_num(f, "version_differences"), 1);
    assert_int_equal(summary_num(f, "outliers"), 0);
    assert_int_equal(aitk_fleet_exit_code(f), 1);
    cJSON_Delete(f);
}

/* A status that differs matters; an observed value alone does not; a unit
 * that differs does. */
static void test_what_matters(void **state)
{
    (void)state;
    cJSON *r[] = {node("pass", "64 GiB", 1, "GB/s", "550.54"),
                  node("pass", "63 GiB", 1, "GB/s", "550.54"),
                  node("pass", "64 GiB", 1, "GB/s", "550.54")};
    cJSON *f = merge(r, 3);
    assert_int_equal(summary_num(f, "differences"), 1);
    assert_int_equal(summary_num(f, "differences_that_matter"), 0);
    assert_int_equal(aitk_fleet_exit_code(f), 0);
    cJSON_Delete(f);
    cJSON *s[] = {node("pass", "64 GiB", 1, "GB/s", "550.54"),
                  node("fail", "4 GiB", 1, "MB/s", "550.54"),
                  node("pass", "64 GiB", 1, "GB/s", "550.54")};
    f = merge(s, 3);
    assert_int_equal(summary_num(f, "differences"), 2);
    assert_int_equal(summary_num(f, "differences_that_matter"), 2);
    assert_int_equal(aitk_fleet_exit_code(f), 1);
    /* The check's row carries what each node saw beside its status. */
    const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "differences"), 0);
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "values"), 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "value")), "fail");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "observed")),
                        "4 GiB");
    cJSON_Delete(f);
}

/* Each allocation fails in turn through the merge and every renderer:
 * NOMEM, or exactly the output of a run without failures. */
static void test_allocation_failures(void **state)
{
    (void)state;
    aitk_report_use_project_allocator();
    const double steps[] = {1.0, 1.02, 0.98, 1.01, 1.6};
    cJSON *r[5];
    for (int i = 0; i < 5; i++)
        r[i] = node(i == 2 ? "fail" : "pass", "x", steps[i], "GB/s", i == 3 ? "535" : "550");
    aitk_fleet_node nodes[5] = {{"a", r[0]}, {"b", r[1]}, {"c", r[2]}, {"d", r[3]}, {"e", r[4]}};
    static aitk_status (*const render[])(const cJSON *, aitk_str *) = {
        aitk_fleet_render_text, aitk_fleet_render_markdown, aitk_fleet_render_html};
    for (size_t k = 0; k < 3; k++) {
        aitk_str want = AITK_STR_INIT;
        int failures = 0, ok_in_a_row = 0;
        for (long n = -1; n < 50000 && ok_in_a_row < 20; n++) {
            cJSON *fleet = NULL;
            aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
            aitk_alloc_fail_after(n);
            aitk_status st = aitk_fleet_merge(nodes, 5, &fleet, &err);
            if (!st)
                st = render[k](fleet, &out);
            aitk_alloc_fail_after(-1);
            assert_true(st == AITK_OK || st == AITK_E_NOMEM);
            if (n < 0) {
                assert_int_equal(st, AITK_OK);
                assert_int_equal(aitk_fleet_exit_code(fleet), 1);
                assert_int_equal(aitk_str_append(&want, out.ptr), AITK_OK);
            } else if (st == AITK_OK) {
                ok_in_a_row++;
                assert_string_equal(out.ptr, want.ptr);
            } else {
                ok_in_a_row = 0;
                failures++;
            }
            cJSON_Delete(fleet);
            aitk_str_free(&out);
            aitk_str_free(&err);
        }
        assert_true(failures > 0);
        assert_int_equal(ok_in_a_row, 20);
        aitk_str_free(&want);
    }
    for (int i = 0; i < 5; i++)
        cJSON_Delete(r[i]);
}

/* Each node's failures to fix first, read from its report's summary, in the
 * nodes table: a fleet's machines without a driver all name gpu.nvml. */
static void test_fix_first_per_node(void **state)
{
    (void)state;
    cJSON *reports[3];
    for (int i = 0; i < 3; i++)
        reports[i] = node("pass", "64 GiB", 1.0 + 0.01 * i, "GB/s", "570.86");
    cJSON *first = cJSON_Parse("[{\"id\": \"gpu.nvml\", \"title\": \"NVML\", \"explains\": "
                               "[\"gpu.cuda_driver\"]}, {\"id\": \"deps.torch\", \"title\": "
                               "\"torch\", \"explains\": []}, {\"title\": \"no id\"}]");
    cJSON_AddItemToObject(cJSON_GetObjectItem(reports[1], "summary"), "fix_first", first);
    cJSON *fleet = merge(reports, 3);
    const cJSON *nodes = cJSON_GetObjectItem(fleet, "nodes");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 0),
                                                            "fix_first")), 0);
    const cJSON *b = cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 1), "fix_first");
    assert_int_equal(cJSON_GetArraySize(b), 2);
    assert_string_equal(cJSON_GetArrayItem(b, 0)->valuestring, "gpu.nvml");
    assert_string_equal(cJSON_GetArrayItem(b, 1)->valuestring, "deps.torch");
    aitk_str md = AITK_STR_INIT;
    assert_int_equal(aitk_fleet_render_markdown(fleet, &md), AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&md), "| fix first |"));
    assert_non_null(strstr(aitk_str_cstr(&md), "| gpu.nvml, deps.torch |"));
    aitk_str_free(&md);
    cJSON_Delete(fleet);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_mad_z),
        cmocka_unit_test(test_relative_floor),
        cmocka_unit_test(test_too_few),
        cmocka_unit_test(test_merge_refuses),
        cmocka_unit_test(test_two_drivers_no_majority),
        cmocka_unit_test(test_what_matters),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_fix_first_per_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
