/* The CPU reference backend's functions, one per member of aitk_ops (ops.h,
 * where the shapes and the forward/backward contracts are written down).
 *
 * They take float pointers: the CPU's act_dtype is fp32, so an aitk_act* of
 * this backend is a float*, and the table (ops.c) holds thin wrappers that
 * only cast. Keeping the float signatures lets tests call the reference
 * directly on host arrays, to check it and to compare a GPU backend with it.
 *
 * fp32 throughout; GEMMs through OpenBLAS's cblas_sgemm, the rest plain C with
 * OpenMP over rows where a row is enough work to pay for a thread. Sums that
 * decide a loss or a norm are kept in double so the reference is a few ulps
 * from the exact result, not from PyTorch's particular summation order. */
#ifndef AITK_KERNELS_CPU_CPU_H
#define AITK_KERNELS_CPU_CPU_H

#include "kernels/ops.h"

/* Argument checks shared by the kernels: a NULL tensor or a non-positive
 * dimension is a graph bug, reported as AITK_E_INVAL. */
#define AITK_CPU_REQUIRE(cond) \
    do {                       \
        if (!(cond))           \
            return AITK_E_INVAL; \
    } while (0)

/* Below this many elements an op runs on one thread. Measured on 2 cores:
 * a LayerNorm forward+backward of 320x256 took 1.5-2.3 ms with OpenMP and
 * 0.3 ms without. Threads pay only on large tensors (FLUX at 1024^2 is
 * 4096x3072 = 12.6 M elements per activation); and every parallel region
 * leaves libgomp's workers spinning for a while, competing with OpenBLAS's
 * own threads in the GEMM that follows. */
#define AITK_CPU_PAR_MIN ((long long)1 << 18)

/* alloc.c: raw, zeroed host memory (the accounting is kernels/mem.c's) */
aitk_status aitk_cpu_alloc(void **out, size_t bytes);
void aitk_cpu_free(void *ptr);
aitk_status aitk_cpu_copy(void *dst, const void *src, size_t bytes);
aitk_status aitk_cpu_zero(void *dst, size_t bytes);

/* init.c: out[j] = add + aitk_draw(key, first + j, scale); *amax = max |x| */
aitk_status aitk_cpu_draw(float *out, size_t n, uint64_t key, uint64_t first, float scale,
                          float add);
aitk_status aitk_cpu_absmax(float *amax, const float *x, size_t n);

/* nf4.c: q (n/2 bytes, rounded up), absmax (aitk_nf4_blocks(n)) */
aitk_status aitk_cpu_nf4_dequantize(float *out, const uint8_t *q, const float *absmax, size_t n);
aitk_status aitk_cpu_nf4_quantize(uint8_t *q, float *absmax, const float *inp, size_t n);

/* linear.c */
aitk_status aitk_cpu_gemm(float *c, const float *a, const float *b, int m, int n, int k,
                          bool trans_a, bool trans_b, float alpha, float beta, int batch,
                          long long stride_a, long long stride_b, long long stride_c);
aitk_status aitk_cpu_lora_linear_forward(float *y, float *xa, const float *x, const float *w,
                                         const float *bias, const float *la, const float *lb,
                                         int n, int in, int out, int r, float scale);
aitk_status aitk_cpu_lora_linear_backward(float *dx, float *dla, float *dlb, float *work,
                                          const float *dy, const float *x, const float *xa,
                                          const float *w, const float *la, const float *lb,
                                          int n, int in, int out, int r, float scale,
                                          bool accumulate_dx);
aitk_status aitk_cpu_copy2d(float *dst, int ld_dst, const float *src, int ld_src, int rows,
                            int cols);
aitk_status aitk_cpu_axpy(float *y, float alpha, const float *x, size_t n);

/* norm.c */
aitk_status aitk_cpu_layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                                       int n, int c, float eps);
aitk_status aitk_cpu_layernorm_backward(float *dinp, const float *dout, const float *inp,
                                        const float *mean, const float *rstd, int n, int c);
/* LayerNorm then modulation in one pass (ops.h: layernorm_modulate_*),
 * the same bits as aitk_cpu_layernorm_* followed by aitk_cpu_modulate_*. */
aitk_status aitk_cpu_layernorm_modulate_forward(float *out, float *ln, float *mean, float *rstd,
                                                const float *inp, const float *shift,
                                                const float *scale, int b, int t, int c,
                                                int ld_mod, float eps);
aitk_status aitk_cpu_layernorm_modulate_backward(float *dinp, float *dshift, float *dscale,
                                                 const float *dout, const float *inp,
                                                 const float *ln, const float *mean,
                                                 const float *rstd, const float *scale, int b,
                                                 int t, int c, int ld_mod);
aitk_status aitk_cpu_rmsnorm_forward(float *out, float *rstd, const float *inp,
                                     const float *weight, int n, int c, float eps);
aitk_status aitk_cpu_rmsnorm_backward(float *dinp, float *dweight, const float *dout,
                                      const float *inp, const float *weight, const float *rstd,
                                      int n, int c);

/* modulate.c */
aitk_status aitk_cpu_modulate_forward(float *out, const float *x, const float *shift,
                                      const float *scale, int b, int t, int c, int ld_mod);
aitk_status aitk_cpu_modulate_backward(float *dx, float *dshift, float *dscale,
                                       const float *dout, const float *x, const float *scale,
                                       int b, int t, int c, int ld_mod);
/* dshift[s, j] = sum over t of dout, dscale[s, j] = sum of dout x, in
 * double, rows ld_mod apart (written): modulate_backward's reductions,
 * shared with the fused op so both sum in the same order. */
void aitk_cpu_modulate_token_sums(float *dshift, float *dscale, const float *dout,
                                  const float *x, int b, int t, int c, int ld_mod);
aitk_status aitk_cpu_gated_residual_forward(float *resid, const float *x, const float *gate,
                                            int b, int t, int c, int ld_mod);
aitk_status aitk_cpu_gated_residual_backward(float *dx, float *dgate, const float *dresid,
                                             const float *x, const float *gate, int b, int t,
                                             int c, int ld_mod);
aitk_status aitk_cpu_rope_table(float *cos_t, float *sin_t, const float *pos, int t, int d,
                                const int axes[3], float theta);
aitk_status aitk_cpu_rope_forward(float *out, const float *inp, const float *cos_t,
                                  const float *sin_t, int b, int t, int h, int d);
aitk_status aitk_cpu_rope_backward(float *dinp, const float *dout, const float *cos_t,
                                   const float *sin_t, int b, int t, int h, int d);

/* pointwise.c */
aitk_status aitk_cpu_gelu_forward(float *out, const float *inp, size_t n);
aitk_status aitk_cpu_gelu_backward(float *dinp, const float *dout, const float *inp, size_t n);
aitk_status aitk_cpu_silu_forward(float *out, const float *inp, size_t n);
aitk_status aitk_cpu_silu_backward(float *dinp, const float *dout, const float *inp, size_t n);
aitk_status aitk_cpu_swiglu_forward(float *out, const float *a, const float *u, size_t n);
aitk_status aitk_cpu_swiglu_backward(float *da, float *du, const float *dout, const float *a,
                                     const float *u, size_t n);
aitk_status aitk_cpu_mse_forward(float *loss, const float *pred, const float *target, size_t n);
aitk_status aitk_cpu_mse_backward(float *dpred, float dloss, const float *pred,
                                  const float *target, size_t n);
aitk_status aitk_cpu_fp8_dequantize(float *out, const uint8_t *q, float scale, size_t n);
aitk_status aitk_cpu_fp8_quantize(uint8_t *q, const float *inp, float scale, size_t n);
/* bf16 pack/unpack are not table members (a backend stores bf16 itself);
 * they stay for tests and host code that need bf16 bytes. */
aitk_status aitk_cpu_bf16_pack(uint16_t *out, const float *inp, size_t n);
aitk_status aitk_cpu_bf16_unpack(float *out, const uint16_t *inp, size_t n);
aitk_status aitk_cpu_bf16_round(float *x, size_t n);

/* attention.c */
aitk_status aitk_cpu_attention_forward(float *out, float *lse, const float *q, const float *k,
                                       const float *v, int b, int t, int hq, int hkv, int d,
                                       float scale);
aitk_status aitk_cpu_attention_backward(float *dq, float *dk, float *dv, const float *dout,
                                        const float *q, const float *k, const float *v,
                                        const float *out, const float *lse, int b, int t,
                                        int hq, int hkv, int d, float scale);

/* optim.c */
aitk_status aitk_cpu_adamw_update(float *param, float *m, float *v, const float *grad,
                                  size_t n, const aitk_adamw_hparams *hp, long step);
aitk_status aitk_cpu_adamw8_update(float *param, uint8_t *m_q, uint8_t *v_q, float *m_scale,
                                   float *v_scale, const float *grad, size_t n,
                                   const aitk_adamw_hparams *hp, long step);

/* ops.c: calls of the table's GEMM-backed and attention members since the
 * last reset, for aitk_backend_cpu's paths (backend.c). */
typedef struct aitk_cpu_counts {
    long gemm, attention_forward, attention_backward;
} aitk_cpu_counts;
aitk_cpu_counts aitk_cpu_counts_get(void);
void aitk_cpu_counts_reset(void);

#endif
