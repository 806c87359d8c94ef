/* Forward checks of GEMM and the LoRA linear against naive loops written here
 * (in double), plus the copy helpers and argument checking.
 *
 * Tolerance: sums of K <= 40 products of values in [-1, 1] computed in fp32
 * by OpenBLAS; fp32 rounding bounds the error by ~K * 6e-8 * max|term| ~ 3e-6
 * relative to the largest result, so 1e-5 relative leaves margin while a
 * wrong transpose or stride moves results by O(1). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "kernels/ops.h"
#include "kt.h"

/* c (M,N) = alpha op(a) op(b) + beta c, naive, in double. */
static void naive_gemm(float *c, const float *a, const float *b, int m, int n, int k, bool ta,
                       bool tb, float alpha, float beta)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int p = 0; p < k; p++) {
                double av = ta ? a[p * m + i] : a[i * k + p];
                double bv = tb ? b[j * k + p] : b[p * n + j];
                s += av * bv;
            }
            c[i * n + j] = (float)(alpha * s + beta * c[i * n + j]);
        }
}

static void test_gemm_all_transposes_batched(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {51};
    enum { M = 7, N = 9, K = 40, BATCH = 3 };
    /* Strides larger than a matrix, so a stride bug reads the padding. */
    long long sa = M * K + 5, sb = K * N + 3, sc = M * N + 2;
    float *a = kt_alloc(BATCH * sa), *b = kt_alloc(BATCH * sb);
    float *c = kt_alloc(BATCH * sc), *ref = kt_alloc(BATCH * sc);
    for (int combo = 0; combo < 4; combo++) {
        bool ta = combo & 1, tb = combo & 2;
        kt_fill(&rng, a, BATCH * sa, -1, 1);
        kt_fill(&rng, b, BATCH * sb, -1, 1);
        kt_fill(&rng, c, BATCH * sc, -1, 1);
        for (long long i = 0; i < BATCH * sc; i++)
            ref[i] = c[i];
        assert_int_equal(
            ops->gemm(KT_A(c), KT_A(a), KT_A(b), M, N, K, ta, tb, 0.5f, 2.0f, BATCH, sa, sb, sc),
            AITK_OK);
        for (int i = 0; i < BATCH; i++)
            naive_gemm(ref + i * sc, a + i * sa, b + i * sb, M, N, K, ta, tb, 0.5f, 2.0f);
        double err = kt_max_rel_err(c, ref, BATCH * sc, 1e-3);
        printf("gemm ta=%d tb=%d: max rel err %.3g\n", ta, tb, err);
        assert_true(err < 1e-5);
    }
    /* stride 0 broadcasts one B to every batch. */
    kt_fill(&rng, c, BATCH * sc, -1, 1);
    assert_int_equal(
        ops->gemm(KT_A(c), KT_A(a), KT_A(b), M, N, K, false, false, 1.0f, 0.0f, BATCH, sa, 0, sc),
        AITK_OK);
    for (int i = 0; i < BATCH; i++)
        naive_gemm(ref + i * sc, a + i * sa, b, M, N, K, false, false, 1.0f, 0.0f);
    for (int i = 0; i < BATCH; i++)
        assert_true(kt_max_rel_err(c + i * sc, ref + i * sc, M * N, 1e-3) < 1e-5);
    free(a), free(b), free(c), free(ref);
}

static void test_gemm_rejects_bad_arguments(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    float x[4] = {0};
    assert_int_equal(ops->gemm(NULL, KT_A(x), KT_A(x), 2, 2, 1, false, false, 1, 0, 1, 0, 0, 0),
                     AITK_E_INVAL);
    assert_int_equal(ops->gemm(KT_A(x), KT_A(x), KT_A(x), 0, 2, 1, false, false, 1, 0, 1, 0, 0, 0),
                     AITK_E_INVAL);
    /* Two batches writing one C would race on a GPU. */
    assert_int_equal(ops->gemm(KT_A(x), KT_A(x), KT_A(x), 2, 2, 1, false, false, 1, 0, 2, 0, 0, 0),
                     AITK_E_INVAL);
    assert_int_equal(ops->lora_linear_forward(KT_A(x), NULL, KT_A(x), KT_A(x), NULL, NULL, NULL, 1,
                                              2, 2, 1, 1.0f),
                     AITK_E_INVAL);
}

static void test_lora_forward_matches_naive(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    kt_rng rng = {52};
    enum { NR = 6, IN = 11, OUT = 8, R = 4 };
    float scale = 16.0f / R; /* alpha 16, rank 4 */
    float *x = kt_alloc(NR * IN), *w = kt_alloc(OUT * IN), *bias = kt_alloc(OUT);
    float *la = kt_alloc(R * IN), *lb = kt_alloc(OUT * R), *y = kt_alloc(NR * OUT);
    float *xa = kt_alloc(NR * R), *ref = kt_alloc(NR * OUT);
    kt_fill(&rng, x, NR * IN, -1, 1);
    kt_fill(&rng, w, OUT * IN, -1, 1);
    kt_fill(&rng, bias, OUT, -1, 1);
    kt_fill(&rng, la, R * IN, -1, 1);
    kt_fill(&rng, lb, OUT * R, -1, 1);
    kt_fill_value(y, NR * OUT, NAN); /* y is written, not added to */
    assert_int_equal(ops->lora_linear_forward(KT_A(y), KT_A(xa), KT_A(x), KT_A(w), KT_A(bias), la,
                                              lb, NR, IN, OUT, R, scale),
                     AITK_OK);
    /* y = x W^T + b + scale * x (B A)^T, with the merged delta formed here. */
    for (int i = 0; i < NR; i++)
        for (int o = 0; o < OUT; o++) {
            double s = bias[o];
            for (int p = 0; p < IN; p++) {
                double delta = 0.0;
                for (int q = 0; q < R; q++)
                    delta += (double)lb[o * R + q] * la[q * IN + p];
                s += (double)x[i * IN + p] * (w[o * IN + p] + scale * delta);
            }
            ref[i * OUT + o] = (float)s;
        }
    double err = kt_max_rel_err(y, ref, NR * OUT, 1e-3);
    printf("lora forward: max rel err %.3g\n", err);
    assert_true(err < 1e-5);
    free(x), free(w), free(bias), free(la), free(lb), free(y), free(xa), free(ref);
}

static void test_copy2d_and_axpy(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    /* Concatenate two (2,2) blocks side by side into (2,4). */
    float left[4] = {1, 2, 3, 4}, right[4] = {5, 6, 7, 8}, cat[8] = {0};
    assert_int_equal(ops->copy2d(KT_A(cat), 4, KT_A(left), 2, 2, 2), AITK_OK);
    assert_int_equal(ops->copy2d(KT_A(cat + 2), 4, KT_A(right), 2, 2, 2), AITK_OK);
    const float want[8] = {1, 2, 5, 6, 3, 4, 7, 8};
    assert_memory_equal(cat, want, sizeof want);
    assert_int_equal(ops->copy2d(KT_A(cat), 1, KT_A(left), 2, 2, 2), AITK_E_INVAL);
    float y[3] = {1, 1, 1}, x[3] = {1, 2, 3};
    assert_int_equal(ops->axpy(KT_A(y), -2.0f, KT_A(x), 3), AITK_OK);
    assert_float_equal(y[0], -1.0f, 0.0);
    assert_float_equal(y[2], -5.0f, 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_all_transposes_batched),
        cmocka_unit_test(test_gemm_rejects_bad_arguments),
        cmocka_unit_test(test_lora_forward_matches_naive),
        cmocka_unit_test(test_copy2d_and_axpy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
