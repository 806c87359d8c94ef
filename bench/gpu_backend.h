/* The GPU backend the workloads and microbenchmarks run on: the CUDA
 * plugin, loaded (bench/backend_loader.h), probed and opened on device 0
 * once per process, so the microbenchmarks and the workloads share one
 * device context and one set of library handles. */
#ifndef AITK_BENCH_GPU_BACKEND_H
#define AITK_BENCH_GPU_BACKEND_H

#include "common/str.h"
#include "kernels/backend.h"

typedef struct aitk_bench_gpu {
    const aitk_backend *backend; /* opened; NULL when no GPU backend is usable */
    aitk_backend_device device;  /* the device opened: the runtime lists the fastest first */
    aitk_str why;                /* why backend is NULL: the loader's or the runtime's words */
} aitk_bench_gpu;

/* Loads, probes and opens on the first call; later calls return the same
 * outcome. Never NULL. Not thread-safe: the validator benchmarks from one
 * thread. */
const aitk_bench_gpu *aitk_bench_gpu_open(void);

/* Before the first open: the GPU to open is the `ordinal`-th the runtime
 * lists (modulo their count) instead of the first. `--mpi` passes the local
 * rank, so the ranks on one node validate one GPU each. */
void aitk_bench_gpu_prefer(int ordinal);

#endif
