/* Loading bitsandbytes' CUDA library beside torch (bnb_load.h). The script
 * answers on one marked JSON line (pydeep.h). */
#include "validate/probes/bnb_load.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/proc.h"
#include "common/stop.h"
#include "reports/fields.h"
#include "validate/probes/pydeep.h"

/* Importing torch takes seconds, more on a busy machine or a network file
 * system; python.import_torch allows the same. */
#define LOAD_TIMEOUT_MS 120000

/* Printed once torch has imported: a process that dies after it died
 * loading the library (a constructor that crashes), which would end
 * training as surely. */
#define TORCH_MARK "AITK-TORCH-IMPORTED"

static const char script[] =
    "import ctypes, json, sys\n"
    "r = {}\n"
    "try:\n"
    "    import torch\n"
    "except BaseException as e:\n"
    "    r['torch_error'] = '%s: %s' % (type(e).__name__, e)\n"
    "else:\n"
    "    print('" TORCH_MARK "', flush=True)\n"
    "    try:\n"
    "        ctypes.cdll.LoadLibrary(sys.argv[1])\n"
    "        r['loaded'] = True\n"
    "    except OSError as e:\n"
    "        r['error'] = str(e)\n"
    "print('" AITK_PY_ANSWER_MARK "' + json.dumps(r))\n";

/* `text` on one line: a loader's message may hold line breaks. */
static void one_line(aitk_str *out, const char *text)
{
    for (const char *p = text; *p; p++)
        aitk_str_appendn(out, *p == '\n' || *p == '\r' || *p == '\t' ? " " : p, 1);
}

aitk_status aitk_bnb_load_beside_torch(const char *interpreter, const char *library,
                                       aitk_bnb_load *result, aitk_str *words)
{
    const char *argv[] = {interpreter, "-c", script, library, NULL};
    /* A helper a .pth file starts must not hold the answer back. */
    const aitk_proc_opts opts = {.timeout_ms = LOAD_TIMEOUT_MS, .max_output = 1 << 20,
                                 .end_with_child = true};
    aitk_proc_result res = {0};
    aitk_str out = AITK_STR_INIT, errout = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_status st = aitk_proc_run(argv, &opts, &res, &out, &errout, &err);
    cJSON *r = st ? NULL : aitk_py_answer(&out);
    *result = AITK_BNB_LOAD_UNKNOWN;
    if (st == AITK_E_NOMEM) {
        /* nothing more to say */
    } else if (st == AITK_E_TIMEOUT) {
        aitk_str_appendf(words, "the interpreter gave no answer within %d s",
                         LOAD_TIMEOUT_MS / 1000);
    } else if (st == AITK_E_INTERRUPTED) {
        aitk_str_append(words, aitk_stop_words()); /* no verdict: the run is stopping */
    } else if (st) {
        aitk_str_append(words, "the interpreter could not be started: ");
        one_line(words, aitk_str_cstr(&err));
    } else if (!r && strstr(aitk_str_cstr(&out), TORCH_MARK)) {
        *result = AITK_BNB_LOAD_REFUSED;
        aitk_str_appendf(words, "the process died loading it (%s %d)",
                         res.exited ? "exit status" : "signal",
                         res.exited ? res.exit_code : res.term_signal);
    } else if (!r) {
        aitk_str_appendf(words, "the interpreter ended (%s %d) without answering",
                         res.exited ? "status" : "signal",
                         res.exited ? res.exit_code : res.term_signal);
    } else if (*aitk_field_str(r, "torch_error")) {
        *result = AITK_BNB_LOAD_NO_TORCH;
        one_line(words, aitk_field_str(r, "torch_error"));
    } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "loaded"))) {
        *result = AITK_BNB_LOAD_OK;
    } else {
        *result = AITK_BNB_LOAD_REFUSED;
        one_line(words, aitk_field_str(r, "error"));
    }
    cJSON_Delete(r);
    aitk_str_free(&out);
    aitk_str_free(&errout);
    aitk_str_free(&err);
    if (st == AITK_E_NOMEM)
        return st;
    return aitk_str_status(words);
}
