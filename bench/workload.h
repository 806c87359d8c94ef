/* One reference workload (FLUX.1-dev, Chroma, OmniGen2 LoRA training) run
 * end to end: model spec -> training-step graph on a backend -> runner ->
 * the report's workloads[] entry, with the documented targets attached.
 *
 * The CPU backend runs the small configuration of bench/workloads.yaml and
 * its figures are labelled CPU figures; the GPU backend (the CUDA plugin)
 * runs the full-size model at the job's buckets (1024 px by default), one
 * model built for the largest and switched per step, weights made on the
 * device, and is judged against the target GPU's documented time scaled to
 * this GPU through the cost model, with the cost model's prediction for the
 * same job beside it. A job that does not fit is an entry that names the
 * allocation that failed. */
#ifndef AITK_BENCH_WORKLOAD_H
#define AITK_BENCH_WORKLOAD_H

#include <stdbool.h>

#include "bench/config.h"
#include "bench/progress.h"
#include "common/status.h"
#include "common/str.h"
#include "models/cost.h"
#include "models/gpudb.h"

typedef struct cJSON cJSON;

typedef struct aitk_bench_device {
    const char *backend;       /* "cpu" | "cuda" */
    const char *name;          /* shown in the report */
    const aitk_gpu_spec *gpu;  /* this GPU's datasheet row; NULL for a CPU or an unknown GPU */
    const aitk_gpudb *gpudb;   /* the table `gpu` comes from (the target GPU is looked up in it) */
    double vram_bytes;         /* NAN: unknown (CPU) */
    /* The opened backend for "cuda" (bench/gpu_backend.h); the CPU reference
     * is used for "cpu" and this is ignored. */
    const struct aitk_backend *impl;
} aitk_bench_device;

typedef struct aitk_bench_request {
    const char *model_id;      /* "flux1-dev" | "chroma" | "omnigen2" */
    bool full;                 /* --full: run the 1000 steps */
    long steps;                /* --steps N; 0: the config's default */
    const aitk_bench_device *device;
    aitk_progress *progress;   /* NULL: silent */
    /* --config: the user's ai-toolkit config. Its LoRA rank/alpha, batch,
     * optimizer, base precision and checkpointing replace the model's
     * defaults; the CPU backend keeps its own small resolutions (said in the
     * entry's configuration note). NULL: the model's defaults. */
    const struct aitk_train_config *train;
    /* models/cost.yaml as the caller has it loaded; NULL: loaded here. */
    const aitk_cost_params *cost_params;
} aitk_bench_request;


/* Runs one workload and builds its workloads[] entry (*entry, always set
 * unless AITK_E_NOMEM/AITK_E_INVAL): a workload that cannot run is an entry
 * with status failed or skipped and the reason, not an error. */
aitk_status aitk_bench_workload_run(const aitk_bench_config *cfg, const aitk_bench_request *req,
                                    cJSON **entry);

/* An entry for a workload that was not run, with the reason. */
aitk_status aitk_bench_workload_skipped(const char *model_id, const char *backend,
                                        const char *reason, cJSON **entry);

/* The documented time for 1000 steps (spec->targets, on the recommended
 * GPU), scaled to `gpu` through the cost model's predicted step times. A
 * target written "N x GPU" is taken as N GPUs in data parallel, so one GPU
 * needs N times as long (an assumption, said in *source). An ambiguous
 * recommended GPU ("A100") is read as the first match in models/gpus.yaml,
 * also said in *source (owned by the caller). */
aitk_status aitk_bench_scaled_target(const aitk_model_spec *spec, const aitk_gpudb *db,
                                     const aitk_gpu_spec *gpu, const aitk_cost_params *params,
                                     double *target_s, const aitk_gpu_spec **target_gpu,
                                     aitk_str *source, aitk_str *err);

#endif
