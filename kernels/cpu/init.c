/* Tensor initialization on the CPU backend: the counter-based draw
 * (kernels/math/draw.h, the same values as every other backend's) and the
 * absolute maximum a quantization scale is taken from. */
#include <math.h>

#include "kernels/cpu/cpu.h"
#include "kernels/math/draw.h"

aitk_status aitk_cpu_draw(float *out, size_t n, uint64_t key, uint64_t first, float scale,
                          float add)
{
    if (n == 0)
        return AITK_OK;
    AITK_CPU_REQUIRE(out);
    /* Each element depends on its index only, so the threads' order does
     * not matter and the values are the same for any thread count. */
#pragma omp parallel for if ((long long)n >= AITK_CPU_PAR_MIN)
    for (long long j = 0; j < (long long)n; j++)
        out[j] = add + aitk_draw(key, first + (uint64_t)j, scale);
    return AITK_OK;
}

aitk_status aitk_cpu_absmax(float *amax, const float *x, size_t n)
{
    AITK_CPU_REQUIRE(amax);
    AITK_CPU_REQUIRE(x || n == 0);
    float m = 0;
    for (size_t j = 0; j < n; j++)
        m = fabsf(x[j]) > m ? fabsf(x[j]) : m;
    *amax = m;
    return AITK_OK;
}
