/* fp8 e4m3fn and bf16 codecs (see numfmt.h), by bit manipulation so that
 * rounding is exactly round-to-nearest-even whatever the FPU mode is. */
#include "kernels/cpu/numfmt.h"

#include <math.h>
#include <string.h>

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Drop the low `shift` bits of v with round-to-nearest-even. */
static uint32_t round_shift_rne(uint32_t v, unsigned shift)
{
    uint32_t half = 1u << (shift - 1);
    uint32_t rest = v & ((1u << shift) - 1u);
    uint32_t kept = v >> shift;
    if (rest > half || (rest == half && (kept & 1u)))
        kept++;
    return kept;
}

uint8_t aitk_fp8_e4m3_encode(float x, bool saturate)
{
    uint32_t u = f32_bits(x);
    uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)                 /* NaN */
        return (uint8_t)(sign | 0x7F);
    if (a == 0x7F800000u)                /* inf: the format has none */
        return (uint8_t)(sign | (saturate ? 0x7E : 0x7F));
    uint32_t code;
    if (a >= 0x3C800000u) {
        /* |x| >= 2^-6, e4m3's smallest normal: keep 3 of fp32's 23 mantissa
         * bits. Rounding carries into the exponent field by itself; then move
         * the exponent from bias 127 to bias 7 (127 - 7 = 120). */
        code = round_shift_rne(a, 20) - (120u << 3);
    } else {
        /* Subnormal range: the value in units of 2^-9 (the smallest
         * subnormal). Scaling by 512 is exact; a result of 8 is 2^-6, the
         * smallest normal, whose code is 0x08 as well. */
        float units = f32_from_bits(a) * 512.0f;
        code = (uint32_t)units;
        float frac = units - (float)code;
        if (frac > 0.5f || (frac == 0.5f && (code & 1u)))
            code++;
    }
    if (code > 0x7Eu)                    /* rounded past 448 */
        return (uint8_t)(sign | (saturate ? 0x7E : 0x7F));
    return (uint8_t)(sign | code);
}

float aitk_fp8_e4m3_decode(uint8_t q)
{
    unsigned e = (q >> 3) & 0xFu;
    unsigned m = q & 0x7u;
    float mag;
    if (e == 0xFu && m == 0x7u)
        mag = NAN;
    else if (e == 0)
        mag = ldexpf((float)m, -9);
    else
        mag = ldexpf(1.0f + (float)m / 8.0f, (int)e - 7);
    return (q & 0x80u) ? -mag : mag;
}

uint16_t aitk_bf16_from_f32(float x)
{
    uint32_t u = f32_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: keep the sign, force quiet */
        return (uint16_t)((u >> 16) | 0x0040u);
    return (uint16_t)round_shift_rne(u, 16);
}

float aitk_bf16_to_f32(uint16_t h)
{
    return f32_from_bits((uint32_t)h << 16);
}
