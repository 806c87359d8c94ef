/* The few POSIX calls the test programs use, for the mingw-w64 build; on
 * every other platform this file is empty. tests/CMakeLists.txt force-
 * includes it into Windows test programs, so the tests stay written once. */
#ifndef AITK_TESTS_POSIX_COMPAT_H
#define AITK_TESTS_POSIX_COMPAT_H
#ifdef _WIN32
#include <direct.h>
#include <errno.h>
#include <io.h>
#include <process.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline int setenv(const char *name, const char *value, int overwrite)
{
    if (!overwrite && getenv(name))
        return 0;
    return _putenv_s(name, value) == 0 ? 0 : -1;
}

/* An empty value removes the variable from the CRT's environment. */
static inline int unsetenv(const char *name) { return _putenv_s(name, "") == 0 ? 0 : -1; }

/* Not _mktemp_s: its names are one letter and the process id, 26 a
 * process and template, and Wine reuses small process ids, so a test
 * folder that keeps its temporary folders ran out of names from one run
 * to the next (probes.pyreqs failed so). Six hex digits from a clock, the
 * process id and a counter, tried again while the name is taken. */
static inline char *mkdtemp(char *tmpl)
{
    const size_t n = strlen(tmpl);
    if (n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
        errno = EINVAL;
        return NULL;
    }
    static unsigned counter;
    const unsigned seed = (unsigned)_getpid() * 2654435761u ^ (unsigned)clock() ^
                          (unsigned)time(NULL) * 40503u;
    for (int tries = 0; tries < 100000; tries++) {
        snprintf(tmpl + n - 6, 7, "%06x", (seed + 7919u * counter++) & 0xffffffu);
        if (_mkdir(tmpl) == 0)
            return tmpl;
        if (errno != EEXIST)
            return NULL;
    }
    return NULL;
}
#endif
#endif
