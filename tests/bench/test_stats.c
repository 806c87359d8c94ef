/* Runner statistics on synthetic timings. Every expected value is worked out
 * by hand in the comment beside it, never by the code under test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bench/stats.h"
#include "tests/bench/bt.h"

static void test_summary_hand_series(void **state)
{
    (void)state;
    /* 5 1 4 2 3: sorted 1..5. mean 3; median 3; type-7 p5: h = 4*0.05 = 0.2
     * -> 1 + 0.2 = 1.2; p95: h = 3.8 -> 4.8. s = sqrt(10/4) = 1.5811388;
     * half-width = t(4) 2.7764 * s / sqrt(5) = 2.7764 * 0.7071068 = 1.963211. */
    const double x[] = {5, 1, 4, 2, 3};
    aitk_stats s;
    assert_int_equal(aitk_stats_compute(x, 5, &s), 0);
    assert_int_equal(s.n, 5);
    assert_near(s.mean, 3.0, 1e-12);
    assert_near(s.median, 3.0, 1e-12);
    assert_near(s.p5, 1.2, 1e-12);
    assert_near(s.p95, 4.8, 1e-12);
    assert_near(s.min, 1.0, 0);
    assert_near(s.max, 5.0, 0);
    assert_near(s.stddev, 1.5811388, 1e-6);
    assert_near(s.ci95_low, 3.0 - 1.963211, 1e-5);
    assert_near(s.ci95_high, 3.0 + 1.963211, 1e-5);
}

static void test_percentiles_even_count(void **state)
{
    (void)state;
    /* 1..21: p5 at h = 20*0.05 = 1 -> 2; p95 at h = 19 -> 20; median 11.
     * 1..4: median at h = 1.5 -> 2.5. */
    double x[21];
    for (int i = 0; i < 21; i++)
        x[i] = i + 1;
    aitk_stats s;
    assert_int_equal(aitk_stats_compute(x, 21, &s), 0);
    assert_near(s.p5, 2.0, 1e-12);
    assert_near(s.p95, 20.0, 1e-12);
    assert_near(s.median, 11.0, 1e-12);
    assert_int_equal(aitk_stats_compute(x, 4, &s), 0);
    assert_near(s.median, 2.5, 1e-12);
}

static void test_single_and_bad_input(void **state)
{
    (void)state;
    aitk_stats s;
    const double one[] = {0.25};
    assert_int_equal(aitk_stats_compute(one, 1, &s), 0);
    assert_near(s.mean, 0.25, 0);
    assert_near(s.ci95_low, 0.25, 0);
    assert_near(s.ci95_high, 0.25, 0);
    assert_near(s.stddev, 0, 0);
    assert_int_equal(aitk_stats_compute(one, 0, &s), AITK_E_INVAL);
    const double bad[] = {1, NAN, 2};
    assert_int_equal(aitk_stats_compute(bad, 3, &s), AITK_E_INVAL);
    const double inf[] = {1, INFINITY};
    assert_int_equal(aitk_stats_compute(inf, 2, &s), AITK_E_INVAL);
}

static void test_t_table(void **state)
{
    (void)state;
    /* Printed tables of Student's t, two-sided 95%. */
    assert_near(aitk_stats_t95(1), 12.706, 1e-3);
    assert_near(aitk_stats_t95(0), 12.706, 1e-3);
    assert_near(aitk_stats_t95(2), 4.303, 1e-3);
    assert_near(aitk_stats_t95(10), 2.228, 1e-3);
    assert_near(aitk_stats_t95(30), 2.042, 1e-3);
    /* The expansion past the table. */
    assert_near(aitk_stats_t95(40), 2.021, 1e-3);
    assert_near(aitk_stats_t95(60), 2.000, 1e-3);
    assert_near(aitk_stats_t95(120), 1.980, 1e-3);
    assert_near(aitk_stats_t95(100000), 1.960, 1e-3);
    /* Monotone across the seam between table and expansion. */
    assert_true(aitk_stats_t95(31) < aitk_stats_t95(30));
    assert_true(aitk_stats_t95(31) > aitk_stats_t95(32));
}

static void test_warmup_settles(void **state)
{
    (void)state;
    const aitk_warmup_rule *r = &aitk_warmup_default;
    /* Window of 3 within 10% of its median, at least 3 steps:
     * n=3 {10,3,1.2} no; n=4 {3,1.2,1.0} med 1.2, 3 is off; n=5 {1.2,1.0,1.05}
     * med 1.05, |1.2-1.05| = 0.15 > 0.105; n=6 {1.0,1.05,0.98} med 1.0, all
     * within 0.1: settled. */
    const double x[] = {10, 3, 1.2, 1.0, 1.05, 0.98};
    for (size_t n = 0; n < 6; n++)
        assert_false(aitk_stats_settled(x, n, r));
    assert_true(aitk_stats_settled(x, 6, r));
    /* A flat series still needs min_steps. */
    const double flat[] = {1, 1, 1};
    assert_false(aitk_stats_settled(flat, 2, r));
    assert_true(aitk_stats_settled(flat, 3, r));
    /* A steady 12% decline never looks settled. */
    double decline[20];
    for (int i = 0; i < 20; i++)
        decline[i] = pow(0.88, i);
    for (size_t n = 0; n <= 20; n++)
        assert_false(aitk_stats_settled(decline, n, r));
}

static void test_extrapolate_by_hand(void **state)
{
    (void)state;
    aitk_extrapolation e;
    /* Two buckets, 1 s and 3 s, no noise: 500*1 + 500*3 = 2000 s, no error. */
    const double t1[] = {1, 3, 1, 3};
    const size_t b1[] = {0, 1, 0, 1};
    assert_int_equal(aitk_stats_extrapolate(t1, b1, 4, 2, 1000, &e), 0);
    assert_near(e.total_s, 2000, 1e-9);
    assert_near(e.error_pct, 0, 1e-12);
    assert_int_equal(e.from_steps, 4);
    /* An incomplete cycle: buckets 1, 2, 3 s, steps 0 1 2 0 1; 10 target
     * steps split 4/3/3 -> 4 + 6 + 9 = 19 s (a plain mean would say 18). */
    const double t2[] = {1, 2, 3, 1, 2};
    const size_t b2[] = {0, 1, 2, 0, 1};
    assert_int_equal(aitk_stats_extrapolate(t2, b2, 5, 3, 10, &e), 0);
    assert_near(e.total_s, 19, 1e-9);
    /* One bucket 0.9 1.1 0.9 1.1, 100 steps: mean 1 -> 100 s; s^2 = 0.04/3;
     * var = 100^2 * s^2 / 4 = 33.333; half = t(3) 3.1824 * 5.7735 = 18.374. */
    const double t3[] = {0.9, 1.1, 0.9, 1.1};
    const size_t b3[] = {0, 0, 0, 0};
    assert_int_equal(aitk_stats_extrapolate(t3, b3, 4, 1, 100, &e), 0);
    assert_near(e.total_s, 100, 1e-9);
    assert_near(e.half_width_s, 18.374, 1e-3);
    assert_near(e.error_pct, 18.374, 1e-3);
    /* One step per bucket: no spread to speak of, so no error figure. */
    assert_int_equal(aitk_stats_extrapolate(t2, b2, 3, 3, 10, &e), 0);
    assert_true(isnan(e.error_pct));
    /* Bad input. */
    assert_int_equal(aitk_stats_extrapolate(t2, b2, 5, 4, 10, &e), AITK_E_INVAL); /* bucket 3 empty */
    const size_t bad[] = {0, 5};
    assert_int_equal(aitk_stats_extrapolate(t2, bad, 2, 3, 10, &e), AITK_E_INVAL);
    assert_int_equal(aitk_stats_extrapolate(t2, b2, 5, 3, 0, &e), AITK_E_INVAL);
}

/* A deterministic LCG (Numerical Recipes constants) so the test is repeatable. */
static double uniform(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (*s >> 8) / 16777216.0;
}

static void test_extrapolation_error_on_noisy_series(void **state)
{
    (void)state;
    /* True bucket means 1.0, 1.5, 2.25 s with +-5% uniform noise. 1000 steps
     * split 334/333/333: 334 + 499.5 + 749.25 = 1582.75 s is the truth. */
    const double truth = 1582.75, mu[3] = {1.0, 1.5, 2.25};
    for (uint32_t seed = 1; seed <= 20; seed++) {
        double t[30];
        size_t b[30];
        uint32_t s = seed;
        for (int i = 0; i < 30; i++) {
            b[i] = (size_t)(i % 3);
            t[i] = mu[b[i]] * (1 + 0.1 * (uniform(&s) - 0.5));
        }
        aitk_extrapolation e;
        assert_int_equal(aitk_stats_extrapolate(t, b, 30, 3, 1000, &e), 0);
        double err = fabs(e.total_s - truth) / truth * 100;
        assert_true(err < 2.0);
        /* The stated uncertainty is honest (it covers the truth) and small. */
        assert_true(e.error_pct < 2.0);
        assert_true(fabs(e.total_s - truth) <= e.half_width_s * 1.5);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_hand_series),
        cmocka_unit_test(test_percentiles_even_count),
        cmocka_unit_test(test_single_and_bad_input),
        cmocka_unit_test(test_t_table),
        cmocka_unit_test(test_warmup_settles),
        cmocka_unit_test(test_extrapolate_by_hand),
        cmocka_unit_test(test_extrapolation_error_on_noisy_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
