/* The thread count must not change a single bit of any kernel's result: the
 * step's "gradients identical with and without checkpointing" and "runs
 * repeat exactly" rest on it. Each op runs on tensors above the size where
 * it goes parallel (AITK_CPU_PAR_MIN, 2^18 elements), with 1 and with 3
 * OpenMP threads, and the outputs are compared byte for byte. */
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops.h"
#include "kt.h"

enum { B = 2, T = 256, C = 640, H = 5, D = 128, NX = B * T * C, NOUT = 6 };

/* Runs every OpenMP kernel once, writing NOUT results into res[]. */
static void run_all(float **res, const float *x, const float *g, const float *mod,
                    const float *w)
{
    const aitk_ops *ops = aitk_ops_cpu();
    float *y = kt_alloc(NX), *mean = kt_alloc(B * T), *rstd = kt_alloc(B * T);
    for (int i = 0; i < NOUT; i++)
        res[i] = kt_alloc(i == 2 ? C : (i == 4 ? B * 3 * C : NX));
    assert_int_equal(ops->layernorm_forward(KT_A(y), mean, rstd, KT_A(x), B * T, C, 1e-6f),
                     AITK_OK);
    assert_int_equal(ops->layernorm_backward(KT_A(res[0]), KT_A(g), KT_A(x), mean, rstd, B * T, C),
                     AITK_OK);
    assert_int_equal(ops->rmsnorm_forward(KT_A(y), rstd, KT_A(x), KT_A(w), B * T, C, 1e-6f),
                     AITK_OK);
    assert_int_equal(
        ops->rmsnorm_backward(KT_A(res[1]), res[2], KT_A(g), KT_A(x), KT_A(w), rstd, B * T, C),
        AITK_OK);
    assert_int_equal(ops->modulate_backward(KT_A(res[3]), KT_A(res[4]), KT_A(res[4] + C), KT_A(g),
                                            KT_A(x), KT_A(mod + C), B, T, C, 3 * C),
                     AITK_OK);
    float *cs = kt_alloc(T * D / 2), *sn = kt_alloc(T * D / 2), *pos = kt_alloc(T * 3);
    for (int i = 0; i < T; i++)
        pos[i * 3 + 1] = (float)(i / 16), pos[i * 3 + 2] = (float)(i % 16);
    const int axes[3] = {16, 56, 56};
    assert_int_equal(ops->rope_table(cs, sn, pos, T, D, axes, 10000.0f), AITK_OK);
    assert_int_equal(ops->rope_forward(KT_A(res[5]), KT_A(x), cs, sn, B, T, H, D), AITK_OK);
    assert_int_equal(ops->gelu_backward(KT_A(y), KT_A(g), KT_A(res[5]), NX), AITK_OK);
    memcpy(res[5], y, sizeof(float) * NX);
    free(y), free(mean), free(rstd), free(cs), free(sn), free(pos);
}

static void test_bitwise_independent_of_threads(void **state)
{
    (void)state;
    kt_rng rng = {91};
    float *x = kt_alloc(NX), *g = kt_alloc(NX), *mod = kt_alloc(B * 3 * C), *w = kt_alloc(C);
    kt_fill(&rng, x, NX, -1, 2);
    kt_fill(&rng, g, NX, -1, 1);
    kt_fill(&rng, mod, B * 3 * C, -1, 1);
    kt_fill(&rng, w, C, 0.5f, 1.5f);
    float *one[NOUT], *three[NOUT];
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    run_all(one, x, g, mod, w);
    omp_set_num_threads(3);
    run_all(three, x, g, mod, w);
    omp_set_num_threads(saved);
    for (int i = 0; i < NOUT; i++) {
        size_t n = i == 2 ? C : (i == 4 ? B * 3 * C : NX);
        assert_memory_equal(one[i], three[i], n * sizeof(float));
        free(one[i]), free(three[i]);
    }
    free(x), free(g), free(mod), free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitwise_independent_of_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
