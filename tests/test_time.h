/* How long a test waits for a child it runs. Each limit is written for an
 * idle release build; a sanitizer build runs several times slower
 * (AITK_TEST_TIME_SCALE, set by tests/CMakeLists.txt from AITK_SANITIZE), and
 * a busy machine slower again: AITK_TEST_TIME_FACTOR in the environment (a
 * whole number, default 1) stretches every limit without a rebuild. Limits a
 * test expects to run out (a timeout under test) are not scaled. */
#ifndef AITK_TESTS_TEST_TIME_H
#define AITK_TESTS_TEST_TIME_H

#include <stdlib.h>

#ifndef AITK_TEST_TIME_SCALE
#define AITK_TEST_TIME_SCALE 1
#endif

static inline long aitk_test_ms(long ms)
{
    const char *f = getenv("AITK_TEST_TIME_FACTOR");
    long factor = f ? strtol(f, NULL, 10) : 1;
    if (factor < 1 || factor > 100)
        factor = 1;
    return ms * AITK_TEST_TIME_SCALE * factor;
}

#endif
