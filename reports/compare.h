/* Comparing two reports: per-metric deltas and a regression gate for CI.
 *
 * Workload metrics (median step time, time per 1000 steps, throughput, peak
 * memory) and microbenchmark results are matched by name; each knows whether
 * higher or lower is better, and a change in the bad direction beyond the
 * threshold is a regression. A check that fails now but did not before is a
 * regression whatever the threshold. "Beyond" is strictly more than the
 * threshold, with a relative 1e-9 allowance for rounding.
 *
 * A gate must not pass because numbers went missing, so these are
 * regressions too: a workload, metric or check that BASE had and NEW lacks; a
 * metric whose unit changed (compared raw, GB/s against MB/s would hide a
 * 1000x change, and a renamed unit usually means a changed benchmark: it
 * is shown as incomparable, not converted, until the baseline is renewed);
 * a metric that moved off 0 in its bad direction (no percentage exists, so
 * any growth is beyond any threshold). Metrics only NEW has are shown as
 * "new" and pass.
 *
 * A malformed report is refused rather than read leniently, since a number
 * read as missing or negative could pass the gate: aitk_compare_reports
 * checks both (aitk_compare_check_report), so its callers need not. Report
 * text in every output format has its control characters shown as \xNN, and
 * values keep a bounded width. */
#ifndef AITK_REPORTS_COMPARE_H
#define AITK_REPORTS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"
#include "reports/metrics.h"

typedef struct cJSON cJSON;

typedef enum aitk_compare_format {
    AITK_COMPARE_TEXT,
    AITK_COMPARE_MARKDOWN,
    AITK_COMPARE_HTML,
} aitk_compare_format;

typedef struct aitk_compare_row {
    char *metric;          /* "workload flux1-dev: median step time" */
    char *unit;            /* "s", "bytes", "GB/s"; "" for status rows */
    bool numeric;          /* false: a status row (base_text -> now_text) */
    double base, now;      /* numeric rows */
    char *base_text, *now_text; /* status rows; "(absent)" when missing */
    bool higher_is_better;
    /* The judgement (reports/metrics.h). Status rows have no delta; their
     * change.text is "changed", "missing", "new" or "unit changed". */
    aitk_change change;
} aitk_compare_row;

typedef struct aitk_compare {
    aitk_compare_row *rows;
    size_t count, cap;
    size_t regressions;
    double threshold_pct;
} aitk_compare;

/* What compare reads must be well-formed: "workloads" and "micro", when
 * present, are lists of objects with a non-empty name that no other entry
 * of the list has; a workload has a string status; each metric compare
 * reads (the sections in reports/metrics.h, micro value), when present, is a
 * finite number >= 0; a micro unit is a string and higher_is_better a
 * boolean. AITK_E_PARSE with one line in `err` ("base.json:
 * workloads[0].step_time_s.median is not a non-negative number (found a
 * string)"), `name` first; AITK_E_NOMEM; otherwise AITK_OK. */
aitk_status aitk_compare_check_report(const cJSON *report, const char *name, aitk_str *err);

/* Fills `out` (zero it first). threshold_pct >= 0. AITK_E_PARSE when a
 * report fails aitk_compare_check_report, BASE's checked first: its line in
 * `err` (may be NULL) names the report base_name or now_name (NULL: "BASE",
 * "NEW"), as the files they were read from. */
aitk_status aitk_compare_reports(const cJSON *base, const char *base_name, const cJSON *now,
                                 const char *now_name, double threshold_pct, aitk_compare *out,
                                 aitk_str *err);

aitk_status aitk_compare_render(const aitk_compare *c, aitk_compare_format fmt, aitk_str *out);

void aitk_compare_free(aitk_compare *c);

/* "5%", "5", "2.5%" -> 5, 5, 2.5 (percent); 0..1000. Errors name the text. */
aitk_status aitk_compare_parse_threshold(const char *text, double *pct, aitk_str *err);

#endif
