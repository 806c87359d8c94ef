/* Elementwise activations (GELU-tanh, SiLU, SwiGLU) and the MSE loss. The
 * arithmetic is kernels/math/pointwise.h; these files only move bf16. */
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/bf16.h"
#include "kernels/math/pointwise.h"

static __global__ void gelu_fwd(uint16_t *o, cbf x, size_t n)
{
    GRID_STRIDE(i, n) o[i] = ST(aitk_gelu(LD(x, i)));
}

static __global__ void gelu_bwd(uint16_t *dx, cbf g, cbf x, size_t n)
{
    GRID_STRIDE(i, n) dx[i] = ST(aitk_gelu_grad(LD(g, i), LD(x, i)));
}

static __global__ void silu_fwd(uint16_t *o, cbf x, size_t n)
{
    GRID_STRIDE(i, n) o[i] = ST(aitk_silu(LD(x, i)));
}

static __global__ void silu_bwd(uint16_t *dx, cbf g, cbf x, size_t n)
{
    GRID_STRIDE(i, n) dx[i] = ST(aitk_silu_grad(LD(g, i), LD(x, i)));
}

static __global__ void swiglu_fwd(uint16_t *o, cbf a, cbf u, size_t n)
{
    GRID_STRIDE(i, n) o[i] = ST(aitk_swiglu(LD(a, i), LD(u, i)));
}

static __global__ void swiglu_bwd(uint16_t *da, uint16_t *du, cbf g, cbf a, cbf u, size_t n)
{
    GRID_STRIDE(i, n)
    {
        /* Both inputs are read before either output is written: da may alias
         * a and du may alias u. */
        float ga, gu;
        aitk_swiglu_grad(LD(g, i), LD(a, i), LD(u, i), &ga, &gu);
        da[i] = ST(ga);
        du[i] = ST(gu);
    }
}

static __global__ void mse_partials(float *partials, cbf p, cbf t, size_t n)
{
    float s = 0.0f;
    GRID_STRIDE(i, n) s += aitk_mse_term(LD(p, i), LD(t, i));
    s = aitk_block_reduce(s, false);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = s;
}

static __global__ void mse_bwd(uint16_t *dp, float k, cbf p, cbf t, size_t n)
{
    GRID_STRIDE(i, n) dp[i] = ST(aitk_mse_grad(k, LD(p, i), LD(t, i)));
}

#define CHECK_OPEN(op)                         \
    aitk_status st = aitk_cuda_need_open(op); \
    if (st)                                   \
        return st

#define LAUNCH(op, kernel, ...)                                                    \
    do {                                                                           \
        aitk_cuda_path(op, "elementwise kernel");                                  \
        if (n)                                                                     \
            kernel<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(__VA_ARGS__); \
        return n ? aitk_cuda_launched(op " kernel") : AITK_OK;                    \
    } while (0)

#define B(p) ((uint16_t *)(p))
#define CB(p) ((const uint16_t *)(p))

extern "C" aitk_status aitk_cuda_gelu_forward(aitk_act *out, const aitk_act *inp, size_t n)
{
    CHECK_OPEN("gelu_forward");
    if (!out || !inp)
        return aitk_cuda_inval("gelu_forward", "NULL tensor");
    LAUNCH("gelu_forward", gelu_fwd, B(out), CB(inp), n);
}

extern "C" aitk_status aitk_cuda_gelu_backward(aitk_act *dinp, const aitk_act *dout,
                                               const aitk_act *inp, size_t n)
{
    CHECK_OPEN("gelu_backward");
    if (!dinp || !dout || !inp)
        return aitk_cuda_inval("gelu_backward", "NULL tensor");
    LAUNCH("gelu_backward", gelu_bwd, B(dinp), CB(dout), CB(inp), n);
}

extern "C" aitk_status aitk_cuda_silu_forward(aitk_act *out, const aitk_act *inp, size_t n)
{
    CHECK_OPEN("silu_forward");
    if (!out || !inp)
        return aitk_cuda_inval("silu_forward", "NULL tensor");
    LAUNCH("silu_forward", silu_fwd, B(out), CB(inp), n);
}

extern "C" aitk_status aitk_cuda_silu_backward(aitk_act *dinp, const aitk_act *dout,
                                               const aitk_act *inp, size_t n)
{
    CHECK_OPEN("silu_backward");
    if (!dinp || !dout || !inp)
        return aitk_cuda_inval("silu_backward", "NULL tensor");
    LAUNCH("silu_backward", silu_bwd, B(dinp), CB(dout), CB(inp), n);
}

extern "C" aitk_status aitk_cuda_swiglu_forward(aitk_act *out, const aitk_act *a,
                                                const aitk_act *u, size_t n)
{
    CHECK_OPEN("swiglu_forward");
    if (!out || !a || !u)
        return aitk_cuda_inval("swiglu_forward", "NULL tensor");
    LAUNCH("swiglu_forward", swiglu_fwd, B(out), CB(a), CB(u), n);
}

extern "C" aitk_status aitk_cuda_swiglu_backward(aitk_act *da, aitk_act *du,
                                                 const aitk_act *dout, const aitk_act *a,
                                                 const aitk_act *u, size_t n)
{
    CHECK_OPEN("swiglu_backward");
    if (!da || !du || !dout || !a || !u)
        return aitk_cuda_inval("swiglu_backward", "NULL tensor");
    LAUNCH("swiglu_backward", swiglu_bwd, B(da), B(du), CB(dout), CB(a), CB(u), n);
}

/* fp32 per thread and per block on the device, then the block sums in
 * double on the host (ops.h); the one op of a step that waits for the GPU. */
extern "C" aitk_status aitk_cuda_mse_forward(float *loss_host, const aitk_act *pred,
                                             const aitk_act *target, size_t n)
{
    CHECK_OPEN("mse_forward");
    if (!loss_host || !pred || !target || !n)
        return aitk_cuda_inval("mse_forward", "NULL tensor or n == 0");
    unsigned grid;
    if ((st = aitk_cuda_partials_begin(n, &grid, "mse_forward")))
        return st;
    aitk_cuda_path("mse_forward", "block sum kernel + host double sum");
    mse_partials<<<grid, 256, 0, aitk_cuda.stream>>>(aitk_cuda.partials, CB(pred), CB(target),
                                                     n);
    if ((st = aitk_cuda_launched("mse_forward kernel")))
        return st;
    float h[AITK_CUDA_MAX_PARTIALS];
    if ((st = aitk_cuda_partials_fetch(h, grid, "mse_forward")))
        return st;
    double s = 0.0;
    for (unsigned i = 0; i < grid; i++)
        s += h[i];
    *loss_host = (float)(s / (double)n);
    return AITK_OK;
}

extern "C" aitk_status aitk_cuda_mse_backward(aitk_act *dpred, float dloss, const aitk_act *pred,
                                              const aitk_act *target, size_t n)
{
    CHECK_OPEN("mse_backward");
    if (!dpred || !pred || !target || !n)
        return aitk_cuda_inval("mse_backward", "NULL tensor or n == 0");
    float k = 2.0f * dloss / (float)n;
    LAUNCH("mse_backward", mse_bwd, B(dpred), k, CB(pred), CB(target), n);
}
