/* LayerNorm (no affine) fused with adaLN modulation, forward and backward
 * (ops.h: layernorm_modulate_*), the pair that opens every FLUX and Chroma
 * block. One block of 256 threads per row, as norm.cu, the per-element
 * arithmetic in kernels/math/norm_modulate.h.
 *
 * What the fusion saves against layernorm then modulate: forward, the
 * modulation reads the row while it is in registers instead of reading ln
 * back (and uses the fp32 ln, not its bf16 copy); backward, the gradient
 * reaching ln, dout (1 + scale), is recomputed in the row kernel instead of
 * being stored as a (B,T,C) bf16 tensor and read back, which also removes
 * that tensor's rounding. dshift and dscale are the token sums of
 * modulate.cu (aitk_cuda_token_sums). */
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/math/norm_modulate.h"

enum { ROW_THREADS = 256 };

/* Row blockIdx.x of sample row / t; shift and scale rows ld apart. */
static __global__ void layernorm_modulate_forward_kernel(uint16_t *out, uint16_t *ln,
                                                         float *mean, float *rstd, cbf inp,
                                                         cbf shift, cbf scale, int t, int c,
                                                         int ld, float eps)
{
    const size_t row = blockIdx.x, off = row * c, mod = (row / t) * (size_t)ld;
    float s = 0.0f;
    for (int j = threadIdx.x; j < c; j += blockDim.x)
        s += LD(inp, off + j);
    float mu = aitk_block_reduce(s, false) / (float)c;
    float ss = 0.0f;
    for (int j = threadIdx.x; j < c; j += blockDim.x) {
        float dlt = LD(inp, off + j) - mu;
        ss += dlt * dlt;
    }
    float r = aitk_norm_rstd(aitk_block_reduce(ss, false), c, eps);
    for (int j = threadIdx.x; j < c; j += blockDim.x) {
        float l;
        float y = aitk_layernorm_modulate_out(LD(inp, off + j), mu, r, LD(shift, mod + j),
                                              LD(scale, mod + j), &l);
        ln[off + j] = ST(l);
        out[off + j] = ST(y);
    }
    if (threadIdx.x == 0) {
        mean[row] = mu;
        rstd[row] = r;
    }
}

/* Each thread reads and writes only its own columns, in both passes, so
 * dinp may alias dout. */
static __global__ void layernorm_modulate_backward_kernel(uint16_t *dinp, cbf dout, cbf inp,
                                                          const float *mean, const float *rstd,
                                                          cbf scale, int t, int c, int ld)
{
    const size_t row = blockIdx.x, off = row * c, mod = (row / t) * (size_t)ld;
    float mu = mean[row], r = rstd[row];
    float sg = 0.0f, sgx = 0.0f;
    for (int j = threadIdx.x; j < c; j += blockDim.x) {
        float gl = aitk_layernorm_modulate_gl(LD(dout, off + j), LD(scale, mod + j));
        sg += gl;
        sgx += gl * aitk_layernorm_out(LD(inp, off + j), mu, r);
    }
    float mean_gl = aitk_block_reduce(sg, false) / (float)c;
    float mean_glx = aitk_block_reduce(sgx, false) / (float)c;
    for (int j = threadIdx.x; j < c; j += blockDim.x)
        dinp[off + j] = ST(aitk_layernorm_modulate_dx(LD(dout, off + j), LD(scale, mod + j),
                                                      LD(inp, off + j), mu, r, mean_gl,
                                                      mean_glx));
}

extern "C" aitk_status aitk_cuda_layernorm_modulate_forward(aitk_act *out, aitk_act *ln,
                                                            float *mean, float *rstd,
                                                            const aitk_act *inp,
                                                            const aitk_act *shift,
                                                            const aitk_act *scale, int b, int t,
                                                            int c, int ld_mod, float eps)
{
    const char *op = "layernorm_modulate_forward";
    aitk_status st = aitk_cuda_need_open(op);
    if (st)
        return st;
    if (!out || !ln || !mean || !rstd || !inp || !shift || !scale || b <= 0 || t <= 0 ||
        c <= 0 || ld_mod < c || !(eps >= 0.0f))
        return aitk_cuda_inval(op, "NULL tensor or impossible shape");
    aitk_cuda_path(op, "fused row kernel");
    layernorm_modulate_forward_kernel<<<(unsigned)((size_t)b * t), ROW_THREADS, 0,
                                        aitk_cuda.stream>>>(
        (uint16_t *)out, (uint16_t *)ln, mean, rstd, (cbf)inp, (cbf)shift, (cbf)scale, t, c,
        ld_mod, eps);
    return aitk_cuda_launched("layernorm_modulate_forward kernel");
}

extern "C" aitk_status aitk_cuda_layernorm_modulate_backward(aitk_act *dinp, aitk_act *dshift,
                                                             aitk_act *dscale,
                                                             const aitk_act *dout,
                                                             const aitk_act *inp,
                                                             const aitk_act *ln,
                                                             const float *mean,
                                                             const float *rstd,
                                                             const aitk_act *scale, int b,
                                                             int t, int c, int ld_mod)
{
    const char *op = "layernorm_modulate_backward";
    aitk_status st = aitk_cuda_need_open(op);
    if (st)
        return st;
    if (!dinp || !dshift || !dscale || !dout || !inp || !ln || !mean || !rstd || !scale ||
        b <= 0 || t <= 0 || c <= 0 || ld_mod < c)
        return aitk_cuda_inval(op, "NULL tensor or impossible shape");
    aitk_cuda_path(op, "column-sum + fused row kernels");
    /* The sums first: dinp may alias dout. */
    if ((st = aitk_cuda_token_sums("layernorm_modulate_backward sum kernels",
                                   (uint16_t *)dshift, (uint16_t *)dscale, (cbf)dout, (cbf)ln,
                                   b, t, c, ld_mod)))
        return st;
    layernorm_modulate_backward_kernel<<<(unsigned)((size_t)b * t), ROW_THREADS, 0,
                                         aitk_cuda.stream>>>((uint16_t *)dinp, (cbf)dout,
                                                             (cbf)inp, mean, rstd, (cbf)scale,
                                                             t, c, ld_mod);
    return aitk_cuda_launched("layernorm_modulate_backward kernel");
}
