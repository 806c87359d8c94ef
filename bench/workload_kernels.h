/* Which kernels a workload ran: the backend's paths (kernels/backend.h,
 * `paths`: per op, the implementation and its call count since open) taken
 * before and after the workload, and their difference written into the
 * workload's report entry as "kernels". Why a difference: the counts run
 * from the backend's open, and the microbenchmarks and earlier workloads
 * call the same ops; only the calls this workload made describe it. This is
 * where a report says whether attention ran through cuDNN's fused SDPA or
 * the plain kernel, and why. */
#ifndef AITK_BENCH_WORKLOAD_KERNELS_H
#define AITK_BENCH_WORKLOAD_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "kernels/backend.h"

typedef struct cJSON cJSON;

typedef struct aitk_bench_paths {
    aitk_backend_path *items; /* owned */
    size_t n;
    bool ok;                  /* the backend answered; false: no figure, no entry */
} aitk_bench_paths;

/* Takes the backend's paths now. AITK_E_NOMEM only; a backend whose paths
 * fail leaves out->ok false (the entry then has no "kernels"). */
aitk_status aitk_bench_paths_take(const aitk_backend *be, aitk_bench_paths *out);
void aitk_bench_paths_free(aitk_bench_paths *p);

/* Adds "kernels": [{op, kernel, calls}] to `entry`, the calls made between
 * `before` and `after`, in the backend's order; nothing when either was not
 * taken. AITK_E_NOMEM only. */
aitk_status aitk_bench_paths_json(cJSON *entry, const aitk_bench_paths *before,
                                  const aitk_bench_paths *after);

#endif
