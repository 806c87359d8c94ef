/* The deep Python check (standard and full levels): runs the environment's
 * interpreter with a time limit to import torch and ask CUDA what it sees. */
#ifndef AITK_VALIDATE_PROBES_PYDEEP_H
#define AITK_VALIDATE_PROBES_PYDEEP_H

#include "common/str.h"
#include "validate/engine.h"

/* Scripts run in the environment's interpreter print their answer as one
 * JSON object on a line that starts with this mark, so that whatever else
 * torch or a site hook prints cannot be mistaken for it. */
#define AITK_PY_ANSWER_MARK "AITK-JSON:"

/* The object on the first marked line of `out`, or NULL when there is none
 * or it is unreadable (an unreadable answer is no answer). */
cJSON *aitk_py_answer(const aitk_str *out);

/* Appends the last line of `text` that is not empty to `out`: the line an
 * interpreter that died last wrote (its exception, a loader's words). */
void aitk_py_last_line(const char *text, aitk_str *out);

/* Adds "deep" to `pyenv` (the selected environment's record) and the
 * python.import_torch check. `modules` (NULL-terminated, may be NULL) are
 * imported after torch in the same process, as ai-toolkit imports them:
 * "module" or "module:Name,Name" (then `from module import Name, Name`,
 * which loads a lazily loaded class, as ai-toolkit's own statement does);
 * deep.imports maps each module to "ok" or the exception's text on one
 * line. */
aitk_status aitk_pydeep_check(aitk_run_ctx *ctx, cJSON *pyenv, const char *const *modules);

#endif
