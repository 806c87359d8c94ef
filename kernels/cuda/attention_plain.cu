/* The plain attention kernels: the fallback when cuDNN is absent or refuses
 * a shape. Simple and correct, not fast: one block per (sample, query head,
 * query row), fp32 math, the row's scores in shared memory (2T + 2D floats,
 * attention_check.c). Forward writes lse = max + log(sum exp) per row;
 * backward recomputes the probabilities from lse (ops.h):
 *   P = exp(S - lse), dP = dO V^T, dS = P (dP - rowsum(dO * O)),
 *   dQ = scale dS K, dK += scale dS^T Q, dV += P^T dO.
 * dK and dV collect contributions from every query row and every query head
 * of a GQA group, so they are summed with fp32 atomics into a backend-owned
 * fp32 scratch and converted to bf16 at the end. */
#include <math.h>

#include "kernels/cuda/attention_check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/attention.h"
#include "kernels/math/bf16.h"

enum { ATTN_THREADS = 128 };

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

static __global__ void plain_backward(uint16_t *dq, float *dk32, float *dv32,
                                      const uint16_t *dout, const uint16_t *q, const uint16_t *k,
                                      const uint16_t *v, const uint16_t *out, const float *lse,
                                      attn_dims a)
{
    extern __shared__ float smem[];
    float *qs = smem, *dos = smem + a.d, *p = smem + 2 * a.d, *ds = p + a.t;
    int i = blockIdx.x, h = blockIdx.y;
    size_t bi = blockIdx.z;
    int g = aitk_attn_kv_head(h, a.hq, a.hkv);
    size_t qo = q_off(a, bi, i, h);
    float di = 0.0f;
    for (int x = threadIdx.x; x < a.d; x += blockDim.x) {
        qs[x] = aitk_bf16_decode(q[qo + x]);
        dos[x] = aitk_bf16_decode(dout[qo + x]);
        di += dos[x] * aitk_bf16_decode(out[qo + x]);
    }
    di = aitk_block_reduce(di, false); /* also the barrier for qs and dos */
    float li = lse[(bi * a.hq + h) * a.t + i];
    for (int j = threadIdx.x; j < a.t; j += blockDim.x) {
        size_t ko = kv_off(a, bi, j, g);
        float pj = aitk_attn_prob(a.scale * aitk_attn_dot(qs, k + ko, a.d), li);
        p[j] = pj;
        ds[j] = aitk_attn_dscore(pj, aitk_attn_dot(dos, v + ko, a.d), di);
    }
    __syncthreads();
    for (int x = threadIdx.x; x < a.d; x += blockDim.x) {
        float acc = 0.0f;
        for (int j = 0; j < a.t; j++)
            acc += ds[j] * aitk_bf16_decode(k[kv_off(a, bi, j, g) + x]);
        dq[qo + x] = aitk_bf16_encode(a.scale * acc);
    }
    size_t td = (size_t)a.t * a.d;
    for (size_t e = threadIdx.x; e < td; e += blockDim.x) {
        size_t j = e / a.d;
        int x = (int)(e % a.d);
        size_t ko = kv_off(a, bi, j, g) + x;
        atomicAdd(&dk32[ko], a.scale * ds[j] * qs[x]);
        atomicAdd(&dv32[ko], p[j] * dos[x]);
    }
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
    size_t smem = aitk_attention_plain_smem(t, d, aitk_cuda.smem_optin);
    if (!smem)
        return aitk_cuda_inval("attention_backward", "sequence too long for the plain kernel's "
                                                     "shared memory and cuDNN refused it");
    size_t nkv = (size_t)b * t * hkv * d;
    aitk_status st = aitk_cuda_reserve((void **)&aitk_cuda.attn_scratch,
                                       &aitk_cuda.attn_scratch_bytes, 2 * nkv * sizeof(float),
                                       "cudaMallocAsync(attention scratch)");
    if (!st)
        st = aitk_cuda_check(cudaMemsetAsync(aitk_cuda.attn_scratch, 0, 2 * nkv * sizeof(float),
                                             aitk_cuda.stream),
                             "cudaMemsetAsync(attention scratch)");
    if (!st)
        st = launch_setup((const void *)plain_backward, smem);
    if (st)
        return st;
    float *dk32 = aitk_cuda.attn_scratch, *dv32 = dk32 + nkv;
    attn_dims a = {t, hq, hkv, d, scale};
    dim3 grid((unsigned)t, (unsigned)hq, (unsigned)b);
    plain_backward<<<grid, ATTN_THREADS, smem, aitk_cuda.stream>>>(
        (uint16_t *)dq, dk32, dv32, (const uint16_t *)dout, (const uint16_t *)q,
        (const uint16_t *)k, (const uint16_t *)v, (const uint16_t *)out, lse, a);
    if ((st = aitk_cuda_launched("attention_backward plain kernel")))
        return st;
    st = aitk_cuda_f32_to_bf16((uint16_t *)dk, dk32, nkv, "attention_backward dk to bf16");
    return st ? st : aitk_cuda_f32_to_bf16((uint16_t *)dv, dv32, nkv,
                                           "attention_backward dv to bf16");
}
