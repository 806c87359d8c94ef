/* The fleet report as text (the terminal), Markdown (a CI job summary, an
 * issue) and HTML (one self-contained page): pure functions of the fleet
 * tree (fleet.h), read tolerantly as the single-node renderers read a
 * report. Every cell goes through aitk_str_append_printable first, so a
 * node name or an observed value holding an ESC sequence or a newline is
 * shown as \xNN in every format, then escaped for the format. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fields.h"
#include "reports/fleet.h"
#include "reports/html_parts.h"
#include "reports/markdown.h"
#include "reports/metrics.h"
#include "reports/xml_escape.h"

typedef enum fmt { FMT_TEXT, FMT_MARKDOWN, FMT_HTML } fmt;

/* A table being written: its cells as visible plain text, framed and
 * escaped per format as each row ends. */
typedef struct table {
    aitk_str *out;
    fmt f;
    size_t cols, col;
    aitk_str cell; /* the visible text of the cell being filled */
    bool bad_row;  /* HTML: the row is an outlier, shown in the fail colour */
} table;

static void table_begin(table *t, aitk_str *out, fmt f, const char *id, const char *const *head,
                        size_t cols)
{
    *t = (table){.out = out, .f = f, .cols = cols, .cell = AITK_STR_INIT};
    if (f == FMT_HTML)
        aitk_str_appendf(out, "<table id=\"%s\"><thead><tr>", id);
    for (size_t k = 0; k < cols; k++) {
        if (f == FMT_HTML)
            aitk_str_appendf(out, "<th>%s</th>", head[k]);
        else if (f == FMT_MARKDOWN)
            aitk_str_appendf(out, "| %s ", head[k]);
    }
    if (f == FMT_HTML)
        aitk_str_append(out, "</tr></thead><tbody>\n");
    else if (f == FMT_MARKDOWN) {
        aitk_str_append(out, "|\n");
        for (size_t k = 0; k < cols; k++)
            aitk_str_append(out, "|---");
        aitk_str_append(out, "|\n");
    }
}

/* Appends one cell; the row ends after the last column. */
static void table_cell(table *t, const char *s)
{
    aitk_str_clear(&t->cell);
    aitk_str_append_printable(&t->cell, s ? s : "", false);
    const char *v = aitk_str_cstr(&t->cell);
    aitk_str *out = t->out;
    if (t->f == FMT_HTML) {
        if (t->col == 0)
            aitk_str_append(out, t->bad_row ? "<tr class=\"outlier\">" : "<tr>");
        aitk_str_append(out, "<td>");
        aitk_xml_escape(out, v);
        aitk_str_append(out, "</td>");
    } else if (t->f == FMT_MARKDOWN) {
        aitk_str_append(out, "| ");
        aitk_markdown_cell(out, v);
        aitk_str_append(out, " ");
    } else {
        aitk_str_appendf(out, "  %s", v);
    }
    if (++t->col == t->cols) {
        t->col = 0;
        t->bad_row = false;
        aitk_str_append(out, t->f == FMT_HTML ? "</tr>\n" : t->f == FMT_MARKDOWN ? "|\n" : "\n");
    }
}

static void table_end(table *t)
{
    if (t->f == FMT_HTML)
        aitk_str_append(t->out, "</tbody></table>\n");
    else
        aitk_str_append(t->out, "\n");
    aitk_field_scratch_free(t->out, &t->cell);
}

static void heading(aitk_str *out, fmt f, const char *id, const char *text)
{
    if (f == FMT_HTML)
        aitk_str_appendf(out, "<h2 id=\"%s\">%s</h2>\n", id, text);
    else if (f == FMT_MARKDOWN)
        aitk_str_appendf(out, "### %s\n\n", text);
    else
        aitk_str_appendf(out, "%s:\n", text);
}

static double num(const cJSON *o, const char *key)
{
    double v = 0;
    aitk_field_num(o, key, &v);
    return v;
}

static void nodes_section(aitk_str *out, fmt f, const cJSON *fleet)
{
    static const char *const head[] = {"node", "host", "device", "level", "verdict",
                                       "fail", "warn", "fix first"};
    table t;
    heading(out, f, "nodes", "Nodes");
    table_begin(&t, out, f, "nodes", head, 8);
    const cJSON *n;
    char buf[32];
    cJSON_ArrayForEach(n, aitk_field_array(fleet, "nodes"))
    {
        const cJSON *counts = aitk_field_obj(n, "counts");
        table_cell(&t, aitk_field_str(n, "name"));
        table_cell(&t, aitk_field_str(n, "hostname"));
        table_cell(&t, aitk_field_str(n, "device"));
        table_cell(&t, aitk_field_str(n, "level"));
        table_cell(&t, aitk_field_str(n, "verdict"));
        snprintf(buf, sizeof buf, "%.0f", num(counts, "fail"));
        table_cell(&t, buf);
        snprintf(buf, sizeof buf, "%.0f", num(counts, "warn"));
        table_cell(&t, buf);
        aitk_str first = AITK_STR_INIT;
        const cJSON *id;
        cJSON_ArrayForEach(id, aitk_field_array(n, "fix_first"))
        {
            if (cJSON_IsString(id))
                aitk_str_appendf(&first, "%s%s", first.len ? ", " : "", id->valuestring);
        }
        table_cell(&t, first.len ? aitk_str_cstr(&first) : "-");
        aitk_field_scratch_free(out, &first);
    }
    table_end(&t);
}

static void outliers_section(aitk_str *out, fmt f, const cJSON *fleet)
{
    const cJSON *list = aitk_field_array(fleet, "outliers"), *o;
    if (!cJSON_GetArraySize(list))
        return;
    /* The detail begins with the value: no column of its own. */
    static const char *const head[] = {"node", "kind", "what", "detail"};
    table t;
    heading(out, f, "outliers", "Outliers");
    table_begin(&t, out, f, "outliers", head, 4);
    cJSON_ArrayForEach(o, list)
    {
        t.bad_row = true;
        table_cell(&t, aitk_field_str(o, "node"));
        table_cell(&t, aitk_field_str(o, "kind"));
        table_cell(&t, aitk_field_str(o, "subject"));
        table_cell(&t, aitk_field_str(o, "detail"));
    }
    table_end(&t);
}

/* "node1: 550.54; node2: 535.10", each value as the node has it. */
static void per_node(aitk_str *cell, const cJSON *values)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, values)
    {
        if (cell->len)
            aitk_str_append(cell, "; ");
        aitk_str_appendf(cell, "%s: %s", aitk_field_str(v, "node"), aitk_field_str(v, "value"));
        if (*aitk_field_str(v, "observed"))
            aitk_str_appendf(cell, " (%s)", aitk_field_str(v, "observed"));
    }
}

/* Versions every node shares in one line each; those that differ with
 * each node's value. The text form shows only the differing ones. */
static void versions_section(aitk_str *out, fmt f, const cJSON *fleet)
{
    static const char *const head[] = {"software", "agreed", "per node"};
    const cJSON *v;
    bool any = false;
    cJSON_ArrayForEach(v, aitk_field_array(fleet, "versions"))
        any = any || f != FMT_TEXT || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "differs"));
    if (!any)
        return;
    table t;
    aitk_str cell = AITK_STR_INIT;
    heading(out, f, "versions", f == FMT_TEXT ? "Versions that differ" : "Versions");
    table_begin(&t, out, f, "versions", head, 3);
    cJSON_ArrayForEach(v, aitk_field_array(fleet, "versions"))
    {
        bool differs = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "differs"));
        if (f == FMT_TEXT && !differs)
            continue;
        t.bad_row = differs;
        aitk_str_clear(&cell);
        if (differs)
            per_node(&cell, aitk_field_array(v, "values"));
        table_cell(&t, aitk_field_str(v, "name"));
        table_cell(&t, differs ? "no" : aitk_field_str(v, "reference"));
        table_cell(&t, aitk_str_cstr(&cell));
    }
    table_end(&t);
    aitk_field_scratch_free(out, &cell);
}

/* Differences that matter first; the text form shows only those. */
static void differences_section(aitk_str *out, fmt f, const cJSON *fleet)
{
    const cJSON *list = aitk_field_array(fleet, "differences"), *d;
    double matter = num(aitk_field_obj(fleet, "summary"), "differences_that_matter");
    if (!cJSON_GetArraySize(list) || (f == FMT_TEXT && matter == 0))
        return;
    static const char *const head[] = {"what", "differs in", "matters", "per node"};
    table t;
    aitk_str cell = AITK_STR_INIT;
    heading(out, f, "differences", "Differences between nodes");
    table_begin(&t, out, f, "differences", head, 4);
    for (int pass = 0; pass < 2; pass++) {
        cJSON_ArrayForEach(d, list)
        {
            bool matters = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "matters"));
            if (matters != (pass == 0) || (f == FMT_TEXT && !matters))
                continue;
            t.bad_row = matters;
            aitk_str_clear(&cell);
            per_node(&cell, aitk_field_array(d, "values"));
            table_cell(&t, aitk_field_str(d, "subject"));
            table_cell(&t, aitk_field_str(d, "what"));
            table_cell(&t, matters ? "yes" : "no");
            table_cell(&t, aitk_str_cstr(&cell));
        }
    }
    table_end(&t);
    aitk_field_scratch_free(out, &cell);
}

/* Each judged figure: its median and MAD and the nodes outside the rule. */
static void metrics_section(aitk_str *out, fmt f, const cJSON *fleet)
{
    const cJSON *list = aitk_field_array(fleet, "metrics"), *m, *v;
    if (!cJSON_GetArraySize(list) || f == FMT_TEXT)
        return;
    static const char *const head[] = {"figure", "nodes", "median", "MAD", "outliers"};
    table t;
    aitk_str a = AITK_STR_INIT, b = AITK_STR_INIT, c = AITK_STR_INIT;
    heading(out, f, "metrics", "Figures across nodes");
    table_begin(&t, out, f, "metrics", head, 5);
    cJSON_ArrayForEach(m, list)
    {
        const char *unit = aitk_field_str(m, "unit");
        aitk_str_clear(&a);
        aitk_str_clear(&b);
        aitk_str_clear(&c);
        aitk_metric_value_text(&a, num(m, "median"), unit);
        aitk_metric_value_text(&b, num(m, "mad"), unit);
        cJSON_ArrayForEach(v, aitk_field_array(m, "values"))
        {
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "outlier")))
                aitk_str_appendf(&c, "%s%s", c.len ? ", " : "", aitk_field_str(v, "node"));
        }
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "judged")))
            aitk_str_append(&c, "(not judged: too few nodes)");
        t.bad_row = c.len && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "judged"));
        char count[24];
        snprintf(count, sizeof count, "%d", cJSON_GetArraySize(aitk_field_array(m, "values")));
        table_cell(&t, aitk_field_str(m, "name"));
        table_cell(&t, count);
        table_cell(&t, aitk_str_cstr(&a));
        table_cell(&t, aitk_str_cstr(&b));
        table_cell(&t, aitk_str_cstr(&c));
    }
    table_end(&t);
    aitk_field_scratch_free(out, &a);
    aitk_field_scratch_free(out, &b);
    aitk_field_scratch_free(out, &c);
}

/* "2 outlier(s), 1 version difference(s), 3 difference(s) that matter
 * (of 14), 5 nodes" */
static void summary_line(aitk_str *out, const cJSON *s)
{
    aitk_str_appendf(out,
                     "%.0f node(s): %.0f outlier(s), %.0f version difference(s), %.0f "
                     "difference(s) that matter (of %.0f).",
                     num(s, "nodes"), num(s, "outliers"), num(s, "version_differences"),
                     num(s, "differences_that_matter"), num(s, "differences"));
}

static aitk_status render(const cJSON *fleet, fmt f, aitk_str *out)
{
    const cJSON *s = aitk_field_obj(fleet, "summary");
    if (!s)
        return AITK_E_INVAL;
    bool attention = aitk_fleet_exit_code(fleet) != 0;
    const char *verdict = attention ? "a node stands out" : "no node stands out";
    const char *note = aitk_field_str(s, "note");
    if (f == FMT_HTML) {
        aitk_str_appendf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                              "<meta name=\"viewport\" "
                              "content=\"width=device-width,initial-scale=1\">\n"
                              "<meta name=\"color-scheme\" content=\"light dark\">\n"
                              "<title>aitk-validate fleet: %s</title>\n<style>\n%s"
                              "tr.outlier td{color:var(--fail);font-weight:600}\n</style></head>\n"
                              "<body>\n<div class=\"banner %s\"><h1>Fleet: %s</h1>"
                              "<div class=\"meta\">",
                         verdict, aitk_html_css, attention ? "v-fail" : "v-pass", verdict);
        summary_line(out, s);
        if (*note) {
            aitk_str_append(out, " ");
            aitk_xml_escape(out, note);
        }
        aitk_str_append(out, "</div></div>\n");
    } else {
        aitk_str_appendf(out, f == FMT_MARKDOWN ? "## aitk-validate fleet: %s\n\n"
                                                : "aitk-validate fleet: %s\n",
                         verdict);
        summary_line(out, s);
        if (*note)
            aitk_str_appendf(out, " %s.", note);
        aitk_str_append(out, "\n\n");
    }
    if (f != FMT_TEXT)
        nodes_section(out, f, fleet);
    outliers_section(out, f, fleet);
    versions_section(out, f, fleet);
    differences_section(out, f, fleet);
    metrics_section(out, f, fleet);
    const cJSON *rule = aitk_field_obj(fleet, "rule");
    if (f == FMT_HTML)
        aitk_str_appendf(out, "<footer>Written by aitk-validate fleet. Outliers: modified "
                              "z-score beyond %g and more than %g%% from the median, with at "
                              "least %g nodes (Iglewicz and Hoaglin; NIST/SEMATECH e-Handbook "
                              "1.3.5.17). Self-contained: no script, no network.</footer>\n"
                              "</body></html>\n",
                         num(rule, "z_limit"), num(rule, "min_relative_distance") * 100,
                         num(rule, "min_nodes"));
    else if (f == FMT_TEXT)
        aitk_str_appendf(out, "Result: %s\n", verdict);
    return aitk_str_status(out);
}

aitk_status aitk_fleet_render_markdown(const cJSON *fleet, aitk_str *out)
{
    return render(fleet, FMT_MARKDOWN, out);
}

aitk_status aitk_fleet_render_html(const cJSON *fleet, aitk_str *out)
{
    return render(fleet, FMT_HTML, out);
}

aitk_status aitk_fleet_render_text(const cJSON *fleet, aitk_str *out)
{
    return render(fleet, FMT_TEXT, out);
}
