/* Finite-difference gradient checks: adaLN modulation, gated residual,
 * LayerNorm fused with modulation, RoPE.
 *
 * The modulation vectors live as chunks of one (B, 3C) buffer, as they do in
 * FLUX (chunks of the modulation linear's output), so the strided access
 * (ld_mod) is what gets checked; entries outside the chunks must stay 0. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops.h"
#include "kt.h"

enum { B = 2, T = 3, C = 5, LD = 3 * C };

typedef struct mod_ctx {
    float *x, *mod, *resid0, *y;
    bool gated;
} mod_ctx;

static void mod_fwd(void *p)
{
    mod_ctx *c = p;
    const aitk_ops *ops = aitk_ops_cpu();
    if (c->gated) {
        memcpy(c->y, c->resid0, sizeof(float) * B * T * C);
        assert_int_equal(
            ops->gated_residual_forward(KT_A(c->y), KT_A(c->x), KT_A(c->mod + 2 * C), B, T, C, LD),
            AITK_OK);
    } else {
        assert_int_equal(ops->modulate_forward(KT_A(c->y), KT_A(c->x), KT_A(c->mod),
                                               KT_A(c->mod + C), B, T, C, LD),
                         AITK_OK);
    }
}

static void check_mod(bool gated)
{
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {gated ? 21u : 22u};
    mod_ctx c = {kt_alloc(B * T * C), kt_alloc(B * LD), kt_alloc(B * T * C),
                 kt_alloc(B * T * C), gated};
    kt_fill(&rng, c.x, B * T * C, -1, 1);
    kt_fill(&rng, c.mod, B * LD, -1, 1);
    kt_fill(&rng, c.resid0, B * T * C, -1, 1);
    float *wl = kt_alloc(B * T * C), *dx = kt_alloc(B * T * C), *dmod = kt_alloc(B * LD);
    kt_fill(&rng, wl, B * T * C, -1, 1);
    kt_fd fd = {mod_fwd, &c, c.y, B * T * C, wl};
    kt_fd_loss(&fd);
    kt_fill_value(dx, B * T * C, NAN);
    /* The chunks the op owns start as NaN (must be written); the rest as 0. */
    for (int s = 0; s < B; s++)
        for (int j = 0; j < C; j++) {
            if (gated)
                dmod[s * LD + 2 * C + j] = NAN;
            else
                dmod[s * LD + j] = dmod[s * LD + C + j] = NAN;
        }
    if (gated) {
        assert_int_equal(ops->gated_residual_backward(KT_A(dx), KT_A(dmod + 2 * C), KT_A(wl),
                                                      KT_A(c.x), KT_A(c.mod + 2 * C), B, T, C, LD),
                         AITK_OK);
        assert_int_equal(kt_fd_check(&fd, c.x, dx, B * T * C, "gated_residual dx"), 0);
        assert_int_equal(kt_fd_check(&fd, c.mod, dmod, B * LD, "gated_residual dgate"), 0);
        /* The residual passes through: dL/dresid0 = dresid = w, by construction. */
        assert_int_equal(kt_fd_check(&fd, c.resid0, wl, B * T * C, "gated_residual dresid"), 0);
    } else {
        assert_int_equal(ops->modulate_backward(KT_A(dx), KT_A(dmod), KT_A(dmod + C), KT_A(wl),
                                                KT_A(c.x), KT_A(c.mod + C), B, T, C, LD),
                         AITK_OK);
        assert_int_equal(kt_fd_check(&fd, c.x, dx, B * T * C, "modulate dx"), 0);
        assert_int_equal(kt_fd_check(&fd, c.mod, dmod, B * LD, "modulate dshift/dscale"), 0);
    }
    free(c.x), free(c.mod), free(c.resid0), free(c.y), free(wl), free(dx), free(dmod);
}

static void test_modulate(void **state)
{
    (void)state;
    check_mod(false);
}

static void test_gated_residual(void **state)
{
    (void)state;
    check_mod(true);
}

/* ---- LayerNorm + modulation (layernorm_modulate_*), rows of LC = 24 as
 * test_fd_layers' LayerNorm, the modulation chunks 0 and 1 of (B, 3 LC) ---- */
enum { LC = 24, LLD = 3 * LC };

typedef struct lnmod_ctx {
    float *x, *mod, *y, *ln, *mean, *rstd;
} lnmod_ctx;

static void lnmod_fwd(void *p)
{
    lnmod_ctx *c = p;
    assert_int_equal(aitk_ops_cpu()->layernorm_modulate_forward(
                         KT_A(c->y), KT_A(c->ln), c->mean, c->rstd, KT_A(c->x), KT_A(c->mod),
                         KT_A(c->mod + LC), B, T, LC, LLD, 1e-6f),
                     AITK_OK);
}

static void test_layernorm_modulate(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {24};
    const size_t n = (size_t)B * T * LC;
    lnmod_ctx c = {kt_alloc(n), kt_alloc(B * LLD), kt_alloc(n), kt_alloc(n), kt_alloc(B * T),
                   kt_alloc(B * T)};
    kt_fill(&rng, c.x, n, -1.0f, 2.0f); /* rows with a mean away from 0 */
    kt_fill(&rng, c.mod, B * LLD, -1, 1);
    float *wl = kt_alloc(n), *dx = kt_alloc(n), *dmod = kt_alloc(B * LLD);
    kt_fill(&rng, wl, n, -1, 1);
    kt_fd fd = {lnmod_fwd, &c, c.y, n, wl};
    kt_fd_loss(&fd); /* also leaves the forward's ln, mean and rstd for backward */
    kt_fill_value(dx, n, NAN);
    for (int s = 0; s < B; s++)
        for (int j = 0; j < LC; j++)
            dmod[s * LLD + j] = dmod[s * LLD + LC + j] = NAN; /* must be written; the rest 0 */
    assert_int_equal(ops->layernorm_modulate_backward(KT_A(dx), KT_A(dmod), KT_A(dmod + LC),
                                                      KT_A(wl), KT_A(c.x), KT_A(c.ln), c.mean,
                                                      c.rstd, KT_A(c.mod + LC), B, T, LC, LLD),
                     AITK_OK);
    assert_int_equal(kt_fd_check(&fd, c.x, dx, n, "layernorm_modulate dx"), 0);
    assert_int_equal(kt_fd_check(&fd, c.mod, dmod, B * LLD, "layernorm_modulate dshift/dscale"),
                     0);
    free(c.x), free(c.mod), free(c.y), free(c.ln), free(c.mean), free(c.rstd);
    free(wl), free(dx), free(dmod);
}

/* ---- RoPE: head_dim 12 split (2, 4, 6) over the three axes ---- */
enum { RH = 2, RD = 12 };

typedef struct rope_ctx {
    float *x, *y, *cos_t, *sin_t;
} rope_ctx;

static void rope_fwd(void *p)
{
    rope_ctx *c = p;
    assert_int_equal(
        aitk_ops_cpu()->rope_forward(KT_A(c->y), KT_A(c->x), c->cos_t, c->sin_t, B, T, RH, RD),
        AITK_OK);
}

static void test_rope(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {23};
    const int axes[3] = {2, 4, 6};
    size_t n = (size_t)B * T * RH * RD;
    float pos[T * 3] = {0, 0, 0, 0, 1, 2, 0, 5, 3};
    rope_ctx c = {kt_alloc(n), kt_alloc(n), kt_alloc(T * RD / 2), kt_alloc(T * RD / 2)};
    assert_int_equal(ops->rope_table(c.cos_t, c.sin_t, pos, T, RD, axes, 10000.0f), AITK_OK);
    kt_fill(&rng, c.x, n, -1, 1);
    float *wl = kt_alloc(n), *dx = kt_alloc(n);
    kt_fill(&rng, wl, n, -1, 1);
    kt_fd fd = {rope_fwd, &c, c.y, n, wl};
    kt_fd_loss(&fd);
    kt_fill_value(dx, n, NAN);
    assert_int_equal(ops->rope_backward(KT_A(dx), KT_A(wl), c.cos_t, c.sin_t, B, T, RH, RD),
                     AITK_OK);
    assert_int_equal(kt_fd_check(&fd, c.x, dx, n, "rope dx"), 0);
    /* In place (out == inp) gives the same result as out of place. */
    float *inplace = kt_alloc(n);
    memcpy(inplace, wl, n * sizeof *inplace);
    assert_int_equal(
        ops->rope_backward(KT_A(inplace), KT_A(inplace), c.cos_t, c.sin_t, B, T, RH, RD), AITK_OK);
    assert_memory_equal(inplace, dx, n * sizeof *dx);
    free(c.x), free(c.y), free(c.cos_t), free(c.sin_t), free(wl), free(dx), free(inplace);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modulate),
        cmocka_unit_test(test_gated_residual),
        cmocka_unit_test(test_layernorm_modulate),
        cmocka_unit_test(test_rope),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
