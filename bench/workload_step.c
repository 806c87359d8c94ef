/* The step-graph adapter (see workload_step.h). A loss that is not finite
 * fails the step: a run that diverges is not a measurement. */
#include "bench/workload_step.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "kernels/backend.h"
#include "kernels/ops.h"
#include "models/aitk_config.h"
#include "models/step.h"

struct aitk_bench_steps {
    const aitk_backend *backend;
    aitk_step_model *model; /* built for the largest bucket, switched per step */
    aitk_mem_account acct;
    long resolutions[AITK_BENCH_MAX_BUCKETS];
    size_t n;
    size_t current;     /* the bucket the model is set to */
    double device_peak; /* NAN until the backend answers mem_info */
    double *losses;
    size_t *loss_bucket; /* the bucket of each loss */
    size_t n_losses, cap_losses, cap_buckets;
};

/* ai-toolkit's optimizer factory lower-cases the name before matching, so
 * "AdamW8Bit" and "adamw8bit" are the same optimizer. */
static bool is_8bit_optimizer(const char *name)
{
    for (const char *p = name; p && *p; p++)
        if (p[0] == '8' && tolower((unsigned char)p[1]) == 'b' &&
            tolower((unsigned char)p[2]) == 'i' && tolower((unsigned char)p[3]) == 't')
            return true;
    return false;
}

/* What an ai-toolkit config decides about the step itself. The base is
 * stored as the cost model reads the config (aitk_config_base_storage): an
 * 8-bit qtype (optimum-quanto qfloat8, ai-toolkit's default with quantize)
 * is fp8, a 4-bit one NF4, no quantize the train dtype. */
static void apply_train_config(aitk_step_setup *setup, const aitk_train_config *t)
{
    if (!t)
        return;
    setup->rank = t->rank;
    setup->alpha = t->alpha;
    setup->batch = t->batch;
    setup->checkpointing = t->checkpointing;
    setup->optimizer = is_8bit_optimizer(t->optimizer) ? AITK_STEP_ADAMW8BIT : AITK_STEP_ADAMW;
    switch (aitk_config_base_storage(t)) {
    case AITK_WEIGHT_FP8: setup->base = AITK_STEP_BASE_FP8; break;
    case AITK_WEIGHT_NF4: setup->base = AITK_STEP_BASE_NF4; break;
    case AITK_WEIGHT_BF16: setup->base = AITK_STEP_BASE_BF16; break;
    default: setup->base = AITK_STEP_BASE_FP32; break;
    }
}

/* Device memory in use now, kept when it is the highest seen. */
static void sample_device(aitk_bench_steps *s)
{
    size_t free_b = 0, total_b = 0;
    if (!s->backend->mem_info || s->backend->mem_info(&free_b, &total_b) || total_b < free_b)
        return;
    double used = (double)(total_b - free_b);
    if (isnan(s->device_peak) || used > s->device_peak)
        s->device_peak = used;
}

static void note_failure(const aitk_mem_account *acct, aitk_bench_alloc_failure *f)
{
    if (!f || !acct->failed_what)
        return;
    f->happened = true;
    snprintf(f->what, sizeof f->what, "%s", acct->failed_what);
    f->tag = aitk_mem_tag_name(acct->failed_tag);
    f->bytes = (double)acct->failed_bytes;
    f->allocated = (double)acct->current_total;
    f->limit = (double)acct->limit;
}

aitk_status aitk_bench_steps_create(const aitk_model_spec *spec, const long *resolutions,
                                    size_t n, const aitk_train_config *train,
                                    const aitk_backend *backend, double limit_bytes,
                                    aitk_bench_steps **out, aitk_bench_alloc_failure *failure,
                                    aitk_str *err)
{
    *out = NULL;
    if (failure)
        memset(failure, 0, sizeof *failure);
    if (n == 0 || n > AITK_BENCH_MAX_BUCKETS || !backend || !backend->ops)
        return AITK_E_INVAL;
    aitk_bench_steps *s = aitk_calloc(1, sizeof *s);
    if (!s)
        return AITK_E_NOMEM;
    s->backend = backend;
    s->device_peak = NAN;
    s->n = n;
    size_t largest = 0;
    for (size_t b = 0; b < n; b++) {
        s->resolutions[b] = resolutions[b];
        if (resolutions[b] > resolutions[largest])
            largest = b;
    }
    /* One model for every bucket, built for the largest: a model per bucket
     * would hold the base weights once per bucket, which no GPU can. */
    aitk_step_setup setup;
    aitk_step_setup_defaults(&setup, spec);
    apply_train_config(&setup, train);
    /* Fixed data, so the loss curve shows whether the step trains. */
    setup.fixed_noise = true;
    setup.resolution = resolutions[largest];
    setup.img_tokens = 0;
    s->acct.limit = limit_bytes > 0 ? (size_t)limit_bytes : 0;
    aitk_status st = aitk_step_model_create(spec, &setup, backend->ops, &s->acct, &s->model,
                                            err);
    if (st) {
        if (st == AITK_E_NOMEM)
            note_failure(&s->acct, failure);
        aitk_bench_steps_free(s);
        return st;
    }
    s->current = largest;
    sample_device(s);
    *out = s;
    return AITK_OK;
}

static aitk_status keep_loss(aitk_bench_steps *s, double loss, size_t bucket)
{
    double *p = aitk_grow(s->losses, sizeof *p, s->n_losses, &s->cap_losses, 64);
    if (!p)
        return AITK_E_NOMEM;
    s->losses = p;
    size_t *q = aitk_grow(s->loss_bucket, sizeof *q, s->n_losses, &s->cap_buckets, 64);
    if (!q)
        return AITK_E_NOMEM;
    s->loss_bucket = q;
    s->losses[s->n_losses] = loss;
    s->loss_bucket[s->n_losses++] = bucket;
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
    /* The switch redraws the bucket's cached latents and RoPE tables, as
     * ai-toolkit loads each batch's latents and diffusers builds the
     * rotary embedding in every forward: it is part of the step's time. */
    aitk_status st = AITK_OK;
    if (b != s->current) {
        st = aitk_step_set_resolution(s->model, s->resolutions[b], err);
        if (st)
            return st;
        s->current = b;
    }
    st = aitk_step_run(s->model, &res);
    /* The loss comes back to the host each step, but the update after it is
     * still queued on a GPU: wait, so the runner's clock times the whole step. */
    if (!st && s->backend->synchronize)
        st = s->backend->synchronize();
    if (st) {
        char why[AITK_BACKEND_ERROR_LEN] = "";
        if (s->backend->last_error)
            s->backend->last_error(why, sizeof why);
        if (why[0])
            aitk_str_appendf(err, "%s", why);
        return st;
    }
    sample_device(s);
    if (!isfinite(res.loss)) {
        aitk_str_appendf(err, "the loss is not finite (%g) at step %ld", res.loss, res.step);
        return AITK_E_INTERNAL;
    }
    info->flops = res.flops;
    info->model_flops = res.model_flops;
    return keep_loss(s, res.loss, b);
}

double aitk_bench_steps_peak(void *user)
{
    const aitk_bench_steps *s = user;
    double peak = (double)s->acct.peak_total;
    if (s->backend->workspace_bytes)
        peak += (double)s->backend->workspace_bytes();
    return peak;
}

double aitk_bench_steps_device_peak(const aitk_bench_steps *s)
{
    return s->device_peak;
}

size_t aitk_bench_steps_lora_params(const aitk_bench_steps *s)
{
    return aitk_step_lora_params(s->model);
}

const aitk_step_setup *aitk_bench_steps_setup(const aitk_bench_steps *s)
{
    return aitk_step_setup_of(s->model);
}

double aitk_bench_steps_planned(const aitk_bench_steps *s)
{
    aitk_step_plan plan;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_step_memory_plan(s->model, &plan, &err);
    aitk_str_free(&err);
    return st ? NAN : plan.total;
}

const double *aitk_bench_steps_losses(const aitk_bench_steps *s, size_t *n)
{
    *n = s->n_losses;
    return s->losses;
}

void aitk_bench_steps_loss_summary(const aitk_bench_steps *s, aitk_bench_loss_summary *out)
{
    double head = 0, tail = 0;
    size_t used = 0;
    bool falls = true;
    for (size_t b = 0; b < s->n; b++) {
        size_t nb = 0, k = 0;
        for (size_t i = 0; i < s->n_losses; i++)
            nb += s->loss_bucket[i] == b;
        if (nb == 0)
            continue;
        const size_t tenth = nb >= 10 ? nb / 10 : 1;
        double h = 0, t = 0;
        for (size_t i = 0; i < s->n_losses; i++) {
            if (s->loss_bucket[i] != b)
                continue;
            h += k < tenth ? s->losses[i] : 0;
            t += k >= nb - tenth ? s->losses[i] : 0;
            k++;
        }
        head += h / (double)tenth;
        tail += t / (double)tenth;
        falls = falls && nb > 1 && t < h;
        used++;
    }
    *out = (aitk_bench_loss_summary){
        .first_tenth_mean = used ? head / (double)used : NAN,
        .last_tenth_mean = used ? tail / (double)used : NAN,
        .falls = used > 0 && falls,
    };
}

void aitk_bench_steps_free(aitk_bench_steps *s)
{
    if (!s)
        return;
    aitk_step_model_free(s->model);
    aitk_free(s->losses);
    aitk_free(s->loss_bucket);
    aitk_free(s);
}
