/* adaLN modulation, gated residuals and 3-axis RoPE (ops.h: adaLN, RoPE).
 * shift/scale/gate rows sit ld_mod apart per sample (chunks of the
 * modulation linear's output, read in place). Token-reduced gradients
 * (dshift, dscale, dgate) are two-stage column sums over the tokens
 * (kernels/math/colsum.h): fp32 partials per chunk of tokens, coalesced
 * across channels, then the chunks in order. No atomics, the same result
 * on every run, and enough blocks to fill the GPU at batch 1. */
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/internal.h"
#include "kernels/math/bf16.h"
#include "kernels/math/colsum.h"
#include "kernels/math/modulate.h"

/* Row-broadcast operand: element (sample s, channel j) of a ld_mod-strided row. */
#define MOD(p, i, t, c, ld) LD(p, ((i) / ((size_t)(t) * (c))) * (size_t)(ld) + (i) % (c))

static __global__ void modulate_fwd(uint16_t *out, cbf x, cbf shift, cbf scale, int t, int c,
                                    int ld, size_t n)
{
    GRID_STRIDE(i, n)
    out[i] = ST(aitk_modulate(LD(x, i), MOD(shift, i, t, c, ld), MOD(scale, i, t, c, ld)));
}

static __global__ void modulate_dx(uint16_t *dx, cbf g, cbf scale, int t, int c, int ld,
                                   size_t n)
{
    GRID_STRIDE(i, n) dx[i] = ST(aitk_modulate_dx(LD(g, i), MOD(scale, i, t, c, ld)));
}

/* Stage 1 of the token sums, one group per sample (blockIdx.z): psx gets
 * each chunk's sum of g x and, unless NULL, ps its sum of g (dshift needs
 * both, dgate only the first). */
static __global__ void token_sum_partials(float *ps, float *psx, cbf g, cbf x, int t, int c,
                                          aitk_colsum_grid grid)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, begin, end;
    if (j >= c)
        return;
    size_t s = blockIdx.z;
    aitk_colsum_rows(&grid, t, blockIdx.y, &begin, &end);
    float gs = 0.0f, gsx = 0.0f;
    for (int i = begin; i < end; i++) {
        size_t at = (s * t + i) * c + j;
        float gv = LD(g, at);
        gs += gv;
        gsx += gv * LD(x, at);
    }
    size_t at = aitk_colsum_at(&grid, c, s, blockIdx.y, j);
    if (ps)
        ps[at] = gs;
    psx[at] = gsx;
}

/* Stage 2: out[s * ld + j] = the partials of (s, j) in chunk order, bf16. */
static __global__ void token_sum_finish(uint16_t *out, const float *partials, int b, int c,
                                        int ld, aitk_colsum_grid grid)
{
    size_t bj = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (bj >= (size_t)b * c)
        return;
    size_t s = bj / c;
    int j = (int)(bj % c);
    out[s * ld + j] = ST(aitk_colsum_finish(&grid, partials, c, s, j));
}

static __global__ void gated_fwd(uint16_t *resid, cbf x, cbf gate, int t, int c, int ld,
                                 size_t n)
{
    GRID_STRIDE(i, n)
    resid[i] = ST(aitk_gated_residual(LD(resid, i), MOD(gate, i, t, c, ld), LD(x, i)));
}

static __global__ void gated_dx(uint16_t *dx, cbf g, cbf gate, int t, int c, int ld, size_t n)
{
    GRID_STRIDE(i, n) dx[i] = ST(LD(g, i) * MOD(gate, i, t, c, ld));
}

/* The token sums of g x (and of g when `dsum` is given) per (sample,
 * channel), into bf16 rows ld apart: the two stages of colsum.h. */
extern "C" aitk_status aitk_cuda_token_sums(const char *op, uint16_t *dsum, uint16_t *dsumx,
                                            cbf g, cbf x, int b, int t, int c, int ld)
{
    aitk_colsum_grid grid = aitk_colsum_grid_for(t, c, b, 256, aitk_cuda.sm_count);
    size_t np = (size_t)b * grid.chunks * c;
    aitk_status st = aitk_cuda_reserve((void **)&aitk_cuda.partials, &aitk_cuda.partials_bytes,
                                       2 * np * sizeof(float),
                                       "cudaMallocAsync(token sum partials)");
    if (st)
        return st;
    float *psx = aitk_cuda.partials, *ps = dsum ? psx + np : NULL;
    dim3 g1((unsigned)grid.col_blocks, (unsigned)grid.chunks, (unsigned)b);
    token_sum_partials<<<g1, 256, 0, aitk_cuda.stream>>>(ps, psx, g, x, t, c, grid);
    if ((st = aitk_cuda_launched(op)))
        return st;
    unsigned g2 = (unsigned)(((size_t)b * c + 255) / 256);
    token_sum_finish<<<g2, 256, 0, aitk_cuda.stream>>>(dsumx, psx, b, c, ld, grid);
    if (!(st = aitk_cuda_launched(op)) && dsum) {
        token_sum_finish<<<g2, 256, 0, aitk_cuda.stream>>>(dsum, ps, b, c, ld, grid);
        st = aitk_cuda_launched(op);
    }
    return st;
}

typedef struct axes3 {
    int a[3];
} axes3;

/* One thread per (token, pair): the angle in double, as the CPU table. */
static __global__ void rope_table_kernel(float *cos_t, float *sin_t, const float *pos, int t,
                                         int half, axes3 axes, double theta)
{
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)t * half)
        return;
    size_t i = idx / half;
    int p = (int)(idx % half), axis = 0;
    double freq = aitk_rope_freq(p, axes.a, theta, &axis);
    double ang = (double)pos[i * 3 + axis] * freq;
    cos_t[idx] = (float)cos(ang);
    sin_t[idx] = (float)sin(ang);
}

/* One thread per pair of (b, t, h, d): sign +1 forward, -1 backward. */
static __global__ void rope_apply(uint16_t *out, cbf inp, const float *cos_t, const float *sin_t,
                                  int t, int h, int half, float sign, size_t pairs)
{
    GRID_STRIDE(q, pairs)
    {
        size_t p = q % half;
        size_t tok = (q / half / h) % t;
        float c = cos_t[tok * half + p], s = sign * sin_t[tok * half + p];
        float y0, y1;
        aitk_rope_rotate(LD(inp, 2 * q), LD(inp, 2 * q + 1), c, s, &y0, &y1);
        out[2 * q] = ST(y0);
        out[2 * q + 1] = ST(y1);
    }
}

#define CHECK_OPEN(op)                         \
    aitk_status st = aitk_cuda_need_open(op); \
    if (st)                                   \
        return st
#define B(p) ((uint16_t *)(p))
#define CB(p) ((const uint16_t *)(p))
#define SHAPE_OK (b > 0 && t > 0 && c > 0 && ld_mod >= c)

extern "C" aitk_status aitk_cuda_modulate_forward(aitk_act *out, const aitk_act *x,
                                                  const aitk_act *shift, const aitk_act *scale,
                                                  int b, int t, int c, int ld_mod)
{
    CHECK_OPEN("modulate_forward");
    if (!out || !x || !shift || !scale || !SHAPE_OK)
        return aitk_cuda_inval("modulate_forward", "NULL tensor or impossible shape");
    size_t n = (size_t)b * t * c;
    aitk_cuda_path("modulate_forward", "elementwise kernel");
    modulate_fwd<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(B(out), CB(x), CB(shift),
                                                                  CB(scale), t, c, ld_mod, n);
    return aitk_cuda_launched("modulate_forward kernel");
}

extern "C" aitk_status aitk_cuda_modulate_backward(aitk_act *dx, aitk_act *dshift,
                                                   aitk_act *dscale, const aitk_act *dout,
                                                   const aitk_act *x, const aitk_act *scale,
                                                   int b, int t, int c, int ld_mod)
{
    CHECK_OPEN("modulate_backward");
    if (!dx || !dshift || !dscale || !dout || !x || !scale || !SHAPE_OK)
        return aitk_cuda_inval("modulate_backward", "NULL tensor or impossible shape");
    size_t n = (size_t)b * t * c;
    aitk_cuda_path("modulate_backward", "elementwise + column-sum kernels");
    /* The sums first: dx may alias dout. */
    if ((st = aitk_cuda_token_sums("modulate_backward sum kernels", B(dshift), B(dscale),
                                   CB(dout), CB(x), b, t, c, ld_mod)))
        return st;
    modulate_dx<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(B(dx), CB(dout), CB(scale), t,
                                                                 c, ld_mod, n);
    return aitk_cuda_launched("modulate_backward kernel");
}

extern "C" aitk_status aitk_cuda_gated_residual_forward(aitk_act *resid, const aitk_act *x,
                                                        const aitk_act *gate, int b, int t,
                                                        int c, int ld_mod)
{
    CHECK_OPEN("gated_residual_forward");
    if (!resid || !x || !gate || !SHAPE_OK)
        return aitk_cuda_inval("gated_residual_forward", "NULL tensor or impossible shape");
    size_t n = (size_t)b * t * c;
    aitk_cuda_path("gated_residual_forward", "elementwise kernel");
    gated_fwd<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(B(resid), CB(x), CB(gate), t, c,
                                                               ld_mod, n);
    return aitk_cuda_launched("gated_residual_forward kernel");
}

extern "C" aitk_status aitk_cuda_gated_residual_backward(aitk_act *dx, aitk_act *dgate,
                                                         const aitk_act *dresid,
                                                         const aitk_act *x, const aitk_act *gate,
                                                         int b, int t, int c, int ld_mod)
{
    CHECK_OPEN("gated_residual_backward");
    if (!dx || !dgate || !dresid || !x || !gate || !SHAPE_OK)
        return aitk_cuda_inval("gated_residual_backward", "NULL tensor or impossible shape");
    size_t n = (size_t)b * t * c;
    aitk_cuda_path("gated_residual_backward", "elementwise + column-sum kernels");
    if ((st = aitk_cuda_token_sums("gated_residual_backward sum kernels", NULL, B(dgate),
                                   CB(dresid), CB(x), b, t, c, ld_mod)))
        return st;
    gated_dx<<<aitk_cuda_grid(n), 256, 0, aitk_cuda.stream>>>(B(dx), CB(dresid), CB(gate), t, c,
                                                              ld_mod, n);
    return aitk_cuda_launched("gated_residual_backward kernel");
}

extern "C" aitk_status aitk_cuda_rope_table(float *cos_t, float *sin_t, const float *pos, int t,
                                            int d, const int axes[3], float theta)
{
    CHECK_OPEN("rope_table");
    if (!cos_t || !sin_t || !pos || !axes || t <= 0 || d <= 0 || !(theta > 0.0f))
        return aitk_cuda_inval("rope_table", "NULL tensor or impossible shape");
    if (axes[0] < 0 || axes[1] < 0 || axes[2] < 0 || axes[0] % 2 || axes[1] % 2 || axes[2] % 2 ||
        axes[0] + axes[1] + axes[2] != d)
        return aitk_cuda_inval("rope_table", "axes must be even and sum to head_dim");
    axes3 ax = {{axes[0], axes[1], axes[2]}};
    size_t n = (size_t)t * (d / 2);
    aitk_cuda_path("rope_table", "table kernel (double angles)");
    rope_table_kernel<<<(unsigned)((n + 255) / 256), 256, 0, aitk_cuda.stream>>>(
        cos_t, sin_t, pos, t, d / 2, ax, (double)theta);
    return aitk_cuda_launched("rope_table kernel");
}

static aitk_status rope(const char *op, aitk_act *out, const aitk_act *inp, const float *cos_t,
                        const float *sin_t, int b, int t, int h, int d, float sign)
{
    CHECK_OPEN(op);
    if (!out || !inp || !cos_t || !sin_t || b <= 0 || t <= 0 || h <= 0 || d <= 0 || d % 2)
        return aitk_cuda_inval(op, "NULL tensor or impossible shape");
    size_t pairs = (size_t)b * t * h * (d / 2);
    aitk_cuda_path(op, "pair rotation kernel");
    rope_apply<<<aitk_cuda_grid(pairs), 256, 0, aitk_cuda.stream>>>(B(out), CB(inp), cos_t,
                                                                    sin_t, t, h, d / 2, sign,
                                                                    pairs);
    return aitk_cuda_launched(op);
}

extern "C" aitk_status aitk_cuda_rope_forward(aitk_act *out, const aitk_act *inp,
                                              const float *cos_t, const float *sin_t, int b,
                                              int t, int h, int d)
{
    return rope("rope_forward", out, inp, cos_t, sin_t, b, t, h, d, 1.0f);
}

extern "C" aitk_status aitk_cuda_rope_backward(aitk_act *dinp, const aitk_act *dout,
                                               const float *cos_t, const float *sin_t, int b,
                                               int t, int h, int d)
{
    return rope("rope_backward", dinp, dout, cos_t, sin_t, b, t, h, d, -1.0f);
}
