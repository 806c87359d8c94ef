/* cuBLASLt GEMMs at a Linear's shape: the benchmark and its correctness mode.
 *
 * Both go through one set-up (lt_setup), so the test that checks gemm_run
 * against a CPU reference checks the very descriptors, layouts and
 * algorithm choice that gemm_bench times.
 *
 * Layout: PyTorch's Linear computes y (m,n) = x (m,k) W^T with every tensor
 * row-major and W stored (n,k). cuBLASLt is column-major, and a row-major
 * (r,c) matrix is a column-major (c,r) one, so we ask for the transpose:
 *   y^T (n,m) = W (n,k) . x^T (k,m),
 * A = W seen as column-major (k,n), ld k, op T; B = x seen as column-major
 * (k,m), ld k, op N; C = D = y^T column-major (n,m), ld n. This "TN" form is
 * also the one cuBLASLt requires for fp8 inputs.
 *
 * Timing: CUDA events around a sample of back-to-back matmuls (enough of
 * them that a sample lasts ~1 ms, so event resolution and launch gaps do
 * not count), after warm-up; samples continue until their device time sums
 * to min_time_s (and at least 5); the median per matmul is reported.
 * Operands are not flushed from L2 between samples: full-size FLUX operands
 * (x 4608x3072 and W 9216x3072 in bf16: 28 + 57 MB) exceed the L2 of every
 * current GPU, and a training step re-reads the same weights anyway. */
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/internal.h"

enum { WORKSPACE_BYTES = 32 << 20, MIN_SAMPLES = 5, MAX_SAMPLES = 10000 };

typedef struct lt_gemm {
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t heur;
    void *ws;
    cudaStream_t s;
    void *x, *w, *y;
} lt_gemm;

static size_t elem_bytes(aitk_cuda_dtype t)
{
    return t == AITK_CUDA_FP8_E4M3 ? 1 : 2;
}

static void lt_free(lt_gemm *g)
{
    if (g->pref)
        cublasLtMatmulPreferenceDestroy(g->pref);
    if (g->la)
        cublasLtMatrixLayoutDestroy(g->la);
    if (g->lb)
        cublasLtMatrixLayoutDestroy(g->lb);
    if (g->lc)
        cublasLtMatrixLayoutDestroy(g->lc);
    if (g->op)
        cublasLtMatmulDescDestroy(g->op);
    if (g->h)
        cublasLtDestroy(g->h);
    cudaFree(g->ws);
    cudaFree(g->x);
    cudaFree(g->w);
    cudaFree(g->y);
    if (g->s)
        cudaStreamDestroy(g->s);
    memset(g, 0, sizeof *g);
}

/* Checks the arguments and the device, creates the handle, descriptors,
 * buffers and the heuristic's choice. */
static aitk_status lt_setup(lt_gemm *g, int device, aitk_cuda_dtype dtype, long m, long n,
                            long k, char *err, size_t len)
{
    memset(g, 0, sizeof *g);
    if (m <= 0 || n <= 0 || k <= 0 || (dtype != AITK_CUDA_BF16 && dtype != AITK_CUDA_FP8_E4M3)) {
        aitk_cuda_errorf(err, len, "gemm: invalid arguments m=%ld n=%ld k=%ld dtype=%d", m, n, k,
                         (int)dtype);
        return AITK_E_INVAL;
    }
    aitk_status st = AITK_CUDA_TRY(cudaSetDevice(device), err, len);
    int major = 0, minor = 0;
    if (!st)
        st = AITK_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                                  device), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                                                  device), err, len);
    if (st)
        return st;
    if (dtype == AITK_CUDA_FP8_E4M3 && major * 10 + minor < 89) {
        aitk_cuda_errorf(err, len, "fp8 e4m3 GEMMs need compute capability 8.9 or newer; "
                                   "device %d is %d.%d", device, major, minor);
        return AITK_E_UNSUPPORTED;
    }
    cudaDataType ab = dtype == AITK_CUDA_FP8_E4M3 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    uint64_t ws = WORKSPACE_BYTES;
    size_t eb = elem_bytes(dtype);
    int found = 0;
    if (!st)
        st = AITK_CUDA_TRY(cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking), err, len);
    if (!st)
        st = AITK_CUBLAS_TRY(cublasLtCreate(&g->h), err, len);
    if (!st)
        st = AITK_CUBLAS_TRY(cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                             err, len);
    if (!st)
        st = AITK_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA,
                                                            &ta, sizeof ta), err, len);
    if (!st)
        st = AITK_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB,
                                                            &tb, sizeof tb), err, len);
    if (!st)
        st = AITK_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&g->la, ab, (uint64_t)k, (uint64_t)n, k),
                             err, len);
    if (!st)
        st = AITK_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&g->lb, ab, (uint64_t)k, (uint64_t)m, k),
                             err, len);
    if (!st)
        st = AITK_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&g->lc, CUDA_R_16BF, (uint64_t)n,
                                                        (uint64_t)m, n), err, len);
    if (!st)
        st = AITK_CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&g->pref), err, len);
    if (!st)
        st = AITK_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(
                                 g->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                             err, len);
    if (!st) {
        cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(g->h, g->op, g->la, g->lb, g->lc,
                                                           g->lc, g->pref, 1, &g->heur, &found);
        if (hs == CUBLAS_STATUS_SUCCESS && found == 0)
            hs = CUBLAS_STATUS_NOT_SUPPORTED;
        st = aitk_cublas_status(hs, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__, err,
                                len);
        if (st)
            aitk_cuda_errorf(err + strlen(err), len - strlen(err),
                             " (no algorithm for m=%ld n=%ld k=%ld %s)", m, n, k,
                             dtype == AITK_CUDA_FP8_E4M3 ? "fp8 e4m3" : "bf16");
    }
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&g->ws, WORKSPACE_BYTES), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&g->x, (size_t)m * (size_t)k * eb), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&g->w, (size_t)n * (size_t)k * eb), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&g->y, (size_t)m * (size_t)n * 2), err, len);
    if (st)
        lt_free(g);
    return st;
}

static aitk_status lt_matmul(lt_gemm *g, char *err, size_t len)
{
    const float alpha = 1.0f, beta = 0.0f;
    return AITK_CUBLAS_TRY(cublasLtMatmul(g->h, g->op, &alpha, g->w, g->la, g->x, g->lb, &beta,
                                          g->y, g->lc, g->y, g->lc, &g->heur.algo, g->ws,
                                          WORKSPACE_BYTES, g->s),
                           err, len);
}

static void describe_algo(const lt_gemm *g, char *buf, size_t len)
{
    int32_t id = -1;
    uint32_t tile = 0, stages = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&g->heur.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id,
                                         NULL);
    cublasLtMatmulAlgoConfigGetAttribute(&g->heur.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                         sizeof tile, NULL);
    cublasLtMatmulAlgoConfigGetAttribute(&g->heur.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                         sizeof stages, NULL);
    aitk_cuda_errorf(buf, len, "cuBLASLt heuristic #1: algo %d, tile %u, stages %u, "
                               "workspace %zu B", (int)id, (unsigned)tile, (unsigned)stages,
                     g->heur.workspaceSize);
}

/* Device time of `count` back-to-back matmuls, in ms. */
static aitk_status time_matmuls(lt_gemm *g, cudaEvent_t t0, cudaEvent_t t1, long count,
                                float *ms, char *err, size_t len)
{
    aitk_status st = AITK_CUDA_TRY(cudaEventRecord(t0, g->s), err, len);
    for (long i = 0; i < count && !st; i++)
        st = lt_matmul(g, err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaEventRecord(t1, g->s), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaEventSynchronize(t1), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaEventElapsedTime(ms, t0, t1), err, len);
    return st;
}

aitk_status aitk_cuda_gemm_bench(const aitk_cuda_gemm_args *a, aitk_cuda_gemm_result *out)
{
    if (!a || !out)
        return AITK_E_INVAL;
    memset(out, 0, sizeof *out);
    char *err = out->error;
    size_t len = sizeof out->error;
    lt_gemm g;
    aitk_status st = lt_setup(&g, a->device, a->dtype, a->m, a->n, a->k, err, len);
    if (st)
        return st;
    describe_algo(&g, out->algo, sizeof out->algo);
    out->workspace_bytes = WORKSPACE_BYTES;
    /* Small non-zero values: zeros or denormals would let the tensor cores
     * take paths real activations never take. */
    cudaEvent_t t0 = NULL, t1 = NULL;
    double *samples = calloc(MAX_SAMPLES, sizeof *samples);
    if (!samples)
        st = AITK_E_NOMEM;
    cudaError_t fe = cudaSuccess;
    if (!st) {
        fe = a->dtype == AITK_CUDA_FP8_E4M3
                 ? aitk_cuda_fill_e4m3(g.x, (size_t)(a->m * a->k), 1.0f, 1, g.s)
                 : aitk_cuda_fill_bf16(g.x, (size_t)(a->m * a->k), 1.0f, 1, g.s);
        if (fe == cudaSuccess)
            fe = a->dtype == AITK_CUDA_FP8_E4M3
                     ? aitk_cuda_fill_e4m3(g.w, (size_t)(a->n * a->k), 0.5f, 2, g.s)
                     : aitk_cuda_fill_bf16(g.w, (size_t)(a->n * a->k), 0.02f, 2, g.s);
        st = aitk_cuda_status(fe, "fill kernel", __FILE__, __LINE__, err, len);
    }
    if (!st)
        st = AITK_CUDA_TRY(cudaEventCreate(&t0), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaEventCreate(&t1), err, len);
    /* Warm-up (clocks up, cuBLASLt's lazy kernel loading done), then one
     * timed matmul sizes the samples. */
    float ms = 0;
    if (!st)
        st = time_matmuls(&g, t0, t1, 3, &ms, err, len);
    if (!st)
        st = time_matmuls(&g, t0, t1, 1, &ms, err, len);
    long per = 1;
    if (!st && ms > 0 && ms < 1.0f)
        per = (long)(1.0f / ms) + 1;
    if (per > 1000)
        per = 1000;
    double total_s = 0;
    long n = 0;
    while (!st && n < MAX_SAMPLES && (n < MIN_SAMPLES || total_s < a->min_time_s)) {
        if (!(st = time_matmuls(&g, t0, t1, per, &ms, err, len))) {
            samples[n++] = (double)ms / (double)per;
            total_s += ms / 1e3;
        }
    }
    if (!st) {
        out->repetitions = n;
        out->matmuls_per_sample = per;
        out->min_ms = out->max_ms = samples[0];
        for (long i = 1; i < n; i++) {
            out->min_ms = samples[i] < out->min_ms ? samples[i] : out->min_ms;
            out->max_ms = samples[i] > out->max_ms ? samples[i] : out->max_ms;
        }
        out->median_ms = aitk_cuda_median(samples, (size_t)n);
        double flop = 2.0 * (double)a->m * (double)a->n * (double)a->k;
        out->tflops = out->median_ms > 0 ? flop / (out->median_ms / 1e3) / 1e12 : 0;
    }
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    free(samples);
    lt_free(&g);
    return st;
}

aitk_status aitk_cuda_gemm_run(int device, aitk_cuda_dtype dtype, long m, long n, long k,
                               const void *x, const void *w, uint16_t *y, char *err, size_t len)
{
    if (!x || !w || !y) {
        aitk_cuda_errorf(err, len, "gemm_run: NULL operand");
        return AITK_E_INVAL;
    }
    lt_gemm g;
    aitk_status st = lt_setup(&g, device, dtype, m, n, k, err, len);
    if (st)
        return st;
    size_t eb = elem_bytes(dtype);
    st = AITK_CUDA_TRY(cudaMemcpyAsync(g.x, x, (size_t)(m * k) * eb, cudaMemcpyHostToDevice, g.s),
                       err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMemcpyAsync(g.w, w, (size_t)(n * k) * eb, cudaMemcpyHostToDevice,
                                           g.s), err, len);
    if (!st)
        st = lt_matmul(&g, err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMemcpyAsync(y, g.y, (size_t)(m * n) * 2, cudaMemcpyDeviceToHost,
                                           g.s), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaStreamSynchronize(g.s), err, len);
    lt_free(&g);
    return st;
}
