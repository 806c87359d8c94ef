/* LayerNorm (no affine), LayerNorm followed by adaLN modulation (the fused
 * op), and RMSNorm (with weight) on the CPU, forward and backward, one row
 * per OpenMP iteration.
 *
 * Row statistics are summed in double: C is 3072 in FLUX, and an fp32 sum of
 * squares over that many terms drifts by more than the tolerance the golden
 * tests allow. */
#include <math.h>

#include "kernels/cpu/cpu.h"

/* One LayerNorm row: y = (x - mu) r in fp32, mu and r in double. With
 * scale (NULL: plain LayerNorm) it also modulates the fp32 y, exactly as
 * modulate.c does: out = y (1 + scale) + shift. One function serves both
 * ops, so the fused op gives the bits of layernorm then modulate. */
static void layernorm_row_forward(float *y, float *out, float *mean, float *rstd,
                                  const float *x, const float *shift, const float *scale, int c,
                                  float eps)
{
    double s = 0.0;
    for (int j = 0; j < c; j++)
        s += x[j];
    double mu = s / c;
    double ss = 0.0;
    for (int j = 0; j < c; j++)
        ss += (x[j] - mu) * (x[j] - mu);
    double r = 1.0 / sqrt(ss / c + eps);
    for (int j = 0; j < c; j++)
        y[j] = (float)((x[j] - mu) * r);
    if (scale)
        for (int j = 0; j < c; j++)
            out[j] = y[j] * (1.0f + scale[j]) + shift[j];
    *mean = (float)mu;
    *rstd = (float)r;
}

/* One LayerNorm row backward, from the saved (fp32) mean and rstd. With
 * scale (NULL: the gradient is dout itself) the gradient reaching y is
 * g = dout (1 + scale) in fp32, the value modulate_backward would have
 * stored, recomputed here instead:
 *   dx = r * (g - mean(g) - xhat * mean(g * xhat)), xhat = (x - mu) * r. */
static void layernorm_row_backward(float *dx, const float *dout, const float *scale,
                                   const float *x, double mu, double r, int c)
{
    double sg = 0.0, sgx = 0.0;
    for (int j = 0; j < c; j++) {
        float g = scale ? dout[j] * (1.0f + scale[j]) : dout[j];
        double xhat = (x[j] - mu) * r;
        sg += g;
        sgx += g * xhat;
    }
    sg /= c;
    sgx /= c;
    for (int j = 0; j < c; j++) {
        float g = scale ? dout[j] * (1.0f + scale[j]) : dout[j];
        double xhat = (x[j] - mu) * r;
        dx[j] = (float)(r * (g - sg - xhat * sgx));
    }
}

aitk_status aitk_cpu_layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                                       int n, int c, float eps)
{
    AITK_CPU_REQUIRE(out && mean && rstd && inp && n > 0 && c > 0 && eps >= 0.0f);
#pragma omp parallel for schedule(static) if ((long long)n * c >= AITK_CPU_PAR_MIN)
    for (int i = 0; i < n; i++)
        layernorm_row_forward(out + (size_t)i * c, NULL, mean + i, rstd + i,
                              inp + (size_t)i * c, NULL, NULL, c, eps);
    return AITK_OK;
}

aitk_status aitk_cpu_layernorm_backward(float *dinp, const float *dout, const float *inp,
                                        const float *mean, const float *rstd, int n, int c)
{
    AITK_CPU_REQUIRE(dinp && dout && inp && mean && rstd && n > 0 && c > 0);
#pragma omp parallel for schedule(static) if ((long long)n * c >= AITK_CPU_PAR_MIN)
    for (int i = 0; i < n; i++)
        layernorm_row_backward(dinp + (size_t)i * c, dout + (size_t)i * c, NULL,
                               inp + (size_t)i * c, mean[i], rstd[i], c);
    return AITK_OK;
}

/* Rows are sample-major: row i of sample i / t reads that sample's shift
 * and scale rows. */
aitk_status aitk_cpu_layernorm_modulate_forward(float *out, float *ln, float *mean, float *rstd,
                                                const float *inp, const float *shift,
                                                const float *scale, int b, int t, int c,
                                                int ld_mod, float eps)
{
    AITK_CPU_REQUIRE(out && ln && mean && rstd && inp && shift && scale && b > 0 && t > 0 &&
                     c > 0 && ld_mod >= c && eps >= 0.0f);
#pragma omp parallel for schedule(static) if ((long long)b * t * c >= AITK_CPU_PAR_MIN)
    for (long long row = 0; row < (long long)b * t; row++) {
        const size_t at = (size_t)row * c, mod = (size_t)(row / t) * ld_mod;
        layernorm_row_forward(ln + at, out + at, mean + row, rstd + row, inp + at, shift + mod,
                              scale + mod, c, eps);
    }
    return AITK_OK;
}

aitk_status aitk_cpu_layernorm_modulate_backward(float *dinp, float *dshift, float *dscale,
                                                 const float *dout, const float *inp,
                                                 const float *ln, const float *mean,
                                                 const float *rstd, const float *scale, int b,
                                                 int t, int c, int ld_mod)
{
    AITK_CPU_REQUIRE(dinp && dshift && dscale && dout && inp && ln && mean && rstd && scale &&
                     b > 0 && t > 0 && c > 0 && ld_mod >= c);
    /* The token sums first: dinp may alias dout. */
    aitk_cpu_modulate_token_sums(dshift, dscale, dout, ln, b, t, c, ld_mod);
#pragma omp parallel for schedule(static) if ((long long)b * t * c >= AITK_CPU_PAR_MIN)
    for (long long row = 0; row < (long long)b * t; row++) {
        const size_t at = (size_t)row * c;
        layernorm_row_backward(dinp + at, dout + at, scale + (size_t)(row / t) * ld_mod,
                               inp + at, mean[row], rstd[row], c);
    }
    return AITK_OK;
}

aitk_status aitk_cpu_rmsnorm_forward(float *out, float *rstd, const float *inp,
                                     const float *weight, int n, int c, float eps)
{
    AITK_CPU_REQUIRE(out && rstd && inp && weight && n > 0 && c > 0 && eps >= 0.0f);
#pragma omp parallel for schedule(static) if ((long long)n * c >= AITK_CPU_PAR_MIN)
    for (int i = 0; i < n; i++) {
        const float *x = inp + (size_t)i * c;
        float *y = out + (size_t)i * c;
        double ss = 0.0;
        for (int j = 0; j < c; j++)
            ss += (double)x[j] * x[j];
        double r = 1.0 / sqrt(ss / c + eps);
        for (int j = 0; j < c; j++)
            y[j] = (float)(x[j] * r) * weight[j];
        rstd[i] = (float)r;
    }
    return AITK_OK;
}

aitk_status aitk_cpu_rmsnorm_backward(float *dinp, float *dweight, const float *dout,
                                      const float *inp, const float *weight, const float *rstd,
                                      int n, int c)
{
    AITK_CPU_REQUIRE(dinp && dout && inp && weight && rstd && n > 0 && c > 0);
    /* y = w x r, r = (mean(x^2) + eps)^-1/2:
     * dx = r * (g w - x r^2 mean(g w x)); dw += g x r summed over rows. */
#pragma omp parallel for schedule(static) if ((long long)n * c >= AITK_CPU_PAR_MIN)
    for (int i = 0; i < n; i++) {
        const float *x = inp + (size_t)i * c;
        const float *g = dout + (size_t)i * c;
        float *dx = dinp + (size_t)i * c;
        double r = rstd[i];
        double sgwx = 0.0;
        for (int j = 0; j < c; j++)
            sgwx += (double)g[j] * weight[j] * x[j];
        sgwx /= c;
        for (int j = 0; j < c; j++)
            dx[j] = (float)(r * ((double)g[j] * weight[j] - x[j] * r * r * sgwx));
    }
    if (dweight) {
        /* Columns outer, rows inner: each thread owns its dweight entries, so
         * no reduction races and the order of summation is fixed. */
#pragma omp parallel for schedule(static) if ((long long)n * c >= AITK_CPU_PAR_MIN)
        for (int j = 0; j < c; j++) {
            double s = 0.0;
            for (int i = 0; i < n; i++)
                s += (double)dout[(size_t)i * c + j] * inp[(size_t)i * c + j] * rstd[i];
            dweight[j] += (float)s;
        }
    }
    return AITK_OK;
}
