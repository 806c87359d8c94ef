/* The CUDA plugin's entry point, its probe and the device-copy benchmark.
 *
 * This module is the only code that links the CUDA runtime; the validator
 * reaches it through the table returned by aitk_cuda_plugin_get (see
 * kernels/cuda_plugin.h). Probing goes through the runtime API on purpose:
 * the validator's own probes already ask the driver (libcuda, NVML), and
 * what matters here is whether *this* runtime, the one training would use,
 * gets a device -- "cudaErrorInsufficientDriver" from the runtime is the
 * failure ai-toolkit's torch would meet. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/internal.h"

#if defined(_WIN32)
#define AITK_CUDA_EXPORT __declspec(dllexport)
#else
#define AITK_CUDA_EXPORT __attribute__((visibility("default")))
#endif

#ifndef AITK_CUDA_BUILD_INFO
#define AITK_CUDA_BUILD_INFO "CUDA (unknown targets)"
#endif

void aitk_cuda_errorf(char *buf, size_t len, const char *fmt, ...)
{
    if (!buf || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
}

aitk_status aitk_cuda_status(cudaError_t e, const char *what, const char *file, int line,
                             char *buf, size_t len)
{
    if (e == cudaSuccess)
        return AITK_OK;
    const char *base = file ? strrchr(file, '/') : NULL;
    if (file)
        aitk_cuda_errorf(buf, len, "%s at %s:%d: %s: %s", what, base ? base + 1 : file, line,
                         cudaGetErrorName(e), cudaGetErrorString(e));
    else
        aitk_cuda_errorf(buf, len, "%s: %s: %s", what, cudaGetErrorName(e),
                         cudaGetErrorString(e));
    switch (e) {
    case cudaErrorMemoryAllocation:
        return AITK_E_NOMEM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
        return AITK_E_NOTFOUND;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
        return AITK_E_UNSUPPORTED;
    default:
        return AITK_E_INTERNAL;
    }
}

aitk_status aitk_cublas_status(cublasStatus_t s, const char *what, const char *file, int line,
                               char *buf, size_t len)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return AITK_OK;
    const char *base = strrchr(file, '/');
    aitk_cuda_errorf(buf, len, "%s at %s:%d: %s: %s", what, base ? base + 1 : file, line,
                     cublasLtGetStatusName(s), cublasLtGetStatusString(s));
    return s == CUBLAS_STATUS_ALLOC_FAILED     ? AITK_E_NOMEM
           : s == CUBLAS_STATUS_NOT_SUPPORTED  ? AITK_E_UNSUPPORTED
           : s == CUBLAS_STATUS_ARCH_MISMATCH  ? AITK_E_UNSUPPORTED
           : s == CUBLAS_STATUS_INVALID_VALUE  ? AITK_E_INVAL
                                               : AITK_E_INTERNAL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double aitk_cuda_median(double *x, size_t n)
{
    if (!n)
        return 0;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* ---- probe ---- */

static void describe_device(int i, aitk_cuda_device_info *d)
{
    struct cudaDeviceProp p;
    memset(d, 0, sizeof *d);
    d->index = i;
    if (cudaGetDeviceProperties(&p, i) == cudaSuccess) {
        memcpy(d->name, p.name, sizeof d->name - 1);
        d->cc_major = p.major;
        d->cc_minor = p.minor;
        d->total_memory_bytes = p.totalGlobalMem;
        d->sm_count = p.multiProcessorCount;
    }
    /* CUDA 13 dropped clockRate and memoryClockRate from cudaDeviceProp;
     * the attributes remain. An attribute that fails leaves 0 ("unknown"). */
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, i) == cudaSuccess)
        d->clock_khz = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, i) == cudaSuccess)
        d->memory_clock_khz = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, i) == cudaSuccess)
        d->memory_bus_bits = v;
    if (cudaDeviceGetPCIBusId(d->pci_bus_id, (int)sizeof d->pci_bus_id, i) != cudaSuccess)
        d->pci_bus_id[0] = '\0';
    cudaGetLastError(); /* none of the above is sticky; clear it for the next call */
}

static aitk_status probe(aitk_cuda_probe_result *out)
{
    if (!out)
        return AITK_E_INVAL;
    memset(out, 0, sizeof *out);
    char *err = out->error;
    size_t len = sizeof out->error;
    cudaError_t e = cudaRuntimeGetVersion(&out->runtime_version);
    aitk_status st = aitk_cuda_status(e, "cudaRuntimeGetVersion", NULL, 0, err, len);
    if (st) {
        out->cuda_error = (int)e;
        return st;
    }
    /* With no driver this succeeds and reports 0. */
    e = cudaDriverGetVersion(&out->driver_version);
    if ((st = aitk_cuda_status(e, "cudaDriverGetVersion", NULL, 0, err, len))) {
        out->cuda_error = (int)e;
        return st;
    }
    int n = 0;
    e = cudaGetDeviceCount(&n);
    if ((st = aitk_cuda_status(e, "cudaGetDeviceCount", NULL, 0, err, len))) {
        out->cuda_error = (int)e;
        return st == AITK_E_INTERNAL ? AITK_E_NOTFOUND : st;
    }
    if (n <= 0) {
        aitk_cuda_errorf(err, len, "cudaGetDeviceCount: 0 devices");
        return AITK_E_NOTFOUND;
    }
    out->device_count = n;
    out->n_devices = n < AITK_CUDA_PLUGIN_MAX_DEVICES ? n : AITK_CUDA_PLUGIN_MAX_DEVICES;
    for (int i = 0; i < out->n_devices; i++)
        describe_device(i, &out->devices[i]);
    return AITK_OK;
}

/* ---- device-to-device copy ---- */

aitk_status aitk_cuda_memcpy_bench(int device, uint64_t bytes, double min_time_s,
                                   aitk_cuda_memcpy_result *out)
{
    if (!out)
        return AITK_E_INVAL;
    memset(out, 0, sizeof *out);
    char *err = out->error;
    size_t len = sizeof out->error;
    if (!bytes) {
        aitk_cuda_errorf(err, len, "memcpy_bench: 0 bytes");
        return AITK_E_INVAL;
    }
    enum { MAX_REPS = 10000, MIN_REPS = 5 };
    void *src = NULL, *dst = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    cudaStream_t s = NULL;
    double *ms = calloc(MAX_REPS, sizeof *ms);
    aitk_status st = ms ? AITK_OK : AITK_E_NOMEM;
    if (!st)
        st = AITK_CUDA_TRY(cudaSetDevice(device), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&src, bytes), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMalloc(&dst, bytes), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaMemsetAsync(src, 1, bytes, s), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaEventCreate(&t0), err, len);
    if (!st)
        st = AITK_CUDA_TRY(cudaEventCreate(&t1), err, len);
    /* Warm-up: the first copies fault pages in and raise the memory clock. */
    for (int i = 0; i < 3 && !st; i++)
        st = AITK_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), err,
                           len);
    if (!st)
        st = AITK_CUDA_TRY(cudaStreamSynchronize(s), err, len);
    double total_s = 0;
    long n = 0;
    while (!st && n < MAX_REPS && (n < MIN_REPS || total_s < min_time_s)) {
        float t = 0;
        if (!(st = AITK_CUDA_TRY(cudaEventRecord(t0, s), err, len)) &&
            !(st = AITK_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s),
                                 err, len)) &&
            !(st = AITK_CUDA_TRY(cudaEventRecord(t1, s), err, len)) &&
            !(st = AITK_CUDA_TRY(cudaEventSynchronize(t1), err, len)) &&
            !(st = AITK_CUDA_TRY(cudaEventElapsedTime(&t, t0, t1), err, len))) {
            ms[n++] = t;
            total_s += t / 1e3;
        }
    }
    if (!st) {
        out->repetitions = n;
        out->median_ms = aitk_cuda_median(ms, (size_t)n);
        /* Bytes moved = bytes read + bytes written (2 x size), as CUDA's
         * bandwidthTest counts device-to-device copies; a datasheet's DRAM
         * bandwidth is the comparable figure. */
        out->gbs = out->median_ms > 0 ? 2.0 * (double)bytes / (out->median_ms / 1e3) / 1e9 : 0;
    }
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    cudaFree(src);
    cudaFree(dst);
    if (s)
        cudaStreamDestroy(s);
    free(ms);
    return st;
}

static void plugin_close(void)
{
    /* Nothing is cached between calls in phase 1: each benchmark creates and
     * frees its own handles and buffers. The device context stays: it belongs
     * to the process, and cudaDeviceReset would pull it from under anyone
     * else in it. */
}

static const aitk_cuda_plugin table = {
    .abi_version = AITK_CUDA_PLUGIN_ABI,
    .build = AITK_CUDA_BUILD_INFO,
    .probe = probe,
    .gemm_bench = aitk_cuda_gemm_bench,
    .gemm_run = aitk_cuda_gemm_run,
    .memcpy_bench = aitk_cuda_memcpy_bench,
    .attention_bench = aitk_cuda_attention_bench,
    .attention_run = aitk_cuda_attention_run,
    .close = plugin_close,
};

AITK_CUDA_EXPORT const aitk_cuda_plugin *aitk_cuda_plugin_get(int abi_version);

const aitk_cuda_plugin *aitk_cuda_plugin_get(int abi_version)
{
    return abi_version == AITK_CUDA_PLUGIN_ABI ? &table : NULL;
}
