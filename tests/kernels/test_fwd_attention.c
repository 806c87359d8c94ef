/* Forward check of attention against a naive softmax loop written here (in
 * double, the whole score row at once), for MHA, GQA and FLUX's head_dim 128,
 * with T past the kernel's 64-key tile so the online-softmax rescaling runs.
 *
 * Tolerance 1e-5 relative to the largest output: the kernel's fp32 dot
 * products of D <= 128 terms and its fp32 running sums are accurate to a few
 * 1e-7; a wrong head mapping or a missing rescale is off by O(0.1). The
 * log-sum-exp is compared at 1e-5 relative to max(1, |lse|): it is O(log T)
 * for moderate scores, and as large as the largest score for large ones. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "kernels/ops.h"
#include "kt.h"

static void naive_attention(float *out, float *lse, const float *q, const float *k,
                            const float *v, int b, int t, int hq, int hkv, int d, float scale)
{
    double *p = calloc((size_t)t, sizeof *p);
    assert_non_null(p);
    for (int s = 0; s < b; s++)
        for (int h = 0; h < hq; h++) {
            int kvh = h * hkv / hq;
            for (int i = 0; i < t; i++) {
                const float *qi = q + (((size_t)s * t + i) * hq + h) * d;
                double mx = -INFINITY, sum = 0.0;
                for (int j = 0; j < t; j++) {
                    const float *kj = k + (((size_t)s * t + j) * hkv + kvh) * d;
                    double dot = 0.0;
                    for (int x = 0; x < d; x++)
                        dot += (double)qi[x] * kj[x];
                    p[j] = dot * scale;
                    if (p[j] > mx)
                        mx = p[j];
                }
                for (int j = 0; j < t; j++)
                    sum += (p[j] = exp(p[j] - mx));
                for (int x = 0; x < d; x++) {
                    double o = 0.0;
                    for (int j = 0; j < t; j++)
                        o += p[j] / sum * v[(((size_t)s * t + j) * hkv + kvh) * d + x];
                    out[(((size_t)s * t + i) * hq + h) * d + x] = (float)o;
                }
                lse[((size_t)s * hq + h) * t + i] = (float)(mx + log(sum));
            }
        }
    free(p);
}

static void check(int b, int t, int hq, int hkv, int d, float range, uint64_t seed)
{
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {seed};
    size_t nq = (size_t)b * t * hq * d, nk = (size_t)b * t * hkv * d, nl = (size_t)b * hq * t;
    float *q = kt_alloc(nq), *k = kt_alloc(nk), *v = kt_alloc(nk);
    float *out = kt_alloc(nq), *lse = kt_alloc(nl), *ref = kt_alloc(nq), *ref_lse = kt_alloc(nl);
    kt_fill(&rng, q, nq, -range, range);
    kt_fill(&rng, k, nk, -range, range);
    kt_fill(&rng, v, nk, -1, 1);
    float scale = 1.0f / sqrtf((float)d);
    assert_int_equal(
        ops->attention_forward(KT_A(out), lse, KT_A(q), KT_A(k), KT_A(v), b, t, hq, hkv, d, scale),
        AITK_OK);
    naive_attention(ref, ref_lse, q, k, v, b, t, hq, hkv, d, scale);
    double err = kt_max_rel_err(out, ref, nq, 1e-3);
    double lse_err = 0.0; /* relative to max(1, |lse|) */
    for (size_t i = 0; i < nl; i++)
        lse_err = fmax(lse_err, fabs((double)lse[i] - ref_lse[i]) / fmax(1.0, fabs(ref_lse[i])));
    printf("attention B=%d T=%d Hq=%d Hkv=%d D=%d: out rel err %.3g, lse rel err %.3g\n", b, t,
           hq, hkv, d, err, lse_err);
    assert_true(err < 1e-5);
    assert_true(lse_err < 1e-5);
    free(q), free(k), free(v), free(out), free(lse), free(ref), free(ref_lse);
}

static void test_mha(void **state)
{
    (void)state;
    check(2, 150, 2, 2, 16, 1.5f, 61);
}

static void test_gqa(void **state)
{
    (void)state;
    /* OmniGen2's ratio, 3 query heads per kv head, at its head_dim 120. */
    check(1, 70, 6, 2, 120, 0.5f, 62);
}

static void test_flux_head_dim(void **state)
{
    (void)state;
    check(1, 65, 2, 2, 128, 0.3f, 63);
}

/* Large scores: the running-max form must not overflow where exp(s) would. */
static void test_large_scores_stay_finite(void **state)
{
    (void)state;
    check(1, 20, 1, 1, 8, 8.0f, 64);
}

static void test_rejects_bad_gqa_ratio(void **state)
{
    (void)state;
    float x[64] = {0};
    assert_int_equal(aitk_ops_cpu()->attention_forward(KT_A(x), x, KT_A(x), KT_A(x), KT_A(x), 1, 1,
                                                       3, 2, 4, 1.0f),
                     AITK_E_INVAL);
}

/* The transient strip cannot be allocated: reported, not crashed on. */
static void test_out_of_memory_is_reported(void **state)
{
    (void)state;
    float x[4 * 8] = {0};
    aitk_alloc_fail_after(0);
    assert_int_equal(aitk_ops_cpu()->attention_forward(KT_A(x), x, KT_A(x), KT_A(x), KT_A(x), 1, 4,
                                                       1, 1, 8, 1.0f),
                     AITK_E_NOMEM);
    aitk_alloc_fail_after(0);
    assert_int_equal(aitk_ops_cpu()->attention_backward(KT_A(x), KT_A(x), KT_A(x), KT_A(x), KT_A(x),
                                                        KT_A(x), KT_A(x), KT_A(x), x, 1, 4, 1, 1, 8,
                                                        1.0f),
                     AITK_E_NOMEM);
    aitk_alloc_fail_after(-1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mha),
        cmocka_unit_test(test_gqa),
        cmocka_unit_test(test_flux_head_dim),
        cmocka_unit_test(test_large_scores_stay_finite),
        cmocka_unit_test(test_rejects_bad_gqa_ratio),
        cmocka_unit_test(test_out_of_memory_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
