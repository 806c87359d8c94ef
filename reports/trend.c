/* Reports -> series -> the latest run judged against a baseline (see trend.h).
 * The renderers are in trend_render.c. */
#include "reports/trend.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/compare.h"
#include "reports/name_index.h"
#include "reports/fields.h"

aitk_status aitk_trend_init(aitk_trend *t, double threshold_pct, size_t window)
{
    *t = (aitk_trend){0};
    if (!(threshold_pct >= 0) || window < 1)
        return AITK_E_INVAL;
    t->threshold_pct = threshold_pct;
    t->window = window;
    return AITK_OK;
}

static void free_run(aitk_trend_run *r)
{
    aitk_free(r->label);
    aitk_free(r->created_at);
    aitk_free(r->commit);
    aitk_free(r->version);
    aitk_free(r->verdict);
}

static void free_series(aitk_trend_series *s)
{
    for (size_t i = 0; i < s->count; i++)
        aitk_free(s->points[i].device);
    aitk_free(s->points);
    aitk_free(s->name);
    aitk_free(s->unit);
}

void aitk_trend_free(aitk_trend *t)
{
    for (size_t i = 0; i < t->nruns; i++)
        free_run(&t->runs[i]);
    for (size_t i = 0; i < t->nseries; i++)
        free_series(&t->series[i]);
    aitk_free(t->runs);
    aitk_free(t->series);
    aitk_free(t->series_slots);
    *t = (aitk_trend){0};
}

const char *aitk_trend_state_name(aitk_trend_state s)
{
    switch (s) {
    case AITK_TREND_OK:
        return "ok";
    case AITK_TREND_REGRESSION:
        return "REGRESSION";
    case AITK_TREND_IMPROVED:
        return "improved";
    case AITK_TREND_MISSING:
        return "MISSING";
    case AITK_TREND_NEW:
        return "new";
    case AITK_TREND_ENDED:
        return "ended";
    }
    return "?";
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static long days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* "YYYY-MM-DDTHH:MM:SS[.fff]Z" (the form reports are written in) or with an
 * RFC 3339 offset (+00:00, -05:00), as seconds since 1970 UTC: ISO 8601 text
 * sorts as text only while every stamp has the same shape ("05:00:00.5Z"
 * sorts before "05:00:00Z"). An explicit offset is converted, not guessed; a
 * stamp without one, or a date no calendar has (02-30), is refused: a run
 * ordered wrongly would be judged against the wrong baseline. */
static int parse_utc(const char *s, double *seconds)
{
    int y, mo, d, h, mi, sec;
    if (strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
        s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &sec))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60)
        return 0;
    const char *p = s + 19;
    double frac = 0, scale = 0.1;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        for (; isdigit((unsigned char)*p); p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    double offset = 0;
    if ((*p == 'Z' || *p == 'z') && !p[1]) {
        offset = 0;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        int oh, om;
        if (!digits(p + 1, 2, &oh) || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return 0;
        offset = (*p == '+' ? 1 : -1) * (oh * 3600.0 + om * 60.0);
    } else {
        return 0;
    }
    *seconds = (double)days_from_civil(y, mo, d) * 86400.0 + h * 3600.0 + mi * 60.0 + sec + frac -
               offset;
    return 1;
}

/* Series are found by name and unit through a hash table: a walk over all
 * of them for each figure made a report of 10,000 microbenchmarks cost 10^8
 * comparisons. FNV-1a over the name, a NUL, the unit. */
static uint64_t series_hash(const char *name, const char *unit)
{
    uint64_t h = 14695981039346656037u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    h *= 1099511628211u;
    for (const unsigned char *p = (const unsigned char *)unit; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return h;
}

/* The slot of (name, unit): the one holding it, or the empty one it would
 * go in. t->nslots is a power of two. */
static size_t series_slot(const aitk_trend *t, const char *name, const char *unit)
{
    size_t mask = t->nslots - 1, i = (size_t)series_hash(name, unit) & mask;
    for (;; i = (i + 1) & mask) {
        size_t at = t->series_slots[i];
        if (!at || (strcmp(t->series[at - 1].name, name) == 0 &&
                    strcmp(t->series[at - 1].unit, unit) == 0))
            return i;
    }
}

static aitk_trend_series *find_series(aitk_trend *t, const char *name, const char *unit)
{
    if (!t->nslots)
        return NULL;
    size_t at = t->series_slots[series_slot(t, name, unit)];
    return at ? &t->series[at - 1] : NULL;
}

/* Enters series i (already in t->series), growing the table to keep it at
 * most half full. */
static aitk_status index_series(aitk_trend *t, size_t i)
{
    if (2 * (t->nseries + 1) > t->nslots) {
        size_t n = t->nslots ? 2 * t->nslots : 64;
        size_t *slots = aitk_calloc(n, sizeof *slots);
        if (!slots)
            return AITK_E_NOMEM;
        aitk_free(t->series_slots);
        t->series_slots = slots;
        t->nslots = n;
        for (size_t k = 0; k < t->nseries; k++)
            if (k != i)
                t->series_slots[series_slot(t, t->series[k].name, t->series[k].unit)] = k + 1;
    }
    t->series_slots[series_slot(t, t->series[i].name, t->series[i].unit)] = i + 1;
    return AITK_OK;
}

static aitk_status new_series(aitk_trend *t, const char *name, const char *unit,
                              bool higher_is_better, aitk_trend_series **out)
{
    aitk_trend_series *grown = aitk_grow(t->series, sizeof *grown, t->nseries, &t->series_cap, 32);
    if (!grown)
        return AITK_E_NOMEM;
    t->series = grown;
    aitk_trend_series s = {.name = aitk_strdup(name), .unit = aitk_strdup(unit),
                           .higher_is_better = higher_is_better};
    if (!s.name || !s.unit) {
        free_series(&s);
        return AITK_E_NOMEM;
    }
    t->series[t->nseries] = s;
    if (index_series(t, t->nseries)) {
        free_series(&t->series[t->nseries]);
        return AITK_E_NOMEM;
    }
    *out = &t->series[t->nseries++];
    return AITK_OK;
}

/* One value of run `run`. A report that lists the same workload or
 * benchmark twice gives the series its first value only. */
static aitk_status add_point(aitk_trend *t, size_t run, const char *name, const char *unit,
                             bool higher_is_better, double value, const char *device)
{
    if (!isfinite(value))
        return AITK_OK; /* not a measurement: the run did not measure it */
    aitk_trend_series *s = find_series(t, name, unit);
    aitk_status st = AITK_OK;
    if (!s && (st = new_series(t, name, unit, higher_is_better, &s)))
        return st;
    if (s->count && s->points[s->count - 1].run == run)
        return AITK_OK;
    aitk_trend_point *points = aitk_grow(s->points, sizeof *points, s->count, &s->cap, 16);
    if (!points)
        return AITK_E_NOMEM;
    s->points = points;
    char *dev = aitk_strdup(device);
    if (!dev)
        return AITK_E_NOMEM;
    s->points[s->count++] = (aitk_trend_point){.run = run, .value = value, .device = dev};
    return AITK_OK;
}

/* "cuda NVIDIA H200": what a value was measured on. */
static void device_of(aitk_str *out, const cJSON *entry)
{
    aitk_str_clear(out);
    aitk_str_append(out, aitk_field_str(entry, "backend"));
    if (*aitk_field_str(entry, "device")) {
        if (out->len)
            aitk_str_append(out, " ");
        aitk_str_append(out, aitk_field_str(entry, "device"));
    }
}

static aitk_status add_workloads(aitk_trend *t, size_t run, const cJSON *report,
                                 aitk_str *name, aitk_str *device)
{
    const cJSON *w;
    aitk_str key = AITK_STR_INIT;
    cJSON_ArrayForEach(w, aitk_field_array(report, "workloads"))
    {
        /* By name and backend: a GPU run has flux1-dev on the GPU and on
         * the CPU, two series. */
        const char *wname = aitk_entry_key(w, AITK_WORKLOAD_KEY, &key);
        if (!wname) {
            aitk_str_free(&key);
            return AITK_E_NOMEM;
        }
        if (!*wname)
            continue;
        device_of(device, w);
        for (size_t i = 0; i < aitk_workload_metric_count; i++) {
            const aitk_metric_def *m = &aitk_workload_metrics[i];
            double v;
            if (!aitk_field_num(aitk_field_obj(w, m->section), m->key, &v))
                continue;
            aitk_str_clear(name);
            aitk_str_appendf(name, "workload %s: %s", wname, m->label);
            aitk_status st = aitk_str_status(name);
            if (!st)
                st = aitk_str_status(device);
            if (!st)
                st = add_point(t, run, name->ptr, m->unit, m->higher_is_better, v,
                               aitk_str_cstr(device));
            if (st) {
                aitk_str_free(&key);
                return st;
            }
        }
    }
    aitk_str_free(&key);
    return AITK_OK;
}

static aitk_status add_micro(aitk_trend *t, size_t run, const cJSON *report, aitk_str *name,
                             aitk_str *device)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, aitk_field_array(report, "micro"))
    {
        double v;
        const char *mname = aitk_field_str(m, "name");
        if (!*mname || !aitk_field_num(m, "value", &v))
            continue;
        aitk_str_clear(name);
        aitk_str_appendf(name, "micro %s", mname);
        device_of(device, m);
        aitk_status st = aitk_str_status(name);
        if (!st)
            st = aitk_str_status(device);
        if (!st)
            st = add_point(t, run, name->ptr, aitk_field_str(m, "unit"),
                           aitk_micro_higher_is_better(m), v, aitk_str_cstr(device));
        if (st)
            return st;
    }
    return AITK_OK;
}

/* One point per check: 1 where it failed, 0 where it ran otherwise.
 * "checks failed" alone reads a night that fixed one check and broke
 * another as no change; compare calls the new failure a regression. */
static aitk_status add_checks(aitk_trend *t, size_t run, const cJSON *report, aitk_str *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, aitk_field_array(report, "checks"))
    {
        aitk_str_clear(name);
        aitk_str_appendf(name, "check %s", aitk_field_str(c, "id"));
        aitk_status st = aitk_str_status(name);
        bool failed = strcmp(aitk_field_str(c, "status"), "fail") == 0;
        if (!st)
            st = add_point(t, run, name->ptr, "failed", false, failed, "");
        if (!st)
            find_series(t, name->ptr, "failed")->check = true;
        if (st)
            return st;
    }
    return AITK_OK;
}

static aitk_status keep_run(aitk_trend *t, const cJSON *report, const char *label,
                            double time_s)
{
    aitk_trend_run *runs = aitk_grow(t->runs, sizeof *runs, t->nruns, &t->runs_cap, 32);
    if (!runs)
        return AITK_E_NOMEM;
    t->runs = runs;
    const cJSON *tool = aitk_field_obj(report, "tool");
    /* A path may hold any bytes; every output must be UTF-8. */
    bool nomem = false;
    char *repaired = aitk_utf8_repaired(label, &nomem);
    if (nomem)
        return AITK_E_NOMEM;
    aitk_trend_run r = {
        .label = repaired ? repaired : aitk_strdup(label),
        .created_at = aitk_strdup(aitk_field_str(report, "created_at")),
        .commit = aitk_strdup(aitk_field_str(tool, "git_commit")),
        .version = aitk_strdup(aitk_field_str(tool, "version")),
        .verdict = aitk_strdup(aitk_field_str(aitk_field_obj(report, "summary"), "verdict")),
        .time_s = time_s,
    };
    if (!r.label || !r.created_at || !r.commit || !r.version || !r.verdict) {
        free_run(&r);
        return AITK_E_NOMEM;
    }
    t->runs[t->nruns++] = r;
    return AITK_OK;
}

aitk_status aitk_trend_add_report(aitk_trend *t, const cJSON *report, const char *label,
                                  aitk_str *err)
{
    if (t->finished)
        return AITK_E_INVAL;
    double when;
    const char *created = aitk_field_str(report, "created_at");
    if (!parse_utc(created, &when)) {
        aitk_str_appendf(err, "%s: created_at %s%s%s is not an RFC 3339 time like "
                              "2026-12-01T05:00:00Z or ...+01:00 (runs are put in time order "
                              "by it)",
                         label, *created ? "'" : "", *created ? created : "(missing)",
                         *created ? "'" : "");
        return AITK_E_PARSE;
    }
    /* What compare and render refuse, trend refuses too: a negative, string
     * or infinite median, a list that is not a list, a name given twice.
     * Read leniently, a median of -2.3 passed --fail-on-regression as an
     * improvement. */
    aitk_status st = aitk_compare_check_report(report, label, err);
    if (st)
        return st;
    st = keep_run(t, report, label, when);
    if (st)
        return st;
    /* From here a failure leaves the run's figures half added: the caller
     * frees the trend (every error but NOMEM is returned before). */
    size_t run = t->nruns - 1;
    double failed;
    if (aitk_field_num(aitk_field_obj(aitk_field_obj(report, "summary"), "counts"), "fail",
                       &failed))
        st = add_point(t, run, "checks failed", "checks", false, failed, "");
    aitk_str name = AITK_STR_INIT, device = AITK_STR_INIT;
    if (!st)
        st = add_workloads(t, run, report, &name, &device);
    if (!st)
        st = add_micro(t, run, report, &name, &device);
    if (!st)
        st = add_checks(t, run, report, &name);
    aitk_str_free(&name);
    aitk_str_free(&device);
    return st;
}

/* ---- finishing: order, cut, judge ---- */

/* A run before sorting: its time, and its index, which is the order it was
 * added in and breaks ties on created_at. */
typedef struct run_ref {
    double time_s;
    size_t index;
} run_ref;

static int by_time(const void *a, const void *b)
{
    const run_ref *x = a, *y = b;
    if (x->time_s != y->time_s)
        return x->time_s < y->time_s ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int by_run(const void *a, const void *b)
{
    const aitk_trend_point *x = a, *y = b;
    return (x->run > y->run) - (x->run < y->run);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Puts runs in time order and renumbers every point; drops runs older than
 * the newest `last` (0: none dropped), their points, and series left empty. */
static aitk_status order_runs(aitk_trend *t, size_t last)
{
    if (t->nruns == 0)
        return AITK_OK;
    run_ref *refs = aitk_malloc(t->nruns * sizeof *refs);
    size_t *rank = aitk_malloc(t->nruns * sizeof *rank);
    aitk_trend_run *runs = aitk_malloc(t->nruns * sizeof *runs);
    if (!refs || !rank || !runs) {
        aitk_free(refs);
        aitk_free(rank);
        aitk_free(runs);
        return AITK_E_NOMEM;
    }
    for (size_t i = 0; i < t->nruns; i++)
        refs[i] = (run_ref){.time_s = t->runs[i].time_s, .index = i};
    qsort(refs, t->nruns, sizeof *refs, by_time);
    size_t drop = last && last < t->nruns ? t->nruns - last : 0;
    for (size_t k = 0; k < t->nruns; k++) {
        size_t i = refs[k].index;
        if (k < drop) {
            free_run(&t->runs[i]);
            rank[i] = SIZE_MAX;
        } else {
            rank[i] = k - drop;
            runs[k - drop] = t->runs[i];
        }
    }
    aitk_free(t->runs);
    t->runs = runs;
    t->nruns -= drop;
    t->runs_cap = t->nruns;
    size_t kept = 0;
    for (size_t i = 0; i < t->nseries; i++) {
        aitk_trend_series *s = &t->series[i];
        size_t n = 0;
        for (size_t j = 0; j < s->count; j++) {
            if (rank[s->points[j].run] == SIZE_MAX) {
                aitk_free(s->points[j].device);
                continue;
            }
            s->points[n] = s->points[j];
            s->points[n++].run = rank[s->points[j].run];
        }
        s->count = n;
        if (n == 0) {
            free_series(s);
            continue;
        }
        qsort(s->points, s->count, sizeof *s->points, by_run);
        t->series[kept++] = *s;
    }
    t->nseries = kept;
    /* Positions changed, and no report is added after this. */
    aitk_free(t->series_slots);
    t->series_slots = NULL;
    t->nslots = 0;
    aitk_free(refs);
    aitk_free(rank);
    return AITK_OK;
}

/* The latest run's value against the median of up to `window` earlier
 * values measured on the same device. `scratch` holds s->count doubles. */
static void judge(const aitk_trend *t, aitk_trend_series *s, double *scratch)
{
    size_t latest = t->nruns - 1;
    const aitk_trend_point *p = &s->points[s->count - 1];
    if (p->run != latest) {
        bool before = t->nruns >= 2 && p->run == latest - 1;
        s->state = before ? AITK_TREND_MISSING : AITK_TREND_ENDED;
        return;
    }
    size_t n = 0;
    for (size_t j = s->count - 1; j-- > 0 && n < t->window;)
        if (strcmp(s->points[j].device, p->device) == 0)
            scratch[n++] = s->points[j].value;
    if (n == 0) {
        /* compare's rule: a check that fails where the base lacked it is a
         * regression (judged as growth from "not failed"); a figure only the
         * new run has is not. */
        bool failed_anew = s->check && p->value > 0 && t->nruns >= 2;
        s->state = failed_anew ? AITK_TREND_REGRESSION : AITK_TREND_NEW;
        if (failed_anew)
            s->change = aitk_change_judge(0, p->value, false, t->threshold_pct);
        return;
    }
    qsort(scratch, n, sizeof *scratch, by_value);
    s->baseline = n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
    s->baseline_runs = n;
    s->change = aitk_change_judge(s->baseline, p->value, s->higher_is_better, t->threshold_pct);
    s->state = s->change.regression    ? AITK_TREND_REGRESSION
               : s->change.improvement ? AITK_TREND_IMPROVED
                                       : AITK_TREND_OK;
}

/* A check series worth no line: it never failed, and the latest run has
 * it or it ended before the run ahead of the latest. */
static bool quiet_check(const aitk_trend_series *s)
{
    if (!s->check || s->state == AITK_TREND_REGRESSION || s->state == AITK_TREND_MISSING)
        return false;
    for (size_t j = 0; j < s->count; j++)
        if (s->points[j].value > 0)
            return false;
    return true;
}

static void drop_quiet_checks(aitk_trend *t)
{
    size_t kept = 0;
    for (size_t i = 0; i < t->nseries; i++) {
        if (quiet_check(&t->series[i]))
            free_series(&t->series[i]);
        else
            t->series[kept++] = t->series[i];
    }
    t->nseries = kept;
}

aitk_status aitk_trend_finish(aitk_trend *t, size_t last)
{
    if (t->finished)
        return AITK_E_INVAL;
    aitk_status st = order_runs(t, last);
    if (st)
        return st;
    size_t most = 0;
    for (size_t i = 0; i < t->nseries; i++)
        most = t->series[i].count > most ? t->series[i].count : most;
    double *scratch = most ? aitk_malloc(most * sizeof *scratch) : NULL;
    if (most && !scratch)
        return AITK_E_NOMEM;
    t->regressions = 0;
    for (size_t i = 0; i < t->nseries; i++) {
        judge(t, &t->series[i], scratch);
        aitk_trend_state s = t->series[i].state;
        t->regressions += s == AITK_TREND_REGRESSION || s == AITK_TREND_MISSING;
    }
    aitk_free(scratch);
    drop_quiet_checks(t);
    t->finished = true;
    return AITK_OK;
}
