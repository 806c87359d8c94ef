/* `predict --reported`: the table of reported against predicted speeds, and
 * its JSON form. Peaks are compared in decimal GB, as the sources give them. */
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/str.h"
#include "models/reported.h"

static bool within_sanity(double ratio)
{
    return ratio <= AITK_REPORTED_SANITY_FACTOR && ratio >= 1.0 / AITK_REPORTED_SANITY_FACTOR;
}

/* "512/768/1024 px b1 r16 fp8, text cached, ckpt": the setup the row predicts. */
static void describe_setup(aitk_str *o, const aitk_workload *w)
{
    for (size_t i = 0; i < w->n_resolutions; i++)
        aitk_str_appendf(o, "%s%ld", i ? "/" : "", w->resolutions[i]);
    if (w->forward_only) {
        aitk_str_appendf(o, " px b%ld %s, generation (1 forward)", w->batch,
                         aitk_weight_dtype_name(w->base_dtype));
        return;
    }
    aitk_str_appendf(o, " px b%ld r%ld %s, text %s%s", w->batch, w->rank,
                     aitk_weight_dtype_name(w->base_dtype),
                     w->cache_text ? "cached" : aitk_weight_dtype_name(w->te_dtype),
                     w->checkpointing ? ", ckpt" : "");
}

void aitk_reported_print_text(FILE *out, const aitk_reported_row *rows, size_t n)
{
    size_t ok[2] = {0, 0}, count[2] = {0, 0}, peaks = 0; /* [0] training, [1] generation */
    fputs("Predictions for jobs people reported (models/reported_speeds.yaml)\n"
          "ratio = predicted / reported seconds per step\n\n", out);
    fprintf(out, "  %-24s %-13s %-10s %-42s %8s %9s %6s  %s\n", "report", "GPU", "model",
            "setup", "reported", "predicted", "ratio", "peak GB reported / predicted");
    for (size_t i = 0; i < n; i++) {
        const aitk_reported_row *row = &rows[i];
        const aitk_reported_speed *r = row->report;
        aitk_str setup = AITK_STR_INIT;
        describe_setup(&setup, &row->workload);
        fprintf(out, "  %-24s %-13s %-10s %-42s %7.2fs %8.2fs %6.2f  ", r->id, r->gpu->name,
                r->model_id, aitk_str_cstr(&setup), r->seconds_per_step, row->pred.step_s,
                row->ratio);
        if (r->peak_gb > 0) {
            fprintf(out, "%.1f / %.1f\n", r->peak_gb, row->pred.memory.total / 1e9);
            peaks++;
        } else {
            fputs("-\n", out);
        }
        aitk_str_free(&setup);
        const int kind = r->setup.inference ? 1 : 0;
        ok[kind] += within_sanity(row->ratio);
        count[kind]++;
    }
    fprintf(out, "\n  Within a factor %.1f of the reported step time: %zu of %zu training jobs",
            AITK_REPORTED_SANITY_FACTOR, ok[0], count[0]);
    if (count[1])
        fprintf(out, ", %zu of %zu generation runs (one forward pass a step)", ok[1], count[1]);
    fprintf(out, ". Peaks reported: %zu.\n", peaks);
    fputs("\n  Sources, and what each setup assumes where its source is silent:\n", out);
    for (size_t i = 0; i < n; i++) {
        const aitk_reported_speed *r = rows[i].report;
        fprintf(out, "    %s (%s): %s\n", r->id, r->trainer, r->source);
        if (*r->assumed)
            fprintf(out, "      assumed: %s\n", r->assumed);
    }
}

/* The range of predicted/reported ratios over the training jobs (generation
 * rows check the forward accounting, not a training prediction); returns
 * how many there are. */
static size_t training_ratio_range(const aitk_reported_row *rows, size_t n, double *lo,
                                   double *hi)
{
    size_t count = 0;
    *lo = *hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].report->setup.inference)
            continue;
        if (count == 0 || rows[i].ratio < *lo)
            *lo = rows[i].ratio;
        if (count == 0 || rows[i].ratio > *hi)
            *hi = rows[i].ratio;
        count++;
    }
    return count;
}

void aitk_reported_print_summary(FILE *out, const aitk_reported_row *rows, size_t n,
                                 bool calibrated)
{
    double lo, hi;
    const size_t jobs = training_ratio_range(rows, n, &lo, &hi);
    if (jobs == 0)
        return;
    fprintf(out, "How far to trust these times: for the %zu training jobs people reported "
                 "(`predict --reported%s`),\nthe same model%s predicted %.2f to %.2f x the reported "
                 "step time", jobs, calibrated ? " --calibrate ..." : "",
            calibrated ? ", calibrated," : "", lo, hi);
    if (lo < 1)
        fprintf(out, ": real steps may take up to %.1f x longer than predicted", 1 / lo);
    fputs(".\n", out);
}

aitk_status aitk_reported_add_summary_json(cJSON *doc, const aitk_reported_row *rows, size_t n)
{
    double lo, hi;
    const size_t jobs = training_ratio_range(rows, n, &lo, &hi);
    cJSON *o = cJSON_AddObjectToObject(doc, "against_reports");
    if (!o || !cJSON_AddNumberToObject(o, "reports", (double)jobs) ||
        !cJSON_AddNumberToObject(o, "min_ratio", lo) ||
        !cJSON_AddNumberToObject(o, "max_ratio", hi) ||
        !cJSON_AddStringToObject(o, "ratio", "predicted / reported seconds per step"))
        return AITK_E_NOMEM;
    return AITK_OK;
}

static cJSON *setup_json(const aitk_workload *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", w->forward_only ? "inference" : "training");
    cJSON *res = o ? cJSON_AddArrayToObject(o, "resolutions") : NULL;
    for (size_t i = 0; res && i < w->n_resolutions; i++)
        cJSON_AddItemToArray(res, cJSON_CreateNumber((double)w->resolutions[i]));
    cJSON_AddNumberToObject(o, "batch", (double)w->batch);
    cJSON_AddNumberToObject(o, "rank", (double)w->rank);
    cJSON_AddStringToObject(o, "base", aitk_weight_dtype_name(w->base_dtype));
    cJSON_AddStringToObject(o, "text", w->cache_text ? "cached"
                                                     : aitk_weight_dtype_name(w->te_dtype));
    cJSON_AddBoolToObject(o, "checkpointing", w->checkpointing);
    cJSON_AddStringToObject(o, "optimizer", w->optimizer ? w->optimizer : "");
    return o;
}

static cJSON *row_json(const aitk_reported_row *row)
{
    const aitk_reported_speed *r = row->report;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "id", r->id);
    cJSON_AddStringToObject(o, "source", r->source);
    cJSON_AddStringToObject(o, "trainer", r->trainer);
    cJSON_AddStringToObject(o, "gpu", r->gpu->name);
    cJSON_AddStringToObject(o, "model", r->model_id);
    cJSON_AddStringToObject(o, "assumed", r->assumed);
    cJSON_AddItemToObject(o, "setup", setup_json(&row->workload));
    cJSON *rep = cJSON_AddObjectToObject(o, "reported");
    cJSON_AddNumberToObject(rep, "seconds_per_step", r->seconds_per_step);
    if (r->peak_gb > 0)
        cJSON_AddNumberToObject(rep, "peak_gb", r->peak_gb);
    cJSON *pred = cJSON_AddObjectToObject(o, "predicted");
    cJSON_AddNumberToObject(pred, "seconds_per_step", row->pred.step_s);
    cJSON_AddNumberToObject(pred, "peak_gb", row->pred.memory.total / 1e9);
    cJSON_AddBoolToObject(pred, "fits", row->pred.fits);
    cJSON_AddNumberToObject(o, "ratio", row->ratio);
    cJSON_AddBoolToObject(o, "within_sanity_factor", within_sanity(row->ratio));
    return o;
}

aitk_status aitk_reported_add_json(cJSON *doc, const aitk_reported_row *rows, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(doc, "reported");
    if (!arr || !cJSON_AddNumberToObject(doc, "sanity_factor", AITK_REPORTED_SANITY_FACTOR))
        return AITK_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        cJSON *o = row_json(&rows[i]);
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            return AITK_E_NOMEM;
        }
    }
    /* cJSON's Add* calls fail silently on allocation: check the whole. */
    char *probe = cJSON_PrintUnformatted(arr);
    if (!probe)
        return AITK_E_NOMEM;
    cJSON_free(probe);
    return AITK_OK;
}
