/* How long a test waits for a child it runs. Each limit is written for an
 * idle release build; a sanitizer build runs several times slower
 * (AITK_TEST_TIME_SCALE, set by tests/CMakeLists.txt from AITK_SANITIZE), and
 * a busy machine slower again. The machine's share is measured: the
 * one-minute load average per online CPU, rounded up (a 2-core CI machine
 * running a build beside the tests sits at a load of 6-10, which makes a
 * child 3-5 times slower). AITK_TEST_TIME_FACTOR in the environment (a whole
 * number, 1 to 100) replaces that measure. Limits a test expects to run out
 * (a timeout under test) are not scaled. */
#ifndef AITK_TESTS_TEST_TIME_H
#define AITK_TESTS_TEST_TIME_H

#include <stdio.h>
#include <stdlib.h>
#ifdef __linux__
#include <unistd.h>
#endif

#ifndef AITK_TEST_TIME_SCALE
#define AITK_TEST_TIME_SCALE 1
#endif

/* Where the one-minute load average is read: Linux's /proc, and the same
 * file through Wine's Z: drive (the host's root) for the Windows tests,
 * which run under Wine on the same busy machine. On a real Windows machine
 * the file does not exist and the factor stays 1. */
#if defined(__linux__)
#define AITK_TEST_LOADAVG "/proc/loadavg"
#elif defined(_WIN32)
#define AITK_TEST_LOADAVG "Z:/proc/loadavg"
#endif

/* Online CPUs; Windows (and Wine) name their count in the environment. */
static inline long aitk_test_cpus(void)
{
#if defined(__linux__)
    return sysconf(_SC_NPROCESSORS_ONLN);
#else
    const char *n = getenv("NUMBER_OF_PROCESSORS");
    return n ? strtol(n, NULL, 10) : 0;
#endif
}

/* Load per CPU, rounded up, at least 1 and at most 10; 1 where the load
 * average cannot be read. */
static inline long aitk_test_load_factor(void)
{
#ifdef AITK_TEST_LOADAVG
    FILE *f = fopen(AITK_TEST_LOADAVG, "r");
    double load = 0;
    int ok = f && fscanf(f, "%lf", &load) == 1;
    if (f)
        fclose(f);
    long cpus = aitk_test_cpus();
    if (!ok || cpus < 1 || !(load > 0))
        return 1;
    const double share = load / (double)cpus;
    long factor = (long)share;
    if ((double)factor < share)
        factor++; /* rounded up, without libm */
    return factor < 1 ? 1 : factor > 10 ? 10 : factor;
#else
    return 1;
#endif
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
