/* adaLN modulation, gated residual and RoPE, per element (ops.h: adaLN, RoPE).
 *
 * The token-reduced gradients (dshift, dscale, dgate) are sums over T of the
 * products below; a kernel sums them in fp32 per (sample, channel). */
#ifndef AITK_KERNELS_MATH_MODULATE_H
#define AITK_KERNELS_MATH_MODULATE_H

#include <math.h>

#include "kernels/math/hd.h"

AITK_HD static inline float aitk_modulate(float x, float shift, float scale)
{
    return x * (1.0f + scale) + shift;
}

AITK_HD static inline float aitk_modulate_dx(float g, float scale)
{
    return g * (1.0f + scale);
}

AITK_HD static inline float aitk_gated_residual(float resid, float gate, float x)
{
    return resid + gate * x;
}

/* Pair p of head_dim d under axes[3]: its axis, and the index j within it.
 * Returns the frequency theta^(-2j/axes[a]) in double, as the table is
 * built in double (diffusers builds FLUX's in float64). */
AITK_HD static inline double aitk_rope_freq(int p, const int axes[3], double theta, int *axis)
{
    int a = 0, j = p;
    while (a < 2 && j >= axes[a] / 2) {
        j -= axes[a] / 2;
        a++;
    }
    *axis = a;
    return pow(theta, -2.0 * j / axes[a]);
}

/* Rotate the pair (x0, x1) by the angle with cosine c and sine s; the
 * backward is the same call with -s (the transpose of a rotation). */
AITK_HD static inline void aitk_rope_rotate(float x0, float x1, float c, float s, float *y0,
                                            float *y1)
{
    *y0 = x0 * c - x1 * s;
    *y1 = x0 * s + x1 * c;
}

#endif
