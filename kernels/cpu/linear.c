/* GEMM and the LoRA-augmented linear layer on the CPU, plus the two copy
 * helpers the graph uses to concatenate and sum branches.
 *
 * All matrix products go through cblas_sgemm (OpenBLAS, opened on first use
 * by blas.c): it is the one place where the CPU reference spends most of its
 * time, and where a hand loop would be 10-50x slower. cblas is never called
 * from inside an OpenMP region (OpenBLAS runs its own threads). */
#include <string.h>

#include "kernels/cpu/blas.h"
#include "kernels/cpu/cpu.h"

aitk_status aitk_cpu_gemm(float *c, const float *a, const float *b, int m, int n, int k,
                          bool trans_a, bool trans_b, float alpha, float beta, int batch,
                          long long stride_a, long long stride_b, long long stride_c)
{
    AITK_CPU_REQUIRE(c && a && b && m > 0 && n > 0 && k > 0 && batch > 0);
    AITK_CPU_REQUIRE(stride_a >= 0 && stride_b >= 0 && stride_c >= 0);
    /* Batches writing the same C would race in a GPU backend: refuse it here too. */
    AITK_CPU_REQUIRE(batch == 1 || stride_c >= (long long)m * n);
    aitk_status st = aitk_cpu_blas_load();
    if (st)
        return st;
    int lda = trans_a ? m : k;
    int ldb = trans_b ? k : n;
    for (int i = 0; i < batch; i++)
        aitk_cpu_sgemm(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda,
                       b + i * stride_b, ldb, beta, c + i * stride_c, n);
    return AITK_OK;
}

aitk_status aitk_cpu_lora_linear_forward(float *y, float *xa, const float *x, const float *w,
                                         const float *bias, const float *la, const float *lb,
                                         int n, int in, int out, int r, float scale)
{
    AITK_CPU_REQUIRE(y && x && w && n > 0 && in > 0 && out > 0 && r >= 0);
    AITK_CPU_REQUIRE(r == 0 || (xa && la && lb));
    /* The GEMMs below cannot fail once OpenBLAS is open (their shapes are
     * checked here): what can fail is opening it, asked once up front. */
    aitk_status st = aitk_cpu_blas_load();
    if (st)
        return st;
    aitk_cpu_gemm(y, x, w, n, out, in, false, true, 1.0f, 0.0f, 1, 0, 0, 0);
    if (bias)
        for (int i = 0; i < n; i++)
            for (int o = 0; o < out; o++)
                y[(size_t)i * out + o] += bias[o];
    if (r > 0) {
        /* Two thin GEMMs through the rank-r bottleneck, never the merged
         * W + scale*B A: that is what peft does, and it keeps the adapter's
         * cost at 2*N*r*(in+out) instead of another N*in*out. */
        aitk_cpu_gemm(xa, x, la, n, r, in, false, true, 1.0f, 0.0f, 1, 0, 0, 0);
        aitk_cpu_gemm(y, xa, lb, n, out, r, false, true, scale, 1.0f, 1, 0, 0, 0);
    }
    return AITK_OK;
}

aitk_status aitk_cpu_lora_linear_backward(float *dx, float *dla, float *dlb, float *work,
                                          const float *dy, const float *x, const float *xa,
                                          const float *w, const float *la, const float *lb,
                                          int n, int in, int out, int r, float scale,
                                          bool accumulate_dx)
{
    AITK_CPU_REQUIRE(dy && w && n > 0 && in > 0 && out > 0 && r >= 0);
    AITK_CPU_REQUIRE(r == 0 || (dla && dlb && work && x && xa && la && lb));
    aitk_status st = aitk_cpu_blas_load();
    if (st)
        return st;
    if (r > 0) {
        /* work = dy B (N,r): shared by dA and dx. */
        aitk_cpu_gemm(work, dy, lb, n, r, out, false, false, 1.0f, 0.0f, 1, 0, 0, 0);
        aitk_cpu_gemm(dlb, dy, xa, out, r, n, true, false, scale, 1.0f, 1, 0, 0, 0);
        aitk_cpu_gemm(dla, work, x, r, in, n, true, false, scale, 1.0f, 1, 0, 0, 0);
    }
    if (dx) {
        aitk_cpu_gemm(dx, dy, w, n, in, out, false, false, 1.0f, accumulate_dx ? 1.0f : 0.0f,
                      1, 0, 0, 0);
        if (r > 0)
            aitk_cpu_gemm(dx, work, la, n, in, r, false, false, scale, 1.0f, 1, 0, 0, 0);
    }
    return AITK_OK;
}

aitk_status aitk_cpu_copy2d(float *dst, int ld_dst, const float *src, int ld_src, int rows,
                            int cols)
{
    AITK_CPU_REQUIRE(dst && src && rows > 0 && cols > 0 && ld_dst >= cols && ld_src >= cols);
    for (int i = 0; i < rows; i++)
        memmove(dst + (size_t)i * ld_dst, src + (size_t)i * ld_src, (size_t)cols * sizeof *dst);
    return AITK_OK;
}

aitk_status aitk_cpu_axpy(float *y, float alpha, const float *x, size_t n)
{
    AITK_CPU_REQUIRE(y && x);
    for (size_t i = 0; i < n; i++)
        y[i] += alpha * x[i];
    return AITK_OK;
}
