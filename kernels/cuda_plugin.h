/* The CUDA plugin's C ABI: what the validator sees of kernels/cuda.
 *
 * The validator links no CUDA library, so that it starts and reports on the
 * machines it diagnoses: no driver, a broken CUDA install, the wrong cuDNN.
 * kernels/cuda builds `aitk_cuda`, a module linked against cudart
 * and cuBLASLt, which exports one symbol, AITK_CUDA_PLUGIN_ENTRY; the loader
 * (bench/cuda_loader.h) opens it with dlopen and asks it for a table of
 * plain C function pointers. No CUDA type appears here, so this header
 * compiles on machines without a toolkit.
 *
 * ABI rules: the entry point takes the ABI version the caller was built
 * with and returns NULL when it cannot serve it; the table repeats the
 * version it implements. Any change to a struct or a signature below bumps
 * AITK_CUDA_PLUGIN_ABI (the structs are passed by pointer, their sizes are
 * part of the ABI). Calls are made from one thread at a time.
 *
 * Errors: every call returns an aitk_status (AITK_OK == 0) and, when it
 * fails, fills the `error` text of its result with the library's own words,
 * "cudaGetDeviceCount: cudaErrorNoDevice: no CUDA-capable device is
 * detected", because that text is what a person pastes into a search box.
 * Error texts are fixed-size arrays so that no allocation crosses the ABI;
 * a longer text is cut and ends with "...". */
#ifndef AITK_KERNELS_CUDA_PLUGIN_H
#define AITK_KERNELS_CUDA_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AITK_CUDA_PLUGIN_ABI 1
#define AITK_CUDA_PLUGIN_ENTRY "aitk_cuda_plugin_get"
#define AITK_CUDA_PLUGIN_MAX_DEVICES 16
#define AITK_CUDA_PLUGIN_ERROR_LEN 512

typedef struct aitk_cuda_device_info {
    int index;
    char name[256];                 /* cudaDeviceProp.name: "NVIDIA H200" */
    int cc_major, cc_minor;         /* compute capability */
    uint64_t total_memory_bytes;
    int sm_count;
    int clock_khz;                  /* peak SM clock (cudaDevAttrClockRate); 0: unknown */
    int memory_clock_khz;           /* peak memory clock; 0: unknown */
    int memory_bus_bits;            /* 0: unknown */
    char pci_bus_id[32];            /* "0000:3B:00.0" */
} aitk_cuda_device_info;

typedef struct aitk_cuda_probe_result {
    int runtime_version;            /* cudaRuntimeGetVersion: 13000 for 13.0 */
    int driver_version;             /* cudaDriverGetVersion: 0 when no driver is loaded */
    int device_count;               /* 0 when cudaGetDeviceCount failed */
    int n_devices;                  /* described below: min(device_count, MAX_DEVICES) */
    aitk_cuda_device_info devices[AITK_CUDA_PLUGIN_MAX_DEVICES];
    int cuda_error;                 /* cudaError_t of the failing call; 0: none */
    char error[AITK_CUDA_PLUGIN_ERROR_LEN];  /* "call: errorName: error string" */
} aitk_cuda_probe_result;

typedef enum aitk_cuda_dtype {
    AITK_CUDA_BF16 = 0,     /* bf16 A and B, bf16 C, fp32 accumulate */
    AITK_CUDA_FP8_E4M3 = 1, /* e4m3 A and B (unit scales), bf16 C, fp32 accumulate; cc >= 8.9 */
} aitk_cuda_dtype;

/* One Linear as PyTorch computes it: y (m,n) = x (m,k) W^T with W stored
 * (n,k), all row-major. */
typedef struct aitk_cuda_gemm_args {
    int device;
    long m, n, k;
    aitk_cuda_dtype dtype;
    double min_time_s;      /* timed repetitions continue at least this long */
} aitk_cuda_gemm_args;

typedef struct aitk_cuda_gemm_result {
    double median_ms;       /* one matmul, device time (CUDA events), median of the repetitions */
    double min_ms, max_ms;
    double tflops;          /* 2*m*n*k / median */
    long repetitions;       /* timed samples behind the median */
    long matmuls_per_sample;/* a sample times this many back-to-back matmuls */
    uint64_t workspace_bytes;
    char algo[128];         /* what the heuristic chose, for the report */
    char error[AITK_CUDA_PLUGIN_ERROR_LEN];
} aitk_cuda_gemm_result;

typedef struct aitk_cuda_memcpy_result {
    double median_ms;       /* one cudaMemcpyAsync device-to-device of `bytes` */
    double gbs;             /* 2*bytes / median / 1e9: bytes read plus bytes written */
    long repetitions;
    char error[AITK_CUDA_PLUGIN_ERROR_LEN];
} aitk_cuda_memcpy_result;

typedef struct aitk_cuda_attention_args {
    int device;
    long batch, tokens, heads, head_dim;   /* q, k, v, o: (batch, tokens, heads, head_dim), bf16 */
    double min_time_s;
} aitk_cuda_attention_args;

typedef struct aitk_cuda_attention_result {
    double median_ms;
    double tflops;          /* 4*batch*heads*tokens^2*head_dim / median (QK^T and PV) */
    long repetitions;
    char kernel[128];       /* which implementation ran */
    char error[AITK_CUDA_PLUGIN_ERROR_LEN];
} aitk_cuda_attention_result;

typedef struct aitk_cuda_plugin {
    int abi_version;        /* AITK_CUDA_PLUGIN_ABI of the plugin's build */
    const char *build;      /* "CUDA 13.0, sm_80 sm_86 ...": the toolkit and targets it was built for */

    /* Runtime and driver versions and the devices, or why there are none.
     * AITK_OK only when at least one device answers; AITK_E_NOTFOUND when
     * the runtime works but lists no device (the driver is missing or too
     * old, or no GPU is visible), with error saying which. */
    aitk_status (*probe)(aitk_cuda_probe_result *out);

    /* Times the Linear's matmul through cuBLASLt (the heuristic's best
     * algorithm, 32 MiB workspace) after warm-up. AITK_E_UNSUPPORTED for fp8
     * below cc 8.9 or when cuBLASLt offers no algorithm; AITK_E_NOMEM when
     * the device cannot hold the operands. */
    aitk_status (*gemm_bench)(const aitk_cuda_gemm_args *args, aitk_cuda_gemm_result *out);

    /* Correctness mode of the same matmul set-up: y (m,n) = x (m,k) W^T
     * on host operands. x and w hold bf16 bit patterns (dtype bf16) or e4m3
     * bytes (fp8); y receives bf16 bit patterns. error gets the reason on
     * failure; `error_len` is its capacity. */
    aitk_status (*gemm_run)(int device, aitk_cuda_dtype dtype, long m, long n, long k,
                            const void *x, const void *w, uint16_t *y, char *error,
                            size_t error_len);

    /* Device-to-device copy bandwidth over `bytes` (cudaMemcpyAsync). */
    aitk_status (*memcpy_bench)(int device, uint64_t bytes, double min_time_s,
                                aitk_cuda_memcpy_result *out);

    /* Non-causal attention o = softmax(q k^T * scale) v with a plain
     * reference kernel (one thread block per query row, fp32 softmax): not
     * flash attention and not cuDNN SDPA, so its rate is a floor, labelled
     * as such in `kernel`. */
    aitk_status (*attention_bench)(const aitk_cuda_attention_args *args,
                                   aitk_cuda_attention_result *out);
    /* Correctness mode of the same kernel on host operands (bf16 bit
     * patterns, layout as above; scale = 1/sqrt(head_dim)). */
    aitk_status (*attention_run)(int device, long batch, long tokens, long heads, long head_dim,
                                 const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                 uint16_t *o, char *error, size_t error_len);

    /* Frees what the plugin holds (cuBLASLt handles, buffers). Safe to call
     * twice; the module itself stays mapped (see aitk_dl_keep). */
    void (*close)(void);
} aitk_cuda_plugin;

/* The one exported symbol: NULL when the plugin cannot serve `abi_version`. */
typedef const aitk_cuda_plugin *(*aitk_cuda_plugin_get_fn)(int abi_version);

#ifdef __cplusplus
}
#endif

#endif
