/* The deep Python check (standard and full levels): runs the environment's
 * interpreter with a time limit to import torch and ask CUDA what it sees. */
#ifndef AITK_VALIDATE_PROBES_PYDEEP_H
#define AITK_VALIDATE_PROBES_PYDEEP_H

#include "validate/engine.h"

/* Adds "deep" to `pyenv` (the selected environment's record) and the
 * python.import_torch check. `modules` (NULL-terminated, may be NULL) are
 * imported after torch in the same process, as ai-toolkit imports them;
 * deep.imports maps each to "ok" or the exception's text. */
aitk_status aitk_pydeep_check(aitk_run_ctx *ctx, cJSON *pyenv, const char *const *modules);

#endif
