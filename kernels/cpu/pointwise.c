/* Pointwise ops on the CPU: GELU (tanh), SiLU, SwiGLU, the MSE loss, and the
 * array forms of the fp8 / bf16 storage codecs.
 *
 * These are memory-bound; a plain loop is what the compiler vectorises best,
 * and threads only pay on large tensors, so OpenMP is used with an `if`
 * clause (AITK_CPU_PAR_MIN, cpu.h) that keeps small calls single-threaded. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/numfmt.h"

static const float gelu_k = 0.7978845608028654f; /* sqrt(2/pi) */
static const float gelu_c = 0.044715f;

/* exp(x) for x in [-87, 80] with arithmetic only, so that the GELU loops
 * vectorise (a call to glibc's expf keeps them scalar). Range reduction
 * x = n ln2 + r with ln2 split in two (the high part exact in float), then
 * exp(r) on |r| <= ln2/2 by the degree-6 minimax polynomial published with
 * Cephes' expf (S. Moshier); 2^n is built in the exponent bits. Within 2 ulp
 * of expf over that range: kernels.fwd / kernels.fd / golden tests hold it. */
static inline float exp_poly(float x)
{
    /* Round to nearest by adding and removing 1.5 * 2^23 (exact for
     * |x log2 e| < 2^22): floorf would be a library call on baseline x86-64
     * and stop vectorisation. */
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* GELU-tanh through one exponential instead of tanhf: with e = exp(-2u),
 *   1 + tanh(u) = 2 / (1 + e)      and      1 - tanh(u) = 2e / (1 + e),
 * both free of cancellation. glibc's scalar tanhf goes through expm1f and
 * cost a quarter of a whole training step (profiled on the FLUX-shaped
 * step). -2u is clamped to [-87, 80] so e stays a finite normal float;
 * beyond that 1 + tanh(u) is 0 or 2 to float precision. */
static inline void gelu_parts(float x, float *one_plus_th, float *one_minus_th)
{
    float u = gelu_k * (x + gelu_c * x * x * x);
    float a = -2.0f * u;
    a = a < -87.0f ? -87.0f : a; /* selects, not fminf/fmaxf: those stay scalar */
    a = a > 80.0f ? 80.0f : a;
    float e = exp_poly(a);
    float s = 1.0f / (1.0f + e);
    *one_plus_th = 2.0f * s;
    *one_minus_th = 2.0f * e * s;
}

aitk_status aitk_cpu_gelu_forward(float *out, const float *inp, size_t n)
{
    AITK_CPU_REQUIRE(out && inp);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], p, m;
        gelu_parts(x, &p, &m);
        out[i] = 0.5f * x * p;
    }
    return AITK_OK;
}

aitk_status aitk_cpu_gelu_backward(float *dinp, const float *dout, const float *inp, size_t n)
{
    AITK_CPU_REQUIRE(dinp && dout && inp);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], p, m;
        gelu_parts(x, &p, &m);
        float du = gelu_k * (1.0f + 3.0f * gelu_c * x * x);
        /* 1 - tanh^2 = (1 - tanh)(1 + tanh) */
        dinp[i] = dout[i] * (0.5f * p + 0.5f * x * (m * p) * du);
    }
    return AITK_OK;
}

static float sigmoidf(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

aitk_status aitk_cpu_silu_forward(float *out, const float *inp, size_t n)
{
    AITK_CPU_REQUIRE(out && inp);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++)
        out[i] = inp[i] * sigmoidf(inp[i]);
    return AITK_OK;
}

aitk_status aitk_cpu_silu_backward(float *dinp, const float *dout, const float *inp, size_t n)
{
    AITK_CPU_REQUIRE(dinp && dout && inp);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        float s = sigmoidf(inp[i]);
        dinp[i] = dout[i] * s * (1.0f + inp[i] * (1.0f - s));
    }
    return AITK_OK;
}

aitk_status aitk_cpu_swiglu_forward(float *out, const float *a, const float *u, size_t n)
{
    AITK_CPU_REQUIRE(out && a && u);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] * sigmoidf(a[i]) * u[i];
    return AITK_OK;
}

aitk_status aitk_cpu_swiglu_backward(float *da, float *du, const float *dout, const float *a,
                                     const float *u, size_t n)
{
    AITK_CPU_REQUIRE(da && du && dout && a && u);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        float s = sigmoidf(a[i]);
        float g = dout[i];
        /* Read both inputs before writing: da may alias a, du may alias u. */
        float ui = u[i], ai = a[i];
        du[i] = g * ai * s;
        da[i] = g * ui * s * (1.0f + ai * (1.0f - s));
    }
    return AITK_OK;
}

aitk_status aitk_cpu_mse_forward(float *loss, const float *pred, const float *target, size_t n)
{
    AITK_CPU_REQUIRE(loss && pred && target && n > 0);
    /* Sequential double sum: the loss is the one number the golden test
     * compares at 1e-5 relative, and it must not depend on the thread count. */
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)pred[i] - target[i];
        s += e * e;
    }
    *loss = (float)(s / (double)n);
    return AITK_OK;
}

aitk_status aitk_cpu_mse_backward(float *dpred, float dloss, const float *pred,
                                  const float *target, size_t n)
{
    AITK_CPU_REQUIRE(dpred && pred && target && n > 0);
    float k = 2.0f * dloss / (float)n;
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++)
        dpred[i] = k * (pred[i] - target[i]);
    return AITK_OK;
}

aitk_status aitk_cpu_fp8_dequantize(float *out, const uint8_t *q, float scale, size_t n)
{
    AITK_CPU_REQUIRE(out && q && isfinite(scale));
    /* 256 codes: a table turns the decode into one load per element. */
    float lut[256];
    for (int i = 0; i < 256; i++)
        lut[i] = aitk_fp8_e4m3_decode((uint8_t)i) * scale;
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++)
        out[i] = lut[q[i]];
    return AITK_OK;
}

aitk_status aitk_cpu_fp8_quantize(uint8_t *q, const float *inp, float scale, size_t n)
{
    AITK_CPU_REQUIRE(q && inp && isfinite(scale) && scale > 0.0f);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++)
        q[i] = aitk_fp8_e4m3_encode(inp[i] / scale, true);
    return AITK_OK;
}

aitk_status aitk_cpu_bf16_pack(uint16_t *out, const float *inp, size_t n)
{
    AITK_CPU_REQUIRE(out && inp);
    for (size_t i = 0; i < n; i++)
        out[i] = aitk_bf16_from_f32(inp[i]);
    return AITK_OK;
}

aitk_status aitk_cpu_bf16_unpack(float *out, const uint16_t *inp, size_t n)
{
    AITK_CPU_REQUIRE(out && inp);
    for (size_t i = 0; i < n; i++)
        out[i] = aitk_bf16_to_f32(inp[i]);
    return AITK_OK;
}

aitk_status aitk_cpu_bf16_round(float *x, size_t n)
{
    AITK_CPU_REQUIRE(x);
    for (size_t i = 0; i < n; i++)
        x[i] = aitk_bf16_to_f32(aitk_bf16_from_f32(x[i]));
    return AITK_OK;
}
