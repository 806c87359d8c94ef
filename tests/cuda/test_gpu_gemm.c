/* GPU: the plugin's cuBLASLt GEMM (the set-up gemm_bench times) against a
 * CPU reference computed here, and its reference attention kernel likewise.
 * Exits 77 (skipped) when no GPU answers.
 *
 * Tolerances, with u = unit roundoff:
 * - GEMM: inputs are bf16 (or e4m3) values, so every product x*w is exact in
 *   fp32 (8+8 significant bits < 24) on both sides; the sums differ only in
 *   order (tensor-core tree, split-K) and so by at most ~K * u32 * sum|x w|
 *   (u32 = 2^-24; we allow 2^-23 per term). The GPU then rounds to bf16 (half
 *   an ulp, 2^-9 relative) and the reference is compared in fp32, so one bf16
 *   ulp (2^-8 relative) covers a tie landing on either side.
 *   Bound: |y - ref| <= 2^-8 |ref| + K 2^-23 sum|x w|.
 * - attention: the output is a convex combination of v rows; fp32 softmax
 *   with __expf (2 ulp) and the bf16 output rounding (2^-9 relative to
 *   max|v|) stay well inside 2^-7 max|v|, which a wrong row, head or scale
 *   exceeds by orders of magnitude. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/alloc.h"
#include "kernels/cpu/numfmt.h"
#include "tests/cuda/cuda_test.h"

static const aitk_cuda_plugin *gpu;

static uint32_t rng = 12345u;
static float uniform(void) /* [-1, 1) */
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

static void check_gemm(aitk_cuda_dtype dtype, long m, long n, long k)
{
    size_t eb = dtype == AITK_CUDA_FP8_E4M3 ? 1 : 2;
    unsigned char *x = aitk_malloc((size_t)(m * k) * eb), *w = aitk_malloc((size_t)(n * k) * eb);
    float *xf = aitk_malloc((size_t)(m * k) * sizeof *xf), *wf = aitk_malloc((size_t)(n * k) * sizeof *wf);
    uint16_t *y = aitk_malloc((size_t)(m * n) * sizeof *y);
    assert_true(x && w && xf && wf && y);
    /* The reference sees exactly the values the GPU sees: rounded first. */
    for (long i = 0; i < m * k; i++) {
        float v = uniform();
        if (dtype == AITK_CUDA_FP8_E4M3) {
            x[i] = aitk_fp8_e4m3_encode(4.0f * v, true);
            xf[i] = aitk_fp8_e4m3_decode(x[i]);
        } else {
            uint16_t h = aitk_bf16_from_f32(v);
            memcpy(x + 2 * i, &h, 2);
            xf[i] = aitk_bf16_to_f32(h);
        }
    }
    for (long i = 0; i < n * k; i++) {
        float v = uniform();
        if (dtype == AITK_CUDA_FP8_E4M3) {
            w[i] = aitk_fp8_e4m3_encode(v, true);
            wf[i] = aitk_fp8_e4m3_decode(w[i]);
        } else {
            uint16_t h = aitk_bf16_from_f32(0.1f * v);
            memcpy(w + 2 * i, &h, 2);
            wf[i] = aitk_bf16_to_f32(h);
        }
    }
    char err[AITK_CUDA_PLUGIN_ERROR_LEN] = "";
    aitk_status st = gpu->gemm_run(0, dtype, m, n, k, x, w, y, err, sizeof err);
    if (st)
        fail_msg("gemm_run %ldx%ldx%ld: %s", m, n, k, err);
    double worst = 0;
    for (long i = 0; i < m; i++)
        for (long j = 0; j < n; j++) {
            float ref = 0, abs_sum = 0; /* y (m,n) = x (m,k) W^T, W (n,k) */
            for (long p = 0; p < k; p++) {
                ref += xf[i * k + p] * wf[j * k + p];
                abs_sum += fabsf(xf[i * k + p] * wf[j * k + p]);
            }
            float got = aitk_bf16_to_f32(y[i * n + j]);
            float tol = ldexpf(fabsf(ref), -8) + (float)k * ldexpf(abs_sum, -23);
            float e = fabsf(got - ref);
            if (!(e <= tol))
                fail_msg("%s y[%ld,%ld] = %g, reference %g (tolerance %g)",
                         dtype == AITK_CUDA_FP8_E4M3 ? "fp8" : "bf16", i, j, got, ref, tol);
            worst = fmax(worst, tol > 0 ? e / tol : 0);
        }
    print_message("%s %ldx%ldx%ld: worst error %.2f of the tolerance\n",
                  dtype == AITK_CUDA_FP8_E4M3 ? "fp8 e4m3" : "bf16", m, n, k, worst);
    aitk_free(x);
    aitk_free(w);
    aitk_free(xf);
    aitk_free(wf);
    aitk_free(y);
}

static void test_gemm_bf16(void **state)
{
    (void)state;
    check_gemm(AITK_CUDA_BF16, 64, 96, 256);
    /* No two of m, n, k equal and none a multiple of 8: a transposed operand
     * or a wrong leading dimension cannot hide. */
    check_gemm(AITK_CUDA_BF16, 37, 53, 71);
}

static void test_gemm_fp8(void **state)
{
    (void)state;
    const aitk_cuda_device_info *d = &cuda_test_probe.devices[0];
    if (d->cc_major * 10 + d->cc_minor < 89) {
        char err[AITK_CUDA_PLUGIN_ERROR_LEN] = "";
        uint8_t x[16 * 16] = {0}, w[16 * 16] = {0};
        uint16_t y[16 * 16];
        assert_int_equal(gpu->gemm_run(0, AITK_CUDA_FP8_E4M3, 16, 16, 16, x, w, y, err,
                                       sizeof err), AITK_E_UNSUPPORTED);
        assert_non_null(strstr(err, "8.9"));
        skip();
    }
    /* cuBLASLt's fp8 kernels want dimensions in multiples of 16. */
    check_gemm(AITK_CUDA_FP8_E4M3, 64, 96, 256);
}

static void test_attention_reference(void **state)
{
    (void)state;
    enum { B = 2, T = 77, H = 3, D = 64 };
    size_t n = (size_t)B * T * H * D;
    uint16_t *q = aitk_malloc(n * 2), *k = aitk_malloc(n * 2), *v = aitk_malloc(n * 2),
             *o = aitk_malloc(n * 2);
    assert_true(q && k && v && o);
    float vmax = 0;
    for (size_t i = 0; i < n; i++) {
        q[i] = aitk_bf16_from_f32(uniform());
        k[i] = aitk_bf16_from_f32(uniform());
        v[i] = aitk_bf16_from_f32(uniform());
        vmax = fmaxf(vmax, fabsf(aitk_bf16_to_f32(v[i])));
    }
    char err[AITK_CUDA_PLUGIN_ERROR_LEN] = "";
    if (gpu->attention_run(0, B, T, H, D, q, k, v, o, err, sizeof err))
        fail_msg("attention_run: %s", err);
    double s[T], worst = 0;
    const double scale = 1.0 / sqrt((double)D);
#define AT(x, b, t, h, d) aitk_bf16_to_f32((x)[(((size_t)(b) * T + (t)) * H + (h)) * D + (d)])
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j < T; j++) {
                    double dot = 0;
                    for (int d = 0; d < D; d++)
                        dot += (double)AT(q, b, i, h, d) * AT(k, b, j, h, d);
                    s[j] = dot * scale;
                    mx = fmax(mx, s[j]);
                }
                for (int j = 0; j < T; j++)
                    sum += (s[j] = exp(s[j] - mx));
                for (int d = 0; d < D; d++) {
                    double ref = 0;
                    for (int j = 0; j < T; j++)
                        ref += s[j] / sum * AT(v, b, j, h, d);
                    double e = fabs(AT(o, b, i, h, d) - ref), tol = ldexp(vmax, -7);
                    if (!(e <= tol))
                        fail_msg("o[%d,%d,%d,%d] = %g, reference %g", b, i, h, d,
                                 (double)AT(o, b, i, h, d), ref);
                    worst = fmax(worst, e / tol);
                }
            }
#undef AT
    print_message("attention %dx%dx%dx%d: worst error %.2f of the tolerance\n", B, T, H, D,
                  worst);
    aitk_free(q);
    aitk_free(k);
    aitk_free(v);
    aitk_free(o);
}

int main(void)
{
    gpu = cuda_test_device(); /* exit 77 without a GPU */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_bf16),
        cmocka_unit_test(test_gemm_fp8),
        cmocka_unit_test(test_attention_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
