/* Shared inside the CUDA plugin (kernels/cuda) only: error wording, timing
 * and the device-side fill kernels. CUDA types are allowed here; this
 * header never reaches the validator. */
#ifndef AITK_KERNELS_CUDA_INTERNAL_H
#define AITK_KERNELS_CUDA_INTERNAL_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cuda_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Formats into a fixed buffer; a cut text ends with "..." (never silently). */
void aitk_cuda_errorf(char *buf, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* cudaSuccess: 0. Otherwise writes "what at file:line: cudaErrorName: text"
 * (or "what: ..." when file is NULL) and returns the status it maps to:
 * AITK_E_NOMEM for an allocation failure, AITK_E_NOTFOUND when there is no
 * device or driver, AITK_E_UNSUPPORTED when the module has no code for the
 * device, AITK_E_INTERNAL for anything else. */
aitk_status aitk_cuda_status(cudaError_t e, const char *what, const char *file, int line,
                             char *buf, size_t len);
aitk_status aitk_cublas_status(cublasStatus_t s, const char *what, const char *file, int line,
                               char *buf, size_t len);

/* `call` is spelled into the message, with file:line: the llm.c cudaCheck habit,
 * except that a failure is returned (a finding), never exit()ed. */
#define AITK_CUDA_TRY(call, buf, len) aitk_cuda_status((call), #call, __FILE__, __LINE__, (buf), (len))
#define AITK_CUBLAS_TRY(call, buf, len) \
    aitk_cublas_status((call), #call, __FILE__, __LINE__, (buf), (len))

/* Median of n samples (sorts them). */
double aitk_cuda_median(double *x, size_t n);

/* Fills n elements of device memory with deterministic values in
 * [-scale, scale] (a hash of the index and seed, so no host copy is
 * needed for full-size operands): bf16 bit patterns or e4m3 bytes. */
cudaError_t aitk_cuda_fill_bf16(void *dst, size_t n, float scale, uint32_t seed, cudaStream_t s);
cudaError_t aitk_cuda_fill_e4m3(void *dst, size_t n, float scale, uint32_t seed, cudaStream_t s);

/* The reference attention kernel (attention.cu): o = softmax(q k^T scale) v,
 * q, k, v, o (batch, tokens, heads, head_dim) bf16. */
cudaError_t aitk_cuda_attention_reference(void *o, const void *q, const void *k, const void *v,
                                          int batch, int tokens, int heads, int head_dim,
                                          float scale, cudaStream_t s);
/* Longest sequence the reference kernel holds in shared memory. */
int aitk_cuda_attention_max_tokens(int device);

aitk_status aitk_cuda_gemm_bench(const aitk_cuda_gemm_args *args, aitk_cuda_gemm_result *out);
aitk_status aitk_cuda_gemm_run(int device, aitk_cuda_dtype dtype, long m, long n, long k,
                               const void *x, const void *w, uint16_t *y, char *error,
                               size_t error_len);
aitk_status aitk_cuda_memcpy_bench(int device, uint64_t bytes, double min_time_s,
                                   aitk_cuda_memcpy_result *out);
aitk_status aitk_cuda_attention_bench(const aitk_cuda_attention_args *args,
                                      aitk_cuda_attention_result *out);
aitk_status aitk_cuda_attention_run(int device, long batch, long tokens, long heads,
                                    long head_dim, const uint16_t *q, const uint16_t *k,
                                    const uint16_t *v, uint16_t *o, char *error, size_t error_len);

#ifdef __cplusplus
}
#endif

#endif
