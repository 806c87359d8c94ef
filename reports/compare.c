/* Two reports -> rows of deltas -> text, Markdown or HTML (see compare.h). */
#include "reports/compare.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fields.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "reports/metrics.h"
#include "reports/name_index.h"
#include "reports/xml_escape.h"

/* Report text as plain, visible characters (aitk_str_append_printable, one
 * line): an ESC sequence in a workload name must not retitle or clear the
 * terminal that shows the table, and a newline must not split a row. Every
 * format goes through this, so HTML and Markdown show the same cell text. */
static void append_visible(aitk_str *out, const char *s)
{
    aitk_str_append_printable(out, s, false);
}

static aitk_status add_row(aitk_compare *c, const aitk_compare_row *row)
{
    aitk_compare_row *rows = aitk_grow(c->rows, sizeof *rows, c->count, &c->cap, 32);
    if (!rows)
        return AITK_E_NOMEM;
    c->rows = rows;
    c->rows[c->count++] = *row;
    if (row->change.regression)
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

static aitk_status keep_row(aitk_compare *c, aitk_compare_row *r, const char *metric,
                            const char *unit)
{
    r->metric = aitk_strdup(metric);
    r->unit = aitk_strdup(unit);
    if (!r->metric || !r->unit) {
        free_row(r);
        return AITK_E_NOMEM;
    }
    aitk_status st = add_row(c, r);
    if (st)
        free_row(r);
    return st;
}

static aitk_status numeric(aitk_compare *c, const char *metric, const char *unit, double base,
                           double now, bool higher_is_better)
{
    aitk_compare_row r = {
        .numeric = true, .base = base, .now = now, .higher_is_better = higher_is_better,
        .change = aitk_change_judge(base, now, higher_is_better, c->threshold_pct)};
    return keep_row(c, &r, metric, unit);
}

static aitk_status status_row(aitk_compare *c, const char *metric, const char *base,
                              const char *now, const char *change, bool regression,
                              bool improvement)
{
    aitk_compare_row r = {
        .change = {.text = change, .regression = regression, .improvement = improvement}};
    r.base_text = aitk_strdup(base);
    r.now_text = aitk_strdup(now);
    if (!r.base_text || !r.now_text) {
        free_row(&r);
        return AITK_E_NOMEM;
    }
    return keep_row(c, &r, metric, "");
}

/* A value on one side only: BASE had it and NEW lost it (a regression: a
 * benchmark that silently stopped producing numbers must not pass), or NEW
 * has a metric BASE never measured (shown, passes). */
static aitk_status one_side_row(aitk_compare *c, const char *metric, double v, const char *unit,
                                bool in_base)
{
    aitk_str text = AITK_STR_INIT;
    aitk_metric_value_text(&text, v, unit);
    aitk_status st = aitk_str_status(&text);
    if (!st)
        st = in_base ? status_row(c, metric, text.ptr, "(absent)", "missing", true, false)
                     : status_row(c, metric, "(absent)", text.ptr, "new", false, false);
    aitk_str_free(&text);
    return st;
}

/* The same metric in two units: shown side by side, never compared raw. */
static aitk_status unit_changed_row(aitk_compare *c, const char *metric, double base,
                                    const char *base_unit, double now, const char *now_unit)
{
    aitk_str b = AITK_STR_INIT, n = AITK_STR_INIT;
    aitk_metric_value_text(&b, base, base_unit);
    aitk_metric_value_text(&n, now, now_unit);
    aitk_status st = aitk_str_status(&b);
    if (!st)
        st = aitk_str_status(&n);
    if (!st)
        st = status_row(c, metric, b.ptr, n.ptr, "unit changed", true, false);
    aitk_str_free(&b);
    aitk_str_free(&n);
    return st;
}

/* Both reports' entries of one list, by name: each entry is looked up in the
 * other report's list once. `label` is the scratch text of the row being
 * written, "KIND NAME", reused across the walk. */
typedef struct both_indexed {
    const cJSON *base_list, *now_list;
    aitk_name_index base, now;
    aitk_str label;
} both_indexed;

static aitk_status index_both(both_indexed *b, const cJSON *base, const cJSON *now,
                              const char *list, const char *key)
{
    b->base_list = aitk_field_array(base, list);
    b->now_list = aitk_field_array(now, list);
    b->label = (aitk_str)AITK_STR_INIT;
    aitk_status st = aitk_name_index_build(&b->base, b->base_list, key);
    if (!st && (st = aitk_name_index_build(&b->now, b->now_list, key)))
        aitk_name_index_free(&b->base);
    return st;
}

/* Sets b->label to "KIND NAME"; fails only when the text could not grow. */
static aitk_status index_both_label(both_indexed *b, const char *kind, const char *name)
{
    aitk_str_clear(&b->label);
    aitk_str_appendf(&b->label, "%s %s", kind, name);
    return aitk_str_status(&b->label);
}

static void index_both_free(both_indexed *b)
{
    aitk_str_free(&b->label);
    aitk_name_index_free(&b->base);
    aitk_name_index_free(&b->now);
}

/* One workload found in both reports: its status, then each metric BASE
 * measured. */
static aitk_status compare_workload(aitk_compare *c, const char *name, const cJSON *w,
                                    const cJSON *n, aitk_str *label)
{
    const char *bs = aitk_field_str(w, "status"), *ns = aitk_field_str(n, "status");
    aitk_status st = AITK_OK;
    if (strcmp(bs, ns) != 0) {
        bool was_ok = strcmp(bs, "completed") == 0, is_ok = strcmp(ns, "completed") == 0;
        aitk_str_clear(label);
        aitk_str_appendf(label, "workload %s", name);
        st = status_row(c, aitk_str_cstr(label), bs, ns, "changed", was_ok && !is_ok,
                        !was_ok && is_ok);
    }
    for (size_t i = 0; !st && i < aitk_workload_metric_count; i++) {
        const aitk_metric_def *m = &aitk_workload_metrics[i];
        double b, v;
        if (!aitk_field_num(aitk_field_obj(w, m->section), m->key, &b))
            continue; /* BASE never measured it: nothing to hold NEW to */
        aitk_str_clear(label);
        aitk_str_appendf(label, "workload %s: %s", name, m->label);
        if (aitk_field_num(aitk_field_obj(n, m->section), m->key, &v))
            st = numeric(c, aitk_str_cstr(label), m->unit, b, v, m->higher_is_better);
        else
            st = one_side_row(c, aitk_str_cstr(label), b, m->unit, true);
    }
    return st ? st : aitk_str_status(label);
}

static aitk_status compare_workloads(aitk_compare *c, const cJSON *base, const cJSON *now)
{
    const cJSON *w;
    both_indexed ix;
    aitk_status st = index_both(&ix, base, now, "workloads", AITK_WORKLOAD_KEY);
    if (st)
        return st;
    aitk_str key = AITK_STR_INIT;
    cJSON_ArrayForEach(w, ix.base_list)
    {
        if (st)
            break;
        const char *name = aitk_entry_key(w, AITK_WORKLOAD_KEY, &key);
        if (!name) {
            st = AITK_E_NOMEM;
            break;
        }
        const cJSON *n = aitk_name_index_find(&ix.now, name);
        if (n)
            st = compare_workload(c, name, w, n, &ix.label);
        else if (!(st = index_both_label(&ix, "workload", name)))
            st = status_row(c, ix.label.ptr, aitk_field_str(w, "status"), "(absent)",
                            "missing", true, false);
    }
    cJSON_ArrayForEach(w, ix.now_list)
    {
        if (st)
            break;
        const char *name = aitk_entry_key(w, AITK_WORKLOAD_KEY, &key);
        if (!name) {
            st = AITK_E_NOMEM;
            break;
        }
        if (aitk_name_index_find(&ix.base, name))
            continue;
        if (!(st = index_both_label(&ix, "workload", name)))
            st = status_row(c, ix.label.ptr, "(absent)", aitk_field_str(w, "status"), "new",
                            false, false);
    }
    aitk_str_free(&key);
    index_both_free(&ix);
    return st;
}

/* One microbenchmark BASE measured, against NEW's entry of that name. */
static aitk_status compare_one_micro(aitk_compare *c, const char *label, const cJSON *m,
                                     const cJSON *n)
{
    double b, v;
    if (!aitk_field_num(m, "value", &b))
        return AITK_OK; /* BASE has no figure: nothing to hold NEW to */
    const char *bu = aitk_field_str(m, "unit");
    if (!n || !aitk_field_num(n, "value", &v))
        return one_side_row(c, label, b, bu, true);
    if (strcmp(bu, aitk_field_str(n, "unit")) != 0)
        return unit_changed_row(c, label, b, bu, v, aitk_field_str(n, "unit"));
    return numeric(c, label, bu, b, v, aitk_micro_higher_is_better(n));
}

static aitk_status compare_micro(aitk_compare *c, const cJSON *base, const cJSON *now)
{
    const cJSON *m;
    both_indexed ix;
    aitk_status st = index_both(&ix, base, now, "micro", "name");
    if (st)
        return st;
    cJSON_ArrayForEach(m, ix.base_list)
    {
        const char *name = aitk_field_str(m, "name");
        if (!(st = index_both_label(&ix, "micro", name)))
            st = compare_one_micro(c, ix.label.ptr, m, aitk_name_index_find(&ix.now, name));
        if (st)
            break;
    }
    cJSON_ArrayForEach(m, ix.now_list)
    {
        double v;
        if (st)
            break;
        const char *name = aitk_field_str(m, "name");
        if (aitk_name_index_find(&ix.base, name) || !aitk_field_num(m, "value", &v))
            continue;
        if (!(st = index_both_label(&ix, "micro", name)))
            st = one_side_row(c, ix.label.ptr, v, aitk_field_str(m, "unit"), false);
    }
    index_both_free(&ix);
    return st;
}

static aitk_status compare_checks(aitk_compare *c, const cJSON *base, const cJSON *now)
{
    const cJSON *e;
    both_indexed ix;
    aitk_status st = index_both(&ix, base, now, "checks", "id");
    if (st)
        return st;
    cJSON_ArrayForEach(e, ix.now_list)
    {
        const char *id = aitk_field_str(e, "id");
        const cJSON *b = aitk_name_index_find(&ix.base, id);
        const char *bs = b ? aitk_field_str(b, "status") : "(absent)";
        const char *ns = aitk_field_str(e, "status");
        if (strcmp(bs, ns) == 0)
            continue;
        bool fails = strcmp(ns, "fail") == 0, failed = strcmp(bs, "fail") == 0;
        if ((st = index_both_label(&ix, "check", id)) ||
            (st = status_row(c, ix.label.ptr, bs, ns, "changed", fails && !failed,
                             failed && !fails)))
            break;
    }
    cJSON_ArrayForEach(e, ix.base_list)
    {
        if (st)
            break;
        const char *id = aitk_field_str(e, "id");
        if (aitk_name_index_find(&ix.now, id))
            continue;
        /* A check that stopped running proves nothing: a gate must not pass
         * because a check went missing, as for a metric. */
        if (!(st = index_both_label(&ix, "check", id)))
            st = status_row(c, ix.label.ptr, aitk_field_str(e, "status"), "(absent)",
                            "missing", true, false);
    }
    index_both_free(&ix);
    return st;
}

/* Appends "NAME: message" to err; true, so a check reads `return refuse(...)`. */
AITK_PRINTF(3, 4)
static bool refuse(aitk_str *err, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    aitk_str_appendf(err, "%s: ", name);
    aitk_str_vappendf(err, fmt, ap);
    va_end(ap);
    return true;
}

/* obj.key, when present, must be a finite number >= 0 (what the schema
 * allows, and what the rule can judge: a negative step time would read as
 * an improvement), and > 0 when `positive`: a time of 0 s was never
 * measured, and as a base it makes any later time an infinite regression.
 * obj is list[i], or list[i].section when section is set. */
static bool bad_number(const cJSON *obj, const char *key, bool positive, const char *name,
                       const char *list, int i, const char *section, aitk_str *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (positive && cJSON_IsNumber(v) && v->valuedouble == 0)
        return refuse(err, name, "%s[%d]%s%s.%s is 0 (a measured time is more than 0 s)", list,
                      i, section ? "." : "", section ? section : "", key);
    if (!v || (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0))
        return false;
    refuse(err, name, "%s[%d]%s%s.%s is not a non-negative number (found ", list, i,
           section ? "." : "", section ? section : "", key);
    if (cJSON_IsNumber(v))
        aitk_str_appendf(err, "%.15g)", v->valuedouble);
    else
        aitk_str_append(err, cJSON_IsString(v) ? "a string)"
                             : cJSON_IsNull(v) ? "null)"
                                               : "neither a number nor a string)");
    return true;
}

/* One entry of workloads or micro: an object with a non-empty name that no
 * earlier entry has (entries are matched by name, workloads by name and
 * backend, AITK_WORKLOAD_KEY: with a second "flux1-dev" on the same backend
 * the gate cannot tell which to compare), and well-formed fields where
 * compare reads them. */
static bool bad_entry(const aitk_name_index *names, const char *what, int i, const cJSON *e,
                      const char *n, const char *name, aitk_str *err)
{
    if (!cJSON_IsObject(e) || !*aitk_field_str(e, "name"))
        return refuse(err, name, "%s[%d] is not an object with a name", what, i);
    const aitk_named_entry *first = aitk_name_index_first(names, n);
    if (first && first->order < (size_t)i) {
        refuse(err, name, "%s[%d] and %s[%d] are both named '", what, (int)first->order, what, i);
        append_visible(err, n);
        aitk_str_append(err, "': entries are matched by name, so the two cannot be told apart");
        return true;
    }
    if (strcmp(what, "micro") == 0) {
        const cJSON *unit = cJSON_GetObjectItemCaseSensitive(e, "unit");
        const cJSON *hib = cJSON_GetObjectItemCaseSensitive(e, "higher_is_better");
        if (unit && !cJSON_IsString(unit))
            return refuse(err, name, "micro[%d].unit is not a string", i);
        /* Read as absent, it would silently fall back to the unit's guess. */
        if (hib && !cJSON_IsBool(hib))
            return refuse(err, name, "micro[%d].higher_is_better is not true or false", i);
        return bad_number(e, "value", false, name, "micro", i, NULL, err);
    }
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "status")))
        return refuse(err, name, "workloads[%d].status is missing or not a string", i);
    for (size_t k = 0; k < aitk_workload_metric_count; k++) {
        const aitk_metric_def *m = &aitk_workload_metrics[k];
        const cJSON *section = cJSON_GetObjectItemCaseSensitive(e, m->section);
        if (section && !cJSON_IsObject(section))
            return refuse(err, name, "workloads[%d].%s is not an object", i, m->section);
        const bool time = strcmp(m->unit, "s") == 0;
        if (bad_number(section, m->key, time, name, "workloads", i, m->section, err))
            return true;
    }
    return false;
}

aitk_status aitk_compare_check_report(const cJSON *report, const char *name, aitk_str *err)
{
    /* What render refuses before it gets here (validate/cmd_render.c), compare
     * and trend refuse too: a verdict a gate cannot read, a date not text. */
    aitk_verdict verdict;
    if (aitk_report_verdict(report, &verdict)) {
        refuse(err, name, "summary.verdict: missing or not one of pass, warn, fail");
        return AITK_E_PARSE;
    }
    const cJSON *created = cJSON_GetObjectItemCaseSensitive(report, "created_at");
    if (created && !cJSON_IsString(created)) {
        refuse(err, name, "created_at is not a string (an RFC 3339 time)");
        return AITK_E_PARSE;
    }
    static const char *const lists[] = {"workloads", "micro"};
    for (int k = 0; k < 2; k++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(report, lists[k]);
        if (list && !cJSON_IsArray(list)) {
            refuse(err, name, "%s is not a list (found %s)", lists[k],
                   cJSON_IsNull(list) ? "null" : cJSON_IsObject(list) ? "an object" : "a value");
            return AITK_E_PARSE;
        }
        aitk_name_index names;
        if (aitk_name_index_build(&names, list, k == 0 ? AITK_WORKLOAD_KEY : "name")) {
            aitk_str_append(err, "out of memory");
            return AITK_E_NOMEM;
        }
        int i = 0;
        const cJSON *e;
        bool bad = false;
        aitk_str key = AITK_STR_INIT;
        aitk_status st = AITK_OK;
        cJSON_ArrayForEach(e, list)
        {
            const char *n = aitk_entry_key(e, k == 0 ? AITK_WORKLOAD_KEY : "name", &key);
            if (!n) {
                aitk_str_append(err, "out of memory");
                st = AITK_E_NOMEM;
                break;
            }
            if ((bad = bad_entry(&names, lists[k], i++, e, n, name, err)))
                break;
        }
        aitk_str_free(&key);
        aitk_name_index_free(&names);
        if (st)
            return st;
        if (bad)
            return AITK_E_PARSE;
    }
    /* Checks are matched by id, as entries by name: two with one id leave
     * the gate guessing which one passed. */
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks"), *c;
    aitk_name_index ids;
    if (aitk_name_index_build(&ids, checks, "id")) {
        aitk_str_append(err, "out of memory");
        return AITK_E_NOMEM;
    }
    aitk_status st = AITK_OK;
    int i = 0;
    cJSON_ArrayForEach(c, checks)
    {
        const char *id = aitk_field_str(c, "id");
        const aitk_named_entry *first = *id ? aitk_name_index_first(&ids, id) : NULL;
        if (first && first->order < (size_t)i) {
            refuse(err, name, "checks[%d] and checks[%d] have the same id '", (int)first->order,
                   i);
            append_visible(err, id);
            aitk_str_append(err, "': checks are matched by id, so the two cannot be told apart");
            st = AITK_E_PARSE;
            break;
        }
        i++;
    }
    aitk_name_index_free(&ids);
    return st;
}

aitk_status aitk_compare_reports(const cJSON *base, const char *base_name, const cJSON *now,
                                 const char *now_name, double threshold_pct, aitk_compare *out,
                                 aitk_str *err)
{
    if (!base || !now || !(threshold_pct >= 0))
        return AITK_E_INVAL;
    aitk_str unsaid = AITK_STR_INIT; /* the words, when the caller wants none */
    aitk_str *words = err ? err : &unsaid;
    aitk_status bad = aitk_compare_check_report(base, base_name ? base_name : "BASE", words);
    if (!bad)
        bad = aitk_compare_check_report(now, now_name ? now_name : "NEW", words);
    aitk_str_free(&unsaid);
    if (bad)
        return bad;
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

/* The five cells of a row (metric, base, new, change, result) as visible
 * plain text; the formats differ only in framing and escaping. */
enum { CELLS = 5 };

static void cells(const aitk_compare_row *r, aitk_str cell[CELLS])
{
    append_visible(&cell[0], r->metric);
    if (r->numeric) {
        aitk_str num = AITK_STR_INIT;
        aitk_metric_value_text(&num, r->base, r->unit);
        append_visible(&cell[1], aitk_str_cstr(&num));
        aitk_str_clear(&num);
        aitk_metric_value_text(&num, r->now, r->unit);
        append_visible(&cell[2], aitk_str_cstr(&num));
        aitk_field_scratch_free(&cell[2], &num);
    } else {
        append_visible(&cell[1], r->base_text);
        append_visible(&cell[2], r->now_text);
    }
    /* Off a tiny base the percentage can be astronomical (or inf): still
     * one short cell. */
    if (r->change.has_delta)
        aitk_change_delta_text(&cell[3], r->change.delta_pct);
    else
        aitk_str_append(&cell[3], r->change.text ? r->change.text : "n/a");
    aitk_str_append(&cell[4], r->change.regression    ? "REGRESSION"
                              : r->change.improvement ? "improved"
                                                      : "ok");
}

/* Report strings (workload, micro and check names, statuses, units) are
 * escaped as `render --markdown` escapes them: no markup reaches the page. */
static void markdown_row(aitk_str *out, const aitk_compare_row *r, const aitk_str cell[CELLS])
{
    aitk_str_append(out, "| ");
    aitk_markdown_cell(out, aitk_str_cstr(&cell[0]));
    for (int k = 1; k < 4; k++) {
        aitk_str_append(out, " | ");
        aitk_markdown_cell(out, aitk_str_cstr(&cell[k]));
    }
    aitk_str_append(out, r->change.regression ? " | **" : " | ");
    aitk_markdown_cell(out, aitk_str_cstr(&cell[4]));
    aitk_str_append(out, r->change.regression ? "** |\n" : " |\n");
}

aitk_status aitk_compare_render(const aitk_compare *c, aitk_compare_format fmt, aitk_str *out)
{
    aitk_str cell[CELLS] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT,
                            AITK_STR_INIT};
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
        for (int k = 0; k < CELLS; k++)
            aitk_str_clear(&cell[k]);
        cells(r, cell);
        if (fmt == AITK_COMPARE_HTML) {
            aitk_str_append(out, "<tr><td>");
            aitk_xml_escape(out, aitk_str_cstr(&cell[0]));
            for (int k = 1; k < 4; k++) {
                aitk_str_append(out, "</td><td class=\"num\">");
                aitk_xml_escape(out, aitk_str_cstr(&cell[k]));
            }
            aitk_str_appendf(out, "</td><td class=\"%s\">",
                             r->change.regression    ? "bad"
                             : r->change.improvement ? "good"
                                                     : "");
            aitk_xml_escape(out, aitk_str_cstr(&cell[4]));
            aitk_str_append(out, "</td></tr>\n");
        } else if (fmt == AITK_COMPARE_MARKDOWN) {
            markdown_row(out, r, cell);
        } else {
            aitk_str_appendf(out, "%-52s %14s %14s %9s  %s\n", aitk_str_cstr(&cell[0]),
                             aitk_str_cstr(&cell[1]), aitk_str_cstr(&cell[2]),
                             aitk_str_cstr(&cell[3]), aitk_str_cstr(&cell[4]));
        }
    }
    if (fmt == AITK_COMPARE_HTML)
        aitk_str_append(out, "</tbody></table></body></html>\n");
    else if (fmt == AITK_COMPARE_TEXT)
        aitk_str_appendf(out, "Result: %s (%zu beyond %.1f%%)\n", verdict, c->regressions,
                         c->threshold_pct);
    for (int k = 0; k < CELLS; k++)
        aitk_field_scratch_free(out, &cell[k]);
    return aitk_str_status(out);
}
