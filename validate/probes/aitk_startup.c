#include "validate/probes/aitk_startup.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/fileio.h"
#include "common/proc.h"
#include "common/str.h"
#include "reports/fields.h"
#include "validate/probes/pydeep.h"
#include "validate/probes/pyreqs.h"

/* Importing everything ai-toolkit imports (torch, diffusers, transformers,
 * every extension's model code) takes 5-30 s on a local disk; a network
 * file system or a cold cache can take minutes. */
#define STARTUP_TIMEOUT_MS 300000

/* Run in the checkout's folder. run.py's whole top level runs as
 * `python run.py` runs it (its .env loading, the variables it sets, its
 * imports, the Accelerator it makes), as a module not named __main__ and
 * with any bare main() call left out, so that no job starts; then what
 * get_job does for `job: extension`. What the imports print goes to stderr
 * and the answer to a copy of stdout, so no amount of output can push it
 * out; os._exit ends the process even when an import left a thread behind.
 * HF_HUB_OFFLINE keeps any import off the network. A frame counts as the
 * checkout's when its file is in the checkout and not in the interpreter's
 * own folders (ai-toolkit's README makes the venv inside the checkout).
 * A module that does not import is marked as the checkout's own when its
 * top-level package is a folder or file there, and the git submodules whose
 * folder is missing or empty are listed: pip cannot mend either. */
static const char script[] =
    "import ast, json, os, sys, time, traceback\n"
    "answer = os.fdopen(os.dup(1), 'w')\n"
    "os.dup2(2, 1)\n"
    "root = os.getcwd()\n"
    "sys.dont_write_bytecode = True\n"
    "os.environ['HF_HUB_OFFLINE'] = '1'\n"
    "sys.path.insert(0, root)\n"
    "path = os.path.join(root, 'run.py')\n"
    "sys.argv = [path]\n"
    "r = {'stage': 'run.py'}\n"
    "t = time.time()\n"
    "def text(s):\n"
    "    return s.encode('utf-8', 'backslashreplace').decode('utf-8')\n"
    "inside = os.path.join(root, '')\n"
    "env = tuple(os.path.join(os.path.abspath(p), '') for p in\n"
    "            (sys.prefix, sys.base_prefix, sys.exec_prefix))\n"
    "def mine(name):\n"
    "    a = '' if name.startswith('<') else os.path.abspath(name)\n"
    "    if not a.startswith(inside) or a.startswith(env):\n"
    "        return False\n"
    "    parts = a[len(inside):].split(os.sep)\n"
    "    return 'site-packages' not in parts and 'dist-packages' not in parts\n"
    "def unfilled():\n"
    "    try:\n"
    "        with open(os.path.join(root, '.gitmodules'), errors='replace') as f:\n"
    "            lines = [l.split('=', 1) for l in f.read().splitlines() if '=' in l]\n"
    "        rel = [v.strip().strip('\"') for k, v in lines if k.strip().lower() == 'path']\n"
    "        rel = [p for p in rel if p and not os.path.isabs(p) and '..' not in p.split('/')]\n"
    "        return [text(p) for p in rel if not os.path.isdir(os.path.join(root, p))\n"
    "                or not os.listdir(os.path.join(root, p))]\n"
    "    except (OSError, ValueError):\n"
    "        return []\n"
    "try:\n"
    "    with open(path, 'rb') as f:\n"
    "        tree = ast.parse(f.read(), path)\n"
    "    tree.body = [n for n in tree.body if not (isinstance(n, ast.Expr) and\n"
    "                 isinstance(n.value, ast.Call) and\n"
    "                 getattr(n.value.func, 'id', None) == 'main')]\n"
    "    exec(compile(tree, path, 'exec'), {'__name__': 'aitk_run', '__file__': path})\n"
    "    r['stage'] = 'jobs'\n"
    "    from jobs import ExtensionJob\n"
    "    from toolkit.extension import get_all_extensions_process_dict\n"
    "    r['stage'] = 'extensions'\n"
    "    r['job_types'] = len(get_all_extensions_process_dict())\n"
    "    r['stage'] = 'done'\n"
    "except BaseException as e:\n"
    "    r['error'] = text(' '.join(('%s: %s' % (type(e).__name__, e)).split())[:800])\n"
    "    frames = [f for f in traceback.extract_tb(e.__traceback__) if mine(f.filename)]\n"
    "    if frames:\n"
    "        rel = os.path.relpath(frames[-1].filename, root).replace(os.sep, '/')\n"
    "        r['where'] = text('%s:%d' % (rel, frames[-1].lineno))\n"
    "    if isinstance(e, ImportError) and e.name:\n"
    "        r['module'] = text(e.name)\n"
    "        top = e.name.split('.')[0]\n"
    "        if (os.path.isdir(os.path.join(root, top)) or\n"
    "                os.path.isfile(os.path.join(root, top + '.py'))):\n"
    "            r['own'] = text(top)\n"
    "        r['unfilled'] = unfilled()\n"
    "r['seconds'] = round(time.time() - t, 1)\n"
    "answer.write('" AITK_PY_ANSWER_MARK "' + json.dumps(r) + '\\n')\n"
    "answer.flush()\n"
    "for stream in (sys.stdout, sys.stderr):\n"
    "    try:\n"
    "        stream.flush()\n"
    "    except BaseException:\n"
    "        pass\n"
    "os._exit(0)\n";

static const char source[] =
    "ostris/ai-toolkit run.py (its top level, then get_job) and jobs/ExtensionJob.py (__init__: "
    "get_all_extensions_process_dict(), toolkit/extension.py), run in the environment's "
    "interpreter from the checkout's folder";

typedef struct verdict {
    aitk_check c;
    aitk_str obs, msg, fix;
} verdict;

/* Whether `module` is `package` or one of its submodules. */
static bool in_package(const char *module, const char *package)
{
    size_t n = strlen(package);
    return strncmp(module, package, n) == 0 && (module[n] == '\0' || module[n] == '.');
}

/* The remedy for a module ai-toolkit's own code lacks: no pip package
 * brings it. `own` is the checkout's top-level package it belongs to;
 * `unfilled` the git submodules whose folder is missing or empty (ai-toolkit
 * kept sd-scripts, ipadapter and others as submodules until it removed them
 * all on 2025-04-18, commit bfe29e21). */
static void remedy_own_code(const char *module, const char *own, const cJSON *unfilled,
                            aitk_str *fix)
{
    if (*own) {
        aitk_str_appendf(fix, "'%s' is ai-toolkit's own code (the checkout's '%s'), which no "
                              "pip package provides: the checkout lacks a file or holds files "
                              "of two versions. In the ai-toolkit folder, `git status` lists "
                              "what is deleted or changed and `git pull` (or a fresh download "
                              "of the release) puts it back; if a fresh checkout stops the same "
                              "way, that version of ai-toolkit has the bug: report it, or check "
                              "out the release before it.",
                         module, own);
        return;
    }
    aitk_str_append(fix, "The checkout's git submodules are not there (");
    const cJSON *p;
    cJSON_ArrayForEach(p, unfilled)
    {
        if (cJSON_IsString(p))
            aitk_str_appendf(fix, "%s%s", p == unfilled->child ? "" : ", ", p->valuestring);
    }
    aitk_str_appendf(fix, " empty), so '%s' cannot be found: in the ai-toolkit folder run `git "
                          "submodule update --init --recursive`.",
                     module);
}

/* The remedy for an exception the start-up raised, by what it says.
 * `torch` is the installed torch's version, `variant` its CUDA label.
 * Returns the check whose failure this one follows, when that check's
 * remedy is this one's (kept only where it failed: reports/causes.h). */
static const char *remedy_for(const cJSON *answer, const char *torch, const char *variant,
                              aitk_str *fix)
{
    const char *error = aitk_field_str(answer, "error");
    const char *module = aitk_field_str(answer, "module");
    const char *own = aitk_field_str(answer, "own");
    const cJSON *unfilled = cJSON_GetObjectItemCaseSensitive(answer, "unfilled");
    if (strstr(error, "Diffusers is out of date") ||
        (in_package(module, "diffusers") && strstr(error, "cannot import name"))) {
        aitk_str_append(fix, "In the ai-toolkit folder, with this environment: pip uninstall -y "
                             "diffusers, then pip install -r requirements.txt (ai-toolkit asks "
                             "for diffusers at a commit; pip keeps an installed diffusers of the "
                             "same version number).");
        return "python.requirements";
    } else if (strstr(error, "cannot open shared object file") ||
               strstr(error, "DLL load failed") || strstr(error, "undefined symbol") ||
               strstr(error, "or one of its dependencies")) {
        aitk_str_append(fix, "A native library did not load: `aitk-validate deps` names the "
                             "missing link; reinstalling the package that holds it (or the one "
                             "it was built against) usually mends it.");
    } else if (*module && *own) {
        remedy_own_code(module, own, unfilled, fix);
    } else if (strcmp(module, "torchaudio") == 0) {
        aitk_str_appendf(fix, "With this environment's Python: python -m pip install "
                              "\"torch==%.*s\" torchaudio --index-url "
                              "https://download.pytorch.org/whl/%s (torch named so that pip "
                              "keeps it and picks a torchaudio that accepts it); ai-toolkit's "
                              "requirements.txt does not install torchaudio, its README's torch "
                              "line does.",
                         (int)strcspn(torch, "+"), torch, *variant ? variant : "cu128");
        return "python.torch_companions";
    } else if (strncmp(error, "ModuleNotFoundError", 19) == 0 &&
               cJSON_GetArraySize(unfilled) > 0) {
        remedy_own_code(module, own, unfilled, fix);
    } else if (strstr(error, "cannot import name") || strstr(error, "Failed to import")) {
        aitk_str_append(fix, "Two packages are at versions that do not fit each other (one "
                             "imports a name the other does not have): in the ai-toolkit "
                             "folder, with this environment, pip install -r requirements.txt "
                             "puts back the versions ai-toolkit pins (python.requirements names "
                             "those that differ).");
        return "python.requirements";
    } else if (*module) {
        aitk_str_appendf(fix, "In the ai-toolkit folder, with this environment: pip install -r "
                              "requirements.txt; if that does not bring '%s', install the package "
                              "that provides it at the version ai-toolkit's code expects.",
                         module);
        return "python.requirements";
    } else if (strstr(error, "NVIDIA driver") || strstr(error, "CUDA") ||
               strstr(error, "cuda")) {
        aitk_str_append(fix, "ai-toolkit calls CUDA while it starts: it needs a working NVIDIA "
                             "GPU and a torch that can use it (see the gpu.* checks and "
                             "python.import_torch).");
        return "python.import_torch";
    } else if (strncmp(error, "OSError", 7) == 0) {
        aitk_str_append(fix, "A library did not load: `aitk-validate deps` names the missing "
                             "link; reinstalling the package that holds it usually mends it.");
    } else {
        aitk_str_append(fix, "Run `python run.py` in the ai-toolkit folder with this environment "
                             "to see the whole traceback; the line above is where it stopped.");
    }
    return NULL;
}

/* The start-up raised: where and what, in ai-toolkit's order. */
static void judge_error(verdict *v, const cJSON *answer, const cJSON *torch)
{
    const char *error = aitk_field_str(answer, "error");
    const char *where = aitk_field_str(answer, "where");
    const char *stage = aitk_field_str(answer, "stage");
    v->c.status = AITK_CHECK_FAIL;
    aitk_str_append(&v->obs, error);
    if (*where)
        aitk_str_appendf(&v->obs, " (at %s)", where);
    aitk_str_appendf(&v->msg, "ai-toolkit stops before any job starts, %s: %s",
                     strcmp(stage, "run.py") == 0 ? "while run.py loads (before its main())"
                     : strcmp(stage, "jobs") == 0 ? "importing its job classes"
                                                  : "importing its extensions",
                     error);
    if (*where)
        aitk_str_appendf(&v->msg, " (%s)", where);
    v->c.follows = remedy_for(answer, aitk_field_str(torch, "version"),
                              aitk_field_str(torch, "variant"), &v->fix);
}

/* The interpreter ended without a readable answer: how, and its last words. */
static void judge_silence(verdict *v, aitk_status st, const aitk_proc_result *res,
                          const aitk_str *out, const aitk_str *errout)
{
    aitk_py_last_line(errout->len ? aitk_str_cstr(errout) : aitk_str_cstr(out), &v->obs);
    if (st == AITK_E_TIMEOUT) {
        v->c.status = AITK_CHECK_WARN;
        aitk_str_appendf(&v->msg, "ai-toolkit's start-up did not finish within %d s: a slow "
                                  "disk or network folder, or an import that waits",
                         STARTUP_TIMEOUT_MS / 1000);
        aitk_str_append(&v->fix, "Run `python run.py` in the ai-toolkit folder and watch where "
                                 "it waits.");
    } else if (res->exited && res->exit_code == 0) {
        v->c.status = AITK_CHECK_WARN;
        aitk_str_append(&v->msg, "the interpreter ended without a readable answer (a site hook "
                                 "or an import that closed or took over its output)");
        aitk_str_append(&v->fix, "Run `python run.py` in the ai-toolkit folder with this "
                                 "environment to see how it starts.");
    } else {
        v->c.status = AITK_CHECK_FAIL;
        aitk_str_appendf(&v->msg, "the interpreter %s %d during ai-toolkit's start-up",
                         res->exited ? "exited with" : "was killed by signal",
                         res->exited ? res->exit_code : res->term_signal);
        aitk_str_append(&v->fix, "Run `python run.py` in the ai-toolkit folder with this "
                                 "environment: a crash in a native library here is what every "
                                 "job hits; `aitk-validate deps` checks the libraries' links.");
    }
}

/* How the interpreter's run ended: its answer judged (an answer written
 * before a time-out counts), or why there is none. */
static void judge_run(verdict *v, aitk_status st, const aitk_proc_result *res,
                      const aitk_str *out, const aitk_str *errout, const aitk_str *err,
                      const cJSON *torch)
{
    cJSON *answer = st == AITK_OK || st == AITK_E_TIMEOUT ? aitk_py_answer(out) : NULL;
    if (st == AITK_E_INTERRUPTED) {
        /* The person stopped the run: no verdict on ai-toolkit. */
        v->c.status = AITK_CHECK_SKIP;
        aitk_str_append(&v->obs, aitk_str_cstr(err));
        aitk_str_append(&v->msg, "not judged: the run was stopped before ai-toolkit's start-up "
                                 "finished");
        aitk_str_append(&v->fix, "Run again and let it finish.");
    } else if (st && st != AITK_E_TIMEOUT) {
        v->c.status = AITK_CHECK_SKIP;
        aitk_str_append(&v->obs, aitk_str_cstr(err));
        aitk_str_append(&v->msg, "the interpreter could not be started in the ai-toolkit folder");
    } else if (!answer) {
        judge_silence(v, st, res, out, errout);
    } else if (*aitk_field_str(answer, "error")) {
        judge_error(v, answer, torch);
    } else {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(answer, "job_types");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(answer, "seconds");
        v->c.status = AITK_CHECK_PASS;
        aitk_str_appendf(&v->obs, "run.py loaded and %d job types of the extensions, %.1f s",
                         cJSON_IsNumber(n) ? n->valueint : 0,
                         cJSON_IsNumber(s) ? s->valuedouble : 0);
        aitk_str_append(&v->msg, "ai-toolkit's start-up succeeds in this environment");
    }
    cJSON_Delete(answer);
}

/* Why the check is not run here, or NULL when it is. */
static const char *not_run(const char *checkout, const cJSON *sel, aitk_str *path)
{
    if (!checkout)
        return "no ai-toolkit checkout to start: give --aitk-dir, or run from the checkout";
    if (aitk_path_join(path, checkout, "run.py") || !aitk_path_exists(aitk_str_cstr(path)))
        return "the ai-toolkit folder has no run.py";
    const cJSON *deep = cJSON_GetObjectItemCaseSensitive(sel, "deep");
    if (!deep || !*aitk_field_str(sel, "interpreter"))
        return "the environment's interpreter was not run (python.import_torch)";
    /* No answer at all (a crash, a hang) is python.import_torch's to tell. */
    if (!cJSON_GetObjectItemCaseSensitive(deep, "python"))
        return "import torch did not answer (python.import_torch)";
    if (*aitk_field_str(deep, "error"))
        return "import torch fails first (python.import_torch)";
    return NULL;
}

aitk_status aitk_startup_check(aitk_run_ctx *ctx, const cJSON *sel)
{
    const char *checkout = aitk_pyreqs_checkout(ctx->aitk_dir);
    verdict v = {.c = {.id = "python.aitk_startup", .category = "python",
                       .title = "ai-toolkit's start-up", .source = source,
                       .expected = "run.py loads and every extension's job module imports"},
                 .obs = AITK_STR_INIT, .msg = AITK_STR_INIT, .fix = AITK_STR_INIT};
    aitk_str path = AITK_STR_INIT, out = AITK_STR_INIT, errout = AITK_STR_INIT,
             err = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    const char *why = not_run(checkout, sel, &path);
    if (why) {
        v.c.status = AITK_CHECK_SKIP;
        aitk_str_append(&v.msg, why);
    } else {
        const char *argv[] = {aitk_field_str(sel, "interpreter"), "-c", script, NULL};
        aitk_proc_opts opts = {.timeout_ms = STARTUP_TIMEOUT_MS, .max_output = 1 << 20,
                               .cwd = checkout, .end_with_child = true};
        aitk_proc_result res;
        memset(&res, 0, sizeof res);
        st = aitk_proc_run(argv, &opts, &res, &out, &errout, &err);
        if (st == AITK_E_NOMEM)
            goto done;
        judge_run(&v, st, &res, &out, &errout, &err,
                  cJSON_GetObjectItemCaseSensitive(sel, "torch"));
    }
    v.c.observed = aitk_str_cstr(&v.obs);
    v.c.message = aitk_str_cstr(&v.msg);
    v.c.remedy = aitk_str_cstr(&v.fix);
    st = aitk_checklist_add(&ctx->checks, &v.c);
done:
    aitk_str_free(&v.obs);
    aitk_str_free(&v.msg);
    aitk_str_free(&v.fix);
    aitk_str_free(&path);
    aitk_str_free(&out);
    aitk_str_free(&errout);
    aitk_str_free(&err);
    return st;
}
