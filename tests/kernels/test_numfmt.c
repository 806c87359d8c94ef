/* fp8 e4m3fn and bf16 codecs against bit patterns from the format
 * definitions (OCP 8-bit Floating Point Specification, E4M3: bias 7, max 448,
 * no infinities, NaN = S.1111.111; bfloat16 = the top half of binary32), with
 * ties-to-even cases and the saturating / non-saturating overflow rules. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/numfmt.h"
#include "kernels/ops.h"
#include "tests/kernels/kt.h"

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_e4m3_known_values(void **state)
{
    (void)state;
    struct { float v; uint8_t code; } known[] = {
        {0.0f, 0x00},       {1.0f, 0x38},         {-1.0f, 0xB8},       {448.0f, 0x7E},
        {-448.0f, 0xFE},    {0x1p-9f, 0x01},      {0x1p-6f, 0x08},     {7 * 0x1p-9f, 0x07},
        {2.0f, 0x40},       {1.5f, 0x3C},         {0.5f, 0x30},        {240.0f, 0x77},
        {0x1p-8f, 0x02},  {0x1p-5f, 0x10},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        assert_int_equal(aitk_fp8_e4m3_encode(known[i].v, false), known[i].code);
        assert_int_equal(aitk_fp8_e4m3_encode(known[i].v, true), known[i].code);
        assert_float_equal(aitk_fp8_e4m3_decode(known[i].code), known[i].v, 0.0);
    }
    assert_int_equal(aitk_fp8_e4m3_encode(-0.0f, false), 0x80);
    assert_true(isnan(aitk_fp8_e4m3_decode(0x7F)));
    assert_true(isnan(aitk_fp8_e4m3_decode(0xFF)));
    /* S.1111.110 is a number (448), not NaN: e4m3fn spends only one pattern. */
    assert_false(isnan(aitk_fp8_e4m3_decode(0xFE)));
}

static void test_e4m3_ties_to_even(void **state)
{
    (void)state;
    /* 1 + 1/16 lies halfway between 1.0 (0x38, even) and 1.125 (0x39). */
    assert_int_equal(aitk_fp8_e4m3_encode(1.0625f, false), 0x38);
    /* 1 + 3/16 lies halfway between 1.125 (0x39) and 1.25 (0x3A, even). */
    assert_int_equal(aitk_fp8_e4m3_encode(1.1875f, false), 0x3A);
    assert_int_equal(aitk_fp8_e4m3_encode(nextafterf(1.0625f, 2.0f), false), 0x39);
    /* Subnormals: 2^-10 is halfway between 0 and 2^-9: to 0 (even). */
    assert_int_equal(aitk_fp8_e4m3_encode(0x1p-10f, false), 0x00);
    assert_int_equal(aitk_fp8_e4m3_encode(nextafterf(0x1p-10f, 1.0f), false), 0x01);
    /* 1.5 * 2^-9 is halfway between 0x01 and 0x02 (even). */
    assert_int_equal(aitk_fp8_e4m3_encode(1.5f * 0x1p-9f, false), 0x02);
    /* 7.5 * 2^-9, between the largest subnormal and the smallest normal. */
    assert_int_equal(aitk_fp8_e4m3_encode(7.5f * 0x1p-9f, false), 0x08);
    /* Tiny values flush to a signed zero. */
    assert_int_equal(aitk_fp8_e4m3_encode(-1e-30f, false), 0x80);
}

static void test_e4m3_overflow_rules(void **state)
{
    (void)state;
    /* 464 is halfway between 448 (mantissa 110, even) and the missing 480. */
    assert_int_equal(aitk_fp8_e4m3_encode(464.0f, false), 0x7E);
    assert_int_equal(aitk_fp8_e4m3_encode(470.0f, false), 0x7F);
    assert_int_equal(aitk_fp8_e4m3_encode(470.0f, true), 0x7E);
    assert_int_equal(aitk_fp8_e4m3_encode(-1e6f, false), 0xFF);
    assert_int_equal(aitk_fp8_e4m3_encode(-1e6f, true), 0xFE);
    assert_int_equal(aitk_fp8_e4m3_encode(INFINITY, false), 0x7F);
    assert_int_equal(aitk_fp8_e4m3_encode(INFINITY, true), 0x7E);
    assert_int_equal(aitk_fp8_e4m3_encode(-INFINITY, true), 0xFE);
    assert_int_equal(aitk_fp8_e4m3_encode(NAN, true) & 0x7F, 0x7F);
}

static void test_e4m3_every_code_round_trips(void **state)
{
    (void)state;
    float prev = -1.0f;
    for (int c = 0; c < 256; c++) {
        float v = aitk_fp8_e4m3_decode((uint8_t)c);
        if ((c & 0x7F) == 0x7F) {
            assert_true(isnan(v));
            continue;
        }
        assert_int_equal(aitk_fp8_e4m3_encode(v, false), c);
        if (c < 0x7F) { /* positive codes are in increasing order */
            assert_true(v > prev || c == 0);
            prev = v;
        }
    }
}

static void test_bf16_rounding(void **state)
{
    (void)state;
    assert_int_equal(aitk_bf16_from_f32(1.0f), 0x3F80);
    assert_int_equal(aitk_bf16_from_f32(-0.0f), 0x8000);
    /* Ties to even: 0x3F808000 halfway between 0x3F80 (even) and 0x3F81. */
    assert_int_equal(aitk_bf16_from_f32(bits_f32(0x3F808000u)), 0x3F80);
    assert_int_equal(aitk_bf16_from_f32(bits_f32(0x3F818000u)), 0x3F82);
    assert_int_equal(aitk_bf16_from_f32(bits_f32(0x3F808001u)), 0x3F81);
    assert_int_equal(aitk_bf16_from_f32(bits_f32(0x3F807FFFu)), 0x3F80);
    /* Subnormal ties behave the same. */
    assert_int_equal(aitk_bf16_from_f32(bits_f32(0x00008000u)), 0x0000);
    assert_int_equal(aitk_bf16_from_f32(bits_f32(0x00018000u)), 0x0002);
    /* FLT_MAX rounds up to infinity; the largest bf16 stays. */
    assert_int_equal(aitk_bf16_from_f32(bits_f32(0x7F7FFFFFu)), 0x7F80);
    assert_int_equal(aitk_bf16_from_f32(bits_f32(0x7F7F7FFFu)), 0x7F7F);
    assert_int_equal(aitk_bf16_from_f32(-INFINITY), 0xFF80);
    /* A signalling NaN whose payload sits in the dropped half stays NaN. */
    uint16_t h = aitk_bf16_from_f32(bits_f32(0x7F800001u));
    assert_true(isnan(aitk_bf16_to_f32(h)));
    assert_float_equal(aitk_bf16_to_f32(0x4049), 3.140625f, 0.0);
}

static void test_array_codecs(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    float x[6] = {0.3f, -1.7f, 2.0f, 100.0f, -250.0f, 1e-3f};
    /* Per-tensor scale as a quantizer picks it: absmax / 448. */
    float scale = 250.0f / 448.0f, back[6];
    uint8_t q[6];
    assert_int_equal(ops->fp8_quantize(q, KT_A(x), scale, 6), AITK_OK);
    assert_int_equal(ops->fp8_dequantize(KT_A(back), q, scale, 6), AITK_OK);
    for (int i = 0; i < 5; i++) /* normal range: within half a 3-bit ulp, 1/16 */
        assert_true(fabsf(back[i] - x[i]) <= fabsf(x[i]) / 16.0f);
    assert_float_equal(back[4], -250.0f, 1e-4); /* the absmax maps to 448 exactly */
    assert_int_equal(ops->fp8_quantize(q, KT_A(x), 0.0f, 6), AITK_E_INVAL);
    uint16_t packed[6];
    float rounded[6];
    memcpy(rounded, x, sizeof x);
    /* pack/unpack left the table (a backend stores bf16 itself); the CPU
     * functions stay for host code and must agree with the table's round. */
    assert_int_equal(aitk_cpu_bf16_pack(packed, x, 6), AITK_OK);
    assert_int_equal(aitk_cpu_bf16_unpack(back, packed, 6), AITK_OK);
    assert_int_equal(ops->bf16_round(KT_A(rounded), 6), AITK_OK);
    assert_memory_equal(back, rounded, sizeof back);
    assert_float_equal(rounded[2], 2.0f, 0.0);
    assert_float_equal(rounded[0], 0.30078125f, 0.0); /* 0x3E9A: 0.3 rounded to 8 bits */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e4m3_known_values),
        cmocka_unit_test(test_e4m3_ties_to_even),
        cmocka_unit_test(test_e4m3_overflow_rules),
        cmocka_unit_test(test_e4m3_every_code_round_trips),
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_array_codecs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
