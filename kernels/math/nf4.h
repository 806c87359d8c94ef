/* NF4 (4-bit NormalFloat) code values and the nearest-code search, shared by
 * the CPU reference (kernels/cpu/nf4.c) and the CUDA kernels.
 *
 * The 16 values are bitsandbytes' NF4 table (csrc/kernels.cu, the normal
 * quantiles of QLoRA, arXiv 2305.14314, appendix E), written out as the
 * float literals bitsandbytes uses so both backends decode bit for bit the
 * same weights. The table is a switch, not a static array: a static const
 * array at file scope is host memory that device code cannot read, while a
 * switch compiles to constants on both sides. Storage layout and block size:
 * kernels/ops.h (AITK_NF4_BLOCK). */
#ifndef AITK_KERNELS_MATH_NF4_H
#define AITK_KERNELS_MATH_NF4_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/math/hd.h"

#define AITK_NF4_CODES 16

/* Code value of index i (0..15), in [-1, 1]; 0 for an index out of range. */
AITK_HD static inline float aitk_nf4_value(unsigned i)
{
    switch (i) {
    case 0: return -1.0f;
    case 1: return -0.6961928009986877f;
    case 2: return -0.5250730514526367f;
    case 3: return -0.39491748809814453f;
    case 4: return -0.28444138169288635f;
    case 5: return -0.18477343022823334f;
    case 6: return -0.09105003625154495f;
    case 7: return 0.0f;
    case 8: return 0.07958029955625534f;
    case 9: return 0.16093020141124725f;
    case 10: return 0.24611230194568634f;
    case 11: return 0.33791524171829224f;
    case 12: return 0.44070982933044434f;
    case 13: return 0.5626170039176941f;
    case 14: return 0.7229568362236023f;
    case 15: return 1.0f;
    default: return 0.0f;
    }
}

/* Index of the code nearest to v (v already divided by the block's absmax).
 * Ties go to the lower index: the first code at the smallest distance wins,
 * because a later one must be strictly nearer to replace it. A NaN compares
 * false everywhere and gets index 0. */
AITK_HD static inline unsigned aitk_nf4_nearest(float v)
{
    unsigned best = 0;
    float best_d = v - aitk_nf4_value(0);
    best_d = best_d < 0 ? -best_d : best_d;
    for (unsigned i = 1; i < AITK_NF4_CODES; i++) {
        float d = v - aitk_nf4_value(i);
        d = d < 0 ? -d : d;
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    return best;
}

/* x / absmax, with an all-zero block mapping every element to 0.0's code. */
AITK_HD static inline float aitk_nf4_normalize(float x, float absmax)
{
    return absmax > 0.0f ? x / absmax : 0.0f;
}

/* Element i of packed NF4 codes: element 2j is the high nibble of byte j. */
AITK_HD static inline unsigned aitk_nf4_nibble(const uint8_t *q, size_t i)
{
    return i % 2 ? q[i / 2] & 0x0Fu : (unsigned)(q[i / 2] >> 4);
}

#endif
