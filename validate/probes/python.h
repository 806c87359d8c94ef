/* Python probe: the environment ai-toolkit would run in, read statically at
 * every level (pyvenv.cfg, dist-info, torch/version.py), plus at standard and
 * full levels a deep check that imports torch in that interpreter. */
#ifndef AITK_VALIDATE_PROBES_PYTHON_H
#define AITK_VALIDATE_PROBES_PYTHON_H

#include "validate/engine.h"

/* Records "python" {environments[], selected} in ctx->env; adds python.*. */
aitk_status aitk_python_checks(aitk_run_ctx *ctx);

/* The environment the checks judge (first found), or NULL. */
const cJSON *aitk_python_selected(const cJSON *env);

#endif
