/* The per-sample conditioning ops of an MMDiT block on the CPU: adaLN
 * modulation, gated residuals, and the 3-axis rotary position embedding.
 *
 * shift/scale/gate are rows of C that sit `ld_mod` apart, because in FLUX
 * they are chunks of one modulation linear's (B, 6C) output and in Chroma
 * slices of the approximator's output; reading them in place avoids six
 * copies per block. Their gradients are reductions over tokens, done with
 * the token loop innermost per (sample, channel) so no two threads write one
 * entry and the summation order never changes (bitwise-repeatable runs). */
#include <math.h>

#include "kernels/cpu/cpu.h"

aitk_status aitk_cpu_modulate_forward(float *out, const float *x, const float *shift,
                                      const float *scale, int b, int t, int c, int ld_mod)
{
    AITK_CPU_REQUIRE(out && x && shift && scale && b > 0 && t > 0 && c > 0 && ld_mod >= c);
#pragma omp parallel for schedule(static) if ((long long)b * t * c >= AITK_CPU_PAR_MIN)
    for (long long row = 0; row < (long long)b * t; row++) {
        const float *sh = shift + (row / t) * ld_mod;
        const float *sc = scale + (row / t) * ld_mod;
        const float *xr = x + row * c;
        float *yr = out + row * c;
        for (int j = 0; j < c; j++)
            yr[j] = xr[j] * (1.0f + sc[j]) + sh[j];
    }
    return AITK_OK;
}

void aitk_cpu_modulate_token_sums(float *dshift, float *dscale, const float *dout,
                                  const float *x, int b, int t, int c, int ld_mod)
{
#pragma omp parallel for schedule(static) if ((long long)b * t * c >= AITK_CPU_PAR_MIN)
    for (long long bj = 0; bj < (long long)b * c; bj++) {
        long long s = bj / c;
        int j = (int)(bj % c);
        double gs = 0.0, gsc = 0.0;
        for (int i = 0; i < t; i++) {
            size_t at = ((size_t)s * t + i) * c + j;
            gs += dout[at];
            gsc += (double)dout[at] * x[at];
        }
        dshift[s * ld_mod + j] = (float)gs;
        dscale[s * ld_mod + j] = (float)gsc;
    }
}

aitk_status aitk_cpu_modulate_backward(float *dx, float *dshift, float *dscale,
                                       const float *dout, const float *x, const float *scale,
                                       int b, int t, int c, int ld_mod)
{
    AITK_CPU_REQUIRE(dx && dshift && dscale && dout && x && scale && b > 0 && t > 0 && c > 0 &&
                     ld_mod >= c);
#pragma omp parallel for schedule(static) if ((long long)b * t * c >= AITK_CPU_PAR_MIN)
    for (long long row = 0; row < (long long)b * t; row++) {
        const float *sc = scale + (row / t) * ld_mod;
        for (int j = 0; j < c; j++)
            dx[row * c + j] = dout[row * c + j] * (1.0f + sc[j]);
    }
    aitk_cpu_modulate_token_sums(dshift, dscale, dout, x, b, t, c, ld_mod);
    return AITK_OK;
}

aitk_status aitk_cpu_gated_residual_forward(float *resid, const float *x, const float *gate,
                                            int b, int t, int c, int ld_mod)
{
    AITK_CPU_REQUIRE(resid && x && gate && b > 0 && t > 0 && c > 0 && ld_mod >= c);
#pragma omp parallel for schedule(static) if ((long long)b * t * c >= AITK_CPU_PAR_MIN)
    for (long long row = 0; row < (long long)b * t; row++) {
        const float *g = gate + (row / t) * ld_mod;
        for (int j = 0; j < c; j++)
            resid[row * c + j] += g[j] * x[row * c + j];
    }
    return AITK_OK;
}

aitk_status aitk_cpu_gated_residual_backward(float *dx, float *dgate, const float *dresid,
                                             const float *x, const float *gate, int b, int t,
                                             int c, int ld_mod)
{
    AITK_CPU_REQUIRE(dx && dgate && dresid && x && gate && b > 0 && t > 0 && c > 0 &&
                     ld_mod >= c);
#pragma omp parallel for schedule(static) if ((long long)b * t * c >= AITK_CPU_PAR_MIN)
    for (long long row = 0; row < (long long)b * t; row++) {
        const float *g = gate + (row / t) * ld_mod;
        for (int j = 0; j < c; j++)
            dx[row * c + j] = dresid[row * c + j] * g[j];
    }
#pragma omp parallel for schedule(static) if ((long long)b * t * c >= AITK_CPU_PAR_MIN)
    for (long long bj = 0; bj < (long long)b * c; bj++) {
        long long s = bj / c;
        int j = (int)(bj % c);
        double acc = 0.0;
        for (int i = 0; i < t; i++) {
            size_t at = ((size_t)s * t + i) * c + j;
            acc += (double)dresid[at] * x[at];
        }
        dgate[s * ld_mod + j] = (float)acc;
    }
    return AITK_OK;
}

aitk_status aitk_cpu_rope_table(float *cos_t, float *sin_t, const float *pos, int t, int d,
                                const int axes[3], float theta)
{
    AITK_CPU_REQUIRE(cos_t && sin_t && pos && axes && t > 0 && d > 0 && theta > 0.0f);
    AITK_CPU_REQUIRE(axes[0] >= 0 && axes[1] >= 0 && axes[2] >= 0);
    AITK_CPU_REQUIRE(axes[0] % 2 == 0 && axes[1] % 2 == 0 && axes[2] % 2 == 0);
    AITK_CPU_REQUIRE(axes[0] + axes[1] + axes[2] == d);
    /* Angles in double, as diffusers builds FLUX's table in float64: at
     * position ~100 an fp32 angle is already off by ~1e-5 rad. */
    for (int i = 0; i < t; i++) {
        int p = 0;
        for (int a = 0; a < 3; a++) {
            for (int j = 0; j < axes[a] / 2; j++, p++) {
                double freq = pow((double)theta, -2.0 * j / axes[a]);
                double ang = (double)pos[(size_t)i * 3 + a] * freq;
                cos_t[(size_t)i * (d / 2) + p] = (float)cos(ang);
                sin_t[(size_t)i * (d / 2) + p] = (float)sin(ang);
            }
        }
    }
    return AITK_OK;
}

/* Rotate each pair (2p, 2p+1) by +angle (sign 1) or -angle (sign -1, the
 * transpose, which is the backward of a rotation). */
static aitk_status rope_apply(float *out, const float *inp, const float *cos_t,
                              const float *sin_t, int b, int t, int h, int d, float sign)
{
    AITK_CPU_REQUIRE(out && inp && cos_t && sin_t && b > 0 && t > 0 && h > 0 && d > 0);
    AITK_CPU_REQUIRE(d % 2 == 0);
#pragma omp parallel for schedule(static) if ((long long)b * t * h * d >= AITK_CPU_PAR_MIN)
    for (long long row = 0; row < (long long)b * t; row++) {
        const float *cs = cos_t + (row % t) * (d / 2);
        const float *sn = sin_t + (row % t) * (d / 2);
        for (int hh = 0; hh < h; hh++) {
            size_t base = ((size_t)row * h + hh) * d;
            for (int p = 0; p < d / 2; p++) {
                float x0 = inp[base + 2 * p], x1 = inp[base + 2 * p + 1];
                float s = sign * sn[p];
                out[base + 2 * p] = x0 * cs[p] - x1 * s;
                out[base + 2 * p + 1] = x0 * s + x1 * cs[p];
            }
        }
    }
    return AITK_OK;
}

aitk_status aitk_cpu_rope_forward(float *out, const float *inp, const float *cos_t,
                                  const float *sin_t, int b, int t, int h, int d)
{
    return rope_apply(out, inp, cos_t, sin_t, b, t, h, d, 1.0f);
}

aitk_status aitk_cpu_rope_backward(float *dinp, const float *dout, const float *cos_t,
                                   const float *sin_t, int b, int t, int h, int d)
{
    return rope_apply(dinp, dout, cos_t, sin_t, b, t, h, d, -1.0f);
}
