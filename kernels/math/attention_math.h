/* The per-element arithmetic of the math attention path
 * (kernels/cuda/attention_math.cu): where each element of the head-major
 * copies comes from and goes to, and the masked probability and dS of one
 * score. Shared with tests/math, which runs the whole path on the CPU. */
#ifndef AITK_KERNELS_MATH_ATTENTION_MATH_H
#define AITK_KERNELS_MATH_ATTENTION_MATH_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/math/attention.h"
#include "kernels/math/hd.h"

/* Element e of the head-major copy [b * hq][tp][d] of a tensor stored
 * [b][t][hs][d]: true and *src its offset there, or false for a padding row
 * (i >= t), which holds 0. Query head h reads head aitk_attn_kv_head(h, hq,
 * hs): itself when hs == hq, its kv head otherwise. */
AITK_HD static inline bool aitk_attn_math_src(size_t e, int t, int tp, int hq, int hs, int d,
                                              size_t *src)
{
    int x = (int)(e % (size_t)d), i = (int)(e / (size_t)d % (size_t)tp);
    size_t bh = e / (size_t)d / (size_t)tp;
    int h = (int)(bh % (size_t)hq);
    size_t bi = bh / (size_t)hq;
    if (i >= t)
        return false;
    *src = aitk_attn_offset(bi, (size_t)i, aitk_attn_kv_head(h, hq, hs), t, hs, d) + (size_t)x;
    return true;
}

/* Where element e of a tensor stored [b][t][hs][d] finds the head-major
 * copy of its j-th query head (j < hq / hs; their sum is its gradient). */
AITK_HD static inline size_t aitk_attn_math_back(size_t e, int t, int tp, int hq, int hs, int d,
                                                 int j)
{
    int x = (int)(e % (size_t)d), g = (int)(e / (size_t)d % (size_t)hs);
    size_t i = e / (size_t)d / (size_t)hs % (size_t)t;
    size_t bi = e / (size_t)d / (size_t)hs / (size_t)t;
    size_t h = (size_t)g * (size_t)(hq / hs) + (size_t)j;
    return ((bi * (size_t)hq + h) * (size_t)tp + i) * (size_t)d + (size_t)x;
}

/* P of score s (unscaled) at query row i, key j: 0 for padding. */
AITK_HD static inline float aitk_attn_math_prob(float s, float lse, int i, int j, int t,
                                                float scale)
{
    return i < t && j < t ? aitk_attn_prob(scale * s, lse) : 0.0f;
}

/* dS with the scale folded in (dQ = dS K and dK = dS^T Q take it as is). */
AITK_HD static inline float aitk_attn_math_dscore(float p, float dp, float di, int i, int j, int t,
                                                  float scale)
{
    return i < t && j < t ? scale * aitk_attn_dscore(p, dp, di) : 0.0f;
}

#endif
