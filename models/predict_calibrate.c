/* `predict --calibrate`: from a saved report to measured efficiencies and
 * step scales (see predict_calibrate.h).
 *
 * What a report holds (reports/schema/report.schema.json): micro[] entries
 * {name, category, backend, device?, value, unit} and workloads[] entries
 * {name (model id), status, backend, device?, step_time_s.median,
 * configuration?}; the GPUs the probes saw are in environment.gpu.nvml.devices
 * and environment.gpu.cuda_driver.devices. Only backend "cuda" counts: CPU
 * figures of a small configuration say nothing about a GPU. */
#include "models/predict_calibrate.h"
#include "models/predict_calibrate_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/quantile.h"
#include "reports/report.h"

const char *const aitk_eff_names[AITK_EFF_COUNT] = {"gemm", "attention_fwd", "attention_bwd",
                                                     "bandwidth"};

/* A report is a few hundred KiB; a cap keeps a wrong file from eating RAM. */
#define REPORT_MAX_BYTES (64u << 20)

/* Where a measurement on `gpu` goes. Attention's shares differ by compute
 * capability (cost.yaml attention_by_cc), so a measured one replaces the
 * share of the measured GPU's capability where cost.yaml lists it, and the
 * defaults every unlisted capability uses otherwise; the other capabilities
 * keep theirs. GEMM and bandwidth shares have one value for every GPU. */
static double *eff_slot(aitk_cost_params *p, const aitk_gpu_spec *gpu, aitk_eff_id id)
{
    const aitk_attention_share *found = aitk_cost_attention_entry(p, gpu);
    aitk_attention_share *a = found ? &p->attn_by_cc[found - p->attn_by_cc] : NULL;
    if (a && id == AITK_EFF_ATTN_FWD)
        return &a->fwd;
    if (a && id == AITK_EFF_ATTN_BWD)
        return &a->bwd;
    switch (id) {
    case AITK_EFF_GEMM: return &p->eff_gemm;
    case AITK_EFF_ATTN_FWD: return &p->eff_attn_fwd;
    case AITK_EFF_ATTN_BWD: return &p->eff_attn_bwd;
    default: return &p->eff_bandwidth;
    }
}

/* ---- reading the report ---- */

/* The saved report through reports/'s own reader (JSON with line:column on
 * a syntax error, schema 1.x, checks and summary present), then the one thing
 * calibration adds: it must be this tool's. */
static aitk_status parse_report(const char *path, cJSON **out, aitk_str *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    aitk_str why = AITK_STR_INIT;
    aitk_status st = aitk_file_read(path, REPORT_MAX_BYTES, &text, &len, &why);
    if (st) {
        /* aitk_file_read already says "path: reason". */
        aitk_str_appendf(err, "%s", why.len ? aitk_str_cstr(&why) : path);
        aitk_str_free(&why);
        return st == AITK_E_NOMEM ? st : AITK_E_IO;
    }
    aitk_str_free(&why);
    cJSON *r = NULL;
    st = aitk_report_parse(path, text, len, &r, err);
    aitk_free(text);
    if (st)
        return st;
    if (!text_is(json_text(cJSON_GetObjectItemCaseSensitive(r, "tool"), "name"),
                 "aitk-validate")) {
        aitk_str_appendf(err, "%s: not an aitk-validate report (no tool.name \"aitk-validate\")",
                         path);
        cJSON_Delete(r);
        return AITK_E_PARSE;
    }
    /* "micro": "x" is a malformed report, not one that measured nothing.
     * (Entries are judged one by one below: a workload that cannot be used
     * is said and left out, not fatal.) */
    static const char *const lists[] = {"micro", "workloads"};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(r, lists[i]);
        if (l && !cJSON_IsArray(l)) {
            aitk_str_appendf(err, "%s: %s is not a list", path, lists[i]);
            cJSON_Delete(r);
            return AITK_E_PARSE;
        }
    }
    *out = r;
    return AITK_OK;
}

/* micro[] "category" and "backend"; an entry without them is classified by
 * its name, "<category>.<backend>.<...>" (bench/micro/micro.c). */
static bool micro_is(const cJSON *m, const char *category)
{
    const char *cat = json_text(m, "category"), *be = json_text(m, "backend");
    if (cat || be)
        return text_is(cat, category) && text_is(be, "cuda");
    const char *name = json_text(m, "name");
    size_t n = strlen(category);
    return name && strncmp(name, category, n) == 0 && strncmp(name + n, ".cuda.", 6) == 0;
}

static bool micro_is_used(const cJSON *m)
{
    return micro_is(m, "gemm") || micro_is(m, "attention") || micro_is(m, "memcpy");
}

bool aitk_calib_workload_is_used(const cJSON *w)
{
    const cJSON *median = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(w, "step_time_s"), "median");
    return text_is(json_text(w, "status"), "completed") &&
           text_is(json_text(w, "backend"), "cuda") &&
           cJSON_IsNumber(median);
}

static size_t count_gpu_measurements(const cJSON *report)
{
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(report, "micro")) n += micro_is_used(e);
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(report, "workloads"))
        n += aitk_calib_workload_is_used(e);
    return n;
}

/* ---- which GPU was measured ---- */

static const cJSON *probe_devices(const cJSON *report, const char *probe)
{
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(report, "environment"), "gpu");
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(gpu, probe),
                                            "devices");
}

/* The first name the measurements give themselves, else the probes' device
 * 0 (NVML's name, else the CUDA driver API's). */
static const char *measured_device(const cJSON *report, aitk_str *choice)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(report, "micro"))
    {
        if (micro_is_used(e) && json_text(e, "device")) {
            aitk_str_appendf(choice, "named by micro entry %s", json_text(e, "name"));
            return json_text(e, "device");
        }
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(report, "workloads"))
    {
        if (aitk_calib_workload_is_used(e) && json_text(e, "device")) {
            aitk_str_appendf(choice, "named by workload %s", json_text(e, "name"));
            return json_text(e, "device");
        }
    }
    static const char *const probes[] = {"nvml", "cuda_driver"};
    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
        const cJSON *devices = probe_devices(report, probes[i]);
        const char *name = json_text(cJSON_GetArrayItem(devices, 0), "name");
        if (!name)
            continue;
        int n = cJSON_GetArraySize(devices);
        aitk_str_appendf(choice, "device 0 of %d in the report's %s probe", n,
                         i == 0 ? "NVML" : "CUDA driver API");
        if (n > 1)
            aitk_str_append(choice, " (the measurements do not name their GPU; assumed device 0)");
        return name;
    }
    return NULL;
}

/* The memory the probes saw on the first device of that name (NVML's total,
 * else the CUDA driver's); 0 when neither says. It tells apart cards NVML
 * gives one name (an RTX 4060 Ti of 16 or 8 GB). */
static double probed_memory(const cJSON *report, const char *name)
{
    const cJSON *d;
    cJSON_ArrayForEach(d, probe_devices(report, "nvml"))
    {
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(d, "memory"), "total_bytes");
        if (text_is(json_text(d, "name"), name) && cJSON_IsNumber(total))
            return total->valuedouble;
    }
    cJSON_ArrayForEach(d, probe_devices(report, "cuda_driver"))
    {
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(d, "total_bytes");
        if (text_is(json_text(d, "name"), name) && cJSON_IsNumber(total))
            return total->valuedouble;
    }
    return 0;
}

static aitk_status resolve_gpu(aitk_calibration *c, const cJSON *report, const aitk_gpudb *db,
                               aitk_str *err)
{
    const char *name = measured_device(report, &c->device_choice);
    if (!name) {
        aitk_str_appendf(err, "%s has GPU measurements but names no GPU (no micro[] or workload "
                              "device, no environment.gpu devices)", c->report_path);
        return AITK_E_PARSE;
    }
    c->device_name = aitk_strdup(name);
    if (!c->device_name)
        return AITK_E_NOMEM;
    aitk_str why = AITK_STR_INIT;
    const double memory = probed_memory(report, name);
    aitk_status st = aitk_gpudb_find_probed(db, name, memory, &c->gpu, &why);
    const bool shared = aitk_gpudb_is_shared_name(db, name);
    if (!st && shared)
        aitk_str_appendf(&c->device_choice, "; told from the other cards of that name by its "
                                            "%.1f GiB", memory / 1073741824.0);
    if (st == AITK_E_INVAL && shared && !(memory > 0))
        aitk_str_appendf(err, "%s: the measured GPU '%s' is the name NVML gives cards of more "
                              "than one memory size, and the report records no memory size "
                              "(environment.gpu.nvml.devices[].memory.total_bytes) to tell "
                              "which", c->report_path, name);
    else if (st == AITK_E_NOTFOUND && shared)
        aitk_str_appendf(err, "%s: the measured GPU: %s, so its efficiencies cannot be computed",
                         c->report_path, aitk_str_cstr(&why));
    else if (st == AITK_E_NOTFOUND)
        aitk_str_appendf(err, "%s: the measured GPU '%s' is not in models/gpus.yaml, so its "
                              "efficiencies cannot be computed (see `aitk-validate gpus` for "
                              "the known ones; a new row needs its datasheet figures)",
                         c->report_path, name);
    else if (st)
        aitk_str_appendf(err, "%s: the measured GPU: %s", c->report_path, aitk_str_cstr(&why));
    aitk_str_free(&why);
    return st == AITK_E_NOMEM ? st : st ? AITK_E_NOTFOUND : AITK_OK;
}

/* Micro entries that name another GPU than the one calibrated are skipped. */
static bool on_measured_device(const aitk_calibration *c, const cJSON *e)
{
    const char *dev = json_text(e, "device");
    return !dev || strcmp(dev, c->device_name) == 0;
}

void aitk_calib_note_ignored(aitk_calibration *c, const char *fmt, ...)
{
    if (c->ignored.len)
        aitk_str_append(&c->ignored, "; ");
    va_list ap;
    va_start(ap, fmt);
    aitk_str_vappendf(&c->ignored, fmt, ap);
    va_end(ap);
}

/* ---- efficiencies from micro[] ---- */

typedef struct eff_samples {
    double *values;
    const char **names;
    size_t n;
} eff_samples;

/* Which efficiency a micro entry measures, or -1. */
static int entry_eff(const cJSON *e)
{
    if (micro_is(e, "gemm"))
        return AITK_EFF_GEMM;
    if (micro_is(e, "memcpy"))
        return AITK_EFF_BANDWIDTH;
    if (!micro_is(e, "attention"))
        return -1;
    /* bench/micro names them attention.<backend>.<dtype>.<model> and
     * attention_backward.<...>; a name ending in .fwd or .bwd says it too
     * (the form this reader first expected, which the H200's reports showed
     * bench never wrote: their attention figures were ignored). */
    const char *name = json_text(e, "name");
    size_t n = name ? strlen(name) : 0;
    if (n > 4 && strcmp(name + n - 4, ".fwd") == 0)
        return AITK_EFF_ATTN_FWD;
    if (n > 4 && strcmp(name + n - 4, ".bwd") == 0)
        return AITK_EFF_ATTN_BWD;
    if (name && strncmp(name, "attention_backward.", 19) == 0)
        return AITK_EFF_ATTN_BWD;
    if (name && strncmp(name, "attention.", 10) == 0)
        return AITK_EFF_ATTN_FWD;
    return -1;
}

/* Factor from the entry's unit to the datasheet's (TFLOP/s, GB/s); 0 if the
 * unit is not one of this kind's. */
static double unit_factor(aitk_eff_id id, const char *unit)
{
    static const struct {
        const char *unit;
        double factor;
        bool bandwidth;
    } units[] = {
        {"TFLOP/s", 1, false}, {"GFLOP/s", 1e-3, false}, {"PFLOP/s", 1e3, false},
        {"GB/s", 1, true},     {"TB/s", 1e3, true},      {"MB/s", 1e-3, true},
        {"GiB/s", 1.073741824, true},
    };
    for (size_t i = 0; unit && i < sizeof units / sizeof *units; i++)
        if (strcmp(units[i].unit, unit) == 0 && units[i].bandwidth == (id == AITK_EFF_BANDWIDTH))
            return units[i].factor;
    return 0;
}

static aitk_status entry_efficiency(const aitk_calibration *c, const cJSON *e, aitk_eff_id id,
                                    double *out, aitk_str *err)
{
    const char *name = json_text(e, "name") ? json_text(e, "name") : "(unnamed)";
    const char *unit = json_text(e, "unit");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
    const bool bw = id == AITK_EFF_BANDWIDTH;
    const double factor = unit_factor(id, unit);
    if (factor == 0) {
        aitk_str_appendf(err, "%s: micro entry %s has unit '%s'; --calibrate reads %s",
                         c->report_path, name, unit ? unit : "(none)",
                         bw ? "GB/s, TB/s, MB/s or GiB/s" : "TFLOP/s, GFLOP/s or PFLOP/s");
        return AITK_E_PARSE;
    }
    const double peak = bw ? c->gpu->bandwidth_gbs : c->gpu->bf16_tflops;
    const double rate = cJSON_IsNumber(v) ? v->valuedouble * factor : NAN;
    const double eff = rate / peak;
    if (!(peak > 0)) {
        aitk_str_appendf(err, "%s: models/gpus.yaml has no %s figure for %s", c->report_path,
                         bw ? "bandwidth_gbs" : "bf16_tflops", c->gpu->name);
        return AITK_E_RANGE;
    }
    if (!isfinite(eff) || eff <= 0) {
        if (!cJSON_IsNumber(v))
            aitk_str_appendf(err, "%s: micro entry %s has no value in %s (missing or not a "
                                  "number): a measured rate is a positive number",
                             c->report_path, name, unit);
        else
            aitk_str_appendf(err, "%s: micro entry %s has value %.4g %s: a measured rate is a "
                                  "positive, finite number", c->report_path, name,
                             v->valuedouble, unit);
        return AITK_E_RANGE;
    }
    if (eff < AITK_EFF_MIN_OF_DATASHEET) {
        aitk_str_appendf(err, "%s: micro entry %s measured %.4g %s, %.2g of the datasheet %s of "
                              "%s (%.4g %s); below %.2g the benchmark did not measure this GPU",
                         c->report_path, name, v->valuedouble, unit, eff,
                         bw ? "bandwidth" : "bf16 dense peak", c->gpu->name, peak,
                         bw ? "GB/s" : "TFLOP/s", AITK_EFF_MIN_OF_DATASHEET);
        return AITK_E_RANGE;
    }
    if (eff > AITK_RATE_MAX_OVER_DATASHEET) {
        aitk_str_appendf(err, "%s: micro entry %s measured %.4g %s, %.3gx the datasheet %s of %s "
                              "(%.4g %s in models/gpus.yaml; the GPU %s); above %.2fx either the "
                              "datasheet row or the measurement is wrong", c->report_path, name,
                         v->valuedouble, unit, eff, bw ? "bandwidth" : "bf16 dense peak",
                         c->gpu->name, peak, bw ? "GB/s" : "TFLOP/s",
                         aitk_str_cstr(&c->device_choice), AITK_RATE_MAX_OVER_DATASHEET);
        /* %.3g: a value like 1e308 must not print as 300 digits. */
        return AITK_E_RANGE;
    }
    /* The datasheet bounds above catch a broken entry; the efficiency itself
     * is over the rate models/cost.c multiplies by: the datasheet bandwidth,
     * or the GPU's matmul rate for tensor-core work. No GEMM or attention
     * kernel beats a large square matmul: above that rate it is the listed
     * rate that is wrong (a 0.80 default share, say), and an efficiency over
     * 1 carried to every GPU would put them past their datasheets. Bounded
     * as cost.yaml's own efficiencies are, (0, 1]. */
    if (!bw && rate > c->gpu->matmul_bf16_tflops) {
        aitk_str_appendf(err, "%s: micro entry %s measured %.4g TFLOP/s, above the %.4g TFLOP/s "
                              "of a large matmul that models/gpus.yaml lists for %s (%s); that "
                              "row's matmul_bf16_tflops needs this GPU's measurement",
                         c->report_path, name, rate, c->gpu->matmul_bf16_tflops, c->gpu->name,
                         aitk_gpu_matmul_source(c->gpu));
        return AITK_E_RANGE;
    }
    *out = bw ? eff : rate / c->gpu->matmul_bf16_tflops;
    return AITK_OK;
}

static double median(double *v, size_t n)
{
    aitk_sort_doubles(v, n);
    return aitk_quantile_sorted(v, n, 0.5);
}

/* Dot-separated components shared by every name at the start and at the
 * end, around a '*': "gemm.cuda.bf16.*", "attention.cuda.bf16.*.fwd". */
static size_t dot_components(const char *s)
{
    size_t n = 1;
    for (; *s; s++)
        n += *s == '.';
    return n;
}

static const char *component(const char *s, size_t i, size_t *len)
{
    for (; i > 0; i--)
        s = strchr(s, '.') + 1;
    *len = strcspn(s, ".");
    return s;
}

static bool same_component(const char *const *names, size_t n, size_t from_end, size_t i)
{
    size_t len0 = 0, len = 0;
    const size_t k0 = dot_components(names[0]);
    const char *c0 = component(names[0], from_end ? k0 - 1 - i : i, &len0);
    for (size_t j = 1; j < n; j++) {
        const size_t k = dot_components(names[j]);
        if (i >= k)
            return false;
        const char *cj = component(names[j], from_end ? k - 1 - i : i, &len);
        if (len != len0 || strncmp(c0, cj, len) != 0)
            return false;
    }
    return true;
}

static void name_pattern(aitk_str *out, const char *const *names, size_t n)
{
    size_t k = dot_components(names[0]), head = 0, tail = 0;
    while (head < k && same_component(names, n, 0, head))
        head++;
    if (head == k) {
        aitk_str_append(out, names[0]); /* all the same name */
        return;
    }
    while (tail < k - head && same_component(names, n, 1, tail))
        tail++;
    size_t len = 0;
    for (size_t i = 0; i < head; i++) {
        const char *c = component(names[0], i, &len);
        aitk_str_appendn(out, c, len);
        aitk_str_appendc(out, '.');
    }
    aitk_str_appendc(out, '*');
    for (size_t i = k - tail; i < k; i++) {
        const char *c = component(names[0], i, &len);
        aitk_str_appendc(out, '.');
        aitk_str_appendn(out, c, len);
    }
}

static aitk_status collect_efficiencies(aitk_calibration *c, const cJSON *report,
                                        eff_samples s[AITK_EFF_COUNT], aitk_str *err)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(report, "micro"))
    {
        const int id = entry_eff(e);
        const char *name = json_text(e, "name") ? json_text(e, "name") : "(unnamed)";
        if (id < 0) {
            if (micro_is_used(e))
                aitk_calib_note_ignored(c, "%s (an attention entry's name starts attention. or "
                                           "attention_backward.)", name);
            continue;
        }
        if (!on_measured_device(c, e)) {
            aitk_calib_note_ignored(c, "%s (measured on %s, another GPU)", name,
                                    json_text(e, "device"));
            continue;
        }
        double eff = 0;
        aitk_status st = entry_efficiency(c, e, (aitk_eff_id)id, &eff, err);
        if (st)
            return st;
        s[id].values[s[id].n] = eff;
        s[id].names[s[id].n++] = name;
    }
    return AITK_OK;
}

static aitk_status calibrate_efficiencies(aitk_calibration *c, const cJSON *report,
                                          aitk_cost_params *p, aitk_str *err)
{
    const size_t n_micro = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(report,
                                                                                         "micro"));
    eff_samples s[AITK_EFF_COUNT] = {{0}};
    aitk_status st = AITK_OK;
    for (int i = 0; !st && i < AITK_EFF_COUNT; i++) {
        s[i].values = aitk_calloc(n_micro + 1, sizeof *s[i].values);
        s[i].names = aitk_calloc(n_micro + 1, sizeof *s[i].names);
        if (!s[i].values || !s[i].names)
            st = AITK_E_NOMEM;
    }
    if (!st)
        st = collect_efficiencies(c, report, s, err);
    for (int i = 0; i < AITK_EFF_COUNT; i++) {
        aitk_eff_calibration *e = &c->eff[i];
        e->default_value = e->value = *eff_slot(p, c->gpu, (aitk_eff_id)i);
        if (!st && s[i].n) {
            e->measured = true;
            e->n_entries = s[i].n;
            name_pattern(&e->entries, s[i].names, s[i].n);
            e->value = median(s[i].values, s[i].n);
            st = aitk_str_status(&e->entries);
        }
        aitk_free(s[i].values);
        aitk_free(s[i].names);
    }
    if (st)
        return st;
    /* All read and checked: only now change the parameters. */
    for (int i = 0; i < AITK_EFF_COUNT; i++)
        *eff_slot(p, c->gpu, (aitk_eff_id)i) = c->eff[i].value;
    return AITK_OK;
}

/* ---- the whole ---- */

aitk_status aitk_calibration_load(const char *path, const aitk_gpudb *db, aitk_cost_params *p,
                                  aitk_calibration **out, aitk_str *err)
{
    *out = NULL;
    cJSON *report = NULL;
    aitk_status st = parse_report(path, &report, err);
    if (st)
        return st;
    aitk_calibration *c = aitk_calloc(1, sizeof *c);
    if (!c || !(c->report_path = aitk_strdup(path))) {
        cJSON_Delete(report);
        aitk_free(c);
        return AITK_E_NOMEM;
    }
    if (count_gpu_measurements(report) == 0) {
        aitk_str_appendf(err, "%s has no GPU measurements (no micro[] entry and no completed "
                              "workload with backend \"cuda\"): it was made without a working "
                              "GPU backend; run `aitk-validate --full` on the GPU first", path);
        st = AITK_E_NOTFOUND;
    }
    if (!st)
        st = resolve_gpu(c, report, db, err);
    const aitk_cost_params saved = *p;
    if (!st)
        st = calibrate_efficiencies(c, report, p, err);
    if (!st)
        st = aitk_calib_steps(c, report, db, p, err);
    if (!st)
        st = aitk_str_status(&c->ignored);
    cJSON_Delete(report);
    if (st) {
        *p = saved;
        aitk_calibration_free(c);
        return st;
    }
    *out = c;
    return AITK_OK;
}

void aitk_calibration_free(aitk_calibration *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_scales; i++) {
        aitk_free(c->scales[i].model);
        aitk_str_free(&c->scales[i].configuration);
    }
    aitk_free(c->scales);
    for (int i = 0; i < AITK_EFF_COUNT; i++)
        aitk_str_free(&c->eff[i].entries);
    aitk_str_free(&c->device_choice);
    aitk_str_free(&c->ignored);
    aitk_free(c->device_name);
    aitk_free(c->report_path);
    aitk_free(c);
}

const aitk_step_scale *aitk_calibration_step_scale(const aitk_calibration *c,
                                                   const char *model_id)
{
    for (size_t i = 0; c && i < c->n_scales; i++)
        if (c->scales[i].model && strcmp(c->scales[i].model, model_id) == 0)
            return &c->scales[i];
    return NULL;
}

void aitk_prediction_scale_time(aitk_prediction *pred, double scale)
{
    pred->step_s *= scale;
    pred->t_gemm *= scale;
    pred->t_attention *= scale;
    pred->t_memory *= scale;
    pred->t_overhead *= scale;
    /* The scale is a whole step's, measured over predicted: the host's
     * share scales with the rest. */
    pred->t_host *= scale;
}
