/* Judging the Python environment: version against the profile and against
 * torch's wheels, torch's build, its companions, shadowed installs, and the
 * packages ai-toolkit's requirements name. */
#include "validate/probes/python.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/str.h"
#include "reports/fields.h"
#include "validate/compat.h"
#include "validate/probes/aitk_startup.h"
#include "validate/probes/gpu_util.h"
#include "validate/probes/path_search.h"
#include "validate/probes/pydeep.h"
#include "validate/probes/pyenv.h"
#include "validate/probes/pyreqs.h"

#define PIP_INDEX "https://download.pytorch.org/whl/"

typedef struct judged {
    aitk_str id, obs, exp, msg, fix, src;
} judged;

static void judged_free(judged *j)
{
    aitk_str *all[] = {&j->id, &j->obs, &j->exp, &j->msg, &j->fix, &j->src};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        aitk_str_free(all[i]);
}

static aitk_status add_judged(aitk_run_ctx *ctx, judged *j, const char *title, aitk_check_status st)
{
    aitk_check c = {.id = aitk_str_cstr(&j->id), .category = "python", .title = title,
                    .status = st, .observed = aitk_str_cstr(&j->obs),
                    .expected = aitk_str_cstr(&j->exp), .message = aitk_str_cstr(&j->msg),
                    .remedy = aitk_str_cstr(&j->fix), .source = aitk_str_cstr(&j->src)};
    aitk_status s = aitk_checklist_add(&ctx->checks, &c);
    judged_free(j);
    return s;
}

const cJSON *aitk_python_selected(const cJSON *env)
{
    const cJSON *py = cJSON_GetObjectItemCaseSensitive(env, "python");
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(py, "environments"), 0);
}

/* major*100 + minor of a "3.12.3" text; -1 when unreadable. */
static int mm(const char *v)
{
    int a, b;
    return aitk_pyver_major_minor(v, &a, &b) ? a * 100 + b : -1;
}

/* A venv made on another system (pyenv.c, other_system_of): a Windows
 * venv read through WSL's /mnt/c, or a Linux one through \\wsl$. Its
 * python runs only there, and the usual remedy, recreating the venv in
 * place, would wipe the environment that system trains in: this one says
 * to judge it there and to make one of this system's own. */
static aitk_check_status judge_other_system_venv(judged *j, const char *key, const char *path,
                                                 const char *made_on)
{
    aitk_str_append(&j->src, "; Python documentation, venv, 'How venvs work': not movable or "
                             "copyable, recreate the environment in the target location "
                             "(https://docs.python.org/3/library/venv.html)");
    aitk_str_appendf(&j->obs, "; pyvenv.cfg's %s %s is a %s path", key, path, made_on);
    aitk_str_appendf(&j->msg, "this venv was made on %s: pyvenv.cfg names %s = %s, and its "
                              "python runs only there, so ai-toolkit cannot run in it on this "
                              "system",
                     made_on, key, path);
    aitk_str_appendf(&j->fix, "Leave this venv as it is: ai-toolkit on %s may train in it; "
                              "judge it there with aitk-validate's %s build. To train on this "
                              "system, make a venv of its own for an ai-toolkit checkout on its "
                              "own disk, install the requirements and the README's torch line "
                              "in it, and give that one to --python.",
                     made_on,
                     strcmp(made_on, "Windows") == 0 ? "Windows (aitk-validate.exe)" : "Linux");
    return AITK_CHECK_FAIL;
}

/* A venv whose base Python is gone (pyenv.c, note_missing_base): the
 * packages are still there, so every static check would pass; the
 * interpreter is what cannot run. */
static aitk_check_status judge_missing_base(const cJSON *sel, judged *j)
{
    const cJSON *gone = cJSON_GetObjectItemCaseSensitive(sel, "base_missing");
    const char *key = aitk_field_str(gone, "key"), *path = aitk_field_str(gone, "path");
    aitk_str_clear(&j->src);
    aitk_str_append(&j->src, "PEP 405, 'Specification': a venv's pyvenv.cfg names with home the "
                             "base installation whose interpreter it runs");
    if (*aitk_field_str(gone, "made_on"))
        return judge_other_system_venv(j, key, path, aitk_field_str(gone, "made_on"));
    aitk_str_appendf(&j->obs, "; pyvenv.cfg's %s %s does not exist", key, path);
    aitk_str_appendf(&j->msg, "the Python this venv was made from is gone: pyvenv.cfg names "
                              "%s = %s, which no longer exists (uninstalled, renamed or moved), "
                              "so the venv's python cannot start and ai-toolkit cannot run in it",
                     key, path);
    aitk_str_appendf(&j->fix, "Recreate the venv with a Python that exists (python3 -m venv "
                              "--clear %s, then install ai-toolkit's requirements and the "
                              "README's torch line again), or reinstall the Python that was at "
                              "%s, at that place.",
                     aitk_field_str(sel, "prefix"), path);
    return AITK_CHECK_FAIL;
}

/* pyenv ran another Python than the one asked for, silently (pyenv-which
 * tries "system" last): what was asked is the user's intent, and
 * ai-toolkit would run elsewhere. */
static aitk_check_status judge_pyenv_not_installed(const cJSON *sel, judged *j)
{
    aitk_str_clear(&j->src);
    aitk_str_append(&j->src, "pyenv libexec/pyenv-which: each version set, then the system's "
                             "(https://github.com/pyenv/pyenv)");
    aitk_str_appendf(&j->msg, "pyenv was asked for a Python that is not installed, so its shim "
                              "runs the next python3 on PATH: ai-toolkit would run in %s",
                     aitk_field_str(sel, "prefix"));
    aitk_str_append(&j->fix, "Install the version pyenv was asked for (pyenv install <version>) "
                             "or set one that is installed (pyenv local <version>; pyenv "
                             "versions lists them).");
    return AITK_CHECK_WARN;
}

/* $VIRTUAL_ENV names a folder that is gone (pyfind.c): a venv moved after
 * it was made, whose activate script still sets the old path. That shell's
 * python is not the venv's, its pip's first line names the old path and
 * fails, and the remedies' "with the environment active" cannot work; the
 * environment found next was judged instead. True when so. */
static bool judge_stale_virtual_env(const cJSON *sel, judged *j)
{
    const char *gone = aitk_field_str(sel, "virtual_env_missing");
    if (!*gone)
        return false;
    const char *prefix = aitk_field_str(sel, "prefix");
    const bool here = aitk_json_true(sel, "virtual_env_moved_here");
    aitk_str_appendf(&j->obs, "; $VIRTUAL_ENV %s does not exist", gone);
    aitk_str_appendf(&j->msg, "%s$VIRTUAL_ENV names %s, a folder that does not exist (a venv "
                              "moved after it was made keeps its old path in its activate "
                              "script and its pip), so %s (%s) was judged instead%s",
                     j->msg.len ? "; " : "", gone, prefix, aitk_field_str(sel, "found_by"),
                     here ? ": it is that venv, moved, as its activate script still names the "
                            "old place; from that shell python is not the venv's and its pip "
                            "does not start"
                          : "");
    aitk_str_appendf(&j->fix, "%sRun deactivate; a venv cannot be moved, so re-create it where "
                              "it is now (python3 -m venv --clear %s, then install the "
                              "requirements again) or move it back to %s, and activate it again.",
                     j->fix.len ? " " : "", here ? prefix : "<its folder>", gone);
    aitk_str_appendf(&j->src, "%sPython documentation, venv, 'How venvs work': not movable "
                              "or copyable, recreate it in the new place (its scripts hold its "
                              "absolute path)",
                     j->src.len ? "; " : "");
    return true;
}

static aitk_status check_env(aitk_run_ctx *ctx, const cJSON *sel)
{
    judged j = {0};
    aitk_str_append(&j.id, "python.env");
    aitk_str_append(&j.exp, "a Python environment with ai-toolkit's requirements");
    aitk_str_append(&j.src, "ostris/ai-toolkit README, Installation (https://github.com/ostris/ai-toolkit#installation)");
    if (!sel) {
        aitk_str_append(&j.obs, "none found");
        aitk_str_append(&j.msg, "No Python environment was found ($VIRTUAL_ENV, $CONDA_PREFIX, ./.venv, "
                                "./venv, python3 on PATH).");
        aitk_str_append(&j.fix, "Create one as ai-toolkit's README says (python3 -m venv venv; "
                                ". venv/bin/activate; pip install -r requirements.txt), or point "
                                "to it with --python PATH.");
        return add_judged(ctx, &j, "Python environment", AITK_CHECK_WARN);
    }
    if (*aitk_field_str(sel, "error")) {
        aitk_str_appendf(&j.obs, "%s %s: %s", aitk_field_str(sel, "found_by"),
                         *aitk_field_str(sel, "interpreter") ? aitk_field_str(sel, "interpreter")
                                                              : aitk_field_str(sel, "prefix"),
                         aitk_field_str(sel, "error"));
        if (aitk_json_true(sel, "store_alias")) {
            aitk_str_clear(&j.src);
            aitk_str_append(&j.src, "Python documentation, Using Python on Windows, 'The Microsoft "
                                    "Store package' (python.exe, python3.exe and python3.x.exe "
                                    "are app execution aliases) and 'The full installer' "
                                    "(https://docs.python.org/3/using/windows.html); python/cpython "
                                    "gh-100107 (the py.exe launcher skips the aliases that open "
                                    "the Store)");
            aitk_str_append(&j.msg, "the only python on PATH is an app execution alias: no "
                                    "Python environment the checks can read");
            aitk_str_append(&j.fix, "Install Python from python.org (the Python install manager, "
                                    "or the classic installer with \"Add python.exe to PATH\") "
                                    "and create ai-toolkit's venv with it "
                                    "(python -m venv venv in the ai-toolkit folder), then run "
                                    "aitk-validate there or give --python venv. \"Manage app "
                                    "execution aliases\" (from Start) turns the Store's aliases "
                                    "off.");
            return add_judged(ctx, &j, "Python environment", AITK_CHECK_WARN);
        }
        aitk_str_append(&j.msg, "the Python named on the command line cannot be used");
        aitk_str_append(&j.fix, "Give --python the environment's interpreter (venv/bin/python) "
                                "or its folder (venv). For an ai-toolkit checkout, give its "
                                "folder with --aitk-dir instead: its .venv or venv is found "
                                "there.");
        return add_judged(ctx, &j, "Python environment", AITK_CHECK_FAIL);
    }
    aitk_str_appendf(&j.obs, "%s (%s), Python %s", aitk_field_str(sel, "prefix"),
                     aitk_field_str(sel, "found_by"),
                     *aitk_field_str(sel, "python_version") ? aitk_field_str(sel, "python_version")
                                                             : "version unknown");
    aitk_check_status st = AITK_CHECK_PASS;
    if (cJSON_GetObjectItemCaseSensitive(sel, "base_missing"))
        st = judge_missing_base(sel, &j);
    else if (*aitk_field_str(sel, "pyenv_not_installed"))
        st = judge_pyenv_not_installed(sel, &j);
    else
        aitk_str_append(&j.msg, aitk_json_true(sel, "venv") ? "a virtual environment"
                                                             : "an installation");
    const char *conda_base = aitk_field_str(sel, "conda_base_passed_over");
    if (*conda_base)
        aitk_str_appendf(&j.msg, "; judged instead of conda's base environment (%s), which "
                                 "is active in this shell as conda activates it in every new "
                                 "one: ai-toolkit's UI runs its jobs with this one, and "
                                 "`python run.py` does once it is activated",
                         conda_base);
    if (judge_stale_virtual_env(sel, &j) && st == AITK_CHECK_PASS)
        st = AITK_CHECK_WARN;
    return add_judged(ctx, &j, "Python environment", st);
}

static aitk_status check_version(aitk_run_ctx *ctx, const cJSON *sel)
{
    const aitk_yaml_node *lo = aitk_compat_rule(ctx->compat, "python", "min_version");
    const aitk_yaml_node *hi = aitk_compat_rule(ctx->compat, "python", "max_version");
    const char *ver = aitk_field_str(sel, "python_version");
    judged j = {0};
    aitk_str_append(&j.id, "python.version");
    aitk_str_append(&j.obs, *ver ? ver : "unknown");
    const char *lo_t = aitk_compat_rule_text(lo), *hi_t = aitk_compat_rule_text(hi);
    if (lo_t && hi_t)
        aitk_str_appendf(&j.exp, "%s-%s", lo_t, hi_t);
    else if (lo_t)
        aitk_str_appendf(&j.exp, ">= %s", lo_t);
    else if (hi_t)
        aitk_str_appendf(&j.exp, "<= %s", hi_t);
    aitk_str_append(&j.src, aitk_compat_rule_source(lo ? lo : hi));
    if (!lo && !hi) {
        aitk_str_appendf(&j.msg, "the %s profile states no Python range", ctx->profile_name);
        return add_judged(ctx, &j, "Python version", AITK_CHECK_SKIP);
    }
    int v = mm(ver);
    if (v < 0) {
        aitk_str_append(&j.msg, "the Python version could not be read statically (no pyvenv.cfg, "
                                "no lib/pythonX.Y)");
        return add_judged(ctx, &j, "Python version", AITK_CHECK_SKIP);
    }
    const aitk_yaml_node *broken = NULL;
    if (lo_t && mm(lo_t) >= 0 && v < mm(lo_t))
        broken = lo;
    else if (hi_t && mm(hi_t) >= 0 && v > mm(hi_t))
        broken = hi;
    if (!broken) {
        aitk_str_appendf(&j.msg, "Python %s is within %s (%s profile)", ver, aitk_str_cstr(&j.exp),
                         ctx->profile_name);
        return add_judged(ctx, &j, "Python version", AITK_CHECK_PASS);
    }
    aitk_str_clear(&j.src);
    aitk_str_append(&j.src, aitk_compat_rule_source(broken));
    aitk_str_appendf(&j.msg, "Python %s is outside %s, the range the %s profile allows", ver,
                     aitk_str_cstr(&j.exp), ctx->profile_name);
    aitk_str_appendf(&j.fix, "Create the environment with a Python in %s (e.g. uv venv --python %s, "
                             "or conda create -n aitk python=%s) and reinstall the requirements.",
                     aitk_str_cstr(&j.exp), hi_t ? hi_t : lo_t, hi_t ? hi_t : lo_t);
    return add_judged(ctx, &j, "Python version", aitk_compat_rule_severity(broken));
}

static aitk_status check_torch(aitk_run_ctx *ctx, const cJSON *sel, const cJSON *torch)
{
    judged j = {0};
    aitk_str_append(&j.id, "python.torch");
    aitk_str_append(&j.exp, "torch installed, built with CUDA");
    aitk_str_append(&j.src, "PyTorch install matrix (https://pytorch.org/get-started/previous-versions/); pytorch/pytorch RELEASE.md, Release Compatibility Matrix");
    if (!torch) {
        aitk_str_append(&j.obs, "not installed");
        aitk_str_appendf(&j.msg, "torch is not installed in %s", aitk_field_str(sel, "prefix"));
        aitk_str_append(&j.fix, "Install torch as ai-toolkit's README says, e.g. pip install torch "
                                "torchvision torchaudio --index-url " PIP_INDEX "cu128");
        return add_judged(ctx, &j, "torch", AITK_CHECK_FAIL);
    }
    const char *variant = aitk_field_str(torch, "variant");
    aitk_str_appendf(&j.obs, "%s (CUDA %s)", aitk_field_str(torch, "version"),
                     *aitk_field_str(torch, "cuda") ? aitk_field_str(torch, "cuda") : "none");
    if (strcmp(variant, "cpu") == 0 || strncmp(variant, "rocm", 4) == 0) {
        aitk_str_appendf(&j.msg, "this torch is a %s build: it cannot use an NVIDIA GPU",
                         strcmp(variant, "cpu") == 0 ? "CPU-only" : "ROCm");
        aitk_str_append(&j.fix, "pip uninstall -y torch torchvision torchaudio, then install a CUDA "
                                "build: pip install torch torchvision torchaudio --index-url "
                                PIP_INDEX "cu128");
        return add_judged(ctx, &j, "torch", AITK_CHECK_FAIL);
    }
    aitk_str_append(&j.msg, "a CUDA build of torch");
    return add_judged(ctx, &j, "torch", AITK_CHECK_PASS);
}

/* A torch wheel built for another CPython than the one that would import
 * it (pyenv.c, wheel_python): on Windows a conda environment's
 * Lib\site-packages is the same folder for every Python version, so
 * `conda install python=3.12` leaves pip's cp311 torch where 3.12 reads
 * it, and `import torch` fails for want of torch._C. True when so, with
 * the judgement in j. */
static bool judge_wheel_python(const cJSON *torch, const char *pv, judged *j)
{
    const char *built = aitk_field_str(torch, "wheel_python");
    if (!*built || mm(pv) < 0 || mm(built) == mm(pv))
        return false;
    aitk_str_appendf(&j->obs, "; its wheel is built for Python %s", built);
    aitk_str_appendf(&j->msg, "this torch's wheel was built for Python %s (the Tag of its "
                              "dist-info's WHEEL), and Python %s does not import extension "
                              "modules built for another version: import torch fails (no "
                              "module torch._C)",
                     built, pv);
    aitk_str_appendf(&j->fix, "Install torch, torchvision and torchaudio again in this "
                              "environment with the README's torch line and "
                              "--force-reinstall, so that pip picks the wheels for Python %s; "
                              "or use a Python %s environment.",
                     pv, built);
    aitk_str_append(&j->src, "; PEP 425, compatibility tags; CPython Python/dynload_win.c "
                             "and Python/dynload_shlib.c (only extension files tagged for the "
                             "running version load)");
    return true;
}

static aitk_status check_torch_python(aitk_run_ctx *ctx, const cJSON *sel, const cJSON *torch)
{
    int ta, tb;
    const char *tv = aitk_field_str(torch, "version");
    const char *pv = aitk_field_str(sel, "python_version");
    judged j = {0};
    aitk_str_append(&j.id, "python.torch_python");
    aitk_str_appendf(&j.obs, "Python %s, torch %s", *pv ? pv : "unknown", tv);
    char key[32] = "";
    if (aitk_pyver_major_minor(tv, &ta, &tb))
        snprintf(key, sizeof key, "%d.%d", ta, tb);
    const aitk_yaml_node *row = aitk_compat_table_row(ctx->compat, "torch_python", key);
    const char *range = aitk_compat_rule_text(row);
    aitk_str_append(&j.src, aitk_compat_rule_source(row));
    int lo = -1, hi = -1;
    if (range) {
        const char *dash = strchr(range, '-');
        lo = mm(range);
        hi = dash ? mm(dash + 1) : -1;
    }
    if (judge_wheel_python(torch, pv, &j)) {
        aitk_str_appendf(&j.exp, "Python %s", aitk_field_str(torch, "wheel_python"));
        return add_judged(ctx, &j, "Python for this torch", AITK_CHECK_FAIL);
    }
    if (lo < 0 || hi < 0 || mm(pv) < 0) {
        aitk_str_appendf(&j.msg, mm(pv) < 0 ? "the Python version is unknown"
                                            : "the matrix has no Python range for torch %s", key);
        return add_judged(ctx, &j, "Python for this torch", AITK_CHECK_SKIP);
    }
    aitk_str_append(&j.exp, range);
    if (mm(pv) >= lo && mm(pv) <= hi) {
        aitk_str_appendf(&j.msg, "torch %s ships wheels for Python %s", key, range);
        return add_judged(ctx, &j, "Python for this torch", AITK_CHECK_PASS);
    }
    aitk_str_appendf(&j.msg, "torch %s has official wheels only for Python %s: this install was "
                             "built elsewhere or will not import", key, range);
    aitk_str_appendf(&j.fix, "Use a Python in %s for torch %s, or install a torch release that "
                             "supports Python %s.", range, key, pv);
    return add_judged(ctx, &j, "Python for this torch", AITK_CHECK_FAIL);
}

static const char *scalar_text(const aitk_yaml_node *n)
{
    return n && n->kind == AITK_YAML_SCALAR ? n->text : NULL;
}

/* "+cu121" of a version text, "" when none. */
static const char *local_label(const char *version)
{
    const char *plus = strchr(version, '+');
    return plus ? plus + 1 : "";
}

/* Whether the space-separated `list` names `name`. */
static bool listed(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list ? list : ""; *p;) {
        p += strspn(p, " ");
        const size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len;
    }
    return false;
}

/* Whether the ai-toolkit checkout, when one is known, imports `module` at
 * the top of toolkit/config_modules.py, the module every job imports (the
 * line as ai-toolkit writes it since 7040d8d7; an older checkout, or one
 * that guards the import, does not need the package to start). Without a
 * checkout, or without that file, the profile decides: true. */
static bool checkout_imports(const char *aitk_dir, const char *module)
{
    const char *checkout = aitk_pyreqs_checkout(aitk_dir);
    aitk_str path = AITK_STR_INIT;
    char *text = NULL;
    size_t len = 0;
    bool found = true;
    if (checkout && !aitk_path_join(&path, checkout, "toolkit/config_modules.py") &&
        aitk_file_read(aitk_str_cstr(&path), 8 << 20, &text, &len, NULL) == AITK_OK) {
        const size_t n = strlen(module);
        found = false;
        /* A UTF-8 byte-order mark before the first line, as Python allows. */
        const char *p = strncmp(text, "\xEF\xBB\xBF", 3) == 0 ? text + 3 : text;
        while (p && !found) {
            /* "import torchaudio", "import torchaudio.x", "import torchaudio, y",
             * "import torchaudio as y", "from torchaudio[.x] import y"; strchr
             * finds the terminator too: the line may end the file. */
            const char *m = strncmp(p, "import ", 7) == 0 ? p + 7
                            : strncmp(p, "from ", 5) == 0 ? p + 5
                                                          : NULL;
            while (m && (*m == ' ' || *m == '\t'))
                m++;
            found = m && strncmp(m, module, n) == 0 && strchr(" \t\r\n.,", m[n]) != NULL;
            p = strchr(p, '\n');
            p = p ? p + 1 : NULL;
        }
    }
    aitk_free(text);
    aitk_str_free(&path);
    return found;
}

/* A companion the profile says every job imports (companions_required) and
 * that is not installed: the job stops at start-up with "No module named
 * 'torchaudio'". The remedy pins torch to the installed build so that pip
 * picks a companion made for it instead of replacing torch. */
static void judge_missing_companion(judged *j, const aitk_yaml_node *rule, const char *name,
                                    const char *want, const char *torch_version,
                                    const char *variant, aitk_check_status *status)
{
    aitk_str_appendf(&j->msg, "%s is not installed, and ai-toolkit imports it when any job "
                              "starts: the job stops with \"No module named '%s'\" (pip install "
                              "-r requirements.txt does not install it; the README's torch line "
                              "does). ", name, name);
    if (aitk_compat_rule_severity(rule) > *status)
        *status = aitk_compat_rule_severity(rule);
    aitk_str_appendf(&j->fix, "%sWith this environment's Python: python -m pip install",
                     j->fix.len ? " " : "");
    if (want)
        aitk_str_appendf(&j->fix, " %s==%s", name, want);
    else
        aitk_str_appendf(&j->fix, " \"torch==%s\" %s", torch_version, name);
    aitk_str_appendf(&j->fix, " --index-url " PIP_INDEX "%s", *variant ? variant : "cu128");
    if (!want)
        aitk_str_appendf(&j->fix, " (torch named so that pip keeps it and picks a %s that "
                                  "accepts it).", name);
    else
        aitk_str_append(&j->fix, ".");
    aitk_str_appendf(&j->src, "; %s", aitk_compat_rule_source(rule));
}

static aitk_status check_companions(aitk_run_ctx *ctx, const cJSON *pkgs, const cJSON *torch)
{
    const char *tv = aitk_field_str(torch, "version");
    const char *tvar = aitk_field_str(torch, "variant");
    judged j = {0};
    aitk_str_append(&j.id, "python.torch_companions");
    aitk_str_appendf(&j.obs, "torch %s", tv);
    char base[64];
    snprintf(base, sizeof base, "%.*s", (int)strcspn(tv, "+"), tv);
    const aitk_yaml_node *row = aitk_compat_table_row(ctx->compat, "torch_companions", base);
    const aitk_yaml_node *value = aitk_yaml_get(row, "value");
    aitk_str_append(&j.src, row ? aitk_compat_rule_source(row)
                                : "PyTorch release notes: torch, torchvision and torchaudio come "
                                  "from one release and one CUDA variant (pytorch/pytorch RELEASE.md, Release Compatibility Matrix; https://pytorch.org/get-started/previous-versions/)");
    aitk_check_status status = AITK_CHECK_PASS, missing = AITK_CHECK_PASS;
    static const char *const names[] = {"torchvision", "torchaudio"};
    const aitk_yaml_node *required = aitk_compat_rule(ctx->compat, "python", "companions_required");
    aitk_str_appendf(&j.exp, "same CUDA variant (+%s)", *tvar ? tvar : "?");
    for (size_t i = 0; i < 2; i++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(pkgs, names[i]);
        if (!p && listed(aitk_compat_rule_text(required), names[i]) &&
            checkout_imports(ctx->aitk_dir, names[i])) {
            aitk_str_appendf(&j.obs, ", %s not installed", names[i]);
            aitk_str_appendf(&j.exp, ", %s installed", names[i]);
            judge_missing_companion(&j, required, names[i],
                                    scalar_text(aitk_yaml_get(value, names[i])), base, tvar,
                                    &missing);
        }
        if (!p)
            continue;
        /* PyPI's wheels: the label is in version.py, not the metadata. */
        const char *v = *aitk_field_str(p, "local_version") ? aitk_field_str(p, "local_version")
                                                             : aitk_field_str(p, "version");
        aitk_str_appendf(&j.obs, ", %s %s", names[i], v);
        const char *want = scalar_text(aitk_yaml_get(value, names[i]));
        if (want)
            aitk_str_appendf(&j.exp, ", %s %s", names[i], want);
        const char *lab = local_label(v);
        /* A companion without a label matches a torch without one (PyPI wheels). */
        int variant_bad = *lab ? strcmp(lab, local_label(tv)) != 0 && strcmp(lab, tvar) != 0
                               : *local_label(tv) != '\0';
        /* "0.22.0+cu128" matches "0.22.0"; "0.22.10" does not match "0.22.1". */
        size_t wl = want ? strlen(want) : 0;
        int version_bad = want && (strncmp(v, want, wl) != 0 || (v[wl] && v[wl] != '+'));
        if (variant_bad) {
            aitk_str_appendf(&j.msg, "%s %s is built for +%s but torch %s is +%s: importing it "
                                     "fails or loads a second CUDA runtime. ",
                             names[i], v, *lab ? lab : "(none)", tv, *tvar ? tvar : "(none)");
            status = AITK_CHECK_FAIL;
        } else if (version_bad) {
            aitk_str_appendf(&j.msg, "%s %s is not the release made with torch %s (%s). ",
                             names[i], v, base, want);
            status = AITK_CHECK_FAIL;
        }
    }
    if (status == AITK_CHECK_PASS && missing == AITK_CHECK_PASS) {
        aitk_str_append(&j.msg, "torch and its companions belong together");
    } else if (status != AITK_CHECK_PASS) {
        aitk_str_clear(&j.fix);
        aitk_str_appendf(&j.fix, "Reinstall the three from one index: pip install --force-reinstall "
                                 "torch==%s", base);
        /* Without a pin from the table, the names alone: pip then picks the
         * companions that accept the torch named. */
        const char *tvv = scalar_text(aitk_yaml_get(value, "torchvision"));
        const char *tav = scalar_text(aitk_yaml_get(value, "torchaudio"));
        aitk_str_appendf(&j.fix, " torchvision%s%s", tvv ? "==" : "", tvv ? tvv : "");
        if (tav || missing != AITK_CHECK_PASS ||
            cJSON_GetObjectItemCaseSensitive(pkgs, "torchaudio"))
            aitk_str_appendf(&j.fix, " torchaudio%s%s", tav ? "==" : "", tav ? tav : "");
        aitk_str_appendf(&j.fix, " --index-url " PIP_INDEX "%s", *tvar ? tvar : "cu128");
    }
    while (j.msg.len && j.msg.ptr[j.msg.len - 1] == ' ')
        j.msg.ptr[--j.msg.len] = '\0';
    return add_judged(ctx, &j, "torch, torchvision, torchaudio",
                      missing > status ? missing : status);
}

/* What site_packages (pyenv.c) says of one site folder: "environment",
 * "base installation", "user site", "PYTHONPATH"...; "" when not listed. */
static const char *site_kind(const cJSON *sel, const char *site)
{
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(sel, "site_packages"))
    {
        if (strcmp(aitk_field_str(s, "path"), site) == 0)
            return aitk_field_str(s, "kind");
    }
    return "";
}

/* A venv made with --system-site-packages sees its base installation's
 * folders (and the user site) after its own: a package installed in the
 * venv over the base's is imported from the venv, and pip in the venv
 * leaves the base's copy alone ("Not uninstalling ... outside
 * environment"). That layering is by design, not a broken upgrade: the
 * first copy is the venv's, and each other one sits in a folder the venv
 * lets through, one to a folder. */
static bool layered_over_base(const cJSON *sel, const cJSON *installs)
{
    const cJSON *in;
    int k = 0;
    cJSON_ArrayForEach(in, installs)
    {
        const char *site = aitk_field_str(in, "site"), *kind = site_kind(sel, site);
        const bool ok = k++ == 0 ? strcmp(kind, "environment") == 0
                                 : strcmp(kind, "base installation") == 0 ||
                                       strcmp(kind, "user site") == 0;
        if (!ok || !aitk_json_true(sel, "venv"))
            return false;
        for (const cJSON *before = installs->child; before != in; before = before->next)
            if (strcmp(aitk_field_str(before, "site"), site) == 0)
                return false; /* two in one folder: pip's leftover */
    }
    return true;
}

static aitk_status check_shadowing(aitk_run_ctx *ctx, const cJSON *sel, const cJSON *pkgs)
{
    judged j = {0};
    aitk_str_append(&j.id, "python.shadowing");
    aitk_str_append(&j.exp, "one install of each package");
    aitk_str_append(&j.src, "Python import system: the first site folder on sys.path wins; pip "
                            "leaves older dist-info behind after interrupted upgrades");
    const cJSON *p;
    int dup = 0;
    bool torch_dup = false;
    aitk_str layered = AITK_STR_INIT; /* "torch 2.13.0, numpy 1.26.4" */
    cJSON_ArrayForEach(p, pkgs)
    {
        const cJSON *installs = cJSON_GetObjectItemCaseSensitive(p, "installs");
        if (cJSON_GetArraySize(installs) < 2)
            continue;
        aitk_str_appendf(&j.obs, "%s%s:", j.obs.len ? "; " : "", p->string);
        const cJSON *in;
        int k = 0;
        cJSON_ArrayForEach(in, installs)
        {
            aitk_str_appendf(&j.obs, "%s %s in %s", k++ ? "," : "", aitk_field_str(in, "version"),
                             aitk_field_str(in, "site"));
        }
        if (layered_over_base(sel, installs)) {
            aitk_str_appendf(&layered, "%s%s %s", layered.len ? ", " : "", p->string,
                             aitk_field_str(p, "version"));
            continue;
        }
        dup++;
        torch_dup = torch_dup || strcmp(p->string, "torch") == 0;
        aitk_str_appendf(&j.msg, "%s is installed %d times; Python imports %s from %s and the "
                                 "others confuse pip and version checks. ",
                         p->string, cJSON_GetArraySize(installs), aitk_field_str(p, "version"),
                         aitk_field_str(p, "site"));
        aitk_str_appendf(&j.fix, "%spip uninstall -y %s (repeat until pip says it is not "
                                 "installed; use --user for the user site, or remove stale "
                                 "*.dist-info folders), then install it once.",
                         j.fix.len ? " " : "", p->string);
    }
    if (layered.len)
        aitk_str_appendf(&j.msg, "%s venv's own %s %s imported, over the copies its "
                                 "--system-site-packages lets through (the base installation's "
                                 "or the user site's): by design, and pip in the venv leaves "
                                 "those alone",
                         dup ? "The" : "no broken install; the", aitk_str_cstr(&layered),
                         strchr(aitk_str_cstr(&layered), ',') ? "are" : "is");
    if (!dup && !layered.len) {
        aitk_str_append(&j.obs, "none");
        aitk_str_append(&j.msg, "no package is installed twice");
    }
    aitk_str_free(&layered);
    while (j.msg.len && j.msg.ptr[j.msg.len - 1] == ' ')
        j.msg.ptr[--j.msg.len] = '\0';
    aitk_check_status st = !dup ? AITK_CHECK_PASS : torch_dup ? AITK_CHECK_FAIL : AITK_CHECK_WARN;
    return add_judged(ctx, &j, "Shadowed installs", st);
}

/* ai-toolkit's main requirements: the pip distribution, the module
 * ai-toolkit imports from it, and what the deep check imports (pydeep.h):
 * the module, and for diffusers and transformers the classes ai-toolkit's
 * start-up takes from them (toolkit/stable_diffusion_model.py, imported by
 * every training job). Both packages load their classes lazily, on first
 * use, so `import diffusers` succeeds where `from diffusers import
 * AutoencoderTiny` fails: "Failed to import
 * diffusers.models.autoencoders.autoencoder_tiny because of the following
 * error" over a torchao or triton it cannot use (ostris/ai-toolkit issue
 * #546, pull request #559). The classes are FLUX.1's and those every job
 * loads, all in diffusers since 0.30 and transformers since 4.x. */
static const struct requirement {
    const char *dist, *module, *deep;
} requirements[] = {
    {"diffusers", "diffusers",
     "diffusers:AutoencoderKL,AutoencoderTiny,FlowMatchEulerDiscreteScheduler,FluxPipeline,"
     "FluxTransformer2DModel"},
    {"transformers", "transformers",
     "transformers:CLIPTextModel,CLIPTokenizer,T5EncoderModel,T5TokenizerFast"},
    {"peft", "peft", "peft"},
    {"accelerate", "accelerate", "accelerate"},
    {"optimum-quanto", "optimum.quanto", "optimum.quanto"},
    {"torchao", "torchao", "torchao"},
    {"bitsandbytes", "bitsandbytes", "bitsandbytes"},
};
#define N_REQUIREMENTS (sizeof requirements / sizeof *requirements)

/* What the deep check's interpreter said when importing `module`: NULL when
 * it was not asked (--quick) or did not answer, "ok", or the exception. */
static const char *import_verdict(const cJSON *sel, const char *module)
{
    const cJSON *imports = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(sel, "deep"), "imports");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(imports, module);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The remedy for a requirement that is missing or not at its pin. */
#define PIP_INSTALL_REQUIREMENTS                                                               \
    "In the ai-toolkit folder, with the environment active: pip install -r requirements.txt"

/* Packages the checkout asks for from a repository's commit and that came
 * from elsewhere (pyreqs.h). ai-toolkit asks for diffusers so: its jobs
 * (job: extension) import every module of extensions_built_in at start-up
 * (toolkit/extension.py, get_all_extensions), other architectures' models
 * included, and one that imports a class the installed diffusers lacks
 * stops every job with "Diffusers is out of date" (ostris/ai-toolkit
 * issues #490, #678). pip takes an installed diffusers as the requirement
 * when its version is the commit's, so ai-toolkit's own advice in that
 * message is to uninstall it first. */
static void judge_elsewhere(const aitk_pyreqs_verdict *v, judged *j, aitk_check_status *st)
{
    if (!v->elsewhere.len)
        return;
    if (*st == AITK_CHECK_PASS)
        *st = AITK_CHECK_WARN;
    aitk_str_appendf(&j->obs, "%snot from the commit asked for: %s", j->obs.len ? "; " : "",
                     aitk_str_cstr(&v->elsewhere));
    const bool diffusers = listed(aitk_str_cstr(&v->elsewhere_names), "diffusers");
    aitk_str_appendf(&j->msg, "%s%s asks for packages from a commit of their repository, and "
                              "the installed ones came from elsewhere: ",
                     j->msg.len ? "; " : "", aitk_str_cstr(&v->file));
    aitk_str_append(&j->msg, diffusers ? "ai-toolkit's jobs import every model's module at "
                                         "start-up (toolkit/extension.py), so a diffusers "
                                         "older than the commit can stop every job with "
                                         "'Diffusers is out of date' (ostris/ai-toolkit issues "
                                         "#490, #678)"
                                       : "a release or another commit can lack what "
                                         "ai-toolkit imports");
    /* This remedy holds pip install -r: it replaces the plain one. */
    if (strcmp(aitk_str_cstr(&j->fix), PIP_INSTALL_REQUIREMENTS) == 0)
        aitk_str_clear(&j->fix);
    aitk_str_appendf(&j->fix, "%sIn the ai-toolkit folder, with the environment active: pip "
                              "uninstall -y %s, then pip install -r requirements.txt (as "
                              "ai-toolkit's own message says: pip keeps an installed copy whose "
                              "version number is the commit's)",
                     j->fix.len ? " " : "", aitk_str_cstr(&v->elsewhere_names));
}

/* The programs pip runs to install from repositories (pyreqs.h), when
 * one is not on PATH: pip stops the whole install at that line with
 * "Cannot find command 'git' - do you have 'git' installed and in your
 * PATH?" (pip src/pip/_internal/vcs/versioncontrol.py, run_command), so the
 * remedy must install it first. A ZIP download of ai-toolkit on Windows
 * is the usual way to have no git. */
static void judge_vcs_programs(const aitk_pyreqs_verdict *v, judged *j)
{
    aitk_str absent = AITK_STR_INIT, found = AITK_STR_INIT;
    for (const char *p = aitk_str_cstr(&v->vcs_programs); *p;) {
        const size_t n = strcspn(p, " ");
        aitk_str program = AITK_STR_INIT;
        aitk_str_appendf(&program, "%.*s", (int)n, p);
        if (!aitk_path_find_program(getenv("PATH"), aitk_str_cstr(&program), &found))
            aitk_str_appendf(&absent, "%s%s", absent.len ? ", " : "", aitk_str_cstr(&program));
        aitk_str_free(&program);
        p += n + (p[n] == ' ');
    }
    if (absent.len) {
        const char *a = aitk_str_cstr(&absent);
        aitk_str_appendf(&j->obs, "; %s not on PATH", a);
        aitk_str_appendf(&j->msg, "; pip runs %s to install from a repository and stops with "
                                  "\"Cannot find command '%.*s'\" when it is not on PATH",
                         a, (int)strcspn(a, ","), a);
        aitk_str fix = AITK_STR_INIT;
        aitk_str_appendf(&fix, "First install %s and open a new terminal (%s)", a,
                         strcmp(a, "git") == 0
                             ? "Debian or Ubuntu: apt install git; Windows: Git for Windows "
                               "from https://git-scm.com, whose installer puts git on PATH "
                               "by default"
                             : "from your system's packages");
        /* The pip remedy follows as the sentence's second half. */
        const char *then = aitk_str_cstr(&j->fix);
        if (*then)
            aitk_str_appendf(&fix, "; then %c%s", tolower((unsigned char)then[0]), then + 1);
        aitk_str_clear(&j->fix);
        aitk_str_append(&j->fix, aitk_str_cstr(&fix));
        aitk_str_free(&fix);
    }
    aitk_str_free(&absent);
    aitk_str_free(&found);
}

/* The rest of the checkout's requirements files (pyreqs.h): missing ones
 * and ones not at their pin, each a warning: ai-toolkit imports some of
 * them only for other models or features. */
static void judge_checkout(const aitk_run_ctx *ctx, const cJSON *sel, judged *j,
                           aitk_check_status *st)
{
    const char *checkout = aitk_pyreqs_checkout(ctx->aitk_dir);
    if (!checkout)
        return;
    const char *main_ones[N_REQUIREMENTS + 1];
    for (size_t i = 0; i < N_REQUIREMENTS; i++)
        main_ones[i] = requirements[i].dist; /* written normalized */
    main_ones[N_REQUIREMENTS] = NULL;
    aitk_pyreqs_verdict v;
    if (aitk_pyreqs_judge(checkout, cJSON_GetObjectItemCaseSensitive(sel, "site_packages"),
                          main_ones, &v)) {
        aitk_pyreqs_verdict_free(&v);
        return; /* out of memory: the main packages' verdict stands */
    }
    const char *file = aitk_str_cstr(&v.file);
    aitk_str_append(&j->src, "; the checkout's requirements files, read as pip reads them "
                             "(pip's Requirements File Format)");
    if (v.problem.len) {
        /* pip refuses the same file: `pip install -r` cannot have run. */
        if (*st == AITK_CHECK_PASS)
            *st = AITK_CHECK_WARN;
        aitk_str_appendf(&j->exp, "; what %s lists", file);
        aitk_str_appendf(&j->obs, "%srequirements not read: %s", j->obs.len ? "; " : "",
                         aitk_str_cstr(&v.problem));
        aitk_str_appendf(&j->msg, "%s%s cannot be read, by pip either", j->msg.len ? "; " : "",
                         file);
    } else {
        aitk_str_appendf(&j->exp,
                         "; the %zu package%s %s lists, at the versions and commits it pins",
                         v.listed, v.listed == 1 ? "" : "s", file);
    }
    if (v.missing.len || v.unpinned.len) {
        if (*st == AITK_CHECK_PASS)
            *st = AITK_CHECK_WARN;
        if (v.missing.len)
            aitk_str_appendf(&j->obs, "%snot installed from %s: %s", j->obs.len ? "; " : "",
                             file, aitk_str_cstr(&v.missing));
        if (v.unpinned.len)
            aitk_str_appendf(&j->obs, "%snot as pinned: %s", j->obs.len ? "; " : "",
                             aitk_str_cstr(&v.unpinned));
        aitk_str_appendf(&j->msg, "%s%s lists %s%s%s: a `pip install -r requirements.txt` "
                                  "that stopped part-way, or packages changed since; ai-toolkit "
                                  "imports some of them at start-up, others only for some models",
                         j->msg.len ? "; " : "", file,
                         v.missing.len ? "packages that are not installed" : "",
                         v.missing.len && v.unpinned.len ? " and " : "",
                         v.unpinned.len ? "versions that are not the ones installed" : "");
    }
    judge_elsewhere(&v, j, st);
    if (*st != AITK_CHECK_PASS && !j->fix.len)
        aitk_str_append(&j->fix, PIP_INSTALL_REQUIREMENTS);
    if (*st != AITK_CHECK_PASS)
        judge_vcs_programs(&v, j);
    aitk_pyreqs_verdict_free(&v);
}

/* Installed is not importable: beyond --quick each installed requirement
 * was imported after torch (pydeep.c), and its error is the finding
 * ("module 'torch' has no attribute 'accelerator'": a diffusers newer than
 * the torch it runs with). */
static aitk_status check_requirements(aitk_run_ctx *ctx, const cJSON *sel, const cJSON *pkgs)
{
    judged j = {0};
    aitk_str_append(&j.id, "python.requirements");
    aitk_str_append(&j.src, "ostris/ai-toolkit requirements.txt; the deep check imports each "
                            "installed one after torch");
    aitk_str missing = AITK_STR_INIT, broken = AITK_STR_INIT;
    for (size_t i = 0; i < N_REQUIREMENTS; i++) {
        const char *r = requirements[i].dist;
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(pkgs, r);
        aitk_str_appendf(&j.exp, "%s%s", j.exp.len ? ", " : "", r);
        if (!p) {
            aitk_str_appendf(&missing, "%s%s", missing.len ? ", " : "", r);
            continue;
        }
        aitk_str_appendf(&j.obs, "%s%s %s", j.obs.len ? ", " : "", r, aitk_field_str(p, "version"));
        const char *imp = import_verdict(sel, requirements[i].module);
        if (imp && strcmp(imp, "ok") != 0)
            aitk_str_appendf(&broken, "%simport %s: %s", broken.len ? "; " : "",
                             requirements[i].module, imp);
    }
    aitk_check_status st = AITK_CHECK_PASS;
    if (broken.len) {
        st = AITK_CHECK_FAIL;
        aitk_str_appendf(&j.obs, "; %s", aitk_str_cstr(&broken));
        aitk_str_append(&j.msg, "installed, but importing fails: ai-toolkit stops at start-up");
        aitk_str_append(&j.fix, "Reinstall ai-toolkit's requirements together with the torch "
                                "they were written for (pip install -r requirements.txt in the "
                                "ai-toolkit folder); a package that needs a newer torch names "
                                "the missing torch attribute in its error.");
    }
    if (missing.len) {
        if (st == AITK_CHECK_PASS)
            st = AITK_CHECK_WARN;
        aitk_str_appendf(&j.obs, "%smissing: %s", j.obs.len ? "; " : "", aitk_str_cstr(&missing));
        aitk_str_appendf(&j.msg, "%sai-toolkit imports %s; training stops at start-up without them",
                         j.msg.len ? "; " : "", aitk_str_cstr(&missing));
        if (!j.fix.len)
            aitk_str_append(&j.fix, PIP_INSTALL_REQUIREMENTS);
    }
    judge_checkout(ctx, sel, &j, &st);
    if (st == AITK_CHECK_PASS)
        aitk_str_append(&j.msg, import_verdict(sel, "diffusers")
                                    ? "ai-toolkit's main requirements are installed and import"
                                    : "ai-toolkit's main requirements are installed");
    aitk_str_free(&missing);
    aitk_str_free(&broken);
    return add_judged(ctx, &j, "ai-toolkit requirements", st);
}

/* The modules of the installed requirements, for the deep check. */
static void installed_modules(const cJSON *pkgs, const char *out[N_REQUIREMENTS + 1])
{
    size_t n = 0;
    for (size_t i = 0; i < N_REQUIREMENTS; i++)
        if (cJSON_GetObjectItemCaseSensitive(pkgs, requirements[i].dist))
            out[n++] = requirements[i].deep;
    out[n] = NULL;
}

/* The profile's pinned torch build (ai-toolkit-current) and minimum CUDA (seed-guide). */
static aitk_status check_torch_build(aitk_run_ctx *ctx, const cJSON *torch)
{
    const aitk_yaml_node *pin = aitk_compat_rule(ctx->compat, "cuda", "torch_pin");
    const aitk_yaml_node *min = aitk_compat_rule(ctx->compat, "cuda", "min_torch_cuda");
    aitk_status st = AITK_OK;
    const char *tv = aitk_field_str(torch, "version");
    if (pin && aitk_compat_rule_text(pin)) {
        const char *want = aitk_compat_rule_text(pin);
        judged j = {0};
        aitk_str_append(&j.id, "python.torch_pin");
        aitk_str_append(&j.obs, tv);
        aitk_str_append(&j.exp, want);
        aitk_str_append(&j.src, aitk_compat_rule_source(pin));
        int same = strcmp(tv, want) == 0;
        aitk_str_appendf(&j.msg, same ? "the torch build ai-toolkit pins"
                                      : "ai-toolkit is tested with torch %s; this is %s", want, tv);
        if (!same)
            aitk_str_appendf(&j.fix, "Reinstall ai-toolkit's requirements (its README's pip "
                                     "install lines) to get torch %s.", want);
        st = add_judged(ctx, &j, "torch build pinned by ai-toolkit",
                        same ? AITK_CHECK_PASS : aitk_compat_rule_severity(pin));
    }
    const char *cuda = aitk_field_str(torch, "cuda");
    if (!st && min && aitk_compat_rule_text(min) && *cuda) {
        const char *want = aitk_compat_rule_text(min);
        judged j = {0};
        aitk_str_append(&j.id, "python.torch_cuda");
        aitk_str_append(&j.obs, cuda);
        aitk_str_appendf(&j.exp, ">= %s", want);
        aitk_str_append(&j.src, aitk_compat_rule_source(min));
        int ok = mm(cuda) >= mm(want);
        aitk_str_appendf(&j.msg, "torch is built with CUDA %s", cuda);
        if (!ok)
            aitk_str_appendf(&j.fix, "Install a torch built with CUDA %s or newer.", want);
        st = add_judged(ctx, &j, "CUDA version of torch",
                        ok ? AITK_CHECK_PASS : aitk_compat_rule_severity(min));
    }
    return st;
}

aitk_status aitk_python_checks(aitk_run_ctx *ctx)
{
    cJSON *py = cJSON_AddObjectToObject(ctx->env, "python");
    cJSON *envs = py ? cJSON_AddArrayToObject(py, "environments") : NULL;
    if (!envs)
        return AITK_E_NOMEM;
    aitk_pyenv_hints hints = {ctx->python, ctx->aitk_dir};
    aitk_status st = aitk_pyenv_find(&hints, envs);
    const cJSON *sel = cJSON_GetArrayItem(envs, 0);
    if (!st)
        st = check_env(ctx, sel);
    if (st || !sel || *aitk_field_str(sel, "error"))
        return st;
    const cJSON *pkgs = cJSON_GetObjectItemCaseSensitive(sel, "packages");
    const cJSON *torch = cJSON_GetObjectItemCaseSensitive(sel, "torch");
    st = check_version(ctx, sel);
    if (!st)
        st = check_torch(ctx, sel, torch);
    if (!st && torch)
        st = check_torch_python(ctx, sel, torch);
    if (!st && torch)
        st = check_companions(ctx, pkgs, torch);
    if (!st && torch)
        st = check_torch_build(ctx, torch);
    if (!st)
        st = check_shadowing(ctx, sel, pkgs);
    if (!st && ctx->level >= AITK_LEVEL_STANDARD) {
        const char *modules[N_REQUIREMENTS + 1];
        installed_modules(pkgs, modules);
        st = aitk_pydeep_check(ctx, (cJSON *)sel, modules);
    }
    if (!st)
        st = check_requirements(ctx, sel, pkgs);
    if (!st && ctx->level >= AITK_LEVEL_STANDARD)
        st = aitk_startup_check(ctx, sel);
    return st;
}
