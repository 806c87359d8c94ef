/* The fit verdict against what reported jobs did (models/reported_fit.h).
 * Figures are printed in decimal GB, as the sources give their peaks. */
#include "models/reported_fit.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "common/alloc.h"
#include "common/str.h"
#include "models/predict.h"

aitk_status aitk_reported_fit_evaluate(const aitk_reported_speeds *s, const aitk_cost_params *p,
                                       aitk_fit_row *rows, aitk_str *err)
{
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < s->n_memory; i++) {
        const aitk_reported_speed *r = &s->memory[i];
        aitk_model_spec *spec = NULL;
        st = aitk_model_spec_load(r->model_id, false, &spec, err);
        if (st)
            break;
        rows[i] = (aitk_fit_row){.report = r};
        aitk_workload *w = &rows[i].workload;
        aitk_reported_workload(r, spec, w);
        if (r->gpu) {
            st = aitk_cost_predict(w, p, r->gpu, &rows[i].pred, err);
        } else {
            /* No card to judge against: the peak alone, at the largest
             * bucket, as aitk_cost_predict takes it. */
            long largest = 0;
            for (size_t k = 0; k < w->n_resolutions; k++)
                largest = w->resolutions[k] > largest ? w->resolutions[k] : largest;
            st = aitk_cost_memory(w, p, largest, &rows[i].pred.memory, err);
        }
        /* The row outlives the spec: keep no pointer into it. */
        const aitk_optimizer_spec *opt = aitk_cost_find_optimizer(p, w->optimizer);
        w->optimizer = opt ? opt->name : NULL;
        w->spec = NULL;
        aitk_model_spec_free(spec);
    }
    return st;
}

aitk_status aitk_reported_peak_error(const aitk_reported_row *timed, size_t n_timed,
                                     const aitk_fit_row *fits, size_t n_fits,
                                     aitk_time_range *out)
{
    double *ratios = aitk_calloc(n_timed + n_fits + 1, sizeof *ratios);
    if (!ratios)
        return AITK_E_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n_timed; i++) {
        const double peak = aitk_memory_plan_peak(&timed[i].pred.memory);
        if (timed[i].report->gpu && timed[i].report->peak_gb > 0 && peak > 0)
            ratios[k++] = timed[i].report->peak_gb * 1e9 / peak;
    }
    for (size_t i = 0; i < n_fits; i++) {
        const double peak = aitk_memory_plan_peak(&fits[i].pred.memory);
        if (fits[i].report->gpu && fits[i].report->peak_gb > 0 && peak > 0)
            ratios[k++] = fits[i].report->peak_gb * 1e9 / peak;
    }
    aitk_status st = aitk_time_range_at(ratios, k, AITK_PEAK_LOW_PERCENTILE,
                                        AITK_PEAK_HIGH_PERCENTILE, out);
    aitk_free(ratios);
    return st;
}

/* One row's peak against the figure it reports, if it reports one. */
static void tally_peak(const aitk_reported_speed *r, const aitk_prediction *pred,
                       aitk_peak_tally *t)
{
    if (!(r->peak_gb > 0))
        return;
    const double reported = r->peak_gb * 1e9;
    const bool within = fabs(aitk_memory_plan_peak(&pred->memory) - reported) <=
                        AITK_PEAK_TOLERANCE * reported;
    t->rows++;
    t->within += within;
    if (r->gpu) {
        t->measured++;
        t->measured_within += within;
    }
}

void aitk_reported_peak_tally(const aitk_reported_row *timed, size_t n_timed,
                              const aitk_fit_row *fits, size_t n_fits, aitk_peak_tally *t)
{
    *t = (aitk_peak_tally){0};
    for (size_t i = 0; i < n_timed; i++)
        tally_peak(timed[i].report, &timed[i].pred, t);
    for (size_t i = 0; i < n_fits; i++)
        tally_peak(fits[i].report, &fits[i].pred, t);
}

aitk_status aitk_reported_eval_load(const aitk_gpudb *db, const aitk_cost_params *p,
                                    const aitk_calibration *cal, aitk_reported_eval *out,
                                    aitk_str *err)
{
    *out = (aitk_reported_eval){0};
    aitk_status st = aitk_reported_speeds_load(db, p, &out->speeds, err);
    if (!st) {
        const aitk_reported_speeds *s = out->speeds;
        out->timed = aitk_calloc(s->count ? s->count : 1, sizeof *out->timed);
        out->fits = aitk_calloc(s->n_memory ? s->n_memory : 1, sizeof *out->fits);
        st = out->timed && out->fits ? AITK_OK : AITK_E_NOMEM;
    }
    if (!st)
        st = aitk_reported_evaluate(out->speeds, p, cal, out->timed, err);
    if (!st)
        st = aitk_reported_time_range(out->timed, out->speeds->count, NULL, &out->time_range);
    if (!st)
        st = aitk_reported_fit_evaluate(out->speeds, p, out->fits, err);
    if (!st)
        st = aitk_reported_peak_error(out->timed, out->speeds->count, out->fits,
                                      out->speeds->n_memory, &out->peak_error);
    if (st)
        aitk_reported_eval_free(out);
    return st;
}

void aitk_reported_eval_free(aitk_reported_eval *e)
{
    aitk_free(e->timed);
    aitk_free(e->fits);
    aitk_reported_speeds_free(e->speeds);
    *e = (aitk_reported_eval){0};
}

int aitk_reported_fit_agrees(const aitk_fit_row *row)
{
    const aitk_reported_speed *r = row->report;
    if (!r->gpu || r->outcome == AITK_OUTCOME_UNSTATED)
        return -1;
    return row->pred.fits == (r->outcome == AITK_OUTCOME_RAN);
}

void aitk_reported_fit_tally(const aitk_fit_row *rows, size_t n, aitk_fit_tally *t)
{
    *t = (aitk_fit_tally){0};
    for (size_t i = 0; i < n; i++) {
        const int agrees = aitk_reported_fit_agrees(&rows[i]);
        if (agrees < 0)
            continue;
        if (rows[i].report->setup_unknown) {
            t->unknown++;
            t->unknown_right += (size_t)agrees;
            continue;
        }
        const bool oom = rows[i].report->outcome == AITK_OUTCOME_OOM;
        t->rows++;
        t->right += (size_t)agrees;
        *(oom ? &t->oom : &t->ran) += 1;
        *(oom ? &t->oom_right : &t->ran_right) += (size_t)agrees;
    }
}

static const char *outcome_name(aitk_reported_outcome o)
{
    switch (o) {
    case AITK_OUTCOME_OOM: return "oom";
    case AITK_OUTCOME_RAN: return "ran";
    case AITK_OUTCOME_UNSTATED: break;
    }
    return "unstated";
}

/* In parentheses where the row's setup cannot be known: not counted. */
static const char *agree_mark(int agrees, bool setup_unknown)
{
    if (agrees < 0)
        return "-";
    if (setup_unknown)
        return agrees ? "(yes)" : "(no)";
    return agrees ? "yes" : "no";
}

/* Whether a row's fit is within the model's error of missing: predict's
 * "tight" (models/predict.h), for rows judged on a GPU. */
static bool row_tight(const aitk_fit_row *row, const aitk_time_range *peak_error)
{
    return row->report->gpu && aitk_predict_tight(&row->pred, peak_error);
}

aitk_status aitk_reported_fit_print_text(FILE *out, const aitk_fit_row *rows, size_t n,
                                         const aitk_time_range *peak_error,
                                         const aitk_peak_tally *peaks)
{
    if (n == 0)
        return AITK_OK;
    fputs("\nFit verdicts for jobs whose source says they ran or ran out of memory "
          "(memory_reports)\nin GB: reported and predicted peak; needs = the predicted peak "
          "less the CUDA context, set\nagainst usable = the card's memory less the context and "
          "the allocator's reserve\n\n", out);
    fprintf(out, "  %-36s %-16s %-50s %-8s %8s %6s %6s %6s %-7s %s\n", "report", "GPU", "setup",
            "outcome", "reported", "peak", "needs", "usable", "verdict", "agree");
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < n; i++) {
        const aitk_fit_row *row = &rows[i];
        const aitk_reported_speed *r = row->report;
        aitk_str setup = AITK_STR_INIT;
        aitk_reported_describe_setup(&setup, &row->workload);
        st = aitk_str_status(&setup);
        char reported[32] = "-", needs[32] = "-", usable[32] = "-";
        if (r->peak_gb > 0)
            snprintf(reported, sizeof reported, "%.1f", r->peak_gb);
        if (r->gpu) {
            snprintf(needs, sizeof needs, "%.1f", row->pred.needed_bytes / 1e9);
            snprintf(usable, sizeof usable, "%.1f", row->pred.usable_bytes / 1e9);
        }
        if (!st)
            fprintf(out, "  %-36s %-16s %-50s %-8s %8s %6.1f %6s %6s %-7s %s\n", r->id,
                    r->gpu ? r->gpu->name : "-", aitk_str_cstr(&setup),
                    outcome_name(r->outcome), reported,
                    aitk_memory_plan_peak(&row->pred.memory) / 1e9, needs, usable,
                    r->gpu ? (row->pred.fits ? (row_tight(row, peak_error) ? "fits*" : "fits")
                                             : "misses")
                           : "-",
                    agree_mark(aitk_reported_fit_agrees(row), r->setup_unknown != NULL));
        aitk_str_free(&setup);
    }
    if (st)
        return st;
    aitk_fit_tally t;
    aitk_reported_fit_tally(rows, n, &t);
    fprintf(out, "\n  fit verdict right on %zu of %zu rows whose source says it ran or ran out "
                 "of memory\n  (out of memory: %zu of %zu; ran: %zu of %zu)\n",
            t.right, t.rows, t.oom_right, t.oom, t.ran_right, t.ran);
    if (t.unknown)
        fprintf(out, "  not counted, in parentheses: %zu rows whose source gives the outcome but "
                     "not the settings\n  that decide it (setup_unknown, under Sources); the "
                     "verdict agrees on %zu of them\n",
                t.unknown, t.unknown_right);
    if (peaks->rows)
        fprintf(out, "  peak within %.0f%% of the single figure reported: %zu of %zu rows that "
                     "give one (measured on\n  a named GPU: %zu of %zu; documentation figures "
                     "with no card: %zu of %zu), the timed rows' peaks included\n",
                100.0 * AITK_PEAK_TOLERANCE, peaks->within, peaks->rows, peaks->measured_within,
                peaks->measured, peaks->within - peaks->measured_within,
                peaks->rows - peaks->measured);
    if (peak_error->n > 0)
        fprintf(out, "  * tight: the predicted need times %.2f would not fit. Measured peaks came "
                     "to %.2f-%.2fx the\n  model's (10-90th percentile of reported / predicted "
                     "over the %zu rows that measured one on a\n  named GPU); predict marks such "
                     "a fit \"tight: ... may not fit\"\n",
                peak_error->hi, peak_error->lo, peak_error->hi, peak_error->n);
    aitk_reported_print_sources_heading(out);
    for (size_t i = 0; i < n; i++)
        aitk_reported_print_source(out, rows[i].report);
    return AITK_OK;
}

static cJSON *fit_row_json(const aitk_fit_row *row, const aitk_time_range *peak_error)
{
    const aitk_reported_speed *r = row->report;
    cJSON *o = aitk_reported_entry_json(r, &row->workload);
    if (!o)
        return NULL;
    cJSON *rep = cJSON_AddObjectToObject(o, "reported");
    cJSON_AddStringToObject(rep, "outcome", outcome_name(r->outcome));
    if (r->setup_unknown)
        cJSON_AddStringToObject(rep, "setup_unknown", r->setup_unknown);
    if (r->peak_gb > 0)
        cJSON_AddNumberToObject(rep, "peak_gb", r->peak_gb);
    if (r->seconds_per_step > 0)
        cJSON_AddNumberToObject(rep, "seconds_per_step", r->seconds_per_step);
    cJSON *pred = cJSON_AddObjectToObject(o, "predicted");
    cJSON_AddNumberToObject(pred, "peak_gb", aitk_memory_plan_peak(&row->pred.memory) / 1e9);
    /* The plan's terms, so a measured peak of the same job (ci/torch-peak-
     * check.py on a GPU) can be set against the parts it measures. */
    cJSON *plan = cJSON_AddArrayToObject(pred, "memory_plan");
    for (int t = 0; plan && t < AITK_PLAN_TERMS; t++) {
        cJSON *term = cJSON_CreateObject();
        if (!term || !cJSON_AddItemToArray(plan, term)) {
            cJSON_Delete(term);
            break;
        }
        cJSON_AddStringToObject(term, "term", aitk_plan_term_names[t]);
        cJSON_AddNumberToObject(term, "gb", row->pred.memory.bytes[t] / 1e9);
    }
    /* The training step's peak is the terms' sum; a validation stage has
     * its own, and the larger is peak_gb. */
    const aitk_memory_plan *m = &row->pred.memory;
    cJSON_AddNumberToObject(pred, "step_peak_gb", m->total / 1e9);
    if (m->validation_total > 0) {
        cJSON *v = cJSON_AddObjectToObject(pred, "validation");
        cJSON_AddNumberToObject(v, "peak_gb", m->validation_total / 1e9);
        cJSON_AddNumberToObject(v, "kept_gb", m->validation_kept / 1e9);
        cJSON_AddNumberToObject(v, "text_encoders_gb", m->validation_text / 1e9);
        cJSON_AddNumberToObject(v, "forward_gb", m->validation_forward / 1e9);
    }
    if (r->gpu) {
        cJSON_AddNumberToObject(pred, "needed_gb", row->pred.needed_bytes / 1e9);
        cJSON_AddNumberToObject(pred, "usable_gb", row->pred.usable_bytes / 1e9);
        cJSON_AddNumberToObject(pred, "margin_gb", row->pred.margin_bytes / 1e9);
        cJSON_AddStringToObject(pred, "verdict", row->pred.fits ? "fits" : "misses");
        cJSON_AddBoolToObject(pred, "tight", row_tight(row, peak_error));
    }
    const int agrees = aitk_reported_fit_agrees(row);
    if (agrees < 0)
        cJSON_AddNullToObject(o, "agrees");
    else
        cJSON_AddBoolToObject(o, "agrees", agrees);
    return o;
}

aitk_status aitk_reported_fit_add_json(cJSON *doc, const aitk_fit_row *rows, size_t n,
                                       const aitk_time_range *peak_error,
                                       const aitk_peak_tally *peaks)
{
    cJSON *arr = cJSON_AddArrayToObject(doc, "memory_reports");
    if (!arr)
        return AITK_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        cJSON *o = fit_row_json(&rows[i], peak_error);
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            return AITK_E_NOMEM;
        }
    }
    aitk_fit_tally t;
    aitk_reported_fit_tally(rows, n, &t);
    cJSON *v = cJSON_AddObjectToObject(doc, "fit_verdicts");
    if (!v)
        return AITK_E_NOMEM;
    cJSON_AddStringToObject(v, "of", "rows whose source says the job ran or ran out of memory");
    cJSON_AddNumberToObject(v, "rows", (double)t.rows);
    cJSON_AddNumberToObject(v, "right", (double)t.right);
    cJSON_AddNumberToObject(v, "oom_rows", (double)t.oom);
    cJSON_AddNumberToObject(v, "oom_right", (double)t.oom_right);
    cJSON_AddNumberToObject(v, "ran_rows", (double)t.ran);
    cJSON_AddNumberToObject(v, "ran_right", (double)t.ran_right);
    cJSON_AddNumberToObject(v, "setup_unknown_rows", (double)t.unknown);
    cJSON_AddNumberToObject(v, "setup_unknown_right", (double)t.unknown_right);
    if (peak_error->n > 0) {
        cJSON *e = cJSON_AddObjectToObject(v, "peak_error");
        cJSON_AddStringToObject(e, "of", "reported / predicted peak, rows that measured one on "
                                         "a named GPU (10th-90th percentile)");
        cJSON_AddNumberToObject(e, "low", peak_error->lo);
        cJSON_AddNumberToObject(e, "high", peak_error->hi);
        cJSON_AddNumberToObject(e, "runs", (double)peak_error->n);
    }
    cJSON *pk = cJSON_AddObjectToObject(doc, "peak_agreement");
    if (!pk)
        return AITK_E_NOMEM;
    cJSON_AddStringToObject(pk, "of", "rows that report a single peak, the timed rows' included");
    cJSON_AddNumberToObject(pk, "tolerance", AITK_PEAK_TOLERANCE);
    cJSON_AddNumberToObject(pk, "rows", (double)peaks->rows);
    cJSON_AddNumberToObject(pk, "within", (double)peaks->within);
    cJSON_AddNumberToObject(pk, "measured_rows", (double)peaks->measured);
    cJSON_AddNumberToObject(pk, "measured_within", (double)peaks->measured_within);
    /* cJSON's Add* calls fail silently on allocation: check the whole. */
    char *probe = cJSON_PrintUnformatted(v);
    char *probe2 = probe ? cJSON_PrintUnformatted(arr) : NULL;
    char *probe3 = probe2 ? cJSON_PrintUnformatted(pk) : NULL;
    const bool ok = probe && probe2 && probe3;
    cJSON_free(probe);
    cJSON_free(probe2);
    cJSON_free(probe3);
    return ok ? AITK_OK : AITK_E_NOMEM;
}
