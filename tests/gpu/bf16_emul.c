/* CPU operations with bf16 activation storage emulated (bf16_emul.h).
 * Each wrapper calls the CPU operation, then rounds what it wrote. */
#include "bf16_emul.h"

#include <stdbool.h>

static const aitk_ops *cpu;

static aitk_status round_act(aitk_status st, aitk_act *x, size_t n)
{
    return st == AITK_OK && x && n ? cpu->bf16_round(x, n) : st;
}

/* `rows` rows of `cols` elements, `ld` elements apart (modulation chunks). */
static aitk_status round_rows(aitk_status st, aitk_act *x, int rows, int cols, int ld)
{
    for (int i = 0; st == AITK_OK && x && i < rows; i++)
        st = round_act(st, aitk_act_at(cpu, x, (size_t)i * (size_t)ld), (size_t)cols);
    return st;
}

static aitk_status e_upload_act(aitk_act *dst, const float *src, size_t n)
{
    return round_act(cpu->upload_act(dst, src, n), dst, n);
}

static aitk_status e_draw_act(aitk_act *out, size_t n, uint64_t key, uint64_t first, float scale,
                              float add)
{
    return round_act(cpu->draw_act(out, n, key, first, scale, add), out, n);
}

static aitk_status e_gemm(aitk_act *c, const aitk_act *a, const aitk_act *b, int m, int n, int k,
                          bool ta, bool tb, float alpha, float beta, int batch, long long sa,
                          long long sb, long long sc)
{
    aitk_status st = cpu->gemm(c, a, b, m, n, k, ta, tb, alpha, beta, batch, sa, sb, sc);
    const int count = batch > 1 && sc != 0 ? batch : 1;
    for (int i = 0; i < count; i++)
        st = round_act(st, aitk_act_at(cpu, c, (size_t)i * (size_t)sc), (size_t)m * (size_t)n);
    return st;
}

static aitk_status e_lora_fwd(aitk_act *y, aitk_act *xa, const aitk_act *x, const aitk_act *w,
                              const aitk_act *bias, const float *la, const float *lb, int n,
                              int in, int out, int r, float scale)
{
    aitk_status st = cpu->lora_linear_forward(y, xa, x, w, bias, la, lb, n, in, out, r, scale);
    st = round_act(st, y, (size_t)n * (size_t)out);
    return round_act(st, xa, (size_t)n * (size_t)r);
}

static aitk_status e_lora_bwd(aitk_act *dx, float *dla, float *dlb, aitk_act *work,
                              const aitk_act *dy, const aitk_act *x, const aitk_act *xa,
                              const aitk_act *w, const float *la, const float *lb, int n, int in,
                              int out, int r, float scale, bool acc)
{
    aitk_status st = cpu->lora_linear_backward(dx, dla, dlb, work, dy, x, xa, w, la, lb, n, in,
                                               out, r, scale, acc);
    st = round_act(st, dx, (size_t)n * (size_t)in);
    return round_act(st, work, (size_t)n * (size_t)r);
}

static aitk_status e_ln_fwd(aitk_act *out, float *mean, float *rstd, const aitk_act *inp, int n,
                            int c, float eps)
{
    return round_act(cpu->layernorm_forward(out, mean, rstd, inp, n, c, eps), out,
                     (size_t)n * (size_t)c);
}

static aitk_status e_ln_bwd(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp,
                            const float *mean, const float *rstd, int n, int c)
{
    return round_act(cpu->layernorm_backward(dinp, dout, inp, mean, rstd, n, c), dinp,
                     (size_t)n * (size_t)c);
}

static aitk_status e_rms_fwd(aitk_act *out, float *rstd, const aitk_act *inp,
                             const aitk_act *weight, int n, int c, float eps)
{
    return round_act(cpu->rmsnorm_forward(out, rstd, inp, weight, n, c, eps), out,
                     (size_t)n * (size_t)c);
}

static aitk_status e_rms_bwd(aitk_act *dinp, float *dweight, const aitk_act *dout,
                             const aitk_act *inp, const aitk_act *weight, const float *rstd,
                             int n, int c)
{
    return round_act(cpu->rmsnorm_backward(dinp, dweight, dout, inp, weight, rstd, n, c), dinp,
                     (size_t)n * (size_t)c);
}

static aitk_status e_mod_fwd(aitk_act *out, const aitk_act *x, const aitk_act *shift,
                             const aitk_act *scale, int b, int t, int c, int ld)
{
    return round_act(cpu->modulate_forward(out, x, shift, scale, b, t, c, ld), out,
                     (size_t)b * (size_t)t * (size_t)c);
}

static aitk_status e_mod_bwd(aitk_act *dx, aitk_act *dshift, aitk_act *dscale,
                             const aitk_act *dout, const aitk_act *x, const aitk_act *scale, int b,
                             int t, int c, int ld)
{
    aitk_status st = cpu->modulate_backward(dx, dshift, dscale, dout, x, scale, b, t, c, ld);
    st = round_act(st, dx, (size_t)b * (size_t)t * (size_t)c);
    st = round_rows(st, dshift, b, c, ld);
    return round_rows(st, dscale, b, c, ld);
}

static aitk_status e_lnmod_fwd(aitk_act *out, aitk_act *ln, float *mean, float *rstd,
                               const aitk_act *inp, const aitk_act *shift, const aitk_act *scale,
                               int b, int t, int c, int ld, float eps)
{
    const size_t n = (size_t)b * (size_t)t * (size_t)c;
    aitk_status st =
        cpu->layernorm_modulate_forward(out, ln, mean, rstd, inp, shift, scale, b, t, c, ld, eps);
    return round_act(round_act(st, out, n), ln, n);
}

static aitk_status e_lnmod_bwd(aitk_act *dinp, aitk_act *dshift, aitk_act *dscale,
                               const aitk_act *dout, const aitk_act *inp, const aitk_act *ln,
                               const float *mean, const float *rstd, const aitk_act *scale, int b,
                               int t, int c, int ld)
{
    aitk_status st = cpu->layernorm_modulate_backward(dinp, dshift, dscale, dout, inp, ln, mean,
                                                      rstd, scale, b, t, c, ld);
    st = round_act(st, dinp, (size_t)b * (size_t)t * (size_t)c);
    st = round_rows(st, dshift, b, c, ld);
    return round_rows(st, dscale, b, c, ld);
}

static aitk_status e_gres_fwd(aitk_act *resid, const aitk_act *x, const aitk_act *gate, int b,
                              int t, int c, int ld)
{
    return round_act(cpu->gated_residual_forward(resid, x, gate, b, t, c, ld), resid,
                     (size_t)b * (size_t)t * (size_t)c);
}

static aitk_status e_gres_bwd(aitk_act *dx, aitk_act *dgate, const aitk_act *dresid,
                              const aitk_act *x, const aitk_act *gate, int b, int t, int c, int ld)
{
    aitk_status st = cpu->gated_residual_backward(dx, dgate, dresid, x, gate, b, t, c, ld);
    st = round_act(st, dx, (size_t)b * (size_t)t * (size_t)c);
    return round_rows(st, dgate, b, c, ld);
}

static aitk_status e_rope_fwd(aitk_act *out, const aitk_act *inp, const float *cs,
                              const float *sn, int b, int t, int h, int d)
{
    return round_act(cpu->rope_forward(out, inp, cs, sn, b, t, h, d), out,
                     (size_t)b * (size_t)t * (size_t)h * (size_t)d);
}

static aitk_status e_rope_bwd(aitk_act *dinp, const aitk_act *dout, const float *cs,
                              const float *sn, int b, int t, int h, int d)
{
    return round_act(cpu->rope_backward(dinp, dout, cs, sn, b, t, h, d), dinp,
                     (size_t)b * (size_t)t * (size_t)h * (size_t)d);
}

static aitk_status e_gelu_fwd(aitk_act *out, const aitk_act *inp, size_t n)
{
    return round_act(cpu->gelu_forward(out, inp, n), out, n);
}

static aitk_status e_gelu_bwd(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp, size_t n)
{
    return round_act(cpu->gelu_backward(dinp, dout, inp, n), dinp, n);
}

static aitk_status e_silu_fwd(aitk_act *out, const aitk_act *inp, size_t n)
{
    return round_act(cpu->silu_forward(out, inp, n), out, n);
}

static aitk_status e_silu_bwd(aitk_act *dinp, const aitk_act *dout, const aitk_act *inp, size_t n)
{
    return round_act(cpu->silu_backward(dinp, dout, inp, n), dinp, n);
}

static aitk_status e_swiglu_fwd(aitk_act *out, const aitk_act *a, const aitk_act *u, size_t n)
{
    return round_act(cpu->swiglu_forward(out, a, u, n), out, n);
}

static aitk_status e_swiglu_bwd(aitk_act *da, aitk_act *du, const aitk_act *dout,
                                const aitk_act *a, const aitk_act *u, size_t n)
{
    aitk_status st = cpu->swiglu_backward(da, du, dout, a, u, n);
    return round_act(round_act(st, da, n), du, n);
}

static aitk_status e_attn_fwd(aitk_act *out, float *lse, const aitk_act *q, const aitk_act *k,
                              const aitk_act *v, int b, int t, int hq, int hkv, int d, float scale)
{
    return round_act(cpu->attention_forward(out, lse, q, k, v, b, t, hq, hkv, d, scale), out,
                     (size_t)b * (size_t)t * (size_t)hq * (size_t)d);
}

static aitk_status e_attn_bwd(aitk_act *dq, aitk_act *dk, aitk_act *dv, const aitk_act *dout,
                              const aitk_act *q, const aitk_act *k, const aitk_act *v,
                              const aitk_act *out, const float *lse, int b, int t, int hq, int hkv,
                              int d, float scale)
{
    aitk_status st = cpu->attention_backward(dq, dk, dv, dout, q, k, v, out, lse, b, t, hq, hkv,
                                             d, scale);
    const size_t nq = (size_t)b * (size_t)t * (size_t)hq * (size_t)d;
    const size_t nk = (size_t)b * (size_t)t * (size_t)hkv * (size_t)d;
    return round_act(round_act(round_act(st, dq, nq), dk, nk), dv, nk);
}

static aitk_status e_mse_bwd(aitk_act *dpred, float dloss, const aitk_act *pred,
                             const aitk_act *target, size_t n)
{
    return round_act(cpu->mse_backward(dpred, dloss, pred, target, n), dpred, n);
}

static aitk_status e_fp8_deq(aitk_act *out, const uint8_t *q, float scale, size_t n)
{
    return round_act(cpu->fp8_dequantize(out, q, scale, n), out, n);
}

static aitk_status e_nf4_deq(aitk_act *out, const uint8_t *q, const float *absmax, size_t n)
{
    return round_act(cpu->nf4_dequantize(out, q, absmax, n), out, n);
}

static aitk_status e_axpy(aitk_act *y, float alpha, const aitk_act *x, size_t n)
{
    return round_act(cpu->axpy(y, alpha, x, n), y, n);
}

const aitk_ops *gpu_ops_cpu_bf16_storage(void)
{
    static aitk_ops table;
    if (!cpu) {
        cpu = aitk_ops_cpu();
        table = *cpu;
        table.name = "cpu-bf16";
        table.upload_act = e_upload_act;
        table.draw_act = e_draw_act;
        table.gemm = e_gemm;
        table.lora_linear_forward = e_lora_fwd;
        table.lora_linear_backward = e_lora_bwd;
        table.layernorm_forward = e_ln_fwd;
        table.layernorm_backward = e_ln_bwd;
        table.rmsnorm_forward = e_rms_fwd;
        table.rmsnorm_backward = e_rms_bwd;
        table.modulate_forward = e_mod_fwd;
        table.modulate_backward = e_mod_bwd;
        table.layernorm_modulate_forward = e_lnmod_fwd;
        table.layernorm_modulate_backward = e_lnmod_bwd;
        table.gated_residual_forward = e_gres_fwd;
        table.gated_residual_backward = e_gres_bwd;
        table.rope_forward = e_rope_fwd;
        table.rope_backward = e_rope_bwd;
        table.gelu_forward = e_gelu_fwd;
        table.gelu_backward = e_gelu_bwd;
        table.silu_forward = e_silu_fwd;
        table.silu_backward = e_silu_bwd;
        table.swiglu_forward = e_swiglu_fwd;
        table.swiglu_backward = e_swiglu_bwd;
        table.attention_forward = e_attn_fwd;
        table.attention_backward = e_attn_bwd;
        table.mse_backward = e_mse_bwd;
        table.fp8_dequantize = e_fp8_deq;
        table.nf4_dequantize = e_nf4_deq;
        table.axpy = e_axpy;
    }
    return &table;
}
