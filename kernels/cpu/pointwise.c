/* Pointwise ops on the CPU: GELU (tanh), SiLU, SwiGLU, the MSE loss, and the
 * array forms of the fp8 / bf16 storage codecs.
 *
 * These are memory-bound; a plain loop is what the compiler vectorises best,
 * and threads only pay on large tensors, so OpenMP is used with an `if`
 * clause (AITK_CPU_PAR_MIN, cpu.h) that keeps small calls single-threaded. */
#include <math.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/numfmt.h"

static const float gelu_k = 0.7978845608028654f; /* sqrt(2/pi) */
static const float gelu_c = 0.044715f;

aitk_status aitk_cpu_gelu_forward(float *out, const float *inp, size_t n)
{
    AITK_CPU_REQUIRE(out && inp);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = 0.5f * x * (1.0f + tanhf(gelu_k * (x + gelu_c * x * x * x)));
    }
    return AITK_OK;
}

aitk_status aitk_cpu_gelu_backward(float *dinp, const float *dout, const float *inp, size_t n)
{
    AITK_CPU_REQUIRE(dinp && dout && inp);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float th = tanhf(gelu_k * (x + gelu_c * x * x * x));
        float du = gelu_k * (1.0f + 3.0f * gelu_c * x * x);
        dinp[i] = dout[i] * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du);
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
