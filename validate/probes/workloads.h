/* Reference training workloads and microbenchmarks as providers: they run
 * the benchmark runner (bench/) on the best backend this build has, put the
 * measurements under ctx->env ("workloads", "micro": the CLI moves them to
 * the report's top-level workloads[] and micro[]), and add one check per
 * workload and one for the microbenchmark suite. */
#ifndef AITK_VALIDATE_PROBES_WORKLOADS_H
#define AITK_VALIDATE_PROBES_WORKLOADS_H

#include "validate/engine.h"

/* Adds one workload.<model> check per selected model (standard: short runs
 * extrapolated to 1000 steps; full: the 1000 steps). */
aitk_status aitk_workload_checks(aitk_run_ctx *ctx);

/* The target checks of one workloads[] entry: workload.<model>.time_1000
 * and workload.<model>.memory, each only when the entry carries a judged
 * status (GPU runs; CPU figures are never judged against GPU targets). */
aitk_status aitk_workload_target_checks(aitk_run_ctx *ctx, const char *model, const cJSON *w);

/* Runs the microbenchmarks and adds the micro.cpu check. */
aitk_status aitk_micro_checks(aitk_run_ctx *ctx);

/* The reference models, in report order; NULL-terminated. */
extern const char *const aitk_reference_models[];

#endif
