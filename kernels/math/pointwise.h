/* Elementwise activations and the MSE loss terms (ops.h: pointwise, loss).
 *
 * GELU is the tanh approximation FLUX's MLP uses; tanhf on both sides (the
 * CPU reference evaluates the same function through one exponential, which
 * agrees to a few ulp). SiLU's sigmoid is 1/(1+exp(-x)): exp(-x) = inf for
 * x < -88 gives 0, the right limit. */
#ifndef AITK_KERNELS_MATH_POINTWISE_H
#define AITK_KERNELS_MATH_POINTWISE_H

#include <math.h>

#include "kernels/math/hd.h"

#define AITK_GELU_K 0.7978845608028654f /* sqrt(2/pi) */
#define AITK_GELU_C 0.044715f

AITK_HD static inline float aitk_gelu(float x)
{
    float u = AITK_GELU_K * (x + AITK_GELU_C * x * x * x);
    return 0.5f * x * (1.0f + tanhf(u));
}

AITK_HD static inline float aitk_gelu_grad(float g, float x)
{
    float u = AITK_GELU_K * (x + AITK_GELU_C * x * x * x);
    float th = tanhf(u);
    float du = AITK_GELU_K * (1.0f + 3.0f * AITK_GELU_C * x * x);
    return g * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du);
}

AITK_HD static inline float aitk_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

AITK_HD static inline float aitk_silu(float x)
{
    return x * aitk_sigmoid(x);
}

AITK_HD static inline float aitk_silu_grad(float g, float x)
{
    float s = aitk_sigmoid(x);
    return g * s * (1.0f + x * (1.0f - s));
}

/* SwiGLU: out = silu(a) u; grads for a and u of one element. */
AITK_HD static inline float aitk_swiglu(float a, float u)
{
    return aitk_silu(a) * u;
}

AITK_HD static inline void aitk_swiglu_grad(float g, float a, float u, float *da, float *du)
{
    float s = aitk_sigmoid(a);
    *du = g * a * s;
    *da = g * u * s * (1.0f + a * (1.0f - s));
}

/* One squared error term; the sum is fp32 per thread and block, then double. */
AITK_HD static inline float aitk_mse_term(float pred, float target)
{
    float e = pred - target;
    return e * e;
}

/* k = 2 dloss / n, computed once on the host. */
AITK_HD static inline float aitk_mse_grad(float k, float pred, float target)
{
    return k * (pred - target);
}

#endif
