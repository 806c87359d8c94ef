/* tests/test_time.h: the arithmetic of the load factor, the file it reads,
 * and that the real load average is found where the tests run, the Windows
 * build's tests under Wine included (there it is the Linux host's, through
 * drive Z:). Without it every child limit of a Windows test stayed at its
 * idle figure on a busy CI machine, and a child was killed at 60 s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/test_time.h"

/* Load per CPU, rounded up, 1 to 10: 2.0 on 2 CPUs is a share of 1; 2.01 is
 * just over, 2; 8 on 2 is 4; 19.9 on 2 rounds up to the cap, 10, and 100 on
 * 2 is held there. Nothing known (no load, no CPUs) is 1. */
static void test_factor_arithmetic(void **state)
{
    (void)state;
    assert_int_equal(aitk_test_factor_of(2.0, 2), 1);
    assert_int_equal(aitk_test_factor_of(0.3, 2), 1);
    assert_int_equal(aitk_test_factor_of(2.01, 2), 2);
    assert_int_equal(aitk_test_factor_of(8.0, 2), 4);
    assert_int_equal(aitk_test_factor_of(7.5, 2), 4);
    assert_int_equal(aitk_test_factor_of(19.9, 2), 10);
    assert_int_equal(aitk_test_factor_of(100.0, 2), 10);
    assert_int_equal(aitk_test_factor_of(1e300, 1), 10);
    assert_int_equal(aitk_test_factor_of(6.0, 16), 1);
    assert_int_equal(aitk_test_factor_of(0.0, 2), 1);
    assert_int_equal(aitk_test_factor_of(-1.0, 2), 1);
    assert_int_equal(aitk_test_factor_of(NAN, 2), 1);
    assert_int_equal(aitk_test_factor_of(8.0, 0), 1);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* The first field of a /proc/loadavg line is what counts; a file that is
 * missing or does not start with a number gives 1. */
static void test_factor_from_file(void **state)
{
    (void)state;
    const char *path = "test_time_loadavg.txt";
    write_file(path, "6.40 5.10 4.00 3/180 4242\n");
    assert_int_equal(aitk_test_load_factor_from(path, 2), 4);
    assert_int_equal(aitk_test_load_factor_from(path, 4), 2);
    write_file(path, "busy\n");
    assert_int_equal(aitk_test_load_factor_from(path, 2), 1);
    assert_int_equal(remove(path), 0);
    assert_int_equal(aitk_test_load_factor_from(path, 2), 1);
}

#ifdef _WIN32
static bool under_wine(void)
{
    HMODULE ntdll = GetModuleHandleA("ntdll.dll");
    return ntdll && GetProcAddress(ntdll, "wine_get_version") != NULL;
}
#endif

/* Where the tests run (Linux, or Wine on Linux), the load average is
 * readable and the CPUs are counted, so the factor is measured, not a
 * silent 1. A real Windows machine has no load average: skipped there. */
static void test_load_average_is_found(void **state)
{
    (void)state;
#ifdef _WIN32
    if (!under_wine()) {
        skip();
        return;
    }
#endif
    FILE *f = fopen(AITK_TEST_LOADAVG, "r");
    if (!f)
        fail_msg("%s cannot be opened: the load factor would always be 1", AITK_TEST_LOADAVG);
    double load = -1;
    const int fields = fscanf(f, "%lf", &load);
    fclose(f);
    assert_int_equal(fields, 1);
    assert_true(load >= 0);
    const long cpus = aitk_test_cpus();
    assert_true(cpus >= 1);
    /* The load moves between two reads: only the range is certain. */
    const long factor = aitk_test_load_factor();
    assert_true(factor >= 1 && factor <= 10);
    print_message("load %.2f on %ld CPU(s): factor %ld\n", load, cpus, factor);
}

#ifdef _WIN32
/* Windows counts its CPUs in NUMBER_OF_PROCESSORS; a test whose environment
 * lacks it, or holds no number there, still gets a count from
 * GetSystemInfo, so the load factor is not silently 1. */
static void test_cpus_on_windows(void **state)
{
    (void)state;
    char was[32] = "";
    const char *v = getenv("NUMBER_OF_PROCESSORS");
    if (v)
        snprintf(was, sizeof was, "%s", v);
    assert_int_equal(setenv("NUMBER_OF_PROCESSORS", "3", 1), 0);
    assert_int_equal(aitk_test_cpus(), 3);
    assert_int_equal(setenv("NUMBER_OF_PROCESSORS", "many", 1), 0);
    const long asked = aitk_test_cpus();
    assert_int_equal(unsetenv("NUMBER_OF_PROCESSORS"), 0);
    assert_int_equal(aitk_test_cpus(), asked);
    if (was[0])
        assert_int_equal(setenv("NUMBER_OF_PROCESSORS", was, 1), 0);
    assert_true(asked >= 1);
}
#endif

/* AITK_TEST_TIME_FACTOR, a whole number from 1 to 100, replaces the
 * measure; anything else is ignored. */
static void test_factor_override(void **state)
{
    (void)state;
    assert_int_equal(setenv("AITK_TEST_TIME_FACTOR", "3", 1), 0);
    assert_int_equal(aitk_test_ms(1000), 3000L * AITK_TEST_TIME_SCALE);
    assert_int_equal(setenv("AITK_TEST_TIME_FACTOR", "0", 1), 0);
    const long measured = aitk_test_ms(1000);
    assert_true(measured >= 1000L * AITK_TEST_TIME_SCALE);
    assert_true(measured <= 10000L * AITK_TEST_TIME_SCALE);
    assert_int_equal(unsetenv("AITK_TEST_TIME_FACTOR"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factor_arithmetic),
        cmocka_unit_test(test_factor_from_file),
        cmocka_unit_test(test_load_average_is_found),
#ifdef _WIN32
        cmocka_unit_test(test_cpus_on_windows),
#endif
        cmocka_unit_test(test_factor_override),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
