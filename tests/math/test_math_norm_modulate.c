/* The fused LayerNorm + adaLN modulation (kernels/math/norm_modulate.h, as
 * norm_modulate.cu runs it: fp32 row sums, bf16 loads and stores, token
 * sums in the two stages of colsum.h) against the CPU reference's separate
 * ops, layernorm then modulate (kernels/cpu/norm.c, modulate.c), on the
 * same bf16-rounded inputs; and the CPU's own fused op against the same
 * separate ops, which it must match bit for bit (the step graphs use the
 * fused op, and the golden files were made with the separate ones).
 *
 * Shapes: a double block's (B, T, C) = (2, 96, 3072) with the modulation as
 * chunks 0 and 1 of FLUX's (B, 6C) output, and one sample of a final layer
 * (ld_mod = 2C, FLUX's norm_out). */
#include "mt.h"

#include <string.h>

#include "kernels/cpu/cpu.h"
#include "kernels/math/colsum.h"
#include "kernels/math/norm_modulate.h"

enum { SM_H100 = 132 };

typedef struct lnmod_case {
    int b, t, c, ld;
    size_t n;
    float *x, *g, *mod; /* inputs: x (B,T,C), dout (B,T,C), modulation (B, ld) */
    const float *shift, *scale;
} lnmod_case;

static lnmod_case case_make(int b, int t, int c, int ld, uint64_t key)
{
    lnmod_case k = {b, t, c, ld, (size_t)b * t * c, NULL, NULL, NULL, NULL, NULL};
    /* An offset mean (0.5) and spread 2, as test_math_norm: the two-pass
     * variance matters; scale in [-0.5, 0.5), as FLUX's adaLN rows. */
    k.x = mt_draw_bf16(k.n, key, 2.0f, 0.5f);
    k.g = mt_draw_bf16(k.n, key + 1, 1.0f, 0.0f);
    k.mod = mt_draw_bf16((size_t)b * ld, key + 2, 0.5f, 0.0f);
    k.shift = k.mod;
    k.scale = k.mod + c;
    return k;
}

static void case_free(lnmod_case *k)
{
    free(k->x), free(k->g), free(k->mod);
}

/* ---- the emulation of norm_modulate.cu ---- */

static void emul_forward(float *out, float *ln, float *mean, float *rstd, const lnmod_case *k)
{
    const int c = k->c;
    for (size_t row = 0; row < (size_t)k->b * k->t; row++) {
        const float *x = k->x + row * c;
        const size_t mod = row / k->t * k->ld;
        float s = 0.0f;
        for (int j = 0; j < c; j++)
            s += x[j];
        float mu = s / (float)c, ss = 0.0f;
        for (int j = 0; j < c; j++)
            ss += (x[j] - mu) * (x[j] - mu);
        float r = aitk_norm_rstd(ss, c, 1e-6f);
        for (int j = 0; j < c; j++) {
            float l;
            float y = aitk_layernorm_modulate_out(x[j], mu, r, k->shift[mod + j],
                                                  k->scale[mod + j], &l);
            ln[row * c + j] = aitk_bf16_rounded(l);
            out[row * c + j] = aitk_bf16_rounded(y);
        }
        mean[row] = mu;
        rstd[row] = r;
    }
}

/* dsum[s * ld + j] = the token sum of g (x NULL) or g x, in colsum.h's two
 * stages, stored bf16. */
static void emul_token_sums(float *dsum, const float *g, const float *x, const lnmod_case *k)
{
    const int t = k->t, c = k->c;
    aitk_colsum_grid grid = aitk_colsum_grid_for(t, c, k->b, 256, SM_H100);
    float *partials = mt_alloc((size_t)k->b * grid.chunks * c);
    for (int s = 0; s < k->b; s++)
        for (int ch = 0; ch < grid.chunks; ch++)
            for (int j = 0; j < c; j++) {
                int begin, end;
                aitk_colsum_rows(&grid, t, ch, &begin, &end);
                float acc = 0.0f;
                for (int i = begin; i < end; i++) {
                    size_t at = ((size_t)s * t + i) * c + j;
                    acc += x ? g[at] * x[at] : g[at];
                }
                partials[aitk_colsum_at(&grid, c, (size_t)s, ch, j)] = acc;
            }
    for (int s = 0; s < k->b; s++)
        for (int j = 0; j < c; j++)
            dsum[(size_t)s * k->ld + j] =
                aitk_bf16_rounded(aitk_colsum_finish(&grid, partials, c, (size_t)s, j));
    free(partials);
}

static void emul_backward(float *dx, float *dshift, float *dscale, const float *ln,
                          const float *mean, const float *rstd, const lnmod_case *k)
{
    const int c = k->c;
    emul_token_sums(dshift, k->g, NULL, k);
    emul_token_sums(dscale, k->g, ln, k);
    for (size_t row = 0; row < (size_t)k->b * k->t; row++) {
        const float *x = k->x + row * c, *g = k->g + row * c, *sc = k->scale + row / k->t * k->ld;
        float sg = 0.0f, sgx = 0.0f;
        for (int j = 0; j < c; j++) {
            float gl = aitk_layernorm_modulate_gl(g[j], sc[j]);
            sg += gl;
            sgx += gl * aitk_layernorm_out(x[j], mean[row], rstd[row]);
        }
        for (int j = 0; j < c; j++)
            dx[row * c + j] = aitk_bf16_rounded(aitk_layernorm_modulate_dx(
                g[j], sc[j], x[j], mean[row], rstd[row], sg / (float)c, sgx / (float)c));
    }
}

/* ---- the CPU reference: layernorm, then modulate ---- */

typedef struct lnmod_out {
    float *out, *ln, *mean, *rstd, *dx, *dmod; /* dmod (B, ld): dshift at 0, dscale at C */
} lnmod_out;

static lnmod_out out_alloc(const lnmod_case *k)
{
    size_t rows = (size_t)k->b * k->t;
    lnmod_out o = {mt_alloc(k->n), mt_alloc(k->n), mt_alloc(rows), mt_alloc(rows),
                   mt_alloc(k->n), mt_alloc((size_t)k->b * k->ld)};
    return o;
}

static void out_free(lnmod_out *o)
{
    free(o->out), free(o->ln), free(o->mean), free(o->rstd), free(o->dx), free(o->dmod);
}

static void separate_ops(lnmod_out *o, const lnmod_case *k)
{
    const int b = k->b, t = k->t, c = k->c, ld = k->ld;
    float *d_ln = mt_alloc(k->n);
    assert_int_equal(aitk_cpu_layernorm_forward(o->ln, o->mean, o->rstd, k->x, b * t, c, 1e-6f),
                     AITK_OK);
    assert_int_equal(aitk_cpu_modulate_forward(o->out, o->ln, k->shift, k->scale, b, t, c, ld),
                     AITK_OK);
    assert_int_equal(aitk_cpu_modulate_backward(d_ln, o->dmod, o->dmod + c, k->g, o->ln,
                                                k->scale, b, t, c, ld),
                     AITK_OK);
    assert_int_equal(aitk_cpu_layernorm_backward(o->dx, d_ln, k->x, o->mean, o->rstd, b * t, c),
                     AITK_OK);
    free(d_ln);
}

/* ---- tests ---- */

static void emulation_case(int b, int t, int c, int ld, uint64_t key)
{
    lnmod_case k = case_make(b, t, c, ld, key);
    lnmod_out ref = out_alloc(&k), got = out_alloc(&k);
    separate_ops(&ref, &k);
    emul_forward(got.out, got.ln, got.mean, got.rstd, &k);
    emul_backward(got.dx, got.dmod, got.dmod + c, got.ln, got.mean, got.rstd, &k);
    const size_t rows = (size_t)b * t;
    /* Statistics are fp32 on both sides: fp32 vs double sums only. */
    mt_close("fused mean", got.mean, ref.mean, rows, 1e-4f, 1e-5f);
    mt_close("fused rstd", got.rstd, ref.rstd, rows, 1e-4f, 0.0f);
    /* ln (|ln| < ~2) and out = ln (1 + scale) + shift: one bf16 store each
     * (2^-9 relative); the modulation reads the fp32 ln on both sides. */
    mt_close("fused ln", got.ln, ref.ln, k.n, 4e-3f, 1e-4f);
    mt_close("fused out", got.out, ref.out, k.n, 4e-3f, 1e-4f);
    /* dx ~ r |g| (1 + scale) <~ 1.5: the gradient reaching ln is fp32 on
     * both sides (never stored); fp32 row sums and one bf16 store. */
    mt_close("fused dinp", got.dx, ref.dx, k.n, 4e-3f, 3e-4f);
    /* dshift: fp32 vs double token sums, one bf16 store (as
     * test_math_modulate). dscale sums g ln over T tokens, and the GPU's ln
     * is the bf16 copy (as PyTorch's saved norm output is): each term is off
     * by |g ln| times a rounding error of at most 2^-8 relative, spread
     * evenly, so standard deviation 2^-8/sqrt(3) |g ln|, random in sign. The
     * sum's deviation is sigma = sqrt(T) 2^-8/sqrt(3) rms(g ln); 5 sigma
     * covers the worst of B C sums (4.3 sigma at 1 in 10^5), and one
     * missing or doubled token (~rms(g ln) ~0.5) is still several times
     * outside it. */
    double sq = 0.0;
    for (size_t i = 0; i < k.n; i++)
        sq += (double)k.g[i] * k.g[i] * ref.ln[i] * ref.ln[i];
    const float dscale_atol = (float)(5.0 * sqrt((double)t) / 256.0 / sqrt(3.0) * sqrt(sq / k.n));
    printf("T = %d: dscale atol %.4f (rms(g ln) %.3f)\n", t, dscale_atol, sqrt(sq / k.n));
    float *dsh = mt_alloc((size_t)b * c), *dsh_ref = mt_alloc((size_t)b * c);
    float *dsc = mt_alloc((size_t)b * c), *dsc_ref = mt_alloc((size_t)b * c);
    for (int s = 0; s < b; s++)
        for (int j = 0; j < c; j++) {
            size_t at = (size_t)s * ld + j, to = (size_t)s * c + j;
            dsh[to] = got.dmod[at], dsh_ref[to] = ref.dmod[at];
            dsc[to] = got.dmod[at + c], dsc_ref[to] = ref.dmod[at + c];
        }
    mt_close("fused dshift", dsh, dsh_ref, (size_t)b * c, 5e-3f, 1e-4f);
    mt_close("fused dscale", dsc, dsc_ref, (size_t)b * c, 5e-3f, dscale_atol);
    free(dsh), free(dsh_ref), free(dsc), free(dsc_ref);
    out_free(&ref), out_free(&got);
    case_free(&k);
}

static void test_emulation_double_block(void **state)
{
    (void)state;
    emulation_case(2, 96, 3072, 6 * 3072, 81);
}

static void test_emulation_final_layer(void **state)
{
    (void)state;
    emulation_case(1, 256, 3072, 2 * 3072, 91); /* one sample per call, ld_mod = 2C */
}

/* The CPU's fused op gives the separate ops' bits, with dinp in place of
 * dout as well (ops.h allows the alias). */
static void cpu_case(int b, int t, int c, int ld, uint64_t key)
{
    lnmod_case k = case_make(b, t, c, ld, key);
    lnmod_out ref = out_alloc(&k), got = out_alloc(&k); /* dmod zeroed on both sides */
    separate_ops(&ref, &k);
    assert_int_equal(aitk_cpu_layernorm_modulate_forward(got.out, got.ln, got.mean, got.rstd,
                                                         k.x, k.shift, k.scale, b, t, c, ld,
                                                         1e-6f),
                     AITK_OK);
    float *dout = mt_copy(k.g, k.n);
    assert_int_equal(aitk_cpu_layernorm_modulate_backward(dout, got.dmod, got.dmod + c, dout,
                                                          k.x, got.ln, got.mean, got.rstd,
                                                          k.scale, b, t, c, ld),
                     AITK_OK);
    assert_memory_equal(got.out, ref.out, k.n * sizeof(float));
    assert_memory_equal(got.ln, ref.ln, k.n * sizeof(float));
    assert_memory_equal(got.mean, ref.mean, (size_t)b * t * sizeof(float));
    assert_memory_equal(got.rstd, ref.rstd, (size_t)b * t * sizeof(float));
    assert_memory_equal(dout, ref.dx, k.n * sizeof(float));
    assert_memory_equal(got.dmod, ref.dmod, (size_t)b * ld * sizeof(float));
    free(dout);
    out_free(&ref), out_free(&got);
    case_free(&k);
}

static void test_cpu_fused_is_bitwise_separate(void **state)
{
    (void)state;
    cpu_case(2, 96, 3072, 6 * 3072, 101);
    cpu_case(1, 256, 3072, 2 * 3072, 111);
    cpu_case(3, 5, 40, 3 * 40, 121); /* under the OpenMP threshold: the serial loops */
}

/* Shapes and NULL tensors are refused, not computed on. */
static void test_cpu_refuses_bad_calls(void **state)
{
    (void)state;
    float buf[64] = {0}, st[8] = {0};
    assert_int_equal(aitk_cpu_layernorm_modulate_forward(buf, buf, st, st, buf, buf, buf, 1, 2,
                                                         8, 4, 1e-6f),
                     AITK_E_INVAL); /* ld_mod < c */
    assert_int_equal(aitk_cpu_layernorm_modulate_forward(buf, NULL, st, st, buf, buf, buf, 1, 2,
                                                         8, 8, 1e-6f),
                     AITK_E_INVAL);
    assert_int_equal(aitk_cpu_layernorm_modulate_backward(buf, buf, buf, buf, buf, buf, st, st,
                                                          NULL, 1, 2, 8, 8),
                     AITK_E_INVAL);
    assert_int_equal(aitk_cpu_layernorm_modulate_backward(buf, buf, buf, buf, buf, buf, st, st,
                                                          buf, 1, 0, 8, 8),
                     AITK_E_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_emulation_double_block),
        cmocka_unit_test(test_emulation_final_layer),
        cmocka_unit_test(test_cpu_fused_is_bitwise_separate),
        cmocka_unit_test(test_cpu_refuses_bad_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
