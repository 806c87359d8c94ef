/* NF4 weight storage on the CPU (kernels/ops.h, AITK_NF4_BLOCK): blocks of
 * 64 elements with one fp32 absmax each, every element the index of the
 * nearest code of kernels/math/nf4.h, two per byte with element 2i in the
 * high nibble of byte i (bitsandbytes' packing). */
#include <math.h>

#include "kernels/cpu/cpu.h"
#include "kernels/math/nf4.h"

aitk_status aitk_cpu_nf4_dequantize(float *out, const uint8_t *q, const float *absmax, size_t n)
{
    if (n == 0)
        return AITK_OK;
    AITK_CPU_REQUIRE(out && q && absmax);
    for (size_t j = 0; j < n; j++)
        out[j] = aitk_nf4_value(aitk_nf4_nibble(q, j)) * absmax[j / AITK_NF4_BLOCK];
    return AITK_OK;
}

/* One block: its absmax, then each element's code. An all-zero block keeps
 * absmax 0 and codes the value 0 (index 7), which decodes to 0 exactly. */
static void quantize_block(uint8_t *q, float *absmax, const float *inp, size_t first, size_t n)
{
    float amax = 0;
    for (size_t j = first; j < first + n; j++)
        amax = fabsf(inp[j]) > amax ? fabsf(inp[j]) : amax;
    *absmax = amax;
    for (size_t j = first; j < first + n; j++) {
        unsigned code = aitk_nf4_nearest(aitk_nf4_normalize(inp[j], amax));
        if (j % 2)
            q[j / 2] = (uint8_t)((q[j / 2] & 0xF0u) | code);
        else
            q[j / 2] = (uint8_t)(code << 4); /* also clears an odd tail's low nibble */
    }
}

aitk_status aitk_cpu_nf4_quantize(uint8_t *q, float *absmax, const float *inp, size_t n)
{
    if (n == 0)
        return AITK_OK;
    AITK_CPU_REQUIRE(q && absmax && inp);
    const size_t blocks = aitk_nf4_blocks(n);
#pragma omp parallel for if ((long long)n >= AITK_CPU_PAR_MIN)
    for (long long b = 0; b < (long long)blocks; b++) {
        const size_t first = (size_t)b * AITK_NF4_BLOCK;
        const size_t len = n - first < AITK_NF4_BLOCK ? n - first : AITK_NF4_BLOCK;
        quantize_block(q, &absmax[b], inp, first, len);
    }
    return AITK_OK;
}
