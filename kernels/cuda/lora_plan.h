/* The GEMMs of the LoRA linear layer as a list of steps, in plain C so the
 * tests can run the very list the CUDA backend runs (through aitk_cpu_gemm)
 * and compare it with the CPU reference's lora_linear_forward/backward.
 *
 * Forward (ops.h): y = x W^T + bias; xa = x A^T; y += scale xa B^T.
 * Backward: work = dy B; dB += scale dy^T xa; dA += scale work^T x (fp32,
 * beta 1); dx = dy W (+ dx when accumulating); dx += scale work A. */
#ifndef AITK_KERNELS_CUDA_LORA_PLAN_H
#define AITK_KERNELS_CUDA_LORA_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aitk_lora_tensor {
    AITK_LORA_X, AITK_LORA_W, AITK_LORA_A, AITK_LORA_B, AITK_LORA_XA, AITK_LORA_Y,
    AITK_LORA_DY, AITK_LORA_DX, AITK_LORA_WORK, AITK_LORA_DA, AITK_LORA_DB,
    AITK_LORA_TENSORS
} aitk_lora_tensor;

/* c = alpha op(a) op(b) + beta c (+ bias on c's columns), ops.h's gemm terms. */
typedef struct aitk_lora_step {
    aitk_lora_tensor c, a, b;
    int m, n, k;
    bool trans_a, trans_b;
    float alpha, beta;
    bool c_f32; /* fp32 C/D: the LoRA gradients */
    bool bias;  /* bias epilogue (the base GEMM of the forward) */
} aitk_lora_step;

enum { AITK_LORA_MAX_STEPS = 5 };

/* Steps of the forward; returns how many (1 for r == 0, else 3). */
int aitk_lora_forward_plan(aitk_lora_step *steps, int n, int in, int out, int r, float scale,
                           bool bias);
/* Steps of the backward; returns how many (0..5). */
int aitk_lora_backward_plan(aitk_lora_step *steps, int n, int in, int out, int r, float scale,
                            bool want_dx, bool accumulate_dx);

/* The bf16 copies of A (r,in) and B (out,r) share one buffer, B starting
 * at the first multiple of AITK_LORA_ALIGN_ELEMS elements after A. 128 bf16
 * elements are 256 bytes: cuBLASLt's heuristic assumes 256-byte aligned
 * operands unless told otherwise (NVIDIA cuBLAS documentation,
 * cublasLtMatmulPreferenceAttributes_t, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*
 * "default: 256"), and gemm.c tells it the operands' real alignment, so a B
 * placed right after an A of, say, r*in = 4*120 elements (64-byte aligned)
 * would restrict every GEMM that reads it to the slower kernels. */
#define AITK_LORA_ALIGN_ELEMS 128

/* Element offset of B in the buffer. */
size_t aitk_lora_b_offset(int in, int r);
/* Elements the buffer needs for both copies. */
size_t aitk_lora_bf16_elems(int in, int out, int r);

#ifdef __cplusplus
}
#endif

#endif
