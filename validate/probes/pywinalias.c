/* Windows' stand-ins for python.exe (pywinalias.h). */
#include "validate/probes/pywinalias.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <windows.h>
#endif

#include "common/fileio.h"
#include "validate/probes/host.h"

#ifdef _WIN32
/* The folder part of `path` equals `dir` (either separator, any case). */
static bool in_folder(const char *path, const char *dir)
{
    const char *name = aitk_path_last_separator(path);
    size_t n = strlen(dir);
    if (!name || (size_t)(name - path) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char a = path[i] == '/' ? '\\' : path[i], b = dir[i] == '/' ? '\\' : dir[i];
        if (a != b && (a | 0x20) != (b | 0x20))
            return false;
    }
    return true;
}

/* The app execution aliases are empty reparse points to every reader but
 * CreateProcess (Python documentation, Using Python on Windows, 'The
 * Microsoft Store package'; python/cpython gh-100107). */
static bool app_alias(const char *path)
{
    const char *name = aitk_path_last_separator(path);
    if (!name || name - path < 11 || strncasecmp(name - 11, "WindowsApps", 11) != 0 ||
        (name - path > 11 && name[-12] != '\\' && name[-12] != '/'))
        return false;
    struct stat sb;
    DWORD attrs = GetFileAttributesA(path);
    return (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_REPARSE_POINT)) ||
           stat(path, &sb) != 0 || sb.st_size == 0;
}
#endif

aitk_winalias_kind aitk_winalias_kind_of(const char *path)
{
#ifdef _WIN32
    if (app_alias(path))
        return AITK_WINALIAS_APP;
    /* python/pymanager src/pymanager.json: global_dir %LocalAppData%\Python\bin */
    const char *local = getenv("LOCALAPPDATA");
    aitk_str bin = AITK_STR_INIT;
    bool launcher = local && *local && aitk_str_appendf(&bin, "%s\\Python\\bin", local) == AITK_OK &&
                    in_folder(path, aitk_str_cstr(&bin));
    aitk_str_free(&bin);
    return launcher ? AITK_WINALIAS_LAUNCHER : AITK_WINALIAS_NONE;
#else
    (void)path;
    return AITK_WINALIAS_NONE;
#endif
}

bool aitk_pymanager_default_runtime(aitk_str *prefix)
{
#ifdef _WIN32
    /* python/pymanager src/pymanager.json: install_dir %LocalAppData%\Python;
     * CPython's runtimes install as pythoncore-<X.Y>-64 (-32, -arm64 for
     * other platforms). The docs: `python` launches "your current latest
     * version" unless configured otherwise. */
    const char *local = getenv("LOCALAPPDATA");
    aitk_str dir = AITK_STR_INIT, exe = AITK_STR_INIT;
    char **names = NULL, best[64] = "";
    size_t count = 0;
    if (local && *local && aitk_str_appendf(&dir, "%s\\Python", local) == AITK_OK)
        aitk_dir_names(aitk_str_cstr(&dir), &names, &count, NULL);
    for (size_t i = 0; i < count; i++) {
        const char *n = names[i];
        size_t len = strlen(n);
        /* pythoncore-3.14t-64, the free-threaded build, is not the
         * default runtime. */
        if (strncasecmp(n, "pythoncore-", 11) != 0 || len < 15 || len >= sizeof best ||
            strcasecmp(n + len - 3, "-64") != 0 || n[len - 4] == 't' || n[len - 4] == 'T')
            continue;
        aitk_str_clear(&exe);
        aitk_str_appendf(&exe, "%s\\%s\\python.exe", aitk_str_cstr(&dir), n);
        if (!aitk_path_exists(aitk_str_cstr(&exe)))
            continue;
        if (!*best || aitk_version_compare(n + 11, best + 11) > 0)
            strcpy(best, n);
    }
    aitk_dir_names_free(names, count);
    if (*best)
        aitk_str_appendf(prefix, "%s\\%s", aitk_str_cstr(&dir), best);
    aitk_str_free(&dir);
    aitk_str_free(&exe);
    return *best != '\0';
#else
    (void)prefix;
    return false;
#endif
}
