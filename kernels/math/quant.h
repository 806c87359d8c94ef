/* Weight storage formats, per element: fp8 (one scale per tensor) and NF4
 * (blocks of AITK_NF4_BLOCK with one absmax each; ops.h).
 *
 * The NF4 code values are passed in as a 16-entry table, so this header
 * does not depend on where the table lives (the CUDA backend keeps its own
 * copy in __constant__ memory; the tests pass hand-written values). */
#ifndef AITK_KERNELS_MATH_QUANT_H
#define AITK_KERNELS_MATH_QUANT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/math/fp8.h"
#include "kernels/math/hd.h"

AITK_HD static inline float aitk_fp8_dequant(uint8_t q, float scale)
{
    return aitk_e4m3_decode(q) * scale;
}

AITK_HD static inline uint8_t aitk_fp8_quant(float x, float scale)
{
    return aitk_e4m3_encode_sat(x / scale);
}

/* Index of the code nearest to x (x already divided by the block absmax,
 * so in [-1, 1]); codes ascending; a tie goes to the lower index, as ops.h
 * says. A NaN maps to index 0. */
AITK_HD static inline uint8_t aitk_nf4_nearest(const float code[16], float x)
{
    int best = 0;
    float best_d = fabsf(x - code[0]);
    for (int i = 1; i < 16; i++) {
        float d = fabsf(x - code[i]);
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    return (uint8_t)best;
}

/* x / absmax, with an all-zero block mapping every element to 0.0's code. */
AITK_HD static inline float aitk_nf4_normalize(float x, float absmax)
{
    return absmax > 0.0f ? x / absmax : 0.0f;
}

/* Element i of packed NF4 codes: element 2j is the high nibble of byte j. */
AITK_HD static inline uint8_t aitk_nf4_nibble(const uint8_t *q, size_t i)
{
    uint8_t byte = q[i / 2];
    return (uint8_t)((i % 2 == 0) ? (byte >> 4) : (byte & 0x0Fu));
}

#endif
