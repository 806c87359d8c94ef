/* Finite-difference gradient checks: LoRA linear, LayerNorm, RMSNorm.
 *
 * Also checks the backward contract of ops.h: parameter gradients are added
 * to (buffers start at 0.25 and must end at 0.25 + gradient), activation
 * gradients are written (buffers start as NaN and must be overwritten). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "kernels/ops.h"
#include "kt.h"

static void sub_value(float *x, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        x[i] -= v;
}

/* ---- LoRA linear ---- */
typedef struct lora_ctx {
    int n, in, out, r;
    float scale;
    float *x, *w, *bias, *la, *lb, *y, *xa;
} lora_ctx;

static void lora_fwd(void *p)
{
    lora_ctx *c = p;
    assert_int_equal(aitk_ops_cpu()->lora_linear_forward(KT_A(c->y), KT_A(c->xa), KT_A(c->x),
                                                         KT_A(c->w), KT_A(c->bias), c->la, c->lb,
                                                         c->n, c->in, c->out, c->r, c->scale),
                     AITK_OK);
}

static void check_lora(int r, bool with_bias, bool accumulate_dx)
{
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {42 + (uint64_t)r};
    lora_ctx c = {.n = 5, .in = 7, .out = 6, .r = r, .scale = 16.0f / 3.0f / 4.0f};
    c.x = kt_alloc((size_t)c.n * c.in);
    c.w = kt_alloc((size_t)c.out * c.in);
    c.bias = with_bias ? kt_alloc((size_t)c.out) : NULL;
    c.la = kt_alloc((size_t)(r ? r : 1) * c.in);
    c.lb = kt_alloc((size_t)c.out * (r ? r : 1));
    c.y = kt_alloc((size_t)c.n * c.out);
    c.xa = kt_alloc((size_t)c.n * (r ? r : 1));
    kt_fill(&rng, c.x, (size_t)c.n * c.in, -1, 1);
    kt_fill(&rng, c.w, (size_t)c.out * c.in, -1, 1);
    if (c.bias)
        kt_fill(&rng, c.bias, (size_t)c.out, -1, 1);
    kt_fill(&rng, c.la, (size_t)(r ? r : 1) * c.in, -1, 1);
    kt_fill(&rng, c.lb, (size_t)c.out * (r ? r : 1), -1, 1);
    float *wl = kt_alloc((size_t)c.n * c.out);
    kt_fill(&rng, wl, (size_t)c.n * c.out, -1, 1);
    kt_fd fd = {lora_fwd, &c, c.y, (size_t)c.n * c.out, wl};
    kt_fd_loss(&fd);

    float *dx = kt_alloc((size_t)c.n * c.in);
    float *dla = kt_alloc((size_t)c.in * (r ? r : 1));
    float *dlb = kt_alloc((size_t)c.out * (r ? r : 1));
    float *work = kt_alloc((size_t)c.n * (r ? r : 1));
    kt_fill_value(dx, (size_t)c.n * c.in, accumulate_dx ? 1.0f : NAN);
    kt_fill_value(dla, (size_t)c.in * (r ? r : 1), 0.25f);
    kt_fill_value(dlb, (size_t)c.out * (r ? r : 1), 0.25f);
    assert_int_equal(ops->lora_linear_backward(
                         KT_A(dx), r ? dla : NULL, r ? dlb : NULL, KT_A(r ? work : NULL), KT_A(wl),
                         KT_A(c.x), KT_A(r ? c.xa : NULL), KT_A(c.w), r ? c.la : NULL,
                         r ? c.lb : NULL, c.n, c.in, c.out, r, c.scale, accumulate_dx),
                     AITK_OK);
    if (accumulate_dx)
        sub_value(dx, (size_t)c.n * c.in, 1.0f);
    assert_int_equal(kt_fd_check(&fd, c.x, dx, (size_t)c.n * c.in, "lora_linear dx"), 0);
    if (r) {
        sub_value(dla, (size_t)r * c.in, 0.25f);
        sub_value(dlb, (size_t)c.out * r, 0.25f);
        assert_int_equal(kt_fd_check(&fd, c.la, dla, (size_t)r * c.in, "lora_linear dA"), 0);
        assert_int_equal(kt_fd_check(&fd, c.lb, dlb, (size_t)c.out * r, "lora_linear dB"), 0);
    }
    free(c.x), free(c.w), free(c.bias), free(c.la), free(c.lb), free(c.y), free(c.xa);
    free(wl), free(dx), free(dla), free(dlb), free(work);
}

static void test_lora_linear(void **state)
{
    (void)state;
    check_lora(3, true, false);
    check_lora(4, false, false);
}

static void test_lora_linear_accumulate_dx(void **state)
{
    (void)state;
    check_lora(2, true, true);
}

static void test_plain_linear(void **state)
{
    (void)state;
    check_lora(0, true, false);
}

/* The checker itself must be able to fail: a gradient 5% off is caught. */
static void test_checker_rejects_wrong_gradient(void **state)
{
    (void)state;
    kt_rng rng = {7};
    lora_ctx c = {.n = 3, .in = 4, .out = 5, .r = 0, .scale = 1.0f};
    c.x = kt_alloc(12);
    c.w = kt_alloc(20);
    c.y = kt_alloc(15);
    kt_fill(&rng, c.x, 12, -1, 1);
    kt_fill(&rng, c.w, 20, -1, 1);
    float *wl = kt_alloc(15), *dx = kt_alloc(12);
    kt_fill(&rng, wl, 15, -1, 1);
    kt_fd fd = {lora_fwd, &c, c.y, 15, wl};
    assert_int_equal(aitk_ops_cpu()->lora_linear_backward(KT_A(dx), NULL, NULL, NULL, KT_A(wl),
                                                          KT_A(c.x), NULL, KT_A(c.w), NULL, NULL, 3,
                                                          4, 5, 0, 1.0f, false),
                     AITK_OK);
    for (int i = 0; i < 12; i++)
        dx[i] *= 1.05f;
    assert_true(kt_fd_check(&fd, c.x, dx, 12, "deliberately wrong") > 0);
    free(c.x), free(c.w), free(c.y), free(wl), free(dx);
}

/* ---- LayerNorm / RMSNorm ---- */
typedef struct norm_ctx {
    int n, c;
    float *x, *weight, *y, *mean, *rstd;
    bool rms;
} norm_ctx;

static void norm_fwd(void *p)
{
    norm_ctx *c = p;
    const aitk_ops *ops = aitk_ops_cpu();
    aitk_status st = c->rms ? ops->rmsnorm_forward(KT_A(c->y), c->rstd, KT_A(c->x), KT_A(c->weight),
                                                   c->n, c->c, 1e-6f)
                            : ops->layernorm_forward(KT_A(c->y), c->mean, c->rstd, KT_A(c->x), c->n,
                                                     c->c, 1e-6f);
    assert_int_equal(st, AITK_OK);
}

static void check_norm(bool rms)
{
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {rms ? 11u : 12u};
    norm_ctx c = {.n = 4, .c = 24, .rms = rms};
    size_t nc = (size_t)c.n * c.c;
    c.x = kt_alloc(nc);
    c.weight = kt_alloc((size_t)c.c);
    c.y = kt_alloc(nc);
    c.mean = kt_alloc((size_t)c.n);
    c.rstd = kt_alloc((size_t)c.n);
    /* Rows with a mean away from 0, so LayerNorm's mean term matters. */
    kt_fill(&rng, c.x, nc, -1.0f, 2.0f);
    kt_fill(&rng, c.weight, (size_t)c.c, 0.5f, 1.5f);
    float *wl = kt_alloc(nc), *dx = kt_alloc(nc), *dw = kt_alloc((size_t)c.c);
    kt_fill(&rng, wl, nc, -1, 1);
    kt_fd fd = {norm_fwd, &c, c.y, nc, wl};
    kt_fd_loss(&fd);
    kt_fill_value(dx, nc, NAN);
    kt_fill_value(dw, (size_t)c.c, 0.25f);
    if (rms) {
        assert_int_equal(ops->rmsnorm_backward(KT_A(dx), dw, KT_A(wl), KT_A(c.x), KT_A(c.weight),
                                               c.rstd, c.n, c.c),
                         AITK_OK);
        sub_value(dw, (size_t)c.c, 0.25f);
        assert_int_equal(kt_fd_check(&fd, c.x, dx, nc, "rmsnorm dx"), 0);
        assert_int_equal(kt_fd_check(&fd, c.weight, dw, (size_t)c.c, "rmsnorm dweight"), 0);
        /* Frozen weight: NULL dweight is allowed and dx is the same. */
        float *dx2 = kt_alloc(nc);
        assert_int_equal(ops->rmsnorm_backward(KT_A(dx2), NULL, KT_A(wl), KT_A(c.x), KT_A(c.weight),
                                               c.rstd, c.n, c.c),
                         AITK_OK);
        assert_memory_equal(dx, dx2, nc * sizeof *dx);
        free(dx2);
    } else {
        assert_int_equal(
            ops->layernorm_backward(KT_A(dx), KT_A(wl), KT_A(c.x), c.mean, c.rstd, c.n, c.c),
            AITK_OK);
        assert_int_equal(kt_fd_check(&fd, c.x, dx, nc, "layernorm dx"), 0);
    }
    free(c.x), free(c.weight), free(c.y), free(c.mean), free(c.rstd);
    free(wl), free(dx), free(dw);
}

static void test_layernorm(void **state)
{
    (void)state;
    check_norm(false);
}

static void test_rmsnorm(void **state)
{
    (void)state;
    check_norm(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker_rejects_wrong_gradient),
        cmocka_unit_test(test_lora_linear),
        cmocka_unit_test(test_lora_linear_accumulate_dx),
        cmocka_unit_test(test_plain_linear),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_rmsnorm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
