/* Conversions, fills and copies on the stream: bf16 <-> fp32 staging, the
 * counter-based draws (kernels/math/draw.h), absmax, bf16_round, copy2d,
 * axpy. Grid-stride loops: one launch covers any n. */
#include <math.h>

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/bf16.h"
#include "kernels/math/draw.h"

static __global__ void f32_to_bf16_kernel(uint16_t *dst, const float *src, size_t n)
{
    GRID_STRIDE(i, n) dst[i] = aitk_bf16_encode(src[i]);
}

static __global__ void bf16_to_f32_kernel(float *dst, const uint16_t *src, size_t n)
{
    GRID_STRIDE(i, n) dst[i] = aitk_bf16_decode(src[i]);
}

extern "C" aitk_status aitk_cuda_f32_to_bf16(uint16_t *dst, const float *src, size_t n,
                                             const char *op)
{
    if (!n)
        return AITK_OK;
    f32_to_bf16_kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(dst, src, n);
    return aitk_cuda_launched(op);
}

extern "C" aitk_status aitk_cuda_bf16_to_f32(float *dst, const uint16_t *src, size_t n,
                                             const char *op)
{
    if (!n)
        return AITK_OK;
    bf16_to_f32_kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(dst, src, n);
    return aitk_cuda_launched(op);
}

static __global__ void draw_act_kernel(uint16_t *out, size_t n, uint64_t key, uint64_t first,
                                       float scale, float add)
{
    GRID_STRIDE(i, n) out[i] = aitk_bf16_encode(add + aitk_draw(key, first + i, scale));
}

static __global__ void draw_f32_kernel(float *out, size_t n, uint64_t key, uint64_t first,
                                       float scale, float add)
{
    GRID_STRIDE(i, n) out[i] = add + aitk_draw(key, first + i, scale);
}

extern "C" aitk_status aitk_cuda_draw_act(aitk_act *out, size_t n, uint64_t key, uint64_t first,
                                          float scale, float add)
{
    aitk_status st = aitk_cuda_need_open("draw_act");
    if (st || !n)
        return st;
    if (!out)
        return aitk_cuda_inval("draw_act", "NULL tensor");
    aitk_cuda_path("draw_act", "counter-based draw kernel");
    draw_act_kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>((uint16_t *)out, n, key,
                                                                     first, scale, add);
    return aitk_cuda_launched("draw_act kernel");
}

extern "C" aitk_status aitk_cuda_draw_f32(float *out, size_t n, uint64_t key, uint64_t first,
                                          float scale, float add)
{
    aitk_status st = aitk_cuda_need_open("draw_f32");
    if (st || !n)
        return st;
    if (!out)
        return aitk_cuda_inval("draw_f32", "NULL tensor");
    aitk_cuda_path("draw_f32", "counter-based draw kernel");
    draw_f32_kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(out, n, key, first, scale,
                                                                     add);
    return aitk_cuda_launched("draw_f32 kernel");
}

/* One partial max per block; the host takes the max of the partials. NaN
 * propagates (fmaxf would drop it): a NaN weight must show in the scale. */
static __global__ void absmax_kernel(float *partials, const uint16_t *x, size_t n)
{
    float m = 0.0f;
    bool nan = false;
    GRID_STRIDE(i, n)
    {
        float a = fabsf(aitk_bf16_decode(x[i]));
        nan |= isnan(a);
        m = fmaxf(m, a);
    }
    m = aitk_block_reduce(nan ? INFINITY : m, true);
    nan = __syncthreads_or(nan);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = nan ? NAN : m;
}

extern "C" aitk_status aitk_cuda_absmax(float *amax_host, const aitk_act *x, size_t n)
{
    aitk_status st = aitk_cuda_need_open("absmax");
    if (st)
        return st;
    if (!amax_host || !x)
        return aitk_cuda_inval("absmax", "NULL tensor");
    *amax_host = 0.0f;
    if (!n)
        return AITK_OK;
    unsigned grid;
    if ((st = aitk_cuda_partials_begin(n, &grid, "absmax")))
        return st;
    aitk_cuda_path("absmax", "block max kernel");
    absmax_kernel<<<grid, 256, 0, aitk_cuda.stream>>>(aitk_cuda.partials, (const uint16_t *)x,
                                                      n);
    if ((st = aitk_cuda_launched("absmax kernel")))
        return st;
    float h[AITK_CUDA_MAX_PARTIALS];
    if ((st = aitk_cuda_partials_fetch(h, grid, "absmax")))
        return st;
    float m = 0.0f;
    for (unsigned i = 0; i < grid; i++)
        m = (isnan(h[i]) || h[i] > m) ? h[i] : m;
    *amax_host = m;
    return AITK_OK;
}

extern "C" aitk_status aitk_cuda_bf16_round(aitk_act *x, size_t n)
{
    /* Storage is bf16 already: nothing to round (ops.h). */
    aitk_status st = aitk_cuda_need_open("bf16_round");
    if (st)
        return st;
    if (!x && n)
        return aitk_cuda_inval("bf16_round", "NULL tensor");
    aitk_cuda_path("bf16_round", "no-op (bf16 storage)");
    return AITK_OK;
}

extern "C" aitk_status aitk_cuda_copy2d(aitk_act *dst, int ld_dst, const aitk_act *src,
                                        int ld_src, int rows, int cols)
{
    aitk_status st = aitk_cuda_need_open("copy2d");
    if (st)
        return st;
    if (!dst || !src || rows <= 0 || cols <= 0 || ld_dst < cols || ld_src < cols)
        return aitk_cuda_inval("copy2d", "NULL tensor or impossible shape");
    aitk_cuda_path("copy2d", "cudaMemcpy2DAsync");
    return aitk_cuda_check(cudaMemcpy2DAsync(dst, (size_t)ld_dst * 2, src, (size_t)ld_src * 2,
                                             (size_t)cols * 2, (size_t)rows,
                                             cudaMemcpyDeviceToDevice, aitk_cuda.stream),
                           "cudaMemcpy2DAsync");
}

static __global__ void axpy_kernel(uint16_t *y, float alpha, const uint16_t *x, size_t n)
{
    GRID_STRIDE(i, n) y[i] = aitk_bf16_encode(aitk_bf16_decode(y[i]) +
                                              alpha * aitk_bf16_decode(x[i]));
}

extern "C" aitk_status aitk_cuda_axpy(aitk_act *y, float alpha, const aitk_act *x, size_t n)
{
    aitk_status st = aitk_cuda_need_open("axpy");
    if (st || !n)
        return st;
    if (!y || !x)
        return aitk_cuda_inval("axpy", "NULL tensor");
    aitk_cuda_path("axpy", "elementwise kernel");
    axpy_kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>((uint16_t *)y, alpha,
                                                                 (const uint16_t *)x, n);
    return aitk_cuda_launched("axpy kernel");
}
