/* The fit verdict held to the world: `predict --reported` predicts each row
 * of `memory_reports` (models/reported_speeds.yaml) on its GPU and sets the
 * verdict (fits / misses, models/cost.h) beside what the source says became
 * of the job: ran, or ran out of memory. */
#ifndef AITK_MODELS_REPORTED_FIT_H
#define AITK_MODELS_REPORTED_FIT_H

#include <stdbool.h>
#include <stdio.h>

#include "models/reported.h"
#include "models/reported_range.h"

typedef struct aitk_fit_row {
    const aitk_reported_speed *report;
    aitk_workload workload; /* as predicted; spec NULL, optimizer cost.yaml's name */
    /* With a GPU: the whole prediction and its verdict. Without one (an
     * unstated documentation figure) only pred.memory is set. */
    aitk_prediction pred;
} aitk_fit_row;

/* One row per memory report, in file order (rows: s->n_memory entries). */
aitk_status aitk_reported_fit_evaluate(const aitk_reported_speeds *s, const aitk_cost_params *p,
                                       aitk_fit_row *rows, aitk_str *err);

/* 1 when the verdict agrees with the outcome (fits and ran, misses and out
 * of memory), 0 when it does not, -1 when there is nothing to judge: an
 * unstated outcome, or no GPU. */
int aitk_reported_fit_agrees(const aitk_fit_row *row);

typedef struct aitk_fit_tally {
    size_t rows, right;         /* rows whose source says ran or out of memory */
    size_t oom, oom_right;      /* of them, out of memory */
    size_t ran, ran_right;      /* of them, ran */
    /* Rows with an outcome whose setup cannot be known (setup_unknown):
     * counted apart, in none of the above. */
    size_t unknown, unknown_right;
} aitk_fit_tally;

void aitk_reported_fit_tally(const aitk_fit_row *rows, size_t n, aitk_fit_tally *t);

/* How far measured peaks fell from the model's: the 10th to 90th
 * percentile of reported / predicted peak over the rows that give a single
 * peak measured on a named GPU (a documentation figure with no card is an
 * estimate, not a measurement). predict marks a fit "tight" when the
 * predicted need times the high end would not fit: the model has been that
 * far low before. */
aitk_status aitk_reported_peak_error(const aitk_reported_row *timed, size_t n_timed,
                                     const aitk_fit_row *fits, size_t n_fits,
                                     aitk_time_range *out);
/* How many predicted peaks came within AITK_PEAK_TOLERANCE of the single
 * figure a row reports (|predicted - reported| <= 15% of reported), over
 * every row that gives one, and apart over those measured on a named GPU
 * (the others are documentation figures: an estimate written down, not a
 * run). The target for predict (#23) is every one of them. */
#define AITK_PEAK_TOLERANCE 0.15
typedef struct aitk_peak_tally {
    size_t rows, within;
    size_t measured, measured_within;
} aitk_peak_tally;
void aitk_reported_peak_tally(const aitk_reported_row *timed, size_t n_timed,
                              const aitk_fit_row *fits, size_t n_fits, aitk_peak_tally *t);

/* models/reported_speeds.yaml read and every row predicted once, for all
 * that `predict` says of them: the timed rows (with the calibration, if
 * any), the memory rows, the time range over the training rows
 * (aitk_reported_time_range) and the peak error above (memory does not
 * depend on the calibration). */
typedef struct aitk_reported_eval {
    aitk_reported_speeds *speeds;
    aitk_reported_row *timed; /* speeds->count */
    aitk_fit_row *fits;       /* speeds->n_memory */
    aitk_time_range time_range, peak_error;
} aitk_reported_eval;
aitk_status aitk_reported_eval_load(const aitk_gpudb *db, const aitk_cost_params *p,
                                    const aitk_calibration *cal, aitk_reported_eval *out,
                                    aitk_str *err);
void aitk_reported_eval_free(aitk_reported_eval *e);

/* The fit table, the line "fit verdict right on N of M rows whose source
 * says it ran or ran out of memory" (rows whose setup cannot be known
 * apart), the tight mark's rule (peak_error, from aitk_reported_peak_error)
 * and each row's source. */
aitk_status aitk_reported_fit_print_text(FILE *out, const aitk_fit_row *rows, size_t n,
                                         const aitk_time_range *peak_error,
                                         const aitk_peak_tally *peaks);
/* Adds "memory_reports": [...], "fit_verdicts": {...} and "peak_agreement":
 * {...} to `doc`. */
aitk_status aitk_reported_fit_add_json(cJSON *doc, const aitk_fit_row *rows, size_t n,
                                       const aitk_time_range *peak_error,
                                       const aitk_peak_tally *peaks);

#endif
