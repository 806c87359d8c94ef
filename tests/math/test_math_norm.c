/* kernels/math/norm.h run as norm.cu runs it (fp32 sums per row, bf16
 * loads and stores), compared with the CPU reference (kernels/cpu/norm.c)
 * on the same bf16-rounded inputs, at FLUX's width (C = 3072) and the
 * per-head q/k norm width (C = 128). */
#include "mt.h"

#include "kernels/cpu/cpu.h"
#include "kernels/math/colsum.h"
#include "kernels/math/norm.h"

/* ---- emulations of the row kernels ---- */

static void ln_forward(float *out, float *mean, float *rstd, const float *inp, int n, int c,
                       float eps)
{
    for (int i = 0; i < n; i++) {
        const float *x = inp + (size_t)i * c;
        float s = 0.0f;
        for (int j = 0; j < c; j++)
            s += x[j];
        float mu = s / (float)c, ss = 0.0f;
        for (int j = 0; j < c; j++)
            ss += (x[j] - mu) * (x[j] - mu);
        float r = aitk_norm_rstd(ss, c, eps);
        for (int j = 0; j < c; j++)
            out[(size_t)i * c + j] = aitk_bf16_rounded(aitk_layernorm_out(x[j], mu, r));
        mean[i] = mu;
        rstd[i] = r;
    }
}

static void ln_backward(float *dinp, const float *dout, const float *inp, const float *mean,
                        const float *rstd, int n, int c)
{
    for (int i = 0; i < n; i++) {
        size_t o = (size_t)i * c;
        float sg = 0.0f, sgx = 0.0f;
        for (int j = 0; j < c; j++) {
            sg += dout[o + j];
            sgx += dout[o + j] * aitk_layernorm_out(inp[o + j], mean[i], rstd[i]);
        }
        for (int j = 0; j < c; j++)
            dinp[o + j] = aitk_bf16_rounded(aitk_layernorm_dx(dout[o + j], inp[o + j], mean[i],
                                                              rstd[i], sg / c, sgx / c));
    }
}

static void rms_forward(float *out, float *rstd, const float *inp, const float *w, int n, int c,
                        float eps)
{
    for (int i = 0; i < n; i++) {
        size_t o = (size_t)i * c;
        float ss = 0.0f;
        for (int j = 0; j < c; j++)
            ss += inp[o + j] * inp[o + j];
        float r = aitk_norm_rstd(ss, c, eps);
        for (int j = 0; j < c; j++)
            out[o + j] = aitk_bf16_rounded(aitk_rmsnorm_out(inp[o + j], r, w[j]));
        rstd[i] = r;
    }
}

/* dweight as norm.cu sums it: stage 1 per (column, chunk of rows), stage 2
 * over the chunks in order, the grid sized for a GPU of `sm_count` SMs. */
static void rms_dweight(float *dw, const float *dout, const float *inp, const float *rstd, int n,
                        int c, int sm_count)
{
    aitk_colsum_grid g = aitk_colsum_grid_for(n, c, 1, 256, sm_count);
    float *partials = mt_alloc((size_t)g.chunks * c);
    for (int k = 0; k < g.chunks; k++)
        for (int j = 0; j < c; j++) {
            int begin, end;
            aitk_colsum_rows(&g, n, k, &begin, &end);
            float s = 0.0f;
            for (int i = begin; i < end; i++)
                s += aitk_rmsnorm_dweight_term(dout[(size_t)i * c + j], inp[(size_t)i * c + j],
                                               rstd[i]);
            partials[aitk_colsum_at(&g, c, 0, k, j)] = s;
        }
    for (int j = 0; j < c; j++)
        dw[j] += aitk_colsum_finish(&g, partials, c, 0, j);
    free(partials);
}

static void rms_backward(float *dinp, float *dw, const float *dout, const float *inp,
                         const float *w, const float *rstd, int n, int c, int sm_count)
{
    rms_dweight(dw, dout, inp, rstd, n, c, sm_count);
    for (int i = 0; i < n; i++) {
        size_t o = (size_t)i * c;
        float s = 0.0f;
        for (int j = 0; j < c; j++)
            s += dout[o + j] * w[j] * inp[o + j];
        for (int j = 0; j < c; j++)
            dinp[o + j] = aitk_bf16_rounded(aitk_rmsnorm_dx(dout[o + j], inp[o + j], w[j],
                                                            rstd[i], s / c));
    }
}

/* ---- tests ---- */

static void layernorm_case(int n, int c)
{
    size_t nc = (size_t)n * c;
    /* An offset mean (0.5) and spread 2: the two-pass variance matters. */
    float *x = mt_draw_bf16(nc, 11, 2.0f, 0.5f), *g = mt_draw_bf16(nc, 12, 1.0f, 0.0f);
    float *y = mt_alloc(nc), *m = mt_alloc(n), *r = mt_alloc(n), *dx = mt_alloc(nc);
    float *y_ref = mt_alloc(nc), *m_ref = mt_alloc(n), *r_ref = mt_alloc(n);
    float *dx_ref = mt_alloc(nc);
    ln_forward(y, m, r, x, n, c, 1e-6f);
    assert_int_equal(aitk_cpu_layernorm_forward(y_ref, m_ref, r_ref, x, n, c, 1e-6f), AITK_OK);
    /* mean and rstd are fp32 on both sides: fp32 vs double sums only. */
    mt_close("layernorm mean", m, m_ref, n, 1e-4f, 1e-5f);
    mt_close("layernorm rstd", r, r_ref, n, 1e-4f, 0.0f);
    /* One bf16 rounding of outputs of magnitude ~2: 2^-9 relative. */
    mt_close("layernorm out", y, y_ref, nc, 4e-3f, 1e-4f);
    ln_backward(dx, g, x, m_ref, r_ref, n, c);
    assert_int_equal(aitk_cpu_layernorm_backward(dx_ref, g, x, m_ref, r_ref, n, c), AITK_OK);
    /* dx ~ r |g| ~ 0.9; cancellation in g - mean(g) - xhat mean(g xhat)
     * leaves fp32-sum noise well under 1e-4 absolute. */
    mt_close("layernorm dinp", dx, dx_ref, nc, 4e-3f, 2e-4f);
    free(x), free(g), free(y), free(m), free(r), free(dx), free(y_ref), free(m_ref), free(r_ref),
        free(dx_ref);
}

static void test_layernorm_flux_width(void **state)
{
    (void)state;
    layernorm_case(48, 3072);
}

static void test_layernorm_head_width(void **state)
{
    (void)state;
    layernorm_case(96, 128);
}

static void rmsnorm_case(int n, int c, int sm_count)
{
    size_t nc = (size_t)n * c;
    float *x = mt_draw_bf16(nc, 21, 1.5f, 0.0f), *g = mt_draw_bf16(nc, 22, 1.0f, 0.0f);
    float *w = mt_draw_bf16(c, 23, 0.5f, 1.0f);
    float *y = mt_alloc(nc), *r = mt_alloc(n), *dx = mt_alloc(nc), *dw = mt_alloc(c);
    float *y_ref = mt_alloc(nc), *r_ref = mt_alloc(n), *dx_ref = mt_alloc(nc);
    float *dw_ref = mt_alloc(c);
    for (int j = 0; j < c; j++)
        dw[j] = dw_ref[j] = 0.25f; /* dweight accumulates: start from a non-zero value */
    rms_forward(y, r, x, w, n, c, 1e-6f);
    assert_int_equal(aitk_cpu_rmsnorm_forward(y_ref, r_ref, x, w, n, c, 1e-6f), AITK_OK);
    mt_close("rmsnorm rstd", r, r_ref, n, 1e-4f, 0.0f);
    mt_close("rmsnorm out", y, y_ref, nc, 4e-3f, 1e-4f);
    rms_backward(dx, dw, g, x, w, r_ref, n, c, sm_count);
    assert_int_equal(aitk_cpu_rmsnorm_backward(dx_ref, dw_ref, g, x, w, r_ref, n, c), AITK_OK);
    mt_close("rmsnorm dinp", dx, dx_ref, nc, 4e-3f, 2e-4f);
    /* dweight is fp32 on both sides, a sum over n rows of O(1) terms. */
    mt_close("rmsnorm dweight", dw, dw_ref, c, 1e-4f, 1e-4f);
    free(x), free(g), free(w), free(y), free(r), free(dx), free(dw), free(y_ref), free(r_ref),
        free(dx_ref), free(dw_ref);
}

static void test_rmsnorm_flux_width(void **state)
{
    (void)state;
    rmsnorm_case(32, 3072, 132); /* H100 SXM: 132 SMs, 16 chunks of 2 rows */
    rmsnorm_case(1000, 3072, 108); /* A100: 18 chunks of 56 rows, the last of 48 */
}

static void test_rmsnorm_head_width(void **state)
{
    (void)state;
    /* OmniGen2's head_dim 120 and FLUX's 128. */
    rmsnorm_case(64, 120, 132);
    rmsnorm_case(64, 128, 128); /* RTX 4090: 128 SMs */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layernorm_flux_width),
        cmocka_unit_test(test_layernorm_head_width),
        cmocka_unit_test(test_rmsnorm_flux_width),
        cmocka_unit_test(test_rmsnorm_head_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
