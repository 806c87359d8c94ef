/* The CPU backend's operation table.
 *
 * The CPU stores activations in fp32 (act_dtype F32), so every aitk_act*
 * the table receives is a float* and each member is a wrapper that casts
 * and calls the aitk_cpu_* function of the same name (cpu.h). The wrappers
 * are written out rather than the functions cast to the member types: a
 * call through a pointer of another function type is undefined behaviour,
 * and -Werror would rightly refuse it. The GEMM-backed and attention
 * wrappers also count their calls for the backend's paths (backend.c). */
#include "kernels/cpu/cpu.h"

#define F(p) ((float *)(p))
#define CF(p) ((const float *)(p))

static aitk_cpu_counts counts;

aitk_cpu_counts aitk_cpu_counts_get(void)
{
    return counts;
}

void aitk_cpu_counts_reset(void)
{
    counts = (aitk_cpu_counts){0, 0, 0};
}

static aitk_status upload_act(aitk_act *dst, const float *src, size_t n)
{
    return aitk_cpu_copy(dst, src, n * sizeof(float));
}

static aitk_status download_act(float *dst, const aitk_act *src, size_t n)
{
    return aitk_cpu_copy(dst, src, n * sizeof(float));
}

static aitk_status draw_act(aitk_act *out, size_t n, uint64_t key, uint64_t first, float scale,
                            float add)
{
    return aitk_cpu_draw(F(out), n, key, first, scale, add);
}

static aitk_status absmax(float *amax, const aitk_act *x, size_t n)
{
    return aitk_cpu_absmax(amax, CF(x), n);
}

static aitk_status gemm(aitk_act *c, const aitk_act *a, const aitk_act *b, int m, int n, int k,
                        bool ta, bool tb, float alpha, float beta, int batch, long long sa,
                        long long sb, long long sc)
{
    counts.gemm++;
    return aitk_cpu_gemm(F(c), CF(a), CF(b), m, n, k, ta, tb, alpha, beta, batch, sa, sb, sc);
}

static aitk_status lora_fwd(aitk_act *y, aitk_act *xa, const aitk_act *x, const aitk_act *w,
                            const aitk_act *bias, const float *la, const float *lb, int n,
                            int in, int out, int r, float scale)
{
    counts.gemm++;
    return aitk_cpu_lora_linear_forward(F(y), F(xa), CF(x), CF(w), CF(bias), la, lb, n, in,
                                        out, r, scale);
}

static aitk_status lora_bwd(aitk_act *dx, float *dla, float *dlb, aitk_act *work,
                            const aitk_act *dy, const aitk_act *x, const aitk_act *xa,
                            const aitk_act *w, const float *la, const float *lb, int n, int in,
                            int out, int r, float scale, bool acc)
{
    counts.gemm++;
    return aitk_cpu_lora_linear_backward(F(dx), dla, dlb, F(work), CF(dy), CF(x), CF(xa),
                                         CF(w), la, lb, n, in, out, r, scale, acc);
}

static aitk_status ln_fwd(aitk_act *out, float *mean, float *rstd, const aitk_act *inp, int n,
                          int c, float eps)
{
    return aitk_cpu_layernorm_forward(F(out), mean, rstd, CF(inp), n, c, eps);
}

static aitk_status ln_bwd(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp,
                          const float *mean, const float *rstd, int n, int c)
{
    return aitk_cpu_layernorm_backward(F(dinp), CF(dout), CF(inp), mean, rstd, n, c);
}

static aitk_status rms_fwd(aitk_act *out, float *rstd, const aitk_act *inp,
                           const aitk_act *weight, int n, int c, float eps)
{
    return aitk_cpu_rmsnorm_forward(F(out), rstd, CF(inp), CF(weight), n, c, eps);
}

static aitk_status rms_bwd(aitk_act *dinp, float *dweight, const aitk_act *dout,
                           const aitk_act *inp, const aitk_act *weight, const float *rstd, int n,
                           int c)
{
    return aitk_cpu_rmsnorm_backward(F(dinp), dweight, CF(dout), CF(inp), CF(weight), rstd, n,
                                     c);
}

static aitk_status mod_fwd(aitk_act *out, const aitk_act *x, const aitk_act *shift,
                           const aitk_act *scale, int b, int t, int c, int ld)
{
    return aitk_cpu_modulate_forward(F(out), CF(x), CF(shift), CF(scale), b, t, c, ld);
}

static aitk_status mod_bwd(aitk_act *dx, aitk_act *dshift, aitk_act *dscale,
                           const aitk_act *dout, const aitk_act *x, const aitk_act *scale, int b,
                           int t, int c, int ld)
{
    return aitk_cpu_modulate_backward(F(dx), F(dshift), F(dscale), CF(dout), CF(x), CF(scale),
                                      b, t, c, ld);
}

static aitk_status lnmod_fwd(aitk_act *out, aitk_act *ln, float *mean, float *rstd,
                             const aitk_act *inp, const aitk_act *shift, const aitk_act *scale,
                             int b, int t, int c, int ld, float eps)
{
    return aitk_cpu_layernorm_modulate_forward(F(out), F(ln), mean, rstd, CF(inp), CF(shift),
                                               CF(scale), b, t, c, ld, eps);
}

static aitk_status lnmod_bwd(aitk_act *dinp, aitk_act *dshift, aitk_act *dscale,
                             const aitk_act *dout, const aitk_act *inp, const aitk_act *ln,
                             const float *mean, const float *rstd, const aitk_act *scale, int b,
                             int t, int c, int ld)
{
    return aitk_cpu_layernorm_modulate_backward(F(dinp), F(dshift), F(dscale), CF(dout),
                                                CF(inp), CF(ln), mean, rstd, CF(scale), b, t, c,
                                                ld);
}

static aitk_status gres_fwd(aitk_act *resid, const aitk_act *x, const aitk_act *gate, int b,
                            int t, int c, int ld)
{
    return aitk_cpu_gated_residual_forward(F(resid), CF(x), CF(gate), b, t, c, ld);
}

static aitk_status gres_bwd(aitk_act *dx, aitk_act *dgate, const aitk_act *dresid,
                            const aitk_act *x, const aitk_act *gate, int b, int t, int c, int ld)
{
    return aitk_cpu_gated_residual_backward(F(dx), F(dgate), CF(dresid), CF(x), CF(gate), b, t,
                                            c, ld);
}

static aitk_status rope_fwd(aitk_act *out, const aitk_act *inp, const float *cs,
                            const float *sn, int b, int t, int h, int d)
{
    return aitk_cpu_rope_forward(F(out), CF(inp), cs, sn, b, t, h, d);
}

static aitk_status rope_bwd(aitk_act *dinp, const aitk_act *dout, const float *cs,
                            const float *sn, int b, int t, int h, int d)
{
    return aitk_cpu_rope_backward(F(dinp), CF(dout), cs, sn, b, t, h, d);
}

static aitk_status gelu_fwd(aitk_act *out, const aitk_act *inp, size_t n)
{
    return aitk_cpu_gelu_forward(F(out), CF(inp), n);
}

static aitk_status gelu_bwd(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp, size_t n)
{
    return aitk_cpu_gelu_backward(F(dinp), CF(dout), CF(inp), n);
}

static aitk_status silu_fwd(aitk_act *out, const aitk_act *inp, size_t n)
{
    return aitk_cpu_silu_forward(F(out), CF(inp), n);
}

static aitk_status silu_bwd(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp, size_t n)
{
    return aitk_cpu_silu_backward(F(dinp), CF(dout), CF(inp), n);
}

static aitk_status swiglu_fwd(aitk_act *out, const aitk_act *a, const aitk_act *u, size_t n)
{
    return aitk_cpu_swiglu_forward(F(out), CF(a), CF(u), n);
}

static aitk_status swiglu_bwd(aitk_act *da, aitk_act *du, const aitk_act *dout,
                              const aitk_act *a, const aitk_act *u, size_t n)
{
    return aitk_cpu_swiglu_backward(F(da), F(du), CF(dout), CF(a), CF(u), n);
}

static aitk_status att_fwd(aitk_act *out, float *lse, const aitk_act *q, const aitk_act *k,
                           const aitk_act *v, int b, int t, int hq, int hkv, int d, float scale)
{
    counts.attention_forward++;
    return aitk_cpu_attention_forward(F(out), lse, CF(q), CF(k), CF(v), b, t, hq, hkv, d,
                                      scale);
}

static aitk_status att_bwd(aitk_act *dq, aitk_act *dk, aitk_act *dv, const aitk_act *dout,
                           const aitk_act *q, const aitk_act *k, const aitk_act *v,
                           const aitk_act *out, const float *lse, int b, int t, int hq, int hkv,
                           int d, float scale)
{
    counts.attention_backward++;
    return aitk_cpu_attention_backward(F(dq), F(dk), F(dv), CF(dout), CF(q), CF(k), CF(v),
                                       CF(out), lse, b, t, hq, hkv, d, scale);
}

/* The loss lands in host memory, which on the CPU is where it is computed. */
static aitk_status mse_fwd(float *loss_host, const aitk_act *pred, const aitk_act *target,
                           size_t n)
{
    return aitk_cpu_mse_forward(loss_host, CF(pred), CF(target), n);
}

static aitk_status mse_bwd(aitk_act *dpred, float dloss, const aitk_act *pred,
                           const aitk_act *target, size_t n)
{
    return aitk_cpu_mse_backward(F(dpred), dloss, CF(pred), CF(target), n);
}

static aitk_status fp8_deq(aitk_act *out, const uint8_t *q, float scale, size_t n)
{
    return aitk_cpu_fp8_dequantize(F(out), q, scale, n);
}

static aitk_status fp8_q(uint8_t *q, const aitk_act *inp, float scale, size_t n)
{
    return aitk_cpu_fp8_quantize(q, CF(inp), scale, n);
}

static aitk_status nf4_deq(aitk_act *out, const uint8_t *q, const float *absmax, size_t n)
{
    return aitk_cpu_nf4_dequantize(F(out), q, absmax, n);
}

static aitk_status nf4_q(uint8_t *q, float *absmax, const aitk_act *inp, size_t n)
{
    return aitk_cpu_nf4_quantize(q, absmax, CF(inp), n);
}

static aitk_status bf16_round(aitk_act *x, size_t n)
{
    return aitk_cpu_bf16_round(F(x), n);
}

static aitk_status copy2d(aitk_act *dst, int ld_dst, const aitk_act *src, int ld_src, int rows,
                          int cols)
{
    return aitk_cpu_copy2d(F(dst), ld_dst, CF(src), ld_src, rows, cols);
}

static aitk_status axpy(aitk_act *y, float alpha, const aitk_act *x, size_t n)
{
    return aitk_cpu_axpy(F(y), alpha, CF(x), n);
}

static const aitk_ops cpu_ops = {
    .name = "cpu",
    .act_dtype = AITK_DTYPE_F32,
    .alloc = aitk_cpu_alloc,
    .free = aitk_cpu_free,
    .upload = aitk_cpu_copy,
    .download = aitk_cpu_copy,
    .upload_act = upload_act,
    .download_act = download_act,
    .zero = aitk_cpu_zero,
    .draw_act = draw_act,
    .draw_f32 = aitk_cpu_draw,
    .absmax = absmax,
    .gemm = gemm,
    .lora_linear_forward = lora_fwd,
    .lora_linear_backward = lora_bwd,
    .layernorm_forward = ln_fwd,
    .layernorm_backward = ln_bwd,
    .rmsnorm_forward = rms_fwd,
    .rmsnorm_backward = rms_bwd,
    .modulate_forward = mod_fwd,
    .modulate_backward = mod_bwd,
    .layernorm_modulate_forward = lnmod_fwd,
    .layernorm_modulate_backward = lnmod_bwd,
    .gated_residual_forward = gres_fwd,
    .gated_residual_backward = gres_bwd,
    .rope_table = aitk_cpu_rope_table,
    .rope_forward = rope_fwd,
    .rope_backward = rope_bwd,
    .gelu_forward = gelu_fwd,
    .gelu_backward = gelu_bwd,
    .silu_forward = silu_fwd,
    .silu_backward = silu_bwd,
    .swiglu_forward = swiglu_fwd,
    .swiglu_backward = swiglu_bwd,
    .attention_forward = att_fwd,
    .attention_backward = att_bwd,
    .mse_forward = mse_fwd,
    .mse_backward = mse_bwd,
    .adamw_update = aitk_cpu_adamw_update,
    .adamw8_update = aitk_cpu_adamw8_update,
    .fp8_dequantize = fp8_deq,
    .fp8_quantize = fp8_q,
    .nf4_dequantize = nf4_deq,
    .nf4_quantize = nf4_q,
    .bf16_round = bf16_round,
    .copy2d = copy2d,
    .axpy = axpy,
};

const aitk_ops *aitk_ops_cpu(void)
{
    return &cpu_ops;
}
