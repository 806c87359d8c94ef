/* Finite-difference gradient check of attention: plain multi-head and GQA
 * (4 query heads over 2 kv heads), with T longer than nothing and inputs in
 * [-2, 2] so the softmax is far from uniform. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "kernels/ops.h"
#include "kt.h"

typedef struct attn_ctx {
    int b, t, hq, hkv, d;
    float scale;
    float *q, *k, *v, *out, *lse;
} attn_ctx;

static void attn_fwd(void *p)
{
    attn_ctx *c = p;
    assert_int_equal(aitk_ops_cpu()->attention_forward(KT_A(c->out), c->lse, KT_A(c->q), KT_A(c->k),
                                                       KT_A(c->v), c->b, c->t, c->hq, c->hkv, c->d,
                                                       c->scale),
                     AITK_OK);
}

static void check_attention(int hq, int hkv, uint64_t seed)
{
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {seed};
    attn_ctx c = {.b = 2, .t = 5, .hq = hq, .hkv = hkv, .d = 6};
    c.scale = 1.0f / sqrtf((float)c.d);
    size_t nq = (size_t)c.b * c.t * hq * c.d, nk = (size_t)c.b * c.t * hkv * c.d;
    c.q = kt_alloc(nq), c.k = kt_alloc(nk), c.v = kt_alloc(nk);
    c.out = kt_alloc(nq), c.lse = kt_alloc((size_t)c.b * hq * c.t);
    kt_fill(&rng, c.q, nq, -2, 2);
    kt_fill(&rng, c.k, nk, -2, 2);
    kt_fill(&rng, c.v, nk, -1, 1);
    float *wl = kt_alloc(nq), *dq = kt_alloc(nq), *dk = kt_alloc(nk), *dv = kt_alloc(nk);
    kt_fill(&rng, wl, nq, -1, 1);
    kt_fd fd = {attn_fwd, &c, c.out, nq, wl};
    kt_fd_loss(&fd);
    kt_fill_value(dq, nq, NAN);
    kt_fill_value(dk, nk, NAN);
    kt_fill_value(dv, nk, NAN);
    assert_int_equal(ops->attention_backward(KT_A(dq), KT_A(dk), KT_A(dv), KT_A(wl), KT_A(c.q),
                                             KT_A(c.k), KT_A(c.v), KT_A(c.out), c.lse, c.b, c.t, hq,
                                             hkv, c.d, c.scale),
                     AITK_OK);
    assert_int_equal(kt_fd_check(&fd, c.q, dq, nq, "attention dq"), 0);
    assert_int_equal(kt_fd_check(&fd, c.k, dk, nk, "attention dk"), 0);
    assert_int_equal(kt_fd_check(&fd, c.v, dv, nk, "attention dv"), 0);
    free(c.q), free(c.k), free(c.v), free(c.out), free(c.lse);
    free(wl), free(dq), free(dk), free(dv);
}

static void test_attention_mha(void **state)
{
    (void)state;
    check_attention(2, 2, 41);
}

static void test_attention_gqa(void **state)
{
    (void)state;
    check_attention(4, 2, 42);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_mha),
        cmocka_unit_test(test_attention_gqa),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
