/* CUDA stack probe: cudart, cuBLAS, cuBLASLt, cuDNN and NCCL, found in the
 * order torch finds them (torch/lib, site-packages/nvidia/<pkg>/lib, then
 * LD_LIBRARY_PATH and the system folders), each with its path and version.
 * At --quick nothing is loaded: versions come from file names, pip
 * dist-info and the toolkit's headers; at standard and full each library is
 * loaded, in a process of its own (common/libload.h), and asked for its own
 * version. */
#ifndef AITK_VALIDATE_PROBES_CUDA_STACK_H
#define AITK_VALIDATE_PROBES_CUDA_STACK_H

#include "validate/engine.h"

/* Records "cuda_stack" in ctx->env and adds cuda.<library> checks. Runs
 * after the python provider (it reads the selected environment). */
aitk_status aitk_cuda_stack_checks(aitk_run_ctx *ctx);

/* Reads "#define NAME <integer>" from a header text; -1 when absent. */
long aitk_header_define(const char *text, const char *name);

#endif
