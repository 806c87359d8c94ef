/* bench/workloads.yaml: how the reference workloads and the
 * microbenchmarks are run, per backend. */
#ifndef AITK_BENCH_CONFIG_H
#define AITK_BENCH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/runner.h"
#include "common/status.h"
#include "common/str.h"
#include "common/yaml.h"

typedef struct aitk_bench_backend_cfg {
    bool tiny;                 /* size: tiny | full */
    long resolutions[AITK_BENCH_MAX_BUCKETS];
    size_t n_resolutions;      /* 0: the model's defaults */
    long standard_steps, full_steps;
    double time_limit_s;
} aitk_bench_backend_cfg;

typedef struct aitk_bench_gemm_cfg {
    const char *model, *block, *linear;
} aitk_bench_gemm_cfg;

typedef struct aitk_bench_config {
    aitk_yaml_doc *doc;        /* owns the strings */
    aitk_bench_backend_cfg cpu, cuda;
    long memcpy_mib, gemm_resolution, attention_resolution;
    double min_time_s;
    aitk_bench_gemm_cfg gemm[16];
    size_t n_gemm;
    const char *attention[8];  /* model ids */
    size_t n_attention;
    /* Multi-GPU collectives: sizes min_mib, min_mib * factor, ... up to
     * max_mib, each run warmup times untimed, then iters times timed. */
    long coll_min_mib, coll_max_mib, coll_factor, coll_warmup, coll_iters;
    bool cpu_only;             /* --cpu: no GPU microbenchmarks (set by the caller, not YAML) */
} aitk_bench_config;

/* Loads bench/workloads.yaml (embedded, or from AITK_DATA_DIR); errors name
 * file:line:col. */
aitk_status aitk_bench_config_load(aitk_bench_config **out, aitk_str *err);
void aitk_bench_config_free(aitk_bench_config *cfg);

#endif
