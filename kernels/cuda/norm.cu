/* LayerNorm (no affine) and RMSNorm (with weight), forward and backward: one
 * block of 256 threads per row, fp32 sums per thread reduced with warp
 * shuffles (reduce.cuh), the per-element arithmetic in kernels/math/norm.h.
 * A row is read two or three times; at C = 3072 bf16 it stays in L1/L2, and
 * these ops are a small share of a step next to its GEMMs. */
#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/bf16.h"
#include "kernels/math/norm.h"

enum { NORM_THREADS = 256 };

static __global__ void layernorm_forward_kernel(uint16_t *out, float *mean, float *rstd,
                                                const uint16_t *inp, int c, float eps)
{
    const uint16_t *x = inp + (size_t)blockIdx.x * c;
    uint16_t *y = out + (size_t)blockIdx.x * c;
    float s = 0.0f;
    for (int j = threadIdx.x; j < c; j += blockDim.x)
        s += aitk_bf16_decode(x[j]);
    float mu = aitk_block_reduce(s, false) / (float)c;
    float ss = 0.0f;
    for (int j = threadIdx.x; j < c; j += blockDim.x) {
        float dlt = aitk_bf16_decode(x[j]) - mu;
        ss += dlt * dlt;
    }
    float r = aitk_norm_rstd(aitk_block_reduce(ss, false), c, eps);
    for (int j = threadIdx.x; j < c; j += blockDim.x)
        y[j] = aitk_bf16_encode(aitk_layernorm_out(aitk_bf16_decode(x[j]), mu, r));
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = mu;
        rstd[blockIdx.x] = r;
    }
}

static __global__ void layernorm_backward_kernel(uint16_t *dinp, const uint16_t *dout,
                                                 const uint16_t *inp, const float *mean,
                                                 const float *rstd, int c)
{
    size_t off = (size_t)blockIdx.x * c;
    float mu = mean[blockIdx.x], r = rstd[blockIdx.x];
    float sg = 0.0f, sgx = 0.0f;
    for (int j = threadIdx.x; j < c; j += blockDim.x) {
        float g = aitk_bf16_decode(dout[off + j]);
        sg += g;
        sgx += g * aitk_layernorm_out(aitk_bf16_decode(inp[off + j]), mu, r);
    }
    float mean_g = aitk_block_reduce(sg, false) / (float)c;
    float mean_gx = aitk_block_reduce(sgx, false) / (float)c;
    for (int j = threadIdx.x; j < c; j += blockDim.x)
        dinp[off + j] = aitk_bf16_encode(aitk_layernorm_dx(aitk_bf16_decode(dout[off + j]),
                                                           aitk_bf16_decode(inp[off + j]), mu,
                                                           r, mean_g, mean_gx));
}

static __global__ void rmsnorm_forward_kernel(uint16_t *out, float *rstd, const uint16_t *inp,
                                              const uint16_t *weight, int c, float eps)
{
    size_t off = (size_t)blockIdx.x * c;
    float ss = 0.0f;
    for (int j = threadIdx.x; j < c; j += blockDim.x) {
        float x = aitk_bf16_decode(inp[off + j]);
        ss += x * x;
    }
    float r = aitk_norm_rstd(aitk_block_reduce(ss, false), c, eps);
    for (int j = threadIdx.x; j < c; j += blockDim.x)
        out[off + j] = aitk_bf16_encode(aitk_rmsnorm_out(aitk_bf16_decode(inp[off + j]), r,
                                                         aitk_bf16_decode(weight[j])));
    if (threadIdx.x == 0)
        rstd[blockIdx.x] = r;
}

static __global__ void rmsnorm_backward_kernel(uint16_t *dinp, const uint16_t *dout,
                                               const uint16_t *inp, const uint16_t *weight,
                                               const float *rstd, int c)
{
    size_t off = (size_t)blockIdx.x * c;
    float r = rstd[blockIdx.x];
    float s = 0.0f;
    for (int j = threadIdx.x; j < c; j += blockDim.x)
        s += aitk_bf16_decode(dout[off + j]) * aitk_bf16_decode(weight[j]) *
             aitk_bf16_decode(inp[off + j]);
    float mean_gwx = aitk_block_reduce(s, false) / (float)c;
    for (int j = threadIdx.x; j < c; j += blockDim.x)
        dinp[off + j] = aitk_bf16_encode(aitk_rmsnorm_dx(aitk_bf16_decode(dout[off + j]),
                                                         aitk_bf16_decode(inp[off + j]),
                                                         aitk_bf16_decode(weight[j]), r,
                                                         mean_gwx));
}

/* dweight[j] += sum over rows of g x r: one thread per column, rows in order
 * (coalesced across the threads of a warp, a fixed summation order). */
static __global__ void rmsnorm_dweight_kernel(float *dweight, const uint16_t *dout,
                                              const uint16_t *inp, const float *rstd, int n,
                                              int c)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= c)
        return;
    float s = 0.0f;
    for (int i = 0; i < n; i++) {
        size_t at = (size_t)i * c + j;
        s += aitk_bf16_decode(dout[at]) * aitk_bf16_decode(inp[at]) * rstd[i];
    }
    dweight[j] += s;
}

extern "C" aitk_status aitk_cuda_layernorm_forward(aitk_act *out, float *mean, float *rstd,
                                                   const aitk_act *inp, int n, int c, float eps)
{
    aitk_status st = aitk_cuda_need_open("layernorm_forward");
    if (st)
        return st;
    if (!out || !mean || !rstd || !inp || n <= 0 || c <= 0 || !(eps >= 0.0f))
        return aitk_cuda_inval("layernorm_forward", "NULL tensor or impossible shape");
    aitk_cuda_path("layernorm_forward", "row kernel");
    layernorm_forward_kernel<<<n, NORM_THREADS, 0, aitk_cuda.stream>>>(
        (uint16_t *)out, mean, rstd, (const uint16_t *)inp, c, eps);
    return aitk_cuda_launched("layernorm_forward kernel");
}

extern "C" aitk_status aitk_cuda_layernorm_backward(aitk_act *dinp, const aitk_act *dout,
                                                    const aitk_act *inp, const float *mean,
                                                    const float *rstd, int n, int c)
{
    aitk_status st = aitk_cuda_need_open("layernorm_backward");
    if (st)
        return st;
    if (!dinp || !dout || !inp || !mean || !rstd || n <= 0 || c <= 0)
        return aitk_cuda_inval("layernorm_backward", "NULL tensor or impossible shape");
    aitk_cuda_path("layernorm_backward", "row kernel");
    layernorm_backward_kernel<<<n, NORM_THREADS, 0, aitk_cuda.stream>>>(
        (uint16_t *)dinp, (const uint16_t *)dout, (const uint16_t *)inp, mean, rstd, c);
    return aitk_cuda_launched("layernorm_backward kernel");
}

extern "C" aitk_status aitk_cuda_rmsnorm_forward(aitk_act *out, float *rstd, const aitk_act *inp,
                                                 const aitk_act *weight, int n, int c, float eps)
{
    aitk_status st = aitk_cuda_need_open("rmsnorm_forward");
    if (st)
        return st;
    if (!out || !rstd || !inp || !weight || n <= 0 || c <= 0 || !(eps >= 0.0f))
        return aitk_cuda_inval("rmsnorm_forward", "NULL tensor or impossible shape");
    aitk_cuda_path("rmsnorm_forward", "row kernel");
    rmsnorm_forward_kernel<<<n, NORM_THREADS, 0, aitk_cuda.stream>>>(
        (uint16_t *)out, rstd, (const uint16_t *)inp, (const uint16_t *)weight, c, eps);
    return aitk_cuda_launched("rmsnorm_forward kernel");
}

extern "C" aitk_status aitk_cuda_rmsnorm_backward(aitk_act *dinp, float *dweight,
                                                  const aitk_act *dout, const aitk_act *inp,
                                                  const aitk_act *weight, const float *rstd,
                                                  int n, int c)
{
    aitk_status st = aitk_cuda_need_open("rmsnorm_backward");
    if (st)
        return st;
    if (!dinp || !dout || !inp || !weight || !rstd || n <= 0 || c <= 0)
        return aitk_cuda_inval("rmsnorm_backward", "NULL tensor or impossible shape");
    aitk_cuda_path("rmsnorm_backward", "row kernel");
    /* dweight first: dinp may alias dout (an in-place backward). */
    if (dweight) {
        rmsnorm_dweight_kernel<<<(c + 255) / 256, 256, 0, aitk_cuda.stream>>>(
            dweight, (const uint16_t *)dout, (const uint16_t *)inp, rstd, n, c);
        if ((st = aitk_cuda_launched("rmsnorm_backward dweight kernel")))
            return st;
    }
    rmsnorm_backward_kernel<<<n, NORM_THREADS, 0, aitk_cuda.stream>>>(
        (uint16_t *)dinp, (const uint16_t *)dout, (const uint16_t *)inp,
        (const uint16_t *)weight, rstd, c);
    return aitk_cuda_launched("rmsnorm_backward kernel");
}
