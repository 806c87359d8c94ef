/* Per-element arithmetic of the fused LayerNorm + adaLN modulation
 * (ops.h: layernorm_modulate_forward/backward).
 *
 * Forward: the row kernel reduces the row's mean and centred sum of squares
 * as layernorm does (norm.h), then per element normalizes and modulates in
 * one step, so the modulation reads the fp32 normalized value rather than
 * its bf16 copy, and stores both: ln for backward, out for the next linear.
 *
 * Backward: with gl = dout (1 + scale), the gradient reaching ln, the
 * LayerNorm backward of norm.h applies to gl:
 *   dx = r (gl - mean(gl) - xhat mean(gl xhat)),  xhat = (x - mu) r,
 * and gl is recomputed where it is needed instead of being stored and read
 * back. dshift and dscale are token sums of dout and dout ln, as in
 * modulate_backward (modulate.h). */
#ifndef AITK_KERNELS_MATH_NORM_MODULATE_H
#define AITK_KERNELS_MATH_NORM_MODULATE_H

#include "kernels/math/hd.h"
#include "kernels/math/modulate.h"
#include "kernels/math/norm.h"

/* One element: *ln = (x - mean) rstd (the value saved for backward), and
 * the return value ln (1 + scale) + shift, computed from the fp32 ln. */
AITK_HD static inline float aitk_layernorm_modulate_out(float x, float mean, float rstd,
                                                        float shift, float scale, float *ln)
{
    float l = aitk_layernorm_out(x, mean, rstd);
    *ln = l;
    return aitk_modulate(l, shift, scale);
}

/* The gradient reaching the normalized value, dout (1 + scale): what a row
 * kernel sums, with its product with xhat, for the two row means. */
AITK_HD static inline float aitk_layernorm_modulate_gl(float dout, float scale)
{
    return aitk_modulate_dx(dout, scale);
}

/* One element of dinp from the row means mean_gl = mean(gl) and
 * mean_glx = mean(gl xhat). */
AITK_HD static inline float aitk_layernorm_modulate_dx(float dout, float scale, float x,
                                                       float mean, float rstd, float mean_gl,
                                                       float mean_glx)
{
    return aitk_layernorm_dx(aitk_layernorm_modulate_gl(dout, scale), x, mean, rstd, mean_gl,
                             mean_glx);
}

#endif
