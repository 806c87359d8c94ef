/* The CUDA backend's descriptor: entry point, probe, open/close, raw memory,
 * the report's error text and path counters, and the ops table.
 *
 * This module is the only code that links the CUDA runtime; the validator
 * opens it at run time and reaches it through aitk_backend_plugin_get
 * (kernels/backend.h). Probing goes through the runtime API on purpose: what
 * matters is whether *this* runtime, the one training would use, gets a
 * device ("cudaErrorInsufficientDriver" is the failure ai-toolkit's torch
 * would meet). Calls come from one thread at a time (backend.h), so the
 * state is one static struct without locks. */
#include <stdarg.h>
#include <stdio.h>
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

enum {
    GEMM_WORKSPACE_BYTES = 32 << 20,
    /* 2 Mi floats (8 MiB) of staging: big enough that a 24 GB tensor moves
     * in 1.5 k chunks at full PCIe rate, small enough to be a rounding error
     * in the memory report. */
    STAGING_ELEMS = 2 << 20,
    /* Paths are per shape for GEMMs (backend.h): a FLUX step's Linear
     * layers, LoRA steps and attention give a few hundred. */
    MAX_PATHS = 1024,
};

aitk_cuda_ctx aitk_cuda;

/* ---- errors ---- */

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

aitk_status aitk_cuda_status_into(cudaError_t e, const char *call, char *buf, size_t len)
{
    if (e == cudaSuccess)
        return AITK_OK;
    aitk_cuda_errorf(buf, len, "%s: %s: %s", call, cudaGetErrorName(e), cudaGetErrorString(e));
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

aitk_status aitk_cuda_check(cudaError_t e, const char *call)
{
    /* A failed call also sets the runtime's last error, which the next
     * launch check (cudaGetLastError) would report against an innocent
     * kernel: take it here, where it belongs. Sticky errors (a broken
     * context) stay and keep failing every later call, as they must. */
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return aitk_cuda_status_into(e, call, aitk_cuda.error, sizeof aitk_cuda.error);
}

aitk_status aitk_cublas_check(cublasStatus_t s, const char *call)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return AITK_OK;
    aitk_cuda_errorf(aitk_cuda.error, sizeof aitk_cuda.error, "%s: %s: %s", call,
                     cublasLtGetStatusName(s), cublasLtGetStatusString(s));
    return s == CUBLAS_STATUS_ALLOC_FAILED     ? AITK_E_NOMEM
           : s == CUBLAS_STATUS_NOT_SUPPORTED  ? AITK_E_UNSUPPORTED
           : s == CUBLAS_STATUS_ARCH_MISMATCH  ? AITK_E_UNSUPPORTED
           : s == CUBLAS_STATUS_INVALID_VALUE  ? AITK_E_INVAL
                                               : AITK_E_INTERNAL;
}

aitk_status aitk_cuda_inval(const char *op, const char *why)
{
    aitk_cuda_errorf(aitk_cuda.error, sizeof aitk_cuda.error, "%s: %s", op, why);
    return AITK_E_INVAL;
}

aitk_status aitk_cuda_need_open(const char *op)
{
    if (aitk_cuda.open)
        return AITK_OK;
    return aitk_cuda_inval(op, "the CUDA backend is not open (call open first)");
}

aitk_status aitk_cuda_launched(const char *kernel)
{
    return aitk_cuda_check(cudaGetLastError(), kernel);
}

unsigned aitk_cuda_grid(size_t n)
{
    size_t blocks = (n + 255) / 256;
    /* A grid-stride loop needs no more than a few waves of blocks. */
    size_t cap = (size_t)(aitk_cuda.sm_count > 0 ? aitk_cuda.sm_count : 80) * 32;
    if (blocks > cap)
        blocks = cap;
    return blocks ? (unsigned)blocks : 1u;
}

aitk_status aitk_cuda_reserve(void **buf, size_t *have, size_t bytes, const char *what)
{
    if (*have >= bytes && *buf)
        return AITK_OK;
    if (*buf) {
        cudaFreeAsync(*buf, aitk_cuda.stream);
        *buf = NULL;
        *have = 0;
    }
    aitk_status st = aitk_cuda_check(cudaMallocAsync(buf, bytes, aitk_cuda.stream), what);
    if (st) {
        *buf = NULL;
        return st;
    }
    *have = bytes;
    return AITK_OK;
}

aitk_status aitk_cuda_partials_begin(size_t n, unsigned *grid, const char *op)
{
    unsigned g = aitk_cuda_grid(n);
    *grid = g < AITK_CUDA_MAX_PARTIALS ? g : AITK_CUDA_MAX_PARTIALS;
    char what[96];
    snprintf(what, sizeof what, "cudaMallocAsync(%s partials)", op);
    return aitk_cuda_reserve((void **)&aitk_cuda.partials, &aitk_cuda.partials_bytes,
                             *grid * sizeof(float), what);
}

aitk_status aitk_cuda_partials_fetch(float *host, unsigned grid, const char *op)
{
    char what[96];
    snprintf(what, sizeof what, "cudaMemcpyAsync(%s)", op);
    aitk_status st = aitk_cuda_check(cudaMemcpyAsync(host, aitk_cuda.partials,
                                                     grid * sizeof(float),
                                                     cudaMemcpyDeviceToHost, aitk_cuda.stream),
                                     what);
    if (st)
        return st;
    snprintf(what, sizeof what, "cudaStreamSynchronize(%s)", op);
    return aitk_cuda_check(cudaStreamSynchronize(aitk_cuda.stream), what);
}

/* ---- paths ---- */

static aitk_backend_path paths_table[MAX_PATHS];
static size_t paths_used;

int aitk_cuda_path(const char *op, const char *kernel)
{
    for (size_t i = 0; i < paths_used; i++)
        if (!strcmp(paths_table[i].op, op) && !strcmp(paths_table[i].kernel, kernel)) {
            paths_table[i].calls++;
            return (int)i;
        }
    if (paths_used == MAX_PATHS)
        return -1; /* more distinct paths than any step has; drop rather than grow */
    aitk_backend_path *p = &paths_table[paths_used];
    aitk_cuda_errorf(p->op, sizeof p->op, "%s", op);
    aitk_cuda_errorf(p->kernel, sizeof p->kernel, "%s", kernel);
    p->calls = 1;
    p->ms = -1.0; /* not timed until a timed call adds to it */
    return (int)paths_used++;
}

void aitk_cuda_path_add_ms(int index, double ms)
{
    if (index < 0 || (size_t)index >= paths_used)
        return;
    aitk_backend_path *p = &paths_table[index];
    p->ms = (p->ms < 0.0 ? 0.0 : p->ms) + ms;
}

void aitk_cuda_paths_reset(void)
{
    paths_used = 0;
    memset(paths_table, 0, sizeof paths_table);
}

static aitk_status paths(aitk_backend_path *out, size_t cap, size_t *n)
{
    if (!n || (cap && !out))
        return AITK_E_INVAL;
    *n = 0;
    /* Timed calls still queued: wait for them so ms is complete. */
    aitk_status st = aitk_cuda.open ? aitk_cuda_timer_collect() : AITK_OK;
    if (st)
        return st;
    size_t k = paths_used < cap ? paths_used : cap;
    memcpy(out, paths_table, k * sizeof *out);
    *n = k;
    return AITK_OK;
}

/* ---- probe ---- */

static void describe_device(int i, aitk_backend_device *d)
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

static aitk_status probe(aitk_backend_probe *out)
{
    if (!out)
        return AITK_E_INVAL;
    memset(out, 0, sizeof *out);
    char *err = out->error;
    size_t len = sizeof out->error;
    /* Libraries first: they answer without a device, and the report wants
     * their versions most when there is none. */
    out->cublaslt_version = (int)cublasLtGetVersion();
    out->cudnn_version = aitk_cudnn_runtime_version();
    cudaError_t e = cudaRuntimeGetVersion(&out->runtime_version);
    aitk_status st = aitk_cuda_status_into(e, "cudaRuntimeGetVersion", err, len);
    if (st) {
        out->library_error = (int)e;
        return st;
    }
    /* With no driver this succeeds and reports 0. */
    e = cudaDriverGetVersion(&out->driver_version);
    if ((st = aitk_cuda_status_into(e, "cudaDriverGetVersion", err, len))) {
        out->library_error = (int)e;
        return st;
    }
    int n = 0;
    e = cudaGetDeviceCount(&n);
    if ((st = aitk_cuda_status_into(e, "cudaGetDeviceCount", err, len))) {
        out->library_error = (int)e;
        return st == AITK_E_INTERNAL ? AITK_E_NOTFOUND : st;
    }
    if (n <= 0) {
        aitk_cuda_errorf(err, len, "cudaGetDeviceCount: 0 devices");
        return AITK_E_NOTFOUND;
    }
    out->device_count = n;
    out->n_devices = n < AITK_BACKEND_MAX_DEVICES ? n : AITK_BACKEND_MAX_DEVICES;
    for (int i = 0; i < out->n_devices; i++)
        describe_device(i, &out->devices[i]);
    return AITK_OK;
}

/* ---- open / close ---- */

static void backend_close(void)
{
    if (!aitk_cuda.open && !aitk_cuda.stream)
        return;
    if (aitk_cuda.stream)
        cudaStreamSynchronize(aitk_cuda.stream);
    /* Times still pending go to their paths, which outlive close. */
    if (aitk_cuda.open)
        aitk_cuda_timer_collect();
    aitk_cuda_timer_close();
    aitk_cudnn_close();
    aitk_cuda_gemm_close();
    if (aitk_cuda.lt)
        cublasLtDestroy(aitk_cuda.lt);
    cudaFree(aitk_cuda.gemm_ws);
    cudaFree(aitk_cuda.staging);
    cudaFree(aitk_cuda.lora_bf16);
    cudaFree(aitk_cuda.partials);
    cudaFree(aitk_cuda.attn_scratch);
    cudaFree(aitk_cuda.attn_math);
    cudaFree(aitk_cuda.cudnn_ws);
    if (aitk_cuda.stream)
        cudaStreamDestroy(aitk_cuda.stream);
    /* The device context stays: it belongs to the process, and
     * cudaDeviceReset would pull it from under anyone else in it. The last
     * error stays too, so a failure during close can still be read. */
    char keep[AITK_BACKEND_ERROR_LEN];
    memcpy(keep, aitk_cuda.error, sizeof keep);
    memset(&aitk_cuda, 0, sizeof aitk_cuda);
    memcpy(aitk_cuda.error, keep, sizeof keep);
}

static aitk_status backend_open(int device)
{
    backend_close();
    aitk_cuda_paths_reset();
    aitk_cuda.error[0] = '\0';
    aitk_cuda.device = device;
    aitk_status st = aitk_cuda_check(cudaSetDevice(device), "cudaSetDevice");
    int v = 0;
    if (!st)
        st = aitk_cuda_check(cudaDeviceGetAttribute(&aitk_cuda.cc_major,
                                                    cudaDevAttrComputeCapabilityMajor, device),
                             "cudaDeviceGetAttribute");
    if (!st)
        st = aitk_cuda_check(cudaDeviceGetAttribute(&aitk_cuda.cc_minor,
                                                    cudaDevAttrComputeCapabilityMinor, device),
                             "cudaDeviceGetAttribute");
    /* Every kernel and GEMM here computes in bf16, which needs the bf16
     * tensor cores of compute capability 8.0 on, and the plugin carries no
     * code for older cards: a T4 or a V100 would fail at its first launch
     * with "no kernel image", so the reason is given here instead. */
    if (!st && aitk_cuda.cc_major < 8) {
        aitk_cuda_errorf(aitk_cuda.error, sizeof aitk_cuda.error,
                         "compute capability %d.%d: the CUDA plugin's bf16 kernels need 8.0 or "
                         "newer (%s); `aitk-validate predict --dtype fp16` estimates jobs on "
                         "this GPU",
                         aitk_cuda.cc_major, aitk_cuda.cc_minor, AITK_CUDA_BUILD_INFO);
        st = AITK_E_UNSUPPORTED;
    }
    if (!st)
        st = aitk_cuda_check(cudaDeviceGetAttribute(&aitk_cuda.sm_count,
                                                    cudaDevAttrMultiProcessorCount, device),
                             "cudaDeviceGetAttribute");
    if (!st)
        st = aitk_cuda_check(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                                    device),
                             "cudaDeviceGetAttribute");
    aitk_cuda.smem_optin = (size_t)v;
    if (!st)
        st = aitk_cuda_check(cudaStreamCreateWithFlags(&aitk_cuda.stream, cudaStreamNonBlocking),
                             "cudaStreamCreateWithFlags");
    if (!st)
        st = aitk_cublas_check(cublasLtCreate(&aitk_cuda.lt), "cublasLtCreate");
    if (!st)
        st = aitk_cuda_check(cudaMalloc(&aitk_cuda.gemm_ws, GEMM_WORKSPACE_BYTES),
                             "cudaMalloc(gemm workspace)");
    if (!st)
        aitk_cuda.gemm_ws_bytes = GEMM_WORKSPACE_BYTES;
    if (!st)
        st = aitk_cuda_check(cudaMalloc((void **)&aitk_cuda.staging,
                                        STAGING_ELEMS * sizeof(float)),
                             "cudaMalloc(staging)");
    if (!st)
        aitk_cuda.staging_elems = STAGING_ELEMS;
    if (!st)
        st = aitk_cuda_timer_open();
    if (!st)
        aitk_cuda.open = true;
    /* Without cuDNN the backend still opens: attention runs the plain kernel
     * and the path says why. */
    if (!st)
        aitk_cudnn_open();
    if (st)
        backend_close();
    return st;
}

/* ---- memory ---- */

aitk_status aitk_cuda_alloc(void **out, size_t bytes)
{
    if (!out)
        return aitk_cuda_inval("alloc", "NULL output pointer");
    *out = NULL;
    aitk_status st = aitk_cuda_need_open("alloc");
    if (st)
        return st;
    if (!bytes)
        return AITK_OK;
    /* cudaMalloc rather than the stream-ordered pool: the step's buffers live
     * for the whole run and cudaMemGetInfo should see them as used, as it
     * sees PyTorch's caching allocator's. */
    void *p = NULL;
    st = aitk_cuda_check(cudaMalloc(&p, bytes), "cudaMalloc");
    if (st) {
        cudaGetLastError(); /* an allocation failure is not sticky; keep the stream usable */
        return st;
    }
    st = aitk_cuda_check(cudaMemsetAsync(p, 0, bytes, aitk_cuda.stream), "cudaMemsetAsync");
    if (st) {
        cudaFree(p);
        return st;
    }
    *out = p;
    return AITK_OK;
}

void aitk_cuda_free(void *ptr)
{
    if (!ptr)
        return;
    /* cudaFree waits for the device; the stream may still use ptr until then. */
    aitk_cuda_check(cudaFree(ptr), "cudaFree");
}

aitk_status aitk_cuda_upload(void *dst, const void *host_src, size_t bytes)
{
    aitk_status st = aitk_cuda_need_open("upload");
    if (st)
        return st;
    if (!bytes)
        return AITK_OK;
    if (!dst || !host_src)
        return aitk_cuda_inval("upload", "NULL pointer");
    st = aitk_cuda_check(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice,
                                         aitk_cuda.stream), "cudaMemcpyAsync(upload)");
    /* Waiting keeps the promise that the host memory may be reused on return. */
    return st ? st : aitk_cuda_check(cudaStreamSynchronize(aitk_cuda.stream),
                                     "cudaStreamSynchronize(upload)");
}

aitk_status aitk_cuda_download(void *host_dst, const void *src, size_t bytes)
{
    aitk_status st = aitk_cuda_need_open("download");
    if (st)
        return st;
    if (!bytes)
        return AITK_OK;
    if (!host_dst || !src)
        return aitk_cuda_inval("download", "NULL pointer");
    st = aitk_cuda_check(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost,
                                         aitk_cuda.stream), "cudaMemcpyAsync(download)");
    return st ? st : aitk_cuda_check(cudaStreamSynchronize(aitk_cuda.stream),
                                     "cudaStreamSynchronize(download)");
}

/* Activations cross as fp32 and are converted on the device, one staging
 * buffer's worth at a time, so no host copy the size of the tensor is ever
 * made. The stream orders each chunk's copy after the previous chunk's
 * conversion, so one staging buffer is enough. */
aitk_status aitk_cuda_upload_act(aitk_act *dst, const float *host_src, size_t n)
{
    aitk_status st = aitk_cuda_need_open("upload_act");
    if (st || !n)
        return st;
    if (!dst || !host_src)
        return aitk_cuda_inval("upload_act", "NULL pointer");
    uint16_t *d = (uint16_t *)dst;
    for (size_t at = 0; at < n && !st; at += aitk_cuda.staging_elems) {
        size_t len = n - at < aitk_cuda.staging_elems ? n - at : aitk_cuda.staging_elems;
        st = aitk_cuda_check(cudaMemcpyAsync(aitk_cuda.staging, host_src + at,
                                             len * sizeof(float), cudaMemcpyHostToDevice,
                                             aitk_cuda.stream),
                             "cudaMemcpyAsync(upload_act)");
        if (!st)
            st = aitk_cuda_f32_to_bf16(d + at, aitk_cuda.staging, len, "upload_act");
    }
    return st ? st : aitk_cuda_check(cudaStreamSynchronize(aitk_cuda.stream),
                                     "cudaStreamSynchronize(upload_act)");
}

aitk_status aitk_cuda_download_act(float *host_dst, const aitk_act *src, size_t n)
{
    aitk_status st = aitk_cuda_need_open("download_act");
    if (st || !n)
        return st;
    if (!host_dst || !src)
        return aitk_cuda_inval("download_act", "NULL pointer");
    const uint16_t *s = (const uint16_t *)src;
    for (size_t at = 0; at < n && !st; at += aitk_cuda.staging_elems) {
        size_t len = n - at < aitk_cuda.staging_elems ? n - at : aitk_cuda.staging_elems;
        st = aitk_cuda_bf16_to_f32(aitk_cuda.staging, s + at, len, "download_act");
        if (!st)
            st = aitk_cuda_check(cudaMemcpyAsync(host_dst + at, aitk_cuda.staging,
                                                 len * sizeof(float), cudaMemcpyDeviceToHost,
                                                 aitk_cuda.stream),
                                 "cudaMemcpyAsync(download_act)");
    }
    return st ? st : aitk_cuda_check(cudaStreamSynchronize(aitk_cuda.stream),
                                     "cudaStreamSynchronize(download_act)");
}

aitk_status aitk_cuda_zero(void *dst, size_t bytes)
{
    aitk_status st = aitk_cuda_need_open("zero");
    if (st || !bytes)
        return st;
    if (!dst)
        return aitk_cuda_inval("zero", "NULL pointer");
    aitk_cuda_path("zero", "cudaMemsetAsync");
    return aitk_cuda_check(cudaMemsetAsync(dst, 0, bytes, aitk_cuda.stream), "cudaMemsetAsync");
}

/* ---- the rest of the descriptor ---- */

static aitk_status synchronize(void)
{
    aitk_status st = aitk_cuda_need_open("synchronize");
    return st ? st : aitk_cuda_check(cudaStreamSynchronize(aitk_cuda.stream),
                                     "cudaStreamSynchronize");
}

static aitk_status mem_info(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes)
        return aitk_cuda_inval("mem_info", "NULL pointer");
    aitk_status st = aitk_cuda_need_open("mem_info");
    return st ? st : aitk_cuda_check(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
}

static size_t workspace_bytes(void)
{
    return aitk_cuda.gemm_ws_bytes + aitk_cuda.staging_elems * sizeof(float) +
           aitk_cuda.lora_bf16_bytes +
           aitk_cuda.partials_bytes +
           aitk_cuda.attn_scratch_bytes + aitk_cuda.attn_math_bytes + aitk_cuda.cudnn_ws_bytes +
           aitk_cudnn_plan_cache_bytes();
}

static void last_error(char *buf, size_t len)
{
    aitk_cuda_errorf(buf, len, "%s", aitk_cuda.error);
}

static const aitk_ops cuda_ops = {
    .name = "cuda",
    .act_dtype = AITK_DTYPE_BF16,
    .alloc = aitk_cuda_alloc,
    .free = aitk_cuda_free,
    .upload = aitk_cuda_upload,
    .download = aitk_cuda_download,
    .upload_act = aitk_cuda_upload_act,
    .download_act = aitk_cuda_download_act,
    .zero = aitk_cuda_zero,
    .draw_act = aitk_cuda_draw_act,
    .draw_f32 = aitk_cuda_draw_f32,
    .absmax = aitk_cuda_absmax,
    .gemm = aitk_cuda_gemm,
    .lora_linear_forward = aitk_cuda_lora_linear_forward,
    .lora_linear_backward = aitk_cuda_lora_linear_backward,
    .layernorm_forward = aitk_cuda_layernorm_forward,
    .layernorm_backward = aitk_cuda_layernorm_backward,
    .rmsnorm_forward = aitk_cuda_rmsnorm_forward,
    .rmsnorm_backward = aitk_cuda_rmsnorm_backward,
    .modulate_forward = aitk_cuda_modulate_forward,
    .modulate_backward = aitk_cuda_modulate_backward,
    .layernorm_modulate_forward = aitk_cuda_layernorm_modulate_forward,
    .layernorm_modulate_backward = aitk_cuda_layernorm_modulate_backward,
    .gated_residual_forward = aitk_cuda_gated_residual_forward,
    .gated_residual_backward = aitk_cuda_gated_residual_backward,
    .rope_table = aitk_cuda_rope_table,
    .rope_forward = aitk_cuda_rope_forward,
    .rope_backward = aitk_cuda_rope_backward,
    .gelu_forward = aitk_cuda_gelu_forward,
    .gelu_backward = aitk_cuda_gelu_backward,
    .silu_forward = aitk_cuda_silu_forward,
    .silu_backward = aitk_cuda_silu_backward,
    .swiglu_forward = aitk_cuda_swiglu_forward,
    .swiglu_backward = aitk_cuda_swiglu_backward,
    .attention_forward = aitk_cuda_attention_forward,
    .attention_backward = aitk_cuda_attention_backward,
    .mse_forward = aitk_cuda_mse_forward,
    .mse_backward = aitk_cuda_mse_backward,
    .adamw_update = aitk_cuda_adamw_update,
    .adamw8_update = aitk_cuda_adamw8_update,
    .fp8_dequantize = aitk_cuda_fp8_dequantize,
    .fp8_quantize = aitk_cuda_fp8_quantize,
    .nf4_dequantize = aitk_cuda_nf4_dequantize,
    .nf4_quantize = aitk_cuda_nf4_quantize,
    .bf16_round = aitk_cuda_bf16_round,
    .copy2d = aitk_cuda_copy2d,
    .axpy = aitk_cuda_axpy,
};

static const aitk_backend cuda_backend = {
    .abi_version = AITK_BACKEND_ABI,
    .name = "cuda",
    .build = AITK_CUDA_BUILD_INFO,
    .probe = probe,
    .open = backend_open,
    .ops = &cuda_ops,
    .synchronize = synchronize,
    .mem_info = mem_info,
    .workspace_bytes = workspace_bytes,
    .last_error = last_error,
    .paths = paths,
    .close = backend_close,
#ifdef AITK_CUDA_HAVE_NCCL
    .collectives = &aitk_cuda_nccl,
#endif
};

AITK_CUDA_EXPORT const aitk_backend *aitk_backend_plugin_get(int abi_version);

const aitk_backend *aitk_backend_plugin_get(int abi_version)
{
    return abi_version == AITK_BACKEND_ABI ? &cuda_backend : NULL;
}
