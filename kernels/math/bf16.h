/* bf16 storage <-> fp32 math, shared by the CUDA kernels and the CPU tests.
 *
 * The kernels load bf16, compute in fp32 and store bf16 through these two
 * functions, so the rounding a GPU op applies to its outputs is the one the
 * CPU tests emulate. Bit manipulation (round to nearest even, NaN kept quiet)
 * rather than CUDA's __float2bfloat16: identical results, and it runs on the
 * host too. memcpy is the type pun both C and CUDA device code accept. */
#ifndef AITK_KERNELS_MATH_BF16_H
#define AITK_KERNELS_MATH_BF16_H

#include <stdint.h>
#include <string.h>

#include "kernels/math/hd.h"

AITK_HD static inline uint32_t aitk_f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

AITK_HD static inline float aitk_f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* fp32 -> bf16, round to nearest even; NaN stays a (quiet) NaN. */
AITK_HD static inline uint16_t aitk_bf16_encode(float x)
{
    uint32_t u = aitk_f32_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    uint32_t rest = u & 0xFFFFu;
    uint32_t kept = u >> 16;
    if (rest > 0x8000u || (rest == 0x8000u && (kept & 1u)))
        kept++;
    return (uint16_t)kept;
}

AITK_HD static inline float aitk_bf16_decode(uint16_t h)
{
    return aitk_f32_from_bits((uint32_t)h << 16);
}

/* x as bf16 storage would hold it. */
AITK_HD static inline float aitk_bf16_rounded(float x)
{
    return aitk_bf16_decode(aitk_bf16_encode(x));
}

#endif
