/* Rules that need more than one probe's facts: the driver against torch's
 * CUDA, and each GPU's architecture against the kernels in torch's wheel. */
#ifndef AITK_VALIDATE_PROBES_RULES_H
#define AITK_VALIDATE_PROBES_RULES_H

#include "validate/engine.h"

/* Reads ctx->env "gpu" and "python"; adds gpu.driver_for_torch and
 * gpu.arch_for_torch. Registered after the gpu and python providers. */
aitk_status aitk_rules_checks(aitk_run_ctx *ctx);

/* Whether architecture list `list` ("50 60 ... 120 +PTX" or "sm_50 sm_90
 * compute_90") runs on a GPU of compute capability `sm` (89 for 8.9):
 * 2 native kernels (same major, minor <= the GPU's), 1 only through PTX JIT,
 * 0 no kernel image. */
int aitk_rules_arch_supports(const char *list, int sm);

#endif
