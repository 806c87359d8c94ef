/* The one backend contract: the operation table of a LoRA training step.
 *
 * A training step (models/) is written once against `aitk_ops`; the CPU
 * reference (kernels/cpu: fp32 + OpenBLAS) and the CUDA backend (kernels/cuda,
 * the dlopen'd plugin: bf16 + cuBLASLt + cuDNN) fill the same table, and a
 * backend is the descriptor in kernels/backend.h around it. Pointers in the
 * calls are backend memory (host memory on the CPU, device memory on a GPU);
 * only the upload and download members cross that line. No CUDA type appears
 * here: the validator includes this header on machines without CUDA.
 *
 * Data types. The GPU stores what a PyTorch bf16 training run stores, so that
 * its memory and time represent real training; the CPU reference computes in
 * fp32 and emulates bf16 storage by rounding (bf16_round). The table says
 * which storage it uses in `act_dtype`, and the pointer types say which
 * tensors follow it:
 * - aitk_act: activations, activation gradients, the frozen base weights
 *   once expanded (bf16 base), biases and norm weights: act_dtype elements
 *   (fp32 on the CPU, bf16 on the GPU). aitk_act is an incomplete type on
 *   purpose: the graph cannot do pointer arithmetic on it and must use
 *   aitk_act_at(), which knows the element size, so a graph written and tested
 *   on the CPU addresses bf16 buffers correctly on the GPU.
 * - float: LoRA weights (the fp32 master copy), their gradients, the
 *   optimizer state, and per-row statistics (mean, rstd, lse) and RoPE
 *   tables, which PyTorch keeps in fp32 as well.
 * - uint8_t: quantized base weights (fp8 e4m3, NF4) and 8-bit optimizer codes.
 * Compute is fp32 everywhere (GEMMs accumulate in fp32).
 *
 * Conventions (llm.c habits):
 * - Tensors are dense and row-major; shapes are in the comment beside each
 *   call, outputs first. N = B*T rows for token-wise ops. Sizes are elements.
 * - `_forward` and `_backward` sit side by side. A backward call ACCUMULATES
 *   into parameter gradients (+=: gradients of LoRA weights and of any other
 *   trainable tensor, so micro-batches and several uses add up) and WRITES
 *   activation gradients (=), except where a comment says otherwise (the
 *   residual stream, and lora_linear's opt-in accumulate_dx).
 * - Every call returns aitk_status: AITK_E_INVAL for a NULL tensor or an
 *   impossible shape, so a graph bug is reported instead of corrupting memory;
 *   a GPU backend also reports launch and library failures this way, with
 *   the library's own words in its descriptor's last_error.
 * - Calls are asynchronous on a GPU: they are queued in order on one stream,
 *   and the descriptor's synchronize waits for them. upload and download
 *   return when the host memory may be reused. */
#ifndef AITK_KERNELS_OPS_H
#define AITK_KERNELS_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"

/* ---- data types ---------------------------------------------------------- */
typedef enum aitk_dtype {
    AITK_DTYPE_F32,      /* IEEE binary32 */
    AITK_DTYPE_BF16,     /* bfloat16: binary32's top 16 bits, round to nearest even */
    AITK_DTYPE_FP8_E4M3, /* OCP fp8 e4m3fn, one byte (see AITK_FP8_E4M3_MAX) */
    AITK_DTYPE_NF4,      /* 4-bit NormalFloat, two per byte (see AITK_NF4_BLOCK) */
    AITK_DTYPE_COUNT
} aitk_dtype;

/* "f32", "bf16", "fp8_e4m3", "nf4"; "unknown" out of range. */
const char *aitk_dtype_name(aitk_dtype dt);
/* Bytes of n elements of dt (NF4 rounds up to whole bytes); 0 out of range. */
size_t aitk_dtype_bytes(aitk_dtype dt, size_t n);

/* Activation storage, act_dtype elements; deliberately incomplete (above). */
typedef struct aitk_act aitk_act;

/* ---- allocation with accounting ------------------------------------------
 * Every buffer of a step is allocated with a purpose tag, so the measured
 * peak can be compared with the cost model's memory plan (weights, adapters'
 * gradients, optimizer state, saved activations, workspace) tag by tag. The
 * bookkeeping is backend-neutral (kernels/mem.c): aitk_buf_alloc checks the
 * account, asks the backend's raw `alloc`, and records the buffer, so every
 * backend is counted the same way and a backend implements no accounting. */
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
    /* The allocation that failed last (AITK_E_NOMEM from the limit or from
     * the backend): what, its tag and size, so "does not fit" names it. */
    const char *failed_what;
    aitk_mem_tag failed_tag;
    size_t failed_bytes;
} aitk_mem_account;

/* One allocated buffer. `ptr` is backend memory; bytes and tag travel with it
 * so freeing can undo the accounting. A zeroed aitk_buf is "nothing". */
typedef struct aitk_buf {
    void *ptr;
    size_t bytes;
    aitk_mem_tag tag;
} aitk_buf;

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


/* NF4 (QLoRA's 4-bit NormalFloat, as bitsandbytes stores it): blocks of
 * AITK_NF4_BLOCK elements, one fp32 absmax per block, each element the index
 * of the nearest of 16 code values (the normal-quantile table in
 * bitsandbytes' csrc/kernels.cu and the QLoRA paper, arXiv 2305.14314,
 * appendix E) times the block's absmax. Element 2i is the high nibble of
 * byte i, as bitsandbytes packs it. No double quantization of the absmax:
 * it saves 0.37 bits per weight, which the memory plan counts separately. */
#define AITK_NF4_BLOCK 64

/* Number of absmax values n NF4 elements need. */
static inline size_t aitk_nf4_blocks(size_t n)
{
    return (n + AITK_NF4_BLOCK - 1) / AITK_NF4_BLOCK;
}

struct aitk_ops;
/* p advanced by `elems` activation elements of the table's act_dtype. */
aitk_act *aitk_act_at(const struct aitk_ops *ops, aitk_act *p, size_t elems);
const aitk_act *aitk_act_cat(const struct aitk_ops *ops, const aitk_act *p, size_t elems);

/* The table. Every function member is required; aitk_ops_check() says which
 * is missing. */
typedef struct aitk_ops {
    const char *name;     /* "cpu", "cuda" */
    aitk_dtype act_dtype; /* storage of aitk_act: F32 (cpu) or BF16 (cuda) */

    /* ---- memory ----
     * Raw allocation, zeroed; no accounting (aitk_buf_alloc does it).
     * AITK_E_NOMEM when the backend cannot: never a crash. */
    aitk_status (*alloc)(void **out, size_t bytes);
    void (*free)(void *ptr); /* NULL is fine */
    /* Bytes, no conversion (fp32 tensors, quantized codes). */
    aitk_status (*upload)(void *dst, const void *host_src, size_t bytes);
    aitk_status (*download)(void *host_dst, const void *src, size_t bytes);
    /* n activation elements from/to host fp32, converting (round to nearest
     * even on bf16 storage). */
    aitk_status (*upload_act)(aitk_act *dst, const float *host_src, size_t n);
    aitk_status (*download_act)(float *host_dst, const aitk_act *src, size_t n);
    /* bytes of backend memory set to 0 (gradients before a step). */
    aitk_status (*zero)(void *dst, size_t bytes);

    /* ---- initialization on the backend (nothing is downloaded) ----
     * out[j] = add + scale * u(key, first + j), u uniform in [-1, 1) from the
     * counter-based generator in kernels/math/draw.h (the same values on every
     * backend, so the CPU golden files hold for any backend), j < n. The _f32
     * form fills fp32 tensors (LoRA weights). */
    aitk_status (*draw_act)(aitk_act *out, size_t n, uint64_t key, uint64_t first, float scale,
                            float add);
    aitk_status (*draw_f32)(float *out, size_t n, uint64_t key, uint64_t first, float scale,
                            float add);
    /* *amax_host = max |x| over n elements (for a quantization scale). */
    aitk_status (*absmax)(float *amax_host, const aitk_act *x, size_t n);

    /* ---- matrix products ----
     * C (batch,M,N) = alpha * op(A) op(B) + beta * C; op(A) (M,K) is stored
     * (M,K), or (K,M) when trans_a; op(B) (K,N) is stored (K,N), or (N,K) when
     * trans_b. Batches are stride_* elements apart (0 broadcasts one matrix).
     * act storage in and out, fp32 accumulation. */
    aitk_status (*gemm)(aitk_act *c, const aitk_act *a, const aitk_act *b, int m, int n, int k,
                        bool trans_a, bool trans_b, float alpha, float beta, int batch,
                        long long stride_a, long long stride_b, long long stride_c);

    /* LoRA-augmented linear, y = x W^T + bias + scale * (x A^T) B^T, scale = alpha/r.
     * y (N,out), xa (N,r) saved for backward, x (N,in), w (out,in) frozen (a
     * bf16 base, or a quantized one expanded by fp8/nf4_dequantize), bias
     * (out) frozen or NULL, la (r,in) and lb (out,r) the fp32 adapter, or
     * r == 0 with la/lb/xa NULL for a plain frozen linear. */
    aitk_status (*lora_linear_forward)(aitk_act *y, aitk_act *xa, const aitk_act *x,
                                       const aitk_act *w, const aitk_act *bias, const float *la,
                                       const float *lb, int n, int in, int out, int r,
                                       float scale);
    /* dx (N,in) = dy W + scale (dy B) A, written, or added when accumulate_dx
     * (an input feeding several linears: q, k, v); dx NULL skips it.
     * dla (r,in) += scale (dy B)^T x; dlb (out,r) += scale dy^T xa (fp32).
     * work (N,r) scratch. No gradient for w or bias: they are frozen. */
    aitk_status (*lora_linear_backward)(aitk_act *dx, float *dla, float *dlb, aitk_act *work,
                                        const aitk_act *dy, const aitk_act *x,
                                        const aitk_act *xa, const aitk_act *w, const float *la,
                                        const float *lb, int n, int in, int out, int r,
                                        float scale, bool accumulate_dx);

    /* ---- norms ----
     * LayerNorm without affine (FLUX's norm1/norm2, elementwise_affine=False).
     * out (N,C), mean (N), rstd (N) saved for backward, inp (N,C). */
    aitk_status (*layernorm_forward)(aitk_act *out, float *mean, float *rstd,
                                     const aitk_act *inp, int n, int c, float eps);
    /* dinp (N,C) written; dout (N,C), inp (N,C), mean (N), rstd (N). */
    aitk_status (*layernorm_backward)(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp,
                                      const float *mean, const float *rstd, int n, int c);

    /* RMSNorm with weight: out = inp * rstd * weight, rstd = 1/sqrt(mean(inp^2)+eps).
     * out (N,C), rstd (N) saved, inp (N,C), weight (C). Per-head q/k norms are
     * N = B*T*H rows of C = head_dim. */
    aitk_status (*rmsnorm_forward)(aitk_act *out, float *rstd, const aitk_act *inp,
                                   const aitk_act *weight, int n, int c, float eps);
    /* dinp (N,C) written; dweight (C) += in fp32 (NULL: weight frozen, the usual case). */
    aitk_status (*rmsnorm_backward)(aitk_act *dinp, float *dweight, const aitk_act *dout,
                                    const aitk_act *inp, const aitk_act *weight,
                                    const float *rstd, int n, int c);

    /* ---- adaLN ----
     * out = x * (1 + scale) + shift, per sample.
     * out (B,T,C), x (B,T,C); shift and scale rows of C, `ld_mod` elements
     * apart from one sample to the next, so they can be chunks of the
     * modulation linear's output (B, 6C) without a copy. */
    aitk_status (*modulate_forward)(aitk_act *out, const aitk_act *x, const aitk_act *shift,
                                    const aitk_act *scale, int b, int t, int c, int ld_mod);
    /* dx (B,T,C) written; dshift, dscale (rows of C, ld_mod apart) written:
     * they are activations (outputs of a linear), not parameters. */
    aitk_status (*modulate_backward)(aitk_act *dx, aitk_act *dshift, aitk_act *dscale,
                                     const aitk_act *dout, const aitk_act *x,
                                     const aitk_act *scale, int b, int t, int c, int ld_mod);

    /* LayerNorm (no affine) and adaLN modulation in one pass, the pair that
     * opens every FLUX/Chroma block and final layer:
     *   ln = LN(inp), out = ln * (1 + scale) + shift, per sample.
     * The same values as layernorm_forward then modulate_forward, without
     * reading ln back (on the CPU, bit for bit; on a GPU the modulation uses
     * the fp32 ln before its bf16 store, so it is nearer the reference).
     * out, ln (B,T,C): ln is saved for backward (dscale needs it, and
     * PyTorch's autograd keeps the same tensor); mean, rstd (B*T) saved;
     * inp (B,T,C); shift, scale rows of C, ld_mod apart (as modulate). */
    aitk_status (*layernorm_modulate_forward)(aitk_act *out, aitk_act *ln, float *mean,
                                              float *rstd, const aitk_act *inp,
                                              const aitk_act *shift, const aitk_act *scale,
                                              int b, int t, int c, int ld_mod, float eps);
    /* dinp (B,T,C) written, may alias dout; dshift, dscale (rows of C, ld_mod
     * apart) written, as modulate_backward's. dout (B,T,C), inp and ln
     * (B,T,C) and mean, rstd (B*T) as saved by the forward, scale as given
     * to it. The gradient reaching ln, dout (1 + scale), is never stored. */
    aitk_status (*layernorm_modulate_backward)(aitk_act *dinp, aitk_act *dshift,
                                               aitk_act *dscale, const aitk_act *dout,
                                               const aitk_act *inp, const aitk_act *ln,
                                               const float *mean, const float *rstd,
                                               const aitk_act *scale, int b, int t, int c,
                                               int ld_mod);

    /* Gated residual, in place on the residual stream: resid += gate * x.
     * resid (B,T,C), x (B,T,C), gate rows of C, ld_mod apart (as modulate). */
    aitk_status (*gated_residual_forward)(aitk_act *resid, const aitk_act *x,
                                          const aitk_act *gate, int b, int t, int c, int ld_mod);
    /* dx (B,T,C) = dresid * gate, written; dgate (rows of C) written. The
     * residual stream's gradient dresid passes through unchanged. */
    aitk_status (*gated_residual_backward)(aitk_act *dx, aitk_act *dgate, const aitk_act *dresid,
                                           const aitk_act *x, const aitk_act *gate, int b, int t,
                                           int c, int ld_mod);

    /* ---- RoPE ----
     * 3-axis RoPE. Table: cos, sin (T, D/2) fp32 from pos (T,3) fp32 (FLUX
     * ids; the same positions for every sample); pair p of head_dim D belongs
     * to axis a when it falls in that axis' axes[a]/2 pairs, with frequency
     * theta^(-2j/axes[a]) for its index j within the axis. sum(axes) == D,
     * every axes[a] even: FLUX (16,56,56) on 128, OmniGen2 (40,40,40) on 120.
     * Pairs are adjacent elements (2p, 2p+1), as diffusers' apply_rotary_emb
     * with use_real_unbind_dim=-1 and OmniGen2's complex view use. */
    aitk_status (*rope_table)(float *cos_t, float *sin_t, const float *pos, int t, int d,
                              const int axes[3], float theta);
    /* out (B,T,H,D), inp (B,T,H,D), may alias (in place). */
    aitk_status (*rope_forward)(aitk_act *out, const aitk_act *inp, const float *cos_t,
                                const float *sin_t, int b, int t, int h, int d);
    /* dinp (B,T,H,D) written (the inverse rotation), may alias dout. */
    aitk_status (*rope_backward)(aitk_act *dinp, const aitk_act *dout, const float *cos_t,
                                 const float *sin_t, int b, int t, int h, int d);

    /* ---- pointwise ----
     * n elements: out = f(inp); dinp = dout * f'(inp), written.
     * GELU is the tanh approximation (FLUX's MLP). */
    aitk_status (*gelu_forward)(aitk_act *out, const aitk_act *inp, size_t n);
    aitk_status (*gelu_backward)(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp,
                                 size_t n);
    aitk_status (*silu_forward)(aitk_act *out, const aitk_act *inp, size_t n);
    aitk_status (*silu_backward)(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp,
                                 size_t n);
    /* SwiGLU (OmniGen2's FFN, w2(silu(w1 x) * w3 x)): out = silu(a) * u.
     * out, a, u (n); da, du (n) written. */
    aitk_status (*swiglu_forward)(aitk_act *out, const aitk_act *a, const aitk_act *u, size_t n);
    aitk_status (*swiglu_backward)(aitk_act *da, aitk_act *du, const aitk_act *dout,
                                   const aitk_act *a, const aitk_act *u, size_t n);

    /* ---- attention ----
     * Without mask: joint attention over the concatenated [txt; img]
     * tokens, GQA when hkv < hq (q head h reads kv head h / (hq/hkv)).
     * out (B,T,Hq,D), lse (B,Hq,T) fp32, the row log-sum-exp saved for
     * backward, q (B,T,Hq,D), k, v (B,T,Hkv,D); softmax(scale * q k^T) v. */
    aitk_status (*attention_forward)(aitk_act *out, float *lse, const aitk_act *q,
                                     const aitk_act *k, const aitk_act *v, int b, int t, int hq,
                                     int hkv, int d, float scale);
    /* dq (B,T,Hq,D), dk, dv (B,T,Hkv,D) written; probabilities are recomputed
     * from lse, so nothing of size T^2 is ever stored. A backend may take a
     * transient workspace outside the account (the CPU a strip of at most
     * 2 x 64 x T floats, 2 MiB at T = 4096; cuDNN what its plan asks, which
     * the descriptor's workspace_bytes reports) and fails with AITK_E_NOMEM
     * when it cannot. */
    aitk_status (*attention_backward)(aitk_act *dq, aitk_act *dk, aitk_act *dv,
                                      const aitk_act *dout, const aitk_act *q, const aitk_act *k,
                                      const aitk_act *v, const aitk_act *out, const float *lse,
                                      int b, int t, int hq, int hkv, int d, float scale);

    /* ---- loss ----
     * MSE, *loss_host = mean((pred - target)^2) over n, summed in double on
     * the CPU and in fp32 per block then double on a GPU; the value is
     * copied to the host (the one synchronizing op of a step). */
    aitk_status (*mse_forward)(float *loss_host, const aitk_act *pred, const aitk_act *target,
                               size_t n);
    /* dpred (n) = dloss * 2 (pred - target) / n, written. */
    aitk_status (*mse_backward)(aitk_act *dpred, float dloss, const aitk_act *pred,
                                const aitk_act *target, size_t n);

    /* ---- optimizer steps, in place on fp32 masters; grad read only ---- */
    aitk_status (*adamw_update)(float *param, float *m, float *v, const float *grad, size_t n,
                                const aitk_adamw_hparams *hp, long step);
    /* m_q, v_q (n) codes; m_scale, v_scale (aitk_adamw8_blocks(n)). */
    aitk_status (*adamw8_update)(float *param, uint8_t *m_q, uint8_t *v_q, float *m_scale,
                                 float *v_scale, const float *grad, size_t n,
                                 const aitk_adamw_hparams *hp, long step);

    /* ---- weight storage formats ----
     * fp8: out (n) = decode(q) * scale (ai-toolkit's qfloat8 path: one scale
     * per tensor); quantize: q = e4m3(inp / scale), saturating. */
    aitk_status (*fp8_dequantize)(aitk_act *out, const uint8_t *q, float scale, size_t n);
    aitk_status (*fp8_quantize)(uint8_t *q, const aitk_act *inp, float scale, size_t n);
    /* NF4: q (bytes of n/2, rounded up), absmax (aitk_nf4_blocks(n)) fp32;
     * quantize picks the nearest code (ties to the lower index). */
    aitk_status (*nf4_dequantize)(aitk_act *out, const uint8_t *q, const float *absmax,
                                  size_t n);
    aitk_status (*nf4_quantize)(uint8_t *q, float *absmax, const aitk_act *inp, size_t n);
    /* In place: x = bf16(x) on fp32 storage (the CPU's emulation of bf16
     * storage); nothing to do where act_dtype is already bf16. */
    aitk_status (*bf16_round)(aitk_act *x, size_t n);

    /* ---- copies and sums ----
     * 2-D strided copy for concatenating/splitting along features or tokens:
     * dst rows of `cols` elements, ld_dst apart; src likewise. */
    aitk_status (*copy2d)(aitk_act *dst, int ld_dst, const aitk_act *src, int ld_src, int rows,
                          int cols);
    /* y += alpha * x, n elements (residual adds, summing gradient branches). */
    aitk_status (*axpy)(aitk_act *y, float alpha, const aitk_act *x, size_t n);
} aitk_ops;

/* The CPU reference backend's table (kernels/cpu): fp32, OpenBLAS, OpenMP. */
const aitk_ops *aitk_ops_cpu(void);

/* AITK_OK when every function member of the table is set and act_dtype is
 * F32 or BF16; else AITK_E_INTERNAL, with the first missing member's name in
 * *missing (static text), so a plugin that forgot one is reported, not
 * crashed on. */
aitk_status aitk_ops_check(const aitk_ops *ops, const char **missing);

/* ---- the shared bookkeeping (kernels/mem.c) ---- */
/* Allocates `bytes` of backend memory (zeroed) for `what` and records it.
 * bytes == 0 gives {NULL, 0, tag} and AITK_OK. Fails with AITK_E_NOMEM past
 * acct->limit or when the backend cannot allocate, AITK_E_RANGE on a size_t
 * overflow, and then records what failed in acct->failed_* and changes
 * nothing else. */
aitk_status aitk_buf_alloc(const aitk_ops *ops, aitk_mem_account *acct, aitk_buf *out,
                           size_t bytes, aitk_mem_tag tag, const char *what);
/* Frees and resets *buf; {NULL} is fine. */
void aitk_buf_free(const aitk_ops *ops, aitk_mem_account *acct, aitk_buf *buf);
/* The accounting alone, for memory a backend holds outside aitk_buf_alloc. */
aitk_status aitk_mem_note_alloc(aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag,
                                const char *what);
void aitk_mem_note_free(aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag);
/* "weights", "activations", ...; "unknown" for an out-of-range tag. */
const char *aitk_mem_tag_name(aitk_mem_tag tag);

#endif
