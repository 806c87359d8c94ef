/* The plain attention kernels: the fallback when cuDNN is absent or refuses
 * a shape. fp32 math on CUDA cores, bf16 loads and stores.
 *
 * Forward: one block per (sample, query head, query row), the row's scores
 * in shared memory (2T + 2D floats, attention_check.c); it writes
 * lse = max + log(sum exp) per row.
 *
 * Backward: tiled, FlashAttention-2 style (kernels/math/attention_tile.h):
 * di = rowsum(dO * O) first, then one pass that owns each key tile and
 * sums its dK and dV over every query tile of its GQA group in shared
 * memory, then one pass that owns each query tile and sums its dQ over the
 * key tiles. Every output element has one owner, so there are no atomics
 * and no fp32 scratch beyond di; P is recomputed from the saved lse.
 *
 * Expected cost, FLUX at 1024 px (T = 4096 + 512, 24 heads, D = 128) on an
 * H100 or H200 (132 SMs, about 1.98 GHz): 14 T^2 D H = 9.1e11 flops, one
 * warp FMA (64 flops) per two 32-lane shared-memory loads, and shared
 * memory serves one such load per clock per SM (32 banks of 4 bytes), so
 * 9.1e11 / 64 * 2 / (132 * 1.98e9) = 0.11 s per attention backward: about
 * a tenth of the fp32 FMA peak (67 TFLOP/s would take 14 ms), some 70x
 * cuDNN's fused backward. A fallback that keeps a step within minutes; the
 * per-row atomics it replaces issued 2 T^2 D H = 1.3e11 fp32 atomic adds
 * per layer. */
#include <math.h>

#include "kernels/cuda/attention_check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/attention.h"
#include "kernels/math/attention_tile.h"
#include "kernels/math/bf16.h"

enum { ATTN_THREADS = 128, ATTN_BWD_THREADS = 256 };

typedef struct attn_dims {
    int t, hq, hkv, d;
    float scale;
} attn_dims;

__device__ static inline size_t q_off(const attn_dims &a, size_t bi, size_t i, int h)
{
    return aitk_attn_offset(bi, i, h, a.t, a.hq, a.d);
}

__device__ static inline size_t kv_off(const attn_dims &a, size_t bi, size_t j, int g)
{
    return aitk_attn_offset(bi, j, g, a.t, a.hkv, a.d);
}

static __global__ void plain_forward(uint16_t *out, float *lse, const uint16_t *q,
                                     const uint16_t *k, const uint16_t *v, attn_dims a)
{
    extern __shared__ float smem[];
    float *qs = smem, *p = smem + a.d;
    int i = blockIdx.x, h = blockIdx.y;
    size_t bi = blockIdx.z;
    int g = aitk_attn_kv_head(h, a.hq, a.hkv);
    size_t qo = q_off(a, bi, i, h);
    for (int x = threadIdx.x; x < a.d; x += blockDim.x)
        qs[x] = aitk_bf16_decode(q[qo + x]);
    __syncthreads();
    float mx = -INFINITY;
    for (int j = threadIdx.x; j < a.t; j += blockDim.x) {
        float s = a.scale * aitk_attn_dot(qs, k + kv_off(a, bi, j, g), a.d);
        p[j] = s;
        mx = fmaxf(mx, s);
    }
    mx = aitk_block_reduce(mx, true);
    float l = 0.0f;
    for (int j = threadIdx.x; j < a.t; j += blockDim.x)
        l += aitk_attn_prob(p[j], mx);
    float row_lse = aitk_attn_lse(mx, aitk_block_reduce(l, false));
    for (int j = threadIdx.x; j < a.t; j += blockDim.x)
        p[j] = aitk_attn_prob(p[j], row_lse);
    __syncthreads();
    for (int x = threadIdx.x; x < a.d; x += blockDim.x) {
        float o = 0.0f;
        for (int j = 0; j < a.t; j++)
            o += p[j] * aitk_bf16_decode(v[kv_off(a, bi, j, g) + x]);
        out[qo + x] = aitk_bf16_encode(o);
    }
    if (threadIdx.x == 0)
        lse[(bi * a.hq + h) * a.t + i] = row_lse;
}

/* Pass 1: di per (sample, query head, query row), one thread a row. */
static __global__ void backward_di(float *di, const uint16_t *dout, const uint16_t *out,
                                   attn_dims a, size_t rows)
{
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= rows)
        return;
    /* idx = (bi * hq + h) * t + i, lse's layout. */
    int i = (int)(idx % a.t), h = (int)(idx / a.t % a.hq);
    size_t bi = idx / a.t / a.hq, o = q_off(a, bi, i, h);
    di[idx] = aitk_attn_dot_bf16(dout + o, out + o, a.d);
}

/* The block's shared memory (aitk_attn_bwd_smem): bf16 tiles of the query
 * side (q, dout) and the key side (k, v), the two fp32 accumulators, P and
 * dS, and the query rows' lse and di. */
typedef struct tile_smem {
    uint16_t *q, *dout, *k, *v;
    float *acc0, *acc1, *p, *ds, *lse, *di;
} tile_smem;

__device__ static tile_smem tile_carve(void *base, int tile, int d)
{
    size_t tl = (size_t)tile * aitk_attn_tile_ld(d), td = (size_t)tile * d;
    tile_smem m;
    m.q = (uint16_t *)base;
    m.dout = m.q + tl;
    m.k = m.dout + tl;
    m.v = m.k + tl;
    m.acc0 = (float *)(m.v + tl);
    m.acc1 = m.acc0 + td;
    m.p = m.acc1 + td;
    m.ds = m.p + (size_t)tile * tile;
    m.lse = m.ds + (size_t)tile * tile;
    m.di = m.lse + tile;
    return m;
}

/* rows x d elements of a (B,T,H,D) tensor from row `first` of head h into
 * dst (tile rows, aitk_attn_tile_ld apart); rows past `rows` are zero. */
__device__ static void load_rows(uint16_t *dst, const uint16_t *src, attn_dims a, int heads,
                                 size_t bi, int first, int rows, int h, int tile)
{
    size_t n = (size_t)tile * a.d, ld = aitk_attn_tile_ld(a.d);
    for (size_t e = threadIdx.x; e < n; e += blockDim.x) {
        int r = (int)(e / a.d), x = (int)(e % a.d);
        dst[r * ld + x] =
            r < rows ? src[aitk_attn_offset(bi, first + r, h, a.t, heads, a.d) + x] : 0;
    }
}

/* The query side of tile qt of head h: q, dout, lse and di. Rows past the
 * end get lse = di = 0; their entries are masked anyway. */
__device__ static void load_query_tile(tile_smem m, const uint16_t *q, const uint16_t *dout,
                                       const float *lse, const float *di, attn_dims a,
                                       size_t bi, int h, int qt, int tile)
{
    int first = qt * tile, rows = aitk_attn_tile_rows(a.t, tile, qt);
    load_rows(m.q, q, a, a.hq, bi, first, rows, h, tile);
    load_rows(m.dout, dout, a, a.hq, bi, first, rows, h, tile);
    for (int r = threadIdx.x; r < tile; r += blockDim.x) {
        size_t at = (bi * a.hq + h) * a.t + first + r;
        m.lse[r] = r < rows ? lse[at] : 0.0f;
        m.di[r] = r < rows ? di[at] : 0.0f;
    }
}

/* P and dS of the loaded tile pair: qrows x kcols entries inside. */
__device__ static void tile_scores(tile_smem m, attn_dims a, int tile, int qrows, int kcols)
{
    int nn = tile * tile;
    for (int e = threadIdx.x; e < nn; e += blockDim.x) {
        int r = e / tile, c = e % tile, ld = aitk_attn_tile_ld(a.d);
        size_t ro = (size_t)r * ld, co = (size_t)c * ld;
        aitk_attn_tile_entry(&m.p[e], &m.ds[e], m.q + ro, m.dout + ro, m.k + co, m.v + co, a.d,
                             a.scale, m.lse[r], m.di[r], r < qrows && c < kcols);
    }
}

/* Pass 2: block (key tile, kv head g, sample) sums dK and dV of its keys
 * over all query tiles of the query heads that read g. */
static __global__ void backward_kv(uint16_t *dk, uint16_t *dv, const uint16_t *dout,
                                   const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                   const float *lse, const float *di, attn_dims a, int tile)
{
    extern __shared__ float smem[];
    tile_smem m = tile_carve(smem, tile, a.d);
    int kt = blockIdx.x, g = blockIdx.y, group = a.hq / a.hkv;
    size_t bi = blockIdx.z, td = (size_t)tile * a.d;
    int kcols = aitk_attn_tile_rows(a.t, tile, kt);
    load_rows(m.k, k, a, a.hkv, bi, kt * tile, kcols, g, tile);
    load_rows(m.v, v, a, a.hkv, bi, kt * tile, kcols, g, tile);
    for (size_t e = threadIdx.x; e < td; e += blockDim.x)
        m.acc0[e] = m.acc1[e] = 0.0f; /* acc0: dK, acc1: dV */
    int qtiles = aitk_attn_tile_count(a.t, tile);
    for (int h = g * group; h < (g + 1) * group; h++)
        for (int qt = 0; qt < qtiles; qt++) {
            __syncthreads(); /* the previous tile's readers are done */
            load_query_tile(m, q, dout, lse, di, a, bi, h, qt, tile);
            __syncthreads();
            int qrows = aitk_attn_tile_rows(a.t, tile, qt);
            tile_scores(m, a, tile, qrows, kcols);
            __syncthreads();
            for (size_t e = threadIdx.x; e < td; e += blockDim.x)
                aitk_attn_tile_kv(&m.acc1[e], &m.acc0[e], m.p, m.ds, m.q, m.dout, qrows, tile,
                                  aitk_attn_tile_ld(a.d), (int)(e / a.d), (int)(e % a.d),
                                  a.scale);
        }
    __syncthreads();
    for (size_t e = threadIdx.x; e < (size_t)kcols * a.d; e += blockDim.x) {
        size_t o = kv_off(a, bi, (size_t)kt * tile + e / a.d, g) + e % a.d;
        dk[o] = aitk_bf16_encode(m.acc0[e]);
        dv[o] = aitk_bf16_encode(m.acc1[e]);
    }
}

/* Pass 3: block (query tile, query head h, sample) sums dQ of its rows
 * over all key tiles. */
static __global__ void backward_q(uint16_t *dq, const uint16_t *dout, const uint16_t *q,
                                  const uint16_t *k, const uint16_t *v, const float *lse,
                                  const float *di, attn_dims a, int tile)
{
    extern __shared__ float smem[];
    tile_smem m = tile_carve(smem, tile, a.d);
    int qt = blockIdx.x, h = blockIdx.y, g = aitk_attn_kv_head(h, a.hq, a.hkv);
    size_t bi = blockIdx.z, td = (size_t)tile * a.d;
    int qrows = aitk_attn_tile_rows(a.t, tile, qt);
    load_query_tile(m, q, dout, lse, di, a, bi, h, qt, tile);
    for (size_t e = threadIdx.x; e < td; e += blockDim.x)
        m.acc0[e] = 0.0f;
    int ktiles = aitk_attn_tile_count(a.t, tile);
    for (int kt = 0; kt < ktiles; kt++) {
        __syncthreads();
        int kcols = aitk_attn_tile_rows(a.t, tile, kt);
        load_rows(m.k, k, a, a.hkv, bi, kt * tile, kcols, g, tile);
        load_rows(m.v, v, a, a.hkv, bi, kt * tile, kcols, g, tile);
        __syncthreads();
        tile_scores(m, a, tile, qrows, kcols);
        __syncthreads();
        for (size_t e = threadIdx.x; e < td; e += blockDim.x)
            m.acc0[e] += aitk_attn_tile_q(m.ds, m.k, kcols, tile, aitk_attn_tile_ld(a.d),
                                          (int)(e / a.d), (int)(e % a.d), a.scale);
    }
    __syncthreads();
    for (size_t e = threadIdx.x; e < (size_t)qrows * a.d; e += blockDim.x)
        dq[q_off(a, bi, (size_t)qt * tile + e / a.d, h) + e % a.d] = aitk_bf16_encode(m.acc0[e]);
}

extern "C" aitk_status aitk_cuda_attention_di(float **di, const aitk_act *dout,
                                              const aitk_act *out, int b, int t, int hq, int d)
{
    size_t rows = (size_t)b * hq * t;
    aitk_status st = aitk_cuda_reserve((void **)&aitk_cuda.attn_scratch,
                                       &aitk_cuda.attn_scratch_bytes, rows * sizeof(float),
                                       "cudaMallocAsync(attention di)");
    if (st)
        return st;
    *di = aitk_cuda.attn_scratch;
    attn_dims a = {t, hq, hq, d, 1.0f};
    backward_di<<<(unsigned)((rows + 255) / 256), 256, 0, aitk_cuda.stream>>>(
        *di, (const uint16_t *)dout, (const uint16_t *)out, a, rows);
    return aitk_cuda_launched("attention_backward di kernel");
}

static aitk_status launch_setup(const void *kernel, size_t smem)
{
    if (smem <= 48 * 1024)
        return AITK_OK;
    return aitk_cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                (int)smem),
                           "cudaFuncSetAttribute(attention smem)");
}

extern "C" aitk_status aitk_cuda_attention_plain_forward(aitk_act *out, float *lse,
                                                         const aitk_act *q, const aitk_act *k,
                                                         const aitk_act *v, int b, int t, int hq,
                                                         int hkv, int d, float scale)
{
    size_t smem = aitk_attention_plain_smem(t, d, aitk_cuda.smem_optin);
    if (!smem)
        return aitk_cuda_inval("attention_forward", "sequence too long for the plain kernel's "
                                                    "shared memory and cuDNN refused it");
    aitk_status st = launch_setup((const void *)plain_forward, smem);
    if (st)
        return st;
    attn_dims a = {t, hq, hkv, d, scale};
    dim3 grid((unsigned)t, (unsigned)hq, (unsigned)b);
    plain_forward<<<grid, ATTN_THREADS, smem, aitk_cuda.stream>>>(
        (uint16_t *)out, lse, (const uint16_t *)q, (const uint16_t *)k, (const uint16_t *)v, a);
    return aitk_cuda_launched("attention_forward plain kernel");
}

extern "C" aitk_status aitk_cuda_attention_plain_backward(aitk_act *dq, aitk_act *dk,
                                                          aitk_act *dv, const aitk_act *dout,
                                                          const aitk_act *q, const aitk_act *k,
                                                          const aitk_act *v, const aitk_act *out,
                                                          const float *lse, int b, int t, int hq,
                                                          int hkv, int d, float scale)
{
    int tile = aitk_attention_bwd_tile(d, aitk_cuda.smem_optin);
    if (!tile)
        return aitk_cuda_inval("attention_backward", "head_dim too large for the plain kernel's "
                                                     "shared memory and cuDNN refused it");
    size_t smem = aitk_attn_bwd_smem(tile, d);
    float *di = NULL;
    aitk_status st = aitk_cuda_attention_di(&di, dout, out, b, t, hq, d);
    if (!st)
        st = launch_setup((const void *)backward_kv, smem);
    if (!st)
        st = launch_setup((const void *)backward_q, smem);
    if (st)
        return st;
    attn_dims a = {t, hq, hkv, d, scale};
    const uint16_t *do16 = (const uint16_t *)dout;
    const uint16_t *q16 = (const uint16_t *)q, *k16 = (const uint16_t *)k;
    const uint16_t *v16 = (const uint16_t *)v;
    unsigned tiles = (unsigned)aitk_attn_tile_count(t, tile);
    backward_kv<<<dim3(tiles, (unsigned)hkv, (unsigned)b), ATTN_BWD_THREADS, smem,
                  aitk_cuda.stream>>>((uint16_t *)dk, (uint16_t *)dv, do16, q16, k16, v16, lse,
                                      di, a, tile);
    if ((st = aitk_cuda_launched("attention_backward dk/dv kernel")))
        return st;
    backward_q<<<dim3(tiles, (unsigned)hq, (unsigned)b), ATTN_BWD_THREADS, smem,
                 aitk_cuda.stream>>>((uint16_t *)dq, do16, q16, k16, v16, lse, di, a, tile);
    return aitk_cuda_launched("attention_backward dq kernel");
}
