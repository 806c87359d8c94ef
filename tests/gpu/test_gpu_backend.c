/* The CUDA backend on a GPU, op by op, against the CPU reference.
 *
 * The plugin is opened with dlopen, as the validator opens it; probe
 * decides whether there is anything to test (exit 77, "skipped", when no
 * device answers). Each test draws inputs, rounds them to bf16 (what the
 * GPU stores), gives the same values to the GPU backend and to the CPU
 * reference's aitk_cpu_* functions (kernels/cpu/cpu.h), and compares.
 *
 * Tolerances: |gpu - cpu| <= rtol |cpu| + afrac * max|cpu| per tensor. The
 * GPU stores every activation in bf16 (relative step 2^-8), so an output
 * that went through one bf16 store is within 2^-8 relative, and outputs
 * built from earlier bf16 stores (LoRA: xa, work; attention: P V with bf16
 * P inside cuDNN) carry a few such steps; the afrac floor covers entries
 * that cancel to near zero. fp32 outputs (lse, norm statistics, optimizer
 * state, LoRA gradients) are held tighter. */
#include "mt.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/backend.h"
#include "kernels/cuda/attention_check.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/numfmt.h"

static const aitk_backend *be;
static const aitk_ops *g;

/* p advanced by `elems` bf16 elements. ops.h's aitk_act_at does this for
 * any backend, but it lives in the bookkeeping library, which this test
 * does not link; the plugin's act_dtype is checked to be bf16 in main. */
static aitk_act *act_at(aitk_act *p, size_t elems)
{
    return (aitk_act *)((char *)p + elems * 2);
}

static const aitk_act *act_cat(const aitk_act *p, size_t elems)
{
    return (const aitk_act *)((const char *)p + elems * 2);
}

/* ---- moving tensors ---- */

static void *dev(size_t bytes)
{
    void *p = NULL;
    assert_int_equal(g->alloc(&p, bytes), AITK_OK);
    return p;
}

static aitk_act *up_act(const float *host, size_t n)
{
    aitk_act *d = dev(n * 2);
    assert_int_equal(g->upload_act(d, host, n), AITK_OK);
    return d;
}

static float *up_f32(const float *host, size_t n)
{
    float *d = dev(n * sizeof(float));
    assert_int_equal(g->upload(d, host, n * sizeof(float)), AITK_OK);
    return d;
}

static float *down_act(const aitk_act *d, size_t n)
{
    float *h = mt_alloc(n);
    assert_int_equal(g->download_act(h, d, n), AITK_OK);
    return h;
}

static float *down_f32(const float *d, size_t n)
{
    float *h = mt_alloc(n);
    assert_int_equal(g->download(h, d, n * sizeof(float)), AITK_OK);
    return h;
}

static float max_abs(const float *x, size_t n)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++)
        m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
    return m;
}

/* Downloads d (bf16 when act, else fp32), compares, frees the host copy. */
static void expect(const char *what, const void *d, bool act, const float *want, size_t n,
                   float rtol, float afrac)
{
    assert_int_equal(be->synchronize(), AITK_OK);
    float *got = act ? down_act(d, n) : down_f32(d, n);
    mt_close(what, got, want, n, rtol, afrac * max_abs(want, n));
    free(got);
}

/* ---- tests ---- */

static void test_memory_and_copies(void **state)
{
    (void)state;
    size_t n = 3 * 1024 * 1024 + 5; /* more than one staging chunk */
    float *x = mt_draw_bf16(n, 1, 3.0f, 0.0f);
    aitk_act *d = up_act(x, n);
    expect("upload_act/download_act round trip", d, true, x, n, 0.0f, 0.0f);
    float amax = -1.0f;
    assert_int_equal(g->absmax(&amax, d, n), AITK_OK);
    assert_float_equal(amax, max_abs(x, n), 0.0f);
    /* axpy: y += 0.5 x */
    float *y = mt_draw_bf16(n, 2, 1.0f, 0.0f), *y_ref = mt_copy(y, n);
    aitk_act *dy = up_act(y, n);
    assert_int_equal(g->axpy(dy, 0.5f, d, n), AITK_OK);
    assert_int_equal(aitk_cpu_axpy(y_ref, 0.5f, x, n), AITK_OK);
    expect("axpy", dy, true, y_ref, n, 4e-3f, 0.0f);
    /* copy2d: 7 rows of 100 from a 300-wide source into a 128-wide target */
    float *dst_ref = mt_alloc(7 * 128);
    aitk_act *dd = dev(7 * 128 * 2);
    assert_int_equal(g->copy2d(dd, 128, act_cat(d, 17), 300, 7, 100), AITK_OK);
    assert_int_equal(aitk_cpu_copy2d(dst_ref, 128, x + 17, 300, 7, 100), AITK_OK);
    expect("copy2d", dd, true, dst_ref, 7 * 128, 0.0f, 0.0f);
    /* zero, bf16_round (a no-op on bf16 storage) */
    assert_int_equal(g->bf16_round(d, n), AITK_OK);
    expect("bf16_round", d, true, x, n, 0.0f, 0.0f);
    assert_int_equal(g->zero(d, n * 2), AITK_OK);
    float *zeros = mt_alloc(n);
    expect("zero", d, true, zeros, n, 0.0f, 0.0f);
    /* draws: the shared generator, element for element */
    float *want = mt_alloc(n);
    for (size_t j = 0; j < n; j++)
        want[j] = 0.25f + aitk_draw(77, 1000 + j, 0.02f);
    float *df = dev(n * sizeof(float));
    assert_int_equal(g->draw_f32(df, n, 77, 1000, 0.02f, 0.25f), AITK_OK);
    expect("draw_f32", df, false, want, n, 0.0f, 0.0f);
    for (size_t j = 0; j < n; j++)
        want[j] = aitk_bf16_rounded(want[j]);
    assert_int_equal(g->draw_act(d, n, 77, 1000, 0.02f, 0.25f), AITK_OK);
    expect("draw_act", d, true, want, n, 0.0f, 0.0f);
    /* An impossible allocation is AITK_E_NOMEM, not a crash. */
    void *huge = NULL;
    assert_int_equal(g->alloc(&huge, (size_t)1 << 50), AITK_E_NOMEM);
    assert_null(huge);
    g->free(d), g->free(dy), g->free(dd), g->free(df);
    free(x), free(y), free(y_ref), free(dst_ref), free(zeros), free(want);
}

static void test_gemm(void **state)
{
    (void)state;
    enum { M = 96, N = 160, K = 512, BATCH = 3 };
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            size_t na = (size_t)BATCH * M * K, nb = (size_t)K * N, nc = (size_t)BATCH * M * N;
            float *a = mt_draw_bf16(na, 10, 1.0f, 0.0f), *b = mt_draw_bf16(nb, 11, 1.0f, 0.0f);
            float *c = mt_draw_bf16(nc, 12, 1.0f, 0.0f), *c_ref = mt_copy(c, nc);
            aitk_act *da = up_act(a, na), *db = up_act(b, nb), *dc = up_act(c, nc);
            /* B broadcast (stride 0) as a weight shared by the batch. */
            assert_int_equal(g->gemm(dc, da, db, M, N, K, ta, tb, 0.5f, 1.0f, BATCH, M * K, 0,
                                     M * N),
                             AITK_OK);
            assert_int_equal(aitk_cpu_gemm(c_ref, a, b, M, N, K, ta, tb, 0.5f, 1.0f, BATCH,
                                           M * K, 0, M * N),
                             AITK_OK);
            expect("gemm", dc, true, c_ref, nc, 8e-3f, 2e-3f);
            g->free(da), g->free(db), g->free(dc);
            free(a), free(b), free(c), free(c_ref);
        }
}

static void lora_case(int n, int in, int out, int r, bool bias_on)
{
    float scale = 16.0f / (float)(r ? r : 1);
    size_t nx = (size_t)n * in, ny = (size_t)n * out, nw = (size_t)out * in;
    size_t na = (size_t)r * in, nb = (size_t)out * r, nxa = (size_t)n * r;
    float *x = mt_draw_bf16(nx, 20, 1.0f, 0.0f), *w = mt_draw_bf16(nw, 21, 0.03f, 0.0f);
    float *bias = mt_draw_bf16(out, 22, 0.1f, 0.0f);
    /* LoRA masters are fp32 on both sides; the GPU computes with bf16
     * copies, so the CPU gets the bf16-rounded values to compare like with
     * like. */
    float *la = mt_draw_bf16(na ? na : 1, 23, 0.03f, 0.0f);
    float *lb = mt_draw_bf16(nb ? nb : 1, 24, 0.03f, 0.0f);
    float *dy = mt_draw_bf16(ny, 25, 1.0f, 0.0f);
    float *y_ref = mt_alloc(ny), *xa_ref = mt_alloc(nxa ? nxa : 1);
    float *dx_ref = mt_draw_bf16(nx, 26, 1.0f, 0.0f), *dx0 = mt_copy(dx_ref, nx);
    float *dla_ref = mt_draw_bf16(na ? na : 1, 27, 1e-3f, 0.0f);
    float *dlb_ref = mt_draw_bf16(nb ? nb : 1, 28, 1e-3f, 0.0f);
    float *work_ref = mt_alloc(nxa ? nxa : 1);
    aitk_act *dx_ = up_act(x, nx), *dw = up_act(w, nw), *db = bias_on ? up_act(bias, out) : NULL;
    float *dla_ = r ? up_f32(la, na) : NULL, *dlb_ = r ? up_f32(lb, nb) : NULL;
    aitk_act *dy_ = up_act(dy, ny), *y = dev(ny * 2), *xa = r ? dev(nxa * 2) : NULL;
    aitk_act *work = r ? dev(nxa * 2) : NULL, *dxd = up_act(dx0, nx);
    float *gla = r ? up_f32(dla_ref, na) : NULL, *glb = r ? up_f32(dlb_ref, nb) : NULL;
    assert_int_equal(g->lora_linear_forward(y, xa, dx_, dw, db, dla_, dlb_, n, in, out, r, scale),
                     AITK_OK);
    assert_int_equal(aitk_cpu_lora_linear_forward(y_ref, r ? xa_ref : NULL, x, w,
                                                  bias_on ? bias : NULL, r ? la : NULL,
                                                  r ? lb : NULL, n, in, out, r, scale),
                     AITK_OK);
    expect("lora_linear_forward y", y, true, y_ref, ny, 1.6e-2f, 4e-3f);
    if (r)
        expect("lora_linear_forward xa", xa, true, xa_ref, nxa, 8e-3f, 2e-3f);
    /* Backward with accumulate_dx: dx += dy W + scale work A. */
    assert_int_equal(g->lora_linear_backward(dxd, gla, glb, work, dy_, dx_, xa, dw, dla_, dlb_, n,
                                             in, out, r, scale, true),
                     AITK_OK);
    /* The CPU backward reads the GPU's own xa (bf16), as a step would. */
    float *xa_gpu = r ? down_act(xa, nxa) : NULL;
    assert_int_equal(aitk_cpu_lora_linear_backward(dx_ref, r ? dla_ref : NULL, r ? dlb_ref : NULL,
                                                   r ? work_ref : NULL, dy, x, xa_gpu, w,
                                                   r ? la : NULL, r ? lb : NULL, n, in, out, r,
                                                   scale, true),
                     AITK_OK);
    expect("lora_linear_backward dx", dxd, true, dx_ref, nx, 1.6e-2f, 4e-3f);
    if (r) {
        expect("lora_linear_backward work", work, true, work_ref, nxa, 8e-3f, 2e-3f);
        /* fp32 outputs, but dla reads the bf16 work: its rounding shows. */
        expect("lora_linear_backward dla", gla, false, dla_ref, na, 1e-2f, 2e-3f);
        expect("lora_linear_backward dlb", glb, false, dlb_ref, nb, 1e-3f, 1e-4f);
    }
    g->free(dx_), g->free(dw), g->free(db), g->free(dla_), g->free(dlb_), g->free(dy_),
        g->free(y), g->free(xa), g->free(work), g->free(dxd), g->free(gla), g->free(glb);
    free(x), free(w), free(bias), free(la), free(lb), free(dy), free(y_ref), free(xa_ref),
        free(dx_ref), free(dx0), free(dla_ref), free(dlb_ref), free(work_ref), free(xa_gpu);
}

static void test_lora_linear(void **state)
{
    (void)state;
    lora_case(256, 3072, 512, 16, true);
    lora_case(128, 512, 3072, 32, false);
    lora_case(64, 256, 256, 0, true); /* a plain frozen linear */
}

static void test_norms(void **state)
{
    (void)state;
    enum { N = 64, C = 3072 };
    size_t nc = (size_t)N * C;
    float *x = mt_draw_bf16(nc, 30, 2.0f, 0.5f), *gr = mt_draw_bf16(nc, 31, 1.0f, 0.0f);
    float *w = mt_draw_bf16(C, 32, 0.5f, 1.0f);
    float *y_ref = mt_alloc(nc), *m_ref = mt_alloc(N), *r_ref = mt_alloc(N), *dx_ref = mt_alloc(nc);
    float *dw_ref = mt_alloc(C);
    aitk_act *dxin = up_act(x, nc), *dg = up_act(gr, nc), *dwt = up_act(w, C);
    aitk_act *y = dev(nc * 2), *dx = dev(nc * 2);
    float *m = dev(N * 4), *r = dev(N * 4), *dw = up_f32(dw_ref, C);
    assert_int_equal(g->layernorm_forward(y, m, r, dxin, N, C, 1e-6f), AITK_OK);
    assert_int_equal(aitk_cpu_layernorm_forward(y_ref, m_ref, r_ref, x, N, C, 1e-6f), AITK_OK);
    expect("layernorm out", y, true, y_ref, nc, 4e-3f, 1e-4f);
    expect("layernorm mean", m, false, m_ref, N, 1e-4f, 1e-5f);
    expect("layernorm rstd", r, false, r_ref, N, 1e-4f, 0.0f);
    assert_int_equal(g->layernorm_backward(dx, dg, dxin, m, r, N, C), AITK_OK);
    assert_int_equal(aitk_cpu_layernorm_backward(dx_ref, gr, x, m_ref, r_ref, N, C), AITK_OK);
    expect("layernorm dinp", dx, true, dx_ref, nc, 4e-3f, 2e-4f);
    assert_int_equal(g->rmsnorm_forward(y, r, dxin, dwt, N, C, 1e-6f), AITK_OK);
    assert_int_equal(aitk_cpu_rmsnorm_forward(y_ref, r_ref, x, w, N, C, 1e-6f), AITK_OK);
    expect("rmsnorm out", y, true, y_ref, nc, 4e-3f, 1e-4f);
    expect("rmsnorm rstd", r, false, r_ref, N, 1e-4f, 0.0f);
    assert_int_equal(g->rmsnorm_backward(dx, dw, dg, dxin, dwt, r, N, C), AITK_OK);
    assert_int_equal(aitk_cpu_rmsnorm_backward(dx_ref, dw_ref, gr, x, w, r_ref, N, C), AITK_OK);
    expect("rmsnorm dinp", dx, true, dx_ref, nc, 4e-3f, 2e-4f);
    expect("rmsnorm dweight", dw, false, dw_ref, C, 1e-4f, 1e-4f);
    g->free(dxin), g->free(dg), g->free(dwt), g->free(y), g->free(dx), g->free(m), g->free(r),
        g->free(dw);
    free(x), free(gr), free(w), free(y_ref), free(m_ref), free(r_ref), free(dx_ref), free(dw_ref);
}

static void test_modulation_and_rope(void **state)
{
    (void)state;
    enum { B = 2, T = 96, C = 3072, LD = 6 * C, H = 24, D = 128 };
    size_t n = (size_t)B * T * C, nm = (size_t)B * LD;
    float *x = mt_draw_bf16(n, 40, 2.0f, 0.0f), *gr = mt_draw_bf16(n, 41, 1.0f, 0.0f);
    float *mod = mt_draw_bf16(nm, 42, 0.5f, 0.0f), *resid = mt_draw_bf16(n, 43, 4.0f, 0.0f);
    float *y_ref = mt_alloc(n), *dx_ref = mt_alloc(n), *dmod_ref = mt_alloc(nm);
    aitk_act *dx_in = up_act(x, n), *dg = up_act(gr, n), *dmod_in = up_act(mod, nm);
    aitk_act *y = dev(n * 2), *dx = dev(n * 2), *dmod = up_act(dmod_ref, nm);
    aitk_act *shift = dmod_in, *scale = act_at(dmod_in, C), *gate = act_at(dmod_in, 2 * C);
    assert_int_equal(g->modulate_forward(y, dx_in, shift, scale, B, T, C, LD), AITK_OK);
    assert_int_equal(aitk_cpu_modulate_forward(y_ref, x, mod, mod + C, B, T, C, LD), AITK_OK);
    expect("modulate forward", y, true, y_ref, n, 5e-3f, 1e-5f);
    assert_int_equal(g->modulate_backward(dx, dmod, act_at(dmod, C), dg, dx_in, scale, B,
                                          T, C, LD),
                     AITK_OK);
    assert_int_equal(aitk_cpu_modulate_backward(dx_ref, dmod_ref, dmod_ref + C, gr, x, mod + C, B,
                                                T, C, LD),
                     AITK_OK);
    expect("modulate dx", dx, true, dx_ref, n, 5e-3f, 1e-5f);
    expect("modulate dshift/dscale", dmod, true, dmod_ref, nm, 5e-3f, 1e-3f);
    float *r_ref = mt_copy(resid, n);
    aitk_act *dr = up_act(resid, n);
    assert_int_equal(g->gated_residual_forward(dr, dx_in, gate, B, T, C, LD), AITK_OK);
    assert_int_equal(aitk_cpu_gated_residual_forward(r_ref, x, mod + 2 * C, B, T, C, LD), AITK_OK);
    expect("gated residual forward", dr, true, r_ref, n, 5e-3f, 1e-5f);
    assert_int_equal(g->gated_residual_backward(dx, act_at(dmod, 2 * C), dg, dx_in, gate,
                                                B, T, C, LD),
                     AITK_OK);
    assert_int_equal(aitk_cpu_gated_residual_backward(dx_ref, dmod_ref + 2 * C, gr, x,
                                                      mod + 2 * C, B, T, C, LD),
                     AITK_OK);
    expect("gated residual dx", dx, true, dx_ref, n, 5e-3f, 1e-5f);
    expect("gated residual dgate", dmod, true, dmod_ref, nm, 5e-3f, 1e-3f);
    /* RoPE: FLUX's axes on (B, T, H, D) = (2, 96, 24, 128) = n elements. */
    const int axes[3] = {16, 56, 56};
    float *pos = mt_alloc((size_t)T * 3);
    for (int i = 0; i < T; i++) {
        pos[i * 3 + 1] = (float)(i / 12);
        pos[i * 3 + 2] = (float)(i % 12);
    }
    float *cs_ref = mt_alloc((size_t)T * D / 2), *sn_ref = mt_alloc((size_t)T * D / 2);
    float *dpos = up_f32(pos, (size_t)T * 3), *cs = dev((size_t)T * D / 2 * 4);
    float *sn = dev((size_t)T * D / 2 * 4);
    assert_int_equal(g->rope_table(cs, sn, dpos, T, D, axes, 10000.0f), AITK_OK);
    assert_int_equal(aitk_cpu_rope_table(cs_ref, sn_ref, pos, T, D, axes, 10000.0f), AITK_OK);
    /* Both in double: the GPU's cos/sin may differ in the last double bit. */
    expect("rope cos", cs, false, cs_ref, (size_t)T * D / 2, 1e-6f, 1e-7f);
    expect("rope sin", sn, false, sn_ref, (size_t)T * D / 2, 1e-6f, 1e-7f);
    assert_int_equal(g->rope_forward(y, dx_in, cs, sn, B, T, H, D), AITK_OK);
    assert_int_equal(aitk_cpu_rope_forward(y_ref, x, cs_ref, sn_ref, B, T, H, D), AITK_OK);
    expect("rope forward", y, true, y_ref, n, 5e-3f, 3e-3f);
    assert_int_equal(g->rope_backward(y, y, cs, sn, B, T, H, D), AITK_OK); /* in place */
    assert_int_equal(aitk_cpu_rope_backward(y_ref, y_ref, cs_ref, sn_ref, B, T, H, D), AITK_OK);
    expect("rope backward (in place)", y, true, y_ref, n, 8e-3f, 3e-3f);
    g->free(dx_in), g->free(dg), g->free(dmod_in), g->free(y), g->free(dx), g->free(dmod),
        g->free(dr), g->free(dpos), g->free(cs), g->free(sn);
    free(x), free(gr), free(mod), free(resid), free(y_ref), free(dx_ref), free(dmod_ref),
        free(r_ref), free(pos), free(cs_ref), free(sn_ref);
}

/* The fused LayerNorm + modulation against the CPU's fused op (which gives
 * the bits of layernorm then modulate, test_math_norm_modulate), on a
 * double block's shapes with the modulation as chunks 0 and 1 of (B, 6C). */
static void test_layernorm_modulate(void **state)
{
    (void)state;
    enum { B = 2, T = 96, C = 3072, LD = 6 * C };
    size_t n = (size_t)B * T * C, nm = (size_t)B * LD;
    float *x = mt_draw_bf16(n, 50, 2.0f, 0.5f), *gr = mt_draw_bf16(n, 51, 1.0f, 0.0f);
    float *mod = mt_draw_bf16(nm, 52, 0.5f, 0.0f);
    float *y_ref = mt_alloc(n), *ln_ref = mt_alloc(n), *m_ref = mt_alloc((size_t)B * T);
    float *r_ref = mt_alloc((size_t)B * T), *dx_ref = mt_alloc(n), *dmod_ref = mt_alloc(nm);
    aitk_act *dx_in = up_act(x, n), *dg = up_act(gr, n), *dmod_in = up_act(mod, nm);
    aitk_act *y = dev(n * 2), *ln = dev(n * 2), *dx = dev(n * 2), *dmod = up_act(dmod_ref, nm);
    float *m = dev((size_t)B * T * 4), *r = dev((size_t)B * T * 4);
    const aitk_act *scale = act_cat(dmod_in, C);
    assert_int_equal(g->layernorm_modulate_forward(y, ln, m, r, dx_in, dmod_in, scale, B, T, C,
                                                   LD, 1e-6f),
                     AITK_OK);
    assert_int_equal(aitk_cpu_layernorm_modulate_forward(y_ref, ln_ref, m_ref, r_ref, x, mod,
                                                         mod + C, B, T, C, LD, 1e-6f),
                     AITK_OK);
    /* As test_norms: fp32 statistics; one bf16 store of ln and of out (the
     * GPU modulates the fp32 ln, as the CPU does). */
    expect("layernorm_modulate mean", m, false, m_ref, (size_t)B * T, 1e-4f, 1e-5f);
    expect("layernorm_modulate rstd", r, false, r_ref, (size_t)B * T, 1e-4f, 0.0f);
    expect("layernorm_modulate ln", ln, true, ln_ref, n, 4e-3f, 1e-4f);
    expect("layernorm_modulate out", y, true, y_ref, n, 4e-3f, 1e-4f);
    assert_int_equal(g->layernorm_modulate_backward(dx, dmod, act_at(dmod, C), dg, dx_in, ln, m,
                                                    r, scale, B, T, C, LD),
                     AITK_OK);
    assert_int_equal(aitk_cpu_layernorm_modulate_backward(dx_ref, dmod_ref, dmod_ref + C, gr, x,
                                                          ln_ref, m_ref, r_ref, mod + C, B, T,
                                                          C, LD),
                     AITK_OK);
    expect("layernorm_modulate dinp", dx, true, dx_ref, n, 4e-3f, 3e-4f);
    /* dshift as modulate's; dscale sums g ln with the GPU's ln in bf16:
     * 5 sigma of that rounding over T tokens (test_math_norm_modulate
     * derives it), sigma = sqrt(T) 2^-8/sqrt(3) rms(g ln). */
    double sq = 0.0;
    for (size_t i = 0; i < n; i++)
        sq += (double)gr[i] * gr[i] * ln_ref[i] * ln_ref[i];
    const float dscale_atol = (float)(5.0 * sqrt((double)T) / 256.0 / sqrt(3.0) * sqrt(sq / n));
    assert_int_equal(be->synchronize(), AITK_OK);
    float *dmod_got = down_act(dmod, nm);
    float *sh = mt_alloc((size_t)B * C), *sh_ref = mt_alloc((size_t)B * C);
    float *sc = mt_alloc((size_t)B * C), *sc_ref = mt_alloc((size_t)B * C);
    for (size_t s = 0; s < B; s++)
        for (size_t j = 0; j < C; j++) {
            sh[s * C + j] = dmod_got[s * LD + j], sh_ref[s * C + j] = dmod_ref[s * LD + j];
            sc[s * C + j] = dmod_got[s * LD + C + j], sc_ref[s * C + j] = dmod_ref[s * LD + C + j];
        }
    mt_close("layernorm_modulate dshift", sh, sh_ref, (size_t)B * C, 5e-3f,
             1e-3f * max_abs(sh_ref, (size_t)B * C));
    mt_close("layernorm_modulate dscale", sc, sc_ref, (size_t)B * C, 5e-3f, dscale_atol);
    /* In place (dinp = dout), as the contract allows: the same dinp. */
    assert_int_equal(g->layernorm_modulate_backward(dg, dmod, act_at(dmod, C), dg, dx_in, ln, m,
                                                    r, scale, B, T, C, LD),
                     AITK_OK);
    expect("layernorm_modulate dinp (in place)", dg, true, dx_ref, n, 4e-3f, 3e-4f);
    g->free(dx_in), g->free(dg), g->free(dmod_in), g->free(y), g->free(ln), g->free(dx),
        g->free(dmod), g->free(m), g->free(r);
    free(x), free(gr), free(mod), free(y_ref), free(ln_ref), free(m_ref), free(r_ref),
        free(dx_ref), free(dmod_ref), free(dmod_got), free(sh), free(sh_ref), free(sc),
        free(sc_ref);
}

static void test_pointwise_and_loss(void **state)
{
    (void)state;
    size_t n = (size_t)3072 * 512;
    float *a = mt_draw_bf16(n, 50, 6.0f, 0.0f), *u = mt_draw_bf16(n, 51, 2.0f, 0.0f);
    float *gr = mt_draw_bf16(n, 52, 1.0f, 0.0f);
    float *r1 = mt_alloc(n), *r2 = mt_alloc(n);
    aitk_act *da = up_act(a, n), *du = up_act(u, n), *dg = up_act(gr, n);
    aitk_act *o1 = dev(n * 2), *o2 = dev(n * 2);
    assert_int_equal(g->gelu_forward(o1, da, n), AITK_OK);
    assert_int_equal(aitk_cpu_gelu_forward(r1, a, n), AITK_OK);
    expect("gelu forward", o1, true, r1, n, 5e-3f, 1e-6f);
    assert_int_equal(g->gelu_backward(o1, dg, da, n), AITK_OK);
    assert_int_equal(aitk_cpu_gelu_backward(r1, gr, a, n), AITK_OK);
    expect("gelu backward", o1, true, r1, n, 5e-3f, 1e-6f);
    assert_int_equal(g->silu_forward(o1, da, n), AITK_OK);
    assert_int_equal(aitk_cpu_silu_forward(r1, a, n), AITK_OK);
    expect("silu forward", o1, true, r1, n, 5e-3f, 1e-6f);
    assert_int_equal(g->silu_backward(o1, dg, da, n), AITK_OK);
    assert_int_equal(aitk_cpu_silu_backward(r1, gr, a, n), AITK_OK);
    expect("silu backward", o1, true, r1, n, 5e-3f, 1e-6f);
    assert_int_equal(g->swiglu_forward(o1, da, du, n), AITK_OK);
    assert_int_equal(aitk_cpu_swiglu_forward(r1, a, u, n), AITK_OK);
    expect("swiglu forward", o1, true, r1, n, 5e-3f, 1e-6f);
    assert_int_equal(g->swiglu_backward(o1, o2, dg, da, du, n), AITK_OK);
    assert_int_equal(aitk_cpu_swiglu_backward(r1, r2, gr, a, u, n), AITK_OK);
    expect("swiglu da", o1, true, r1, n, 5e-3f, 1e-6f);
    expect("swiglu du", o2, true, r2, n, 5e-3f, 1e-6f);
    float loss = 0.0f, loss_ref = 0.0f;
    assert_int_equal(g->mse_forward(&loss, da, du, n), AITK_OK);
    assert_int_equal(aitk_cpu_mse_forward(&loss_ref, a, u, n), AITK_OK);
    mt_close("mse forward", &loss, &loss_ref, 1, 1e-5f, 0.0f);
    assert_int_equal(g->mse_backward(o1, 0.5f, da, du, n), AITK_OK);
    assert_int_equal(aitk_cpu_mse_backward(r1, 0.5f, a, u, n), AITK_OK);
    expect("mse backward", o1, true, r1, n, 5e-3f, 0.0f);
    g->free(da), g->free(du), g->free(dg), g->free(o1), g->free(o2);
    free(a), free(u), free(gr), free(r1), free(r2);
}

static void attention_case(int b, int t, int hq, int hkv, int d)
{
    float scale = 1.0f / sqrtf((float)d);
    size_t nq = (size_t)b * t * hq * d, nk = (size_t)b * t * hkv * d, nl = (size_t)b * hq * t;
    float *q = mt_draw_bf16(nq, 60, 2.0f, 0.0f), *k = mt_draw_bf16(nk, 61, 2.0f, 0.0f);
    float *v = mt_draw_bf16(nk, 62, 1.0f, 0.0f), *go = mt_draw_bf16(nq, 63, 1.0f, 0.0f);
    float *o_ref = mt_alloc(nq), *l_ref = mt_alloc(nl), *dq_ref = mt_alloc(nq);
    float *dk_ref = mt_alloc(nk), *dv_ref = mt_alloc(nk);
    aitk_act *dq_in = up_act(q, nq), *dk_in = up_act(k, nk), *dv_in = up_act(v, nk);
    aitk_act *dgo = up_act(go, nq), *o = dev(nq * 2), *dq = dev(nq * 2), *dk = dev(nk * 2);
    aitk_act *dv = dev(nk * 2);
    float *l = dev(nl * 4);
    assert_int_equal(g->attention_forward(o, l, dq_in, dk_in, dv_in, b, t, hq, hkv, d, scale),
                     AITK_OK);
    assert_int_equal(aitk_cpu_attention_forward(o_ref, l_ref, q, k, v, b, t, hq, hkv, d, scale),
                     AITK_OK);
    /* Scores come from the same bf16 q, k with fp32 sums: lse agrees to
     * fp32 noise; out is a softmax-weighted mean, P possibly bf16 inside. */
    expect("attention lse", l, false, l_ref, nl, 1e-4f, 1e-4f);
    expect("attention out", o, true, o_ref, nq, 1.6e-2f, 4e-3f);
    /* Backward from the GPU's own out (bf16) and lse, as a step would. */
    float *o_gpu = down_act(o, nq), *l_gpu = down_f32(l, nl);
    assert_int_equal(g->attention_backward(dq, dk, dv, dgo, dq_in, dk_in, dv_in, o, l, b, t, hq,
                                           hkv, d, scale),
                     AITK_OK);
    assert_int_equal(aitk_cpu_attention_backward(dq_ref, dk_ref, dv_ref, go, q, k, v, o_gpu,
                                                 l_gpu, b, t, hq, hkv, d, scale),
                     AITK_OK);
    expect("attention dq", dq, true, dq_ref, nq, 2e-2f, 8e-3f);
    expect("attention dk", dk, true, dk_ref, nk, 2e-2f, 8e-3f);
    expect("attention dv", dv, true, dv_ref, nk, 2e-2f, 8e-3f);
    g->free(dq_in), g->free(dk_in), g->free(dv_in), g->free(dgo), g->free(o), g->free(dq),
        g->free(dk), g->free(dv), g->free(l);
    free(q), free(k), free(v), free(go), free(o_ref), free(l_ref), free(dq_ref), free(dk_ref),
        free(dv_ref), free(o_gpu), free(l_gpu);
}

/* What the plugin said of the machine before the tests opened it. */
static aitk_backend_probe probed;

/* Calls so far of `op` by kernels whose text contains `kernel`. */
static long path_calls(const char *op, const char *kernel)
{
    static aitk_backend_path paths[1024];
    size_t np = 0;
    assert_int_equal(be->paths(paths, 1024, &np), AITK_OK);
    long calls = 0;
    for (size_t i = 0; i < np; i++)
        if (!strcmp(paths[i].op, op) && strstr(paths[i].kernel, kernel))
            calls += paths[i].calls;
    return calls;
}

/* Every path in turn: the default order (cuDNN where it takes the shape),
 * then the math path and the plain kernel forced by AITK_ATTENTION, each
 * held against the CPU reference and seen to run in the backend's paths. */
static void test_attention(void **state)
{
    (void)state;
    static const char *const modes[] = {NULL, "math", "plain"};
    static const char *const kernels[] = {"", "cuBLASLt math SDPA", "plain kernel"};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        if (modes[m])
            setenv("AITK_ATTENTION", modes[m], 1);
        else
            unsetenv("AITK_ATTENTION");
        long fwd = path_calls("attention_forward", kernels[m]);
        long bwd = path_calls("attention_backward", kernels[m]);
        long composite = path_calls("attention_backward", "composite backward graph");
        attention_case(1, 512, 24, 24, 128); /* FLUX heads */
        /* cuDNN plans the composite backward for FLUX's heads on every
         * architecture without a GPU (cuda.cudnn_deviceless); a device that
         * refuses it is a finding, not a fallback to accept quietly. */
        if (!modes[m] && probed.cudnn_version >= AITK_CUDNN_SDPA_BWD_VERSION &&
            probed.cudnn_version != 91000 && probed.cudnn_version != 91001 &&
            probed.devices[0].cc_major >= 8 &&
            path_calls("attention_backward", "composite backward graph") == composite)
            fail_msg("cuDNN %d did not run the composite SDPA backward for (1, 512, 24, 128)",
                     probed.cudnn_version);
        attention_case(2, 300, 12, 4, 120);  /* OmniGen2 head_dim, GQA 3:1, ragged T */
        attention_case(1, 200, 4, 4, 100);   /* head_dim % 8 != 0: the plain kernel */
        /* The plain kernel's tiled backward with GQA 3:1 and a ragged last
         * tile (333 = 20 x 16 + 13 rows at tile 16, 10 x 32 + 13 at 32). */
        attention_case(2, 333, 6, 2, 100);
        /* math: the two head_dim 100 cases fall back to the plain kernel. */
        long want = modes[m] && !strcmp(modes[m], "math") ? 2 : 4;
        if (path_calls("attention_forward", kernels[m]) - fwd < want ||
            path_calls("attention_backward", kernels[m]) - bwd < want)
            fail_msg("AITK_ATTENTION=%s: fewer than %ld calls named \"%s\"",
                     modes[m] ? modes[m] : "(unset)", want, kernels[m]);
    }
    unsetenv("AITK_ATTENTION");
}

static void test_optimizers(void **state)
{
    (void)state;
    size_t n = 16 * 3072 + 77, nb = aitk_adamw8_blocks(n);
    aitk_adamw_hparams hp = {1e-4f, 0.9f, 0.999f, 1e-8f, 0.01f};
    float *p = mt_draw_bf16(n, 70, 0.02f, 0.0f), *p_ref = mt_copy(p, n);
    float *m_ref = mt_alloc(n), *v_ref = mt_alloc(n);
    float *dp = up_f32(p, n), *dm = up_f32(m_ref, n), *dvv = up_f32(v_ref, n);
    float *p8_ref = mt_copy(p, n), *ms_ref = mt_alloc(nb), *vs_ref = mt_alloc(nb);
    uint8_t *mq_ref = calloc(n, 1), *vq_ref = calloc(n, 1), *mq = malloc(n), *vq = malloc(n);
    assert_non_null(mq_ref), assert_non_null(vq_ref), assert_non_null(mq), assert_non_null(vq);
    float *dp8 = up_f32(p, n), *dms = dev(nb * 4), *dvs = dev(nb * 4);
    uint8_t *dmq = dev(n), *dvq = dev(n);
    for (long step = 1; step <= 3; step++) {
        float *gr = mt_draw_bf16(n, 80 + (uint64_t)step, 1e-3f, 0.0f);
        float *dgr = up_f32(gr, n);
        assert_int_equal(g->adamw_update(dp, dm, dvv, dgr, n, &hp, step), AITK_OK);
        assert_int_equal(aitk_cpu_adamw_update(p_ref, m_ref, v_ref, gr, n, &hp, step), AITK_OK);
        assert_int_equal(g->adamw8_update(dp8, dmq, dvq, dms, dvs, dgr, n, &hp, step), AITK_OK);
        assert_int_equal(aitk_cpu_adamw8_update(p8_ref, mq_ref, vq_ref, ms_ref, vs_ref, gr, n,
                                                &hp, step),
                         AITK_OK);
        assert_int_equal(be->synchronize(), AITK_OK);
        g->free(dgr);
        free(gr);
    }
    /* The same fp32 arithmetic (kernels/math/optim.h), compiled without
     * fused multiply-adds (kernels/cuda/CMakeLists.txt): equal to the CPU
     * reference up to expf/powf-free IEEE operations, so the tolerances are
     * a few ulp and the 8-bit codes must be identical. */
    expect("adamw param", dp, false, p_ref, n, 1e-6f, 0.0f);
    expect("adamw m", dm, false, m_ref, n, 1e-6f, 0.0f);
    expect("adamw v", dvv, false, v_ref, n, 1e-6f, 0.0f);
    expect("adamw8 param", dp8, false, p8_ref, n, 1e-6f, 0.0f);
    expect("adamw8 m scale", dms, false, ms_ref, nb, 1e-6f, 0.0f);
    expect("adamw8 v scale", dvs, false, vs_ref, nb, 1e-6f, 0.0f);
    assert_int_equal(g->download(mq, dmq, n), AITK_OK);
    assert_int_equal(g->download(vq, dvq, n), AITK_OK);
    assert_memory_equal(mq, mq_ref, n);
    assert_memory_equal(vq, vq_ref, n);
    g->free(dp), g->free(dm), g->free(dvv), g->free(dp8), g->free(dms), g->free(dvs),
        g->free(dmq), g->free(dvq);
    free(p), free(p_ref), free(m_ref), free(v_ref), free(p8_ref), free(ms_ref), free(vs_ref),
        free(mq_ref), free(vq_ref), free(mq), free(vq);
}

static void test_weight_formats(void **state)
{
    (void)state;
    size_t n = 3072 * 64 + 40; /* a ragged last NF4 block */
    float *w = mt_draw_bf16(n, 90, 0.1f, 0.0f), *out_ref = mt_alloc(n);
    uint8_t *q = malloc(n), *q_ref = malloc(n);
    assert_non_null(q), assert_non_null(q_ref);
    float scale = 0.1f / 224.0f; /* the top quarter of values saturates */
    aitk_act *dw = up_act(w, n), *dout = dev(n * 2);
    uint8_t *dq = dev(n);
    assert_int_equal(g->fp8_quantize(dq, dw, scale, n), AITK_OK);
    assert_int_equal(aitk_cpu_fp8_quantize(q_ref, w, scale, n), AITK_OK);
    assert_int_equal(g->download(q, dq, n), AITK_OK);
    assert_memory_equal(q, q_ref, n);
    assert_int_equal(g->fp8_dequantize(dout, dq, scale, n), AITK_OK);
    assert_int_equal(aitk_cpu_fp8_dequantize(out_ref, q_ref, scale, n), AITK_OK);
    expect("fp8 dequantize", dout, true, out_ref, n, 4e-3f, 0.0f);
    /* NF4 round trip against the published table (no CPU reference yet):
     * every element comes back as the block absmax times its nearest code. */
    static const float nf4[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f,
                                  -0.39491748809814453f, -0.28444138169288635f,
                                  -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                                  0.07958029955625534f, 0.16093020141124725f,
                                  0.24611230194568634f, 0.33791524171829224f,
                                  0.44070982933044434f, 0.5626170039176941f,
                                  0.7229568362236023f, 1.0f};
    size_t nb = aitk_nf4_blocks(n);
    float *absmax = dev(nb * 4), *want = mt_alloc(n);
    uint8_t *q4 = dev((n + 1) / 2);
    assert_int_equal(g->nf4_quantize(q4, absmax, dw, n), AITK_OK);
    assert_int_equal(g->nf4_dequantize(dout, q4, absmax, n), AITK_OK);
    for (size_t blk = 0; blk < nb; blk++) {
        size_t lo = blk * AITK_NF4_BLOCK, hi = lo + AITK_NF4_BLOCK < n ? lo + AITK_NF4_BLOCK : n;
        float am = max_abs(w + lo, hi - lo);
        for (size_t i = lo; i < hi; i++) {
            float x = w[i] / am, best = nf4[0];
            for (int c = 1; c < 16; c++)
                if (fabsf(x - nf4[c]) < fabsf(x - best))
                    best = nf4[c];
            want[i] = aitk_bf16_rounded(best * am);
        }
    }
    expect("nf4 round trip", dout, true, want, n, 0.0f, 0.0f);
    g->free(dw), g->free(dout), g->free(dq), g->free(absmax), g->free(q4);
    free(w), free(out_ref), free(q), free(q_ref), free(want);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_gemm_rate_and_report(void **state)
{
    (void)state;
    /* FLUX's fused qkv+mlp projection at 1024^2: (4608, 3072) x (3072, 21504)^T. */
    enum { M = 4608, N = 21504, K = 3072, REPS = 20 };
    aitk_act *a = dev((size_t)M * K * 2), *b = dev((size_t)N * K * 2), *c = dev((size_t)M * N * 2);
    assert_int_equal(g->draw_act(a, (size_t)M * K, 1, 0, 1.0f, 0.0f), AITK_OK);
    assert_int_equal(g->draw_act(b, (size_t)N * K, 2, 0, 0.02f, 0.0f), AITK_OK);
    assert_int_equal(g->gemm(c, a, b, M, N, K, false, true, 1.0f, 0.0f, 1, 0, 0, 0), AITK_OK);
    assert_int_equal(be->synchronize(), AITK_OK);
    double t0 = now_s();
    for (int i = 0; i < REPS; i++)
        assert_int_equal(g->gemm(c, a, b, M, N, K, false, true, 1.0f, 0.0f, 1, 0, 0, 0), AITK_OK);
    assert_int_equal(be->synchronize(), AITK_OK);
    double s = (now_s() - t0) / REPS;
    printf("gemm bf16 %dx%dx%d: %.3f ms, %.1f TFLOP/s\n", M, N, K, s * 1e3,
           2.0 * M * N * K / s / 1e12);
    g->free(a), g->free(b), g->free(c);
    static aitk_backend_path paths[1024];
    size_t np = 0;
    assert_int_equal(be->paths(paths, 1024, &np), AITK_OK);
    for (size_t i = 0; i < np; i++)
        printf("path %-24s %6ld x %s\n", paths[i].op, paths[i].calls, paths[i].kernel);
    printf("workspace_bytes %zu\n", be->workspace_bytes());
    size_t fr = 0, tot = 0;
    assert_int_equal(be->mem_info(&fr, &tot), AITK_OK);
    assert_true(tot > 0 && fr <= tot);
}

/* The path of `op` whose kernel text contains `shape`, or NULL. */
static const aitk_backend_path *find_path(const aitk_backend_path *p, size_t n, const char *op,
                                          const char *shape)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].op, op) && strstr(p[i].kernel, shape))
            return &p[i];
    return NULL;
}

/* AITK_TIME_OPS=1 at open: each GEMM path names its shape and sums device
 * time; attention is timed too; untimed ops keep -1. Without it, ms is -1
 * everywhere. Reopens the backend twice, so it runs last. */
static void test_op_timing(void **state)
{
    (void)state;
    enum { M = 512, N = 768, K = 1024, T = 256, H = 2, D = 64, REPS = 5 };
    static aitk_backend_path paths[1024];
    const char *shape = "[m=512 n=768 k=1024 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16 c=bf16 "
                        "compute=fp32 epilogue=none]";
    for (int timed = 1; timed >= 0; timed--) {
        if (timed)
            setenv("AITK_TIME_OPS", "1", 1);
        else
            unsetenv("AITK_TIME_OPS");
        assert_int_equal(be->open(0), AITK_OK);
        aitk_act *a = dev((size_t)M * K * 2), *b = dev((size_t)N * K * 2),
                 *c = dev((size_t)M * N * 2);
        aitk_act *q = dev((size_t)T * H * D * 2), *o = dev((size_t)T * H * D * 2);
        float *lse = dev((size_t)T * H * sizeof(float));
        assert_int_equal(g->draw_act(a, (size_t)M * K, 1, 0, 1.0f, 0.0f), AITK_OK);
        assert_int_equal(g->draw_act(b, (size_t)N * K, 2, 0, 0.02f, 0.0f), AITK_OK);
        assert_int_equal(g->draw_act(q, (size_t)T * H * D, 3, 0, 1.0f, 0.0f), AITK_OK);
        for (int i = 0; i < REPS; i++)
            assert_int_equal(g->gemm(c, a, b, M, N, K, false, true, 1.0f, 0.0f, 1, 0, 0, 0),
                             AITK_OK);
        assert_int_equal(g->attention_forward(o, lse, q, q, q, 1, T, H, H, D, 0.125f), AITK_OK);
        size_t np = 0;
        assert_int_equal(be->paths(paths, 1024, &np), AITK_OK);
        const aitk_backend_path *gp = find_path(paths, np, "gemm", shape);
        const aitk_backend_path *ap = find_path(paths, np, "attention_forward", "");
        const aitk_backend_path *dp = find_path(paths, np, "draw_act", "");
        assert_non_null(gp);
        assert_non_null(ap);
        assert_non_null(dp);
        assert_int_equal(gp->calls, REPS);
        printf("timed=%d: gemm %s %.4f ms; attention %.4f ms\n", timed, gp->kernel, gp->ms,
               ap->ms);
        if (timed) {
            /* 5 x 0.8 GFLOP: more than 0 and less than a second on any GPU. */
            assert_true(gp->ms > 0.0 && gp->ms < 1000.0);
            assert_true(ap->ms > 0.0 && ap->ms < 1000.0);
        } else {
            assert_true(gp->ms == -1.0 && ap->ms == -1.0);
        }
        assert_true(dp->ms == -1.0); /* never timed */
        g->free(a), g->free(b), g->free(c), g->free(q), g->free(o), g->free(lse);
    }
}

int main(void)
{
    void *lib = dlopen(AITK_CUDA_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        printf("skipped: %s cannot be loaded: %s\n", AITK_CUDA_PLUGIN, e ? e : "?");
        return 77;
    }
    aitk_backend_plugin_get_fn get;
    void *sym = dlsym(lib, AITK_BACKEND_PLUGIN_ENTRY);
    if (!sym) {
        fprintf(stderr, "%s: no %s\n", AITK_CUDA_PLUGIN, AITK_BACKEND_PLUGIN_ENTRY);
        return 1;
    }
    memcpy(&get, &sym, sizeof get);
    be = get(AITK_BACKEND_ABI);
    if (!be || get(AITK_BACKEND_ABI + 1) != NULL) {
        fprintf(stderr, "plugin does not serve ABI %d (or serves any)\n", AITK_BACKEND_ABI);
        return 1;
    }
    g = be->ops;
    if (g->act_dtype != AITK_DTYPE_BF16) {
        fprintf(stderr, "plugin act_dtype is not bf16\n");
        return 1;
    }
    aitk_backend_probe pr;
    aitk_status st = be->probe(&pr);
    probed = pr;
    printf("%s; runtime %d, driver %d, cuBLASLt %d, cuDNN %d\n", be->build, pr.runtime_version,
           pr.driver_version, pr.cublaslt_version, pr.cudnn_version);
    if (st != AITK_OK || pr.n_devices < 1) {
        printf("skipped: no device answers: %s\n", pr.error);
        return 77;
    }
    printf("device 0: %s, cc %d.%d, %d SMs, %s\n", pr.devices[0].name, pr.devices[0].cc_major,
           pr.devices[0].cc_minor, pr.devices[0].sm_count, pr.devices[0].pci_bus_id);
    /* Before open every op fails, and says so. */
    void *p = NULL;
    if (g->alloc(&p, 16) != AITK_E_INVAL) {
        fprintf(stderr, "alloc before open did not fail\n");
        return 1;
    }
    if (be->open(0) != AITK_OK) {
        char err[AITK_BACKEND_ERROR_LEN];
        be->last_error(err, sizeof err);
        fprintf(stderr, "open(0): %s\n", err);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_and_copies),
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_lora_linear),
        cmocka_unit_test(test_norms),
        cmocka_unit_test(test_modulation_and_rope),
        cmocka_unit_test(test_layernorm_modulate),
        cmocka_unit_test(test_pointwise_and_loss),
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_optimizers),
        cmocka_unit_test(test_weight_formats),
        cmocka_unit_test(test_gemm_rate_and_report),
        cmocka_unit_test(test_op_timing),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char err[AITK_BACKEND_ERROR_LEN];
    be->last_error(err, sizeof err);
    if (failed && err[0])
        fprintf(stderr, "last_error: %s\n", err);
    be->close();
    be->close(); /* safe twice */
    return failed;
}
