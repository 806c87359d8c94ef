/* AdamW with fp32 moments and 8-bit AdamW with block-wise quantized moments
 * (the scheme and why it was chosen: ops.h, above AITK_ADAMW8_BLOCK).
 *
 * Both follow torch.optim.AdamW's arithmetic order (lerp for the first
 * moment, bias corrections in double, sqrt(v)/sqrt(bc2) + eps), so a golden
 * comparison after several steps stays within fp32 rounding.
 *
 * The per-element arithmetic is written out here again rather than taken
 * from kernels/math/optim.h on purpose: this file is the independent
 * reference that tests/math checks the GPU's arithmetic against, and a
 * shared function would make that check compare the code with itself. */
#include <math.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/numfmt.h"

typedef struct adamw_consts {
    float decay;     /* 1 - lr * weight_decay */
    float b1, b2;
    float step_size; /* lr / (1 - b1^t) */
    float bc2_sqrt;  /* sqrt(1 - b2^t) */
    float eps;
} adamw_consts;

static aitk_status adamw_prepare(adamw_consts *k, const aitk_adamw_hparams *hp, long step)
{
    AITK_CPU_REQUIRE(hp && step >= 1);
    AITK_CPU_REQUIRE(hp->beta1 >= 0.0f && hp->beta1 < 1.0f && hp->beta2 >= 0.0f &&
                     hp->beta2 < 1.0f && hp->eps >= 0.0f && hp->lr >= 0.0f);
    double bc1 = 1.0 - pow(hp->beta1, (double)step);
    double bc2 = 1.0 - pow(hp->beta2, (double)step);
    AITK_CPU_REQUIRE(bc1 > 0.0 && bc2 > 0.0);
    k->decay = 1.0f - hp->lr * hp->weight_decay;
    k->b1 = hp->beta1;
    k->b2 = hp->beta2;
    k->step_size = (float)(hp->lr / bc1);
    k->bc2_sqrt = (float)sqrt(bc2);
    k->eps = hp->eps;
    return AITK_OK;
}

static inline void adamw_elem(const adamw_consts *k, float *p, float *m, float *v, float g)
{
    *p *= k->decay;
    *m += (1.0f - k->b1) * (g - *m);
    *v = *v * k->b2 + (1.0f - k->b2) * g * g;
    float denom = sqrtf(*v) / k->bc2_sqrt + k->eps;
    *p -= k->step_size * (*m / denom);
}

aitk_status aitk_cpu_adamw_update(float *param, float *m, float *v, const float *grad,
                                  size_t n, const aitk_adamw_hparams *hp, long step)
{
    AITK_CPU_REQUIRE(param && m && v && grad);
    adamw_consts k;
    aitk_status st = adamw_prepare(&k, hp, step);
    if (st)
        return st;
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++)
        adamw_elem(&k, &param[i], &m[i], &v[i], grad[i]);
    return AITK_OK;
}

/* Quantize `n` values of x (n <= block) into codes, scale = absmax / 448. */
static void quantize_block(uint8_t *codes, float *scale, const float *x, size_t n)
{
    float amax = 0.0f;
    for (size_t i = 0; i < n; i++)
        if (fabsf(x[i]) > amax)
            amax = fabsf(x[i]);
    float s = amax / AITK_FP8_E4M3_MAX;
    *scale = s;
    for (size_t i = 0; i < n; i++)
        codes[i] = s > 0.0f ? aitk_fp8_e4m3_encode(x[i] / s, true) : 0;
}

aitk_status aitk_cpu_adamw8_update(float *param, uint8_t *m_q, uint8_t *v_q, float *m_scale,
                                   float *v_scale, const float *grad, size_t n,
                                   const aitk_adamw_hparams *hp, long step)
{
    AITK_CPU_REQUIRE(param && m_q && v_q && m_scale && v_scale && grad);
    adamw_consts k;
    aitk_status st = adamw_prepare(&k, hp, step);
    if (st)
        return st;
    size_t blocks = aitk_adamw8_blocks(n);
#pragma omp parallel for schedule(static) if ((long long)n >= AITK_CPU_PAR_MIN)
    for (size_t blk = 0; blk < blocks; blk++) {
        size_t lo = blk * AITK_ADAMW8_BLOCK;
        size_t len = n - lo < AITK_ADAMW8_BLOCK ? n - lo : AITK_ADAMW8_BLOCK;
        float mb[AITK_ADAMW8_BLOCK], vb[AITK_ADAMW8_BLOCK];
        for (size_t i = 0; i < len; i++) {
            mb[i] = aitk_fp8_e4m3_decode(m_q[lo + i]) * m_scale[blk];
            float sv = aitk_fp8_e4m3_decode(v_q[lo + i]) * v_scale[blk];
            vb[i] = sv * sv;
        }
        for (size_t i = 0; i < len; i++)
            adamw_elem(&k, &param[lo + i], &mb[i], &vb[i], grad[lo + i]);
        quantize_block(m_q + lo, &m_scale[blk], mb, len);
        for (size_t i = 0; i < len; i++)
            vb[i] = sqrtf(vb[i]);
        quantize_block(v_q + lo, &v_scale[blk], vb, len);
    }
    return AITK_OK;
}
