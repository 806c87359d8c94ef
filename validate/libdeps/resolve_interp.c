/* The Python interpreter's folder, for a torch tree examined on Windows
 * terms, and what to say about a DLL no searched folder holds.
 *
 * python3XY.dll is not torch's: python.exe loads it from its own folder
 * before torch is imported, and Windows binds torch_python.dll's import to
 * the module already loaded ("Dynamic-link library search order",
 * learn.microsoft.com: a DLL of the same module name already in memory is
 * used). That folder is the application folder of the search order. When
 * --app-dir does not give it, it is read from the layout torch sits in:
 * ENV\Lib\site-packages\torch\lib, where ENV\pyvenv.cfg's `home` names the
 * base interpreter's folder for a venv (PEP 405, "home" key), and ENV is
 * the interpreter's folder itself for a base install or a conda
 * environment. Where neither is known, the tool cannot tell, and says so. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "validate/libdeps/resolve.h"

bool aitk_deps_is_python_dll(const char *name)
{
    /* python3.dll (the stable ABI), python311.dll, python313t.dll */
    if (strncasecmp(name, "python3", 7) != 0)
        return false;
    const char *p = name + 7;
    while (isdigit((unsigned char)*p))
        p++;
    if (p > name + 7 && (*p == 't' || *p == 'T'))
        p++;
    return strcasecmp(p, ".dll") == 0;
}

/* `home = C:\Python311` from pyvenv.cfg, trimmed; false when absent. */
static bool venv_home(const char *cfg, aitk_str *home)
{
    char *text = NULL;
    size_t len = 0;
    aitk_str err = AITK_STR_INIT;
    bool found = false;
    if (aitk_file_read(cfg, 1u << 16, &text, &len, &err) == AITK_OK) {
        for (const char *line = text; line && *line && !found;) {
            size_t n = strcspn(line, "\r\n");
            const char *eq = memchr(line, '=', n);
            size_t k = eq ? (size_t)(eq - line) : 0;
            while (k && (line[k - 1] == ' ' || line[k - 1] == '\t'))
                k--;
            if (eq && k == 4 && strncasecmp(line, "home", 4) == 0) {
                const char *v = eq + 1, *end = line + n;
                while (v < end && (*v == ' ' || *v == '\t'))
                    v++;
                while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
                    end--;
                aitk_str_appendn(home, v, (size_t)(end - v));
                found = end > v;
            }
            line += n;
            line += strspn(line, "\r\n");
        }
    }
    aitk_free(text);
    aitk_str_free(&err);
    return found;
}

aitk_status aitk_deps_interpreter_dir(const char *torch_lib, aitk_str *dir, const char **rule,
                                      aitk_str *why)
{
    *rule = NULL;
    char *low = aitk_strdup(torch_lib);
    if (!low)
        return AITK_E_NOMEM;
    for (char *p = low; *p; p++)
        *p = *p == '\\' ? '/' : (char)tolower((unsigned char)*p);
    const char *tail = "/lib/site-packages/torch/lib";
    size_t len = strlen(low), tl = strlen(tail);
    bool layout = len >= tl && strcmp(low + len - tl, tail) == 0;
    aitk_free(low);
    if (!layout)
        return aitk_str_append(why, "the DLL is not in an environment's "
                                    "Lib\\site-packages\\torch\\lib");
    aitk_str env = AITK_STR_INIT, cfg = AITK_STR_INIT, home = AITK_STR_INIT;
    aitk_str_appendn(&env, torch_lib, len - tl);
    char sep = strchr(torch_lib, '\\') ? '\\' : '/';
    aitk_str_appendf(&cfg, "%s%cpyvenv.cfg", aitk_str_cstr(&env), sep);
    aitk_status st = aitk_str_status(&env) ? AITK_E_NOMEM : aitk_str_status(&cfg);
    if (!st && venv_home(cfg.ptr, &home)) {
        if (aitk_is_dir(home.ptr)) {
            aitk_str_append(dir, home.ptr);
            *rule = "application folder (pyvenv.cfg home: the base interpreter's)";
        } else {
            aitk_str_appendf(why, "%s names home = %s, not a folder here", cfg.ptr, home.ptr);
        }
    } else if (!st && env.len && aitk_is_dir(env.ptr)) {
        aitk_str_append(dir, env.ptr);
        *rule = "application folder (the environment's own, no pyvenv.cfg)";
    }
    if (!st && (aitk_str_status(dir) || aitk_str_status(why) || aitk_str_status(&home)))
        st = AITK_E_NOMEM;
    aitk_str_free(&env);
    aitk_str_free(&cfg);
    aitk_str_free(&home);
    return st;
}

static aitk_status set_detail(aitk_dep_node *n, aitk_dep_state state, const aitk_str *text)
{
    if (aitk_str_status(text))
        return AITK_E_NOMEM;
    n->state = state;
    aitk_free(n->detail);
    return (n->detail = aitk_strdup(text->ptr)) ? AITK_OK : AITK_E_NOMEM;
}

aitk_status aitk_resolve_windows_absent(aitk_deps *d, aitk_dep_tree *t, size_t i,
                                        const char *app_dir, const char *app_why)
{
    aitk_dep_node *n = &t->nodes[i];
    aitk_str text = AITK_STR_INIT;
    aitk_status st;
    if (aitk_deps_is_python_dll(n->name) && app_dir) {
        aitk_str_appendf(&text, "the interpreter's folder %s has no %s: torch was built for "
                                "another Python version than this environment's", app_dir,
                         n->name);
        st = set_detail(n, AITK_DEP_NOT_FOUND, &text);
    } else if (aitk_deps_is_python_dll(n->name)) {
        aitk_str_appendf(&text, "the Python interpreter's own DLL, loaded by python.exe from its "
                                "folder before torch; that folder is not known here (%s): give "
                                "--app-dir, the folder of python.exe",
                         app_why && *app_why ? app_why : "no --app-dir");
        st = set_detail(n, AITK_DEP_UNKNOWN, &text);
    } else if (!d->opts.windows_root) {
        aitk_str_append(&text, "in none of the folders examined; System32 was not examined "
                               "(give --windows-root, a folder holding Windows\\System32)");
        st = set_detail(n, AITK_DEP_UNKNOWN, &text);
    } else {
        n->state = AITK_DEP_NOT_FOUND;
        st = AITK_OK;
    }
    aitk_str_free(&text);
    return st;
}
