/* What every elementwise kernel file shares: the grid-stride loop (one
 * launch covers any n, size_t indices for tensors past 2^31 elements) and
 * bf16 storage loads and stores that compute in fp32. */
#ifndef AITK_KERNELS_CUDA_ELEMENTWISE_CUH
#define AITK_KERNELS_CUDA_ELEMENTWISE_CUH

#include <stdint.h>

#include "kernels/math/bf16.h"

#define GRID_STRIDE(i, n) \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); \
         i += (size_t)gridDim.x * blockDim.x)
#define LD(p, i) aitk_bf16_decode((p)[i])
#define ST(x) aitk_bf16_encode(x)

typedef const uint16_t *cbf;

#endif
