/* The training-step graph (models/step.h) behind the runner's step
 * callback, on one backend (kernels/backend.h): one model built for the
 * largest resolution bucket and switched to the bucket of each step
 * (aitk_step_set_resolution), as ai-toolkit trains one model on batches
 * of every bucket; one memory account, whose peak is the largest bucket's.
 * Kept apart from workload.c so the runner's side sees only a step
 * callback, not the kernels' types.
 *
 * It also keeps what the report says beside the time: the loss of every
 * step (on fixed data a LoRA that trains makes it fall: the first sign a
 * backend computes what it should), the accounted peak, and on a GPU the
 * device memory in use as the driver sees it. */
#ifndef AITK_BENCH_WORKLOAD_STEP_H
#define AITK_BENCH_WORKLOAD_STEP_H

#include <stddef.h>

#include "bench/runner.h"
#include "common/status.h"
#include "common/str.h"
#include "models/spec.h"
#include "models/step.h"

typedef struct aitk_bench_steps aitk_bench_steps;
struct aitk_train_config;
struct aitk_backend;

/* Why a model could not be built, when the reason is memory: the
 * allocation that failed and what was already allocated. */
typedef struct aitk_bench_alloc_failure {
    bool happened;
    char what[128];       /* "activations (block inputs)" */
    const char *tag;      /* "activations", ... */
    double bytes;         /* the failed request */
    double allocated;     /* bytes live in the account when it failed */
    double limit;         /* the account's cap then, 0: none (the device's own failure) */
} aitk_bench_alloc_failure;

/* Builds the model of `spec` for the largest of `n` resolutions on `backend`
 * (opened by the caller), with the LoRA/optimizer/precision choices of
 * `train` when given (the spec's ai-toolkit defaults otherwise). Not timed:
 * a model is built before its first step. `limit_bytes` > 0 caps the
 * model's account (a simulated smaller device). Errors carry the step
 * graph's sentence in err; AITK_E_NOMEM from the device or the limit also
 * fills *failure (may be NULL). */
aitk_status aitk_bench_steps_create(const aitk_model_spec *spec, const long *resolutions,
                                    size_t n, const struct aitk_train_config *train,
                                    const struct aitk_backend *backend, double limit_bytes,
                                    aitk_bench_steps **out, aitk_bench_alloc_failure *failure,
                                    aitk_str *err);

/* The runner's callbacks; `user` is the aitk_bench_steps. A step of
 * bucket b switches the model to resolutions[b] first when it ran another
 * bucket last (timed with the step). */
aitk_status aitk_bench_steps_run(void *user, size_t bucket, aitk_bench_step_info *info,
                                 aitk_str *err);
/* The model's peak of accounted bytes (the largest bucket's) plus what the backend holds
 * outside the account (library workspaces). */
double aitk_bench_steps_peak(void *user);
/* Device memory in use (total - free, the driver's view: the CUDA context,
 * the allocator's cache and other processes included), the highest seen
 * after building and after each step; NAN where the backend cannot say. */
double aitk_bench_steps_device_peak(const aitk_bench_steps *s);
/* The cost model's memory plan for the largest bucket, with this
 * backend's storage (aitk_step_memory_plan); NAN when it cannot say. */
double aitk_bench_steps_planned(const aitk_bench_steps *s);
/* LoRA parameters of the built step (one set for every bucket): shows in
 * the report that the configured rank is the one that ran. */
size_t aitk_bench_steps_lora_params(const aitk_bench_steps *s);
/* The step's setup, as built (aitk_step_setup_of). */
const aitk_step_setup *aitk_bench_steps_setup(const aitk_bench_steps *s);
/* Losses of the steps run so far, in order (warm-up included): *n values. */
const double *aitk_bench_steps_losses(const aitk_bench_steps *s, size_t *n);
/* The losses judged bucket by bucket: each bucket's loss is on its own
 * data and at its own level, so with buckets taking turns the curve
 * alternates and a tenth of all steps mixes them. Here the first and last
 * tenth are of each bucket's own steps (at least one), averaged over the
 * buckets that ran; `falls` when the last tenth is below the first in
 * every bucket (false with one step of a bucket, or none). */
typedef struct aitk_bench_loss_summary {
    double first_tenth_mean, last_tenth_mean; /* NAN before any step */
    bool falls;
} aitk_bench_loss_summary;

void aitk_bench_steps_loss_summary(const aitk_bench_steps *s, aitk_bench_loss_summary *out);
void aitk_bench_steps_free(aitk_bench_steps *s);

#endif
