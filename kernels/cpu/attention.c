/* Attention on the CPU: softmax(scale q k^T) v without a mask, with GQA.
 *
 * Memory-lean like flash attention: queries are processed in tiles of
 * AITK_ATTN_TILE rows, so the score matrix never exists beyond a tile x T
 * strip, and forward saves only each row's log-sum-exp, from which backward
 * recomputes the probabilities. Nothing of size T^2 is stored across calls,
 * as on the GPU path (cuDNN SDPA saves the same statistics), so the memory
 * the CPU step measures is what the cost model plans for. The strip (2 x 64
 * x T floats, 2 MiB at T = 4096) is the one transient allocation of a kernel
 * and is not entered in the accounting.
 *
 * The products inside a tile are GEMMs through cblas_sgemm, reading q, k, v
 * in place through leading dimensions (a head is every hq*D-th run of D
 * values): they run far faster than dot-product loops, which is what lets
 * the CPU step keep pace with PyTorch's SDPA. Tiles run one after another in
 * a fixed order, so dk/dv, which all query heads of a GQA group add into, are
 * summed in the same order on every run.
 *
 * Threads come from OpenBLAS inside each GEMM only. The softmax between the
 * GEMMs is 1/(2D) of their work and stays serial: an OpenMP region there made
 * the call 10-80x slower on 2 cores, because libgomp's workers spin after
 * each region (OMP_WAIT_POLICY unset) and starve OpenBLAS's own pthreads,
 * which then wait on them, once per tile. */
#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/cpu.h"

#define AITK_ATTN_TILE 64

static aitk_status attention_check(const void *a, const void *b, const void *c, const void *e,
                                   const void *f, int bs, int t, int hq, int hkv, int d)
{
    AITK_CPU_REQUIRE(a && b && c && e && f && bs > 0 && t > 0 && d > 0);
    AITK_CPU_REQUIRE(hq > 0 && hkv > 0 && hq % hkv == 0);
    return aitk_cpu_blas_load();
}

/* s (nt,T) = scale * q_tile k^T for query rows i0.. of head h, sample sm. */
static void scores(float *s, const float *q, const float *k, long long sm, int i0, int nt, int t,
                   int h, int kvh, int hq, int hkv, int d, float scale)
{
    aitk_cpu_sgemm(false, true, nt, t, d, scale,
                q + ((sm * t + i0) * hq + h) * d, hq * d, k + (sm * t * hkv + kvh) * d, hkv * d,
                0.0f, s, t);
}

aitk_status aitk_cpu_attention_forward(float *out, float *lse, const float *q, const float *k,
                                       const float *v, int b, int t, int hq, int hkv, int d,
                                       float scale)
{
    aitk_status st = attention_check(out, lse, q, k, v, b, t, hq, hkv, d);
    if (st)
        return st;
    float *s = aitk_malloc((size_t)AITK_ATTN_TILE * t * sizeof *s);
    if (!s)
        return AITK_E_NOMEM;
    int group = hq / hkv;
    for (long long sm = 0; sm < b; sm++)
        for (int h = 0; h < hq; h++)
            for (int i0 = 0; i0 < t; i0 += AITK_ATTN_TILE) {
                int nt = t - i0 < AITK_ATTN_TILE ? t - i0 : AITK_ATTN_TILE;
                int kvh = h / group;
                scores(s, q, k, sm, i0, nt, t, h, kvh, hq, hkv, d, scale);
                for (int i = 0; i < nt; i++) {
                    float *row = s + (size_t)i * t;
                    float m = row[0];
                    for (int j = 1; j < t; j++)
                        m = row[j] > m ? row[j] : m;
                    double l = 0.0;
                    for (int j = 0; j < t; j++) {
                        row[j] = expf(row[j] - m);
                        l += row[j];
                    }
                    float inv = (float)(1.0 / l);
                    for (int j = 0; j < t; j++)
                        row[j] *= inv;
                    lse[(sm * hq + h) * t + i0 + i] = m + (float)log(l);
                }
                aitk_cpu_sgemm(false, false, nt, d, t, 1.0f, s, t,
                            v + (sm * t * hkv + kvh) * d, hkv * d, 0.0f,
                            out + ((sm * t + i0) * hq + h) * d, hq * d);
            }
    aitk_free(s);
    return AITK_OK;
}

aitk_status aitk_cpu_attention_backward(float *dq, float *dk, float *dv, const float *dout,
                                        const float *q, const float *k, const float *v,
                                        const float *out, const float *lse, int b, int t,
                                        int hq, int hkv, int d, float scale)
{
    aitk_status st = attention_check(dq, dk, dv, dout, q, b, t, hq, hkv, d);
    if (st)
        return st;
    st = attention_check(k, v, out, lse, q, b, t, hq, hkv, d);
    if (st)
        return st;
    float *p = aitk_malloc((size_t)2 * AITK_ATTN_TILE * t * sizeof *p);
    if (!p)
        return AITK_E_NOMEM;
    float *dp = p + (size_t)AITK_ATTN_TILE * t;
    int group = hq / hkv;
    for (long long row = 0; row < (long long)b * t; row++) {
        memset(dk + row * hkv * d, 0, (size_t)hkv * d * sizeof *dk);
        memset(dv + row * hkv * d, 0, (size_t)hkv * d * sizeof *dv);
    }
    /* With P = softmax(S): dV = P^T dO; dP = dO V^T; dS = P * (dP - rowsum(dO * O));
     * dQ = scale dS K; dK = scale dS^T Q (scale folded into dS). */
    for (long long sm = 0; sm < b; sm++)
        for (int h = 0; h < hq; h++)
            for (int i0 = 0; i0 < t; i0 += AITK_ATTN_TILE) {
                int nt = t - i0 < AITK_ATTN_TILE ? t - i0 : AITK_ATTN_TILE;
                int kvh = h / group;
                size_t qoff = (size_t)((sm * t + i0) * hq + h) * d;
                size_t kvoff = (size_t)(sm * t * hkv + kvh) * d;
                scores(p, q, k, sm, i0, nt, t, h, kvh, hq, hkv, d, scale);
                aitk_cpu_sgemm(false, true, nt, t, d, 1.0f,
                            dout + qoff, hq * d, v + kvoff, hkv * d, 0.0f, dp, t);
                for (int i = 0; i < nt; i++) {
                    const float *doi = dout + qoff + (size_t)i * hq * d;
                    const float *oi = out + qoff + (size_t)i * hq * d;
                    float di = 0.0f;
                    for (int x = 0; x < d; x++)
                        di += doi[x] * oi[x];
                    float li = lse[(sm * hq + h) * t + i0 + i];
                    float *pr = p + (size_t)i * t, *dpr = dp + (size_t)i * t;
                    for (int j = 0; j < t; j++) {
                        pr[j] = expf(pr[j] - li);
                        dpr[j] = pr[j] * (dpr[j] - di) * scale;
                    }
                }
                aitk_cpu_sgemm(true, false, t, d, nt, 1.0f, p, t,
                            dout + qoff, hq * d, 1.0f, dv + kvoff, hkv * d);
                aitk_cpu_sgemm(false, false, nt, d, t, 1.0f, dp, t,
                            k + kvoff, hkv * d, 0.0f, dq + qoff, hq * d);
                aitk_cpu_sgemm(true, false, t, d, nt, 1.0f, dp, t,
                            q + qoff, hq * d, 1.0f, dk + kvoff, hkv * d);
            }
    aitk_free(p);
    return AITK_OK;
}
