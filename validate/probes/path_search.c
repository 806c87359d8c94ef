#include "validate/probes/path_search.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef _WIN32
#include <io.h>
#define DIR_SEP "\\"
#define PROGRAM_SUFFIX ".exe"
#define RUNNABLE 0 /* the C runtime has no execute bit to test: exists */
/* No PATH: CreateProcess still looks in the current folder. */
#define DEFAULT_SEARCH_PATH ""
#else
#define DIR_SEP "/"
#define PROGRAM_SUFFIX ""
#define RUNNABLE X_OK
/* No PATH: what glibc's execvp searches (confstr _CS_PATH). */
#define DEFAULT_SEARCH_PATH "/bin:/usr/bin"
#endif

void aitk_path_entry_join(aitk_str *out, const char *s, size_t n, const char *name)
{
#ifdef _WIN32
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s++;
        n -= 2;
    }
    while (n > 1 && (s[n - 1] == '/' || s[n - 1] == '\\'))
        n--;
#else
    while (n > 1 && s[n - 1] == '/')
        n--;
#endif
    if (!n) {
        s = ".";
        n = 1;
    }
    aitk_str_appendf(out, "%.*s" DIR_SEP "%s", (int)n, s, name);
}

/* A regular file the process may run: a folder named git is not one. */
static bool is_program(const char *file)
{
    struct stat sb;
    return stat(file, &sb) == 0 && S_ISREG(sb.st_mode) && access(file, RUNNABLE) == 0;
}

bool aitk_path_find_program(const char *path, const char *command, aitk_str *found)
{
    aitk_str name = AITK_STR_INIT;
    aitk_str_appendf(&name, "%s%s", command, PROGRAM_SUFFIX);
    if (!path)
        path = DEFAULT_SEARCH_PATH;
    bool hit = false;
    for (const char *s = path; !hit;) {
        const size_t n = strcspn(s, AITK_PATH_LIST_SEP);
        aitk_str_clear(found);
        aitk_path_entry_join(found, s, n, aitk_str_cstr(&name));
        hit = found->len && is_program(aitk_str_cstr(found));
        if (!s[n])
            break;
        s += n + 1;
    }
    if (!hit)
        aitk_str_clear(found);
    aitk_str_free(&name);
    return hit;
}
