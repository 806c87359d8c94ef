/* `predict --calibrate`: the step scale of each model from the report's
 * completed cuda workloads (see predict_calibrate.h). The workload is
 * predicted in the configuration it ran (its "configuration" object, else the
 * model's defaults) on the measured GPU with the efficiencies already
 * calibrated, so the scale holds only what the efficiencies do not explain:
 * launch gaps, Python, kernels the model does not count. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "models/predict_calibrate.h"
#include "models/predict_calibrate_internal.h"
#include "models/trainers.h"

/* A whole number a training setup can hold (a resolution, a batch, a rank). */
static bool setting_count(const cJSON *n, long *out)
{
    if (!cJSON_IsNumber(n) || !(n->valuedouble >= 0 && n->valuedouble <= 1e6))
        return false;
    *out = (long)n->valuedouble;
    return true;
}

/* The configuration a workload ran, from its optional "configuration" object
 * (the keys of predict --json's "workload"); what it lacks is the model's
 * ai-toolkit default, and `said` lists which is which. A key present with a
 * value the cost model cannot take is named in *bad. */
static aitk_status workload_configuration(const cJSON *cfg, aitk_workload *w, aitk_str *said,
                                          const char **bad)
{
    aitk_str from = AITK_STR_INIT;
    *bad = NULL;
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(cfg, "resolutions"), *r;
    if (res) {
        w->n_resolutions = 0;
        cJSON_ArrayForEach(r, res)
        {
            if (w->n_resolutions == sizeof w->resolutions / sizeof *w->resolutions ||
                !setting_count(r, &w->resolutions[w->n_resolutions++]))
                *bad = "resolutions";
        }
        aitk_str_append(&from, ", resolutions");
    }
    static const char *const counts[] = {"batch", "gradient_accumulation", "rank"};
    long *const count_slots[] = {&w->batch, &w->accumulation, &w->rank};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(cfg, counts[i]);
        if (n && !setting_count(n, count_slots[i]))
            *bad = counts[i];
        if (n)
            aitk_str_appendf(&from, ", %s", counts[i]);
    }
    const cJSON *alpha = cJSON_GetObjectItemCaseSensitive(cfg, "alpha");
    if (cJSON_IsNumber(alpha)) {
        w->alpha = alpha->valuedouble;
        aitk_str_append(&from, ", alpha");
    }
    const char *dtype = json_text(cfg, "base_dtype");
    if (dtype) {
        aitk_weight_dtype d = AITK_WEIGHT_BF16;
        if (aitk_weight_dtype_parse(dtype, &d))
            *bad = "base_dtype";
        aitk_workload_set_base(w, d);
        aitk_str_append(&from, ", base_dtype");
    }
    const char *te = json_text(cfg, "text_encoder_dtype");
    if (te) {
        if (aitk_weight_dtype_parse(te, &w->te_dtype))
            *bad = "text_encoder_dtype";
        aitk_str_append(&from, ", text_encoder_dtype");
    }
    if (json_text(cfg, "optimizer")) {
        w->optimizer = json_text(cfg, "optimizer");
        aitk_str_append(&from, ", optimizer");
    }
    static const char *const flags[] = {"gradient_checkpointing", "cache_latents",
                                        "cache_text_embeddings"};
    bool *const slots[] = {&w->checkpointing, &w->cache_latents, &w->cache_text};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(cfg, flags[i]);
        if (cJSON_IsBool(b)) {
            *slots[i] = cJSON_IsTrue(b);
            aitk_str_appendf(&from, ", %s", flags[i]);
        }
    }
    if (from.len)
        aitk_str_appendf(said, "%s from the report, the rest the model's defaults",
                         aitk_str_cstr(&from) + 2);
    else
        aitk_str_append(said, "the model's defaults (the report does not record the "
                              "workload's configuration)");
    aitk_str_free(&from);
    return *bad ? AITK_E_PARSE : aitk_str_status(said);
}

static aitk_status add_step_scale(aitk_calibration *c, const cJSON *w, const char *model,
                                  const aitk_cost_params *p, const aitk_trainer *trainer,
                                  aitk_str *err)
{
    const double measured = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(w, "step_time_s"), "median")->valuedouble;
    if (!(measured > 0) || !isfinite(measured)) {
        aitk_str_appendf(err, "%s: workload %s has step_time_s.median %g: a measured step must "
                              "take time", c->report_path, model, measured);
        return AITK_E_RANGE;
    }
    aitk_model_spec *spec = NULL;
    aitk_str why = AITK_STR_INIT;
    aitk_status st = aitk_model_spec_load(model, false, &spec, &why);
    aitk_str_free(&why);
    if (st == AITK_E_NOMEM)
        return st;
    if (st) {
        aitk_calib_note_ignored(c, "workload %s (not a model in models/)", model);
        return AITK_OK;
    }
    aitk_step_scale *s = &c->scales[c->n_scales];
    memset(s, 0, sizeof *s);
    aitk_workload wl;
    aitk_workload_defaults(&wl, spec);
    const char *bad = NULL;
    st = workload_configuration(cJSON_GetObjectItemCaseSensitive(w, "configuration"), &wl,
                                &s->configuration, &bad);
    if (st == AITK_E_PARSE)
        aitk_str_appendf(err, "%s: workload %s: configuration.%s holds a value the cost model "
                              "cannot take (counts are whole numbers from 1; dtypes are bf16, "
                              "fp8 or nf4)", c->report_path, model, bad);
    /* The measured job is predicted as predict predicts a job it is given:
     * with the default trainer's settings (models/trainers.yaml), so that
     * the scale makes predict's answer for this job the measured step. */
    aitk_prediction pred;
    aitk_str perr = AITK_STR_INIT;
    if (!st)
        aitk_workload_set_trainer(&wl, trainer);
    /* This project's GPU step passes no attention mask where the trainer's
     * code does (ai-toolkit's Chroma and OmniGen2): the scale is of the
     * unmasked step, and the mask's price stays on top of it. */
    wl.attention_mask = AITK_MASK_NONE;
    if (!st && (st = aitk_cost_predict(&wl, p, c->gpu, &pred, &perr)) != AITK_OK &&
        st != AITK_E_NOMEM)
        aitk_str_appendf(err, "%s: workload %s: %s", c->report_path, model, aitk_str_cstr(&perr));
    aitk_str_free(&perr);
    aitk_model_spec_free(spec);
    if (!st) {
        s->model = aitk_strdup(model);
        s->measured_s = measured;
        s->predicted_s = pred.step_s;
        s->scale = measured / pred.step_s;
        st = s->model ? AITK_OK : AITK_E_NOMEM;
    }
    if (!st && !(s->scale <= AITK_STEP_SCALE_MAX && s->scale >= 1 / AITK_STEP_SCALE_MAX)) {
        aitk_str_appendf(err, "%s: workload %s took %.4g s/step where the model predicts %.4g on "
                              "%s: a factor %.3g is beyond %g either way, so the report's workload "
                              "is not the job the model predicts",
                         c->report_path, model, measured, pred.step_s, c->gpu->name, s->scale,
                         AITK_STEP_SCALE_MAX);
        st = AITK_E_RANGE;
    }
    c->n_scales++; /* counted also on failure, so that free releases its string */
    return st;
}

/* A workload that ran on another GPU than the one calibrated does not tell
 * how the model misses on this one. */
static bool workload_on_measured_gpu(const aitk_calibration *c, const cJSON *w,
                                     const aitk_gpudb *db)
{
    const char *dev = json_text(w, "device");
    const aitk_gpu_spec *g = NULL;
    return !dev || strcmp(dev, c->device_name) == 0 ||
           (aitk_gpudb_find(db, dev, &g, NULL) == AITK_OK && g == c->gpu);
}

aitk_status aitk_calib_steps(aitk_calibration *c, const cJSON *report, const aitk_gpudb *db,
                             const aitk_cost_params *p, aitk_str *err)
{
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(report, "workloads");
    c->scales = aitk_calloc((size_t)cJSON_GetArraySize(ws) + 1, sizeof *c->scales);
    if (!c->scales)
        return AITK_E_NOMEM;
    aitk_trainers *trainers = NULL; /* read once, for every workload's job */
    aitk_status st = aitk_trainers_load(&trainers, err);
    const cJSON *w;
    cJSON_ArrayForEach(w, ws)
    {
        if (st)
            break;
        if (!aitk_calib_workload_is_used(w)) {
            /* A completed GPU run whose step time cannot be read is said, not
             * passed over in silence. */
            if (text_is(json_text(w, "status"), "completed") &&
                text_is(json_text(w, "backend"), "cuda"))
                aitk_calib_note_ignored(c, "workload %s (step_time_s.median is missing or not "
                                           "a number)",
                                        json_text(w, "name") ? json_text(w, "name") : "(unnamed)");
            continue;
        }
        const char *model = json_text(w, "name") ? json_text(w, "name") : "(unnamed)";
        const char *size = json_text(cJSON_GetObjectItemCaseSensitive(w, "configuration"), "size");
        if (!workload_on_measured_gpu(c, w, db))
            aitk_calib_note_ignored(c, "workload %s (ran on %s, another GPU)", model,
                                    json_text(w, "device"));
        else if (text_is(size, "tiny"))
            aitk_calib_note_ignored(c, "workload %s (a tiny configuration, not the full model)",
                                    model);
        else if (aitk_calibration_step_scale(c, model))
            aitk_calib_note_ignored(c, "workload %s (a second run of the model; the first is "
                                       "used)", model);
        else
            st = add_step_scale(c, w, model, p, trainers->fallback, err);
    }
    aitk_trainers_free(trainers);
    return st;
}
