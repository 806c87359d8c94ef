/* The backend-neutral operation table of one LoRA training step.
 *
 * A training step (models/) is written once against `aitk_ops`; the CPU
 * reference (kernels/cpu, fp32 + OpenBLAS) and the CUDA plugin fill the same
 * table, so the graph never knows which backend runs it. Pointers in the
 * calls are backend memory (host memory on the CPU, device memory on a GPU);
 * only `alloc`, `upload` and `download` cross that line. No CUDA type appears
 * here: the validator includes this header on machines without CUDA.
 *
 * Conventions (llm.c habits):
 * - Tensors are dense and row-major; shapes are in the comment beside each
 *   call, outputs first. N = B*T rows for token-wise ops.
 * - `_forward` and `_backward` sit side by side. A backward call ACCUMULATES
 *   into parameter gradients (+=: gradients of LoRA weights and of any other
 *   trainable tensor, so micro-batches and several uses add up) and WRITES
 *   activation gradients (=), except where a comment says otherwise (the
 *   residual stream, and lora_linear's opt-in accumulate_dx).
 * - Every call returns aitk_status: AITK_E_INVAL for a NULL tensor or an
 *   impossible shape, so a graph bug is reported instead of corrupting memory
 *   (a GPU backend also reports launch failures this way).
 * - Compute is fp32. Where the GPU path stores bf16, the graph emulates that
 *   storage on the CPU with bf16_round (round-to-nearest-even and back). */
#ifndef AITK_KERNELS_OPS_H
#define AITK_KERNELS_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"

/* ---- allocation with accounting ------------------------------------------
 * Every buffer of a step is allocated through the table with a purpose tag,
 * so the measured peak can be compared with the cost model's memory plan
 * (weights, adapters' gradients, optimizer state, saved activations,
 * workspace) tag by tag. */
typedef enum aitk_mem_tag {
    AITK_MEM_WEIGHTS,      /* frozen base weights and LoRA weights */
    AITK_MEM_ACTIVATIONS,  /* saved for backward (checkpointed block inputs, ...) */
    AITK_MEM_GRADIENTS,    /* LoRA parameter gradients and activation gradients */
    AITK_MEM_OPTIMIZER,    /* AdamW moments (fp32 or 8-bit + scales) */
    AITK_MEM_WORKSPACE,    /* scratch that lives within one op or one block */
    AITK_MEM_TAG_COUNT
} aitk_mem_tag;

typedef struct aitk_mem_account {
    size_t current[AITK_MEM_TAG_COUNT]; /* bytes live now, per tag */
    size_t peak[AITK_MEM_TAG_COUNT];    /* highest `current` seen, per tag */
    size_t current_total;               /* bytes live now, all tags */
    size_t peak_total;                  /* highest current_total (not the sum of per-tag peaks) */
    size_t limit;     /* 0: none; else an allocation past it fails with AITK_E_NOMEM,
                         so a "does it fit in 24 GB" run can be simulated anywhere */
    FILE *log;        /* NULL: silent; else one "allocating N MiB for ..." line per buffer */
} aitk_mem_account;

/* One allocated buffer. `ptr` is backend memory; bytes and tag travel with it
 * so freeing can undo the accounting. A zeroed aitk_buf is "nothing". */
typedef struct aitk_buf {
    void *ptr;
    size_t bytes;
    aitk_mem_tag tag;
} aitk_buf;

/* Bookkeeping shared by all backends (implemented in kernels/cpu/mem.c; a
 * backend's alloc calls note_alloc before it allocates, note_free after it
 * frees). note_alloc fails with AITK_E_NOMEM past acct->limit and with
 * AITK_E_RANGE on a size_t overflow, and changes nothing when it fails. */
aitk_status aitk_mem_note_alloc(aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag,
                                const char *what);
void aitk_mem_note_free(aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag);
/* "weights", "activations", ...; "unknown" for an out-of-range tag. */
const char *aitk_mem_tag_name(aitk_mem_tag tag);

/* ---- AdamW ----------------------------------------------------------------
 * PyTorch's torch.optim.AdamW (decoupled weight decay), `step` counted from 1:
 *   p -= lr*wd*p; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2;
 *   p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 *
 * 8-bit AdamW keeps each moment in blocks of AITK_ADAMW8_BLOCK elements: one
 * byte per element plus one fp32 scale per block. Scheme (chosen here, in the
 * spirit of bitsandbytes' block-wise dynamic quantization, not its code):
 * - m: code = e4m3(m / s_m), s_m = absmax(m over the block) / 448;
 * - v: code = e4m3(sqrt(v) / s_v), s_v = absmax(sqrt(v)) / 448.
 * Why: a block's moments span several decades; a linear int8 code would
 * flush small entries to zero, and a zero second moment turns m/(sqrt(v)+eps)
 * into a huge step. e4m3 is a floating code with 3 significant bits over
 * 2^-9..448 (~5.4 decades) and round-to-nearest-even; storing sqrt(v) halves
 * v's exponent range, so the code covers ~11 decades of v. The block absmax
 * keeps one outlier from costing precision everywhere else. The update
 * itself is computed in fp32 from the dequantized state and the fresh
 * gradient, and only the stored state is quantized, as bitsandbytes does.
 * 256 keeps the scale overhead at 1.6% and one block in L1. A zeroed state
 * (codes and scales 0) is the correct initial state. */
#define AITK_ADAMW8_BLOCK 256

typedef struct aitk_adamw_hparams {
    float lr, beta1, beta2, eps, weight_decay;
} aitk_adamw_hparams;

/* Number of fp32 scales one 8-bit moment of n elements needs. */
static inline size_t aitk_adamw8_blocks(size_t n)
{
    return (n + AITK_ADAMW8_BLOCK - 1) / AITK_ADAMW8_BLOCK;
}

/* fp8 e4m3fn (OCP 8-bit floating point, "E4M3"): bias 7, max 448, no
 * infinities, NaN = S.1111.111. Saturating conversion clamps to +-448 (and
 * turns +-inf into +-448), as quantizers do; non-saturating gives NaN. */
#define AITK_FP8_E4M3_MAX 448.0f

/* The table. Every member is required; aitk_ops_check() says which is missing. */
typedef struct aitk_ops {
    const char *name; /* "cpu", "cuda" */

    /* memory: zeroed on allocation; bytes == 0 gives {NULL, 0, tag} and AITK_OK */
    aitk_status (*alloc)(aitk_mem_account *acct, aitk_buf *out, size_t bytes,
                         aitk_mem_tag tag, const char *what);
    void (*free)(aitk_mem_account *acct, aitk_buf *buf); /* resets *buf; {NULL} is fine */
    aitk_status (*upload)(void *dst, const void *host_src, size_t bytes);
    aitk_status (*download)(void *host_dst, const void *src, size_t bytes);

    /* C (batch,M,N) = alpha * op(A) op(B) + beta * C; op(A) (M,K) is stored
     * (M,K), or (K,M) when trans_a; op(B) (K,N) is stored (K,N), or (N,K) when
     * trans_b. Batches are stride_* elements apart (0 broadcasts one matrix). */
    aitk_status (*gemm)(float *c, const float *a, const float *b, int m, int n, int k,
                        bool trans_a, bool trans_b, float alpha, float beta, int batch,
                        long long stride_a, long long stride_b, long long stride_c);

    /* LoRA-augmented linear, y = x W^T + bias + scale * (x A^T) B^T, scale = alpha/r.
     * y (N,out), xa (N,r) saved for backward, x (N,in), w (out,in) frozen,
     * bias (out) frozen or NULL, la (r,in) and lb (out,r) the adapter, or
     * r == 0 with la/lb/xa NULL for a plain frozen linear. */
    aitk_status (*lora_linear_forward)(float *y, float *xa, const float *x, const float *w,
                                       const float *bias, const float *la, const float *lb,
                                       int n, int in, int out, int r, float scale);
    /* dx (N,in) = dy W + scale (dy B) A, written, or added when accumulate_dx
     * (an input feeding several linears: q, k, v); dx NULL skips it.
     * dla (r,in) += scale (dy B)^T x; dlb (out,r) += scale dy^T xa.
     * work (N,r) scratch. No gradient for w or bias: they are frozen. */
    aitk_status (*lora_linear_backward)(float *dx, float *dla, float *dlb, float *work,
                                        const float *dy, const float *x, const float *xa,
                                        const float *w, const float *la, const float *lb,
                                        int n, int in, int out, int r, float scale,
                                        bool accumulate_dx);

    /* LayerNorm without affine (FLUX's norm1/norm2, elementwise_affine=False).
     * out (N,C), mean (N), rstd (N) saved for backward, inp (N,C). */
    aitk_status (*layernorm_forward)(float *out, float *mean, float *rstd, const float *inp,
                                     int n, int c, float eps);
    /* dinp (N,C) written; dout (N,C), inp (N,C), mean (N), rstd (N). */
    aitk_status (*layernorm_backward)(float *dinp, const float *dout, const float *inp,
                                      const float *mean, const float *rstd, int n, int c);

    /* RMSNorm with weight: out = inp * rstd * weight, rstd = 1/sqrt(mean(inp^2)+eps).
     * out (N,C), rstd (N) saved, inp (N,C), weight (C). Per-head q/k norms are
     * N = B*T*H rows of C = head_dim. */
    aitk_status (*rmsnorm_forward)(float *out, float *rstd, const float *inp,
                                   const float *weight, int n, int c, float eps);
    /* dinp (N,C) written; dweight (C) += (NULL: weight frozen, the usual case). */
    aitk_status (*rmsnorm_backward)(float *dinp, float *dweight, const float *dout,
                                    const float *inp, const float *weight, const float *rstd,
                                    int n, int c);

    /* adaLN modulation, out = x * (1 + scale) + shift, per sample.
     * out (B,T,C), x (B,T,C); shift and scale rows of C, `ld_mod` elements
     * apart from one sample to the next, so they can be chunks of the
     * modulation linear's output (B, 6C) without a copy. */
    aitk_status (*modulate_forward)(float *out, const float *x, const float *shift,
                                    const float *scale, int b, int t, int c, int ld_mod);
    /* dx (B,T,C) written; dshift, dscale (rows of C, ld_mod apart) written:
     * they are activations (outputs of a linear), not parameters. */
    aitk_status (*modulate_backward)(float *dx, float *dshift, float *dscale, const float *dout,
                                     const float *x, const float *scale, int b, int t, int c,
                                     int ld_mod);

    /* Gated residual, in place on the residual stream: resid += gate * x.
     * resid (B,T,C), x (B,T,C), gate rows of C, ld_mod apart (as modulate). */
    aitk_status (*gated_residual_forward)(float *resid, const float *x, const float *gate,
                                          int b, int t, int c, int ld_mod);
    /* dx (B,T,C) = dresid * gate, written; dgate (rows of C) written. The
     * residual stream's gradient dresid passes through unchanged. */
    aitk_status (*gated_residual_backward)(float *dx, float *dgate, const float *dresid,
                                           const float *x, const float *gate, int b, int t,
                                           int c, int ld_mod);

    /* 3-axis RoPE. Table: cos, sin (T, D/2) from pos (T,3) (FLUX ids; the
     * same positions for every sample); pair p of head_dim D belongs to axis a
     * when it falls in that axis' axes[a]/2 pairs, with frequency
     * theta^(-2j/axes[a]) for its index j within the axis. sum(axes) == D,
     * every axes[a] even: FLUX (16,56,56) on 128, OmniGen2 (40,40,40) on 120.
     * Pairs are adjacent elements (2p, 2p+1), as diffusers' apply_rotary_emb
     * with use_real_unbind_dim=-1 and OmniGen2's complex view use. */
    aitk_status (*rope_table)(float *cos_t, float *sin_t, const float *pos, int t, int d,
                              const int axes[3], float theta);
    /* out (B,T,H,D), inp (B,T,H,D), may alias (in place). */
    aitk_status (*rope_forward)(float *out, const float *inp, const float *cos_t,
                                const float *sin_t, int b, int t, int h, int d);
    /* dinp (B,T,H,D) written (the inverse rotation), may alias dout. */
    aitk_status (*rope_backward)(float *dinp, const float *dout, const float *cos_t,
                                 const float *sin_t, int b, int t, int h, int d);

    /* Pointwise activations, n elements: out = f(inp); dinp = dout * f'(inp), written.
     * GELU is the tanh approximation (FLUX's MLP). */
    aitk_status (*gelu_forward)(float *out, const float *inp, size_t n);
    aitk_status (*gelu_backward)(float *dinp, const float *dout, const float *inp, size_t n);
    aitk_status (*silu_forward)(float *out, const float *inp, size_t n);
    aitk_status (*silu_backward)(float *dinp, const float *dout, const float *inp, size_t n);
    /* SwiGLU (OmniGen2's FFN, w2(silu(w1 x) * w3 x)): out = silu(a) * u.
     * out, a, u (n); da, du (n) written. */
    aitk_status (*swiglu_forward)(float *out, const float *a, const float *u, size_t n);
    aitk_status (*swiglu_backward)(float *da, float *du, const float *dout, const float *a,
                                   const float *u, size_t n);

    /* Attention without mask: joint attention over the concatenated [txt; img]
     * tokens, GQA when hkv < hq (q head h reads kv head h / (hq/hkv)).
     * out (B,T,Hq,D), lse (B,Hq,T) the row log-sum-exp saved for backward,
     * q (B,T,Hq,D), k, v (B,T,Hkv,D); softmax(scale * q k^T) v. */
    aitk_status (*attention_forward)(float *out, float *lse, const float *q, const float *k,
                                     const float *v, int b, int t, int hq, int hkv, int d,
                                     float scale);
    /* dq (B,T,Hq,D), dk, dv (B,T,Hkv,D) written; probabilities are recomputed
     * from lse, so nothing of size T^2 is ever stored. Both directions may
     * take a transient strip of at most 2 x 64 x T floats (2 MiB at T = 4096,
     * outside the accounting) and fail with AITK_E_NOMEM when they cannot. */
    aitk_status (*attention_backward)(float *dq, float *dk, float *dv, const float *dout,
                                      const float *q, const float *k, const float *v,
                                      const float *out, const float *lse, int b, int t,
                                      int hq, int hkv, int d, float scale);

    /* MSE loss, loss (1) = mean((pred - target)^2) over n, summed in double. */
    aitk_status (*mse_forward)(float *loss, const float *pred, const float *target, size_t n);
    /* dpred (n) = dloss * 2 (pred - target) / n, written. */
    aitk_status (*mse_backward)(float *dpred, float dloss, const float *pred,
                                const float *target, size_t n);

    /* Optimizer steps, in place; grad is read only (the graph zeroes it). */
    aitk_status (*adamw_update)(float *param, float *m, float *v, const float *grad, size_t n,
                                const aitk_adamw_hparams *hp, long step);
    /* m_q, v_q (n) codes; m_scale, v_scale (aitk_adamw8_blocks(n)). */
    aitk_status (*adamw8_update)(float *param, uint8_t *m_q, uint8_t *v_q, float *m_scale,
                                 float *v_scale, const float *grad, size_t n,
                                 const aitk_adamw_hparams *hp, long step);

    /* Weight storage formats. fp8: out (n) = decode(q) * scale (ai-toolkit's
     * qfloat8 path: one scale per tensor); quantize: q = e4m3(inp / scale),
     * saturating. bf16: pack/unpack (round to nearest even), and round, the
     * in-place round trip that emulates bf16 storage in fp32 buffers. */
    aitk_status (*fp8_dequantize)(float *out, const uint8_t *q, float scale, size_t n);
    aitk_status (*fp8_quantize)(uint8_t *q, const float *inp, float scale, size_t n);
    aitk_status (*bf16_pack)(uint16_t *out, const float *inp, size_t n);
    aitk_status (*bf16_unpack)(float *out, const uint16_t *inp, size_t n);
    aitk_status (*bf16_round)(float *x, size_t n);

    /* 2-D strided copy for concatenating/splitting along features or tokens:
     * dst rows of `cols` elements, ld_dst apart; src likewise. */
    aitk_status (*copy2d)(float *dst, int ld_dst, const float *src, int ld_src, int rows,
                          int cols);
    /* y += alpha * x, n elements (residual adds, summing gradient branches). */
    aitk_status (*axpy)(float *y, float alpha, const float *x, size_t n);
    /* bytes of backend memory set to 0 (gradients before a step). */
    aitk_status (*zero)(void *dst, size_t bytes);
} aitk_ops;

/* The CPU reference backend (kernels/cpu): fp32, OpenBLAS GEMM, OpenMP. */
const aitk_ops *aitk_ops_cpu(void);

/* AITK_OK when every member of the table is set; else AITK_E_INTERNAL, with
 * the first missing member's name in *missing (static text), so a plugin
 * that forgot one is reported, not crashed on. */
aitk_status aitk_ops_check(const aitk_ops *ops, const char **missing);

#endif
