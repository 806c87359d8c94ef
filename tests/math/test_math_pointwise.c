/* kernels/math/pointwise.h as pointwise.cu runs it, compared with the CPU
 * reference (kernels/cpu/pointwise.c) on the same bf16-rounded inputs, at
 * the size of one FLUX MLP activation row block (4096 x 3072 / 16). */
#include "mt.h"

#include "kernels/cpu/cpu.h"
#include "kernels/math/pointwise.h"

enum { N = 3072 * 256 };

/* The GPU output is the fp32 value rounded once to bf16 (half an ulp, at
 * most 2^-8 relative); the CPU's GELU goes through its own exponential (a
 * few fp32 ulp apart). Near zero crossings a relative bound means nothing,
 * so an absolute floor of 1e-6 of the inputs' scale is added. */
#define RTOL 5e-3f
#define ATOL 1e-6f

static void test_gelu(void **state)
{
    (void)state;
    float *x = mt_draw_bf16(N, 31, 6.0f, 0.0f), *g = mt_draw_bf16(N, 32, 1.0f, 0.0f);
    float *y = mt_alloc(N), *y_ref = mt_alloc(N), *dx = mt_alloc(N), *dx_ref = mt_alloc(N);
    for (size_t i = 0; i < N; i++) {
        y[i] = aitk_bf16_rounded(aitk_gelu(x[i]));
        dx[i] = aitk_bf16_rounded(aitk_gelu_grad(g[i], x[i]));
    }
    assert_int_equal(aitk_cpu_gelu_forward(y_ref, x, N), AITK_OK);
    assert_int_equal(aitk_cpu_gelu_backward(dx_ref, g, x, N), AITK_OK);
    mt_close("gelu forward", y, y_ref, N, RTOL, ATOL);
    mt_close("gelu backward", dx, dx_ref, N, RTOL, ATOL);
    free(x), free(g), free(y), free(y_ref), free(dx), free(dx_ref);
}

static void test_silu_swiglu(void **state)
{
    (void)state;
    float *a = mt_draw_bf16(N, 41, 8.0f, 0.0f), *u = mt_draw_bf16(N, 42, 2.0f, 0.0f);
    float *g = mt_draw_bf16(N, 43, 1.0f, 0.0f);
    float *y = mt_alloc(N), *y_ref = mt_alloc(N), *d1 = mt_alloc(N), *d1_ref = mt_alloc(N);
    float *d2 = mt_alloc(N), *d2_ref = mt_alloc(N);
    for (size_t i = 0; i < N; i++) {
        y[i] = aitk_bf16_rounded(aitk_silu(a[i]));
        d1[i] = aitk_bf16_rounded(aitk_silu_grad(g[i], a[i]));
    }
    assert_int_equal(aitk_cpu_silu_forward(y_ref, a, N), AITK_OK);
    assert_int_equal(aitk_cpu_silu_backward(d1_ref, g, a, N), AITK_OK);
    mt_close("silu forward", y, y_ref, N, RTOL, ATOL);
    mt_close("silu backward", d1, d1_ref, N, RTOL, ATOL);
    for (size_t i = 0; i < N; i++) {
        float da, du;
        y[i] = aitk_bf16_rounded(aitk_swiglu(a[i], u[i]));
        aitk_swiglu_grad(g[i], a[i], u[i], &da, &du);
        d1[i] = aitk_bf16_rounded(da);
        d2[i] = aitk_bf16_rounded(du);
    }
    assert_int_equal(aitk_cpu_swiglu_forward(y_ref, a, u, N), AITK_OK);
    assert_int_equal(aitk_cpu_swiglu_backward(d1_ref, d2_ref, g, a, u, N), AITK_OK);
    mt_close("swiglu forward", y, y_ref, N, RTOL, ATOL);
    mt_close("swiglu da", d1, d1_ref, N, RTOL, ATOL);
    mt_close("swiglu du", d2, d2_ref, N, RTOL, ATOL);
    free(a), free(u), free(g), free(y), free(y_ref), free(d1), free(d1_ref), free(d2),
        free(d2_ref);
}

/* The GPU's summation: thread t of a grid of `blocks` x 256 sums elements
 * t, t + stride, ... in fp32; each block sums its threads in fp32; the host
 * sums the blocks in double (pointwise.cu). */
static float mse_as_gpu(const float *p, const float *t, size_t n, unsigned blocks)
{
    size_t threads = (size_t)blocks * 256;
    double total = 0.0;
    for (unsigned b = 0; b < blocks; b++) {
        float block = 0.0f;
        for (unsigned k = 0; k < 256; k++) {
            float s = 0.0f;
            for (size_t i = (size_t)b * 256 + k; i < n; i += threads)
                s += aitk_mse_term(p[i], t[i]);
            block += s;
        }
        total += block;
    }
    return (float)(total / (double)n);
}

static void test_mse(void **state)
{
    (void)state;
    size_t n = (size_t)16 * 4096 * 4; /* a 512x512 FLUX latent batch: 16 ch x 64 x 64 x 4 */
    float *p = mt_draw_bf16(n, 51, 1.0f, 0.0f), *t = mt_draw_bf16(n, 52, 1.0f, 0.1f);
    float *d = mt_alloc(n), *d_ref = mt_alloc(n);
    float loss_ref = 0.0f;
    assert_int_equal(aitk_cpu_mse_forward(&loss_ref, p, t, n), AITK_OK);
    /* fp32 partials of ~1000 terms each: a few fp32 ulp, well under 1e-5. */
    float loss = mse_as_gpu(p, t, n, 1024);
    mt_close("mse forward", &loss, &loss_ref, 1, 1e-5f, 0.0f);
    float k = 2.0f * 0.5f / (float)n;
    for (size_t i = 0; i < n; i++)
        d[i] = aitk_bf16_rounded(aitk_mse_grad(k, p[i], t[i]));
    assert_int_equal(aitk_cpu_mse_backward(d_ref, 0.5f, p, t, n), AITK_OK);
    mt_close("mse backward", d, d_ref, n, RTOL, 0.0f);
    /* Hand value: pred (1, 3), target (0, 0): mean of 1 and 9 is 5. */
    float hp[2] = {1.0f, 3.0f}, ht[2] = {0.0f, 0.0f};
    assert_float_equal(mse_as_gpu(hp, ht, 2, 1), 5.0f, 0.0f);
    free(p), free(t), free(d), free(d_ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_silu_swiglu),
        cmocka_unit_test(test_mse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
