/* The metrics that `compare` (a gate between two reports) and `trend` (a
 * series of nightly reports) read, and the one rule both use to judge a
 * change: which direction is better, how far is beyond the threshold, and
 * what to say when no percentage exists.
 *
 * Keeping the table and the rule here means a nightly job's gate and its
 * trend page never disagree about whether a number got worse. */
#ifndef AITK_REPORTS_METRICS_H
#define AITK_REPORTS_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/str.h"

typedef struct cJSON cJSON;

/* A workload metric: workloads[].<section>.<key>, shown as <label>. */
typedef struct aitk_metric_def {
    const char *section, *key, *label, *unit;
    bool higher_is_better;
} aitk_metric_def;

extern const aitk_metric_def aitk_workload_metrics[];
extern const size_t aitk_workload_metric_count;

/* A microbenchmark entry: an explicit higher_is_better wins; otherwise a
 * rate ("GB/s", "TFLOP/s") is better higher and a time lower. */
bool aitk_micro_higher_is_better(const cJSON *micro);

typedef struct aitk_change {
    bool has_delta;     /* delta_pct is meaningful */
    double delta_pct;   /* (now - base) / |base| * 100 */
    const char *text;   /* when !has_delta: "from 0" or "n/a" (static) */
    bool regression, improvement;
} aitk_change;

/* base -> now against threshold_pct in the bad direction. A value that is
 * not finite is a regression (the gate cannot vouch for it); from 0 no
 * percentage exists, so any move in the bad direction is beyond any
 * threshold (a peak of 0 that became 0.9 GiB is not noise); 0 -> 0 is no
 * change. */
aitk_change aitk_change_judge(double base, double now, bool higher_is_better,
                              double threshold_pct);

/* A value as people read it: "21.50 GiB", "5.0 MiB" (bytes take the largest
 * binary unit that keeps them >= 1, so a CPU run's 5 MiB is not
 * "0.00 GiB"), "2.300 s", "11.8 GB/s"; far outside those forms' range
 * (under a millisecond, 1e7 s and more, 1e15 bytes and more) or not finite,
 * 4 significant digits ("0.0002 s", "1.7e+308 s"), so a column or a chart
 * label stays short in every view (compare, trend, charts). */
void aitk_metric_value_text(aitk_str *out, double v, const char *unit);
/* A change in percent: "+12.3%", or "+8.5e+305%" past a million percent (a
 * value from a near-zero base), kept as short as the values beside it. */
void aitk_change_delta_text(aitk_str *out, double delta_pct);

#endif
