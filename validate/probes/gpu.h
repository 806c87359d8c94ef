/* GPU probe: the NVIDIA driver through NVML and the CUDA driver API (both
 * loaded at run time, never linked), each GPU's facts, and the rules that
 * need only the GPU (MIG, display, memory health, VRAM per workload).
 * Rules that also need torch live in rules.c. */
#ifndef AITK_VALIDATE_PROBES_GPU_H
#define AITK_VALIDATE_PROBES_GPU_H

#include "validate/engine.h"

/* Records "gpu" {nvml, cuda_driver} in ctx->env and adds the gpu.* checks. */
aitk_status aitk_gpu_checks(aitk_run_ctx *ctx);

#endif
