/* The gpu.plugin check: does the CUDA plugin (kernels/cuda) load, and does
 * the CUDA runtime it links find a GPU? Runs at --standard and --full only:
 * --quick loads no CUDA library. Records "cuda_plugin" in ctx->env. */
#ifndef AITK_VALIDATE_PROBES_GPU_PLUGIN_H
#define AITK_VALIDATE_PROBES_GPU_PLUGIN_H

#include "validate/engine.h"

aitk_status aitk_gpu_plugin_checks(aitk_run_ctx *ctx);

#endif
