/* Two reports -> rows of deltas -> text, Markdown or HTML (see compare.h). */
#include "reports/compare.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fields.h"
#include "reports/xml_escape.h"

static aitk_status add_row(aitk_compare *c, const aitk_compare_row *row)
{
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        aitk_compare_row *rows = aitk_realloc(c->rows, cap * sizeof *rows);
        if (!rows)
            return AITK_E_NOMEM;
        c->rows = rows;
        c->cap = cap;
    }
    c->rows[c->count++] = *row;
    if (row->regression)
        c->regressions++;
    return AITK_OK;
}

static void free_row(aitk_compare_row *r)
{
    aitk_free(r->metric);
    aitk_free(r->unit);
    aitk_free(r->base_text);
    aitk_free(r->now_text);
}

void aitk_compare_free(aitk_compare *c)
{
    for (size_t i = 0; i < c->count; i++)
        free_row(&c->rows[i]);
    aitk_free(c->rows);
    *c = (aitk_compare){0};
}

static aitk_status numeric(aitk_compare *c, const char *metric, const char *unit, double base,
                           double now, bool higher_is_better)
{
    aitk_compare_row r = {.numeric = true, .base = base, .now = now,
                          .higher_is_better = higher_is_better};
    if (base != 0 && isfinite(base) && isfinite(now)) {
        r.has_delta = true;
        r.delta_pct = (now - base) / fabs(base) * 100;
        double worse = higher_is_better ? -r.delta_pct : r.delta_pct;
        r.regression = worse > c->threshold_pct;
        r.improvement = -worse > c->threshold_pct;
    }
    r.metric = aitk_strdup(metric);
    r.unit = aitk_strdup(unit);
    if (!r.metric || !r.unit) {
        free_row(&r);
        return AITK_E_NOMEM;
    }
    aitk_status st = add_row(c, &r);
    if (st)
        free_row(&r);
    return st;
}

static aitk_status status_row(aitk_compare *c, const char *metric, const char *base,
                              const char *now, bool regression, bool improvement)
{
    aitk_compare_row r = {.regression = regression, .improvement = improvement};
    r.metric = aitk_strdup(metric);
    r.unit = aitk_strdup("");
    r.base_text = aitk_strdup(base);
    r.now_text = aitk_strdup(now);
    if (!r.metric || !r.unit || !r.base_text || !r.now_text) {
        free_row(&r);
        return AITK_E_NOMEM;
    }
    aitk_status st = add_row(c, &r);
    if (st)
        free_row(&r);
    return st;
}

static const cJSON *find_named(const cJSON *array, const char *key, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, array)
    {
        if (strcmp(aitk_field_str(e, key), name) == 0)
            return e;
    }
    return NULL;
}

typedef struct metric_def {
    const char *section, *key, *label, *unit;
    bool higher_is_better;
} metric_def;

static const metric_def workload_metrics[] = {
    {"step_time_s", "median", "median step time", "s", false},
    {"step_time_s", "p95", "p95 step time", "s", false},
    {"time_per_1000_steps", "measured_s", "time per 1000 steps", "s", false},
    {"throughput", "steps_per_s", "steps/s", "steps/s", true},
    {"throughput", "images_per_s", "images/s", "images/s", true},
    {"throughput", "tflops", "TFLOP/s", "TFLOP/s", true},
    {"memory", "peak_bytes", "peak memory", "bytes", false},
};

static aitk_status compare_workloads(aitk_compare *c, const cJSON *base, const cJSON *now)
{
    const cJSON *bw = aitk_field_array(base, "workloads");
    const cJSON *nw = aitk_field_array(now, "workloads");
    const cJSON *w;
    aitk_str label = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    cJSON_ArrayForEach(w, bw)
    {
        const char *name = aitk_field_str(w, "name");
        const cJSON *n = find_named(nw, "name", name);
        aitk_str_clear(&label);
        aitk_str_appendf(&label, "workload %s", name);
        const char *bs = aitk_field_str(w, "status"), *ns = aitk_field_str(n, "status");
        if (!n) {
            st = status_row(c, aitk_str_cstr(&label), bs, "(absent)", false, false);
        } else if (strcmp(bs, ns) != 0) {
            bool was_ok = strcmp(bs, "completed") == 0, is_ok = strcmp(ns, "completed") == 0;
            st = status_row(c, aitk_str_cstr(&label), bs, ns, was_ok && !is_ok, !was_ok && is_ok);
        }
        for (size_t i = 0; n && !st && i < sizeof workload_metrics / sizeof *workload_metrics;
             i++) {
            const metric_def *m = &workload_metrics[i];
            double b, v;
            if (!aitk_field_num(aitk_field_obj(w, m->section), m->key, &b) ||
                !aitk_field_num(aitk_field_obj(n, m->section), m->key, &v))
                continue;
            aitk_str_clear(&label);
            aitk_str_appendf(&label, "workload %s: %s", name, m->label);
            st = numeric(c, aitk_str_cstr(&label), m->unit, b, v, m->higher_is_better);
        }
        if (st)
            break;
    }
    if (!st)
        st = aitk_str_status(&label);
    if (!st)
        st = aitk_str_status(&label);
    aitk_str_free(&label);
    return st;
}

/* A rate ("GB/s", "TFLOP/s") is better higher; a time is better lower;
 * an explicit higher_is_better in the report wins. */
static bool micro_higher_is_better(const cJSON *m)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(m, "higher_is_better");
    if (cJSON_IsBool(h))
        return cJSON_IsTrue(h);
    return strstr(aitk_field_str(m, "unit"), "/s") != NULL;
}

static aitk_status compare_micro(aitk_compare *c, const cJSON *base, const cJSON *now)
{
    const cJSON *m;
    aitk_str label = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    cJSON_ArrayForEach(m, aitk_field_array(base, "micro"))
    {
        const char *name = aitk_field_str(m, "name");
        const cJSON *n = find_named(aitk_field_array(now, "micro"), "name", name);
        double b, v;
        if (!n || !aitk_field_num(m, "value", &b) || !aitk_field_num(n, "value", &v))
            continue;
        aitk_str_clear(&label);
        aitk_str_appendf(&label, "micro %s", name);
        if ((st = numeric(c, aitk_str_cstr(&label), aitk_field_str(n, "unit"), b, v,
                          micro_higher_is_better(n))))
            break;
    }
    if (!st)
        st = aitk_str_status(&label);
    aitk_str_free(&label);
    return st;
}

static aitk_status compare_checks(aitk_compare *c, const cJSON *base, const cJSON *now)
{
    const cJSON *bc = aitk_field_array(base, "checks");
    const cJSON *nc = aitk_field_array(now, "checks");
    const cJSON *e;
    aitk_str label = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    cJSON_ArrayForEach(e, nc)
    {
        const char *id = aitk_field_str(e, "id");
        const cJSON *b = find_named(bc, "id", id);
        const char *bs = b ? aitk_field_str(b, "status") : "(absent)";
        const char *ns = aitk_field_str(e, "status");
        if (strcmp(bs, ns) == 0)
            continue;
        aitk_str_clear(&label);
        aitk_str_appendf(&label, "check %s", id);
        bool fails = strcmp(ns, "fail") == 0, failed = strcmp(bs, "fail") == 0;
        if ((st = status_row(c, aitk_str_cstr(&label), bs, ns, fails && !failed,
                             failed && !fails)))
            break;
    }
    cJSON_ArrayForEach(e, bc)
    {
        if (st)
            break;
        const char *id = aitk_field_str(e, "id");
        if (find_named(nc, "id", id))
            continue;
        aitk_str_clear(&label);
        aitk_str_appendf(&label, "check %s", id);
        st = status_row(c, aitk_str_cstr(&label), aitk_field_str(e, "status"), "(absent)", false,
                        false);
    }
    if (!st)
        st = aitk_str_status(&label);
    aitk_str_free(&label);
    return st;
}

aitk_status aitk_compare_reports(const cJSON *base, const cJSON *now, double threshold_pct,
                                 aitk_compare *out)
{
    if (!base || !now || !(threshold_pct >= 0))
        return AITK_E_INVAL;
    out->threshold_pct = threshold_pct;
    aitk_status st = compare_workloads(out, base, now);
    if (!st)
        st = compare_micro(out, base, now);
    if (!st)
        st = compare_checks(out, base, now);
    return st;
}

aitk_status aitk_compare_parse_threshold(const char *text, double *pct, aitk_str *err)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    bool digits = end != text;
    if (digits && *end == '%')
        end++;
    if (!digits || *end || errno == ERANGE || !isfinite(v)) {
        aitk_str_appendf(err, "--threshold: '%s' is not a percentage (e.g. 5%%)", text);
        return AITK_E_INVAL;
    }
    if (v < 0 || v > 1000) {
        aitk_str_appendf(err, "--threshold: %s is out of range (0%%..1000%%)", text);
        return AITK_E_INVAL;
    }
    *pct = v;
    return AITK_OK;
}

static void value_text(aitk_str *out, double v, const char *unit)
{
    if (strcmp(unit, "bytes") == 0)
        aitk_str_appendf(out, "%.2f GiB", v / 1073741824.0);
    else if (strcmp(unit, "s") == 0)
        aitk_str_appendf(out, "%.3f s", v);
    else
        aitk_str_appendf(out, "%.4g %s", v, unit);
}

/* The four cells of a row as plain text; the formats differ only in framing. */
static void cells(const aitk_compare_row *r, aitk_str cell[4])
{
    if (r->numeric) {
        value_text(&cell[0], r->base, r->unit);
        value_text(&cell[1], r->now, r->unit);
        if (r->has_delta)
            aitk_str_appendf(&cell[2], "%+.1f%%", r->delta_pct);
        else
            aitk_str_append(&cell[2], "n/a");
    } else {
        aitk_str_append(&cell[0], r->base_text);
        aitk_str_append(&cell[1], r->now_text);
        aitk_str_append(&cell[2], "changed");
    }
    aitk_str_append(&cell[3], r->regression ? "REGRESSION" : r->improvement ? "improved" : "ok");
}

aitk_status aitk_compare_render(const aitk_compare *c, aitk_compare_format fmt, aitk_str *out)
{
    aitk_str cell[4] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    const char *verdict = c->regressions ? "REGRESSION" : "no regression";
    if (fmt == AITK_COMPARE_HTML)
        aitk_str_appendf(out,
                         "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                         "<meta name=\"color-scheme\" content=\"light dark\">"
                         "<title>aitk-validate compare</title><style>"
                         "body{font:15px/1.4 system-ui,sans-serif;max-width:1000px;margin:auto;"
                         "padding:16px}table{border-collapse:collapse;width:100%%}"
                         "th,td{padding:4px 8px;border-bottom:1px solid #8884;text-align:left}"
                         "td.num{text-align:right}.bad{color:#cf222e;font-weight:700}"
                         ".good{color:#1a7f37}@media (prefers-color-scheme:dark){body{"
                         "background:#0d1117;color:#e6edf3}.bad{color:#f85149}.good{"
                         "color:#3fb950}}</style></head><body>\n<h1 class=\"%s\">%s</h1>\n"
                         "<p>%zu regression(s) beyond %.1f%%, %zu metric(s) compared.</p>\n"
                         "<table id=\"compare\"><thead><tr><th>metric</th><th>base</th>"
                         "<th>new</th><th>change</th><th>result</th></tr></thead><tbody>\n",
                         c->regressions ? "bad" : "good", verdict, c->regressions,
                         c->threshold_pct, c->count);
    else if (fmt == AITK_COMPARE_MARKDOWN)
        aitk_str_appendf(out,
                         "## aitk-validate compare: %s\n\n%zu regression(s) beyond %.1f%%, "
                         "%zu metric(s) compared.\n\n| metric | base | new | change | result |\n"
                         "|---|---:|---:|---:|---|\n",
                         verdict, c->regressions, c->threshold_pct, c->count);
    else
        aitk_str_appendf(out, "aitk-validate compare (threshold %.1f%%)\n%-52s %14s %14s %9s  %s\n",
                         c->threshold_pct, "metric", "base", "new", "change", "result");
    for (size_t i = 0; i < c->count; i++) {
        const aitk_compare_row *r = &c->rows[i];
        for (int k = 0; k < 4; k++)
            aitk_str_clear(&cell[k]);
        cells(r, cell);
        if (fmt == AITK_COMPARE_HTML) {
            aitk_str_append(out, "<tr><td>");
            aitk_xml_escape(out, r->metric);
            for (int k = 0; k < 3; k++) {
                aitk_str_append(out, "</td><td class=\"num\">");
                aitk_xml_escape(out, aitk_str_cstr(&cell[k]));
            }
            aitk_str_appendf(out, "</td><td class=\"%s\">",
                             r->regression ? "bad" : r->improvement ? "good" : "");
            aitk_xml_escape(out, aitk_str_cstr(&cell[3]));
            aitk_str_append(out, "</td></tr>\n");
        } else if (fmt == AITK_COMPARE_MARKDOWN) {
            aitk_str_append(out, "| ");
            for (const char *p = r->metric; *p; p++)
                aitk_str_append(out, *p == '|' ? "\\|" : (char[2]){*p, 0});
            aitk_str_appendf(out, " | %s | %s | %s | %s%s%s |\n", aitk_str_cstr(&cell[0]),
                             aitk_str_cstr(&cell[1]), aitk_str_cstr(&cell[2]),
                             r->regression ? "**" : "", aitk_str_cstr(&cell[3]),
                             r->regression ? "**" : "");
        } else {
            aitk_str_appendf(out, "%-52s %14s %14s %9s  %s\n", r->metric, aitk_str_cstr(&cell[0]),
                             aitk_str_cstr(&cell[1]), aitk_str_cstr(&cell[2]),
                             aitk_str_cstr(&cell[3]));
        }
    }
    if (fmt == AITK_COMPARE_HTML)
        aitk_str_append(out, "</tbody></table></body></html>\n");
    else if (fmt == AITK_COMPARE_TEXT)
        aitk_str_appendf(out, "Result: %s (%zu beyond %.1f%%)\n", verdict, c->regressions,
                         c->threshold_pct);
    for (int k = 0; k < 4; k++)
        aitk_field_scratch_free(out, &cell[k]);
    return aitk_str_status(out);
}
