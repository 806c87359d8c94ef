/* Which interpreter a pyenv shim runs, by pyenv's own rules (pyenv 2.6,
 * https://github.com/pyenv/pyenv, libexec/): pyenv-version-file (the
 * nearest .python-version from $PYENV_DIR up, then from the current folder
 * up, then $PYENV_ROOT/version), pyenv-version-file-read (the first word of
 * each line; blank lines and # comments skipped), pyenv-version-name and
 * pyenv-latest (a name that is not installed, such as "3.11", stands for
 * the newest installed 3.11.x), and pyenv-which (the first version whose
 * bin/ holds the command, then the system's, which is the next one on PATH).
 * The shim itself is never run: reading these files is what pyenv does. */
#define _GNU_SOURCE
#include "validate/probes/pyshim.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/str.h"
#include "common/alloc.h"
#include "common/fileio.h"

#ifdef _WIN32
/* pyenv-win's shims are .bat files, which the search for python.exe on PATH
 * never meets. */
aitk_shim_kind aitk_pyenv_shim_resolve(const char *path, const char *run_dir, aitk_str *prefix,
                                       aitk_str *how)
{
    (void)path;
    (void)run_dir;
    (void)prefix;
    (void)how;
    return AITK_SHIM_NONE;
}
#else

enum { MAX_VERSIONS = 16 };

typedef struct {
    char *name[MAX_VERSIONS];
    int n;
    aitk_str origin; /* where the list came from, for messages */
} version_list;

static bool is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static void list_add(version_list *l, const char *word, size_t n)
{
    if (n && l->n < MAX_VERSIONS)
        l->name[l->n++] = aitk_strndup(word, n);
}

static void list_free(version_list *l)
{
    for (int i = 0; i < l->n; i++)
        aitk_free(l->name[i]);
    aitk_str_free(&l->origin);
}

/* pyenv-version-file-read refuses a name that leaves versions/ (the fix of
 * CVE-2022-35861): "..", or a path with a ".." part. */
static bool version_name_safe(const char *word, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (word[i] == '.' && word[i + 1] == '.' && (i == 0 || word[i - 1] == '/') &&
            (i + 2 == n || word[i + 2] == '/'))
            return false;
    }
    return true;
}

/* The first word of each line; blank lines and comments skipped. False
 * when the file holds no version: pyenv then runs the system's Python. */
static bool read_version_file(const char *file, version_list *l)
{
    char *text = NULL;
    size_t len = 0;
    if (aitk_file_read(file, 64 * 1024, &text, &len, NULL) != AITK_OK)
        return false;
    for (const char *s = text; *s;) {
        s += strspn(s, " \t\r");
        size_t n = strcspn(s, " \t\r\n");
        if (n && *s != '#' && version_name_safe(s, n))
            list_add(l, s, n);
        s += strcspn(s, "\n");
        if (*s)
            s++;
    }
    aitk_free(text);
    return l->n > 0;
}

/* The nearest .python-version from dir up to the root. */
static bool find_version_file(const char *dir, aitk_str *file)
{
    char *root = aitk_strdup(dir);
    bool found = false;
    while (root && !found) {
        aitk_str_clear(file);
        aitk_str_appendf(file, "%s/.python-version", root);
        found = is_file(aitk_str_cstr(file));
        if (!*root)
            break;
        char *slash = strrchr(root, '/');
        if (slash)
            *slash = '\0';
        else
            *root = '\0';
    }
    aitk_free(root);
    return found;
}

static void selected_versions(const char *pyenv_root, const char *run_dir, version_list *l)
{
    const char *env = getenv("PYENV_VERSION");
    if (env && *env) {
        aitk_str_append(&l->origin, "the PYENV_VERSION environment variable");
        for (const char *s = env; *s;) {
            size_t n = strcspn(s, ":");
            list_add(l, s, n);
            s += n + (s[n] == ':');
        }
        return;
    }
    aitk_str file = AITK_STR_INIT;
    char *run_from = run_dir ? aitk_realpath(run_dir) : getcwd(NULL, 0);
    const char *dir = getenv("PYENV_DIR");
    char *real_dir = dir && *dir ? aitk_realpath(dir) : NULL;
    bool found = (real_dir && find_version_file(real_dir, &file)) ||
                 (run_from && (!real_dir || strcmp(real_dir, run_from) != 0) &&
                  find_version_file(run_from, &file));
    if (!found) {
        aitk_str_clear(&file);
        aitk_str_appendf(&file, "%s/version", pyenv_root);
    }
    aitk_str_append(&l->origin, aitk_str_cstr(&file));
    read_version_file(aitk_str_cstr(&file), l);
    free(run_from);
    free(real_dir);
    aitk_str_free(&file);
}

/* "3.11.7" > "3.11.6" > "3.9.18", field by field (pyenv-latest's sort). */
static int compare_versions(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        a = ea + (*ea == '.');
        b = eb + (*eb == '.');
        if (ea == a && eb == b) /* neither moved: not numbers; call it even */
            break;
    }
    return 0;
}

/* A pre-release, or a build pyenv-latest never picks for a prefix. */
static bool unpicked_build(const char *name, bool free_threaded)
{
    if (aitk_text_ends_with(name, "-dev") || aitk_text_ends_with(name, "-src") ||
        aitk_text_ends_with(name, "-latest"))
        return true;
    size_t n = strlen(name);
    size_t digits = 0;
    while (digits < n && name[n - 1 - digits] >= '0' && name[n - 1 - digits] <= '9')
        digits++;
    if (digits && digits < n) {
        const char *tag = name + n - digits;
        if (tag[-1] == 'a' || tag[-1] == 'b' || (tag - name >= 2 && strncmp(tag - 2, "rc", 2) == 0))
            return true;
    }
    bool is_t = n >= 2 && name[n - 1] == 't' && name[n - 2] >= '0' && name[n - 2] <= '9';
    return is_t != free_threaded;
}

/* pyenv-latest: an installed version named so, else the newest installed
 * "<prefix>.x" or "<prefix>-x" (virtual environments not counted). */
static bool resolve_version(const char *root, const char *want, aitk_str *out)
{
    aitk_str dir = AITK_STR_INIT;
    aitk_str_appendf(&dir, "%s/versions/%s", root, want);
    bool ok = aitk_is_dir(aitk_str_cstr(&dir));
    if (ok)
        aitk_str_append(out, want);
    aitk_str_clear(&dir);
    aitk_str_appendf(&dir, "%s/versions", root);
    char **names = NULL;
    size_t count = 0;
    if (!ok)
        aitk_dir_names(aitk_str_cstr(&dir), &names, &count, NULL);
    char *prefix = aitk_strdup(want);
    bool free_threaded = prefix && strlen(prefix) >= 2 && aitk_text_ends_with(prefix, "t") &&
                         prefix[strlen(prefix) - 2] >= '0' && prefix[strlen(prefix) - 2] <= '9';
    if (free_threaded)
        prefix[strlen(prefix) - 1] = '\0';
    size_t plen = prefix ? strlen(prefix) : 0;
    char best[256] = "";
    for (size_t i = 0; prefix && i < count; i++) {
        const char *name = names[i];
        if (strncmp(name, prefix, plen) != 0 || (name[plen] != '.' && name[plen] != '-') ||
            strlen(name) >= sizeof best || unpicked_build(name, free_threaded))
            continue;
        aitk_str path = AITK_STR_INIT;
        aitk_str_appendf(&path, "%s/%s", aitk_str_cstr(&dir), name);
        char *real = aitk_realpath(aitk_str_cstr(&path));
        /* pyenv-virtualenv's environments are links into <version>/envs/. */
        bool env_link = real && strstr(real, "/envs/") != NULL;
        if (!env_link && aitk_is_dir(aitk_str_cstr(&path)) &&
            (!*best || compare_versions(name + plen + 1, best + plen + 1) > 0))
            strcpy(best, name);
        free(real);
        aitk_str_free(&path);
    }
    aitk_dir_names_free(names, count);
    if (!ok && *best) {
        aitk_str_append(out, best);
        ok = true;
    }
    aitk_free(prefix);
    aitk_str_free(&dir);
    return ok;
}

aitk_shim_kind aitk_pyenv_shim_resolve(const char *path, const char *run_dir, aitk_str *prefix,
                                       aitk_str *how)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash - path < 6 || strncmp(slash - 6, "/shims", 6) != 0)
        return AITK_SHIM_NONE;
    const char *command = slash + 1;
    aitk_str root = AITK_STR_INIT;
    aitk_str_appendn(&root, path, (size_t)(slash - 6 - path));
    version_list l = {0};
    selected_versions(aitk_str_cstr(&root), run_dir, &l);
    aitk_shim_kind kind = AITK_SHIM_SYSTEM; /* no version runs it: the system's does */
    aitk_str missing = AITK_STR_INIT;
    for (int i = 0; i < l.n && kind == AITK_SHIM_SYSTEM; i++) {
        const char *v = l.name[i];
        if (strcmp(v, "system") == 0)
            break;
        aitk_str name = AITK_STR_INIT;
        bool ok = resolve_version(aitk_str_cstr(&root), v, &name) ||
                  (strncmp(v, "python-", 7) == 0 &&
                   resolve_version(aitk_str_cstr(&root), v + 7, &name));
        if (!ok) {
            aitk_str_appendf(&missing, "%s`%s'", missing.len ? ", " : "", v);
        } else {
            aitk_str exe = AITK_STR_INIT;
            aitk_str_appendf(&exe, "%s/versions/%s/bin/%s", aitk_str_cstr(&root),
                             aitk_str_cstr(&name), command);
            if (access(aitk_str_cstr(&exe), X_OK) == 0) {
                aitk_str_appendf(prefix, "%s/versions/%s", aitk_str_cstr(&root),
                                 aitk_str_cstr(&name));
                kind = AITK_SHIM_VERSION;
            }
            aitk_str_free(&exe);
        }
        aitk_str_free(&name);
    }
    if (kind == AITK_SHIM_SYSTEM && missing.len)
        kind = AITK_SHIM_NOT_INSTALLED;
    if (kind == AITK_SHIM_VERSION)
        aitk_str_appendf(how, "pyenv's %s shim, version set by %s", command,
                         aitk_str_cstr(&l.origin));
    else if (missing.len) /* pyenv runs the system's Python and says nothing */
        aitk_str_appendf(how, "pyenv's %s shim passes it on: version %s, set by %s, is not installed",
                         command, aitk_str_cstr(&missing), aitk_str_cstr(&l.origin));
    else if (l.n)
        aitk_str_appendf(how, "pyenv's %s shim passes it on: version system, set by %s", command,
                         aitk_str_cstr(&l.origin));
    else
        aitk_str_appendf(how, "pyenv's %s shim passes it on: no version is set", command);
    aitk_str_free(&missing);
    list_free(&l);
    aitk_str_free(&root);
    return kind;
}
#endif
