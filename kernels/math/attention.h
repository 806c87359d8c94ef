/* Per-row arithmetic and indexing of the plain attention kernels
 * (kernels/cuda/attention_plain.cu), shared with the CPU tests.
 *
 * Layout (ops.h): q, out (B,T,Hq,D), k, v (B,T,Hkv,D), lse (B,Hq,T); GQA
 * maps query head h to kv head h / (Hq/Hkv). Forward per query row: scores
 * s_j = scale q.k_j, lse = max + log(sum exp(s - max)), p_j = exp(s_j - lse),
 * out = sum p_j v_j. Backward per query row, from lse:
 *   di = dout.out, ds_j = p_j (dout.v_j - di),
 *   dq = scale sum ds_j k_j, dk_j += scale ds_j q, dv_j += p_j dout. */
#ifndef AITK_KERNELS_MATH_ATTENTION_H
#define AITK_KERNELS_MATH_ATTENTION_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/math/bf16.h"
#include "kernels/math/hd.h"

/* Element offset of row i of head h in a (B,T,H,D) tensor, sample bi. */
AITK_HD static inline size_t aitk_attn_offset(size_t bi, size_t i, int h, int t, int heads,
                                              int d)
{
    return ((bi * (size_t)t + i) * (size_t)heads + (size_t)h) * (size_t)d;
}

/* The kv head query head h reads. */
AITK_HD static inline int aitk_attn_kv_head(int h, int hq, int hkv)
{
    return h / (hq / hkv);
}

/* q (fp32, already loaded) . k (bf16 storage), d terms in fp32. */
AITK_HD static inline float aitk_attn_dot(const float *q, const uint16_t *k, int d)
{
    float s = 0.0f;
    for (int x = 0; x < d; x++)
        s += q[x] * aitk_bf16_decode(k[x]);
    return s;
}

AITK_HD static inline float aitk_attn_lse(float row_max, float sum_exp)
{
    return row_max + logf(sum_exp);
}

AITK_HD static inline float aitk_attn_prob(float score, float lse)
{
    return expf(score - lse);
}

/* dS without the scale (the scale is applied once in dq and dk). */
AITK_HD static inline float aitk_attn_dscore(float p, float dp, float di)
{
    return p * (dp - di);
}

#endif
