/* fp8 e4m3fn codec (OCP 8-bit floating point: bias 7, max 448, no
 * infinities, NaN = S.1111.111) for the CUDA kernels and the CPU tests.
 *
 * Written from the format definition, the same rules as the CPU reference's
 * aitk_fp8_e4m3_encode (kernels/cpu/numfmt.c), which the tests compare
 * against over every code and many inputs; the GPU cannot call
 * that file (it is not AITK_HD). Saturating as ops.h requires for
 * quantizers: past 448 (and +-inf) gives +-448. */
#ifndef AITK_KERNELS_MATH_FP8_H
#define AITK_KERNELS_MATH_FP8_H

#include <stdint.h>

#include "kernels/math/bf16.h"
#include "kernels/math/hd.h"

AITK_HD static inline uint8_t aitk_e4m3_encode_sat(float x)
{
    uint32_t u = aitk_f32_bits(x);
    uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return (uint8_t)(sign | 0x7F);
    if (a == 0x7F800000u)
        return (uint8_t)(sign | 0x7E);
    uint32_t code;
    if (a >= 0x3C800000u) {
        /* Normal range (|x| >= 2^-6): keep 3 mantissa bits, round to nearest
         * even (a carry moves into the exponent by itself), rebias 127 -> 7. */
        uint32_t rest = a & 0xFFFFFu, kept = a >> 20;
        if (rest > 0x80000u || (rest == 0x80000u && (kept & 1u)))
            kept++;
        code = kept - (120u << 3);
    } else {
        /* Subnormal range: units of 2^-9, exact scaling, nearest even. */
        float units = aitk_f32_from_bits(a) * 512.0f;
        code = (uint32_t)units;
        float frac = units - (float)code;
        if (frac > 0.5f || (frac == 0.5f && (code & 1u)))
            code++;
    }
    if (code > 0x7Eu)
        code = 0x7Eu;
    return (uint8_t)(sign | code);
}

/* Exact: every e4m3 value is an fp32 value. */
AITK_HD static inline float aitk_e4m3_decode(uint8_t q)
{
    uint32_t e = (q >> 3) & 0xFu, m = q & 0x7u;
    float mag;
    if (e == 0xFu && m == 0x7u)
        mag = aitk_f32_from_bits(0x7FC00000u);
    else if (e == 0)
        mag = (float)m * (1.0f / 512.0f);
    else /* 1.m x 2^(e-7): build the fp32 directly, exponent e - 7 + 127 */
        mag = aitk_f32_from_bits(((e + 120u) << 23) | (m << 20));
    return (q & 0x80u) ? -mag : mag;
}

#endif
