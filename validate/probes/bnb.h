/* bitsandbytes probe: ai-toolkit's 8-bit optimizers (adamw8bit, the one its
 * example configs use) run in bitsandbytes' native CUDA library, which
 * bitsandbytes picks by the CUDA version torch is built with. A
 * bitsandbytes with no build for that CUDA imports without an error and
 * fails at the first training step: python.bitsandbytes finds that ahead,
 * by bitsandbytes' own rule for its version (bnb.yaml), from the files of
 * the selected environment; beyond --quick the environment's interpreter
 * also loads that file after import torch (bnb_load.h). */
#ifndef AITK_VALIDATE_PROBES_BNB_H
#define AITK_VALIDATE_PROBES_BNB_H

#include <stdbool.h>

#include "common/str.h"
#include "validate/engine.h"

/* What bitsandbytes does for one torch. */
typedef enum aitk_bnb_choice {
    AITK_BNB_NOT_JUDGED = -1, /* before 0.43.1: it finds a CUDA runtime on its own */
    AITK_BNB_ABSENT = 0,      /* the build it would load is not in its folder */
    AITK_BNB_FOUND = 1,       /* it loads that build */
    AITK_BNB_BAD_OVERRIDE = 2 /* from 0.50.0: BNB_CUDA_VERSION is not digits: it loads no CUDA
                                 library (the error is logged; the import goes on) */
} aitk_bnb_choice;

/* The library bitsandbytes `version` loads for torch's CUDA `torch_cuda`
 * ("12.9") among the `count` entries `names` of its folder, honouring the
 * BNB_CUDA_VERSION value `override` (NULL when unset), by the rules that
 * start at `since_exact` and `since_nearest` (bnb.yaml). `out` gets the
 * file name it loads, or would load when absent; `nearest` is set when the
 * build is another minor of torch's major. Exposed for tests. */
aitk_bnb_choice aitk_bnb_pick(const char *version, const char *torch_cuda, const char *override,
                              char *const *names, size_t count, const char *since_exact,
                              const char *since_nearest, aitk_str *out, bool *nearest);

/* Adds python.bitsandbytes, judged on the environment the python provider
 * selected (it runs after it). */
aitk_status aitk_bnb_checks(aitk_run_ctx *ctx);

#endif
