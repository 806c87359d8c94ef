/* Statistics of step timings: summary figures, a confidence interval, the
 * end of warm-up, and the extrapolation of a short run to N steps.
 *
 * Pure functions over arrays of seconds, so every figure the runner reports
 * can be checked by hand on a synthetic series (tests/bench/test_stats.c). */
#ifndef AITK_BENCH_STATS_H
#define AITK_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"

typedef struct aitk_stats {
    size_t n;
    double mean, median, p5, p95, min, max;
    double stddev;              /* sample standard deviation (n - 1); 0 when n < 2 */
    double ci95_low, ci95_high; /* mean -+ t(0.975, n-1) * stddev / sqrt(n); the mean when n < 2 */
} aitk_stats;

/* Summary of x[0..n). Percentiles are common/quantile.h's (Hyndman & Fan
 * type 7, the default of numpy and R), so p5 of
 * 1..21 is 2.0. AITK_E_INVAL for n == 0 or a non-finite value; AITK_E_NOMEM. */
aitk_status aitk_stats_compute(const double *x, size_t n, aitk_stats *out);

/* Two-sided 95% critical value of Student's t with `df` degrees of freedom
 * (df == 0 is treated as 1). */
double aitk_stats_t95(size_t df);

/* Warm-up: the step time has "settled" once the last `window` steps all lie
 * within `tolerance` (relative) of their own median and at least `min_steps`
 * steps have run. Warm-up gives up after `max_steps` steps (the run is then
 * timed anyway and says it did not settle). The defaults and why: bench/runner.c. */
typedef struct aitk_warmup_rule {
    size_t min_steps, max_steps, window;
    double tolerance;
} aitk_warmup_rule;

extern const aitk_warmup_rule aitk_warmup_default;

/* True when the warm-up steps x[0..n) have settled under `rule`. */
bool aitk_stats_settled(const double *x, size_t n, const aitk_warmup_rule *rule);

/* A short run extrapolated to `target_steps` steps cycling through buckets
 * in turn (step i runs bucket i % n_buckets, as the runner does): each
 * bucket's mean is weighted by the number of steps it gets among the
 * target steps, so an incomplete last cycle does not bias the estimate. */
typedef struct aitk_extrapolation {
    double total_s;         /* estimated time for target_steps */
    double half_width_s;    /* 95% half-width of that estimate */
    double error_pct;       /* 100 * half_width / total */
    size_t from_steps;      /* measured steps it is based on */
    long target_steps;
} aitk_extrapolation;

/* times[i] is the duration of step i of bucket bucket_of[i] (< n_buckets).
 * Every bucket needs at least one step. A bucket with a single step borrows
 * the pooled relative spread of the others. AITK_E_INVAL on bad input. */
aitk_status aitk_stats_extrapolate(const double *times, const size_t *bucket_of, size_t n,
                                   size_t n_buckets, long target_steps,
                                   aitk_extrapolation *out);

#endif
