/* How far real step times fell from the cost model's predictions, over the
 * training jobs people reported (models/reported_speeds.yaml): the range
 * that comes with every prediction, and how often that range held.
 *
 * The range is the 5th to 95th percentile of reported / predicted seconds
 * per step over the training rows, computed at run time from the file, so
 * it follows every row added. It is the one figure fitted to the rows, so
 * it is also judged without them: for each source (the issue or document a
 * row cites), the range from the other sources' rows, and whether it holds
 * that source's rows (leave one source out). */
#ifndef AITK_MODELS_REPORTED_RANGE_H
#define AITK_MODELS_REPORTED_RANGE_H

#include <stdbool.h>
#include <stddef.h>

#include "models/reported.h"

/* The percentiles the time range spans. The issue sets the range's task
 * as holding for at least 80% of the runs; the 10th to 90th percentile of
 * the runs it was made from holds for at most 80% of them, and for fewer of
 * runs it was not made from, so it spans the 5th to the 95th. */
#define AITK_RANGE_LOW_PERCENTILE 5
#define AITK_RANGE_HIGH_PERCENTILE 95
/* The percentiles of the peak error (reported_fit.h), which marks tight
 * fits: a tenth of the measured peaks may fall on each side. */
#define AITK_PEAK_LOW_PERCENTILE 10
#define AITK_PEAK_HIGH_PERCENTILE 90

typedef struct aitk_time_range {
    size_t n;      /* training rows it comes from; 0: none, no range */
    double lo, hi; /* reported / predicted seconds per step */
    double median; /* the middle of the same values: the typical miss */
} aitk_time_range;

/* The range of n values (any order; reported / predicted) between the
 * AITK_RANGE percentiles, or between `lo_pct` and `hi_pct` (the _at form):
 * AITK_E_NOMEM, or out->n == 0 when n is 0. */
aitk_status aitk_time_range_at(const double *values, size_t n, double lo_pct, double hi_pct,
                               aitk_time_range *out);
aitk_status aitk_time_range_of(const double *values, size_t n, aitk_time_range *out);

/* Whether a reported / predicted value lies in the range (ends included). */
bool aitk_time_range_covers(const aitk_time_range *r, double value);

/* The length of the part of a row's source that names the document: up to
 * its first ':' ("kohya-ss/sd-scripts PR #1374, comment of 2024-08-19"), the
 * whole when it has none. Rows with the same part share a source. */
size_t aitk_reported_source_key(const char *source);
bool aitk_reported_same_source(const aitk_reported_speed *a, const aitk_reported_speed *b);

/* The range over the training rows (generation rows check the forward
 * accounting, not a training prediction), leaving out those of `skip`'s
 * source when skip is not NULL. */
aitk_status aitk_reported_time_range(const aitk_reported_row *rows, size_t n,
                                     const aitk_reported_speed *skip, aitk_time_range *out);

/* How often a range held, in sample and out of it (leave one source out). */
typedef struct aitk_range_coverage {
    aitk_time_range all;   /* over every training row */
    size_t rows;           /* training rows */
    size_t covered;        /* rows inside `all` */
    size_t covered_loso;   /* rows inside the range of the other sources' rows */
} aitk_range_coverage;

/* in_range / in_range_loso: one flag per row (n entries; generation rows
 * false), or NULL. */
aitk_status aitk_reported_range_coverage(const aitk_reported_row *rows, size_t n,
                                         aitk_range_coverage *out, bool *in_range,
                                         bool *in_range_loso);

/* One source's training rows: the error of their predictions, and the
 * range from every other source's rows with how many of them it held. */
typedef struct aitk_source_check {
    const aitk_reported_speed *first; /* its first row: the source's key names it */
    size_t rows;
    double error;           /* exp(mean |ln(predicted / reported)|): a factor >= 1 */
    aitk_time_range others; /* from the other sources' training rows */
    size_t covered;         /* its rows inside `others` */
} aitk_source_check;

/* One entry per source with training rows, in the order of their first row
 * (out: room for n entries). */
aitk_status aitk_reported_by_source(const aitk_reported_row *rows, size_t n,
                                    aitk_source_check *out, size_t *n_out);

/* In *within, the most of n ratios (predicted / reported, any order) that
 * one factor applied to every prediction could bring within `factor` of 1
 * (ends included), and that factor in *scale: one over the geometric middle
 * of the ratios it brings in, the one nearest 1 where several do as well;
 * 1 when n is 0. It bounds what any calibration
 * of the model's rates could do: the rows it leaves out differ from the
 * others by more than a single rate explains. AITK_E_NOMEM or AITK_OK. */
aitk_status aitk_best_scale_of(const double *ratios, size_t n, double factor, size_t *within,
                               double *scale);

/* The same over the training rows (generation rows left out);
 * *training_rows: how many there are. */
aitk_status aitk_reported_best_scale(const aitk_reported_row *rows, size_t n, double factor,
                                     size_t *within, size_t *training_rows, double *scale);

#endif
