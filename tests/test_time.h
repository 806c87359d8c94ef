/* How long a test waits for a child it runs. Each limit is written for an
 * idle release build; a sanitizer build runs several times slower
 * (AITK_TEST_TIME_SCALE, set by tests/CMakeLists.txt from AITK_SANITIZE), and
 * a busy machine slower again. The machine's share is measured: the
 * one-minute load average per online CPU, rounded up (a 2-core CI machine
 * running a build beside the tests sits at a load of 6-10, which makes a
 * child 3-5 times slower). AITK_TEST_TIME_FACTOR in the environment (a whole
 * number, 1 to 100) replaces that measure. Limits a test expects to run out
 * (a timeout under test) are not scaled.
 *
 * The Windows build's tests run under Wine on a Linux machine, as busy as
 * any other: Wine maps the Linux root to drive Z:, so the same load average
 * is read there, and Wine reports the host's CPUs. On a real Windows machine
 * there is no such file and the factor is 1. */
#ifndef AITK_TESTS_TEST_TIME_H
#define AITK_TESTS_TEST_TIME_H

#include <stdio.h>
#include <stdlib.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

#ifndef AITK_TEST_TIME_SCALE
#define AITK_TEST_TIME_SCALE 1
#endif

/* Where the one-minute load average is read: Linux's /proc, and the same
 * file through Wine's Z: drive (the host's root) for the Windows tests,
 * which run under Wine on the same busy machine. Where the file does not
 * exist (a real Windows machine, a Unix without /proc) the factor stays 1. */
#ifdef _WIN32
#define AITK_TEST_LOADAVG "Z:/proc/loadavg"
#else
#define AITK_TEST_LOADAVG "/proc/loadavg"
#endif

/* Online CPUs, as the scheduler shares them out; 0 when unknown. Windows
 * (and Wine) name their count in NUMBER_OF_PROCESSORS; when a test's
 * environment lacks it or holds no number, GetSystemInfo still knows (under
 * Wine, the host's CPUs). */
static inline long aitk_test_cpus(void)
{
#ifdef _WIN32
    const char *n = getenv("NUMBER_OF_PROCESSORS");
    const long named = n ? strtol(n, NULL, 10) : 0;
    if (named >= 1)
        return named;
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return (long)si.dwNumberOfProcessors;
#else
    return sysconf(_SC_NPROCESSORS_ONLN);
#endif
}

/* Load per CPU, rounded up, at least 1 and at most 10; 1 when either is
 * unknown (a load of 0 or less, no CPU count). */
static inline long aitk_test_factor_of(double load, long cpus)
{
    if (cpus < 1 || !(load > 0))
        return 1;
    const double share = load / (double)cpus;
    if (share >= 10)
        return 10;
    long factor = (long)share;
    if ((double)factor < share)
        factor++; /* rounded up, without libm */
    return factor < 1 ? 1 : factor;
}

/* The factor from the one-minute load average in `path` (the format of
 * /proc/loadavg); 1 when it cannot be read. */
static inline long aitk_test_load_factor_from(const char *path, long cpus)
{
    FILE *f = fopen(path, "r");
    double load = 0;
    int ok = f && fscanf(f, "%lf", &load) == 1;
    if (f)
        fclose(f);
    return ok ? aitk_test_factor_of(load, cpus) : 1;
}

static inline long aitk_test_load_factor(void)
{
    return aitk_test_load_factor_from(AITK_TEST_LOADAVG, aitk_test_cpus());
}

static inline long aitk_test_ms(long ms)
{
    const char *f = getenv("AITK_TEST_TIME_FACTOR");
    long factor = f ? strtol(f, NULL, 10) : 0;
    if (factor < 1 || factor > 100)
        factor = aitk_test_load_factor();
    return ms * AITK_TEST_TIME_SCALE * factor;
}

#endif
