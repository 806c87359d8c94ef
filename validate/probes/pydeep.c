/* Importing torch for real. The script prints one marked JSON line so that
 * whatever else torch or site hooks print cannot be mistaken for the answer;
 * a failed import is reported with the exception's own text, which is what a
 * user would search for. Warnings are captured too: the "sm_120 is not
 * compatible with the current PyTorch installation" text is only a warning. */
#include "validate/probes/pydeep.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/proc.h"
#include "common/stop.h"
#include "common/str.h"
#include "reports/fields.h"
#include "validate/probes/gpu_util.h"

#define DEEP_TIMEOUT_MS 120000
#define MARK AITK_PY_ANSWER_MARK

static const char script[] =
    "import json, sys, warnings\n"
    "r = {'python': sys.version.split()[0], 'executable': sys.executable}\n"
    "try:\n"
    "    with warnings.catch_warnings(record=True) as w:\n"
    "        warnings.simplefilter('always')\n"
    "        import torch\n"
    "        r['torch'] = torch.__version__\n"
    "        r['torch_file'] = torch.__file__\n"
    "        r['cuda_build'] = torch.version.cuda\n"
    "        r['cuda_available'] = torch.cuda.is_available()\n"
    "        r['arch_list'] = torch.cuda.get_arch_list()\n"
    "        r['device_count'] = torch.cuda.device_count()\n"
    "        r['devices'] = [{'name': torch.cuda.get_device_name(i),\n"
    "                         'capability': '%d.%d' % torch.cuda.get_device_capability(i)}\n"
    "                        for i in range(r['device_count'])] if r['cuda_available'] else []\n"
    "        try:\n"
    "            r['cudnn'] = torch.backends.cudnn.version()\n"
    "        except Exception as e:\n"
    "            r['cudnn_error'] = '%s: %s' % (type(e).__name__, e)\n"
    "    r['warnings'] = [str(x.message) for x in w]\n"
    "except BaseException as e:\n"
    "    r['error'] = '%s: %s' % (type(e).__name__, e)\n"
    "import importlib\n"
    "r['imports'] = {}\n"
    "for spec in sys.argv[1:]:\n"
    "    m, _, names = spec.partition(':')\n"
    "    try:\n"
    "        importlib.import_module(m)\n"
    "        if names:\n"
    "            exec('from %s import %s' % (m, names.replace(',', ', ')), {})\n"
    "        r['imports'][m] = 'ok'\n"
    "    except BaseException as e:\n"
    "        r['imports'][m] = ' '.join(('%s: %s' % (type(e).__name__, e)).split())\n"
    "print('" MARK "' + json.dumps(r))\n";

void aitk_py_last_line(const char *text, aitk_str *out)
{
    const char *end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
        end--;
    const char *start = end;
    while (start > text && start[-1] != '\n')
        start--;
    aitk_str_appendn(out, start, (size_t)(end - start));
}

#define MAX_MODULES 16

cJSON *aitk_py_answer(const aitk_str *out)
{
    const char *mark = strstr(aitk_str_cstr(out), MARK);
    if (!mark)
        return NULL;
    aitk_str line = AITK_STR_INIT;
    aitk_str_appendn(&line, mark + strlen(MARK), strcspn(mark + strlen(MARK), "\r\n"));
    cJSON *answer = cJSON_Parse(aitk_str_cstr(&line));
    aitk_str_free(&line);
    if (answer && !cJSON_IsObject(answer)) {
        cJSON_Delete(answer);
        answer = NULL;
    }
    return answer;
}

/* The interpreter answered and torch imported: whether it sees the GPU. */
static void judge_import(aitk_check *c, const cJSON *deep, aitk_str *obs, aitk_str *msg)
{
    int n = (int)aitk_json_number(deep, "device_count", 0);
    const char *cuda_build = aitk_field_str(deep, "cuda_build");
    aitk_str_appendf(obs, "torch %s, CUDA build %s, cuda.is_available() %s, %d device(s)",
                     aitk_field_str(deep, "torch"), *cuda_build ? cuda_build : "none",
                     aitk_json_true(deep, "cuda_available") ? "True" : "False", n);
    if (aitk_json_number(deep, "cudnn", 0) > 0)
        aitk_str_appendf(obs, ", cuDNN %.0f", aitk_json_number(deep, "cudnn", 0));
    /* torch.backends.cudnn.version() raised: torch refuses the cuDNN it
     * loaded (a minor older than the one it was built against, or another
     * major), and its first convolution (the VAE's, caching latents) would
     * raise the same. Its first line says which versions. */
    const char *cudnn_error = aitk_field_str(deep, "cudnn_error");
    if (*cudnn_error) {
        c->status = AITK_CHECK_FAIL;
        aitk_str_append(msg, "torch imports but refuses its cuDNN: ");
        aitk_str_appendn(msg, cudnn_error, strcspn(cudnn_error, "\r\n"));
        c->message = aitk_str_cstr(msg);
        c->remedy = "Install the cuDNN wheel torch was built against (`pip show torch` lists "
                    "its nvidia-cudnn pin; pip install that exact version), and take any older "
                    "libcudnn off LD_LIBRARY_PATH.";
        return;
    }
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(deep, "warnings"), 0);
    if (aitk_json_true(deep, "cuda_available")) {
        c->status = w ? AITK_CHECK_WARN : AITK_CHECK_PASS;
        aitk_str_append(msg, w && cJSON_IsString(w) ? w->valuestring : "torch sees the GPU");
        c->remedy = w ? "Read the warning: it usually means this torch build lacks kernels for "
                        "the GPU (see gpu.arch_for_torch)." : "";
    } else {
        c->status = AITK_CHECK_FAIL;
        aitk_str_append(msg, "torch imports but cannot use CUDA");
        if (w && cJSON_IsString(w))
            aitk_str_appendf(msg, ": %s", w->valuestring);
        c->remedy = "See the gpu.* and python.torch checks: a missing driver, a driver older "
                    "than torch's CUDA, or a CPU-only torch.";
        /* No driver, or one too old for this torch's CUDA: kept only where
         * that check failed (reports/causes.h). A torch with no CUDA build
         * (CPU-only, ROCm) is python.torch's failure, with its pip line. */
        c->follows = *cuda_build ? "gpu.cuda_driver,gpu.driver_for_torch" : "python.torch";
    }
    c->message = aitk_str_cstr(msg);
}

/* What the interpreter's run comes to: hung, stopped by the run's own stop
 * request, not started, exited without answering, import failed, or the
 * import's own answer. */
static void judge_run(aitk_check *c, aitk_status st, const aitk_proc_result *res,
                      const aitk_str *out, const aitk_str *errout, const aitk_str *err,
                      const cJSON *deep, bool answered, aitk_str *obs, aitk_str *msg)
{
    if (st == AITK_E_TIMEOUT) {
        c->status = AITK_CHECK_FAIL;
        aitk_str_appendf(obs, "no answer within %d s", DEEP_TIMEOUT_MS / 1000);
        c->message = "importing torch hung: often a driver call that never returns or a network "
                     "file system";
        c->remedy = "Run `python -c 'import torch; print(torch.cuda.is_available())'` by hand; "
                    "check dmesg for GPU errors (Xid).";
    } else if (st == AITK_E_INTERRUPTED) {
        /* The person stopped the run: no verdict on the machine. */
        c->status = AITK_CHECK_SKIP;
        if (res->wall_ms > 0)
            aitk_str_appendf(obs, "%s after %.1f s, before import torch answered",
                             aitk_stop_words(), res->wall_ms / 1000);
        else
            aitk_str_appendf(obs, "not run: %s", aitk_stop_words());
        c->message = "not judged: the run was stopped before import torch answered";
        c->remedy = "Run again and let it finish: the first import torch after an install "
                    "can take minutes.";
    } else if (st) {
        c->status = AITK_CHECK_FAIL;
        aitk_str_append(obs, aitk_str_cstr(err));
        c->message = "the interpreter could not be started";
        c->remedy = "Check the path given with --python, or recreate the environment.";
    } else if (!answered) {
        c->status = AITK_CHECK_FAIL;
        aitk_py_last_line(errout->len ? aitk_str_cstr(errout) : aitk_str_cstr(out), obs);
        aitk_str_appendf(msg, "the interpreter exited with %d before answering",
                         res->exited ? res->exit_code : -res->term_signal);
        c->message = aitk_str_cstr(msg);
        c->remedy = "Run the interpreter by hand; a crash here (e.g. a segfault in a CUDA "
                    "library) is what ai-toolkit would hit too.";
    } else if (*aitk_field_str(deep, "error")) {
        c->status = AITK_CHECK_FAIL;
        aitk_str_append(obs, aitk_field_str(deep, "error"));
        c->message = "import torch fails: ai-toolkit cannot start in this environment";
        c->remedy = "Reinstall torch in this environment with the pip line from ai-toolkit's "
                    "README; if a DLL or .so is named, `aitk-validate deps` explains which "
                    "library is missing.";
        /* A native library that did not load: deps.torch walks torch/lib's
         * links and loads each library in a child, so it names the missing
         * link or the symbol (kept only if it failed). Torch's Python
         * extension (torch/_C) is not among them: its own undefined symbol
         * is not deps.torch's to explain. */
        const char *e = aitk_field_str(deep, "error");
        bool extension = strstr(e, ".cpython-") || strstr(e, "_C.so") || strstr(e, ".pyd");
        if (strstr(e, "cannot open shared object file") || strstr(e, "DLL load failed") ||
            strstr(e, "or one of its dependencies") ||
            (strstr(e, "undefined symbol") && !extension))
            c->follows = "deps.torch";
        /* Not installed at all: python.torch says so, with the pip line. */
        else if (strstr(e, "No module named 'torch'"))
            c->follows = "python.torch";
    } else {
        judge_import(c, deep, obs, msg);
    }
}

aitk_status aitk_pydeep_check(aitk_run_ctx *ctx, cJSON *pyenv, const char *const *modules)
{
    const char *interp = aitk_field_str(pyenv, "interpreter");
    aitk_check c = {.id = "python.import_torch", .category = "python", .title = "import torch",
                    .expected = "imports; torch.cuda.is_available() is True",
                    .source = "the deep check runs the interpreter: python -c 'import torch'"};
    if (!*interp && cJSON_GetObjectItemCaseSensitive(pyenv, "base_missing")) {
        /* A venv whose base Python is gone: nothing can import torch, and
         * python.env names the Python to bring back. */
        /* Made on another system, the venv is whole: recreating it in
         * place would wipe what that system trains in. */
        const bool elsewhere =
            *aitk_field_str(cJSON_GetObjectItemCaseSensitive(pyenv, "base_missing"), "made_on");
        c.status = AITK_CHECK_FAIL;
        c.observed = "the venv's python cannot start";
        c.message = elsewhere ? "import torch cannot run: this venv was made on another system "
                                "(python.env)"
                              : "import torch cannot run: the Python this venv was made from "
                                "is gone (python.env)";
        c.remedy = elsewhere ? "Judge the venv where it was made, as python.env says."
                             : "Recreate the venv or reinstall its Python, as python.env says.";
        c.follows = "python.env";
        return aitk_checklist_add(&ctx->checks, &c);
    }
    if (!*interp) {
        c.status = AITK_CHECK_SKIP;
        c.message = "no interpreter found in the environment";
        return aitk_checklist_add(&ctx->checks, &c);
    }
    const char *argv[3 + MAX_MODULES + 1] = {interp, "-c", script};
    for (size_t i = 0; modules && modules[i] && i < MAX_MODULES; i++)
        argv[3 + i] = modules[i];
    /* The answer is the interpreter's: when it has exited, a helper it left
     * behind holding the pipes (a daemon a .pth file or sitecustomize
     * starts) must not turn a finished import into "no answer within
     * 120 s", nor outlive the run. */
    aitk_proc_opts opts = {.timeout_ms = DEEP_TIMEOUT_MS, .max_output = 1 << 20,
                           .end_with_child = true};
    aitk_proc_result res;
    memset(&res, 0, sizeof res);
    aitk_str out = AITK_STR_INIT, errout = AITK_STR_INIT, err = AITK_STR_INIT,
             obs = AITK_STR_INIT, msg = AITK_STR_INIT;
    aitk_status st = aitk_proc_run(argv, &opts, &res, &out, &errout, &err);
    if (st == AITK_E_NOMEM)
        goto done;
    cJSON *deep = st ? NULL : aitk_py_answer(&out);
    const bool answered = deep != NULL;
    if (!deep && !(deep = cJSON_CreateObject())) {
        st = AITK_E_NOMEM;
        goto done;
    }
    cJSON_AddNumberToObject(deep, "wall_ms", res.wall_ms);
    cJSON_AddItemToObject(pyenv, "deep", deep);
    judge_run(&c, st, &res, &out, &errout, &err, deep, answered, &obs, &msg);
    c.observed = aitk_str_cstr(&obs);
    st = aitk_checklist_add(&ctx->checks, &c);
done:
    aitk_str_free(&out);
    aitk_str_free(&errout);
    aitk_str_free(&err);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    return st;
}
