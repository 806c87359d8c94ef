/* The math attention path: batched cuBLASLt GEMMs on tensor cores plus
 * three small kernels, PyTorch's "math" SDPA in bf16 with fp32 scores
 * (attention_math_plan.h says why it exists and how memory is laid out).
 *
 * Forward, per group of heads: S = Q K^T (fp32), a row kernel turns S into
 * lse and P = exp(scale S - lse) (bf16), O = P V.
 * Backward, per group: S = Q K^T again, P from the saved lse, dV = P^T dO,
 * dP = dO V^T (fp32, into S's buffer), dS = scale P (dP - di) (bf16, over
 * P), dQ = dS K, dK = dS^T Q; di = rowsum(dO * O) comes from the plain
 * backward's kernel. Grouped-query attention repeats each kv head for its
 * query heads on the way in and sums their gradients on the way out. */
#include <math.h>
#include <stdio.h>

#include "kernels/cuda/attention_math_plan.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/attention_math.h"
#include "kernels/math/bf16.h"

enum { ROW_THREADS = 256 };

/* src [b][t][hs][d] -> dst [b * hq][tp][d] (aitk_attn_math_src). */
static __global__ void to_heads(uint16_t *dst, const uint16_t *src, int b, int t, int tp, int hq,
                                int hs, int d)
{
    size_t n = (size_t)b * hq * tp * d, at;
    GRID_STRIDE(e, n) dst[e] = aitk_attn_math_src(e, t, tp, hq, hs, d, &at) ? src[at] : 0;
}

/* src [b * hq][tp][d] -> dst [b][t][hs][d], summing (in fp32) the hq / hs
 * query heads that share a destination head. */
static __global__ void from_heads(uint16_t *dst, const uint16_t *src, int b, int t, int tp,
                                  int hq, int hs, int d)
{
    size_t n = (size_t)b * t * hs * d;
    GRID_STRIDE(e, n)
    {
        float sum = 0.0f;
        for (int j = 0; j < hq / hs; j++)
            sum += aitk_bf16_decode(src[aitk_attn_math_back(e, t, tp, hq, hs, d, j)]);
        dst[e] = aitk_bf16_encode(sum);
    }
}

/* One block per score row of the group starting at head h0: lse of the
 * row (the first t keys) into lse[bh * t + i], and P in bf16, 0 past t. */
static __global__ void softmax_rows(uint16_t *p, float *lse, const float *s, int h0, int t,
                                    int tp, float scale)
{
    size_t row = blockIdx.x;
    int i = (int)(row % tp);
    size_t bh = h0 + row / tp;
    const float *sr = s + row * tp;
    uint16_t *pr = p + row * tp;
    if (i >= t) {
        for (int j = threadIdx.x; j < tp; j += blockDim.x)
            pr[j] = 0;
        return;
    }
    float mx = -INFINITY;
    for (int j = threadIdx.x; j < t; j += blockDim.x)
        mx = fmaxf(mx, scale * sr[j]);
    mx = aitk_block_reduce(mx, true);
    float l = 0.0f;
    for (int j = threadIdx.x; j < t; j += blockDim.x)
        l += aitk_attn_prob(scale * sr[j], mx);
    float row_lse = aitk_attn_lse(mx, aitk_block_reduce(l, false));
    for (int j = threadIdx.x; j < tp; j += blockDim.x)
        pr[j] = aitk_bf16_encode(aitk_attn_math_prob(sr[j], row_lse, i, j, t, scale));
    if (threadIdx.x == 0)
        lse[bh * t + i] = row_lse;
}

/* P of the group at h0 from the saved lse; 0 for padded rows and keys. */
static __global__ void probs(uint16_t *p, const float *s, const float *lse, size_t n, int h0,
                             int t, int tp, float scale)
{
    GRID_STRIDE(e, n)
    {
        int j = (int)(e % tp), i = (int)(e / tp % tp);
        size_t row = (h0 + e / tp / tp) * t + (i < t ? i : 0);
        p[e] = aitk_bf16_encode(aitk_attn_math_prob(s[e], lse[row], i, j, t, scale));
    }
}

/* dS = scale * P (dP - di), over P; di[bh * t + i] as lse. */
static __global__ void dscores(uint16_t *p, const float *dp, const float *di, size_t n, int h0,
                               int t, int tp, float scale)
{
    GRID_STRIDE(e, n)
    {
        int j = (int)(e % tp), i = (int)(e / tp % tp);
        size_t row = (h0 + e / tp / tp) * t + (i < t ? i : 0);
        p[e] = aitk_bf16_encode(
            aitk_attn_math_dscore(aitk_bf16_decode(p[e]), dp[e], di[row], i, j, t, scale));
    }
}

static aitk_status workspace(const aitk_attn_math_plan *pl, char **base, const char *op)
{
    char what[96];
    snprintf(what, sizeof what, "cudaMallocAsync(%s math workspace)", op);
    aitk_status st = aitk_cuda_reserve(&aitk_cuda.attn_math, &aitk_cuda.attn_math_bytes,
                                       pl->total, what);
    *base = (char *)aitk_cuda.attn_math;
    return st;
}

/* One batched GEMM over `heads` heads in ops.h's row-major terms. */
static aitk_status gemm(void *c, bool c_f32, const void *a, const void *b, int m, int n, int k,
                        bool ta, bool tb, int heads, long long sa, long long sb, long long sc)
{
    return aitk_cuda_gemm_inner(c, c_f32, a, b, m, n, k, ta, tb, 1.0f, 0.0f, heads, sa, sb, sc);
}

static aitk_status move_in(uint16_t *dst, const aitk_act *src, const aitk_attn_math_plan *pl,
                           int b, int t, int hq, int hs, int d)
{
    size_t n = (size_t)pl->heads * pl->head_elems;
    to_heads<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(dst, (const uint16_t *)src, b, t,
                                                              pl->tp, hq, hs, d);
    return aitk_cuda_launched("attention math: to heads");
}

static aitk_status move_out(aitk_act *dst, const uint16_t *src, const aitk_attn_math_plan *pl,
                            int b, int t, int hq, int hs, int d)
{
    size_t n = (size_t)b * t * hs * d;
    from_heads<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>((uint16_t *)dst, src, b, t,
                                                                pl->tp, hq, hs, d);
    return aitk_cuda_launched("attention math: from heads");
}

extern "C" aitk_status aitk_cuda_attention_math_forward(aitk_act *out, float *lse,
                                                        const aitk_act *q, const aitk_act *k,
                                                        const aitk_act *v, int b, int t, int hq,
                                                        int hkv, int d, float scale,
                                                        const char **why)
{
    aitk_attn_math_plan pl;
    if ((*why = aitk_attn_math_plan_make(&pl, b, t, hq, hkv, d, false, AITK_ATTN_MATH_BUDGET)))
        return AITK_E_UNSUPPORTED;
    char *ws;
    aitk_status st = workspace(&pl, &ws, "attention_forward");
    if (!st)
        st = move_in((uint16_t *)(ws + pl.q), q, &pl, b, t, hq, hq, d);
    if (!st)
        st = move_in((uint16_t *)(ws + pl.k), k, &pl, b, t, hq, hkv, d);
    if (!st)
        st = move_in((uint16_t *)(ws + pl.v), v, &pl, b, t, hq, hkv, d);
    long long he = (long long)pl.head_elems, ss = (long long)pl.tp * pl.tp;
    int tp = pl.tp;
    for (int h0 = 0; !st && h0 < pl.heads; h0 += pl.group) {
        int n = pl.heads - h0 < pl.group ? pl.heads - h0 : pl.group;
        const uint16_t *qh = (const uint16_t *)(ws + pl.q) + h0 * he;
        const uint16_t *kh = (const uint16_t *)(ws + pl.k) + h0 * he;
        const uint16_t *vh = (const uint16_t *)(ws + pl.v) + h0 * he;
        uint16_t *oh = (uint16_t *)(ws + pl.o) + h0 * he, *p = (uint16_t *)(ws + pl.p);
        float *s = (float *)(ws + pl.s);
        st = gemm(s, true, qh, kh, tp, tp, d, false, true, n, he, he, ss);
        if (!st) {
            softmax_rows<<<(unsigned)((size_t)n * tp), ROW_THREADS, 0, aitk_cuda.stream>>>(
                p, lse, s, h0, t, tp, scale);
            st = aitk_cuda_launched("attention math: softmax rows");
        }
        if (!st)
            st = gemm(oh, false, p, vh, tp, d, tp, false, false, n, ss, he, he);
    }
    if (!st)
        st = move_out(out, (const uint16_t *)(ws + pl.o), &pl, b, t, hq, hq, d);
    return st;
}

extern "C" aitk_status aitk_cuda_attention_math_backward(
    aitk_act *dq, aitk_act *dk, aitk_act *dv, const aitk_act *dout, const aitk_act *q,
    const aitk_act *k, const aitk_act *v, const aitk_act *out, const float *lse, int b, int t,
    int hq, int hkv, int d, float scale, const char **why)
{
    aitk_attn_math_plan pl;
    if ((*why = aitk_attn_math_plan_make(&pl, b, t, hq, hkv, d, true, AITK_ATTN_MATH_BUDGET)))
        return AITK_E_UNSUPPORTED;
    char *ws;
    float *di = NULL;
    aitk_status st = workspace(&pl, &ws, "attention_backward");
    if (!st)
        st = aitk_cuda_attention_di(&di, dout, out, b, t, hq, d);
    if (!st)
        st = move_in((uint16_t *)(ws + pl.q), q, &pl, b, t, hq, hq, d);
    if (!st)
        st = move_in((uint16_t *)(ws + pl.k), k, &pl, b, t, hq, hkv, d);
    if (!st)
        st = move_in((uint16_t *)(ws + pl.v), v, &pl, b, t, hq, hkv, d);
    if (!st)
        st = move_in((uint16_t *)(ws + pl.dout), dout, &pl, b, t, hq, hq, d);
    long long he = (long long)pl.head_elems, ss = (long long)pl.tp * pl.tp;
    int tp = pl.tp;
    for (int h0 = 0; !st && h0 < pl.heads; h0 += pl.group) {
        int n = pl.heads - h0 < pl.group ? pl.heads - h0 : pl.group;
        size_t elems = (size_t)n * tp * tp;
        const uint16_t *qh = (const uint16_t *)(ws + pl.q) + h0 * he;
        const uint16_t *kh = (const uint16_t *)(ws + pl.k) + h0 * he;
        const uint16_t *vh = (const uint16_t *)(ws + pl.v) + h0 * he;
        const uint16_t *doh = (const uint16_t *)(ws + pl.dout) + h0 * he;
        uint16_t *dqh = (uint16_t *)(ws + pl.dq) + h0 * he;
        uint16_t *dkh = (uint16_t *)(ws + pl.dk) + h0 * he;
        uint16_t *dvh = (uint16_t *)(ws + pl.dv) + h0 * he;
        uint16_t *p = (uint16_t *)(ws + pl.p);
        float *s = (float *)(ws + pl.s);
        st = gemm(s, true, qh, kh, tp, tp, d, false, true, n, he, he, ss); /* S = Q K^T */
        if (!st) {
            probs<<<aitk_cuda_grid(elems), 256, 0, aitk_cuda.stream>>>(p, s, lse, elems, h0, t,
                                                                       tp, scale);
            st = aitk_cuda_launched("attention math: probabilities");
        }
        if (!st) /* dV = P^T dO */
            st = gemm(dvh, false, p, doh, tp, d, tp, true, false, n, ss, he, he);
        if (!st) /* dP = dO V^T, over S */
            st = gemm(s, true, doh, vh, tp, tp, d, false, true, n, he, he, ss);
        if (!st) {
            dscores<<<aitk_cuda_grid(elems), 256, 0, aitk_cuda.stream>>>(p, s, di, elems, h0, t,
                                                                         tp, scale);
            st = aitk_cuda_launched("attention math: dS");
        }
        if (!st) /* dQ = dS K */
            st = gemm(dqh, false, p, kh, tp, d, tp, false, false, n, ss, he, he);
        if (!st) /* dK = dS^T Q */
            st = gemm(dkh, false, p, qh, tp, d, tp, true, false, n, ss, he, he);
    }
    if (!st)
        st = move_out(dq, (const uint16_t *)(ws + pl.dq), &pl, b, t, hq, hq, d);
    if (!st)
        st = move_out(dk, (const uint16_t *)(ws + pl.dk), &pl, b, t, hq, hkv, d);
    if (!st)
        st = move_out(dv, (const uint16_t *)(ws + pl.dv), &pl, b, t, hq, hkv, d);
    return st;
}
