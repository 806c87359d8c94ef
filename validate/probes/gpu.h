/* GPU driver probe: are NVML and the CUDA driver API loadable at all. */
#ifndef AITK_VALIDATE_PROBES_GPU_H
#define AITK_VALIDATE_PROBES_GPU_H

#include "validate/engine.h"

/* Adds gpu.nvml and gpu.cuda_driver; records "gpu" in ctx->env. */
aitk_status aitk_gpu_checks(aitk_run_ctx *ctx);

#endif
