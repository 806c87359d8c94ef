/* HTML sections for measured results: workloads (with charts), the
 * microbenchmark table, and the dependency tree of a broken library.
 *
 * The shapes they read are documented in reports/schema (workloads[],
 * micro[], deps[]); every field is optional, so a report from an
 * interrupted run, or from a build without benchmarks, still renders. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fields.h"
#include "reports/html_parts.h"
#include "reports/svg.h"
#include "reports/xml_escape.h"

void aitk_html_fmt_bytes(aitk_str *out, double bytes)
{
    if (!isfinite(bytes) || bytes < 0)
        aitk_str_append(out, "?");
    else if (bytes >= 1073741824.0)
        aitk_str_appendf(out, "%.1f GiB", bytes / 1073741824.0);
    else
        aitk_str_appendf(out, "%.0f MiB", bytes / 1048576.0);
}

void aitk_html_fmt_duration(aitk_str *out, double s)
{
    if (!isfinite(s) || s < 0)
        aitk_str_append(out, "?");
    else if (s < 60)
        aitk_str_appendf(out, "%.1f s", s);
    else if (s < 3600)
        aitk_str_appendf(out, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
    else
        aitk_str_appendf(out, "%.0f h %02.0f min", floor(s / 3600), floor(fmod(s, 3600) / 60));
}

static const char *bar_class(const char *status)
{
    return strcmp(status, "fail") == 0 ? "bad" : strcmp(status, "pass") == 0 ? "good" : "ref";
}

typedef enum stat_format { SECONDS, GENERAL, ONE_DECIMAL, PERCENT } stat_format;

static void stat_row(aitk_str *out, const char *name, const cJSON *obj, const char *key,
                     stat_format fmt)
{
    double v;
    if (!aitk_field_num(obj, key, &v))
        return;
    aitk_str_append(out, "<tr><th>");
    aitk_xml_escape(out, name);
    aitk_str_append(out, "</th><td class=\"num\">");
    switch (fmt) {
    case SECONDS: aitk_str_appendf(out, "%.3f s", v); break;
    case GENERAL: aitk_str_appendf(out, "%.4g", v); break;
    case ONE_DECIMAL: aitk_str_appendf(out, "%.1f", v); break;
    case PERCENT: aitk_str_appendf(out, "%.0f%%", v * 100); break;
    }
    aitk_str_append(out, "</td></tr>");
}

/* The confidence interval in one row, named by what it is an interval of
 * (the report's step_time_s.interval_of: the mean, bench/stats.h). */
static void interval_row(aitk_str *out, const cJSON *st)
{
    double lo, hi;
    if (!aitk_field_num(st, "ci95_low", &lo) || !aitk_field_num(st, "ci95_high", &hi))
        return;
    const char *of = aitk_field_str(st, "interval_of");
    aitk_str_append(out, "<tr><th>95% CI of the ");
    aitk_xml_escape(out, *of ? of : "mean");
    aitk_str_appendf(out, "</th><td class=\"num\">%.3f – %.3f s</td></tr>", lo, hi);
}

/* Which implementation of each op the workload ran (the backend's paths):
 * where cuDNN's fused attention ran, or the plain kernel and cuDNN's
 * reason for refusing. */
static void kernels_table(aitk_str *out, const cJSON *w)
{
    const cJSON *ks = aitk_field_array(w, "kernels");
    if (!ks || cJSON_GetArraySize(ks) == 0)
        return;
    aitk_str_append(out, "<h3>Kernels that ran</h3><table class=\"stats kernels\">");
    const cJSON *k;
    cJSON_ArrayForEach(k, ks)
    {
        double calls;
        aitk_str_append(out, "<tr><th>");
        aitk_xml_escape(out, aitk_field_str(k, "op"));
        aitk_str_append(out, "</th><td>");
        aitk_xml_escape(out, aitk_field_str(k, "kernel"));
        aitk_str_append(out, "</td><td class=\"num\">");
        if (aitk_field_num(k, "calls", &calls))
            aitk_str_appendf(out, "%.0f calls", calls);
        aitk_str_append(out, "</td></tr>");
    }
    aitk_str_append(out, "</table>");
}

/* One problem's row of gemm_in_step_table. */
static void gemm_problem_row(aitk_str *out, const cJSON *p)
{
    double calls = 0, ms = 0, tf = 0, iso, ratio;
    aitk_field_num(p, "calls", &calls);
    aitk_field_num(p, "ms_in_step", &ms);
    aitk_field_num(p, "tflops_in_step", &tf);
    aitk_str_append(out, "<tr><td>");
    aitk_xml_escape(out, aitk_field_str(p, "shape"));
    aitk_str_appendf(out, "</td><td class=\"num\">%.0f</td><td class=\"num\">%.3g</td>"
                          "<td class=\"num\">%.3g</td>", calls, ms, tf);
    if (aitk_field_num(p, "tflops_isolated", &iso) && aitk_field_num(p, "ratio", &ratio))
        aitk_str_appendf(out, "<td class=\"num\">%.3g</td><td class=\"num\">%.0f%%</td>", iso,
                         ratio * 100);
    else
        aitk_str_append(out, "<td class=\"num\">not timed alone</td><td></td>");
    aitk_str_append(out, "</tr>");
}

/* The step's GEMMs against the same GEMMs alone ("gemm_in_step"): the
 * ratio and its verdict against the target, or why it was not measured,
 * and the slowest problems. */
static void gemm_in_step_table(aitk_str *out, const cJSON *w)
{
    const cJSON *g = aitk_field_obj(w, "gemm_in_step");
    if (!g)
        return;
    double ratio, target = 0, share = 0;
    aitk_field_num(g, "target", &target);
    aitk_field_num(g, "matched_share", &share);
    const char *status = aitk_field_str(g, "status");
    aitk_str_append(out, "<h3>GEMMs in the step against alone</h3><div class=\"muted\">");
    aitk_str_append(out, "<span class=\"badge v-");
    aitk_xml_escape(out, status);
    aitk_str_append(out, "\">");
    aitk_xml_escape(out, status);
    aitk_str_append(out, "</span>");
    if (aitk_field_num(g, "ratio", &ratio))
        aitk_str_appendf(out, " %.0f%% of the isolated rate (target %.0f%%); problems timed "
                              "alone cover %.0f%% of the GEMM FLOPs",
                         ratio * 100, target * 100, share * 100);
    if (*aitk_field_str(g, "message")) {
        aitk_str_append(out, " · ");
        aitk_xml_escape(out, aitk_field_str(g, "message"));
    }
    aitk_str_append(out, "</div>");
    const cJSON *ps = aitk_field_array(g, "problems");
    if (!ps || cJSON_GetArraySize(ps) == 0)
        return;
    aitk_str_append(out, "<table class=\"stats gemm-in-step\"><tr><th>problem</th>"
                         "<th class=\"num\">calls</th><th class=\"num\">ms in step</th>"
                         "<th class=\"num\">TFLOP/s in step</th>"
                         "<th class=\"num\">TFLOP/s alone</th><th class=\"num\">ratio</th></tr>");
    const cJSON *p;
    cJSON_ArrayForEach(p, ps)
    {
        gemm_problem_row(out, p);
    }
    aitk_str_append(out, "</table>");
}

static void time_chart(aitk_str *out, const cJSON *w)
{
    const cJSON *t = aitk_field_obj(w, "time_per_1000_steps");
    double measured, target;
    if (!aitk_field_num(t, "measured_s", &measured))
        return;
    aitk_str mtext = AITK_STR_INIT, ttext = AITK_STR_INIT, label = AITK_STR_INIT,
             title = AITK_STR_INIT;
    aitk_html_fmt_duration(&mtext, measured);
    aitk_svg_bar bars[2] = {{"this machine", measured, aitk_str_cstr(&mtext),
                             bar_class(aitk_field_str(t, "status"))}};
    size_t n = 1;
    if (aitk_field_num(t, "target_s", &target)) {
        aitk_html_fmt_duration(&ttext, target);
        aitk_str_append(&label, "target");
        if (*aitk_field_str(t, "target_gpu"))
            aitk_str_appendf(&label, " (%s)", aitk_field_str(t, "target_gpu"));
        bars[n++] = (aitk_svg_bar){aitk_str_cstr(&label), target, aitk_str_cstr(&ttext), "ref"};
    }
    aitk_str_appendf(&title, "Time per 1000 steps for %s", aitk_field_str(w, "name"));
    aitk_str_append(out, "<h3>Time per 1000 steps</h3>\n");
    aitk_svg_bar_chart(out, aitk_str_cstr(&title), bars, n, NULL, 0);
    /* The extrapolation label is part of the figure's meaning, not a footnote. */
    aitk_str_append(out, "<div class=\"muted\">");
    double from, err;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "extrapolated")) &&
        aitk_field_num(t, "from_steps", &from)) {
        aitk_str_appendf(out, "extrapolated from %.0f steps", from);
        if (aitk_field_num(t, "error_pct", &err))
            aitk_str_appendf(out, ", ±%.1f%%", err);
    } else {
        aitk_str_append(out, "measured over 1000 steps");
    }
    if (*aitk_field_str(t, "source")) {
        aitk_str_append(out, " · target source: ");
        aitk_xml_escape(out, aitk_field_str(t, "source"));
    }
    aitk_str_append(out, "</div>");
    aitk_field_scratch_free(out, &mtext);
    aitk_field_scratch_free(out, &ttext);
    aitk_field_scratch_free(out, &label);
    aitk_field_scratch_free(out, &title);
}

static void memory_chart(aitk_str *out, const cJSON *w)
{
    const cJSON *m = aitk_field_obj(w, "memory");
    double peak, vram, min;
    if (!aitk_field_num(m, "peak_bytes", &peak))
        return;
    aitk_str ptext = AITK_STR_INIT, vlabel = AITK_STR_INIT, mlabel = AITK_STR_INIT,
             title = AITK_STR_INIT;
    aitk_html_fmt_bytes(&ptext, peak);
    aitk_svg_bar bar = {"peak memory", peak, aitk_str_cstr(&ptext),
                        bar_class(aitk_field_str(m, "status"))};
    aitk_svg_marker marks[2];
    size_t n = 0;
    if (aitk_field_num(m, "vram_bytes", &vram)) {
        aitk_str_append(&vlabel, "VRAM ");
        aitk_html_fmt_bytes(&vlabel, vram);
        marks[n++] = (aitk_svg_marker){aitk_str_cstr(&vlabel), vram, "limit"};
    }
    if (aitk_field_num(m, "documented_min_bytes", &min)) {
        aitk_str_append(&mlabel, "documented minimum ");
        aitk_html_fmt_bytes(&mlabel, min);
        marks[n++] = (aitk_svg_marker){aitk_str_cstr(&mlabel), min, "minimum"};
    }
    aitk_str_appendf(&title, "Peak memory for %s against VRAM and the documented minimum",
                     aitk_field_str(w, "name"));
    aitk_str_append(out, "<h3>Peak memory</h3>\n");
    aitk_svg_bar_chart(out, aitk_str_cstr(&title), &bar, 1, marks, n);
    aitk_field_scratch_free(out, &ptext);
    aitk_field_scratch_free(out, &vlabel);
    aitk_field_scratch_free(out, &mlabel);
    aitk_field_scratch_free(out, &title);
}

/* The loss of every step (reports/schema workload.loss): on fixed data a
 * LoRA that trains makes it fall, the first sign a backend computes what it
 * should; each step also draws its own t and noise, so single steps are
 * noisy and the tenths' means say more than first and last. */
static void loss_chart(aitk_str *out, const cJSON *w)
{
    const cJSON *l = aitk_field_obj(w, "loss");
    const cJSON *curve = aitk_field_array(l, "curve");
    int n = curve ? cJSON_GetArraySize(curve) : 0;
    if (n < 2)
        return;
    aitk_svg_point *pts = aitk_calloc((size_t)n, sizeof *pts);
    if (!pts)
        return;
    size_t k = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, curve)
    {
        pts[k] = (aitk_svg_point){.x = k, .y = cJSON_IsNumber(v) ? v->valuedouble : NAN};
        k++;
    }
    double steps = 0;
    aitk_field_num(l, "steps", &steps);
    aitk_str title = AITK_STR_INIT, last = AITK_STR_INIT;
    aitk_str_appendf(&title, "Training loss per step for %s", aitk_field_str(w, "name"));
    aitk_str_appendf(&last, "step %.0f", steps);
    aitk_svg_line_spec spec = {.title = aitk_str_cstr(&title), .unit = "", .nx = (size_t)n,
                               .x_first = "step 1", .x_last = aitk_str_cstr(&last),
                               .points = pts, .npoints = k};
    aitk_str_append(out, "<h3>Loss</h3>\n");
    aitk_svg_line_chart(out, &spec);
    double head, tail;
    if (aitk_field_num(l, "first_tenth_mean", &head) &&
        aitk_field_num(l, "last_tenth_mean", &tail))
        aitk_str_appendf(out, "<div class=\"muted\">mean of the first tenth %.4g, of the last "
                              "tenth %.4g (%+.1f%%)</div>",
                         head, tail, head != 0 ? 100.0 * (tail - head) / head : 0.0);
    aitk_field_scratch_free(out, &title);
    aitk_field_scratch_free(out, &last);
    aitk_free(pts);
}

/* The card's colour: the worse of the run's own status and its targets. */
static const char *workload_tone(const cJSON *w)
{
    const char *run = aitk_field_str(w, "status");
    const char *t = aitk_field_str(aitk_field_obj(w, "time_per_1000_steps"), "status");
    const char *m = aitk_field_str(aitk_field_obj(w, "memory"), "status");
    if (strcmp(run, "failed") == 0 || strcmp(t, "fail") == 0 || strcmp(m, "fail") == 0)
        return "fail";
    if (strcmp(run, "completed") != 0 || strcmp(t, "warn") == 0 || strcmp(m, "warn") == 0)
        return "warn";
    return "pass";
}

void aitk_html_workloads(aitk_str *out, const cJSON *report)
{
    const cJSON *ws = aitk_field_array(report, "workloads");
    if (!ws || cJSON_GetArraySize(ws) == 0)
        return;
    aitk_str_append(out, "<section id=\"workloads\"><h2>Workloads</h2>\n");
    const cJSON *w;
    cJSON_ArrayForEach(w, ws)
    {
        aitk_str_appendf(out, "<div class=\"card v-%s workload\"><h3>", workload_tone(w));
        aitk_xml_escape(out, *aitk_field_str(w, "title") ? aitk_field_str(w, "title")
                                                         : aitk_field_str(w, "name"));
        aitk_str_append(out, " <code>");
        aitk_xml_escape(out, aitk_field_str(w, "name"));
        aitk_str_append(out, "</code></h3><div class=\"muted\">");
        aitk_xml_escape(out, aitk_field_str(w, "status"));
        if (*aitk_field_str(w, "backend")) {
            aitk_str_append(out, " · ");
            aitk_xml_escape(out, aitk_field_str(w, "backend"));
        }
        if (*aitk_field_str(w, "device")) {
            aitk_str_append(out, " · ");
            aitk_xml_escape(out, aitk_field_str(w, "device"));
        }
        const cJSON *steps = aitk_field_obj(w, "steps");
        double warm, timed;
        if (aitk_field_num(steps, "warmup", &warm) && aitk_field_num(steps, "timed", &timed))
            aitk_str_appendf(out, " · %.0f warm-up + %.0f timed steps", warm, timed);
        aitk_str_append(out, "</div>");
        if (*aitk_field_str(w, "message")) {
            aitk_str_append(out, "<div>");
            aitk_xml_escape(out, aitk_field_str(w, "message"));
            aitk_str_append(out, "</div>");
        }
        aitk_str_append(out, "<div class=\"wl\"><div>");
        time_chart(out, w);
        memory_chart(out, w);
        loss_chart(out, w);
        const cJSON *st = aitk_field_obj(w, "step_time_s");
        const cJSON *tp = aitk_field_obj(w, "throughput");
        aitk_str_append(out, "</div><div><h3>Step time and throughput</h3><table class=\"stats\">");
        stat_row(out, "median step", st, "median", SECONDS);
        stat_row(out, "mean step", st, "mean", SECONDS);
        stat_row(out, "p5 step", st, "p5", SECONDS);
        stat_row(out, "p95 step", st, "p95", SECONDS);
        interval_row(out, st);
        stat_row(out, "steps/s", tp, "steps_per_s", GENERAL);
        stat_row(out, "images/s", tp, "images_per_s", GENERAL);
        /* CPU runs of the small configurations do tens of GFLOP/s, which
         * would print as "0.0 TFLOP/s": show the unit that says something. */
        const cJSON *tf = cJSON_GetObjectItemCaseSensitive(tp, "tflops");
        if (cJSON_IsNumber(tf) && tf->valuedouble < 1.0 &&
            cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(tp, "gflops")))
            stat_row(out, "GFLOP/s", tp, "gflops", ONE_DECIMAL);
        else
            stat_row(out, "TFLOP/s", tp, "tflops", ONE_DECIMAL);
        stat_row(out, "MFU", tp, "mfu", PERCENT);
        const cJSON *pr = aitk_field_obj(w, "predicted");
        stat_row(out, "predicted min per 1000 steps", pr, "minutes_per_1000", ONE_DECIMAL);
        stat_row(out, "predicted peak (bytes)", pr, "peak_bytes", GENERAL);
        aitk_str_append(out, "</table>");
        kernels_table(out, w);
        gemm_in_step_table(out, w);
        aitk_str_append(out, "</div></div></div>\n");
    }
    aitk_str_append(out, "</section>\n");
}

void aitk_html_micro(aitk_str *out, const cJSON *report)
{
    const cJSON *ms = aitk_field_array(report, "micro");
    if (!ms || cJSON_GetArraySize(ms) == 0)
        return;
    aitk_str_append(out, "<section id=\"micro\"><h2>Microbenchmarks</h2>\n<table id=\"micro-table\">"
                         "<thead><tr><th>benchmark</th><th>backend</th><th>shape</th>"
                         "<th class=\"num\">result</th><th class=\"num\">time</th>"
                         "<th class=\"num\">iterations</th></tr></thead><tbody>\n");
    const cJSON *m;
    cJSON_ArrayForEach(m, ms)
    {
        double v;
        aitk_str_append(out, "<tr><td><code>");
        aitk_xml_escape(out, aitk_field_str(m, "name"));
        aitk_str_append(out, "</code></td><td>");
        aitk_xml_escape(out, aitk_field_str(m, "backend"));
        aitk_str_append(out, "</td><td class=\"mono\">");
        aitk_xml_escape(out, aitk_field_str(m, "shape"));
        aitk_str_append(out, "</td><td class=\"num\">");
        if (aitk_field_num(m, "value", &v))
            aitk_xml_escapef(out, "%.4g %s", v, aitk_field_str(m, "unit"));
        aitk_str_append(out, "</td><td class=\"num\">");
        if (aitk_field_num(m, "time_ms", &v))
            aitk_str_appendf(out, "%.4g ms", v);
        aitk_str_append(out, "</td><td class=\"num\">");
        if (aitk_field_num(m, "iterations", &v))
            aitk_str_appendf(out, "%.0f", v);
        aitk_str_append(out, "</td></tr>\n");
    }
    aitk_str_append(out, "</tbody></table></section>\n");
}

/* Dependency trees come in the libdeps shape ({name, state, path, detail,
 * children}, states as in validate/libdeps/tree.h) or the plain one
 * ({library, found, path, error, needed}); both read through these. */
static const char *node_name(const cJSON *n)
{
    return *aitk_field_str(n, "name") ? aitk_field_str(n, "name") : aitk_field_str(n, "library");
}

static const char *node_error(const cJSON *n)
{
    return *aitk_field_str(n, "detail") ? aitk_field_str(n, "detail") : aitk_field_str(n, "error");
}

static const cJSON *node_children(const cJSON *n)
{
    const cJSON *c = aitk_field_array(n, "children");
    return c ? c : aitk_field_array(n, "needed");
}

static bool node_missing(const cJSON *n)
{
    static const char *const problems[] = {"not_found", "wrong_arch", "bad_file",
                                           "missing_version"};
    const char *state = aitk_field_str(n, "state");
    for (size_t i = 0; i < sizeof problems / sizeof *problems; i++)
        if (strcmp(state, problems[i]) == 0)
            return true;
    return cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(n, "found")) ||
           (!*state && *node_error(n));
}

static bool tree_broken(const cJSON *node, int depth)
{
    if (depth > 32)
        return false;
    if (node_missing(node))
        return true;
    const cJSON *c;
    cJSON_ArrayForEach(c, node_children(node))
    {
        if (tree_broken(c, depth + 1))
            return true;
    }
    return false;
}

static void tree_node(aitk_str *out, const cJSON *node, int depth)
{
    bool missing = node_missing(node);
    aitk_str_appendf(out, "<li class=\"%s\"><span class=\"mono\">", missing ? "missing" : "ok");
    aitk_xml_escape(out, node_name(node));
    aitk_str_append(out, "</span>");
    if (*aitk_field_str(node, "path")) {
        aitk_str_append(out, " <span class=\"muted mono\">");
        aitk_xml_escape(out, aitk_field_str(node, "path"));
        aitk_str_append(out, "</span>");
    }
    if (missing && *aitk_field_str(node, "state")) {
        aitk_str_append(out, " — ");
        aitk_xml_escape(out, aitk_field_str(node, "state"));
    }
    if (*node_error(node)) {
        aitk_str_append(out, " — ");
        aitk_xml_escape(out, node_error(node));
    }
    const cJSON *kids = node_children(node);
    if (kids && cJSON_GetArraySize(kids) > 0) {
        if (depth >= 32) {
            aitk_str_append(out, " <span class=\"muted\">(deeper levels not shown)</span>");
        } else {
            aitk_str_append(out, "<ul class=\"tree\">");
            const cJSON *c;
            cJSON_ArrayForEach(c, kids)
            {
                tree_node(out, c, depth + 1);
            }
            aitk_str_append(out, "</ul>");
        }
    }
    aitk_str_append(out, "</li>");
}

/* One entry of a deps list: a tree itself, or a library record holding one. */
static void deps_entry(aitk_str *out, const cJSON *entry, int *shown)
{
    const cJSON *tree = aitk_field_obj(entry, "tree");
    const cJSON *root = tree ? tree : entry;
    /* Only broken trees: a healthy torch has hundreds of libraries. */
    if (!cJSON_IsObject(root) || !tree_broken(root, 0))
        return;
    if ((*shown)++ == 0)
        aitk_str_append(out, "<section id=\"deps\"><h2>Library dependencies that do not "
                             "resolve</h2>\n");
    aitk_str_append(out, "<ul class=\"tree\">");
    tree_node(out, root, 0);
    aitk_str_append(out, "</ul>\n");
}

/* Trees may be at report.deps[] or, as the libdeps provider records them,
 * under environment.deps.<group>.libraries[].tree. */
void aitk_html_deps(aitk_str *out, const cJSON *report)
{
    int shown = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, aitk_field_array(report, "deps"))
    {
        deps_entry(out, d, &shown);
    }
    const cJSON *group;
    cJSON_ArrayForEach(group, aitk_field_obj(aitk_field_obj(report, "environment"), "deps"))
    {
        cJSON_ArrayForEach(d, aitk_field_array(group, "libraries"))
        {
            deps_entry(out, d, &shown);
        }
    }
    if (shown)
        aitk_str_append(out, "</section>\n");
}
