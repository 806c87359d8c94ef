/* The LoRA linear layer's GEMM steps (lora_plan.h). */
#include "kernels/cuda/lora_plan.h"

static aitk_lora_step step(aitk_lora_tensor c, aitk_lora_tensor a, aitk_lora_tensor b, int m,
                           int n, int k, bool ta, bool tb, float alpha, float beta)
{
    aitk_lora_step s;
    s.c = c;
    s.a = a;
    s.b = b;
    s.m = m;
    s.n = n;
    s.k = k;
    s.trans_a = ta;
    s.trans_b = tb;
    s.alpha = alpha;
    s.beta = beta;
    s.c_f32 = false;
    s.bias = false;
    return s;
}

int aitk_lora_forward_plan(aitk_lora_step *steps, int n, int in, int out, int r, float scale,
                           bool bias)
{
    int k = 0;
    /* y (N,out) = x (N,in) W^T, W stored (out,in); bias in the epilogue. */
    steps[k] = step(AITK_LORA_Y, AITK_LORA_X, AITK_LORA_W, n, out, in, false, true, 1.0f, 0.0f);
    steps[k++].bias = bias;
    if (r > 0) {
        /* Two thin GEMMs through the rank-r bottleneck, never W + scale B A. */
        steps[k++] = step(AITK_LORA_XA, AITK_LORA_X, AITK_LORA_A, n, r, in, false, true, 1.0f,
                          0.0f);
        steps[k++] = step(AITK_LORA_Y, AITK_LORA_XA, AITK_LORA_B, n, out, r, false, true, scale,
                          1.0f);
    }
    return k;
}

int aitk_lora_backward_plan(aitk_lora_step *steps, int n, int in, int out, int r, float scale,
                            bool want_dx, bool accumulate_dx)
{
    int k = 0;
    if (r > 0) {
        /* work (N,r) = dy (N,out) B (out,r): shared by dA and dx. */
        steps[k++] = step(AITK_LORA_WORK, AITK_LORA_DY, AITK_LORA_B, n, r, out, false, false,
                          1.0f, 0.0f);
        /* dB (out,r) += scale dy^T xa; dA (r,in) += scale work^T x: fp32. */
        steps[k] = step(AITK_LORA_DB, AITK_LORA_DY, AITK_LORA_XA, out, r, n, true, false, scale,
                        1.0f);
        steps[k++].c_f32 = true;
        steps[k] = step(AITK_LORA_DA, AITK_LORA_WORK, AITK_LORA_X, r, in, n, true, false, scale,
                        1.0f);
        steps[k++].c_f32 = true;
    }
    if (want_dx) {
        steps[k++] = step(AITK_LORA_DX, AITK_LORA_DY, AITK_LORA_W, n, in, out, false, false, 1.0f,
                          accumulate_dx ? 1.0f : 0.0f);
        if (r > 0)
            steps[k++] = step(AITK_LORA_DX, AITK_LORA_WORK, AITK_LORA_A, n, in, r, false, false,
                              scale, 1.0f);
    }
    return k;
}

size_t aitk_lora_b_offset(int in, int r)
{
    size_t na = (size_t)r * (size_t)in;
    return (na + AITK_LORA_ALIGN_ELEMS - 1) / AITK_LORA_ALIGN_ELEMS * AITK_LORA_ALIGN_ELEMS;
}

size_t aitk_lora_bf16_elems(int in, int out, int r)
{
    return aitk_lora_b_offset(in, r) + (size_t)out * (size_t)r;
}
