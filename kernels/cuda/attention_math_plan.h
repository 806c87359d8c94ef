/* The layout of the math attention path's workspace (attention_math.cu),
 * plain C so the tests check it on machines without a GPU.
 *
 * The math path computes attention as PyTorch's "math" SDPA does: the
 * scores of a group of heads as one batched cuBLASLt GEMM into an fp32
 * buffer, softmax by a row kernel, then GEMMs again. It exists because the
 * plain kernel runs on CUDA cores: on an H200 with cuDNN 9.14 (the one
 * PyTorch 2.11 ships), whose SDPA backward node is not there yet, the plain
 * backward took most of an 8.5 s FLUX step. Tensor-core GEMMs bring that
 * down to a few percent of the step, at the price of the score matrices of
 * a few heads at a time (`budget` bytes) on top of what flash-style kernels
 * keep.
 *
 * Every tensor is moved to head-major order [b * hq][tp][d] first, with the
 * kv heads repeated for grouped-query attention and the sequence padded
 * with zero rows to tp, a multiple of 8, so every GEMM operand is 16-byte
 * aligned; padded keys get probability 0 and padded queries are never
 * written back. */
#ifndef AITK_KERNELS_CUDA_ATTENTION_MATH_PLAN_H
#define AITK_KERNELS_CUDA_ATTENTION_MATH_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of score matrices (fp32 S plus bf16 P) one group of heads may use. */
#define AITK_ATTN_MATH_BUDGET ((size_t)256 << 20)

/* Byte offsets into one workspace allocation, each 256-byte aligned. */
typedef struct aitk_attn_math_plan {
    int tp;            /* t rounded up to a multiple of 8 */
    int heads;         /* b * hq: the batch of every GEMM is a run of these */
    int group;         /* heads per GEMM batch (the score budget's share) */
    size_t head_elems; /* tp * d: one head of q, k, v, out or a gradient */
    size_t q, k, v, o, dout, dq, dk, dv; /* head-major bf16 tensors */
    size_t s;          /* fp32 scores or dP of `group` heads, tp x tp each */
    size_t p;          /* bf16 probabilities or dS of `group` heads */
    size_t total;      /* bytes of the whole workspace */
} aitk_attn_math_plan;

/* NULL and the plan filled when the math path can take the shape; else why
 * not (static text). backward: room for the gradients too. */
const char *aitk_attn_math_plan_make(aitk_attn_math_plan *plan, int b, int t, int hq, int hkv,
                                     int d, bool backward, size_t budget);

#ifdef __cplusplus
}
#endif

#endif
