/* AdamW (fp32 moments) and 8-bit AdamW (block-wise e4m3 moments), per
 * element, following ops.h's definition and torch.optim.AdamW's order of
 * operations: decay, lerp of m, v update, sqrt(v)/sqrt(bc2) + eps.
 *
 * The bias corrections are computed once per call on the host in double
 * (aitk_adamw_consts_make) and passed by value to the kernel. 8-bit: the
 * block's state is dequantized, updated in fp32, and requantized with the
 * block's new absmax (of m, and of sqrt(v)) / 448; a zero block stays 0. */
#ifndef AITK_KERNELS_MATH_OPTIM_H
#define AITK_KERNELS_MATH_OPTIM_H

#include <math.h>

#include "kernels/math/fp8.h"
#include "kernels/math/hd.h"
#include "kernels/ops.h"

typedef struct aitk_adamw_consts {
    float decay;     /* 1 - lr * weight_decay */
    float b1, b2;
    float step_size; /* lr / (1 - b1^t) */
    float bc2_sqrt;  /* sqrt(1 - b2^t) */
    float eps;
} aitk_adamw_consts;

/* 0 on success; -1 for hyperparameters ops.h rejects (step < 1, betas
 * outside [0,1), negative lr or eps). Host only. */
static inline int aitk_adamw_consts_make(aitk_adamw_consts *k, const aitk_adamw_hparams *hp,
                                         long step)
{
    if (!hp || step < 1 || !(hp->beta1 >= 0.0f && hp->beta1 < 1.0f) ||
        !(hp->beta2 >= 0.0f && hp->beta2 < 1.0f) || !(hp->eps >= 0.0f) || !(hp->lr >= 0.0f))
        return -1;
    double bc1 = 1.0 - pow(hp->beta1, (double)step);
    double bc2 = 1.0 - pow(hp->beta2, (double)step);
    if (!(bc1 > 0.0 && bc2 > 0.0))
        return -1;
    k->decay = 1.0f - hp->lr * hp->weight_decay;
    k->b1 = hp->beta1;
    k->b2 = hp->beta2;
    k->step_size = (float)(hp->lr / bc1);
    k->bc2_sqrt = (float)sqrt(bc2);
    k->eps = hp->eps;
    return 0;
}

AITK_HD static inline void aitk_adamw_elem(const aitk_adamw_consts *k, float *p, float *m,
                                           float *v, float g)
{
    *p *= k->decay;
    *m += (1.0f - k->b1) * (g - *m);
    *v = *v * k->b2 + (1.0f - k->b2) * g * g;
    float denom = sqrtf(*v) / k->bc2_sqrt + k->eps;
    *p -= k->step_size * (*m / denom);
}

/* The 8-bit state of one element, decoded: m, and v = (code * scale)^2. */
AITK_HD static inline float aitk_adamw8_m(uint8_t code, float scale)
{
    return aitk_e4m3_decode(code) * scale;
}

AITK_HD static inline float aitk_adamw8_v(uint8_t code, float scale)
{
    float s = aitk_e4m3_decode(code) * scale;
    return s * s;
}

/* Block scale from the block's absmax. */
AITK_HD static inline float aitk_adamw8_scale(float absmax)
{
    return absmax / AITK_FP8_E4M3_MAX;
}

/* Code of x under `scale`; 0 for an all-zero block. */
AITK_HD static inline uint8_t aitk_adamw8_code(float x, float scale)
{
    return scale > 0.0f ? aitk_e4m3_encode_sat(x / scale) : (uint8_t)0;
}

#endif
