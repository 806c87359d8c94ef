/* Scalar codecs of the storage formats the GPU path uses: fp8 e4m3fn and bf16.
 *
 * Written from the format definitions (OCP 8-bit Floating Point
 * Specification, E4M3: bias 7, max 448, no infinities, NaN = S.1111.111;
 * bfloat16: the top 16 bits of an IEEE binary32), so the CPU reference can
 * quantize and dequantize weights exactly as a GPU would, and the 8-bit
 * optimizer can reuse the same code. Pure functions of their argument. */
#ifndef AITK_KERNELS_CPU_NUMFMT_H
#define AITK_KERNELS_CPU_NUMFMT_H

#include <stdbool.h>
#include <stdint.h>

/* fp32 -> e4m3 with round-to-nearest-even. NaN -> S.1111.111. A magnitude
 * that rounds past 448 (and +-inf) gives +-448 when `saturate`, else NaN. */
uint8_t aitk_fp8_e4m3_encode(float x, bool saturate);
/* e4m3 -> fp32, exact (every e4m3 value is an fp32 value). */
float aitk_fp8_e4m3_decode(uint8_t q);

/* fp32 -> bf16, round-to-nearest-even; NaN stays NaN (made quiet), inf stays
 * inf, a finite value past bf16's max rounds to inf as IEEE rounding does. */
uint16_t aitk_bf16_from_f32(float x);
float aitk_bf16_to_f32(uint16_t h);

#endif
