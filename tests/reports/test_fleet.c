/* The robust rule of the fleet report (reports/robust.h) on values whose
 * median, MAD and modified z-score are worked out by hand in the comments,
 * and the merge's refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "reports/fleet.h"
#include "reports/robust.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_mad_z),
        cmocka_unit_test(test_relative_floor),
        cmocka_unit_test(test_too_few),
        cmocka_unit_test(test_merge_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
