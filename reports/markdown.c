/* Report -> Markdown. Reads only the report tree; never a probe. */
#include "reports/markdown.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "reports/buyer.h"
#include "reports/causes.h"
#include "reports/check_parts.h"
#include "reports/fields.h"
#include "reports/identity.h"

static double number(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Text for a scratch that is escaped as a whole afterwards. */
static void as_is(aitk_str *out, const char *text)
{
    aitk_str_append(out, text);
}

/* A check's id, and the id it follows, in code type: written as a code
 * span of its own, so no character of it is read as markup. */
static void id_span(aitk_str *out, const char *id)
{
    aitk_markdown_code(out, id, false);
}

/* A failed or warned check as a list item with its details nested below. */
static const aitk_check_markup check_item[AITK_CHECK_PART_COUNT] = {
    [AITK_CHECK_PART_STATUS] = {NULL, NULL},
    [AITK_CHECK_PART_TITLE] = {"- **", "** ("},
    [AITK_CHECK_PART_ID] = {"", ")", id_span},
    [AITK_CHECK_PART_MESSAGE] = {": ", ""},
    [AITK_CHECK_PART_HEAD_END] = {"\n", ""},
    [AITK_CHECK_PART_OBSERVED] = {"  - observed: ", ""},
    [AITK_CHECK_PART_EXPECTED] = {"; expected: ", ""},
    [AITK_CHECK_PART_OBSERVED_END] = {"\n", ""},
    [AITK_CHECK_PART_FOLLOWS] = {"  - follows from ", ": fixing that may clear this\n", id_span},
    [AITK_CHECK_PART_REMEDY] = {"  - **fix:** ", "\n"},
    [AITK_CHECK_PART_SOURCE] = {"  - source: ", "\n"},
    [AITK_CHECK_PART_END] = {"", ""},
};

static void append_host_line(aitk_str *out, const cJSON *host)
{
    if (!cJSON_IsObject(host))
        return;
    const cJSON *os = cJSON_GetObjectItemCaseSensitive(host, "os");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(host, "cpu");
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(host, "memory");
    aitk_str_append(out, "\nHost: ");
    const char *os_name = aitk_field_str(os, "pretty_name");
    aitk_markdown_inline(out, *os_name ? os_name : aitk_field_str(os, "name"));
    aitk_str_append(out, " · ");
    aitk_markdown_inline(out, aitk_field_str(os, "machine"));
    if (*aitk_field_str(os, "libc")) {
        aitk_str_append(out, " · ");
        aitk_markdown_inline(out, aitk_field_str(os, "libc"));
    }
    if (*aitk_field_str(cpu, "model")) {
        aitk_str_append(out, " · ");
        aitk_markdown_inline(out, aitk_field_str(cpu, "model"));
        aitk_str_appendf(out, " (%.0f logical CPUs)", number(cpu, "logical_cpus"));
    }
    if (number(mem, "total_bytes") > 0)
        aitk_str_appendf(out, " · %.1f GiB RAM", number(mem, "total_bytes") / 1073741824.0);
    aitk_str_append(out, "\n");
}

/* "1 h 02 min", "3 min 20 s", "25.5 s": the scale a person reads a 1000-step time in. */
static void append_duration(aitk_str *out, double s)
{
    if (s >= 3600)
        aitk_str_appendf(out, "%.0f h %02.0f min", floor(s / 3600), floor(fmod(s, 3600) / 60));
    else if (s >= 60)
        aitk_str_appendf(out, "%.0f min %02.0f s", floor(s / 60), floor(fmod(s, 60)));
    else
        aitk_str_appendf(out, "%.1f s", s);
}

/* The first section: the buyer's question, one bullet a model. */
static void append_buyer(aitk_str *out, const cJSON *buyer)
{
    if (cJSON_GetArraySize(buyer) == 0)
        return;
    aitk_str_append(out, "\n### " AITK_BUYER_HEADING "\n\n");
    const cJSON *e;
    cJSON_ArrayForEach(e, buyer)
    {
        aitk_str line = AITK_STR_INIT;
        aitk_buyer_sentence(e, &line);
        aitk_str_append(out, "- ");
        aitk_markdown_inline(out, aitk_str_cstr(&line));
        aitk_str_append(out, "\n");
        aitk_str_free(&line);
    }
}

/* The mean step with its 95% interval, named by what the interval is of
 * (step_time_s.interval_of; bench/stats.h: the mean). */
static void append_mean_cell(aitk_str *out, const cJSON *st)
{
    if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(st, "mean")))
        return;
    aitk_str_appendf(out, "%.3g s", number(st, "mean"));
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(st, "ci95_low")) &&
        cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(st, "ci95_high")))
        aitk_str_appendf(out, " (%.3g–%.3g)", number(st, "ci95_low"), number(st, "ci95_high"));
}

/* Length of a kernel's family: its text up to " [" (cuBLASLt's shape and
 * algorithm), or all of it. */
static size_t kernel_family_len(const char *kernel)
{
    const char *b = strstr(kernel, " [");
    return b ? (size_t)(b - kernel) : strlen(kernel);
}

static bool same_kernel_family(const cJSON *a, const cJSON *b)
{
    const char *ka = aitk_field_str(a, "kernel"), *kb = aitk_field_str(b, "kernel");
    size_t la = kernel_family_len(ka);
    return strcmp(aitk_field_str(a, "op"), aitk_field_str(b, "op")) == 0 &&
           la == kernel_family_len(kb) && strncmp(ka, kb, la) == 0;
}

/* One op and kernel family of a workload's kernels: the first entry names
 * it; cuBLASLt's entries of other shapes are summed into it ("47 shapes"),
 * so the summary for an issue stays short (the H200's FLUX step listed a
 * hundred GEMM shapes; the HTML and JSON keep each). */
static void append_kernel_group(aitk_str *out, const cJSON *ks, const cJSON *first)
{
    double calls = 0;
    size_t shapes = 0;
    const cJSON *k;
    cJSON_ArrayForEach(k, ks)
    {
        if (same_kernel_family(k, first)) {
            calls += number(k, "calls");
            shapes++;
        }
    }
    const char *kernel = aitk_field_str(first, "kernel");
    aitk_markdown_inline(out, aitk_field_str(first, "op"));
    aitk_str_append(out, " → ");
    if (shapes > 1) {
        aitk_str tmp = AITK_STR_INIT;
        aitk_str_appendn(&tmp, kernel, kernel_family_len(kernel));
        aitk_markdown_inline(out, aitk_str_cstr(&tmp));
        aitk_str_free(&tmp);
        aitk_str_appendf(out, " (%zu shapes, %.0f calls)", shapes, calls);
    } else {
        aitk_markdown_inline(out, kernel);
        aitk_str_appendf(out, " (%.0f calls)", calls);
    }
}

/* Which implementation of each op every workload ran (its "kernels", the
 * backend's paths): cuDNN's fused attention or the plain kernel. */
static void append_kernels(aitk_str *out, const cJSON *workloads)
{
    bool any = false;
    const cJSON *w;
    cJSON_ArrayForEach(w, workloads)
    {
        const cJSON *ks = cJSON_GetObjectItemCaseSensitive(w, "kernels");
        if (!cJSON_IsArray(ks) || cJSON_GetArraySize(ks) == 0)
            continue;
        if (!any)
            aitk_str_append(out, "\nKernels that ran:\n\n");
        any = true;
        aitk_str_append(out, "- ");
        aitk_markdown_inline(out, aitk_field_str(w, "name"));
        const char *sep = ": ";
        const cJSON *k;
        cJSON_ArrayForEach(k, ks)
        {
            /* The group is written at its first entry only. */
            bool seen = false;
            for (const cJSON *e = ks->child; e && e != k && !seen; e = e->next)
                seen = same_kernel_family(e, k);
            if (seen)
                continue;
            aitk_str_append(out, sep);
            append_kernel_group(out, ks, k);
            sep = "; ";
        }
        aitk_str_append(out, "\n");
    }
}

/* One problem of a workload's "gemm_in_step": its rate in the step and,
 * when it was timed alone, that rate and the ratio. */
static void append_gemm_problem(aitk_str *out, const cJSON *p)
{
    double iso, ratio;
    aitk_str_append(out, "  - ");
    aitk_markdown_inline(out, aitk_field_str(p, "shape"));
    aitk_str_appendf(out, ": %.0f calls, %.3g ms, %.3g TFLOP/s in the step", number(p, "calls"),
                     number(p, "ms_in_step"), number(p, "tflops_in_step"));
    if (aitk_field_num(p, "tflops_isolated", &iso) && aitk_field_num(p, "ratio", &ratio))
        aitk_str_appendf(out, ", %.3g alone (%.0f%%)", iso, ratio * 100);
    else
        aitk_str_append(out, ", not timed alone");
    aitk_str_append(out, "\n");
}

/* The step's GEMMs against the same GEMMs alone (each workload's
 * "gemm_in_step"): the ratio and its verdict, or why it was not measured,
 * then the slowest problems. */
static void append_gemm_in_step(aitk_str *out, const cJSON *workloads)
{
    bool any = false;
    const cJSON *w;
    cJSON_ArrayForEach(w, workloads)
    {
        const cJSON *g = aitk_field_obj(w, "gemm_in_step");
        double ratio;
        if (!g)
            continue;
        if (!any)
            aitk_str_append(out, "\nGEMMs inside the step against the same GEMMs alone:\n\n");
        any = true;
        aitk_str_append(out, "- ");
        aitk_markdown_inline(out, aitk_field_str(w, "name"));
        aitk_str_append(out, ": ");
        aitk_markdown_inline(out, aitk_field_str(g, "status"));
        if (aitk_field_num(g, "ratio", &ratio))
            aitk_str_appendf(out, ", %.0f%% of the isolated rate (target %.0f%%); %.3g ms of "
                                  "GEMMs at %.3g TFLOP/s; problems timed alone cover %.0f%% of "
                                  "the GEMM FLOPs",
                             ratio * 100, number(g, "target") * 100, number(g, "ms_in_step"),
                             number(g, "tflops_in_step"), number(g, "matched_share") * 100);
        if (*aitk_field_str(g, "message")) {
            aitk_str_append(out, " (");
            aitk_markdown_inline(out, aitk_field_str(g, "message"));
            aitk_str_append(out, ")");
        }
        aitk_str_append(out, "\n");
        const cJSON *p;
        cJSON_ArrayForEach(p, aitk_field_array(g, "problems"))
        {
            append_gemm_problem(out, p);
        }
    }
}

/* One line per workload: what ran, on what, how fast, in how much memory.
 * CPU rows say so, so nobody reads them as GPU figures. */
static void append_workloads(aitk_str *out, const cJSON *workloads)
{
    if (!cJSON_IsArray(workloads) || cJSON_GetArraySize(workloads) == 0)
        return;
    aitk_str_append(out, "\n### Workloads\n\n| workload | status | backend | median step | "
                         "mean step (95% CI of the mean) | 1000 steps | peak memory |\n"
                         "|---|---|---|---|---|---|---|\n");
    const cJSON *w;
    cJSON_ArrayForEach(w, workloads)
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(w, "step_time_s");
        const cJSON *t1k = cJSON_GetObjectItemCaseSensitive(w, "time_per_1000_steps");
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(w, "memory");
        aitk_str_append(out, "| ");
        aitk_markdown_cell(out, aitk_field_str(w, "name"));
        aitk_str_append(out, " | ");
        aitk_markdown_cell(out, aitk_field_str(w, "status"));
        aitk_str_append(out, " | ");
        aitk_markdown_cell(out, aitk_field_str(w, "backend"));
        if (strcmp(aitk_field_str(w, "backend"), "cpu") == 0)
            aitk_str_append(out, " (CPU figures, small configuration)");
        aitk_str_append(out, " | ");
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(st, "median")))
            aitk_str_appendf(out, "%.3g s", number(st, "median"));
        aitk_str_append(out, " | ");
        append_mean_cell(out, st);
        aitk_str_append(out, " | ");
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(t1k, "measured_s"))) {
            append_duration(out, number(t1k, "measured_s"));
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t1k, "extrapolated")))
                aitk_str_appendf(out, " (extrapolated from %.0f steps, ±%.1f%%)",
                                 number(t1k, "from_steps"), number(t1k, "error_pct"));
            if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(t1k, "target_s"))) {
                aitk_str_append(out, "; target ");
                append_duration(out, number(t1k, "target_s"));
            }
        }
        aitk_str_append(out, " | ");
        double peak = number(mem, "peak_bytes");
        if (peak >= 1073741824.0)
            aitk_str_appendf(out, "%.2f GiB", peak / 1073741824.0);
        else if (peak > 0)
            aitk_str_appendf(out, "%.1f MiB", peak / 1048576.0);
        aitk_str_append(out, " |\n");
    }
    append_kernels(out, workloads);
    append_gemm_in_step(out, workloads);
}

aitk_status aitk_render_markdown(const cJSON *report, aitk_str *out)
{
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(summary, "counts");
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks");
    if (!cJSON_IsArray(checks) || !cJSON_IsObject(counts))
        return AITK_E_INVAL;

    const char *verdict = aitk_field_str(summary, "verdict");
    const char *label = strcmp(verdict, "fail") == 0   ? "FAIL"
                        : strcmp(verdict, "warn") == 0 ? "PASS with warnings"
                                                       : "PASS";
    aitk_str_appendf(out, "## aitk-validate: %s\n\n", label);
    const double warned = number(counts, "warn");
    aitk_str_appendf(out, "%.0f failed · %.0f warning%s · %.0f passed · %.0f skipped\n\n",
                     number(counts, "fail"), warned, warned == 1 ? "" : "s",
                     number(counts, "pass"), number(counts, "skip"));
    aitk_fix_first_lines(out, summary, "**Fix first:** ", "\n\n", aitk_markdown_inline);
    /* The version is one code span of its own making: text escaped for a
     * paragraph would show its backslashes there, and a backtick in it
     * would end the span early and let the rest be read as markup. */
    aitk_str version = AITK_STR_INIT;
    aitk_str_append(&version, "aitk-validate ");
    aitk_report_version(&version, report, as_is);
    aitk_markdown_code(out, aitk_str_cstr(&version), false);
    aitk_field_scratch_free(out, &version);
    aitk_str_append(out, " · ");
    aitk_report_run(out, report, aitk_markdown_inline);
    aitk_str_append(out, "\n");
    append_host_line(out, cJSON_GetObjectItemCaseSensitive(report, "host"));
    append_buyer(out, cJSON_GetObjectItemCaseSensitive(report, "buyer"));

    aitk_check_parts_group(out, checks, "fail", "\n### Failed\n\n", check_item,
                           aitk_markdown_inline);
    aitk_check_parts_group(out, checks, "warn", "\n### Warnings\n\n", check_item,
                           aitk_markdown_inline);
    append_workloads(out, cJSON_GetObjectItemCaseSensitive(report, "workloads"));

    aitk_str_appendf(out, "\n<details><summary>All checks (%d)</summary>\n\n",
                     cJSON_GetArraySize(checks));
    aitk_str_append(out, "| status | check | observed | expected |\n|---|---|---|---|\n");
    const cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        aitk_str_append(out, "| ");
        aitk_markdown_cell(out, aitk_field_str(c, "status"));
        aitk_str_append(out, " | ");
        aitk_markdown_code(out, aitk_field_str(c, "id"), true);
        aitk_str_append(out, " ");
        aitk_markdown_cell(out, aitk_field_str(c, "title"));
        aitk_str_append(out, " | ");
        aitk_markdown_cell(out, aitk_field_str(c, "observed"));
        aitk_str_append(out, " | ");
        aitk_markdown_cell(out, aitk_field_str(c, "expected"));
        aitk_str_append(out, " |\n");
    }
    aitk_str_append(out, "\n</details>\n");
    return aitk_str_status(out);
}
