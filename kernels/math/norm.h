/* Per-row arithmetic of LayerNorm (no affine) and RMSNorm (with weight).
 *
 * A GPU kernel reduces a row's sums in fp32 (per thread, then warp shuffles)
 * and calls these for the statistics and each element; the CPU tests call
 * them with plain loops. Forward as the CPU reference: two passes for
 * LayerNorm (mean, then the centred sum of squares), which loses far less
 * than E[x^2] - E[x]^2 when |mean| >> std. Backward from the saved mean and
 * rstd, with the two row means of ops.h's formulas:
 *   layernorm: dx = r (g - mean(g) - xhat mean(g xhat)), xhat = (x - mu) r
 *   rmsnorm:   dx = r (g w - x r^2 mean(g w x));  dw += g x r. */
#ifndef AITK_KERNELS_MATH_NORM_H
#define AITK_KERNELS_MATH_NORM_H

#include <math.h>

#include "kernels/math/hd.h"

/* 1 / sqrt(sum_sq / c + eps): rstd from a row's (centred) sum of squares. */
AITK_HD static inline float aitk_norm_rstd(float sum_sq, int c, float eps)
{
    return 1.0f / sqrtf(sum_sq / (float)c + eps);
}

AITK_HD static inline float aitk_layernorm_out(float x, float mean, float rstd)
{
    return (x - mean) * rstd;
}

/* mean_g = mean(g), mean_gx = mean(g * xhat) over the row. */
AITK_HD static inline float aitk_layernorm_dx(float g, float x, float mean, float rstd,
                                              float mean_g, float mean_gx)
{
    float xhat = (x - mean) * rstd;
    return rstd * (g - mean_g - xhat * mean_gx);
}

AITK_HD static inline float aitk_rmsnorm_out(float x, float rstd, float w)
{
    return x * rstd * w;
}

/* mean_gwx = mean(g * w * x) over the row. */
AITK_HD static inline float aitk_rmsnorm_dx(float g, float x, float w, float rstd,
                                            float mean_gwx)
{
    return rstd * (g * w - x * rstd * rstd * mean_gwx);
}

/* One row's term of dweight[j] = sum over rows of g x rstd. */
AITK_HD static inline float aitk_rmsnorm_dweight_term(float g, float x, float rstd)
{
    return g * x * rstd;
}

#endif
