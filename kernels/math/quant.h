/* Weight storage formats, per element: fp8 (one scale per tensor) and NF4
 * (blocks of AITK_NF4_BLOCK with one absmax each; ops.h). The NF4 code
 * values, the nearest-code search and the packing are kernels/math/nf4.h,
 * shared with the CPU reference. */
#ifndef AITK_KERNELS_MATH_QUANT_H
#define AITK_KERNELS_MATH_QUANT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/math/fp8.h"
#include "kernels/math/hd.h"
#include "kernels/math/nf4.h"

AITK_HD static inline float aitk_fp8_dequant(uint8_t q, float scale)
{
    return aitk_e4m3_decode(q) * scale;
}

AITK_HD static inline uint8_t aitk_fp8_quant(float x, float scale)
{
    return aitk_e4m3_encode_sat(x / scale);
}

#endif
