/* AdamW and 8-bit AdamW on fp32 masters (ops.h; the reference semantics are
 * kernels/cpu/optim.c). The constants (bias corrections in double) are made
 * once on the host; the per-element update is kernels/math/optim.h. 8-bit:
 * one block of AITK_ADAMW8_BLOCK threads per quantization block, so the
 * block's new absmax is one block reduction and no state leaves the SM. */
#include <math.h>

#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/optim.h"

static __global__ void adamw_kernel(float *p, float *m, float *v, const float *g, size_t n,
                                    aitk_adamw_consts k)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        aitk_adamw_elem(&k, &p[i], &m[i], &v[i], g[i]);
}

static __global__ void adamw8_kernel(float *p, uint8_t *m_q, uint8_t *v_q, float *m_scale,
                                     float *v_scale, const float *g, size_t n,
                                     aitk_adamw_consts k)
{
    size_t blk = blockIdx.x;
    size_t i = blk * AITK_ADAMW8_BLOCK + threadIdx.x;
    bool live = i < n;
    float m = 0.0f, v = 0.0f;
    if (live) {
        m = aitk_adamw8_m(m_q[i], m_scale[blk]);
        v = aitk_adamw8_v(v_q[i], v_scale[blk]);
        aitk_adamw_elem(&k, &p[i], &m, &v, g[i]);
    }
    float sv = sqrtf(v);
    float sm = aitk_adamw8_scale(aitk_block_reduce(fabsf(m), true));
    float ss = aitk_adamw8_scale(aitk_block_reduce(sv, true));
    if (live) {
        m_q[i] = aitk_adamw8_code(m, sm);
        v_q[i] = aitk_adamw8_code(sv, ss);
    }
    if (threadIdx.x == 0) {
        m_scale[blk] = sm;
        v_scale[blk] = ss;
    }
}

extern "C" aitk_status aitk_cuda_adamw_update(float *param, float *m, float *v,
                                              const float *grad, size_t n,
                                              const aitk_adamw_hparams *hp, long step)
{
    aitk_status st = aitk_cuda_need_open("adamw_update");
    if (st)
        return st;
    aitk_adamw_consts k;
    if (!param || !m || !v || !grad || aitk_adamw_consts_make(&k, hp, step))
        return aitk_cuda_inval("adamw_update", "NULL tensor or invalid hyperparameters");
    aitk_cuda_path("adamw_update", "fused AdamW kernel");
    if (!n)
        return AITK_OK;
    adamw_kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(param, m, v, grad, n, k);
    return aitk_cuda_launched("adamw_update kernel");
}

extern "C" aitk_status aitk_cuda_adamw8_update(float *param, uint8_t *m_q, uint8_t *v_q,
                                               float *m_scale, float *v_scale,
                                               const float *grad, size_t n,
                                               const aitk_adamw_hparams *hp, long step)
{
    aitk_status st = aitk_cuda_need_open("adamw8_update");
    if (st)
        return st;
    aitk_adamw_consts k;
    if (!param || !m_q || !v_q || !m_scale || !v_scale || !grad ||
        aitk_adamw_consts_make(&k, hp, step))
        return aitk_cuda_inval("adamw8_update", "NULL tensor or invalid hyperparameters");
    aitk_cuda_path("adamw8_update", "block-wise e4m3 AdamW kernel");
    size_t blocks = aitk_adamw8_blocks(n);
    if (!blocks)
        return AITK_OK;
    adamw8_kernel<<<(unsigned)blocks, AITK_ADAMW8_BLOCK, 0, aitk_cuda.stream>>>(
        param, m_q, v_q, m_scale, v_scale, grad, n, k);
    return aitk_cuda_launched("adamw8_update kernel");
}
