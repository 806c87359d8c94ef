/* A finished trend -> text, Markdown, CSV or one HTML page (see trend.h).
 *
 * Every format lists the series that need a look first (regressions, then
 * numbers that went missing, then improvements), so the top of a CI job
 * summary is the answer. Report strings (names, units, devices, paths) are
 * escaped for the format: Markdown cells as `render --markdown` does, XML in
 * HTML, quoted fields in CSV. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fields.h"
#include "reports/html_parts.h"
#include "reports/markdown.h"
#include "reports/svg.h"
#include "reports/trend.h"
#include "reports/xml_escape.h"

enum { HISTORY_RUNS = 24 };

/* Lower comes first. */
static int priority(aitk_trend_state s)
{
    switch (s) {
    case AITK_TREND_REGRESSION:
        return 0;
    case AITK_TREND_MISSING:
        return 1;
    case AITK_TREND_IMPROVED:
        return 2;
    case AITK_TREND_NEW:
        return 3;
    case AITK_TREND_OK:
        return 4;
    case AITK_TREND_ENDED:
        return 5;
    }
    return 6;
}

typedef struct order_ref {
    const aitk_trend_series *s;
    size_t index;
} order_ref;

static int by_priority(const void *a, const void *b)
{
    const order_ref *x = a, *y = b;
    int px = priority(x->s->state), py = priority(y->s->state);
    if (px != py)
        return px - py;
    return (x->index > y->index) - (x->index < y->index);
}

/* The series in the order the outputs list them (free with aitk_free). */
static order_ref *ordered(const aitk_trend *t)
{
    order_ref *r = aitk_malloc((t->nseries ? t->nseries : 1) * sizeof *r);
    if (!r)
        return NULL;
    for (size_t i = 0; i < t->nseries; i++)
        r[i] = (order_ref){.s = &t->series[i], .index = i};
    qsort(r, t->nseries, sizeof *r, by_priority);
    return r;
}

static const aitk_trend_point *last_point(const aitk_trend_series *s)
{
    return &s->points[s->count - 1];
}

static bool judged(const aitk_trend_series *s)
{
    return s->state == AITK_TREND_OK || s->state == AITK_TREND_REGRESSION ||
           s->state == AITK_TREND_IMPROVED;
}

/* The four cells every table shows: latest value, baseline, change, result. */
static void cells(const aitk_trend *t, const aitk_trend_series *s, aitk_str cell[4])
{
    const aitk_trend_point *p = last_point(s);
    bool present = p->run == t->nruns - 1;
    if (present)
        aitk_metric_value_text(&cell[0], p->value, s->unit);
    else
        aitk_str_append(&cell[0], "(absent)");
    if (judged(s)) {
        aitk_metric_value_text(&cell[1], s->baseline, s->unit);
        if (s->change.has_delta)
            aitk_change_delta_text(&cell[2], s->change.delta_pct);
        else
            aitk_str_append(&cell[2], s->change.text);
    } else if (!present) {
        aitk_str_append(&cell[1], "last ");
        aitk_metric_value_text(&cell[1], p->value, s->unit);
        aitk_str_append(&cell[2], s->state == AITK_TREND_MISSING ? "missing" : "ended");
    } else {
        aitk_str_append(&cell[1], "(none)");
        aitk_str_append(&cell[2], "new");
    }
    aitk_str_append(&cell[3], aitk_trend_state_name(s->state));
}

/* The last HISTORY_RUNS runs as block characters scaled to their own range;
 * a run that did not measure the series is a middle dot. */
static void sparkline(aitk_str *out, const aitk_trend *t, const aitk_trend_series *s)
{
    static const char *const blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                         "\u2585", "\u2586", "\u2587", "\u2588"};
    size_t first = t->nruns > HISTORY_RUNS ? t->nruns - HISTORY_RUNS : 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t j = 0; j < s->count; j++)
        if (s->points[j].run >= first) {
            lo = fmin(lo, s->points[j].value);
            hi = fmax(hi, s->points[j].value);
        }
    size_t j = 0;
    for (size_t run = first; run < t->nruns; run++) {
        while (j < s->count && s->points[j].run < run)
            j++;
        if (j == s->count || s->points[j].run != run) {
            aitk_str_append(out, "\u00b7");
            continue;
        }
        int level = hi > lo ? (int)((s->points[j].value - lo) / (hi - lo) * 7 + 0.5) : 3;
        aitk_str_append(out, blocks[level < 0 ? 0 : level > 7 ? 7 : level]);
    }
}

static void clear_cells(aitk_str cell[4])
{
    for (int k = 0; k < 4; k++)
        aitk_str_clear(&cell[k]);
}

static void free_cells(aitk_str *out, aitk_str cell[4])
{
    for (int k = 0; k < 4; k++)
        aitk_field_scratch_free(out, &cell[k]);
}

static const char *verdict_text(const aitk_trend *t)
{
    return t->regressions ? "REGRESSION" : "no regression";
}

static const aitk_trend_run *latest_run(const aitk_trend *t)
{
    return &t->runs[t->nruns - 1];
}

static void text_render(const aitk_trend *t, const order_ref *order, aitk_str *out)
{
    const aitk_trend_run *last = latest_run(t);
    aitk_str_appendf(out, "aitk-validate trend: %zu run(s), %s .. %s\nlatest: %s", t->nruns,
                     t->runs[0].created_at, last->created_at, last->label);
    if (*last->version)
        aitk_str_appendf(out, " (aitk-validate %s%s%.12s)", last->version,
                         *last->commit ? " " : "", last->commit);
    aitk_str_appendf(out,
                     "\nbaseline: median of up to %zu earlier run(s) on the same device; "
                     "threshold %.1f%%\n\n%-52s %16s %16s %9s  %-10s  history\n",
                     t->window, t->threshold_pct, "series", "latest", "baseline", "change",
                     "result");
    aitk_str cell[4] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    for (size_t i = 0; i < t->nseries; i++) {
        const aitk_trend_series *s = order[i].s;
        clear_cells(cell);
        cells(t, s, cell);
        aitk_str_appendf(out, "%-52s %16s %16s %9s  %-10s  ", s->name, aitk_str_cstr(&cell[0]),
                         aitk_str_cstr(&cell[1]), aitk_str_cstr(&cell[2]),
                         aitk_str_cstr(&cell[3]));
        sparkline(out, t, s);
        aitk_str_append(out, "\n");
    }
    free_cells(out, cell);
    aitk_str_appendf(out, "\nResult: %s", verdict_text(t));
    if (t->regressions)
        aitk_str_appendf(out, " (%zu series)", t->regressions);
    aitk_str_append(out, "\n");
}

static void markdown_render(const aitk_trend *t, const order_ref *order, aitk_str *out)
{
    const aitk_trend_run *last = latest_run(t);
    aitk_str_appendf(out, "## aitk-validate trend: %s\n\n%zu run(s) from ", verdict_text(t),
                     t->nruns);
    aitk_markdown_inline(out, t->runs[0].created_at);
    aitk_str_append(out, " to ");
    aitk_markdown_inline(out, last->created_at);
    aitk_str_append(out, "; latest ");
    aitk_markdown_code(out, last->label, false);
    aitk_str_appendf(out,
                     ". Baseline: median of up to %zu earlier run(s) on the same device; "
                     "threshold %.1f%%; %zu regression(s).\n\n"
                     "| series | latest | baseline | change | result | history |\n"
                     "|---|---:|---:|---:|---|---|\n",
                     t->window, t->threshold_pct, t->regressions);
    aitk_str cell[4] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    for (size_t i = 0; i < t->nseries; i++) {
        const aitk_trend_series *s = order[i].s;
        bool bad = s->state == AITK_TREND_REGRESSION || s->state == AITK_TREND_MISSING;
        clear_cells(cell);
        cells(t, s, cell);
        aitk_str_append(out, "| ");
        aitk_markdown_cell(out, s->name);
        for (int k = 0; k < 3; k++) {
            aitk_str_append(out, " | ");
            aitk_markdown_cell(out, aitk_str_cstr(&cell[k]));
        }
        aitk_str_append(out, bad ? " | **" : " | ");
        aitk_markdown_cell(out, aitk_str_cstr(&cell[3]));
        aitk_str_append(out, bad ? "** | " : " | ");
        sparkline(out, t, s);
        aitk_str_append(out, " |\n");
    }
    free_cells(out, cell);
}

/* One CSV field (RFC 4180): quoted when it holds a comma, quote or line
 * break. A text field that a spreadsheet would run as a formula (=, +, -,
 * @ first) is prefixed with ' : a report's names come from elsewhere. */
static void csv_field(aitk_str *out, const char *s, bool text)
{
    bool formula = text && (*s == '=' || *s == '+' || *s == '-' || *s == '@' || *s == '\t' ||
                            *s == '\r');
    bool quote = formula || strpbrk(s, ",\"\r\n") != NULL;
    if (quote)
        aitk_str_append(out, "\"");
    if (formula)
        aitk_str_append(out, "'");
    for (; *s; s++)
        aitk_str_append(out, *s == '"' ? "\"\"" : (char[2]){*s, 0});
    if (quote)
        aitk_str_append(out, "\"");
}

static void csv_render(const aitk_trend *t, aitk_str *out)
{
    aitk_str_append(out, "created_at,git_commit,report,series,unit,device,value\n");
    size_t *next = aitk_calloc(t->nseries ? t->nseries : 1, sizeof *next);
    if (!next) {
        out->failed = true;
        return;
    }
    for (size_t run = 0; run < t->nruns; run++) {
        const aitk_trend_run *r = &t->runs[run];
        for (size_t i = 0; i < t->nseries; i++) {
            const aitk_trend_series *s = &t->series[i];
            if (next[i] >= s->count || s->points[next[i]].run != run)
                continue;
            const aitk_trend_point *p = &s->points[next[i]++];
            const char *fields[] = {r->created_at, r->commit, r->label, s->name, s->unit,
                                    p->device};
            for (size_t k = 0; k < sizeof fields / sizeof *fields; k++) {
                csv_field(out, fields[k], true);
                aitk_str_append(out, ",");
            }
            aitk_str_append_number(out, p->value);
            aitk_str_append(out, "\n");
        }
    }
    aitk_free(next);
}

/* ---- HTML ---- */

static void html_badge(aitk_str *out, aitk_trend_state s)
{
    const char *cls = s == AITK_TREND_REGRESSION || s == AITK_TREND_MISSING ? "v-fail"
                      : s == AITK_TREND_IMPROVED || s == AITK_TREND_OK      ? "v-pass"
                                                                            : "v-skip";
    aitk_str_appendf(out, "<span class=\"badge %s\">%s</span>", cls, aitk_trend_state_name(s));
}

/* What the chart's dots say when pointed at: "2026-12-01T05:00:00Z · 2.300 s
 * · cuda NVIDIA H200 · nightly/2026-12-01/report.json". */
static void point_tip(aitk_str *tip, const aitk_trend *t, const aitk_trend_series *s,
                      const aitk_trend_point *p)
{
    aitk_str_clear(tip);
    aitk_str_appendf(tip, "%s \u00b7 ", t->runs[p->run].created_at);
    aitk_metric_value_text(tip, p->value, s->unit);
    if (*p->device)
        aitk_str_appendf(tip, " \u00b7 %s", p->device);
    aitk_str_appendf(tip, " \u00b7 %s", t->runs[p->run].label);
}

static aitk_status html_chart(aitk_str *out, const aitk_trend *t, const aitk_trend_series *s)
{
    aitk_svg_point *pts = aitk_malloc(s->count * sizeof *pts);
    aitk_str *tips = aitk_calloc(s->count, sizeof *tips);
    if (!pts || !tips) {
        aitk_free(pts);
        aitk_free(tips);
        return AITK_E_NOMEM;
    }
    const aitk_trend_point *last = last_point(s);
    bool latest_present = last->run == t->nruns - 1;
    for (size_t j = 0; j < s->count; j++) {
        const aitk_trend_point *p = &s->points[j];
        point_tip(&tips[j], t, s, p);
        const char *cls = strcmp(p->device, last->device) != 0 ? "other" : NULL;
        if (j == s->count - 1 && latest_present)
            cls = s->state == AITK_TREND_REGRESSION ? "bad"
                  : judged(s)                      ? "good"
                                                   : NULL;
        pts[j] = (aitk_svg_point){.x = p->run, .y = p->value, .tip = aitk_str_cstr(&tips[j]),
                                  .css_class = cls};
    }
    char first[11], lastd[11];
    snprintf(first, sizeof first, "%.10s", t->runs[0].created_at);
    snprintf(lastd, sizeof lastd, "%.10s", latest_run(t)->created_at);
    double half = fabs(s->baseline) * t->threshold_pct / 100;
    aitk_svg_line_spec spec = {.title = s->name, .unit = s->unit, .nx = t->nruns,
                               .x_first = first, .x_last = lastd, .points = pts,
                               .npoints = s->count, .band = judged(s),
                               .band_lo = s->baseline - half, .band_mid = s->baseline,
                               .band_hi = s->baseline + half};
    aitk_status st = aitk_svg_line_chart(out, &spec);
    for (size_t j = 0; j < s->count; j++) {
        if (tips[j].failed)
            st = AITK_E_NOMEM;
        aitk_str_free(&tips[j]);
    }
    aitk_free(tips);
    aitk_free(pts);
    return st;
}

/* The line under a series' heading: what was compared with what. */
static void html_series_note(aitk_str *out, const aitk_trend *t, const aitk_trend_series *s)
{
    const aitk_trend_point *p = last_point(s);
    aitk_str v = AITK_STR_INIT;
    aitk_str_append(out, "<p class=\"muted\">");
    if (judged(s)) {
        aitk_metric_value_text(&v, p->value, s->unit);
        aitk_str_append(&v, " against ");
        aitk_metric_value_text(&v, s->baseline, s->unit);
        aitk_str_appendf(&v, ", the median of %zu earlier run(s)", s->baseline_runs);
        if (*p->device)
            aitk_str_appendf(&v, " on %s", p->device);
        aitk_str_append(&v, ": ");
        if (s->change.has_delta)
            aitk_change_delta_text(&v, s->change.delta_pct);
        else
            aitk_str_append(&v, s->change.text);
        aitk_str_appendf(&v, " (the band is \u00b1%.1f%%)", t->threshold_pct);
    } else if (s->state == AITK_TREND_NEW) {
        aitk_metric_value_text(&v, p->value, s->unit);
        aitk_str_append(&v, " in the latest run; no earlier run measured it");
        if (*p->device)
            aitk_str_appendf(&v, " on %s", p->device);
    } else {
        aitk_str_append(&v, "Last measured ");
        aitk_metric_value_text(&v, p->value, s->unit);
        aitk_str_appendf(&v, " in %s (%s); ", t->runs[p->run].label, t->runs[p->run].created_at);
        aitk_str_append(&v, s->state == AITK_TREND_MISSING
                                ? "the latest run did not measure it"
                                : "neither the latest run nor the one before measured it");
    }
    aitk_xml_escape(out, aitk_str_cstr(&v));
    aitk_field_scratch_free(out, &v);
    aitk_str_append(out, "</p>\n");
}

static void html_summary_table(aitk_str *out, const aitk_trend *t, const order_ref *order)
{
    aitk_str cell[4] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    aitk_str_append(out, "<table id=\"series\"><thead><tr><th>series</th><th>latest</th>"
                         "<th>baseline</th><th>change</th><th>result</th></tr></thead>"
                         "<tbody>\n");
    for (size_t i = 0; i < t->nseries; i++) {
        const aitk_trend_series *s = order[i].s;
        clear_cells(cell);
        cells(t, s, cell);
        aitk_str_appendf(out, "<tr><td><a href=\"#s%zu\">", order[i].index);
        aitk_xml_escape(out, s->name);
        aitk_str_append(out, "</a></td>");
        for (int k = 0; k < 3; k++) {
            aitk_str_append(out, "<td class=\"num\">");
            aitk_xml_escape(out, aitk_str_cstr(&cell[k]));
            aitk_str_append(out, "</td>");
        }
        aitk_str_append(out, "<td>");
        html_badge(out, s->state);
        aitk_str_append(out, "</td></tr>\n");
    }
    aitk_str_append(out, "</tbody></table>\n");
    free_cells(out, cell);
}

static void html_runs(aitk_str *out, const aitk_trend *t)
{
    aitk_str_append(out, "<h2>Runs</h2>\n<table id=\"runs\"><thead><tr><th>#</th>"
                         "<th>created</th><th>version</th><th>verdict</th><th>report</th>"
                         "</tr></thead><tbody>\n");
    for (size_t i = t->nruns; i-- > 0;) {
        const aitk_trend_run *r = &t->runs[i];
        aitk_str_appendf(out, "<tr><td class=\"num\">%zu</td><td class=\"mono\">", i + 1);
        aitk_xml_escape(out, r->created_at);
        aitk_str_append(out, "</td><td class=\"mono\">");
        aitk_xml_escape(out, r->version);
        if (*r->commit) {
            aitk_str_append(out, " ");
            aitk_str v = AITK_STR_INIT;
            aitk_str_appendf(&v, "%.12s", r->commit);
            aitk_xml_escape(out, aitk_str_cstr(&v));
            aitk_field_scratch_free(out, &v);
        }
        const char *cls = strcmp(r->verdict, "fail") == 0   ? "v-fail"
                          : strcmp(r->verdict, "warn") == 0 ? "v-warn"
                          : strcmp(r->verdict, "pass") == 0 ? "v-pass"
                                                            : "v-skip";
        aitk_str_appendf(out, "</td><td><span class=\"badge %s\">", cls);
        aitk_xml_escape(out, *r->verdict ? r->verdict : "?");
        aitk_str_append(out, "</span></td><td class=\"mono\">");
        aitk_xml_escape(out, r->label);
        aitk_str_append(out, "</td></tr>\n");
    }
    aitk_str_append(out, "</tbody></table>\n");
}

static aitk_status html_render(const aitk_trend *t, const order_ref *order, aitk_str *out)
{
    const aitk_trend_run *last = latest_run(t);
    aitk_str_append(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
                         "<meta name=\"color-scheme\" content=\"light dark\">\n"
                         "<title>aitk-validate trend: ");
    aitk_str_append(out, verdict_text(t));
    aitk_str_appendf(out, "</title>\n<style>\n%s</style></head>\n<body>\n", aitk_html_css);
    aitk_str_appendf(out, "<header class=\"banner %s\"><h1>", t->regressions ? "v-fail" : "v-pass");
    if (t->regressions)
        aitk_str_appendf(out, "REGRESSION: %zu series got worse in the latest run",
                         t->regressions);
    else
        aitk_str_append(out, "No regression in the latest run");
    aitk_str_appendf(out, "</h1><div class=\"meta\">%zu run(s), ", t->nruns);
    aitk_xml_escape(out, t->runs[0].created_at);
    aitk_str_append(out, " to ");
    aitk_xml_escape(out, last->created_at);
    aitk_str_append(out, " \u00b7 latest ");
    aitk_xml_escape(out, last->label);
    aitk_str_appendf(out, " \u00b7 baseline: median of up to %zu earlier run(s) on the same "
                          "device \u00b7 threshold %.1f%%</div></header>\n",
                     t->window, t->threshold_pct);
    aitk_str_append(out, "<h2>Series</h2>\n");
    html_summary_table(out, t, order);
    aitk_str_append(out, "<h2>Charts</h2>\n");
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < t->nseries; i++) {
        const aitk_trend_series *s = order[i].s;
        aitk_str_appendf(out, "<section class=\"series\" id=\"s%zu\"><h3>", order[i].index);
        aitk_xml_escape(out, s->name);
        aitk_str_append(out, " ");
        html_badge(out, s->state);
        aitk_str_append(out, "</h3>\n");
        html_series_note(out, t, s);
        st = html_chart(out, t, s);
        aitk_str_append(out, "</section>\n");
    }
    html_runs(out, t);
    aitk_str_append(out, "<footer>Written by aitk-validate trend from saved reports. "
                         "Self-contained: no script, no network. Grey dots were measured on "
                         "another device than the latest value.</footer>\n</body></html>\n");
    return st;
}

aitk_status aitk_trend_render(const aitk_trend *t, aitk_trend_format fmt, aitk_str *out)
{
    if (!t->finished || t->nruns == 0)
        return AITK_E_INVAL;
    if (fmt == AITK_TREND_CSV) {
        csv_render(t, out);
        return aitk_str_status(out);
    }
    order_ref *order = ordered(t);
    if (!order)
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    if (fmt == AITK_TREND_HTML)
        st = html_render(t, order, out);
    else if (fmt == AITK_TREND_MARKDOWN)
        markdown_render(t, order, out);
    else
        text_render(t, order, out);
    aitk_free(order);
    return st ? st : aitk_str_status(out);
}
