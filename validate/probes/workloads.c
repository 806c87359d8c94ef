/* The workload and microbenchmark providers (see workloads.h).
 *
 * Backends: when the CUDA plugin opens a GPU (and --cpu is not given), each
 * model first runs at full size on the GPU (checks workload.<model>.cuda,
 * judged against the documented time and memory targets); every model also
 * runs the CPU backend's small configuration (checks workload.<model>),
 * whose figures are labelled as such and never judged against the GPU
 * targets. A Ctrl-C or SIGTERM (the CLI's handler sets the stop flag,
 * common/stop.h) ends the workload in flight as "interrupted" and leaves the
 * rest "skipped", so the report is still complete and valid. */
#include "validate/probes/workloads.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "bench/config.h"
#include "bench/progress.h"
#include "bench/runner.h"
#include "bench/gpu_backend.h"
#include "bench/micro/micro.h"
#include "bench/workload.h"
#include "common/stop.h"
#include "common/str.h"
#include "models/gpudb.h"
#include "reports/fields.h"
#include "validate/probes/gpu_util.h"

const char *const aitk_reference_models[] = {"flux1-dev", "chroma", "omnigen2", NULL};

static int selected(const char *list, const char *model)
{
    return !list || aitk_list_has(list, model);
}

/* ctx->env[key] as an array, created when missing. */
static cJSON *env_array(aitk_run_ctx *ctx, const char *key)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(ctx->env, key);
    return cJSON_IsArray(a) ? a : cJSON_AddArrayToObject(ctx->env, key);
}

/* bench/workloads.yaml and ctx->env[key], the array its results go in.
 * On failure *cfg is NULL and `err` names a broken file. */
static aitk_status plan_open(aitk_run_ctx *ctx, const char *key, aitk_bench_config **cfg,
                             cJSON **arr, aitk_str *err)
{
    aitk_status st = aitk_bench_config_load(cfg, err);
    *arr = st ? NULL : env_array(ctx, key);
    if (!st && !*arr) {
        aitk_bench_config_free(*cfg);
        *cfg = NULL;
        st = AITK_E_NOMEM;
    }
    return st;
}

static double num_at(const cJSON *o, const char *obj, const char *key)
{
    return aitk_json_number(cJSON_GetObjectItemCaseSensitive(o, obj), key, NAN);
}

static void describe_time(aitk_str *s, double secs)
{
    if (secs < 120)
        aitk_str_appendf(s, "%.1f s", secs);
    else if (secs < 7200)
        aitk_str_appendf(s, "%.1f min", secs / 60);
    else
        aitk_str_appendf(s, "%.2f h", secs / 3600);
}

/* "median 0.012 s/step, 81 steps/s, 1.5 GFLOP/s; 1000 steps: 12.3 s
 * (extrapolated from 45 steps, +-1.1%)" from a workloads[] entry. */
static void observed_of(const cJSON *w, aitk_str *s)
{
    double med = num_at(w, "step_time_s", "median");
    double sps = num_at(w, "throughput", "steps_per_s");
    double gf = num_at(w, "throughput", "gflops");
    if (isfinite(med))
        aitk_str_appendf(s, "median %.3g s/step", med);
    if (isfinite(sps))
        aitk_str_appendf(s, ", %.3g steps/s", sps);
    if (isfinite(gf))
        aitk_str_appendf(s, ", %.3g GFLOP/s", gf);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "time_per_1000_steps");
    double m = aitk_json_number(t, "measured_s", NAN);
    if (isfinite(m)) {
        aitk_str_appendf(s, "%s1000 steps: ", s->len ? "; " : "");
        describe_time(s, m);
        if (aitk_json_true(t, "extrapolated")) {
            aitk_str_appendf(s, " (extrapolated from %.0f steps",
                             aitk_json_number(t, "from_steps", 0));
            double e = aitk_json_number(t, "error_pct", NAN);
            if (isfinite(e))
                aitk_str_appendf(s, ", \xc2\xb1%.1f%%", e);
            aitk_str_append(s, ")");
        } else {
            aitk_str_append(s, " (measured)");
        }
    }
    double peak = num_at(w, "memory", "peak_bytes");
    double planned = num_at(w, "memory", "predicted_bytes");
    if (isfinite(peak))
        aitk_str_appendf(s, "%speak %.1f MiB allocated", s->len ? "; " : "", peak / 1048576.0);
    if (isfinite(peak) && isfinite(planned) && planned > 0)
        aitk_str_appendf(s, " (memory model: %.1f MiB, %+.1f%%)", planned / 1048576.0,
                         100.0 * (peak - planned) / planned);
    if (!strcmp(aitk_field_str(w, "backend"), "cpu") && s->len)
        aitk_str_append(s, " (CPU figures, small configuration)");
}

static const char *remedy_of(const char *status, bool gpu, const cJSON *w)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(w, "memory");
    if (gpu && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(m, "fits")))
        return "an fp8 base (quantize: true in the ai-toolkit config), 8-bit AdamW, gradient "
               "checkpointing or a lower resolution; or a GPU with more memory (see "
               "`aitk-validate predict`)";
    if (gpu && !strcmp(status, "failed"))
        return "run again with --verbose and attach report.json to an issue: the message "
               "quotes the CUDA library that failed (a driver or library problem), or it is a "
               "bug in aitk-validate's GPU backend";
    if (!strcmp(status, "failed"))
        return "run again with --verbose and attach report.json to an issue: a step that "
               "fails on the CPU backend is a bug in aitk-validate";
    if (!strcmp(status, "interrupted"))
        return "run again and let the workload finish (Ctrl-C or SIGTERM ends it early); "
               "--steps N makes a shorter run";
    if (!strcmp(status, "timed_out"))
        return "the workload ran past its time limit (bench/workloads.yaml): use --steps N "
               "for a shorter run, or run on a faster backend";
    return NULL;
}

static aitk_status add_workload_check(aitk_run_ctx *ctx, const char *model, const cJSON *w)
{
    const char *status = aitk_field_str(w, "status");
    const bool gpu = strcmp(aitk_field_str(w, "backend"), "cpu") != 0;
    const bool no_fit = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(w, "memory"), "fits"));
    /* A job that does not fit the GPU is a finding about this machine. */
    aitk_check_status cs = !strcmp(status, "completed")                ? AITK_CHECK_PASS
                           : !strcmp(status, "failed") || no_fit       ? AITK_CHECK_FAIL
                           : !strcmp(status, "skipped")                ? AITK_CHECK_SKIP
                                                                       : AITK_CHECK_WARN;
    aitk_str id = AITK_STR_INIT, title = AITK_STR_INIT, obs = AITK_STR_INIT,
             msg = AITK_STR_INIT;
    aitk_str_appendf(&id, "workload.%s%s", model, gpu ? ".cuda" : "");
    aitk_str_appendf(&title, "Reference %s LoRA training workload%s", model,
                     gpu ? " on the GPU (full size)" : " (small CPU configuration)");
    observed_of(w, &obs);
    aitk_str_append(&msg, aitk_field_str(w, "message"));
    if (cs == AITK_CHECK_WARN && !msg.len)
        aitk_str_appendf(&msg, "the workload ended %s", status);
    aitk_check c = {
        .id = aitk_str_cstr(&id),
        .category = "workload",
        .title = aitk_str_cstr(&title),
        .status = cs,
        .observed = aitk_str_cstr(&obs),
        .expected = "the training step runs to completion; a GPU backend is also judged "
                    "against the documented time and memory targets",
        .message = aitk_str_cstr(&msg),
        .remedy = remedy_of(status, gpu, w),
        .source = "bench/workloads.yaml (run plan); models/<id>.yaml targets",
    };
    aitk_status st = aitk_str_status(&obs) ? AITK_E_NOMEM : aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&id);
    aitk_str_free(&title);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    return st;
}

static aitk_check_status parse_status(const char *text)
{
    aitk_check_status cs = AITK_CHECK_SKIP;
    aitk_check_status_parse(text, &cs);
    return cs;
}

aitk_status aitk_workload_target_checks(aitk_run_ctx *ctx, const char *model, const cJSON *w)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "time_per_1000_steps");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(w, "memory");
    aitk_status st = AITK_OK;
    aitk_str id = AITK_STR_INIT, title = AITK_STR_INIT, obs = AITK_STR_INIT, exp = AITK_STR_INIT;
    if (*aitk_field_str(t, "status")) {
        aitk_str_appendf(&id, "workload.%s.cuda.time_1000", model);
        aitk_str_appendf(&title, "%s: time for 1000 steps against the documented target", model);
        describe_time(&obs, aitk_json_number(t, "measured_s", NAN));
        aitk_str_append(&obs, aitk_json_true(t, "extrapolated") ? " (extrapolated)" : " (measured)");
        describe_time(&exp, aitk_json_number(t, "target_s", NAN));
        aitk_str_appendf(&exp, " or less (the %s target scaled to this GPU)",
                         aitk_field_str(t, "target_gpu"));
        double documented = aitk_json_number(t, "documented_s", NAN);
        if (isfinite(documented) && documented > 0) {
            aitk_str_append(&exp, ", or the documented ");
            describe_time(&exp, documented);
            aitk_str_append(&exp, " itself");
        }
        aitk_check c = {.id = id.ptr, .category = "workload", .title = title.ptr,
                        .status = parse_status(aitk_field_str(t, "status")),
                        .observed = obs.ptr, .expected = exp.ptr,
                        .message = "pass: within the scaled target or the documented time; "
                                   "warn: up to 25% over the scaled target; fail: beyond",
                        .remedy = "compare with `aitk-validate predict`: a slower GPU, power or "
                                  "clock limits (nvidia-smi -q -d PERFORMANCE), or a busy GPU",
                        .source = aitk_field_str(t, "source")};
        if (c.status == AITK_CHECK_PASS)
            c.remedy = NULL;
        st = aitk_str_status(&obs) || aitk_str_status(&exp) ? AITK_E_NOMEM
                                                             : aitk_checklist_add(&ctx->checks, &c);
    }
    if (!st && *aitk_field_str(m, "status")) {
        aitk_str_clear(&id);
        aitk_str_clear(&title);
        aitk_str_clear(&obs);
        aitk_str_clear(&exp);
        aitk_str_appendf(&id, "workload.%s.cuda.memory", model);
        aitk_str_appendf(&title, "%s: peak memory against VRAM and the documented minimum", model);
        aitk_str_appendf(&obs, "peak %.1f GiB of %.1f GiB",
                         aitk_json_number(m, "peak_bytes", NAN) / 1073741824.0,
                         aitk_json_number(m, "vram_bytes", NAN) / 1073741824.0);
        aitk_str_appendf(&exp, "fits in VRAM; documented minimum %.0f GB",
                         aitk_json_number(m, "documented_min_bytes", NAN) / 1e9);
        aitk_check c = {.id = id.ptr, .category = "workload", .title = title.ptr,
                        .status = parse_status(aitk_field_str(m, "status")),
                        .observed = obs.ptr, .expected = exp.ptr,
                        .remedy = "a GPU with at least the documented memory, or a lower "
                                  "resolution / fp8 base / gradient checkpointing",
                        .source = aitk_field_str(m, "source")};
        if (c.status == AITK_CHECK_PASS)
            c.remedy = NULL;
        st = aitk_str_status(&obs) || aitk_str_status(&exp) ? AITK_E_NOMEM
                                                             : aitk_checklist_add(&ctx->checks, &c);
    }
    aitk_str_free(&id);
    aitk_str_free(&title);
    aitk_str_free(&obs);
    aitk_str_free(&exp);
    return st;
}

/* "AMD EPYC 7B13 (2 logical CPUs)" from the host section. */
static void cpu_name(const aitk_run_ctx *ctx, aitk_str *out)
{
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(ctx->env, "host"), "cpu");
    const char *model = aitk_field_str(cpu, "model");
    aitk_str_append(out, *model ? model : "CPU");
    double n = aitk_json_number(cpu, "logical_cpus", -1);
    if (n > 0)
        aitk_str_appendf(out, " (%.0f logical CPUs)", n);
}

static aitk_status append_note(cJSON *w, const char *note)
{
    aitk_str m = AITK_STR_INIT;
    const char *old = aitk_field_str(w, "message");
    aitk_str_appendf(&m, "%s%s%s", old, *old ? "; " : "", note);
    cJSON *s = aitk_str_status(&m) ? NULL : cJSON_CreateString(aitk_str_cstr(&m));
    aitk_str_free(&m);
    if (!s)
        return AITK_E_NOMEM;
    if (cJSON_HasObjectItem(w, "message"))
        return cJSON_ReplaceItemInObjectCaseSensitive(w, "message", s) ? AITK_OK : AITK_E_NOMEM;
    return cJSON_AddItemToObject(w, "message", s) ? AITK_OK : AITK_E_NOMEM;
}

aitk_status aitk_workload_checks(aitk_run_ctx *ctx)
{
    aitk_bench_config *cfg = NULL;
    aitk_str err = AITK_STR_INIT, device = AITK_STR_INIT;
    cJSON *arr;
    aitk_status st = plan_open(ctx, "workloads", &cfg, &arr, &err);
    if (st) {
        /* A broken bench/workloads.yaml is named with its line and column. */
        aitk_check c = {.id = "workload.config", .category = "workload",
                        .title = "Workload run plan (bench/workloads.yaml)",
                        .status = AITK_CHECK_FAIL, .message = aitk_str_cstr(&err),
                        .remedy = "fix the file named in the message, or unset AITK_DATA_DIR"};
        if (st != AITK_E_NOMEM)
            st = aitk_checklist_add(&ctx->checks, &c);
        aitk_str_free(&err);
        return st;
    }
    cpu_name(ctx, &device);
    aitk_bench_device cpu = {.backend = "cpu", .name = aitk_str_cstr(&device),
                             .vram_bytes = NAN};
    aitk_bench_device gpu_dev = {.backend = "cuda", .vram_bytes = NAN};
    aitk_gpudb *db = NULL;
    const aitk_bench_gpu *gpu = ctx->cpu_only ? NULL : aitk_bench_gpu_open();
    if (gpu && gpu->backend) {
        gpu_dev.name = gpu->device.name;
        gpu_dev.vram_bytes = (double)gpu->device.total_memory_bytes;
        gpu_dev.impl = gpu->backend;
        /* The datasheet row sets the MFU's peak and the scaled target; an
         * unknown GPU still runs, without those. */
        if (!aitk_gpudb_load(&db, NULL))
            gpu_dev.gpudb = db;
        if (db &&
            aitk_gpudb_find_probed(db, gpu->device.name, gpu_dev.vram_bytes, &gpu_dev.gpu,
                                   NULL))
            gpu_dev.gpu = NULL;
    }
    /* A GPU the probes see but the backend cannot drive: the CPU entries say
     * why they are all there is. */
    aitk_str gpu_note = AITK_STR_INIT;
    if (gpu && !gpu->backend && cJSON_GetArraySize(aitk_gpu_devices(ctx->env)) > 0)
        aitk_str_appendf(&gpu_note, "a GPU answers, but the GPU backend could not run on it "
                                    "(%s): these are CPU figures", aitk_str_cstr(&gpu->why));
    aitk_progress pg;
    aitk_progress_init_default(&pg);
    /* GPU first: it answers what a buyer asks; the CPU figures follow. */
    const aitk_bench_device *devices[2] = {gpu_dev.impl ? &gpu_dev : NULL, &cpu};
    for (int d = 0; d < 2 && !st; d++) {
        if (!devices[d])
            continue;
        for (const char *const *m = aitk_reference_models; *m && !st; m++) {
            if (!selected(ctx->models, *m))
                continue;
            cJSON *w = NULL;
            if (aitk_stop_requested()) {
                aitk_str why = AITK_STR_INIT;
                aitk_str_appendf(&why, "not run: %s before it started", aitk_stop_words());
                st = aitk_str_status(&why);
                if (!st)
                    st = aitk_bench_workload_skipped(*m, devices[d]->backend, why.ptr, &w);
                aitk_str_free(&why);
            } else {
                aitk_bench_request req = {.model_id = *m,
                                          .full = ctx->level == AITK_LEVEL_FULL,
                                          .steps = ctx->steps,
                                          .device = devices[d],
                                          .progress = &pg,
                                          .train = ctx->train_config,
                                          .cost_params = ctx->cost_params};
                st = aitk_bench_workload_run(cfg, &req, &w);
                if (!st && d == 1 && gpu_note.len)
                    st = append_note(w, aitk_str_cstr(&gpu_note));
            }
            if (!st && !cJSON_AddItemToArray(arr, w)) {
                cJSON_Delete(w);
                st = AITK_E_NOMEM;
            }
            if (!st)
                st = add_workload_check(ctx, *m, w);
            if (!st)
                st = aitk_workload_target_checks(ctx, *m, w); /* GPU entries only */
        }
    }
    aitk_gpudb_free(db);
    aitk_str_free(&gpu_note);
    aitk_progress_free(&pg);
    aitk_bench_config_free(cfg);
    aitk_str_free(&device);
    aitk_str_free(&err);
    return st;
}

/* "memcpy 11.8 GB/s; GEMM 62-95 GFLOP/s; attention 4.1-5.0 GFLOP/s". */
/* "memcpy 12.1 GB/s; GEMM 55.7-98.2 GFLOP/s" over one backend's entries
 * (CPU and GPU figures never share a range). Returns how many it summed. */
static int micro_summary(const cJSON *arr, const char *backend, aitk_str *s)
{
    static const char *const cats[] = {"memcpy", "gemm", "attention"};
    static const char *const labels[] = {"memcpy", "GEMM", "attention"};
    int count = 0;
    for (size_t c = 0; c < 3; c++) {
        double lo = INFINITY, hi = -INFINITY;
        const char *unit = "";
        const cJSON *e;
        cJSON_ArrayForEach(e, arr)
        {
            if (strcmp(aitk_field_str(e, "category"), cats[c]) != 0 ||
                strcmp(aitk_field_str(e, "backend"), backend) != 0)
                continue;
            double v = aitk_json_number(e, "value", NAN);
            lo = fmin(lo, v);
            hi = fmax(hi, v);
            unit = aitk_field_str(e, "unit");
            count++;
        }
        if (!isfinite(lo))
            continue;
        aitk_str_appendf(s, "%s%s ", s->len ? "; " : "", labels[c]);
        if (hi > lo * 1.005)
            aitk_str_appendf(s, "%.3g-%.3g %s", lo, hi, unit);
        else
            aitk_str_appendf(s, "%.3g %s", hi, unit);
    }
    return count;
}

/* One check per backend that ran: micro.cpu always, micro.cuda when the
 * plugin measured anything. Notes (a benchmark that could not run) make
 * the check a warning, with the note as its message. */
static aitk_status micro_check(aitk_run_ctx *ctx, const cJSON *arr, const char *backend,
                               const char *notes)
{
    aitk_str obs = AITK_STR_INIT, id = AITK_STR_INIT;
    int count = micro_summary(arr, backend, &obs);
    bool cpu = strcmp(backend, "cpu") == 0;
    if (!cpu && count == 0 && !*notes)
        return AITK_OK;
    aitk_str_appendf(&obs, "%s(%d benchmarks)", obs.len ? " " : "", count);
    aitk_str_appendf(&id, "micro.%s", backend);
    aitk_check c = {.id = aitk_str_cstr(&id), .category = "micro",
                    .title = cpu ? "Host microbenchmarks (memcpy, GEMM and attention at the "
                                   "workloads' shapes)"
                                 : "GPU microbenchmarks (cuBLASLt GEMMs at the workloads' "
                                   "shapes, device copies)",
                    .expected = "every microbenchmark runs",
                    .source = "bench/workloads.yaml micro:",
                    .status = *notes ? AITK_CHECK_WARN : AITK_CHECK_PASS,
                    .observed = aitk_str_cstr(&obs),
                    .message = *notes ? notes : "informational",
                    .remedy = *notes ? "The message names each benchmark that did not run and "
                                       "why; free what it names (memory, the GPU) and run "
                                       "again, or compare only the figures that were measured."
                                     : ""};
    aitk_status st = aitk_str_status(&obs) || aitk_str_status(&id)
                         ? AITK_E_NOMEM
                         : aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&obs);
    aitk_str_free(&id);
    return st;
}

aitk_status aitk_micro_checks(aitk_run_ctx *ctx)
{
    aitk_bench_config *cfg = NULL;
    aitk_str err = AITK_STR_INIT, notes = AITK_STR_INIT;
    cJSON *arr;
    aitk_status st = plan_open(ctx, "micro", &cfg, &arr, &err);
    if (!st)
        cfg->cpu_only = ctx->cpu_only;
    aitk_progress pg;
    aitk_progress_init_default(&pg);
    if (!st)
        st = aitk_micro_run_suite(cfg, NULL, &pg, arr, &notes);
    aitk_progress_free(&pg);
    aitk_str cpu_notes = AITK_STR_INIT, gpu_notes = AITK_STR_INIT;
    if (!st && aitk_str_status(&notes))
        st = AITK_E_NOMEM;
    /* Notes are "name: why; " each; a GPU benchmark's name says cuda or device. */
    for (const char *p = notes.ptr; !st && p && *p;) {
        size_t n = strcspn(p, ";");
        bool gpu = strncmp(p, "gemm.cuda", 9) == 0 || strncmp(p, "attention.cuda", 14) == 0 ||
                   strncmp(p, "attention_backward.cuda", 23) == 0 ||
                   strncmp(p, "memcpy.device", 13) == 0 || strncmp(p, "cuda", 4) == 0;
        aitk_str *to = gpu ? &gpu_notes : &cpu_notes;
        aitk_str_appendf(to, "%s%.*s", to->len ? "; " : "", (int)n, p);
        p += n;
        while (*p == ';' || *p == ' ')
            p++;
    }
    if (!st)
        st = aitk_str_status(&cpu_notes) || aitk_str_status(&gpu_notes)
                 ? AITK_E_NOMEM
                 : micro_check(ctx, arr, "cpu", aitk_str_cstr(&cpu_notes));
    if (!st)
        st = micro_check(ctx, arr, "cuda", aitk_str_cstr(&gpu_notes));
    aitk_str_free(&cpu_notes);
    aitk_str_free(&gpu_notes);
    aitk_bench_config_free(cfg);
    aitk_str_free(&err);
    aitk_str_free(&notes);
    return st;
}
