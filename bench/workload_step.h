/* The training-step graph (models/step.h) behind the runner's step
 * callback: one model per resolution bucket, each with its own memory
 * account. Kept apart from workload.c so the runner's side sees only a
 * step callback, not the kernels' types. */
#ifndef AITK_BENCH_WORKLOAD_STEP_H
#define AITK_BENCH_WORKLOAD_STEP_H

#include <stddef.h>

#include "bench/runner.h"
#include "common/status.h"
#include "common/str.h"
#include "models/spec.h"

typedef struct aitk_bench_steps aitk_bench_steps;

/* Builds the models of `spec` at each of `n` resolutions on the CPU backend,
 * with the LoRA/optimizer/precision choices of `train` when given (the
 * spec's ai-toolkit defaults otherwise). Not timed: a model is built
 * before its first step. Errors carry the step graph's sentence in err. */
struct aitk_train_config;
aitk_status aitk_bench_steps_create(const aitk_model_spec *spec, const long *resolutions,
                                    size_t n, const struct aitk_train_config *train,
                                    aitk_bench_steps **out, aitk_str *err);
/* The runner's callbacks; `user` is the aitk_bench_steps. */
aitk_status aitk_bench_steps_run(void *user, size_t bucket, aitk_bench_step_info *info,
                                 aitk_str *err);
/* The largest bucket's peak of allocated bytes. */
double aitk_bench_steps_peak(void *user);
/* The cost model's memory plan for the largest bucket, with the CPU
 * backend's storage (aitk_step_memory_plan); NAN when it cannot say. */
double aitk_bench_steps_planned(const aitk_bench_steps *s);
/* LoRA parameters of the built step (the same in every bucket): shows in
 * the report that the configured rank is the one that ran. */
size_t aitk_bench_steps_lora_params(const aitk_bench_steps *s);
void aitk_bench_steps_free(aitk_bench_steps *s);

#endif
