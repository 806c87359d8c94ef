/* Storage codecs of the CUDA kernels (kernels/math/bf16.h, fp8.h, quant.h)
 * against the CPU reference codecs (kernels/cpu/numfmt.c, pointwise.c) and,
 * for NF4 against hand-written values from the published code table. */
#include "mt.h"

#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/numfmt.h"
#include "kernels/math/quant.h"

static float from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static void test_bf16_matches_reference(void **state)
{
    (void)state;
    /* Every 4099th bit pattern (all exponents, many mantissas, both signs,
     * NaNs and infinities) plus the rounding ties around 1.0. */
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4099) {
        float x = from_bits((uint32_t)u);
        assert_int_equal(aitk_bf16_encode(x), aitk_bf16_from_f32(x));
    }
    const uint32_t ties[] = {0x3F808000u, 0x3F818000u, 0x3F80C000u, 0x7F7FFFFFu, 0x7F800000u,
                             0xFF800000u, 0x7FC00001u, 0x00000001u, 0x80000000u};
    for (size_t i = 0; i < sizeof ties / sizeof *ties; i++)
        assert_int_equal(aitk_bf16_encode(from_bits(ties[i])),
                         aitk_bf16_from_f32(from_bits(ties[i])));
    /* By hand: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1.0. */
    assert_int_equal(aitk_bf16_encode(from_bits(0x3F808000u)), 0x3F80);
    assert_int_equal(aitk_bf16_encode(from_bits(0x3F818000u)), 0x3F82);
}

static void test_fp8_matches_reference(void **state)
{
    (void)state;
    for (int q = 0; q < 256; q++) {
        float got = aitk_e4m3_decode((uint8_t)q), want = aitk_fp8_e4m3_decode((uint8_t)q);
        if (isnan(want))
            assert_true(isnan(got));
        else
            assert_memory_equal(&got, &want, sizeof got);
    }
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4099) {
        float x = from_bits((uint32_t)u);
        assert_int_equal(aitk_e4m3_encode_sat(x), aitk_fp8_e4m3_encode(x, true));
    }
    /* By hand: 448 is 0x7E, past it saturates, inf too; 2^-9 is 0x01. */
    assert_int_equal(aitk_e4m3_encode_sat(448.0f), 0x7E);
    assert_int_equal(aitk_e4m3_encode_sat(1000.0f), 0x7E);
    assert_int_equal(aitk_e4m3_encode_sat(-INFINITY), 0xFE);
    assert_int_equal(aitk_e4m3_encode_sat(1.0f / 512.0f), 0x01);
    assert_int_equal(aitk_e4m3_encode_sat(1.0f), 0x38);
}

static void test_fp8_arrays(void **state)
{
    (void)state;
    size_t n = 3072 * 64;
    float scale = 0.05f / AITK_FP8_E4M3_MAX * 8.0f; /* some values saturate */
    float *w = mt_draw_bf16(n, 301, 0.1f, 0.0f);
    uint8_t *q = malloc(n), *q_ref = malloc(n);
    float *out = mt_alloc(n), *out_ref = mt_alloc(n);
    assert_non_null(q), assert_non_null(q_ref);
    for (size_t i = 0; i < n; i++)
        q[i] = aitk_fp8_quant(w[i], scale);
    assert_int_equal(aitk_cpu_fp8_quantize(q_ref, w, scale, n), AITK_OK);
    assert_memory_equal(q, q_ref, n);
    for (size_t i = 0; i < n; i++)
        out[i] = aitk_bf16_rounded(aitk_fp8_dequant(q[i], scale));
    assert_int_equal(aitk_cpu_fp8_dequantize(out_ref, q_ref, scale, n), AITK_OK);
    /* e4m3 x scale has 4 significant bits: bf16 holds it unless the scale's
     * own bits spill over; one bf16 rounding at most. */
    mt_close("fp8 dequantize", out, out_ref, n, 4e-3f, 0.0f);
    free(w), free(q), free(q_ref), free(out), free(out_ref);
}

/* The NF4 table, typed in from the QLoRA paper's appendix E. */
static const float nf4[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f,
                              -0.39491748809814453f, -0.28444138169288635f,
                              -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                              0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                              0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                              0.7229568362236023f, 1.0f};

static void test_nf4_by_hand(void **state)
{
    (void)state;
    /* The shared table is the paper's, value for value. */
    for (unsigned i = 0; i < 16; i++)
        assert_float_equal(aitk_nf4_value(i), nf4[i], 0.0f);
    for (int i = 0; i < 16; i++)
        assert_int_equal(aitk_nf4_nearest(nf4[i]), i);
    assert_int_equal(aitk_nf4_nearest(0.03f), 7);  /* nearer 0 than 0.0796 */
    assert_int_equal(aitk_nf4_nearest(0.05f), 8);
    assert_int_equal(aitk_nf4_nearest(-2.0f), 0);
    assert_int_equal(aitk_nf4_nearest(0.9f), 15);
    /* A tie goes to the lower index (ops.h): the midpoint of codes 7 (0) and
     * 8 is exactly half of code 8 in binary, so both distances are equal;
     * a hair above it is nearer code 8. */
    assert_int_equal(aitk_nf4_nearest(nf4[8] / 2.0f), 7);
    assert_int_equal(aitk_nf4_nearest(nextafterf(nf4[8] / 2.0f, 1.0f)), 8);
    /* An all-zero block normalizes to 0, the code of index 7. */
    assert_float_equal(aitk_nf4_normalize(0.0f, 0.0f), 0.0f, 0.0f);
    assert_float_equal(aitk_nf4_normalize(-0.5f, 2.0f), -0.25f, 0.0f);
    /* Packing: element 2j is the high nibble of byte j. */
    const uint8_t q[2] = {0x7F, 0x0A};
    assert_int_equal(aitk_nf4_nibble(q, 0), 7);
    assert_int_equal(aitk_nf4_nibble(q, 1), 15);
    assert_int_equal(aitk_nf4_nibble(q, 2), 0);
    assert_int_equal(aitk_nf4_nibble(q, 3), 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_matches_reference),
        cmocka_unit_test(test_fp8_matches_reference),
        cmocka_unit_test(test_fp8_arrays),
        cmocka_unit_test(test_nf4_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
