/* Host side of the reference attention kernel (attention.cu): its benchmark
 * and its correctness mode. See attention.cu for why it is plain and what
 * its figure means (a floor, not what flash attention or cuDNN SDPA reach). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/internal.h"

enum { MIN_SAMPLES = 3, MAX_SAMPLES = 1000 };

typedef struct attn_bufs {
    void *q, *k, *v, *o;
    cudaStream_t s;
} attn_bufs;

static void bufs_free(attn_bufs *b)
{
    cudaFree(b->q);
    cudaFree(b->k);
    cudaFree(b->v);
    cudaFree(b->o);
    if (b->s)
        cudaStreamDestroy(b->s);
    memset(b, 0, sizeof *b);
}

static aitk_status bufs_alloc(attn_bufs *b, int device, long batch, long tokens, long heads,
                              long head_dim, char *err, size_t len)
{
    memset(b, 0, sizeof *b);
    if (batch <= 0 || tokens <= 0 || heads <= 0 || head_dim <= 0 || head_dim > 256 ||
        batch > 65535 || heads > 65535) {
        aitk_cuda_errorf(err, len, "attention: invalid shape batch=%ld tokens=%ld heads=%ld "
                                   "head_dim=%ld", batch, tokens, heads, head_dim);
        return AITK_E_INVAL;
    }
    if (tokens > aitk_cuda_attention_max_tokens(device)) {
        aitk_cuda_errorf(err, len, "the reference attention kernel holds at most %d tokens "
                                   "(a score row in 48 KiB of shared memory); asked for %ld",
                         aitk_cuda_attention_max_tokens(device), tokens);
        return AITK_E_UNSUPPORTED;
    }
    size_t bytes = (size_t)(batch * tokens * heads * head_dim) * 2;
    aitk_status st = AITK_CUDA_TRY(cudaSetDevice(device), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&b->q, bytes), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&b->k, bytes), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&b->v, bytes), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&b->o, bytes), err, len);
    if (st)
        bufs_free(b);
    return st;
}

static aitk_status launch(attn_bufs *b, long batch, long tokens, long heads, long head_dim,
                          char *err, size_t len)
{
    return AITK_CUDA_TRY(aitk_cuda_attention_reference(b->o, b->q, b->k, b->v, (int)batch,
                                                       (int)tokens, (int)heads, (int)head_dim,
                                                       1.0f / sqrtf((float)head_dim), b->s),
                         err, len);
}

aitk_status aitk_cuda_attention_run(int device, long batch, long tokens, long heads,
                                    long head_dim, const uint16_t *q, const uint16_t *k,
                                    const uint16_t *v, uint16_t *o, char *err, size_t len)
{
    if (!q || !k || !v || !o) {
        aitk_cuda_errorf(err, len, "attention_run: NULL operand");
        return AITK_E_INVAL;
    }
    attn_bufs b;
    aitk_status st = bufs_alloc(&b, device, batch, tokens, heads, head_dim, err, len);
    if (st)
        return st;
    size_t bytes = (size_t)(batch * tokens * heads * head_dim) * 2;
    st = AITK_CUDA_TRY(cudaMemcpyAsync(b.q, q, bytes, cudaMemcpyHostToDevice, b.s), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMemcpyAsync(b.k, k, bytes, cudaMemcpyHostToDevice, b.s), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMemcpyAsync(b.v, v, bytes, cudaMemcpyHostToDevice, b.s), err, len);
    if (!st)
        st = launch(&b, batch, tokens, heads, head_dim, err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMemcpyAsync(o, b.o, bytes, cudaMemcpyDeviceToHost, b.s), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaStreamSynchronize(b.s), err, len);
    bufs_free(&b);
    return st;
}

aitk_status aitk_cuda_attention_bench(const aitk_cuda_attention_args *a,
                                      aitk_cuda_attention_result *out)
{
    if (!a || !out)
        return AITK_E_INVAL;
    memset(out, 0, sizeof *out);
    char *err = out->error;
    size_t len = sizeof out->error;
    aitk_cuda_errorf(out->kernel, sizeof out->kernel,
                     "reference kernel (one block per query row; not flash, not cuDNN SDPA)");
    attn_bufs b;
    aitk_status st = bufs_alloc(&b, a->device, a->batch, a->tokens, a->heads, a->head_dim, err,
                                len);
    if (st)
        return st;
    size_t n = (size_t)(a->batch * a->tokens * a->heads * a->head_dim);
    cudaEvent_t t0 = NULL, t1 = NULL;
    double *samples = calloc(MAX_SAMPLES, sizeof *samples);
    if (!samples)
        st = AITK_E_NOMEM;
    if (!st)
        st = aitk_cuda_status(aitk_cuda_fill_bf16(b.q, n, 1.0f, 11, b.s), "fill q", __FILE__,
                              __LINE__, err, len);
    if (!st)
        st = aitk_cuda_status(aitk_cuda_fill_bf16(b.k, n, 1.0f, 12, b.s), "fill k", __FILE__,
                              __LINE__, err, len);
    if (!st)
        st = aitk_cuda_status(aitk_cuda_fill_bf16(b.v, n, 1.0f, 13, b.s), "fill v", __FILE__,
                              __LINE__, err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaEventCreate(&t0), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaEventCreate(&t1), err, len);
    if (!st) /* warm-up */
        st = launch(&b, a->batch, a->tokens, a->heads, a->head_dim, err, len);
    double total_s = 0;
    long reps = 0;
    while (!st && reps < MAX_SAMPLES && (reps < MIN_SAMPLES || total_s < a->min_time_s)) {
        float ms = 0;
        if (!(st = AITK_CUDA_TRY(cudaEventRecord(t0, b.s), err, len)) &&
            !(st = launch(&b, a->batch, a->tokens, a->heads, a->head_dim, err, len)) &&
            !(st = AITK_CUDA_TRY(cudaEventRecord(t1, b.s), err, len)) &&
            !(st = AITK_CUDA_TRY(cudaEventSynchronize(t1), err, len)) &&
            !(st = AITK_CUDA_TRY(cudaEventElapsedTime(&ms, t0, t1), err, len))) {
            samples[reps++] = ms;
            total_s += ms / 1e3;
        }
    }
    if (!st) {
        out->repetitions = reps;
        out->median_ms = aitk_cuda_median(samples, (size_t)reps);
        /* QK^T and PV: two GEMM-shaped products of 2*T*T*D per head. */
        double flop = 4.0 * (double)a->batch * (double)a->heads * (double)a->tokens *
                      (double)a->tokens * (double)a->head_dim;
        out->tflops = out->median_ms > 0 ? flop / (out->median_ms / 1e3) / 1e12 : 0;
    }
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    free(samples);
    bufs_free(&b);
    return st;
}
