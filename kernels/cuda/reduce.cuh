/* Block-wide fp32 reductions for the row and tensor reductions (norms,
 * absmax, MSE): each thread accumulates in fp32, then warp shuffles, then
 * one value per warp through shared memory. Every thread gets the result.
 * Blocks must be a multiple of 32 threads, at most 1024. */
#ifndef AITK_KERNELS_CUDA_REDUCE_CUH
#define AITK_KERNELS_CUDA_REDUCE_CUH

__device__ static inline float aitk_warp_sum(float v)
{
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

__device__ static inline float aitk_warp_max(float v)
{
    for (int o = 16; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

/* `max` false: sum; true: max. Uses (and re-syncs) 32 floats of shared memory. */
__device__ static inline float aitk_block_reduce(float v, bool max)
{
    __shared__ float warp_vals[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int warps = (blockDim.x + 31) / 32;
    v = max ? aitk_warp_max(v) : aitk_warp_sum(v);
    __syncthreads(); /* a previous call's readers are done with warp_vals */
    if (lane == 0)
        warp_vals[warp] = v;
    __syncthreads();
    float r = lane < warps ? warp_vals[lane] : (max ? -INFINITY : 0.0f);
    r = max ? aitk_warp_max(r) : aitk_warp_sum(r);
    return r;
}

#endif
