/* common/quantile.c: sorting and type-7 quantiles, on lists whose every
 * expected figure is worked out by hand in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "common/alloc.h"
#include "common/quantile.h"

#define CLOSE(a, b) (fabs((a) - (b)) < 1e-9)

/* numpy's linear quantile of 1..7: h = 6p; p 0.1 -> 1 + 0.6 = 1.6, p 0.9 ->
 * 6 + 0.4 = 6.4; the ends are the extremes; one value is every quantile;
 * p outside [0, 1] is clamped. */
static void test_quantile_odd(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4, 5, 6, 7};
    assert_true(CLOSE(aitk_quantile_sorted(x, 7, 0.1), 1.6));
    assert_true(CLOSE(aitk_quantile_sorted(x, 7, 0.9), 6.4));
    assert_true(CLOSE(aitk_quantile_sorted(x, 7, 0.5), 4));
    assert_true(CLOSE(aitk_quantile_sorted(x, 7, 0), 1));
    assert_true(CLOSE(aitk_quantile_sorted(x, 7, 1), 7));
    assert_true(CLOSE(aitk_quantile_sorted(x, 7, -3), 1));
    assert_true(CLOSE(aitk_quantile_sorted(x, 7, 2), 7));
    assert_true(CLOSE(aitk_quantile_sorted(x, 1, 0.1), 1));
    assert_true(isnan(aitk_quantile_sorted(x, 0, 0.5)));
}

/* An even count: the median is the mean of the middle two, (2 + 10) / 2 = 6;
 * p5 of 1..21 is h = 20 * 0.05 = 1 -> the second value, 2. */
static void test_quantile_even(void **state)
{
    (void)state;
    const double x[] = {1, 2, 10, 40};
    assert_true(CLOSE(aitk_quantile_sorted(x, 4, 0.5), 6));
    double y[21];
    for (int i = 0; i < 21; i++)
        y[i] = i + 1;
    assert_true(CLOSE(aitk_quantile_sorted(y, 21, 0.05), 2));
}

/* The copy is sorted and the input untouched; nothing to copy is refused. */
static void test_sorted_copy(void **state)
{
    (void)state;
    const double x[] = {3, -1, 2.5, 3, 0};
    double *s = NULL;
    assert_int_equal(aitk_sorted_copy(x, 5, &s), AITK_OK);
    const double want[] = {-1, 0, 2.5, 3, 3};
    for (int i = 0; i < 5; i++)
        assert_true(CLOSE(s[i], want[i]));
    assert_true(CLOSE(x[0], 3) && CLOSE(x[1], -1));
    aitk_free(s);
    assert_int_equal(aitk_sorted_copy(x, 0, &s), AITK_E_INVAL);
    assert_null(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantile_odd),
        cmocka_unit_test(test_quantile_even),
        cmocka_unit_test(test_sorted_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
