/* A backend: the descriptor around the one operation table (kernels/ops.h).
 *
 * The CPU reference is linked in (aitk_backend_cpu); the CUDA backend is the
 * plugin module kernels/cuda builds, which the validator opens at run time
 * (bench/backend_loader.h) so that it starts and reports on the machines it
 * diagnoses: no driver, a broken CUDA install, the wrong cuDNN. The plugin
 * exports one symbol, AITK_BACKEND_PLUGIN_ENTRY, that returns its
 * descriptor. No CUDA type appears here, so this header compiles on
 * machines without a toolkit.
 *
 * ABI rules: the entry point takes the ABI version the caller was built with
 * and returns NULL when it cannot serve it; the descriptor repeats the
 * version it implements. Any change to a struct or a signature here or in
 * kernels/ops.h bumps AITK_BACKEND_ABI (structs are passed by pointer, their
 * sizes are part of the ABI). Calls are made from one thread at a time.
 *
 * Errors: every call returns an aitk_status (AITK_OK == 0). When a call
 * fails, last_error gives the library's own words, "cudaMalloc:
 * cudaErrorMemoryAllocation: out of memory", because that text is what a
 * person pastes into a search box. Texts cross the ABI in fixed-size arrays
 * or caller-owned buffers, so no allocation crosses it. */
#ifndef AITK_KERNELS_BACKEND_H
#define AITK_KERNELS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "kernels/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AITK_BACKEND_ABI 4
#define AITK_BACKEND_PLUGIN_ENTRY "aitk_backend_plugin_get"
#define AITK_BACKEND_MAX_DEVICES 16
#define AITK_BACKEND_ERROR_LEN 512

typedef struct aitk_backend_device {
    int index;
    char name[256];                 /* cudaDeviceProp.name: "NVIDIA H200"; the CPU's model name */
    int cc_major, cc_minor;         /* compute capability; 0.0 on the CPU */
    uint64_t total_memory_bytes;
    int sm_count;                   /* SMs; logical CPUs on the CPU */
    int clock_khz;                  /* peak SM clock; 0: unknown */
    int memory_clock_khz;           /* peak memory clock; 0: unknown */
    int memory_bus_bits;            /* 0: unknown */
    char pci_bus_id[32];            /* "0000:3B:00.0"; "" on the CPU */
} aitk_backend_device;

typedef struct aitk_backend_probe {
    int runtime_version;            /* cudaRuntimeGetVersion: 13000 for 13.0; 0 on the CPU */
    int driver_version;             /* cudaDriverGetVersion: 0 when no driver is loaded */
    int cublaslt_version;           /* cublasLtGetVersion; 0: not loaded */
    int cudnn_version;              /* cudnnGetVersion at run time, 91400 for 9.14.0; 0: none */
    int device_count;               /* 0 when no device answers */
    int n_devices;                  /* described below: min(device_count, MAX_DEVICES) */
    aitk_backend_device devices[AITK_BACKEND_MAX_DEVICES];
    int library_error;              /* cudaError_t (or other code) of the failing call; 0: none */
    char error[AITK_BACKEND_ERROR_LEN]; /* "call: errorName: error string" */
} aitk_backend_probe;

/* Which implementation served an op, for the report: "attention_forward" ran
 * "cuDNN 9.14.0 fused SDPA" 57 times and "plain kernel (cuDNN refused
 * head_dim 120)" 0 times.
 *
 * A GEMM's kernel names its problem in one fixed form, so a caller can
 * count its FLOPs (bench/gemm_in_step.h parses it):
 *   "cuBLASLt [m=4096 n=3072 k=3072 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16
 *    c=bf16 compute=fp32 epilogue=bias] algo 6 tile 20 stages 8"
 * m, n, k, ta, tb and batch are ops.h's gemm arguments (row-major terms);
 * beta=1 when the call read C. Calls of one op at different shapes are
 * different paths.
 *
 * ms: device time of the path's calls in milliseconds, summed, when the
 * backend times ops; -1 when it does not (the CPU reference; the CUDA
 * backend unless AITK_TIME_OPS=1 was set when open() ran; ops the CUDA
 * backend never times). With AITK_TIME_OPS=1 the CUDA backend brackets
 * each cuBLASLt matmul (the gemm op and every GEMM step of the LoRA
 * linear ops) and each attention forward and backward with a pair of CUDA
 * events on its one stream; paths() then waits for the queued work
 * (like synchronize) before it reads them. The events cost time between
 * kernels, so a step measured for its s/step runs with timing off. */
typedef struct aitk_backend_path {
    char op[48];
    char kernel[160];
    long calls;
    double ms;
} aitk_backend_path;

/* Collectives across every GPU the backend sees (NCCL in the CUDA plugin).
 * The kinds and their size conventions are nccl-tests' (bench/collective_bw.h
 * turns a time into algbw and busbw); broadcast and reduce are named for
 * that arithmetic, and a backend may refuse them (AITK_E_UNSUPPORTED). */
typedef enum aitk_collective {
    AITK_COLLECTIVE_ALL_REDUCE,
    AITK_COLLECTIVE_ALL_GATHER,
    AITK_COLLECTIVE_REDUCE_SCATTER,
    AITK_COLLECTIVE_BROADCAST,
    AITK_COLLECTIVE_REDUCE,
    AITK_COLLECTIVE_COUNT
} aitk_collective;

/* Who can reach whom, and the library that would move the data. */
typedef struct aitk_backend_peers {
    int n_devices;                  /* devices the collectives span (all visible ones) */
    int library_version;            /* ncclGetVersion: 22703 for 2.27.3; 0: not loaded */
    /* cudaDeviceCanAccessPeer(i, j) for i != j; 1 on the diagonal. */
    unsigned char can_access[AITK_BACKEND_MAX_DEVICES][AITK_BACKEND_MAX_DEVICES];
    char error[AITK_BACKEND_ERROR_LEN]; /* why library_version is 0, or "" */
} aitk_backend_peers;

typedef struct aitk_backend_collectives {
    /* Fills `out` without creating a communicator. AITK_OK even with one
     * device (the caller decides what a single GPU means); AITK_E_NOTFOUND
     * when the library cannot be loaded (out->error says why). */
    aitk_status (*peers)(aitk_backend_peers *out);

    /* One communicator over every visible device (made on the first call,
     * kept until close), `count` elements of `dtype` (F32 or BF16) as the
     * library's count argument: the whole buffer for all-reduce, one rank's
     * part for all-gather (its input) and reduce-scatter (its output).
     * `warmup` untimed iterations, then `iters` timed ones; *seconds is the
     * mean time of one iteration on the slowest device (device events).
     * AITK_E_UNSUPPORTED with fewer than two devices; AITK_E_NOMEM when the
     * buffers do not fit. */
    aitk_status (*time)(aitk_collective kind, size_t count, aitk_dtype dtype, int warmup,
                        int iters, double *seconds);

    /* Frees the communicator, streams and buffers; the next time makes
     * them again. Safe to call twice. */
    void (*close)(void);
} aitk_backend_collectives;

typedef struct aitk_backend {
    int abi_version;        /* AITK_BACKEND_ABI of the backend's build */
    const char *name;       /* "cpu", "cuda" */
    const char *build;      /* "CUDA 13.0, architectures 80-real ...": toolkit and targets */

    /* Runtime, libraries and devices, or why there are none; no device is
     * opened. AITK_OK only when at least one device answers; AITK_E_NOTFOUND
     * when the runtime works but lists no device (driver missing or too old,
     * no GPU visible), with error saying which. */
    aitk_status (*probe)(aitk_backend_probe *out);

    /* Selects `device` and creates what the ops need (stream, library
     * handles, workspaces). Every op fails until open succeeds. */
    aitk_status (*open)(int device);

    const aitk_ops *ops;

    /* Waits until every queued op has finished; a failure of an earlier
     * asynchronous op is reported here. Timing brackets work with it. */
    aitk_status (*synchronize)(void);

    /* Free and total memory of the open device (cudaMemGetInfo; the CPU:
     * MemAvailable and MemTotal). */
    aitk_status (*mem_info)(size_t *free_bytes, size_t *total_bytes);

    /* Bytes the backend holds outside aitk_buf_alloc (library workspaces,
     * cached plans, the converted LoRA copies): part of the real peak. */
    size_t (*workspace_bytes)(void);

    /* The words of the last failure, "" when none; copied into buf (cut with
     * "..." when longer). */
    void (*last_error)(char *buf, size_t len);

    /* Which implementation ran, per op and kernel, since open: *n entries
     * (at most cap) copied; AITK_OK. With op timing on (see
     * aitk_backend_path) it first waits for the queued work and returns
     * that wait's failure, or an event call's, as synchronize would. */
    aitk_status (*paths)(aitk_backend_path *out, size_t cap, size_t *n);

    /* Frees what open made. Safe to call twice; a plugin module stays
     * mapped (see aitk_dl_keep). */
    void (*close)(void);

    /* Multi-GPU collectives; NULL where the backend has none (the CPU
     * reference, a plugin built without NCCL's header). They do not need
     * open, and they restore the device open selected. */
    const aitk_backend_collectives *collectives;
} aitk_backend;

/* The CPU reference backend (kernels/cpu), always present. */
const aitk_backend *aitk_backend_cpu(void);

/* The plugin's one exported symbol: NULL when it cannot serve `abi_version`. */
typedef const aitk_backend *(*aitk_backend_plugin_get_fn)(int abi_version);

#ifdef __cplusplus
}
#endif

#endif
