/* One GEMM problem timed alone through a backend's ops (kernels/ops.h), at
 * exactly a shape a training step ran (bench/gemm_in_step.h reads those
 * shapes from the backend's paths), so "the step's GEMMs reach X% of their
 * isolated rate" compares like with like: the same op, the same cuBLASLt
 * plan cache, the same transposes, beta and epilogue.
 *
 * Which op runs the problem: ops.h's gemm for epilogue=none with the
 * backend's activation type as C (bf16 on the GPU); lora_linear_forward
 * with r = 0 for epilogue=bias, the one op whose GEMM carries the bias
 * epilogue (ta=0 tb=1 beta=0 batch=1 only, its one shape). An fp32 C (the
 * LoRA gradients, accumulated inside lora_linear_backward) has no op of its
 * own: AITK_E_UNSUPPORTED, and the comparison leaves that problem out and
 * says what share of the FLOPs it covers. */
#ifndef AITK_BENCH_GEMM_ISOLATED_H
#define AITK_BENCH_GEMM_ISOLATED_H

#include <stddef.h>

#include "bench/gemm_in_step.h"
#include "common/status.h"
#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aitk_gemm_isolated {
    aitk_gemm_rate rate;  /* the shape and its FLOP/s */
    long calls;           /* timed calls (after one untimed warm-up call) */
    double ms_per_call;
    int from_events;      /* 1: the backend's own op timing (paths' ms, CUDA
                           * events, as the step's figures are); 0: the host
                           * clock around back-to-back calls and one
                           * synchronize */
} aitk_gemm_isolated;

/* Times `shape` on the opened backend `be` for at least min_time_s
 * (doubling the number of back-to-back calls until one batch takes that
 * long), on buffers it allocates and frees (inputs from the backend's
 * generator, uniform and non-zero). AITK_E_UNSUPPORTED for a problem no
 * single op runs (see above), AITK_E_INVAL for bad arguments, else the
 * backend's status (its last_error has the words). */
aitk_status aitk_gemm_isolated_time(const aitk_backend *be, const aitk_gemm_shape *shape,
                                    double min_time_s, aitk_gemm_isolated *out);

#ifdef __cplusplus
}
#endif

#endif
