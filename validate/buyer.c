/* The buyer section (see buyer.h). Targets come from the model descriptions
 * (models/<id>.yaml targets:), predictions from the cost model, both read
 * here and never repeated. */
#include "validate/buyer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "common/str.h"
#include "models/cost.h"
#include "models/gpudb.h"
#include "models/predict.h"
#include "models/spec.h"
#include "models/trainers.h"
#include "reports/fields.h"
#include "validate/probes/gpu_util.h"
#include "validate/probes/workloads.h"

/* What the GPU side knows for every model: the first detected GPU's row in
 * the GPU table, or why there is none. */
typedef struct gpu_view {
    const char *name;          /* as the probe saw it; NULL: no GPU detected */
    const aitk_gpu_spec *spec; /* NULL: no prediction possible */
    aitk_str why;              /* the reason when spec is NULL */
} gpu_view;

/* The model's entry on the GPU (gpu true: any backend but the CPU) or on
 * the CPU: a GPU machine reports both, GPU first. */
static const cJSON *workload_of(const cJSON *workloads, const char *model, bool gpu)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, workloads)
    if (!strcmp(aitk_field_str(w, "name"), model) &&
        (strcmp(aitk_field_str(w, "backend"), "cpu") != 0) == gpu)
        return w;
    return NULL;
}

/* "FLUX.1-dev LoRA" from "FLUX.1-dev (black-forest-labs/FLUX.1-dev)". */
static aitk_status add_title(cJSON *e, const aitk_model_spec *spec)
{
    const char *paren = strstr(spec->title, " (");
    size_t len = paren ? (size_t)(paren - spec->title) : strlen(spec->title);
    aitk_str t = AITK_STR_INIT;
    aitk_str_appendf(&t, "%.*s LoRA", (int)len, spec->title);
    aitk_status st = aitk_str_status(&t) || !cJSON_AddStringToObject(e, "title", t.ptr)
                         ? AITK_E_NOMEM : AITK_OK;
    aitk_str_free(&t);
    return st;
}

static aitk_status add_targets(cJSON *e, const aitk_model_spec *spec)
{
    const aitk_model_targets *t = &spec->targets;
    return cJSON_AddNumberToObject(e, "target_minutes", t->minutes_per_1000) &&
                   cJSON_AddNumberToObject(e, "target_gb", t->min_vram_gb) &&
                   cJSON_AddStringToObject(e, "target_gpu", t->recommended_gpu)
               ? AITK_OK : AITK_E_NOMEM;
}

/* A GPU workload that produced a time, or that found the job does not fit
 * (memory.fits false: an allocation failed on the device). */
static bool measured_on_gpu(const cJSON *w)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "time_per_1000_steps");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(w, "memory");
    return w && strcmp(aitk_field_str(w, "backend"), "cpu") &&
           (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(t, "measured_s")) ||
            cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(m, "fits")));
}

/* The measurement answers; its memory check says whether it fit. */
static aitk_status add_measured(cJSON *e, const cJSON *w)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "time_per_1000_steps");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(w, "memory");
    const char *mem = aitk_field_str(m, "status");
    cJSON *fits = !strcmp(mem, "fail") || cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(m, "fits"))
                      ? cJSON_CreateFalse()
                  : !strcmp(mem, "pass") || !strcmp(mem, "warn") ? cJSON_CreateTrue()
                                                                 : cJSON_CreateNull();
    if (!fits || !cJSON_AddItemToObject(e, "fits", fits)) {
        cJSON_Delete(fits);
        return AITK_E_NOMEM;
    }
    const double s = aitk_json_number(t, "measured_s", NAN);
    return (isfinite(s) ? cJSON_AddNumberToObject(e, "minutes_per_1000", s / 60) != NULL
                        : cJSON_AddNullToObject(e, "minutes_per_1000") != NULL) &&
                   cJSON_AddStringToObject(e, "source", "measured") &&
                   cJSON_AddStringToObject(e, "gpu", aitk_field_str(w, "device"))
               ? AITK_OK : AITK_E_NOMEM;
}

/* The model's default job as `predict` takes it: an ai-toolkit job with
 * its trainer's settings (models/trainers.yaml), where the file loaded, on
 * this machine's operating system: the report is of the machine the job
 * would run on, and on Windows PyTorch's wheels have no flash attention
 * (models/cost.h aitk_host_os). */
static aitk_workload default_job(const aitk_model_spec *spec, const aitk_trainer *trainer)
{
    aitk_workload w;
    aitk_workload_defaults(&w, spec);
    if (trainer)
        aitk_workload_set_trainer(&w, trainer);
#ifdef _WIN32
    w.os = AITK_OS_WINDOWS;
#endif
    return w;
}

/* What the trainer's code does to the model that the figure beside it
 * leaves out: what neither the GPU step nor the prediction runs, and, beside
 * a measured figure, the attention mask or Windows' attention kernel that
 * the prediction counts but this project's own GPU step does not run. */
static aitk_status add_not_modelled(cJSON *e, const aitk_model_spec *spec,
                                    const aitk_trainer *trainer, bool measured)
{
    aitk_workload w = default_job(spec, trainer);
    aitk_str text = AITK_STR_INIT;
    if (measured && w.attention_mask != AITK_MASK_NONE)
        aitk_str_appendf(&text,
                         "%s gives every attention call of this model a mask (%s), which the "
                         "GPU step measured here does not: PyTorch then runs its "
                         "memory-efficient kernel and converts the mask each call, so the real "
                         "job's steps take longer (a prediction counts it)",
                         w.trainer ? w.trainer : "the trainer",
                         aitk_attention_mask_name(w.attention_mask));
    else if (measured && w.os == AITK_OS_WINDOWS)
        aitk_str_append(&text, "PyTorch on Windows has no flash attention (its wheels are built "
                               "without it), so the trainer's attention runs the "
                               "memory-efficient kernel, which the GPU step measured here does "
                               "not: the real job's steps take longer (a prediction counts it)");
    if (w.not_modelled)
        aitk_str_appendf(&text, "%s%s", text.len ? "; " : "", w.not_modelled);
    aitk_status st = aitk_str_status(&text);
    if (!st && text.len &&
        !cJSON_AddStringToObject(e, "not_modelled", aitk_str_cstr(&text)))
        st = AITK_E_NOMEM;
    aitk_str_free(&text);
    return st;
}

static aitk_status add_predicted(cJSON *e, const aitk_model_spec *spec, const gpu_view *g,
                                 const aitk_cost_params *params, const aitk_trainer *trainer,
                                 aitk_str *err)
{
    aitk_workload w = default_job(spec, trainer);
    aitk_prediction p;
    aitk_status st = aitk_cost_predict(&w, params, g->spec, &p, err);
    if (st)
        return st;
    /* No time for a job that does not fit: it would never run that fast. */
    bool ok = cJSON_AddBoolToObject(e, "fits", p.fits) &&
              (p.fits ? cJSON_AddNumberToObject(e, "minutes_per_1000",
                                                aitk_predict_minutes_per_1000(&p)) != NULL
                      : cJSON_AddNullToObject(e, "minutes_per_1000") != NULL) &&
              cJSON_AddStringToObject(e, "source", "predicted") &&
              cJSON_AddStringToObject(e, "gpu", g->name) &&
              cJSON_AddStringToObject(e, "os", aitk_host_os_name(w.os));
    return ok ? AITK_OK : AITK_E_NOMEM;
}

static aitk_status add_none(cJSON *e, const char *gpu, const char *reason)
{
    bool ok = cJSON_AddNullToObject(e, "fits") && cJSON_AddNullToObject(e, "minutes_per_1000") &&
              cJSON_AddStringToObject(e, "source", "none") &&
              (gpu ? cJSON_AddStringToObject(e, "gpu", gpu) != NULL
                   : cJSON_AddNullToObject(e, "gpu") != NULL) &&
              cJSON_AddStringToObject(e, "reason", reason);
    return ok ? AITK_OK : AITK_E_NOMEM;
}

/* The CPU run's time, kept apart so nobody reads it as a GPU figure. */
static aitk_status add_cpu_figure(cJSON *e, const cJSON *w)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "time_per_1000_steps");
    double s = aitk_json_number(t, "measured_s", NAN);
    if (!w || strcmp(aitk_field_str(w, "backend"), "cpu") || !isfinite(s))
        return AITK_OK;
    return cJSON_AddNumberToObject(e, "cpu_minutes_per_1000", s / 60) ? AITK_OK : AITK_E_NOMEM;
}

static aitk_status model_entry(const char *model, const cJSON *workloads, const gpu_view *g,
                               const aitk_cost_params *params, const aitk_trainer *trainer,
                               cJSON *e)
{
    aitk_model_spec *spec = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = cJSON_AddStringToObject(e, "model", model) ? AITK_OK : AITK_E_NOMEM;
    if (!st)
        st = aitk_model_spec_load(model, false, &spec, &err);
    if (!st)
        st = add_title(e, spec);
    if (!st)
        st = add_targets(e, spec);
    const cJSON *w = workload_of(workloads, model, true);
    const bool measured = !st && measured_on_gpu(w), predicted = !st && !measured && g->spec;
    if (measured)
        st = add_measured(e, w);
    else if (predicted)
        st = add_predicted(e, spec, g, params, trainer, &err);
    else if (!st)
        st = add_none(e, g->name, aitk_str_cstr(&g->why));
    if (st && st != AITK_E_NOMEM) /* a description or prediction that fails is said */
        st = add_none(e, g->name, aitk_str_cstr(&err));
    if (!st && (measured || predicted))
        st = add_not_modelled(e, spec, trainer, measured);
    if (!st)
        st = add_cpu_figure(e, workload_of(workloads, model, false));
    aitk_model_spec_free(spec);
    aitk_str_free(&err);
    return st;
}

/* The first detected GPU and its row in the GPU table. */
static aitk_status view_gpu(const cJSON *env, const aitk_gpudb *db, gpu_view *g)
{
    const cJSON *dev = cJSON_GetArrayItem(aitk_gpu_devices(env), 0);
    if (!dev) {
        aitk_str_append(&g->why, "no GPU was detected, so there is nothing to measure or "
                                 "predict for this machine; `aitk-validate predict` gives the "
                                 "figures for other GPUs");
        return aitk_str_status(&g->why);
    }
    g->name = *aitk_field_str(dev, "name") ? aitk_field_str(dev, "name") : "unnamed GPU";
    double gib = aitk_gpu_vram_gib(dev);
    aitk_str err = AITK_STR_INIT;
    if (!db || aitk_gpudb_find_probed(db, g->name, gib > 0 ? gib * 1073741824.0 : 0, &g->spec,
                                      &err)) {
        g->spec = NULL;
        aitk_str_appendf(&g->why, "%s is not in the GPU table, so no prediction: %s", g->name,
                         db ? aitk_str_cstr(&err) : "the GPU table could not be read");
    }
    aitk_str_free(&err);
    return aitk_str_status(&g->why);
}

aitk_status aitk_buyer_build(const cJSON *workloads, const cJSON *env,
                             const aitk_cost_params *params, cJSON **out)
{
    *out = cJSON_CreateArray();
    aitk_cost_params *own = NULL;
    aitk_gpudb *db = NULL;
    gpu_view g = {.why = AITK_STR_INIT};
    aitk_str err = AITK_STR_INIT;
    if (!params && !aitk_cost_params_load(&own, &err))
        params = own;
    aitk_gpudb_load(&db, &err);
    /* Without the trainers file the figures are the model's bare defaults,
     * as before it existed; with it, the job `predict` would take. */
    aitk_trainers *trainers = NULL;
    aitk_trainers_load(&trainers, &err);
    const aitk_trainer *trainer = trainers ? trainers->fallback : NULL;
    aitk_status st = *out ? view_gpu(env, params ? db : NULL, &g) : AITK_E_NOMEM;
    for (const char *const *m = aitk_reference_models; *m && !st; m++) {
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(*out, e)) {
            cJSON_Delete(e);
            st = AITK_E_NOMEM;
        } else {
            st = model_entry(*m, workloads, &g, params, trainer, e);
        }
    }
    aitk_gpudb_free(db);
    aitk_trainers_free(trainers);
    aitk_cost_params_free(own);
    aitk_str_free(&g.why);
    aitk_str_free(&err);
    if (st) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return st;
}
