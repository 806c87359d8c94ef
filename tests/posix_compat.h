/* The few POSIX calls the test programs use, for the mingw-w64 build; on
 * every other platform this file is empty. tests/CMakeLists.txt force-
 * includes it into Windows test programs, so the tests stay written once. */
#ifndef AITK_TESTS_POSIX_COMPAT_H
#define AITK_TESTS_POSIX_COMPAT_H
#ifdef _WIN32
#include <direct.h>
#include <io.h>
#include <stdlib.h>
#include <string.h>

static inline int setenv(const char *name, const char *value, int overwrite)
{
    if (!overwrite && getenv(name))
        return 0;
    return _putenv_s(name, value) == 0 ? 0 : -1;
}

/* An empty value removes the variable from the CRT's environment. */
static inline int unsetenv(const char *name) { return _putenv_s(name, "") == 0 ? 0 : -1; }

static inline char *mkdtemp(char *tmpl)
{
    if (_mktemp_s(tmpl, strlen(tmpl) + 1) != 0)
        return NULL;
    return _mkdir(tmpl) == 0 ? tmpl : NULL;
}
#endif
#endif
