/* kernels/math/modulate.h as modulate.cu runs it (adaLN modulation, gated
 * residual, RoPE table and rotation), compared with the CPU reference
 * (kernels/cpu/modulate.c) on the same bf16-rounded inputs. Shapes: FLUX's
 * C = 3072 with the six modulation chunks (ld_mod = 6C), and its RoPE
 * (axes 16/56/56 on head_dim 128) and OmniGen2's (40/40/40 on 120). */
#include "mt.h"

#include "kernels/cpu/cpu.h"
#include "kernels/math/colsum.h"
#include "kernels/math/modulate.h"

enum { B = 2, T = 96, C = 3072, LD = 6 * C, SM_H100 = 132 };

/* out[s * LD + j] = sum over tokens of g (x NULL) or g x, per sample s and
 * channel j, as modulate.cu's two stages add them (kernels/math/colsum.h),
 * stored bf16. */
static void token_sums(float *out, const float *g, const float *x, int sm_count)
{
    aitk_colsum_grid grid = aitk_colsum_grid_for(T, C, B, 256, sm_count);
    float *partials = mt_alloc((size_t)B * grid.chunks * C);
    for (int s = 0; s < B; s++)
        for (int k = 0; k < grid.chunks; k++)
            for (int j = 0; j < C; j++) {
                int begin, end;
                aitk_colsum_rows(&grid, T, k, &begin, &end);
                float acc = 0.0f;
                for (int i = begin; i < end; i++) {
                    size_t at = ((size_t)s * T + i) * C + j;
                    acc += x ? g[at] * x[at] : g[at];
                }
                partials[aitk_colsum_at(&grid, C, (size_t)s, k, j)] = acc;
            }
    for (int s = 0; s < B; s++)
        for (int j = 0; j < C; j++)
            out[(size_t)s * LD + j] = aitk_bf16_rounded(aitk_colsum_finish(&grid, partials, C,
                                                                            (size_t)s, j));
    free(partials);
}

static void test_modulate(void **state)
{
    (void)state;
    size_t n = (size_t)B * T * C;
    float *x = mt_draw_bf16(n, 61, 2.0f, 0.0f), *g = mt_draw_bf16(n, 62, 1.0f, 0.0f);
    float *mod = mt_draw_bf16((size_t)B * LD, 63, 0.5f, 0.0f);
    const float *shift = mod, *scale = mod + C; /* chunks 0 and 1 of the (B, 6C) output */
    float *y = mt_alloc(n), *y_ref = mt_alloc(n), *dx = mt_alloc(n), *dx_ref = mt_alloc(n);
    float *dmod = mt_alloc((size_t)B * LD), *dmod_ref = mt_alloc((size_t)B * LD);
    for (size_t i = 0; i < n; i++) {
        size_t s = i / ((size_t)T * C), j = i % C;
        y[i] = aitk_bf16_rounded(aitk_modulate(x[i], shift[s * LD + j], scale[s * LD + j]));
        dx[i] = aitk_bf16_rounded(aitk_modulate_dx(g[i], scale[s * LD + j]));
    }
    /* dshift, dscale: two-stage fp32 sums over the tokens, stored bf16. */
    token_sums(dmod, g, NULL, SM_H100);
    token_sums(dmod + C, g, x, SM_H100);
    assert_int_equal(aitk_cpu_modulate_forward(y_ref, x, shift, scale, B, T, C, LD), AITK_OK);
    assert_int_equal(aitk_cpu_modulate_backward(dx_ref, dmod_ref, dmod_ref + C, g, x, scale, B,
                                                T, C, LD),
                     AITK_OK);
    mt_close("modulate forward", y, y_ref, n, 5e-3f, 1e-6f);
    mt_close("modulate dx", dx, dx_ref, n, 5e-3f, 1e-6f);
    /* Sums of 96 terms of size ~1 that cancel: fp32 vs double leaves ~1e-5
     * absolute; the bf16 store adds half an ulp. */
    mt_close("modulate dshift/dscale", dmod, dmod_ref, (size_t)B * LD, 5e-3f, 1e-4f);
    free(x), free(g), free(mod), free(y), free(y_ref), free(dx), free(dx_ref), free(dmod),
        free(dmod_ref);
}

static void test_gated_residual(void **state)
{
    (void)state;
    size_t n = (size_t)B * T * C;
    float *x = mt_draw_bf16(n, 71, 2.0f, 0.0f), *g = mt_draw_bf16(n, 72, 1.0f, 0.0f);
    float *resid = mt_draw_bf16(n, 73, 4.0f, 0.0f);
    float *mod = mt_draw_bf16((size_t)B * LD, 74, 0.5f, 0.0f);
    const float *gate = mod + 2 * C;
    float *r = mt_copy(resid, n), *r_ref = mt_copy(resid, n);
    float *dx = mt_alloc(n), *dx_ref = mt_alloc(n);
    float *dgate = mt_alloc((size_t)B * LD), *dgate_ref = mt_alloc((size_t)B * LD);
    for (size_t i = 0; i < n; i++) {
        size_t s = i / ((size_t)T * C), j = i % C;
        r[i] = aitk_bf16_rounded(aitk_gated_residual(r[i], gate[s * LD + j], x[i]));
        dx[i] = aitk_bf16_rounded(g[i] * gate[s * LD + j]);
    }
    token_sums(dgate + 2 * C, g, x, 108); /* an A100's grid: 108 SMs */
    assert_int_equal(aitk_cpu_gated_residual_forward(r_ref, x, gate, B, T, C, LD), AITK_OK);
    assert_int_equal(aitk_cpu_gated_residual_backward(dx_ref, dgate_ref + 2 * C, g, x, gate, B,
                                                      T, C, LD),
                     AITK_OK);
    mt_close("gated residual forward", r, r_ref, n, 5e-3f, 1e-6f);
    mt_close("gated residual dx", dx, dx_ref, n, 5e-3f, 1e-6f);
    mt_close("gated residual dgate", dgate, dgate_ref, (size_t)B * LD, 5e-3f, 1e-4f);
    free(x), free(g), free(resid), free(mod), free(r), free(r_ref), free(dx), free(dx_ref),
        free(dgate), free(dgate_ref);
}

static void rope_case(int d, const int axes[3])
{
    enum { RB = 2, RT = 80, RH = 3 };
    int half = d / 2;
    float *pos = mt_alloc((size_t)RT * 3);
    /* FLUX-like ids: text tokens at 0, image tokens on a 8-wide grid. */
    for (int i = 0; i < RT; i++) {
        pos[i * 3 + 0] = 0.0f;
        pos[i * 3 + 1] = i < 16 ? 0.0f : (float)((i - 16) / 8);
        pos[i * 3 + 2] = i < 16 ? 0.0f : (float)((i - 16) % 8);
    }
    float *cs = mt_alloc((size_t)RT * half), *sn = mt_alloc((size_t)RT * half);
    float *cs_ref = mt_alloc((size_t)RT * half), *sn_ref = mt_alloc((size_t)RT * half);
    for (int i = 0; i < RT; i++)
        for (int p = 0; p < half; p++) {
            int axis = 0;
            double f = aitk_rope_freq(p, axes, 10000.0, &axis);
            double ang = (double)pos[i * 3 + axis] * f;
            cs[(size_t)i * half + p] = (float)cos(ang);
            sn[(size_t)i * half + p] = (float)sin(ang);
        }
    assert_int_equal(aitk_cpu_rope_table(cs_ref, sn_ref, pos, RT, d, axes, 10000.0f), AITK_OK);
    /* The same double arithmetic: equal to the last fp32 bit. */
    mt_close("rope cos", cs, cs_ref, (size_t)RT * half, 0.0f, 0.0f);
    mt_close("rope sin", sn, sn_ref, (size_t)RT * half, 0.0f, 0.0f);
    size_t n = (size_t)RB * RT * RH * d;
    float *x = mt_draw_bf16(n, 81, 3.0f, 0.0f);
    float *y = mt_alloc(n), *y_ref = mt_alloc(n), *b = mt_alloc(n), *b_ref = mt_alloc(n);
    for (size_t q = 0; q < n / 2; q++) {
        size_t p = q % half, tok = (q / half / RH) % RT;
        float c = cs[tok * half + p], s = sn[tok * half + p];
        aitk_rope_rotate(x[2 * q], x[2 * q + 1], c, s, &y[2 * q], &y[2 * q + 1]);
        aitk_rope_rotate(x[2 * q], x[2 * q + 1], c, -s, &b[2 * q], &b[2 * q + 1]);
    }
    for (size_t i = 0; i < n; i++) {
        y[i] = aitk_bf16_rounded(y[i]);
        b[i] = aitk_bf16_rounded(b[i]);
    }
    assert_int_equal(aitk_cpu_rope_forward(y_ref, x, cs_ref, sn_ref, RB, RT, RH, d), AITK_OK);
    assert_int_equal(aitk_cpu_rope_backward(b_ref, x, cs_ref, sn_ref, RB, RT, RH, d), AITK_OK);
    /* x0 c - x1 s cancels when the pair is nearly rotated onto an axis:
     * the absolute floor is the bf16 half-ulp of the inputs' scale (3). */
    mt_close("rope forward", y, y_ref, n, 5e-3f, 6e-3f);
    mt_close("rope backward", b, b_ref, n, 5e-3f, 6e-3f);
    free(pos), free(cs), free(sn), free(cs_ref), free(sn_ref), free(x), free(y), free(y_ref),
        free(b), free(b_ref);
}

static void test_rope_flux(void **state)
{
    (void)state;
    const int axes[3] = {16, 56, 56};
    rope_case(128, axes);
}

static void test_rope_omnigen2(void **state)
{
    (void)state;
    const int axes[3] = {40, 40, 40};
    rope_case(120, axes);
}

static void test_rope_freq_by_hand(void **state)
{
    (void)state;
    const int axes[3] = {16, 56, 56};
    int axis = -1;
    /* Pair 0: axis 0, j 0: theta^0 = 1. */
    assert_float_equal(aitk_rope_freq(0, axes, 10000.0, &axis), 1.0, 0.0);
    assert_int_equal(axis, 0);
    /* Pair 8: first of axis 1 (axes[0]/2 = 8 pairs before it): 1 again. */
    assert_float_equal(aitk_rope_freq(8, axes, 10000.0, &axis), 1.0, 0.0);
    assert_int_equal(axis, 1);
    /* Pair 9: axis 1, j 1: 10000^(-2/56). */
    assert_float_equal(aitk_rope_freq(9, axes, 10000.0, &axis), 0.71968567300115, 1e-12);
    /* Pair 63: the last one, axis 2, j 27: 10000^(-54/56). */
    assert_float_equal(aitk_rope_freq(63, axes, 10000.0, &axis), 1.3894954943731e-4, 1e-15);
    assert_int_equal(axis, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modulate),
        cmocka_unit_test(test_gated_residual),
        cmocka_unit_test(test_rope_flux),
        cmocka_unit_test(test_rope_omnigen2),
        cmocka_unit_test(test_rope_freq_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
