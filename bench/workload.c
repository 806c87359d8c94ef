/* A reference workload from model id to report entry (see workload.h).
 *
 * The training-step graph (models/step.h) builds a model for one resolution,
 * so the runner's buckets are one model each, built before timing starts,
 * each with its own memory account: the peak reported is the largest
 * bucket's, which is what one model cycling through buckets needs. */
#include "bench/workload.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/runner.h"
#include "common/alloc.h"
#include "models/aitk_config.h"
#include "models/spec.h"

#ifdef AITK_BENCH_HAVE_STEP
#include "bench/workload_step.h"
#endif

bool aitk_bench_have_step_graph(void)
{
#ifdef AITK_BENCH_HAVE_STEP
    return true;
#else
    return false;
#endif
}

aitk_status aitk_bench_workload_skipped(const char *model_id, const char *backend,
                                        const char *reason, cJSON **entry)
{
    cJSON *w = cJSON_CreateObject();
    if (!w || !cJSON_AddStringToObject(w, "name", model_id) ||
        !cJSON_AddStringToObject(w, "status", "skipped") ||
        (backend && !cJSON_AddStringToObject(w, "backend", backend)) ||
        !cJSON_AddStringToObject(w, "message", reason)) {
        cJSON_Delete(w);
        *entry = NULL;
        return AITK_E_NOMEM;
    }
    *entry = w;
    return AITK_OK;
}

static aitk_status failed_entry(const char *model_id, const char *backend, const char *why,
                                cJSON **entry)
{
    aitk_status st = aitk_bench_workload_skipped(model_id, backend, why, entry);
    if (!st)
        cJSON_ReplaceItemInObjectCaseSensitive(*entry, "status", cJSON_CreateString("failed"));
    return st;
}

/* FLOPs per step of each bucket by the cost model, without the text
 * encoders (the step graph trains on cached conditioning). `given`: the
 * caller's cost.yaml, or NULL to load it here. */
static aitk_status cost_flops(const aitk_model_spec *spec, const long *res, size_t n,
                              const aitk_cost_params *given, double *flops, aitk_str *err)
{
    aitk_cost_params *loaded = NULL;
    aitk_status st = given ? AITK_OK : aitk_cost_params_load(&loaded, err);
    if (st)
        return st;
    const aitk_cost_params *p = given ? given : loaded;
    aitk_workload w;
    aitk_workload_defaults(&w, spec);
    for (size_t b = 0; b < n && !st; b++) {
        aitk_step_work work;
        w.resolutions[0] = res[b];
        if ((st = aitk_cost_work(&w, p, res[b], &work)))
            break;
        flops[b] = 0;
        for (int k = 0; k < AITK_WORK_FLOP_TERMS; k++)
            if (k != AITK_WORK_CONDITIONING)
                flops[b] += work.flops[k];
    }
    aitk_cost_params_free(loaded);
    return st;
}


static aitk_status add_configuration(cJSON *w, const aitk_bench_plan *plan, bool tiny)
{
    cJSON *c = cJSON_AddObjectToObject(w, "configuration");
    cJSON *r = c ? cJSON_AddArrayToObject(c, "resolutions") : NULL;
    if (!r || !cJSON_AddStringToObject(c, "size", tiny ? "tiny" : "full") ||
        !cJSON_AddNumberToObject(c, "batch", (double)plan->batch) ||
        !cJSON_AddNumberToObject(c, "time_limit_s", plan->time_limit_s))
        return AITK_E_NOMEM;
    for (size_t b = 0; b < plan->n_buckets; b++)
        if (!cJSON_AddItemToArray(r, cJSON_CreateNumber((double)plan->resolutions[b])))
            return AITK_E_NOMEM;
    if (tiny && !cJSON_AddStringToObject(c, "note", "the model's tiny_dims (same architecture "
                                         "at CPU-test size) so that --full finishes in minutes "
                                         "on a few cores; CPU figures, not GPU predictions"))
        return AITK_E_NOMEM;
    return AITK_OK;
}

/* With --config the step follows the user's LoRA, batch, optimizer and
 * precision choices, but not their resolutions: full-size buckets on a CPU
 * would take hours. Said where a reader of the report looks. */
static aitk_status add_config_note(cJSON *w)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(w, "configuration");
    return c && cJSON_AddStringToObject(c, "from_config",
                                        "rank, alpha, batch, optimizer, base precision and "
                                        "checkpointing from --config; resolutions are the CPU "
                                        "backend's small buckets, not the config's")
               ? AITK_OK
               : AITK_E_NOMEM;
}

/* The cost model's memory plan next to the measured peak, so every run
 * checks the memory model (DESIGN: prediction error on every run). */
static aitk_status add_prediction(cJSON *w, double peak, double planned)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(w, "memory");
    if (!m || !isfinite(planned) || !(planned > 0))
        return AITK_OK;
    if (!cJSON_AddNumberToObject(m, "predicted_bytes", planned))
        return AITK_E_NOMEM;
    if (isfinite(peak) &&
        !cJSON_AddNumberToObject(m, "prediction_error_pct", 100.0 * (peak - planned) / planned))
        return AITK_E_NOMEM;
    return AITK_OK;
}

static aitk_status run_cpu(const aitk_bench_config *cfg, const aitk_bench_request *req,
                           const aitk_model_spec *spec, cJSON **entry)
{
    const aitk_bench_backend_cfg *bc = &cfg->cpu;
    aitk_bench_plan plan = {
        .name = req->model_id,
        .batch = req->train ? req->train->batch
                 : spec->defaults.batch > 0 ? spec->defaults.batch : 1,
        .timed_steps = req->steps > 0 && !req->full ? req->steps : bc->standard_steps,
        .full = req->full,
        .requested_steps = req->full && req->steps > 0 ? req->steps : bc->full_steps,
        .time_limit_s = bc->time_limit_s,
        .warmup = aitk_warmup_default,
        .progress = req->progress,
    };
    if (!req->full)
        plan.requested_steps = 1000;
    const long *res = bc->n_resolutions ? bc->resolutions : spec->defaults.resolutions;
    plan.n_buckets = bc->n_resolutions ? bc->n_resolutions : spec->defaults.n_resolutions;
    memcpy(plan.resolutions, res, plan.n_buckets * sizeof *res);
    aitk_str err = AITK_STR_INIT, title = AITK_STR_INIT;
    aitk_status st = cost_flops(spec, plan.resolutions, plan.n_buckets, req->cost_params,
                                plan.flops_per_step, &err);
    if (st == AITK_E_NOMEM)
        return st;
    aitk_str_clear(&err); /* no cost figures: the step graph's own count still applies */
#ifdef AITK_BENCH_HAVE_STEP
    aitk_bench_steps *steps = NULL;
    st = aitk_bench_steps_create(spec, plan.resolutions, plan.n_buckets, req->train, &steps, &err);
    plan.step = aitk_bench_steps_run;
    plan.peak_bytes = aitk_bench_steps_peak;
    plan.user = steps;
    if (st) {
        aitk_str msg = AITK_STR_INIT;
        aitk_str_appendf(&msg, "could not build the training step: %s%s%s", aitk_strerror(st),
                         err.len ? ": " : "", aitk_str_cstr(&err));
        st = st == AITK_E_NOMEM ? st : failed_entry(req->model_id, "cpu", msg.ptr, entry);
        aitk_str_free(&msg);
        aitk_str_free(&err);
        return st;
    }
    aitk_bench_result r;
    st = aitk_bench_run(&plan, &r);
    double planned = st ? NAN : aitk_bench_steps_planned(steps);
    double lora_params = (double)aitk_bench_steps_lora_params(steps);
    aitk_bench_steps_free(steps);
    if (st) {
        aitk_str_free(&err);
        return st;
    }
    aitk_bench_targets t = {.cpu_figures = true, .target_s = NAN, .vram_bytes = NAN,
                            .documented_min_bytes = NAN};
    aitk_str_appendf(&title, "%s LoRA r%ld, small CPU configuration%s", spec->title,
                     req->train ? req->train->rank : spec->defaults.rank,
                     req->train ? " (from --config)" : "");
    st = aitk_bench_result_json(&plan, &r, aitk_str_cstr(&title), "cpu", req->device->name, &t,
                                entry);
    if (!st && (st = add_configuration(*entry, &plan, true)) == AITK_OK && req->train)
        st = add_config_note(*entry);
    if (!st && !cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(*entry, "configuration"),
                                        "lora_params", lora_params))
        st = AITK_E_NOMEM;
    if (!st)
        st = add_prediction(*entry, r.peak_bytes, planned);
    if (st && *entry) {
        cJSON_Delete(*entry);
        *entry = NULL;
    }
    aitk_bench_result_free(&r);
#else
    (void)title;
    st = aitk_bench_workload_skipped(req->model_id, "cpu",
                                     "not run: this build has no training-step graph "
                                     "(models/step.h) yet", entry);
#endif
    aitk_str_free(&title);
    aitk_str_free(&err);
    return st;
}

aitk_status aitk_bench_workload_run(const aitk_bench_config *cfg, const aitk_bench_request *req,
                                    cJSON **entry)
{
    *entry = NULL;
    if (!cfg || !req || !req->model_id || !req->device || !req->device->backend)
        return AITK_E_INVAL;
    if (strcmp(req->device->backend, "cpu") != 0)
        /* Hook: the CUDA plugin runs the full-size model here (cfg->cuda), with
         * targets from aitk_bench_scaled_target and the GPU's VRAM. */
        return aitk_bench_workload_skipped(req->model_id, req->device->backend,
                                           "not run: the GPU backend (CUDA plugin) is not part "
                                           "of this build yet; use --cpu for CPU figures",
                                           entry);
    aitk_model_spec *spec = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_model_spec_load(req->model_id, cfg->cpu.tiny, &spec, &err);
    if (st) {
        aitk_str msg = AITK_STR_INIT;
        aitk_str_appendf(&msg, "could not load the model spec: %s", aitk_str_cstr(&err));
        st = st == AITK_E_NOMEM ? st : failed_entry(req->model_id, "cpu", msg.ptr, entry);
        aitk_str_free(&msg);
        aitk_str_free(&err);
        return st;
    }
    aitk_str_free(&err);
    st = run_cpu(cfg, req, spec, entry);
    aitk_model_spec_free(spec);
    return st;
}

static aitk_status target_gpu(const aitk_gpudb *db, const char *text, long *count,
                              const aitk_gpu_spec **out, aitk_str *source)
{
    /* "2 x A100": a count, then the GPU. */
    char *end = NULL;
    long n = strtol(text, &end, 10);
    const char *name = text;
    *count = 1;
    if (end != text && n > 0) {
        while (*end == ' ')
            end++;
        if (*end == 'x' || *end == 'X') {
            *count = n;
            name = end + 1;
            while (*name == ' ')
                name++;
        }
    }
    aitk_status st = aitk_gpudb_find(db, name, out, NULL);
    if (st == AITK_E_INVAL) {
        /* Ambiguous: the first match in database order, said out loud. */
        for (size_t i = 0; i < db->count && st; i++) {
            const aitk_gpu_spec *g = NULL;
            if (strstr(db->gpus[i].name, name) &&
                !aitk_gpudb_find(db, db->gpus[i].name, &g, NULL)) {
                *out = g;
                st = AITK_OK;
                aitk_str_appendf(source, "; '%s' read as %s", name, g->name);
            }
        }
    }
    return st;
}

aitk_status aitk_bench_scaled_target(const aitk_model_spec *spec, const aitk_gpudb *db,
                                     const aitk_gpu_spec *gpu, const aitk_cost_params *params,
                                     double *target_s, const aitk_gpu_spec **tgpu,
                                     aitk_str *source, aitk_str *err)
{
    *target_s = NAN;
    *tgpu = NULL;
    const aitk_model_targets *t = &spec->targets;
    if (!t->recommended_gpu || !(t->minutes_per_1000 > 0)) {
        aitk_str_append(err, "the model documents no time target");
        return AITK_E_NOTFOUND;
    }
    aitk_str_append(source, t->source ? t->source : "model spec targets");
    long count = 1;
    const aitk_gpu_spec *ref = NULL;
    aitk_status st = target_gpu(db, t->recommended_gpu, &count, &ref, source);
    if (st) {
        aitk_str_appendf(err, "the target GPU '%s' is not in bench/gpus.yaml",
                         t->recommended_gpu);
        return st;
    }
    aitk_workload w;
    aitk_workload_defaults(&w, spec);
    w.n_resolutions = spec->defaults.n_resolutions ? spec->defaults.n_resolutions : 1;
    if (spec->defaults.n_resolutions)
        memcpy(w.resolutions, spec->defaults.resolutions, w.n_resolutions * sizeof(long));
    aitk_prediction here, there;
    if ((st = aitk_cost_predict(&w, params, gpu, &here, err)) ||
        (st = aitk_cost_predict(&w, params, ref, &there, err)))
        return st;
    if (!(there.step_s > 0))
        return AITK_E_INTERNAL;
    *target_s = t->minutes_per_1000 * 60.0 * (double)count * here.step_s / there.step_s;
    *tgpu = ref;
    aitk_str_appendf(source, "; scaled from %s%s to %s by the cost model's step times", 
                     count > 1 ? "one of the " : "", ref->name, gpu->name);
    if (count > 1)
        aitk_str_appendf(source, " (assumption: %ld GPUs in data parallel, so one GPU takes "
                         "%ld times as long)", count, count);
    return aitk_str_status(source);
}
