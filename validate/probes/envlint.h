/* Environment-variable lint: variables that silently slow, break or do
 * nothing for CUDA training. Reports name only variables from an allow-list
 * and show values only for the allow-listed, non-secret ones. */
#ifndef AITK_VALIDATE_PROBES_ENVLINT_H
#define AITK_VALIDATE_PROBES_ENVLINT_H

#include "validate/engine.h"

/* Records "environment_variables" in ctx->env and adds env.* checks. Runs
 * after the gpu provider (CUDA_VISIBLE_DEVICES is judged against the GPU count). */
aitk_status aitk_envlint_checks(aitk_run_ctx *ctx);

/* Checks PYTORCH_CUDA_ALLOC_CONF text; AITK_OK or AITK_E_PARSE with the reason. */
aitk_status aitk_envlint_alloc_conf(const char *text, aitk_str *why);

#endif
