/* Finite-difference gradient checks: GELU (tanh), SiLU, SwiGLU, MSE loss. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "kernels/ops.h"
#include "kt.h"

enum { N = 64 };

typedef enum { OP_GELU, OP_SILU, OP_SWIGLU, OP_MSE } op_kind;

typedef struct pw_ctx {
    op_kind op;
    float *a, *u, *y;
} pw_ctx;

static void pw_fwd(void *p)
{
    pw_ctx *c = p;
    const aitk_ops *ops = aitk_ops_cpu();
    aitk_status st = AITK_E_INTERNAL;
    switch (c->op) {
    case OP_GELU: st = ops->gelu_forward(KT_A(c->y), KT_A(c->a), N); break;
    case OP_SILU: st = ops->silu_forward(KT_A(c->y), KT_A(c->a), N); break;
    case OP_SWIGLU: st = ops->swiglu_forward(KT_A(c->y), KT_A(c->a), KT_A(c->u), N); break;
    case OP_MSE: st = ops->mse_forward(c->y, KT_A(c->a), KT_A(c->u), N); break;
    }
    assert_int_equal(st, AITK_OK);
}

static void check_pw(op_kind op, const char *label)
{
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {31u + (uint64_t)op};
    pw_ctx c = {op, kt_alloc(N), kt_alloc(N), kt_alloc(N)};
    /* [-3, 3]: covers GELU's and SiLU's curved region, not just the tails. */
    kt_fill(&rng, c.a, N, -3, 3);
    kt_fill(&rng, c.u, N, -1, 1);
    float *wl = kt_alloc(N), *da = kt_alloc(N), *du = kt_alloc(N);
    kt_fill(&rng, wl, N, -1, 1);
    kt_fd fd = {pw_fwd, &c, c.y, op == OP_MSE ? 1 : N, wl};
    kt_fd_loss(&fd);
    kt_fill_value(da, N, NAN);
    kt_fill_value(du, N, NAN);
    aitk_status st = AITK_E_INTERNAL;
    switch (op) {
    case OP_GELU: st = ops->gelu_backward(KT_A(da), KT_A(wl), KT_A(c.a), N); break;
    case OP_SILU: st = ops->silu_backward(KT_A(da), KT_A(wl), KT_A(c.a), N); break;
    case OP_SWIGLU:
        st = ops->swiglu_backward(KT_A(da), KT_A(du), KT_A(wl), KT_A(c.a), KT_A(c.u), N);
        break;
    case OP_MSE: st = ops->mse_backward(KT_A(da), wl[0], KT_A(c.a), KT_A(c.u), N); break;
    }
    assert_int_equal(st, AITK_OK);
    assert_int_equal(kt_fd_check(&fd, c.a, da, N, label), 0);
    if (op == OP_SWIGLU)
        assert_int_equal(kt_fd_check(&fd, c.u, du, N, "swiglu du"), 0);
    free(c.a), free(c.u), free(c.y), free(wl), free(da), free(du);
}

static void test_gelu(void **state)
{
    (void)state;
    check_pw(OP_GELU, "gelu dinp");
}

static void test_silu(void **state)
{
    (void)state;
    check_pw(OP_SILU, "silu dinp");
}

static void test_swiglu(void **state)
{
    (void)state;
    check_pw(OP_SWIGLU, "swiglu da");
}

static void test_mse(void **state)
{
    (void)state;
    check_pw(OP_MSE, "mse dpred");
}

/* Forward values by hand: GELU-tanh(1) = 0.5 (1 + tanh(sqrt(2/pi) * 1.044715)),
 * SiLU(1) = 1 / (1 + e^-1), MSE of (1,2) vs (0,0) = 2.5. */
static void test_pointwise_values(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    float x[3] = {1.0f, 0.0f, -2.0f}, y[3];
    assert_int_equal(ops->gelu_forward(KT_A(y), KT_A(x), 3), AITK_OK);
    assert_float_equal(y[0], 0.841192f, 1e-5);
    assert_float_equal(y[1], 0.0f, 0.0);
    assert_float_equal(y[2], -0.0454023f, 1e-6);
    assert_int_equal(ops->silu_forward(KT_A(y), KT_A(x), 3), AITK_OK);
    assert_float_equal(y[0], 0.7310586f, 1e-6);
    assert_float_equal(y[2], -0.2384058f, 1e-6);
    float p[2] = {1, 2}, t[2] = {0, 0}, loss = 0;
    assert_int_equal(ops->mse_forward(&loss, KT_A(p), KT_A(t), 2), AITK_OK);
    assert_float_equal(loss, 2.5f, 0.0);
    assert_int_equal(ops->mse_forward(&loss, KT_A(p), KT_A(t), 0), AITK_E_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_silu),
        cmocka_unit_test(test_swiglu),
        cmocka_unit_test(test_mse),
        cmocka_unit_test(test_pointwise_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
