/* Helpers shared by the bench tests: cmocka 1.1 compares floats only in
 * single precision, and statistics need doubles with a message that shows
 * both values. Include after <cmocka.h>. */
#ifndef AITK_TESTS_BENCH_BT_H
#define AITK_TESTS_BENCH_BT_H

#include <math.h>

static inline void bt_near(double got, double want, double eps, const char *what,
                           const char *file, int line)
{
    if (!(fabs(got - want) <= eps)) {
        print_error("%s:%d: %s = %.10g, expected %.10g (+-%g)\n", file, line, what, got, want,
                    eps);
        fail();
    }
}
#define assert_near(got, want, eps) bt_near((got), (want), (eps), #got, __FILE__, __LINE__)

#endif
