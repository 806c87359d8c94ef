/* The workload runner: warm-up until the step time settles, timed steps
 * cycling through the resolution buckets, statistics, the time for 1000 steps
 * (measured or extrapolated), throughput, peak memory, a time limit and a
 * stop request (common/stop.h: Ctrl-C, SIGTERM). It knows nothing of models
 * or backends: a step is a callback, so the runner is tested on synthetic
 * steps with an injected clock and used on the real training-step graph
 * (bench/workload_step.c) unchanged.
 *
 * Results become one workloads[] entry of the report (shape: reports/schema,
 * "workload"); the checks that judge them are made by the workload provider
 * (validate/probes/workloads.c). */
#ifndef AITK_BENCH_RUNNER_H
#define AITK_BENCH_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/progress.h"
#include "bench/stats.h"
#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

#define AITK_BENCH_MAX_BUCKETS 8

/* The report's workload status values. */
typedef enum aitk_bench_outcome {
    AITK_BENCH_COMPLETED,
    AITK_BENCH_INTERRUPTED, /* Ctrl-C during the workload */
    AITK_BENCH_TIMED_OUT,   /* the workload's time limit passed */
    AITK_BENCH_FAILED,      /* a step failed; the message says why */
    AITK_BENCH_SKIPPED,     /* not started (no backend, an earlier Ctrl-C) */
} aitk_bench_outcome;

const char *aitk_bench_outcome_name(aitk_bench_outcome o);

/* What one step did, as far as the step knows (0: unknown). */
typedef struct aitk_bench_step_info {
    double flops;       /* hardware FLOPs, recomputation included */
    double model_flops; /* without recomputation: the MFU convention */
} aitk_bench_step_info;

typedef aitk_status (*aitk_bench_step_fn)(void *user, size_t bucket,
                                          aitk_bench_step_info *info, aitk_str *err);

typedef struct aitk_bench_plan {
    const char *name;     /* "flux1-dev" */
    long resolutions[AITK_BENCH_MAX_BUCKETS];
    size_t n_buckets;     /* >= 1; step i runs bucket i % n_buckets */
    long batch;           /* images per step */
    long timed_steps;     /* standard level: steps measured after warm-up
                             (rounded up to whole cycles of the buckets) */
    bool full;            /* run `requested_steps` for real (warm-up counts) */
    long requested_steps; /* the figure reported on: 1000 */
    double time_limit_s;  /* <= 0: none */
    aitk_warmup_rule warmup; /* applied to each bucket's own step times */
    double flops_per_step[AITK_BENCH_MAX_BUCKETS]; /* cost model, when a step says 0 */
    double peak_flops;    /* the device's peak FLOP/s for MFU; 0: unknown */
    aitk_bench_step_fn step;
    double (*peak_bytes)(void *user); /* NULL: unknown */
    void *user;
    uint64_t (*clock_ns)(void);       /* NULL: aitk_clock_ns (tests inject a fake) */
    aitk_progress *progress;          /* NULL: silent */
    /* Called once between the last warm-up step and the first timed one
     * (not when the warm-up stopped the run): where a caller snapshots
     * counters that should describe the timed steps alone, such as the
     * backend's per-op device times (bench/paths_since.h). NULL: none. */
    void (*after_warmup)(void *ctx);
    void *after_warmup_ctx;
} aitk_bench_plan;

typedef struct aitk_bench_result {
    aitk_bench_outcome outcome;
    aitk_str message;          /* why it did not complete, or notes */
    long warmup_steps;
    bool settled;              /* warm-up ended by the rule, not by its cap */
    double warmup_s;           /* time spent in warm-up steps */
    long timed;                /* steps measured after warm-up */
    double *times;             /* [timed] seconds */
    size_t *bucket_of;         /* [timed] */
    bool have_stats;           /* timed >= 1 */
    aitk_stats stats;          /* over the timed steps */
    aitk_stats bucket[AITK_BENCH_MAX_BUCKETS];
    bool measured;             /* time_1000_s was run, not extrapolated */
    double time_1000_s;        /* NAN when there is nothing to go on */
    double error_pct;          /* of an extrapolation; NAN unknown */
    long from_steps;
    double steps_per_s, images_per_s, flops_per_s, mfu; /* NAN: unknown */
    bool flops_counted;        /* every timed step counted its own FLOPs (else cost model) */
    double peak_bytes;         /* NAN: unknown */
} aitk_bench_result;

/* Runs the plan. Returns AITK_OK whenever a result was produced, whatever the
 * outcome (a failed step is outcome FAILED with its message); AITK_E_INVAL
 * for an impossible plan, AITK_E_NOMEM. */
aitk_status aitk_bench_run(const aitk_bench_plan *plan, aitk_bench_result *out);
void aitk_bench_result_free(aitk_bench_result *r);

/* Test-only: every step, warm-up included, is made `factor` times slower
 * (the runner sleeps inside the step's timing, `factor` - 1 times the step's
 * wall or CPU time, whichever is more, so a busy machine cannot shrink it)
 * and the result's message says so. `aitk-validate --mpi` sets it on one rank from
 * AITK_TEST_SLOW_RANK, so a test can prove that the fleet report flags a
 * slow node. 1 (the default) is off. */
void aitk_bench_set_test_slowdown(double factor);

/* What the result is judged against (NAN / NULL: not known). */
typedef struct aitk_bench_targets {
    bool cpu_figures;           /* CPU backend: no GPU target applies */
    double target_s;            /* 1000 steps on this device, scaled from the target GPU */
    double documented_s;        /* 1000 steps as documented, on the target GPU, unscaled */
    const char *target_gpu;
    const char *time_source;
    double vram_bytes;          /* this device's memory */
    double documented_min_bytes;
    const char *memory_source;
} aitk_bench_targets;

/* pass: within the scaled target, or within the documented time itself
 * (`documented_s`, NAN when unknown): a GPU that beats the documented GPU's
 * time meets the target whatever the scaling says, which rests on the cost
 * model's ratio between two GPUs and on a documented figure of unknown setup
 * (an H200 measured 16-18 min against the 45 min of the FLUX target and
 * failed a scaled 10 min that predict itself put at 16 min). warn: up to 25%
 * over the scaled target (run-to-run spread, a different driver, the cost
 * model's own error); fail: beyond. */
const char *aitk_bench_judge_time(double measured_s, double target_s, double documented_s);
/* fail: peak above the device's memory; warn: the device has less than the
 * documented minimum (it fits this run, but ai-toolkit's guide says it
 * should not); pass otherwise. With no device memory known, the peak is set
 * against the documented minimum instead. NULL when nothing to judge. */
const char *aitk_bench_judge_memory(double peak, double vram, double documented_min);

/* The report's workloads[] entry (reports/schema "workload"), plus
 * "buckets" [{resolution, steps, mean_s, median_s, cost_model_gflop}],
 * steps.settled, throughput.gflops and throughput.flops_source. */
aitk_status aitk_bench_result_json(const aitk_bench_plan *plan, const aitk_bench_result *r,
                                   const char *title, const char *backend, const char *device,
                                   const aitk_bench_targets *t, cJSON **out);

#endif
