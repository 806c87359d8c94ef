// A reference attention kernel: o = softmax(q k^T * scale) v, non-causal,
// q, k, v, o (batch, tokens, heads, head_dim) bf16, fp32 arithmetic.
//
// Deliberately plain -- one thread block per (query row, head, batch), the
// whole score row in shared memory, no tiling over keys, no tensor cores --
// so that it is easy to check, not fast. It is NOT flash attention and not
// cuDNN's SDPA (phase 2); its rate is a floor for what a GPU does, and the
// plugin labels it "reference" wherever it reports it.
#include <cuda_bf16.h>
#include <float.h>

#include "kernels/cuda/internal.h"

enum { THREADS = 128, MAX_HEAD_DIM = 256, SHARED_LIMIT = 48 * 1024 };

// Max (op 0) or sum (op 1) over the block; every thread gets the result.
static __device__ float block_reduce(float v, int op, float *red)
{
    for (int off = 16; off > 0; off /= 2) {
        float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = op ? v + o : fmaxf(v, o);
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads(); // red[] may still be read from the previous reduction
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < THREADS / 32; w++)
        v = op ? v + red[w] : fmaxf(v, red[w]);
    return v;
}

// grid (tokens, heads, batch); dynamic shared memory: head_dim + tokens floats.
static __global__ void attention_row(__nv_bfloat16 *o, const __nv_bfloat16 *q,
                                     const __nv_bfloat16 *k, const __nv_bfloat16 *v, int tokens,
                                     int heads, int head_dim, float scale)
{
    extern __shared__ float sh[];
    __shared__ float red[THREADS / 32];
    float *qs = sh, *p = sh + head_dim;
    const size_t row = (size_t)heads * head_dim; // stride of one token
    const size_t base = (size_t)blockIdx.z * tokens * row + (size_t)blockIdx.y * head_dim;
    const __nv_bfloat16 *qi = q + base + (size_t)blockIdx.x * row;
    for (int d = threadIdx.x; d < head_dim; d += THREADS)
        qs[d] = __bfloat162float(qi[d]);
    __syncthreads();
    float mx = -FLT_MAX;
    for (int j = threadIdx.x; j < tokens; j += THREADS) {
        const __nv_bfloat16 *kj = k + base + (size_t)j * row;
        float s = 0;
        for (int d = 0; d < head_dim; d++)
            s += qs[d] * __bfloat162float(kj[d]);
        p[j] = s * scale;
        mx = fmaxf(mx, p[j]);
    }
    mx = block_reduce(mx, 0, red);
    float sum = 0;
    for (int j = threadIdx.x; j < tokens; j += THREADS) {
        p[j] = __expf(p[j] - mx);
        sum += p[j];
    }
    sum = block_reduce(sum, 1, red); // its barriers also publish p[]
    float inv = 1.0f / sum;
    __nv_bfloat16 *oi = o + base + (size_t)blockIdx.x * row;
    for (int d = threadIdx.x; d < head_dim; d += THREADS) {
        float acc = 0;
        for (int j = 0; j < tokens; j++)
            acc += p[j] * __bfloat162float(v[base + (size_t)j * row + d]);
        oi[d] = __float2bfloat16_rn(acc * inv);
    }
}

extern "C" int aitk_cuda_attention_max_tokens(int device)
{
    (void)device; // the default 48 KiB per block, without the opt-in to more
    return SHARED_LIMIT / (int)sizeof(float) - MAX_HEAD_DIM;
}

extern "C" cudaError_t aitk_cuda_attention_reference(void *o, const void *q, const void *k,
                                                     const void *v, int batch, int tokens,
                                                     int heads, int head_dim, float scale,
                                                     cudaStream_t s)
{
    if (batch <= 0 || tokens <= 0 || heads <= 0 || head_dim <= 0 || head_dim > MAX_HEAD_DIM ||
        tokens > aitk_cuda_attention_max_tokens(0) || heads > 65535 || batch > 65535)
        return cudaErrorInvalidValue;
    dim3 grid((unsigned)tokens, (unsigned)heads, (unsigned)batch);
    size_t shared = (size_t)(head_dim + tokens) * sizeof(float);
    attention_row<<<grid, THREADS, shared, s>>>((__nv_bfloat16 *)o, (const __nv_bfloat16 *)q,
                                                (const __nv_bfloat16 *)k,
                                                (const __nv_bfloat16 *)v, tokens, heads,
                                                head_dim, scale);
    return cudaGetLastError();
}
