/* LayerNorm (no affine) and RMSNorm (with weight), forward and backward: one
 * block of 256 threads per row, fp32 sums per thread reduced with warp
 * shuffles (reduce.cuh), the per-element arithmetic in kernels/math/norm.h.
 * A row is read two or three times; at C = 3072 bf16 it stays in L1/L2, and
 * these ops are a small share of a step next to its GEMMs. RMSNorm's
 * dweight, a sum over rows, is a two-stage column sum (colsum.h). */
#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/bf16.h"
#include "kernels/math/colsum.h"
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

/* dweight[j] += sum over rows of g x r, in two stages (kernels/math/colsum.h):
 * partials per row chunk, then the chunks in order. Within a warp the
 * threads read consecutive columns of a row, so the loads are coalesced. */
static __global__ void rmsnorm_dweight_partials(float *partials, const uint16_t *dout,
                                                const uint16_t *inp, const float *rstd, int n,
                                                int c, aitk_colsum_grid g)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, begin, end;
    if (j >= c)
        return;
    aitk_colsum_rows(&g, n, blockIdx.y, &begin, &end);
    float s = 0.0f;
    for (int i = begin; i < end; i++) {
        size_t at = (size_t)i * c + j;
        s += aitk_rmsnorm_dweight_term(aitk_bf16_decode(dout[at]), aitk_bf16_decode(inp[at]),
                                       rstd[i]);
    }
    partials[aitk_colsum_at(&g, c, 0, blockIdx.y, j)] = s;
}

static __global__ void rmsnorm_dweight_finish(float *dweight, const float *partials, int c,
                                              aitk_colsum_grid g)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < c)
        dweight[j] += aitk_colsum_finish(&g, partials, c, 0, j);
}

static aitk_status rmsnorm_dweight(float *dweight, const aitk_act *dout, const aitk_act *inp,
                                   const float *rstd, int n, int c)
{
    aitk_colsum_grid g = aitk_colsum_grid_for(n, c, 1, NORM_THREADS, aitk_cuda.sm_count);
    aitk_status st = aitk_cuda_reserve((void **)&aitk_cuda.partials, &aitk_cuda.partials_bytes,
                                       (size_t)g.chunks * c * sizeof(float),
                                       "cudaMallocAsync(rmsnorm dweight partials)");
    if (st)
        return st;
    dim3 grid((unsigned)g.col_blocks, (unsigned)g.chunks);
    rmsnorm_dweight_partials<<<grid, NORM_THREADS, 0, aitk_cuda.stream>>>(
        aitk_cuda.partials, (const uint16_t *)dout, (const uint16_t *)inp, rstd, n, c, g);
    if ((st = aitk_cuda_launched("rmsnorm_backward dweight partials kernel")))
        return st;
    rmsnorm_dweight_finish<<<g.col_blocks, NORM_THREADS, 0, aitk_cuda.stream>>>(
        dweight, aitk_cuda.partials, c, g);
    return aitk_cuda_launched("rmsnorm_backward dweight kernel");
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
    if (dweight && (st = rmsnorm_dweight(dweight, dout, inp, rstd, n, c)))
        return st;
    rmsnorm_backward_kernel<<<n, NORM_THREADS, 0, aitk_cuda.stream>>>(
        (uint16_t *)dinp, (const uint16_t *)dout, (const uint16_t *)inp,
        (const uint16_t *)weight, rstd, c);
    return aitk_cuda_launched("rmsnorm_backward kernel");
}
