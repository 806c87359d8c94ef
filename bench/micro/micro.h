/* The microbenchmark suite: memory copies, GEMMs at the reference
 * workloads' real Linear shapes, and attention forward and backward at their
 * real heads/head_dim, each timed through one op of a backend's table
 * (kernels/ops.h) -- the CPU reference always, the GPU backend too when the
 * CUDA plugin opens a device -- so CPU and GPU figures come from the same
 * code and the same timing. Each runs through the Google Benchmark shim and
 * is read back from its JSON into the report's micro[] entries {name,
 * category, backend, shape, value, unit, higher_is_better, time_ms,
 * iterations, device (GPU), kernel (the implementation that served it)}. */
#ifndef AITK_BENCH_MICRO_MICRO_H
#define AITK_BENCH_MICRO_MICRO_H

#include <stdbool.h>

#include "bench/config.h"
#include "bench/micro/shim.h"
#include "bench/progress.h"
#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

/* What a micro[] entry says about one benchmark besides its measurement. */
typedef struct aitk_micro_meta {
    const char *name;      /* also the Google Benchmark name */
    const char *category;  /* memcpy | gemm | attention */
    const char *backend;   /* cpu | cuda */
    const char *shape;
    const char *unit;      /* "GB/s", "GFLOP/s" */
    const char *counter;   /* the JSON field the value comes from */
    double scale;          /* value = counter * scale */
    bool higher_is_better;
} aitk_micro_meta;

/* Reads the benchmark named meta->name from Google Benchmark's JSON `json`
 * into a micro[] entry. A benchmark that reported an error becomes
 * AITK_E_IO with its message in err. */
aitk_status aitk_micro_entry_from_json(const char *json, const aitk_micro_meta *meta,
                                       cJSON **entry, aitk_str *err);

/* Runs the suite of `cfg` (bench/workloads.yaml micro:) one benchmark at a
 * time, so Ctrl-C stops between (or inside) benchmarks, appending entries to
 * the array `micro`. A benchmark that fails is left out and named in
 * `notes`; only AITK_E_NOMEM/INVAL stop the suite. `filter` (a substring of
 * the names, NULL: all) is for tests. */
aitk_status aitk_micro_run_suite(const aitk_bench_config *cfg, const char *filter,
                                 aitk_progress *progress, cJSON *micro, aitk_str *notes);

#endif
