/* Finding the Python environments a user is likely to train in, in the
 * order ai-toolkit's README leads people to create them: --python, an active
 * venv or conda environment, ./venv, the --aitk-dir checkout's venv, then the
 * python3 on PATH (following pyenv shims to the version they run). */
#define _GNU_SOURCE
#include "validate/probes/pyenv.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/str.h"
#include "reports/fields.h"
#include "validate/probes/gpu_util.h"
#include "validate/probes/path_search.h"
#include "validate/probes/pyshim.h"
#include "validate/probes/pywinalias.h"

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* prefix of an interpreter path: .../bin/python -> ..., a conda python.exe
 * lives in the prefix itself. */
static void prefix_of(const char *interpreter, aitk_str *out)
{
    /* Either separator: on Windows a PATH entry joined with "/python.exe"
     * comes back from realpath in backslashes. */
    char *copy = aitk_strdup(interpreter);
    char *slash = copy ? (char *)aitk_path_last_separator(copy) : NULL;
    if (slash) {
        *slash = '\0';
        char *leaf = (char *)aitk_path_last_separator(copy);
#ifdef _WIN32
        bool scripts = leaf && strcasecmp(leaf + 1, "Scripts") == 0; /* names ignore case there */
#else
        bool scripts = leaf && strcmp(leaf + 1, "Scripts") == 0;
#endif
        if (leaf && (strcmp(leaf + 1, "bin") == 0 || scripts))
            *leaf = '\0';
        aitk_str_append(out, *copy ? copy : "/");
    }
    aitk_free(copy);
}

static const char *interpreter_in(const char *prefix, aitk_str *buf)
{
    static const char *const rel[] = {"bin/python3", "bin/python", "Scripts/python.exe",
                                      "python.exe", NULL};
    for (const char *const *r = rel; *r; r++) {
        aitk_str_clear(buf);
        aitk_path_join(buf, prefix, *r);
        if (access(aitk_str_cstr(buf), F_OK) == 0)
            return aitk_str_cstr(buf);
    }
    return NULL;
}

static void add_env(cJSON *envs, const char *prefix, const char *interp, const char *found_by)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, envs)
    {
        if (strcmp(aitk_field_str(e, "prefix"), prefix) == 0)
            return; /* found twice (e.g. $VIRTUAL_ENV is ./venv): keep the first reason */
    }
    cJSON *env = cJSON_CreateObject();
    if (!env || !cJSON_AddItemToArray(envs, env)) {
        cJSON_Delete(env);
        return;
    }
    cJSON_AddStringToObject(env, "found_by", found_by);
    aitk_pyenv_read(prefix, interp, env);
}

static void add_prefix_env(cJSON *envs, const char *prefix, const char *found_by)
{
    aitk_str interp = AITK_STR_INIT;
    if (prefix && *prefix && is_dir(prefix)) {
        char *real = aitk_realpath(prefix);
        const char *root = real ? real : prefix;
        add_env(envs, root, interpreter_in(root, &interp), found_by);
        free(real);
    }
    aitk_str_free(&interp);
}

/* The venv an interpreter path belongs to, by PEP 405's rule: pyvenv.cfg in
 * the executable's folder or the one above, the path taken as written. */
static int venv_prefix_of(const char *interpreter, aitk_str *prefix)
{
    aitk_str cfg = AITK_STR_INIT;
    char *dir = aitk_strdup(interpreter);
    int found = 0;
    /* The executable's own folder, then the one above it: each step cuts
     * the path at its last separator. */
    for (int up = 0; dir && up < 2 && !found; up++) {
        char *sep = (char *)aitk_path_last_separator(dir);
        if (!sep || sep == dir)
            break;
        *sep = '\0';
        aitk_str_clear(&cfg);
        aitk_path_join(&cfg, dir, "pyvenv.cfg");
        if (access(aitk_str_cstr(&cfg), F_OK) == 0) {
            char *real = aitk_realpath(dir);
            aitk_str_append(prefix, real ? real : dir);
            free(real);
            found = 1;
        }
    }
    aitk_free(dir);
    aitk_str_free(&cfg);
    return found;
}

/* The prefix an interpreter path runs in: a venv's by PEP 405 (below),
 * else the prefix of the file its links lead to (/usr/bin/python3 ->
 * python3.11), and for a pyenv shim the version it runs (pyshim.h), with
 * the shim's word on why in `how`. On AITK_SHIM_SYSTEM and
 * AITK_SHIM_NOT_INSTALLED the shim hands the command to the next python3
 * on PATH, and `prefix` is left empty. */
static aitk_shim_kind interpreter_prefix(const char *interpreter, const char *run_dir,
                                         aitk_str *prefix, aitk_str *how)
{
    /* A venv's bin/python3 is a symbolic link to the base interpreter, but
     * it runs the venv: Python looks for pyvenv.cfg beside the executable
     * or one folder up without following the link (PEP 405,
     * "Specification"). A venv put on PATH without being activated (no
     * $VIRTUAL_ENV) is common in containers; following the link would
     * judge /usr instead. */
    if (venv_prefix_of(interpreter, prefix))
        return AITK_SHIM_NONE;
    char *real = aitk_realpath(interpreter);
    const char *file = real ? real : interpreter;
    aitk_shim_kind shim = aitk_pyenv_shim_resolve(file, run_dir, prefix, how);
    if (shim == AITK_SHIM_NONE)
        prefix_of(file, prefix);
    free(real);
    return shim;
}

#ifdef _WIN32
#define RUNNABLE F_OK /* the C runtime has no execute bit to test */
/* `python` first: what ai-toolkit's README types on Windows, and the name
 * python.org's classic installer gives (it makes no python3.exe, so a python3.exe
 * earlier on PATH is often the Microsoft Store's alias, below). */
static const char *const path_pythons[] = {"python.exe", "python3.exe"};

#else
#define RUNNABLE X_OK
static const char *const path_pythons[] = {"python3", "python"};
#endif

/* Only aliases on PATH (pywinalias.h): the install manager's default
 * runtime when it has one, else the alias named, rather than "none found". */
static void add_alias_fallback(cJSON *envs, const char *alias)
{
    aitk_str runtime = AITK_STR_INIT;
    if (aitk_pymanager_default_runtime(&runtime)) {
        aitk_str found_by = AITK_STR_INIT, interp = AITK_STR_INIT;
        aitk_str_appendf(&found_by, "python on PATH: %s starts the Python install manager's "
                                    "default runtime, its newest unless its configuration names "
                                    "another (py list shows which)",
                         alias);
        add_env(envs, aitk_str_cstr(&runtime), interpreter_in(aitk_str_cstr(&runtime), &interp),
                aitk_str_cstr(&found_by));
        aitk_str_free(&found_by);
        aitk_str_free(&interp);
        aitk_str_free(&runtime);
        return;
    }
    cJSON *env = cJSON_CreateObject();
    if (env && cJSON_AddItemToArray(envs, env)) {
        cJSON_AddStringToObject(env, "found_by", "python on PATH");
        cJSON_AddStringToObject(env, "interpreter", alias);
        cJSON_AddBoolToObject(env, "store_alias", 1);
        cJSON_AddStringToObject(env, "error",
                                "an app execution alias (or the Python install manager's "
                                "launcher), not an installed Python: it opens the Microsoft "
                                "Store, or starts a Python whose folders cannot be read");
    } else {
        cJSON_Delete(env);
    }
    aitk_str_free(&runtime);
}

/* run_dir: the folder ai-toolkit runs from (--aitk-dir), whose
 * .python-version picks the version a pyenv shim runs there; NULL: the
 * current folder. */
static void add_path_python(cJSON *envs, const char *run_dir)
{
    const char *path = getenv("PATH");
    const char *const *names = path_pythons;
    aitk_str passed_on = AITK_STR_INIT, alias = AITK_STR_INIT, first_alias = AITK_STR_INIT;
    bool not_installed = false, found_any = false;
    for (size_t k = 0; k < 2; k++) {
        for (const char *s = path; s && *s;) {
            size_t n = strcspn(s, AITK_PATH_LIST_SEP);
            aitk_str cand = AITK_STR_INIT, prefix = AITK_STR_INIT;
            aitk_path_entry_join(&cand, s, n, names[k]);
            s += n;
            if (*s == AITK_PATH_LIST_SEP[0])
                s++;
            aitk_shim_kind shim = AITK_SHIM_NONE;
            aitk_str how = AITK_STR_INIT;
            const bool runnable = n && access(aitk_str_cstr(&cand), RUNNABLE) == 0;
            if (runnable && aitk_winalias_kind_of(aitk_str_cstr(&cand)) != AITK_WINALIAS_NONE) {
                /* What `python` runs when it comes first, but nothing to read:
                 * the next one on PATH is judged, with a word about it. */
                if (!alias.len)
                    aitk_str_append(&alias, aitk_str_cstr(&cand));
                if (!first_alias.len)
                    aitk_str_append(&first_alias, aitk_str_cstr(&cand));
            } else if (runnable) {
                found_any = true;
                shim = interpreter_prefix(aitk_str_cstr(&cand), run_dir, &prefix, &how);
                /* A pyenv shim whose version is the system's hands the
                 * command to the next one on PATH: that one is judged, with
                 * the shim's word on why. */
                if (shim == AITK_SHIM_SYSTEM || shim == AITK_SHIM_NOT_INSTALLED) {
                    aitk_str_clear(&passed_on);
                    aitk_str_append(&passed_on, aitk_str_cstr(&how));
                    not_installed = shim == AITK_SHIM_NOT_INSTALLED;
                } else {
                    const char *base = strncmp(names[k], "python3", 7) == 0 ? "python3 on PATH"
                                                                             : "python on PATH";
                    const char *note = how.len ? aitk_str_cstr(&how) : aitk_str_cstr(&passed_on);
                    aitk_str found_by = AITK_STR_INIT;
                    aitk_str_appendf(&found_by, *note ? "%s: %s" : "%s", base, note);
                    if (alias.len)
                        aitk_str_appendf(&found_by, " (after %s, an app execution alias or "
                                                    "a launcher, which a shell runs first)",
                                         aitk_str_cstr(&alias));
                    int before = cJSON_GetArraySize(envs);
                    add_env(envs, aitk_str_cstr(&prefix), aitk_str_cstr(&cand),
                            aitk_str_cstr(&found_by));
                    /* The user asked pyenv for a Python that is not there:
                     * python.env warns (python.c). */
                    cJSON *added = cJSON_GetArrayItem(envs, before);
                    if (added && not_installed && !how.len)
                        cJSON_AddStringToObject(added, "pyenv_not_installed",
                                                aitk_str_cstr(&passed_on));
                    aitk_str_free(&found_by);
                    s = ""; /* the first on PATH is the one a shell runs */
                }
            }
            aitk_str_free(&how);
            aitk_str_free(&cand);
            aitk_str_free(&prefix);
        }
        aitk_str_clear(&passed_on);
        aitk_str_clear(&alias);
        not_installed = false;
    }
    /* Only aliases: a Python found on PATH, even one already listed (an
     * activated venv's), is what a shell runs. */
    if (first_alias.len && !found_any)
        add_alias_fallback(envs, aitk_str_cstr(&first_alias));
    aitk_str_free(&passed_on);
    aitk_str_free(&alias);
    aitk_str_free(&first_alias);
}

/* Every CPython launcher is named python*: python3, python3.11, python.exe,
 * pythonw.exe. The static checks read the environment around the file
 * without running it, so /bin/false would otherwise be judged as a Python
 * whose prefix is /. */
static bool named_python(const char *path)
{
    const char *sep = aitk_path_last_separator(path);
    return strncasecmp(sep ? sep + 1 : path, "python", 6) == 0;
}

/* Whether the venv at `prefix` is the one $VIRTUAL_ENV meant, moved: its
 * activate script (bin/ on Linux, Scripts\ on Windows) still sets the
 * old place. */
static bool names_old_place(const char *prefix, const char *old_place)
{
    static const char *const scripts[] = {"bin/activate", "Scripts/activate"};
    bool found = false;
    for (size_t i = 0; i < 2 && !found; i++) {
        aitk_str path = AITK_STR_INIT;
        char *text = NULL;
        size_t len = 0;
        aitk_path_join(&path, prefix, scripts[i]);
        if (aitk_file_read(aitk_str_cstr(&path), 1 << 16, &text, &len, NULL) == AITK_OK)
            found = strstr(text, old_place) != NULL;
        aitk_free(text);
        aitk_str_free(&path);
    }
    return found;
}

/* The environment --python names: an interpreter, a pyenv shim, or a
 * folder holding one; what is not is an "error" entry python.env fails. */
static aitk_status add_named_python(cJSON *envs, const char *python, const char *aitk_dir)
{
    aitk_str prefix = AITK_STR_INIT;
    aitk_str interp = AITK_STR_INIT;
    const bool dir = is_dir(python);
    /* A venv whose base Python is gone has only a dangling link for an
     * interpreter: it is still the venv named, and python.env says
     * what is gone (pyenv.c, note_missing_base). */
    aitk_str cfg = AITK_STR_INIT;
    aitk_path_join(&cfg, python, "pyvenv.cfg");
    const bool venv_dir = dir && access(aitk_str_cstr(&cfg), F_OK) == 0;
    aitk_str_free(&cfg);
    const bool dangling = !dir && access(python, F_OK) != 0 && venv_prefix_of(python, &prefix);
    /* What --python names must be an interpreter or hold one: said
     * plainly rather than judging /etc as "an installation". */
    const char *problem =
        dangling ? NULL
        : access(python, F_OK) != 0 ? "no such file or folder"
        : dir && !venv_dir && !interpreter_in(python, &interp)
            ? "no Python interpreter in this folder (bin/python3, Scripts/python.exe or "
              "python.exe)"
#ifndef _WIN32
        : !dir && access(python, X_OK) != 0 ? "not an executable program"
#endif
        : !dir && !named_python(python)
            ? "not a Python interpreter: its name does not begin with 'python' "
              "(python3, python3.11, python.exe)"
            : NULL;
    if (problem) {
        cJSON *env = cJSON_CreateObject();
        if (!env || !cJSON_AddItemToArray(envs, env)) {
            cJSON_Delete(env);
            aitk_str_free(&interp);
            aitk_str_free(&prefix);
            return AITK_E_NOMEM;
        }
        cJSON_AddStringToObject(env, "found_by", "--python");
        cJSON_AddStringToObject(env, "interpreter", python);
        cJSON_AddStringToObject(env, "error", problem);
    } else if (dangling) {
        add_env(envs, aitk_str_cstr(&prefix), NULL, "--python");
    } else if (dir) {
        add_env(envs, python, interpreter_in(python, &interp), "--python");
    } else {
        /* `--python "$(which python3)"` names a pyenv shim as often as
         * an interpreter: it is followed as the one on PATH is. */
        aitk_str how = AITK_STR_INIT, found_by = AITK_STR_INIT;
        aitk_shim_kind shim = interpreter_prefix(python, aitk_dir, &prefix, &how);
        aitk_str_appendf(&found_by, how.len ? "--python: %s" : "--python", aitk_str_cstr(&how));
        if (shim == AITK_SHIM_SYSTEM || shim == AITK_SHIM_NOT_INSTALLED)
            /* The shim hands the command on: the search on PATH meets
             * the same shim and judges the Python it hands it to. */
            add_path_python(envs, aitk_dir);
        else
            add_env(envs, prefix.len ? aitk_str_cstr(&prefix) : ".", python,
                    aitk_str_cstr(&found_by));
        aitk_str_free(&how);
        aitk_str_free(&found_by);
    }
    aitk_str_free(&interp);
    aitk_str_free(&prefix);
    return AITK_OK;
}

/* Whether $CONDA_PREFIX is conda's base environment, which `conda init`
 * activates in every new shell unless auto_activate_base is turned off
 * (conda/conda issue #8211): being active says nothing about where a
 * person trains. Named as jupyter_core tells it (jupyter/jupyter_core
 * PR #324: CONDA_DEFAULT_ENV is "base"), or by the condabin folder only
 * the root of an install has. */
static bool conda_base_active(void)
{
    const char *prefix = aitk_pyenv_var("CONDA_PREFIX");
    if (!prefix)
        return false;
    const char *name = getenv("CONDA_DEFAULT_ENV");
    if (name && strcmp(name, "base") == 0)
        return true;
    aitk_str condabin = AITK_STR_INIT;
    aitk_path_join(&condabin, prefix, "condabin");
    const bool root = is_dir(aitk_str_cstr(&condabin));
    aitk_str_free(&condabin);
    return root;
}

aitk_status aitk_pyenv_find(const aitk_pyenv_hints *hints, cJSON *envs)
{
    if (hints && hints->python)
        return add_named_python(envs, hints->python, hints->aitk_dir);
    add_prefix_env(envs, getenv("VIRTUAL_ENV"), "$VIRTUAL_ENV");
    /* conda's base, active by default, comes after the checkout's own
     * environments below; an environment someone activated by name comes
     * here. */
    const bool conda_base = conda_base_active();
    if (!conda_base)
        add_prefix_env(envs, getenv("CONDA_PREFIX"), "$CONDA_PREFIX");
    /* A checkout named with --aitk-dir says where ai-toolkit is: its own
     * venv, the one its UI trains in, comes before a .venv that happens to
     * be in the folder the tool runs from. */
    if (hints && hints->aitk_dir && !is_dir(hints->aitk_dir)) {
        cJSON *env = cJSON_CreateObject();
        if (!env || !cJSON_AddItemToArray(envs, env)) {
            cJSON_Delete(env);
            return AITK_E_NOMEM;
        }
        cJSON_AddStringToObject(env, "found_by", "--aitk-dir");
        cJSON_AddStringToObject(env, "prefix", hints->aitk_dir);
        cJSON_AddStringToObject(env, "error", "not a folder");
        return AITK_OK;
    } else if (hints && hints->aitk_dir) {
        static const char *const sub[] = {".venv", "venv", "../python_embeded"};
        for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
            aitk_str p = AITK_STR_INIT;
            aitk_path_join(&p, hints->aitk_dir, sub[i]);
            add_prefix_env(envs, aitk_str_cstr(&p), "--aitk-dir");
            aitk_str_free(&p);
        }
    }
    /* ai-toolkit's UI runs its jobs with .venv's Python, else venv's, else
     * python3 on PATH (ostris/ai-toolkit ui/cron/pythonPath.ts
     * resolvePythonPath @27a03a9), whatever environment is active: the same
     * order here, so that with both folders the one judged is the one the
     * UI trains in. An active environment still comes first above: it is
     * the one `python run.py` uses from that shell. */
    add_prefix_env(envs, ".venv", "./.venv");
    add_prefix_env(envs, "venv", "./venv");
    /* AI-Toolkit-Easy-Install, the one-click Windows install of ai-toolkit,
     * has no venv: an embeddable Python in python_embeded beside the
     * ai-toolkit checkout (Tavris1/AI-Toolkit-Easy-Install,
     * AI-Toolkit-Easy-Install.bat). Run from the install's folder or
     * from the checkout. */
    add_prefix_env(envs, "python_embeded", "./python_embeded");
    add_prefix_env(envs, "../python_embeded", "../python_embeded");
    if (conda_base) {
        const cJSON *before = cJSON_GetArrayItem(envs, 0);
        add_prefix_env(envs, getenv("CONDA_PREFIX"), "$CONDA_PREFIX, conda's base");
        /* The judged environment says which base it was chosen over. */
        if (before && strcmp(aitk_field_str(before, "found_by"), "$VIRTUAL_ENV") != 0)
            cJSON_AddStringToObject((cJSON *)before, "conda_base_passed_over",
                                    getenv("CONDA_PREFIX"));
    }
    add_path_python(envs, hints && hints->aitk_dir ? hints->aitk_dir : NULL);
    /* A venv moved after it was activated, or whose activate script
     * still names its old place: the folder $VIRTUAL_ENV names is gone.
     * The next environment is judged, with python.env's word on it. */
    const char *active = getenv("VIRTUAL_ENV");
    cJSON *first = cJSON_GetArrayItem(envs, 0);
    if (active && *active && !is_dir(active) && first) {
        cJSON_AddStringToObject(first, "virtual_env_missing", active);
        cJSON_AddBoolToObject(first, "virtual_env_moved_here",
                              names_old_place(aitk_field_str(first, "prefix"), active));
    }
    return AITK_OK;
}
