/* Report -> one self-contained HTML page: banner, checks, environment.
 * The benchmark sections (workloads, microbenchmarks, dependency tree) are
 * in html_bench.c. Reads only the report tree. */
#include "reports/html.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "reports/buyer.h"
#include "reports/causes.h"
#include "reports/check_parts.h"
#include "reports/code_spans.h"
#include "reports/fields.h"
#include "reports/identity.h"
#include "reports/html_parts.h"
#include "reports/xml_escape.h"

/* Colours are variables so one block switches the page to dark; print drops
 * backgrounds and keeps the verdict readable on paper. The trend page
 * (trend_render.c) wears the same style. */
const char aitk_html_css[] =
    ":root{--bg:#fff;--fg:#1b1f24;--muted:#5c6670;--card:#f5f7f9;--line:#d6dbe0;"
    "--pass:#116329;--warn:#7d4e00;--fail:#cf222e;--skip:#59636e;--ref:#8c959f;"
    "--pass-bg:#dafbe1;--warn-bg:#fff8c5;--fail-bg:#ffebe9;--skip-bg:#eaeef2;"
    "color-scheme:light dark}\n"
    "@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9da7b3;"
    "--card:#161b22;--line:#30363d;--pass:#3fb950;--warn:#d29922;--fail:#f85149;--skip:#8b949e;"
    "--ref:#6e7681;--pass-bg:#12261e;--warn-bg:#2e2410;--fail-bg:#2d1214;--skip-bg:#1f242b}}\n"
    "body{background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"
    "'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1060px;padding:16px 24px}\n"
    "h1{font-size:26px;margin:0}h2{font-size:19px;margin:28px 0 10px;border-bottom:1px solid "
    "var(--line);padding-bottom:4px}h3{font-size:16px;margin:14px 0 6px}\n"
    "code,.mono{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,monospace;font-size:13px}\n"
    ".banner{border-radius:8px;padding:16px 20px;border-left:8px solid var(--c);background:var(--b)}\n"
    ".banner .meta{color:var(--muted);margin-top:6px}\n"
    ".v-pass{--c:var(--pass);--b:var(--pass-bg)}.v-warn{--c:var(--warn);--b:var(--warn-bg)}"
    ".v-fail{--c:var(--fail);--b:var(--fail-bg)}.v-skip{--c:var(--skip);--b:var(--skip-bg)}\n"
    ".counts span{display:inline-block;margin-right:14px;font-weight:600}\n"
    ".card{background:var(--card);border:1px solid var(--line);border-left:5px solid var(--c);"
    "border-radius:6px;padding:10px 14px;margin:10px 0;break-inside:avoid}\n"
    ".card .remedy{background:var(--bg);border:1px dashed var(--c);border-radius:4px;"
    "padding:6px 10px;margin-top:6px}\n"
    "table{border-collapse:collapse;width:100%;margin:6px 0}th,td{text-align:left;padding:5px 8px;"
    "border-bottom:1px solid var(--line);vertical-align:top}th{color:var(--muted);font-weight:600}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    /* A path, a PATH or a loader message can be one word wider than the page
     * (C:\Users\...\site-packages\torch\lib\...dll): it breaks rather than
     * push the check table's last columns off the page or run out of its
     * card. In the table's value cells and the environment's grid it is
     * "anywhere", which also lets the column shrink; elsewhere "break-word",
     * which leaves the other tables' columns (an id, a number) whole. */
    "td.mono,dd{overflow-wrap:anywhere}.card,.banner,li{overflow-wrap:break-word}\n"
    ".badge{display:inline-block;min-width:38px;text-align:center;border-radius:10px;padding:0 8px;"
    "font-size:12px;font-weight:700;color:var(--c);background:var(--b);border:1px solid var(--c)}\n"
    ".muted{color:var(--muted)}\n"
    "svg.chart{display:block;max-width:100%;height:auto;margin:4px 0 10px}\n"
    "svg .label,svg .value,svg .mark-label{fill:var(--fg);font-size:12px}\n"
    "svg .bar.good{fill:var(--pass)}svg .bar.bad{fill:var(--fail)}svg .bar.ref{fill:var(--ref)}\n"
    "svg .marker{stroke-width:2;stroke-dasharray:5 3}svg .marker.limit{stroke:var(--fail)}"
    "svg .marker.minimum{stroke:var(--warn)}svg .marker.target{stroke:var(--ref)}\n"
    "svg .frame{fill:none;stroke:var(--line)}svg .band{fill:var(--ref);opacity:.22}"
    "svg .base{stroke:var(--ref);stroke-width:1.5;stroke-dasharray:5 3}"
    "svg .line{fill:none;stroke:var(--fg);stroke-width:1.5}svg .pt{fill:var(--fg)}"
    "svg .pt.good{fill:var(--pass)}svg .pt.bad{fill:var(--fail)}svg .pt.other{fill:var(--ref)}\n"
    ".wl{display:grid;grid-template-columns:minmax(0,650px) minmax(220px,1fr);gap:4px 20px}\n"
    "@media (max-width:900px){.wl{grid-template-columns:1fr}}\n"
    "ul.tree{list-style:none;padding-left:18px;margin:2px 0}ul.tree li.missing>span{color:var(--fail);"
    "font-weight:700}\n"
    "dl.env{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0}"
    "dl.env dt{color:var(--muted)}dl.env dd{margin:0}\n"
    "footer{color:var(--muted);font-size:12px;margin:30px 0 10px}\n"
    /* A narrow window (a phone, a split screen): with the usual paddings
     * the tables' words that do not break (a check id, a benchmark's name,
     * a header) need more than 500 pixels (514 for the checks of a --quick
     * run without a GPU, 578 for the microbenchmarks of the test report),
     * so the page and the cells give up some padding and the headers some
     * size. */
    "@media (max-width:600px){body{padding:12px 8px}th,td{padding:4px 3px}th{font-size:13px}}\n"
    "@media print{body{max-width:none;padding:0;font-size:11pt}.card,.banner{background:none}"
    "details{display:block}details>summary{display:none}h2{break-after:avoid}}\n";

static void text(aitk_str *out, const char *s)
{
    aitk_xml_escape(out, s);
}

/* Text in which a command between backticks, as remedies write them, is
 * shown in <code> without its backticks; a backtick that pairs with none
 * stays a character. The Markdown view keeps the same spans (code_spans.h). */
static void text_with_code(aitk_str *out, const char *s)
{
    aitk_str part = AITK_STR_INIT;
    while (*s) {
        size_t run = aitk_backtick_run(s);
        const char *end = run ? aitk_code_span_end(s, run) : NULL;
        if (!end) {
            size_t n = run ? run : 1;
            aitk_str_appendn(&part, s, n);
            s += n;
            continue;
        }
        text(out, aitk_str_cstr(&part));
        aitk_str_clear(&part);
        aitk_str_appendn(&part, s + run, (size_t)(end - s - run));
        aitk_str_append(out, "<code>");
        text(out, aitk_str_cstr(&part));
        aitk_str_append(out, "</code>");
        aitk_str_clear(&part);
        s = end + run;
    }
    text(out, aitk_str_cstr(&part));
    aitk_field_scratch_free(out, &part);
}

static const char *verdict_label(const char *v)
{
    if (strcmp(v, "fail") == 0)
        return "FAIL: this machine is not ready";
    if (strcmp(v, "warn") == 0)
        return "PASS with warnings";
    if (strcmp(v, "pass") == 0)
        return "PASS: ready to train";
    return "verdict unknown";
}

static void banner(aitk_str *out, const cJSON *report)
{
    const cJSON *summary = aitk_field_obj(report, "summary");
    const cJSON *counts = aitk_field_obj(summary, "counts");
    const char *v = aitk_field_str(summary, "verdict");
    aitk_str_append(out, "<header class=\"banner v-");
    text(out, *v ? v : "skip");
    aitk_str_append(out, "\" id=\"verdict\"><h1>");
    text(out, verdict_label(v));
    aitk_str_append(out, "</h1>\n<div class=\"counts\">");
    static const char *const order[] = {"fail", "warn", "pass", "skip"};
    static const char *const names[] = {"failed", "warning", "passed", "skipped"};
    for (int i = 0; i < 4; i++) {
        double n = 0;
        aitk_field_num(counts, order[i], &n);
        aitk_str_appendf(out, "<span class=\"v-%s\" style=\"color:var(--c)\">%.0f %s%s</span>",
                         order[i], n, names[i], i == 1 && n != 1 ? "s" : "");
    }
    aitk_str_append(out, "</div>\n<div class=\"meta\">aitk-validate ");
    aitk_report_identity(out, report, " · ", text);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "redacted")))
        aitk_str_append(out, " · redacted");
    aitk_str_append(out, "</div>\n");
    aitk_fix_first_lines(out, summary, "<div class=\"meta\"><strong>Fix first:</strong> ",
                         "</div>\n", text);
    aitk_str_append(out, "</header>\n");
}

/* A failed or warned check as a card in its status's colour. */
static const aitk_check_markup check_card[AITK_CHECK_PART_COUNT] = {
    [AITK_CHECK_PART_STATUS] = {"<div class=\"card v-", "\">"},
    [AITK_CHECK_PART_TITLE] = {"<strong>", "</strong> <code>"},
    [AITK_CHECK_PART_ID] = {"", "</code>"},
    [AITK_CHECK_PART_MESSAGE] = {"<div>", "</div>", text_with_code},
    [AITK_CHECK_PART_HEAD_END] = {"", ""},
    [AITK_CHECK_PART_OBSERVED] = {"<div class=\"muted\">observed: <span class=\"mono\">",
                                  "</span>"},
    [AITK_CHECK_PART_EXPECTED] = {" · expected: <span class=\"mono\">", "</span>"},
    [AITK_CHECK_PART_OBSERVED_END] = {"</div>", ""},
    [AITK_CHECK_PART_FOLLOWS] = {"<div class=\"muted\">follows from <code>",
                                 "</code>: fixing that may clear this</div>"},
    [AITK_CHECK_PART_REMEDY] = {"<div class=\"remedy\"><strong>Fix:</strong> ", "</div>",
                                text_with_code},
    [AITK_CHECK_PART_SOURCE] = {"<div class=\"muted\">source: ", "</div>", text_with_code},
    [AITK_CHECK_PART_END] = {"", "</div>\n"},
};

static void check_group(aitk_str *out, const cJSON *checks, const char *status,
                        const char *heading)
{
    if (aitk_check_parts_group(out, checks, status, heading, check_card, text) > 0)
        aitk_str_append(out, "</section>\n");
}

/* Every check, worst first, so the table reads like the banner. */
static void check_table(aitk_str *out, const cJSON *checks)
{
    static const char *const order[] = {"fail", "warn", "pass", "skip"};
    aitk_str_appendf(out, "<section><h2>All checks (%d)</h2>\n<table id=\"checks\"><thead><tr>"
                          "<th>status</th><th>check</th><th>observed</th><th>expected</th>"
                          "<th class=\"num\">ms</th></tr></thead><tbody>\n",
                     cJSON_GetArraySize(checks));
    for (int pass = 0; pass < 5; pass++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, checks)
        {
            const char *st = aitk_field_str(c, "status");
            int known = 0;
            for (int i = 0; i < 4; i++)
                known |= strcmp(st, order[i]) == 0;
            /* The fifth pass shows statuses this build does not know. */
            if (pass < 4 ? strcmp(st, order[pass]) != 0 : known)
                continue;
            double ms = 0;
            aitk_field_num(c, "duration_ms", &ms);
            aitk_str_append(out, "<tr><td><span class=\"badge v-");
            text(out, st);
            aitk_str_append(out, "\">");
            text(out, st);
            aitk_str_append(out, "</span></td><td><code>");
            text(out, aitk_field_str(c, "id"));
            aitk_str_append(out, "</code> ");
            text(out, aitk_field_str(c, "title"));
            aitk_str_append(out, "</td><td class=\"mono\">");
            text(out, aitk_field_str(c, "observed"));
            aitk_str_append(out, "</td><td class=\"mono\">");
            text(out, aitk_field_str(c, "expected"));
            aitk_str_appendf(out, "</td><td class=\"num\">%.1f</td></tr>\n", ms);
        }
    }
    aitk_str_append(out, "</tbody></table></section>\n");
}

static void env_row(aitk_str *out, const char *name, const char *value)
{
    if (!*value)
        return;
    aitk_str_append(out, "<dt>");
    text(out, name);
    aitk_str_append(out, "</dt><dd>");
    text(out, value);
    aitk_str_append(out, "</dd>");
}

/* Any JSON value as nested definition lists; depth-limited so a hostile
 * report cannot make a page the browser refuses to draw. */
static void json_value(aitk_str *out, const cJSON *v, int depth)
{
    if (cJSON_IsString(v)) {
        text(out, v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        aitk_str_append_number(out, v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        aitk_str_append(out, cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsNull(v)) {
        aitk_str_append(out, "null");
    } else if (depth > 8) {
        aitk_str_append(out, "<span class=\"muted\">(nested too deep to show)</span>");
    } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        aitk_str_append(out, "<dl class=\"env\">");
        const cJSON *c;
        int i = 0;
        cJSON_ArrayForEach(c, v)
        {
            aitk_str_append(out, "<dt>");
            if (c->string)
                text(out, c->string);
            else
                aitk_str_appendf(out, "[%d]", i);
            aitk_str_append(out, "</dt><dd>");
            json_value(out, c, depth + 1);
            aitk_str_append(out, "</dd>");
            i++;
        }
        aitk_str_append(out, "</dl>");
    }
}

static void environment(aitk_str *out, const cJSON *report)
{
    const cJSON *host = aitk_field_obj(report, "host");
    const cJSON *env = aitk_field_obj(report, "environment");
    if (!host && !env)
        return;
    aitk_str_append(out, "<section id=\"environment\"><h2>Environment</h2>\n");
    if (host) {
        const cJSON *os = aitk_field_obj(host, "os");
        const cJSON *cpu = aitk_field_obj(host, "cpu");
        const cJSON *mem = aitk_field_obj(host, "memory");
        aitk_str line = AITK_STR_INIT;
        aitk_str_append(out, "<dl class=\"env\">");
        env_row(out, "system", *aitk_field_str(os, "pretty_name") ? aitk_field_str(os, "pretty_name")
                                                                  : aitk_field_str(os, "name"));
        env_row(out, "kernel", aitk_field_str(os, "kernel"));
        env_row(out, "machine", aitk_field_str(os, "machine"));
        env_row(out, "C library", aitk_field_str(os, "libc"));
        env_row(out, "host name", aitk_field_str(host, "hostname"));
        double n;
        if (*aitk_field_str(cpu, "model")) {
            aitk_str_append(&line, aitk_field_str(cpu, "model"));
            if (aitk_field_num(cpu, "logical_cpus", &n))
                aitk_str_appendf(&line, " (%.0f logical CPUs)", n);
            env_row(out, "CPU", aitk_str_cstr(&line));
        }
        if (aitk_field_num(mem, "total_bytes", &n)) {
            aitk_str_clear(&line);
            aitk_html_fmt_bytes(&line, n);
            if (aitk_field_num(mem, "available_bytes", &n)) {
                aitk_str_append(&line, " (");
                aitk_html_fmt_bytes(&line, n);
                aitk_str_append(&line, " available)");
            }
            env_row(out, "memory", aitk_str_cstr(&line));
        }
        const cJSON *d;
        cJSON_ArrayForEach(d, aitk_field_obj(host, "disk"))
        {
            if (!cJSON_IsObject(d) || !d->string)
                continue;
            aitk_str_clear(&line);
            aitk_str_append(&line, aitk_field_str(d, "path"));
            if (aitk_field_num(d, "free_bytes", &n)) {
                aitk_str_append(&line, ": ");
                aitk_html_fmt_bytes(&line, n);
                aitk_str_append(&line, " free");
            }
            env_row(out, d->string, aitk_str_cstr(&line));
        }
        aitk_field_scratch_free(out, &line);
        aitk_str_append(out, "</dl>\n");
    }
    if (env) {
        aitk_str_append(out, "<details><summary>Environment record</summary>");
        json_value(out, env, 0);
        aitk_str_append(out, "</details>\n");
    }
    aitk_str_append(out, "</section>\n");
}

/* The first section: the buyer's question, one sentence a model. */
static void buyer(aitk_str *out, const cJSON *report)
{
    const cJSON *arr = aitk_field_array(report, "buyer");
    if (!arr || cJSON_GetArraySize(arr) == 0)
        return;
    aitk_str_append(out, "<section id=\"buyer\"><h2>" AITK_BUYER_HEADING "</h2>\n<ul>\n");
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        aitk_str line = AITK_STR_INIT;
        aitk_buyer_sentence(e, &line);
        aitk_str_append(out, "<li>");
        text_with_code(out, aitk_str_cstr(&line));
        aitk_str_append(out, "</li>\n");
        aitk_str_free(&line);
    }
    aitk_str_append(out, "</ul></section>\n");
}

aitk_status aitk_render_html(const cJSON *report, aitk_str *out)
{
    const cJSON *checks = aitk_field_array(report, "checks");
    if (!checks || !aitk_field_obj(report, "summary"))
        return AITK_E_INVAL;
    aitk_str_append(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
                         "<meta name=\"color-scheme\" content=\"light dark\">\n<title>aitk-validate: ");
    text(out, aitk_field_str(aitk_field_obj(report, "summary"), "verdict"));
    aitk_str_append(out, " · ");
    text(out, aitk_field_str(report, "created_at"));
    aitk_str_appendf(out, "</title>\n<style>\n%s</style></head>\n<body>\n", aitk_html_css);
    banner(out, report);
    buyer(out, report);
    check_group(out, checks, "fail",
                "<section id=\"failed\"><h2>What failed, and how to fix it</h2>\n");
    check_group(out, checks, "warn", "<section id=\"warnings\"><h2>Warnings</h2>\n");
    aitk_html_workloads(out, report);
    aitk_html_micro(out, report);
    aitk_html_deps(out, report);
    check_table(out, checks);
    environment(out, report);
    aitk_str_append(out, "<footer>Written by aitk-validate from report schema ");
    text(out, aitk_field_str(report, "schema_version"));
    aitk_str_append(out, ". Self-contained: no script, no network.</footer>\n</body></html>\n");
    return aitk_str_status(out);
}
