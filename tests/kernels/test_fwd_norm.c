/* Forward checks of the norms, modulation and RoPE against values worked out
 * by hand or by naive loops written here.
 *
 * RoPE hand values: angle = pos * 10000^(-2j/axis_dim) for pair j of an axis,
 * e.g. FLUX (16,56,56) on 128 with position (0,3,5): pair 8 is the first of
 * axis 1 (angle 3), pair 9 the second (angle 3 * 10000^(-2/56)), pair 63 the
 * last of axis 2 (angle 5 * 10000^(-54/56)). cos/sin were evaluated with a
 * calculator (Python's math module) and written down. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "kernels/ops.h"
#include "kt.h"

static void test_layernorm_by_hand(void **state)
{
    (void)state;
    /* Row (1,2,3,4): mean 2.5, variance 1.25, rstd 1/sqrt(1.25 + eps). */
    float x[4] = {1, 2, 3, 4}, y[4], mean, rstd;
    assert_int_equal(aitk_ops_cpu()->layernorm_forward(KT_A(y), &mean, &rstd, KT_A(x), 1, 4, 0.0f),
                     AITK_OK);
    assert_float_equal(mean, 2.5f, 1e-7);
    assert_float_equal(rstd, 0.8944272f, 1e-6);
    assert_float_equal(y[0], -1.3416408f, 1e-6);
    assert_float_equal(y[3], 1.3416408f, 1e-6);
}

static void test_rmsnorm_by_hand(void **state)
{
    (void)state;
    /* Row (3,4): mean square 12.5, rstd 1/sqrt(12.5); weights (1, 2). */
    float x[2] = {3, 4}, w[2] = {1, 2}, y[2], rstd;
    assert_int_equal(aitk_ops_cpu()->rmsnorm_forward(KT_A(y), &rstd, KT_A(x), KT_A(w), 1, 2, 0.0f),
                     AITK_OK);
    assert_float_equal(rstd, 0.28284271f, 1e-7);
    assert_float_equal(y[0], 0.8485281f, 1e-6);
    assert_float_equal(y[1], 2.2627417f, 1e-6);
}

static void test_modulate_and_gate_by_hand(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    /* B=2, T=1, C=2; mod rows (shift, scale, gate) of 6 per sample. */
    float x[4] = {1, 2, 3, 4};
    float mod[12] = {0.5f, -1, 1, 0, 2, 3, /* sample 1 */ 0, 0, -0.5f, 0.5f, 1, 1};
    float y[4];
    assert_int_equal(ops->modulate_forward(KT_A(y), KT_A(x), KT_A(mod), KT_A(mod + 2), 2, 1, 2, 6),
                     AITK_OK);
    /* 1*(1+1)+0.5, 2*(1+0)-1, 3*(1-0.5)+0, 4*(1+0.5)+0 */
    const float want[4] = {2.5f, 1.0f, 1.5f, 6.0f};
    assert_memory_equal(y, want, sizeof want);
    float resid[4] = {10, 10, 10, 10};
    assert_int_equal(ops->gated_residual_forward(KT_A(resid), KT_A(x), KT_A(mod + 4), 2, 1, 2, 6),
                     AITK_OK);
    const float want_r[4] = {12, 16, 13, 14};
    assert_memory_equal(resid, want_r, sizeof want_r);
    assert_int_equal(ops->modulate_forward(KT_A(y), KT_A(x), KT_A(mod), KT_A(mod + 2), 2, 1, 2, 1),
                     AITK_E_INVAL);
}

static void test_rope_table_flux(void **state)
{
    (void)state;
    const int axes[3] = {16, 56, 56};
    float pos[3] = {0, 3, 5}, cs[64], sn[64];
    assert_int_equal(aitk_ops_cpu()->rope_table(cs, sn, pos, 1, 128, axes, 10000.0f), AITK_OK);
    assert_float_equal(cs[0], 1.0f, 0.0);
    assert_float_equal(sn[7], 0.0f, 0.0);
    assert_float_equal(cs[8], -0.9899925f, 1e-6);
    assert_float_equal(sn[8], 0.1411200f, 1e-6);
    assert_float_equal(cs[9], -0.5549149f, 1e-6);
    assert_float_equal(sn[9], 0.8319071f, 1e-6);
    assert_float_equal(cs[63], 0.9999998f, 1e-6);
    assert_float_equal(sn[63], 0.00069474769f, 1e-8);
}

static void test_rope_table_omnigen2(void **state)
{
    (void)state;
    const int axes[3] = {40, 40, 40};
    float pos[3] = {1, 2, 7}, cs[60], sn[60];
    assert_int_equal(aitk_ops_cpu()->rope_table(cs, sn, pos, 1, 120, axes, 10000.0f), AITK_OK);
    assert_float_equal(cs[0], 0.5403023f, 1e-6);  /* cos 1 */
    assert_float_equal(cs[20], -0.4161468f, 1e-6); /* cos 2 */
    assert_float_equal(cs[21], 0.3039934f, 1e-6);
    assert_float_equal(sn[59], 0.0011094250f, 1e-8);
    const int bad[3] = {40, 40, 41};
    assert_int_equal(aitk_ops_cpu()->rope_table(cs, sn, pos, 1, 121, bad, 10000.0f),
                     AITK_E_INVAL);
    assert_int_equal(aitk_ops_cpu()->rope_table(cs, sn, pos, 1, 128, axes, 10000.0f),
                     AITK_E_INVAL);
}

static void test_rope_rotates_adjacent_pairs(void **state)
{
    (void)state;
    /* One token, one head, D=4, axes (2,2,0), positions (pi/2, pi, 0): pair 0
     * turns by 90 degrees, pair 1 by 180. */
    const int axes[3] = {2, 2, 0};
    float pos[3] = {(float)(M_PI / 2), (float)M_PI, 0}, cs[2], sn[2];
    const aitk_ops *ops = aitk_ops_cpu();
    assert_int_equal(ops->rope_table(cs, sn, pos, 1, 4, axes, 10000.0f), AITK_OK);
    float x[4] = {1, 2, 3, 4}, y[4];
    assert_int_equal(ops->rope_forward(KT_A(y), KT_A(x), cs, sn, 1, 1, 1, 4), AITK_OK);
    /* (1,2) by 90: (-2, 1); (3,4) by 180: (-3, -4). */
    assert_float_equal(y[0], -2.0f, 1e-6);
    assert_float_equal(y[1], 1.0f, 1e-6);
    assert_float_equal(y[2], -3.0f, 1e-6);
    assert_float_equal(y[3], -4.0f, 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layernorm_by_hand),
        cmocka_unit_test(test_rmsnorm_by_hand),
        cmocka_unit_test(test_modulate_and_gate_by_hand),
        cmocka_unit_test(test_rope_table_flux),
        cmocka_unit_test(test_rope_table_omnigen2),
        cmocka_unit_test(test_rope_rotates_adjacent_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
