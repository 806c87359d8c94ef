/* Weight storage formats (ops.h): fp8 e4m3 with one scale per tensor, and
 * NF4 in blocks of AITK_NF4_BLOCK with one fp32 absmax each. Per-element
 * arithmetic: kernels/math/quant.h.
 *
 * NF4 codes, search and packing: kernels/math/nf4.h, as on the CPU. */
#include <math.h>

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/bf16.h"
#include "kernels/math/quant.h"

static __global__ void fp8_dequant_kernel(uint16_t *out, const uint8_t *q, float scale, size_t n)
{
    GRID_STRIDE(i, n) out[i] = aitk_bf16_encode(aitk_fp8_dequant(q[i], scale));
}

static __global__ void fp8_quant_kernel(uint8_t *q, const uint16_t *inp, float scale, size_t n)
{
    GRID_STRIDE(i, n) q[i] = aitk_fp8_quant(aitk_bf16_decode(inp[i]), scale);
}

static __global__ void nf4_dequant_kernel(uint16_t *out, const uint8_t *q, const float *absmax,
                                          size_t n)
{
    GRID_STRIDE(i, n)
    out[i] = aitk_bf16_encode(aitk_nf4_value(aitk_nf4_nibble(q, i)) * absmax[i / AITK_NF4_BLOCK]);
}

/* One block of AITK_NF4_BLOCK threads per NF4 block: the absmax is one
 * block reduction; even threads pack their own and their neighbour's code. */
static __global__ void nf4_quant_kernel(uint8_t *q, float *absmax, const uint16_t *inp, size_t n)
{
    __shared__ uint8_t codes[AITK_NF4_BLOCK];
    size_t blk = blockIdx.x;
    size_t i = blk * AITK_NF4_BLOCK + threadIdx.x;
    float x = i < n ? aitk_bf16_decode(inp[i]) : 0.0f;
    float amax = aitk_block_reduce(fabsf(x), true);
    codes[threadIdx.x] = (uint8_t)aitk_nf4_nearest(aitk_nf4_normalize(x, amax));
    __syncthreads();
    if (threadIdx.x % 2 == 0 && i < n) {
        uint8_t lo = i + 1 < n ? codes[threadIdx.x + 1] : 0;
        q[i / 2] = (uint8_t)((codes[threadIdx.x] << 4) | lo);
    }
    if (threadIdx.x == 0)
        absmax[blk] = amax;
}

#define B(p) ((uint16_t *)(p))
#define CB(p) ((const uint16_t *)(p))

extern "C" aitk_status aitk_cuda_fp8_dequantize(aitk_act *out, const uint8_t *q, float scale,
                                                size_t n)
{
    aitk_status st = aitk_cuda_need_open("fp8_dequantize");
    if (st)
        return st;
    if (!out || !q || !isfinite(scale))
        return aitk_cuda_inval("fp8_dequantize", "NULL tensor or non-finite scale");
    aitk_cuda_path("fp8_dequantize", "elementwise kernel");
    if (!n)
        return AITK_OK;
    fp8_dequant_kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(B(out), q, scale, n);
    return aitk_cuda_launched("fp8_dequantize kernel");
}

extern "C" aitk_status aitk_cuda_fp8_quantize(uint8_t *q, const aitk_act *inp, float scale,
                                              size_t n)
{
    aitk_status st = aitk_cuda_need_open("fp8_quantize");
    if (st)
        return st;
    if (!q || !inp || !isfinite(scale) || !(scale > 0.0f))
        return aitk_cuda_inval("fp8_quantize", "NULL tensor or scale not positive and finite");
    aitk_cuda_path("fp8_quantize", "elementwise kernel (saturating)");
    if (!n)
        return AITK_OK;
    fp8_quant_kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(q, CB(inp), scale, n);
    return aitk_cuda_launched("fp8_quantize kernel");
}

extern "C" aitk_status aitk_cuda_nf4_dequantize(aitk_act *out, const uint8_t *q,
                                                const float *absmax, size_t n)
{
    aitk_status st = aitk_cuda_need_open("nf4_dequantize");
    if (st)
        return st;
    if (!out || !q || !absmax)
        return aitk_cuda_inval("nf4_dequantize", "NULL tensor");
    aitk_cuda_path("nf4_dequantize", "elementwise kernel");
    if (!n)
        return AITK_OK;
    nf4_dequant_kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(B(out), q, absmax, n);
    return aitk_cuda_launched("nf4_dequantize kernel");
}

extern "C" aitk_status aitk_cuda_nf4_quantize(uint8_t *q, float *absmax, const aitk_act *inp,
                                              size_t n)
{
    aitk_status st = aitk_cuda_need_open("nf4_quantize");
    if (st)
        return st;
    if (!q || !absmax || !inp)
        return aitk_cuda_inval("nf4_quantize", "NULL tensor");
    aitk_cuda_path("nf4_quantize", "block absmax kernel");
    size_t blocks = aitk_nf4_blocks(n);
    if (!blocks)
        return AITK_OK;
    nf4_quant_kernel<<<(unsigned)blocks, AITK_NF4_BLOCK, 0, aitk_cuda.stream>>>(q, absmax,
                                                                               CB(inp), n);
    return aitk_cuda_launched("nf4_quantize kernel");
}
