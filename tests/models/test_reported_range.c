/* The time range of reported over predicted step times (models/
 * reported_range.c): coverage, and leave one source out, on
 * hand-made rows whose every figure is worked out here by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "models/reported_range.h"

#define CLOSE(a, b) (fabs((a) - (b)) < 1e-9)

/* The range sorts what it is given and spans the 5th to the 95th
 * percentile, interpolated at h = (n - 1) p: for 1..7, h 0.3 and 5.7, so
 * 1.3 to 6.7 (the 10th to the 90th: 1.6 to 6.4), the median 4; its ends are inside, a
 * hair beyond is not; no values, no range (and nothing is covered). */
static void test_range_of(void **state)
{
    (void)state;
    const double x[] = {7, 1, 5, 3, 2, 6, 4};
    aitk_time_range r;
    assert_int_equal(aitk_time_range_of(x, 7, &r), AITK_OK);
    assert_int_equal(r.n, 7);
    assert_true(CLOSE(r.lo, 1.3) && CLOSE(r.hi, 6.7));
    assert_true(CLOSE(r.median, 4));
    assert_true(aitk_time_range_covers(&r, r.lo) && aitk_time_range_covers(&r, r.hi));
    assert_false(aitk_time_range_covers(&r, 1.29) || aitk_time_range_covers(&r, 6.71));
    assert_int_equal(aitk_time_range_at(x, 7, 10, 90, &r), AITK_OK);
    assert_true(CLOSE(r.lo, 1.6) && CLOSE(r.hi, 6.4));
    assert_int_equal(aitk_time_range_of(x, 0, &r), AITK_OK);
    assert_int_equal(r.n, 0);
    assert_false(aitk_time_range_covers(&r, 1));
}

/* A row's source is named by what comes before its first ':'. */
static void test_source_key(void **state)
{
    (void)state;
    const char *s = "kohya-ss/sd-scripts PR #1374, comment of 2024-08-19: RTX A6000, 8.25 s/it";
    assert_int_equal(aitk_reported_source_key(s), strlen("kohya-ss/sd-scripts PR #1374, comment "
                                                         "of 2024-08-19"));
    assert_int_equal(aitk_reported_source_key("a README"), strlen("a README"));
}

/* Five training rows from three sources and one generation row, each
 * predicted at 1 s, so reported / predicted is the reported time:
 *   A: 1.0, 2.0   B: 1.5 (and a generation row at 10, never counted)
 *   C: 0.5, 3.0
 * All five sorted 0.5 1 1.5 2 3: p5 at h 0.2 = 0.6, p95 at h 3.8 = 2.8;
 * 1, 1.5 and 2 inside: 3 of 5.
 * Without A (0.5 1.5 3): h 0.1 and 1.9, 0.6 to 2.85, holds 1 and 2.
 * Without B (0.5 1 2 3): h 0.15 and 2.85, 0.575 to 2.85, holds 1.5.
 * Without C (1 1.5 2): 1.05 to 1.95, holds neither 0.5 nor 3: 3 of 5 in all.
 * Errors, exp(mean |ln(1 / value)|): A sqrt(2), B 1.5, C sqrt(6). */
static void test_leave_one_source_out(void **state)
{
    (void)state;
    static const struct {
        const char *source;
        double seconds;
        bool generation;
    } data[] = {{"A: first", 1.0, false},  {"B: one", 1.5, false}, {"A: second", 2.0, false},
                {"C: low", 0.5, false},    {"B: gen", 10, true},    {"C: high", 3.0, false}};
    enum { N = sizeof data / sizeof *data };
    aitk_reported_speed speeds[N];
    aitk_reported_row rows[N];
    for (size_t i = 0; i < N; i++) {
        speeds[i] = (aitk_reported_speed){.source = data[i].source,
                                          .seconds_per_step = data[i].seconds};
        speeds[i].setup.inference = data[i].generation;
        rows[i] = (aitk_reported_row){.report = &speeds[i], .ratio = 1 / data[i].seconds};
        rows[i].pred.step_s = 1;
    }
    aitk_range_coverage cov;
    bool in[N], loso[N];
    assert_int_equal(aitk_reported_range_coverage(rows, N, &cov, in, loso), AITK_OK);
    assert_int_equal(cov.rows, 5);
    assert_true(CLOSE(cov.all.lo, 0.6) && CLOSE(cov.all.hi, 2.8));
    assert_int_equal(cov.covered, 3);
    assert_int_equal(cov.covered_loso, 3);
    const bool want_in[N] = {true, true, true, false, false, false};
    const bool want_loso[N] = {true, true, true, false, false, false};
    for (size_t i = 0; i < N; i++)
        if (in[i] != want_in[i] || loso[i] != want_loso[i])
            fail_msg("row %zu: in %d loso %d", i, in[i], loso[i]);
    aitk_source_check src[N];
    size_t n_src = 0;
    assert_int_equal(aitk_reported_by_source(rows, N, src, &n_src), AITK_OK);
    assert_int_equal(n_src, 3);
    static const struct {
        const char *first;
        size_t rows, covered;
        double error, lo, hi;
    } want[] = {{"A: first", 2, 2, 1.4142135623730951, 0.6, 2.85},
                {"B: one", 1, 1, 1.5, 0.575, 2.85},
                {"C: low", 2, 0, 2.449489742783178, 1.05, 1.95}};
    for (size_t i = 0; i < 3; i++) {
        const aitk_source_check *c = &src[i];
        if (strcmp(c->first->source, want[i].first) || c->rows != want[i].rows ||
            c->covered != want[i].covered || !CLOSE(c->error, want[i].error) ||
            !CLOSE(c->others.lo, want[i].lo) || !CLOSE(c->others.hi, want[i].hi))
            fail_msg("source %zu (%s): %zu runs, %zu held, error %.6f, range %.4f-%.4f", i,
                     c->first->source, c->rows, c->covered, c->error, c->others.lo,
                     c->others.hi);
    }
}

/* The most ratios one factor brings within 1.5x, each worked by hand:
 * 0.5 0.6 1.0 1.1 3: 0.5 to 1.1 is 2.2 <= 2.25 = 1.5^2, so four, scaled
 * by 1 / sqrt(0.5 * 1.1) = 1.3484 (0.674, 0.809, 1.348, 1.483: all inside;
 * 3 would be 4.05). 1 and 2.25 (exact in binary) both count, 1 and 2.26
 * do not. One ratio: itself, scaled to 1. None: nothing, scale 1. */
static void test_best_scale(void **state)
{
    (void)state;
    size_t within = 99;
    double scale = 0;
    const double five[] = {3, 1.1, 0.5, 1.0, 0.6};
    assert_int_equal(aitk_best_scale_of(five, 5, 1.5, &within, &scale), AITK_OK);
    assert_int_equal(within, 4);
    assert_true(fabs(scale - 1.0 / sqrt(0.55)) < 1e-12);
    const double edge[] = {1.0, 2.25}, over[] = {1.0, 2.26};
    assert_int_equal(aitk_best_scale_of(edge, 2, 1.5, &within, &scale), AITK_OK);
    assert_int_equal(within, 2);
    assert_true(fabs(scale - 1.0 / 1.5) < 1e-12);
    assert_int_equal(aitk_best_scale_of(over, 2, 1.5, &within, &scale), AITK_OK);
    assert_int_equal(within, 1);
    /* 0.5 1.0 1.8: {0.5, 1.0} at x1.414 and {1.0, 1.8} at x0.745 bring two
     * each; the one nearer 1 is given. */
    const double tie[] = {1.8, 0.5, 1.0};
    assert_int_equal(aitk_best_scale_of(tie, 3, 1.5, &within, &scale), AITK_OK);
    assert_int_equal(within, 2);
    assert_true(fabs(scale - 1.0 / sqrt(1.8)) < 1e-12);
    /* 0.6 and 1.35 are 2.25 apart only up to rounding: whatever the count,
     * it is the one the rows' own test gives at the returned scale. */
    const double near_edge[] = {0.6, 1.35};
    assert_int_equal(aitk_best_scale_of(near_edge, 2, 1.5, &within, &scale), AITK_OK);
    size_t by_hand = 0;
    for (int i = 0; i < 2; i++)
        by_hand += near_edge[i] * scale <= 1.5 && near_edge[i] * scale >= 1.0 / 1.5;
    assert_int_equal(within, by_hand);
    const double one[] = {0.25};
    assert_int_equal(aitk_best_scale_of(one, 1, 1.5, &within, &scale), AITK_OK);
    assert_int_equal(within, 1);
    assert_true(fabs(scale - 4.0) < 1e-12);
    assert_int_equal(aitk_best_scale_of(NULL, 0, 1.5, &within, &scale), AITK_OK);
    assert_int_equal(within, 0);
    assert_true(scale == 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_of),
        cmocka_unit_test(test_best_scale),
        cmocka_unit_test(test_source_key),
        cmocka_unit_test(test_leave_one_source_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
