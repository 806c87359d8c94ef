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
#include <string.h>

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

/* One call's plan, workspace and shape. */
typedef struct math_run {
    aitk_attn_math_plan pl;
    char *ws;
    int b, t, hq, hkv, d;
    long long he, ss; /* elements of one head's tensor and of its scores */
    uint16_t *p;      /* bf16 P or dS of a group */
    float *s;         /* fp32 S or dP of a group */
} math_run;

/* Head h0's part of the head-major tensor at workspace offset `at`. */
static uint16_t *heads_at(const math_run *r, size_t at, int h0)
{
    return (uint16_t *)(r->ws + at) + (size_t)h0 * r->pl.head_elems;
}

/* Heads in the group starting at h0 (the last one may be short). */
static int group_at(const math_run *r, int h0)
{
    return r->pl.heads - h0 < r->pl.group ? r->pl.heads - h0 : r->pl.group;
}

/* One batched GEMM over `heads` heads in ops.h's row-major terms. */
static aitk_status gemm(void *c, bool c_f32, const void *a, const void *b, int m, int n, int k,
                        bool ta, bool tb, int heads, long long sa, long long sb, long long sc)
{
    return aitk_cuda_gemm_inner(c, c_f32, a, b, m, n, k, ta, tb, 1.0f, 0.0f, heads, sa, sb, sc);
}

/* src [b][t][hs][d] -> the head-major copy at workspace offset `at`. */
static aitk_status move_in(const math_run *r, size_t at, const aitk_act *src, int hs)
{
    size_t n = (size_t)r->pl.heads * r->pl.head_elems;
    to_heads<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(
        heads_at(r, at, 0), (const uint16_t *)src, r->b, r->t, r->pl.tp, r->hq, hs, r->d);
    return aitk_cuda_launched("attention math: to heads");
}

static aitk_status move_out(const math_run *r, aitk_act *dst, size_t at, int hs)
{
    size_t n = (size_t)r->b * r->t * hs * r->d;
    from_heads<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(
        (uint16_t *)dst, heads_at(r, at, 0), r->b, r->t, r->pl.tp, r->hq, hs, r->d);
    return aitk_cuda_launched("attention math: from heads");
}

/* Plans the call, takes the workspace and copies q, k, v in; AITK_E_
 * UNSUPPORTED with *why when the math path cannot take the shape. */
static aitk_status start(math_run *r, const aitk_act *q, const aitk_act *k, const aitk_act *v,
                         int b, int t, int hq, int hkv, int d, bool backward, const char **why)
{
    memset(r, 0, sizeof *r);
    r->b = b, r->t = t, r->hq = hq, r->hkv = hkv, r->d = d;
    if ((*why = aitk_attn_math_plan_make(&r->pl, b, t, hq, hkv, d, backward,
                                         AITK_ATTN_MATH_BUDGET)))
        return AITK_E_UNSUPPORTED;
    char what[96];
    snprintf(what, sizeof what, "cudaMallocAsync(%s math workspace)",
             backward ? "attention_backward" : "attention_forward");
    aitk_status st = aitk_cuda_reserve(&aitk_cuda.attn_math, &aitk_cuda.attn_math_bytes,
                                       r->pl.total, what);
    r->ws = (char *)aitk_cuda.attn_math;
    r->he = (long long)r->pl.head_elems;
    r->ss = (long long)r->pl.tp * r->pl.tp;
    r->p = (uint16_t *)(r->ws + r->pl.p);
    r->s = (float *)(r->ws + r->pl.s);
    if (!st)
        st = move_in(r, r->pl.q, q, hq);
    if (!st)
        st = move_in(r, r->pl.k, k, hkv);
    if (!st)
        st = move_in(r, r->pl.v, v, hkv);
    return st;
}

/* A GEMM or kernel of the path that cuBLASLt or the launch refused (no
 * algorithm, a layout it rejects): the path steps aside for the plain
 * kernel, as cuDNN does, and says why in the report's path name. The
 * buffer keeps the last such reason (calls are serialized on one stream). */
static char refusal[AITK_BACKEND_ERROR_LEN + 32];

static aitk_status step_aside(aitk_status st, const char **why)
{
    if (st != AITK_E_UNSUPPORTED && st != AITK_E_INVAL)
        return st;
    if (!*why) {
        snprintf(refusal, sizeof refusal, "it failed: %s", aitk_cuda.error);
        *why = refusal;
    }
    (void)cudaGetLastError(); /* a non-sticky launch error must not reach the plain kernel */
    return AITK_E_UNSUPPORTED;
}

extern "C" aitk_status aitk_cuda_attention_math_forward(aitk_act *out, float *lse,
                                                        const aitk_act *q, const aitk_act *k,
                                                        const aitk_act *v, int b, int t, int hq,
                                                        int hkv, int d, float scale,
                                                        const char **why)
{
    math_run r;
    aitk_status st = start(&r, q, k, v, b, t, hq, hkv, d, false, why);
    if (st)
        return step_aside(st, why);
    const aitk_attn_math_plan *pl = &r.pl;
    const long long he = r.he, ss = r.ss;
    for (int h0 = 0; !st && h0 < pl->heads; h0 += pl->group) {
        int n = group_at(&r, h0);
        st = gemm(r.s, true, heads_at(&r, pl->q, h0), heads_at(&r, pl->k, h0), pl->tp, pl->tp, d,
                  false, true, n, he, he, ss);
        if (!st) {
            softmax_rows<<<(unsigned)((size_t)n * pl->tp), ROW_THREADS, 0, aitk_cuda.stream>>>(
                r.p, lse, r.s, h0, t, pl->tp, scale);
            st = aitk_cuda_launched("attention math: softmax rows");
        }
        if (!st) /* O = P V */
            st = gemm(heads_at(&r, pl->o, h0), false, r.p, heads_at(&r, pl->v, h0), pl->tp, d,
                      pl->tp, false, false, n, ss, he, he);
    }
    if (!st)
        st = move_out(&r, out, pl->o, hq);
    return step_aside(st, why);
}

extern "C" aitk_status aitk_cuda_attention_math_backward(aitk_act *dq, aitk_act *dk, aitk_act *dv,
                                                         const aitk_act *dout, const aitk_act *q,
                                                         const aitk_act *k, const aitk_act *v,
                                                         const aitk_act *out, const float *lse,
                                                         int b, int t, int hq, int hkv, int d,
                                                         float scale, const char **why)
{
    math_run r;
    float *di = NULL;
    aitk_status st = start(&r, q, k, v, b, t, hq, hkv, d, true, why);
    if (st)
        return step_aside(st, why);
    const aitk_attn_math_plan *pl = &r.pl;
    st = move_in(&r, pl->dout, dout, hq);
    if (!st)
        st = aitk_cuda_attention_di(&di, dout, out, b, t, hq, d);
    const long long he = r.he, ss = r.ss;
    for (int h0 = 0; !st && h0 < pl->heads; h0 += pl->group) {
        int n = group_at(&r, h0);
        size_t elems = (size_t)n * pl->tp * pl->tp;
        const uint16_t *qh = heads_at(&r, pl->q, h0), *kh = heads_at(&r, pl->k, h0);
        const uint16_t *vh = heads_at(&r, pl->v, h0), *doh = heads_at(&r, pl->dout, h0);
        st = gemm(r.s, true, qh, kh, pl->tp, pl->tp, d, false, true, n, he, he, ss); /* S = Q K^T */
        if (!st) {
            probs<<<aitk_cuda_grid(elems), 256, 0, aitk_cuda.stream>>>(r.p, r.s, lse, elems, h0, t,
                                                                       pl->tp, scale);
            st = aitk_cuda_launched("attention math: probabilities");
        }
        if (!st) /* dV = P^T dO */
            st = gemm(heads_at(&r, pl->dv, h0), false, r.p, doh, pl->tp, d, pl->tp, true, false, n,
                      ss, he, he);
        if (!st) /* dP = dO V^T, over S */
            st = gemm(r.s, true, doh, vh, pl->tp, pl->tp, d, false, true, n, he, he, ss);
        if (!st) {
            dscores<<<aitk_cuda_grid(elems), 256, 0, aitk_cuda.stream>>>(r.p, r.s, di, elems, h0, t,
                                                                         pl->tp, scale);
            st = aitk_cuda_launched("attention math: dS");
        }
        if (!st) /* dQ = dS K */
            st = gemm(heads_at(&r, pl->dq, h0), false, r.p, kh, pl->tp, d, pl->tp, false, false, n,
                      ss, he, he);
        if (!st) /* dK = dS^T Q */
            st = gemm(heads_at(&r, pl->dk, h0), false, r.p, qh, pl->tp, d, pl->tp, true, false, n,
                      ss, he, he);
    }
    if (!st)
        st = move_out(&r, dq, pl->dq, hq);
    if (!st)
        st = move_out(&r, dk, pl->dk, hkv);
    if (!st)
        st = move_out(&r, dv, pl->dv, hkv);
    return step_aside(st, why);
}
