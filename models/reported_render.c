/* `predict --reported`: the table of reported against predicted speeds, and
 * its JSON form. Peaks are compared in decimal GB, as the sources give them. */
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/alloc.h"
#include "common/str.h"
#include "models/reported.h"
#include "models/reported_range.h"

static bool within_sanity(double ratio)
{
    return ratio <= AITK_REPORTED_SANITY_FACTOR && ratio >= 1.0 / AITK_REPORTED_SANITY_FACTOR;
}

void aitk_reported_describe_setup(aitk_str *o, const aitk_workload *w)
{
    for (size_t i = 0; i < w->n_resolutions; i++)
        aitk_str_appendf(o, "%s%ld", i ? "/" : "", w->resolutions[i]);
    if (w->forward_only) {
        aitk_str_appendf(o, " px b%ld %s, generation (1 forward)", w->batch,
                         aitk_weight_dtype_name(w->base_dtype));
        return;
    }
    aitk_str_appendf(o, " px b%ld", w->batch);
    if (w->accumulation > 1)
        aitk_str_appendf(o, "x%ld", w->accumulation);
    aitk_str_appendf(o, " r%ld %s, text %s%s%s", w->rank, aitk_weight_dtype_name(w->base_dtype),
                     w->cache_text && w->te_resident ? "resident"
                     : w->cache_text                 ? "cached"
                                     : aitk_weight_dtype_name(w->te_dtype),
                     w->checkpointing ? ", ckpt" : "", w->autocast ? ", amp" : "");
    if (w->fp16)
        aitk_str_appendf(o, ", fp16");
    /* Attention calls given a mask (models/cost.h aitk_attention_mask). */
    if (w->attention_mask != AITK_MASK_NONE)
        aitk_str_appendf(o, ", mask %s", aitk_attention_mask_name(w->attention_mask));
    /* PyTorch on Windows, which has no flash attention (aitk_host_os). */
    if (w->os == AITK_OS_WINDOWS)
        aitk_str_append(o, ", windows");
    /* The trainer's validation stage (aitk_workload), with the dtype of the
     * encoders it loads again. */
    if (w->validation_resolution > 0)
        aitk_str_appendf(o, ", val %s", aitk_weight_dtype_name(w->validation_te_dtype));
}

/* "yes/no": whether the row's reported time lies in the range from every
 * row, then in the range from the other sources' rows; "-" for generation. */
static const char *range_marks(const aitk_reported_row *row, bool in, bool in_loso)
{
    static const char *const marks[2][2] = {{"no/no", "no/yes"}, {"yes/no", "yes/yes"}};
    return row->report->setup.inference ? "-" : marks[in][in_loso];
}

/* The range and how often it held, then each source's check (item: a
 * figure fitted to the rows must be judged without them). */
static void print_range_checks(FILE *out, const aitk_range_coverage *cov,
                               const aitk_source_check *src, size_t n_src)
{
    if (cov->rows == 0)
        return;
    fprintf(out, "\n  Time range given with every prediction: real steps took %.2fx-%.2fx of the "
                 "predicted time, %.2fx\n  in the median (%d-%dth percentile of reported / "
                 "predicted over %zu training runs).\n  It held for %zu of %zu (%.0f%%); with each "
                 "source's runs left out of the range that judged\n  them, for %zu of %zu "
                 "(%.0f%%).\n",
            cov->all.lo, cov->all.hi, cov->all.median, AITK_RANGE_LOW_PERCENTILE,
            AITK_RANGE_HIGH_PERCENTILE, cov->rows, cov->covered, cov->rows,
            100.0 * (double)cov->covered / (double)cov->rows,
            cov->covered_loso, cov->rows, 100.0 * (double)cov->covered_loso / (double)cov->rows);
    fputs("\n  Leave one source out (training runs by the issue or document they cite):\n", out);
    fprintf(out, "    %-60s %4s %9s  %-17s %s\n", "source", "runs", "error", "range without it",
            "held");
    for (size_t i = 0; i < n_src; i++) {
        const aitk_source_check *c = &src[i];
        /* A long document name is cut at the column: the JSON has it whole. */
        const size_t len = aitk_reported_source_key(c->first->source);
        const int key = len > 60 ? 60 : (int)len;
        char range[32] = "-";
        if (c->others.n)
            snprintf(range, sizeof range, "%.2fx-%.2fx", c->others.lo, c->others.hi);
        fprintf(out, "    %-60.*s %4zu %8.2fx  %-17s %zu of %zu\n", key, c->first->source, c->rows,
                c->error, range, c->covered, c->rows);
    }
    fputs("    error: exp(mean |ln(predicted / reported)|) over the source's runs, in sample.\n"
          "  The cost model fits none of its settings to these runs: models/cost.yaml takes each "
          "from its own\n  source (ci/fit-reported.py only asks how well a grid could fit them; "
          "nothing uses its answer),\n  so leaving a source out changes no prediction and the "
          "in-sample error above is the only error.\n  The time range is the one figure taken "
          "from the runs: 'range without it' and 'held' judge it out\n  of sample.\n", out);
}

/* What the text and the JSON both say about the time range: for each row
 * whether the range holds it (in[0..n)) and whether the range from the
 * other sources' runs does (in[n..2n)), and each source's own check. */
typedef struct range_analysis {
    bool *in;
    aitk_source_check *src;
    size_t n_src;
    aitk_range_coverage cov;
} range_analysis;

static void range_analysis_free(range_analysis *a)
{
    aitk_free(a->in);
    aitk_free(a->src);
}

static aitk_status range_analyse(range_analysis *a, const aitk_reported_row *rows, size_t n)
{
    a->in = aitk_calloc(n ? 2 * n : 1, sizeof *a->in);
    a->src = aitk_calloc(n ? n : 1, sizeof *a->src);
    a->n_src = 0;
    aitk_status st = a->in && a->src ? AITK_OK : AITK_E_NOMEM;
    if (!st)
        st = aitk_reported_range_coverage(rows, n, &a->cov, a->in, a->in + n);
    if (!st)
        st = aitk_reported_by_source(rows, n, a->src, &a->n_src);
    if (st)
        range_analysis_free(a);
    return st;
}

/* The ceiling of any calibration: how many training rows one factor on
 * every predicted time could bring within the sanity factor. */
static aitk_status print_best_scale(FILE *out, const aitk_reported_row *rows, size_t n)
{
    size_t within = 0, training = 0;
    double scale = 1.0;
    aitk_status st = aitk_reported_best_scale(rows, n, AITK_REPORTED_SANITY_FACTOR, &within,
                                              &training, &scale);
    if (st || training == 0)
        return st;
    fprintf(out, "  No one factor on every predicted time brings more than %zu of the %zu "
                 "training jobs within %.1fx\n  (x%.2f does): the others differ from them by "
                 "more than one rate can explain.\n",
            within, training, AITK_REPORTED_SANITY_FACTOR, scale);
    return AITK_OK;
}

/* A training row's reported step below the hardware's bound for its setup
 * can hardly have run that setup: the source or the reading of it is wrong,
 * unless the card ran a few percent past its median measured rate. */
static bool below_floor(const aitk_reported_row *row)
{
    return row->floor_s > 0 && row->report->seconds_per_step < row->floor_s;
}

/* Where the reported steps stand against the hardware's bound for the
 * setups assumed (aitk_cost_floor_seconds): the share of each reported
 * step the bound takes, its highest, and every row below it by name. */
static void print_floor_check(FILE *out, const aitk_reported_row *rows, size_t n)
{
    const aitk_reported_row *top = NULL;
    double lo = 0, hi = 0;
    size_t below = 0;
    for (size_t i = 0; i < n; i++) {
        const aitk_reported_row *row = &rows[i];
        if (row->report->setup.inference || row->floor_s <= 0)
            continue;
        const double share = row->floor_s / row->report->seconds_per_step;
        if (!top || share < lo)
            lo = share;
        if (!top || share > hi) {
            hi = share;
            top = row;
        }
        below += below_floor(row);
    }
    if (!top)
        return;
    fprintf(out, "  The hardware's bound for each setup (its tensor-core FLOPs at the card's full "
                 "matmul rate,\n  its quantized weights expanded at full bandwidth, nothing "
                 "else) is %.2f-%.2f of the reported\n  step (highest: %s).",
            lo, hi, top->report->id);
    if (below == 0) {
        fputs(" No reported step is shorter than its setup allows.\n", out);
        return;
    }
    if (below == 1)
        fputs(" 1 reported step is shorter than its setup allows (so, most likely, not the setup "
              "assumed):", out);
    else
        fprintf(out, " %zu reported steps are shorter than their setups allow (so, most likely, "
                     "not the setups assumed):",
                below);
    for (size_t i = 0; i < n; i++)
        if (!rows[i].report->setup.inference && below_floor(&rows[i]))
            fprintf(out, " %s (%.2f s, bound %.2f s)", rows[i].report->id,
                    rows[i].report->seconds_per_step, rows[i].floor_s);
    fputc('\n', out);
}

aitk_status aitk_reported_print_text(FILE *out, const aitk_reported_row *rows, size_t n)
{
    size_t ok[2] = {0, 0}, count[2] = {0, 0}, peaks = 0; /* [0] training, [1] generation */
    range_analysis a;
    aitk_status st = range_analyse(&a, rows, n);
    if (st)
        return st;
    fputs("Predictions for jobs people reported (models/reported_speeds.yaml)\n"
          "ratio = predicted / reported seconds per step; in range: the reported time lies in "
          "the time range\n(yes/no), and in the range from the other sources' runs alone "
          "(/yes or /no)\n\n", out);
    fprintf(out, "  %-24s %-13s %-10s %-48s %8s %9s %6s %-8s  %s\n", "report", "GPU", "model",
            "setup", "reported", "predicted", "ratio", "in range", "peak GB reported / predicted");
    for (size_t i = 0; i < n; i++) {
        const aitk_reported_row *row = &rows[i];
        const aitk_reported_speed *r = row->report;
        aitk_str setup = AITK_STR_INIT;
        aitk_reported_describe_setup(&setup, &row->workload);
        fprintf(out, "  %-24s %-13s %-10s %-48s %7.2fs %8.2fs %6.2f %-8s  ", r->id, r->gpu->name,
                r->model_id, aitk_str_cstr(&setup), r->seconds_per_step, row->pred.step_s,
                row->ratio, range_marks(row, a.in[i], a.in[n + i]));
        if (r->peak_gb > 0) {
            fprintf(out, "%.1f / %.1f\n", r->peak_gb,
                    aitk_memory_plan_peak(&row->pred.memory) / 1e9);
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
    st = print_best_scale(out, rows, n);
    if (!st)
        print_floor_check(out, rows, n);
    if (st) {
        range_analysis_free(&a);
        return st;
    }
    print_range_checks(out, &a.cov, a.src, a.n_src);
    aitk_reported_print_sources_heading(out);
    for (size_t i = 0; i < n; i++)
        aitk_reported_print_source(out, rows[i].report);
    range_analysis_free(&a);
    return AITK_OK;
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

aitk_status aitk_reported_print_summary(FILE *out, const aitk_reported_row *rows, size_t n,
                                        bool calibrated)
{
    aitk_range_coverage cov;
    aitk_status st = aitk_reported_range_coverage(rows, n, &cov, NULL, NULL);
    if (st || cov.rows == 0)
        return st;
    fprintf(out, "How far to trust these times: from %zu reported training runs (`predict "
                 "--reported%s`), real steps\ntook %.2fx-%.2fx of the %s predicted time "
                 "(%d-%dth percentile of reported / predicted: the\ns/step range column), %.2fx "
                 "in the median. That range held for %zu of the %zu runs, and for\n%zu when each "
                 "source's runs were left out of the range that judged them.\n",
            cov.rows, calibrated ? " --calibrate ..." : "", cov.all.lo, cov.all.hi,
            calibrated ? "calibrated" : "model's", AITK_RANGE_LOW_PERCENTILE,
            AITK_RANGE_HIGH_PERCENTILE, cov.all.median, cov.covered, cov.rows, cov.covered_loso);
    return AITK_OK;
}

static cJSON *range_json(const aitk_range_coverage *cov)
{
    cJSON *o = cJSON_CreateObject(), *pc = NULL;
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "runs", (double)cov->rows);
    cJSON_AddNumberToObject(o, "low", cov->all.lo);
    cJSON_AddNumberToObject(o, "high", cov->all.hi);
    cJSON_AddNumberToObject(o, "median", cov->all.median);
    cJSON_AddStringToObject(o, "of", "reported / predicted seconds per step");
    if ((pc = cJSON_AddArrayToObject(o, "percentiles"))) {
        cJSON_AddItemToArray(pc, cJSON_CreateNumber(AITK_RANGE_LOW_PERCENTILE));
        cJSON_AddItemToArray(pc, cJSON_CreateNumber(AITK_RANGE_HIGH_PERCENTILE));
    }
    cJSON_AddNumberToObject(o, "held", (double)cov->covered);
    cJSON_AddNumberToObject(o, "held_leaving_source_out", (double)cov->covered_loso);
    return o;
}

aitk_status aitk_reported_add_summary_json(cJSON *doc, const aitk_reported_row *rows, size_t n)
{
    double lo, hi;
    const size_t jobs = training_ratio_range(rows, n, &lo, &hi);
    aitk_range_coverage cov;
    aitk_status st = aitk_reported_range_coverage(rows, n, &cov, NULL, NULL);
    if (st)
        return st;
    cJSON *o = cJSON_AddObjectToObject(doc, "against_reports");
    if (!o || !cJSON_AddNumberToObject(o, "reports", (double)jobs) ||
        !cJSON_AddNumberToObject(o, "min_ratio", lo) ||
        !cJSON_AddNumberToObject(o, "max_ratio", hi) ||
        !cJSON_AddStringToObject(o, "ratio", "predicted / reported seconds per step") ||
        !cJSON_AddItemToObject(o, "time_range", range_json(&cov)))
        return AITK_E_NOMEM;
    return AITK_OK;
}

void aitk_reported_print_sources_heading(FILE *out)
{
    fputs("\n  Sources, and what each setup assumes where its source is silent:\n", out);
}

void aitk_reported_print_source(FILE *out, const aitk_reported_speed *r)
{
    fprintf(out, "    %s (%s): %s\n", r->id, r->trainer, r->source);
    if (*r->assumed)
        fprintf(out, "      assumed: %s\n", r->assumed);
    if (r->setup_unknown)
        fprintf(out, "      setup unknown, verdict not counted: %s\n", r->setup_unknown);
}

cJSON *aitk_reported_entry_json(const aitk_reported_speed *r, const aitk_workload *w)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "id", r->id);
    cJSON_AddStringToObject(o, "source", r->source);
    cJSON_AddStringToObject(o, "trainer", r->trainer);
    if (r->gpu)
        cJSON_AddStringToObject(o, "gpu", r->gpu->name);
    else
        cJSON_AddNullToObject(o, "gpu");
    cJSON_AddStringToObject(o, "model", r->model_id);
    cJSON_AddStringToObject(o, "assumed", r->assumed);
    cJSON_AddItemToObject(o, "setup", aitk_reported_setup_json(w));
    return o;
}

cJSON *aitk_reported_setup_json(const aitk_workload *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", w->forward_only ? "inference" : "training");
    cJSON *res = o ? cJSON_AddArrayToObject(o, "resolutions") : NULL;
    for (size_t i = 0; res && i < w->n_resolutions; i++)
        cJSON_AddItemToArray(res, cJSON_CreateNumber((double)w->resolutions[i]));
    cJSON_AddNumberToObject(o, "batch", (double)w->batch);
    cJSON_AddNumberToObject(o, "rank", (double)w->rank);
    cJSON_AddStringToObject(o, "base", aitk_weight_dtype_name(w->base_dtype));
    cJSON_AddStringToObject(o, "text", w->cache_text && w->te_resident ? "resident"
                                       : w->cache_text                 ? "cached"
                                                       : aitk_weight_dtype_name(w->te_dtype));
    cJSON_AddBoolToObject(o, "checkpointing", w->checkpointing);
    cJSON_AddBoolToObject(o, "autocast", w->autocast);
    cJSON_AddStringToObject(o, "precision", w->fp16 ? "fp16" : "bf16");
    cJSON_AddStringToObject(o, "attention_mask", aitk_attention_mask_name(w->attention_mask));
    cJSON_AddStringToObject(o, "os", aitk_host_os_name(w->os));
    cJSON_AddStringToObject(o, "optimizer", w->optimizer ? w->optimizer : "");
    /* The trainer's settings (models/trainers.yaml); text_tokens 0: the
     * model's own (the row's spec is gone by the time it is written). */
    cJSON_AddStringToObject(o, "trainer", w->trainer ? w->trainer : "");
    cJSON_AddNumberToObject(o, "text_tokens", (double)w->text_tokens);
    cJSON_AddStringToObject(o, "fp8_path", aitk_fp8_path_name(w->fp8_path));
    cJSON_AddNumberToObject(o, "accumulation", (double)w->accumulation);
    cJSON_AddStringToObject(o, "validation_text",
                            w->validation_resolution > 0
                                ? aitk_weight_dtype_name(w->validation_te_dtype)
                                : "none");
    /* The layers the LoRA adapts where a row names them; absent: all. */
    if (w->lora_only && *w->lora_only) {
        cJSON *layers = cJSON_AddArrayToObject(o, "lora_layers");
        for (const char *const *l = w->lora_only; layers && *l; l++)
            cJSON_AddItemToArray(layers, cJSON_CreateString(*l));
    }
    return o;
}

static cJSON *row_json(const aitk_reported_row *row, bool in, bool in_loso)
{
    const aitk_reported_speed *r = row->report;
    cJSON *o = aitk_reported_entry_json(r, &row->workload);
    if (!o)
        return NULL;
    cJSON *rep = cJSON_AddObjectToObject(o, "reported");
    cJSON_AddNumberToObject(rep, "seconds_per_step", r->seconds_per_step);
    if (r->peak_gb > 0)
        cJSON_AddNumberToObject(rep, "peak_gb", r->peak_gb);
    cJSON *pred = cJSON_AddObjectToObject(o, "predicted");
    cJSON_AddNumberToObject(pred, "seconds_per_step", row->pred.step_s);
    cJSON_AddNumberToObject(pred, "peak_gb", aitk_memory_plan_peak(&row->pred.memory) / 1e9);
    cJSON_AddBoolToObject(pred, "fits", row->pred.fits);
    cJSON_AddNumberToObject(o, "ratio", row->ratio);
    cJSON_AddBoolToObject(o, "within_sanity_factor", within_sanity(row->ratio));
    /* The hardware's bound for the setup (aitk_cost_floor_seconds). */
    if (row->floor_s > 0) {
        cJSON_AddNumberToObject(o, "floor_seconds_per_step", row->floor_s);
        cJSON_AddBoolToObject(o, "below_floor", below_floor(row));
    }
    if (!r->setup.inference) {
        cJSON_AddBoolToObject(o, "in_time_range", in);
        cJSON_AddBoolToObject(o, "in_time_range_without_source", in_loso);
    }
    return o;
}

/* "by_source": each source's runs, their in-sample error and the range
 * from the other sources' runs with how many of them it held. */
static aitk_status add_sources_json(cJSON *doc, const aitk_source_check *src, size_t n_src)
{
    cJSON *arr = cJSON_AddArrayToObject(doc, "by_source");
    if (!arr || !cJSON_AddStringToObject(doc, "fitted_settings",
                                         "none: models/cost.yaml takes each setting from its own "
                                         "source, so leaving a source out changes no prediction "
                                         "and by_source's error is in sample; the time range is "
                                         "the one figure taken from these runs"))
        return AITK_E_NOMEM;
    for (size_t i = 0; i < n_src; i++) {
        const aitk_source_check *c = &src[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            return AITK_E_NOMEM;
        }
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)aitk_reported_source_key(c->first->source),
                 c->first->source);
        cJSON_AddStringToObject(o, "source", key);
        cJSON_AddNumberToObject(o, "runs", (double)c->rows);
        cJSON_AddNumberToObject(o, "error_factor_in_sample", c->error);
        if (c->others.n) {
            cJSON_AddNumberToObject(o, "range_without_source_low", c->others.lo);
            cJSON_AddNumberToObject(o, "range_without_source_high", c->others.hi);
        }
        cJSON_AddNumberToObject(o, "held_without_source", (double)c->covered);
    }
    return AITK_OK;
}

/* "best_single_scale": print_best_scale's figures. */
static aitk_status add_best_scale_json(cJSON *doc, const aitk_reported_row *rows, size_t n)
{
    size_t within = 0, training = 0;
    double scale = 1.0;
    aitk_status st = aitk_reported_best_scale(rows, n, AITK_REPORTED_SANITY_FACTOR, &within,
                                              &training, &scale);
    if (st)
        return st;
    cJSON *o = cJSON_AddObjectToObject(doc, "best_single_scale");
    if (!o || !cJSON_AddNumberToObject(o, "training_rows", (double)training) ||
        !cJSON_AddNumberToObject(o, "within", (double)within) ||
        !cJSON_AddNumberToObject(o, "scale", scale) ||
        !cJSON_AddStringToObject(o, "of", "a factor on every predicted seconds per step"))
        return AITK_E_NOMEM;
    return AITK_OK;
}

aitk_status aitk_reported_add_json(cJSON *doc, const aitk_reported_row *rows, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(doc, "reported");
    if (!arr || !cJSON_AddNumberToObject(doc, "sanity_factor", AITK_REPORTED_SANITY_FACTOR))
        return AITK_E_NOMEM;
    range_analysis a;
    aitk_status st = range_analyse(&a, rows, n);
    if (st)
        return st;
    if (!cJSON_AddItemToObject(doc, "time_range", range_json(&a.cov)))
        st = AITK_E_NOMEM;
    if (!st)
        st = add_best_scale_json(doc, rows, n);
    if (!st)
        st = add_sources_json(doc, a.src, a.n_src);
    for (size_t i = 0; !st && i < n; i++) {
        cJSON *o = row_json(&rows[i], a.in[i], a.in[n + i]);
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            st = AITK_E_NOMEM;
        }
    }
    range_analysis_free(&a);
    if (st)
        return st;
    /* cJSON's Add* calls fail silently on allocation: check the whole. */
    char *probe = cJSON_PrintUnformatted(arr);
    if (!probe)
        return AITK_E_NOMEM;
    cJSON_free(probe);
    return AITK_OK;
}
