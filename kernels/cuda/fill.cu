// Device-side fills for benchmark operands: a hash of (index, seed) mapped to
// [-scale, scale], so full-size operands (hundreds of MB) need no host copy
// and every run sees the same values. Kept C-like behind extern "C".
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "kernels/cuda/internal.h"

// A 32-bit integer hash (the "lowbias32" finaliser): cheap, and consecutive
// indices give unrelated values.
static __device__ float hashed_unit(size_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i ^ (uint32_t)(i >> 32) * 0x9e3779b9u ^ seed * 0x85ebca6bu;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return (float)(x >> 8) * (2.0f / 16777216.0f) - 1.0f; // [-1, 1)
}

static __global__ void fill_bf16(__nv_bfloat16 *dst, size_t n, float scale, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2bfloat16_rn(scale * hashed_unit(i, seed));
}

static __global__ void fill_e4m3(__nv_fp8_e4m3 *dst, size_t n, float scale, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __nv_fp8_e4m3(scale * hashed_unit(i, seed)); // saturating, round-to-nearest
}

static unsigned grid_for(size_t n)
{
    size_t blocks = (n + 255) / 256;
    return blocks > 65535 ? 65535u : blocks ? (unsigned)blocks : 1u;
}

extern "C" cudaError_t aitk_cuda_fill_bf16(void *dst, size_t n, float scale, uint32_t seed,
                                           cudaStream_t s)
{
    fill_bf16<<<grid_for(n), 256, 0, s>>>((__nv_bfloat16 *)dst, n, scale, seed);
    return cudaGetLastError();
}

extern "C" cudaError_t aitk_cuda_fill_e4m3(void *dst, size_t n, float scale, uint32_t seed,
                                           cudaStream_t s)
{
    fill_e4m3<<<grid_for(n), 256, 0, s>>>((__nv_fp8_e4m3 *)dst, n, scale, seed);
    return cudaGetLastError();
}
