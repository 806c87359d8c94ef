/* The step-graph adapter (see workload_step.h). A loss that is not finite
 * fails the step: a run that diverges is not a measurement. The config is
 * read through workload_step_train.h: this file includes kernels/ops.h, whose
 * dtype names clash with models/aitk_config.h's. */
#include "bench/workload_step.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "bench/workload_step_train.h"
#include "common/alloc.h"
#include "kernels/ops.h"
#include "models/step.h"

struct aitk_bench_steps {
    aitk_step_model *models[AITK_BENCH_MAX_BUCKETS];
    aitk_mem_account acct[AITK_BENCH_MAX_BUCKETS];
    size_t n;
};

/* What an ai-toolkit config decides about the step itself; quantize means
 * the qfloat8 base (optimum-quanto qfloat8, as ai-toolkit's README and
 * toolkit/config_modules.py use it). */
static void apply_train_config(aitk_step_setup *setup, const struct aitk_train_config *config)
{
    if (!config)
        return;
    aitk_bench_step_train t;
    aitk_bench_step_train_read(config, &t);
    setup->rank = t.rank;
    setup->alpha = t.alpha;
    setup->batch = t.batch;
    setup->checkpointing = t.checkpointing;
    setup->optimizer = t.optimizer_8bit ? AITK_STEP_ADAMW8BIT : AITK_STEP_ADAMW;
    if (t.quantize)
        setup->base = AITK_STEP_BASE_FP8;
    else if (t.bf16)
        setup->base = AITK_STEP_BASE_BF16;
    else
        setup->base = AITK_STEP_BASE_FP32;
}

aitk_status aitk_bench_steps_create(const aitk_model_spec *spec, const long *resolutions,
                                    size_t n, const struct aitk_train_config *train,
                                    aitk_bench_steps **out, aitk_str *err)
{
    *out = NULL;
    if (n == 0 || n > AITK_BENCH_MAX_BUCKETS)
        return AITK_E_INVAL;
    aitk_bench_steps *s = aitk_calloc(1, sizeof *s);
    if (!s)
        return AITK_E_NOMEM;
    for (size_t b = 0; b < n; b++) {
        aitk_step_setup setup;
        aitk_step_setup_defaults(&setup, spec);
        apply_train_config(&setup, train);
        setup.resolution = resolutions[b];
        setup.img_tokens = 0;
        aitk_status st = aitk_step_model_create(spec, &setup, aitk_ops_cpu(), &s->acct[b],
                                                &s->models[b], err);
        if (st) {
            aitk_bench_steps_free(s);
            return st;
        }
        s->n = b + 1;
    }
    *out = s;
    return AITK_OK;
}

aitk_status aitk_bench_steps_run(void *user, size_t b, aitk_bench_step_info *info,
                                 aitk_str *err)
{
    aitk_bench_steps *s = user;
    if (b >= s->n)
        return AITK_E_INVAL;
    aitk_step_result res;
    memset(&res, 0, sizeof res);
    aitk_status st = aitk_step_run(s->models[b], &res);
    if (st)
        return st;
    if (!isfinite(res.loss)) {
        aitk_str_appendf(err, "the loss is not finite (%g) at step %ld", res.loss, res.step);
        return AITK_E_INTERNAL;
    }
    info->flops = res.flops;
    info->model_flops = res.model_flops;
    return AITK_OK;
}

double aitk_bench_steps_peak(void *user)
{
    const aitk_bench_steps *s = user;
    double peak = 0;
    for (size_t b = 0; b < s->n; b++)
        peak = fmax(peak, (double)s->acct[b].peak_total);
    return peak;
}

size_t aitk_bench_steps_lora_params(const aitk_bench_steps *s)
{
    return s->n ? aitk_step_lora_params(s->models[0]) : 0;
}

double aitk_bench_steps_planned(const aitk_bench_steps *s)
{
    double most = NAN;
    for (size_t b = 0; b < s->n; b++) {
        aitk_step_plan plan;
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_step_memory_plan(s->models[b], &plan, &err);
        aitk_str_free(&err);
        if (st)
            return NAN;
        most = isnan(most) ? plan.total : fmax(most, plan.total);
    }
    return most;
}

void aitk_bench_steps_free(aitk_bench_steps *s)
{
    if (!s)
        return;
    for (size_t b = 0; b < s->n; b++)
        aitk_step_model_free(s->models[b]);
    aitk_free(s);
}
