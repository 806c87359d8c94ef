/* The multi-GPU collectives sweep: NCCL all-reduce, all-gather and
 * reduce-scatter over every visible GPU (the backend's collectives entry,
 * kernels/backend.h), at the sizes of bench/workloads.yaml collectives:,
 * each appended to the report's micro[] as an entry of category
 * "collective" whose value is nccl-tests' busbw (bench/collective_bw.h),
 * with algbw, the time and, when the caller knows it, the link's nominal
 * rate and busbw's share of it. */
#ifndef AITK_BENCH_MICRO_COLLECTIVES_H
#define AITK_BENCH_MICRO_COLLECTIVES_H

#include "bench/config.h"
#include "common/status.h"
#include "common/str.h"
#include "kernels/backend.h"

typedef struct cJSON cJSON;

/* Best busbw (GB/s) each collective reached over the sizes, for the
 * report's check; 0 where none ran. */
typedef struct aitk_coll_best {
    double busbw_gbs[AITK_COLLECTIVE_COUNT];
    double at_size_bytes[AITK_COLLECTIVE_COUNT];
    int runs; /* entries appended */
} aitk_coll_best;

/* Runs the sweep on `coll` over `n_devices` GPUs. `link_gbs` is the
 * nominal per-direction rate of the slowest link between them (NaN:
 * unknown). A size or collective that fails is left out and named in
 * `notes` ("nccl.all_gather.bf16.1024MiB: cudaMalloc...; "), and the
 * sweep goes on; only AITK_E_NOMEM (of the host) and AITK_E_INVAL stop it.
 * `why` receives the backend's words. */
aitk_status aitk_coll_sweep(const aitk_bench_config *cfg, const aitk_backend *be,
                            int n_devices, double link_gbs, cJSON *micro, aitk_coll_best *best,
                            aitk_str *notes);

#endif
