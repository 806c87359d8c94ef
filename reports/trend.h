/* Trend: a series of saved reports (one per night on a GPU runner) -> one
 * series of values per metric, and the latest run judged against a baseline.
 *
 * The baseline of a series is the median of its values in the `window` runs
 * before the latest that measured it on the same device (backend + GPU
 * name): a median, so one noisy night neither raises nor hides an alarm, and
 * the same device, so a runner that moved from an A100 to an H100 is not
 * read as a 3x improvement. The change is judged by the rule `compare` uses
 * (reports/metrics.h), so the trend page and the gate agree.
 *
 * Runs are added one at a time and only their figures are kept, so a year of
 * nightly reports does not sit in memory as JSON trees. Reports are put in
 * time order (created_at) by aitk_trend_finish, whatever order they came in.
 *
 * Series: "checks failed" (summary.counts.fail), then per workload the
 * metrics of reports/metrics.h ("workload flux1-dev: median step time"),
 * then per microbenchmark its value ("micro memcpy.host"). A metric whose
 * unit changed is a new series; the old one ends. Each check is a series
 * too ("check gpu.nvml", 1 failed, 0 not), judged like the others, so a
 * night that fixes one check and breaks another is a regression as it is
 * for compare; aitk_trend_finish drops the check series that never failed
 * and did not go missing, so the outputs list only checks that matter. */
#ifndef AITK_REPORTS_TREND_H
#define AITK_REPORTS_TREND_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"
#include "reports/metrics.h"

typedef struct cJSON cJSON;

typedef struct aitk_trend_run {
    char *label;      /* where the report came from (the caller's text, a path) */
    char *created_at; /* ISO 8601, UTC */
    char *commit;     /* tool.git_commit; "" when absent */
    char *version;    /* tool.version; "" when absent */
    char *verdict;    /* summary.verdict */
    double time_s;    /* created_at as seconds since 1970: the order of runs */
} aitk_trend_run;

typedef struct aitk_trend_point {
    size_t run;   /* index into aitk_trend.runs */
    double value;
    char *device; /* "cuda NVIDIA H200", "cpu"; "" when the report does not say */
} aitk_trend_point;

typedef enum aitk_trend_state {
    AITK_TREND_OK,         /* within the threshold of its baseline */
    AITK_TREND_REGRESSION, /* worse than the threshold allows */
    AITK_TREND_IMPROVED,   /* better by more than the threshold */
    AITK_TREND_MISSING,    /* the run before the latest measured it, the latest did not:
                              a regression (a benchmark that stopped producing numbers) */
    AITK_TREND_NEW,        /* the latest run measured it, no earlier run on its device did */
    AITK_TREND_ENDED,      /* neither the latest run nor the one before measured it */
} aitk_trend_state;

typedef struct aitk_trend_series {
    char *name;
    char *unit;
    bool higher_is_better;
    bool check;               /* "check <id>": 1 where it failed, 0 where it ran otherwise */
    aitk_trend_point *points; /* in run order, at most one per run */
    size_t count, cap;
    /* The latest run against the baseline (aitk_trend_finish fills these). */
    aitk_trend_state state;
    double baseline;      /* median of the baseline values; with OK/REGRESSION/IMPROVED */
    size_t baseline_runs; /* how many values it is the median of */
    aitk_change change;
} aitk_trend_series;

typedef struct aitk_trend {
    aitk_trend_run *runs;
    size_t nruns, runs_cap;
    aitk_trend_series *series;
    size_t nseries, series_cap;
    /* Series by name and unit while reports are added: positions + 1 in an
     * open-addressing table (0: empty), at most half full. */
    size_t *series_slots, nslots;
    double threshold_pct;
    size_t window;
    size_t regressions; /* REGRESSION + MISSING */
    bool finished;
} aitk_trend;

/* A trend with the judging rule: threshold_pct >= 0, window >= 1. */
aitk_status aitk_trend_init(aitk_trend *t, double threshold_pct, size_t window);

/* Takes the figures of one parsed report (see aitk_report_parse); `label`
 * names it in messages and in the outputs. AITK_E_PARSE with "label:
 * problem" in err when the report has no usable created_at. */
aitk_status aitk_trend_add_report(aitk_trend *t, const cJSON *report, const char *label,
                                  aitk_str *err);

/* Orders the runs by created_at, keeps only the newest `last` of them
 * (0: all), and judges every series. Call once, after the last add. */
aitk_status aitk_trend_finish(aitk_trend *t, size_t last);

void aitk_trend_free(aitk_trend *t);

/* "ok", "REGRESSION", "improved", "MISSING", "new", "ended" */
const char *aitk_trend_state_name(aitk_trend_state s);

typedef enum aitk_trend_format {
    AITK_TREND_TEXT,
    AITK_TREND_MARKDOWN,
    AITK_TREND_CSV,
    AITK_TREND_HTML,
} aitk_trend_format;

/* A finished trend as text (a table with sparklines), Markdown (for a CI
 * job summary), CSV (one row per run and series, for dashboards) or one
 * self-contained HTML page with a chart per series. */
aitk_status aitk_trend_render(const aitk_trend *t, aitk_trend_format fmt, aitk_str *out);

#endif
