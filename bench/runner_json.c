/* A runner result as the report's workloads[] entry (reports/schema
 * "workload"). Unknown figures are left out rather than written as 0, so a
 * renderer never draws a bar for a number nobody measured. */
#include <cjson/cJSON.h>
#include <math.h>

#include "bench/runner.h"

static bool num(cJSON *o, const char *key, double v)
{
    return !isfinite(v) || cJSON_AddNumberToObject(o, key, v) != NULL;
}

static bool text(cJSON *o, const char *key, const char *v)
{
    return !v || cJSON_AddStringToObject(o, key, v) != NULL;
}

static bool stats_obj(cJSON *w, const aitk_bench_result *r)
{
    if (!r->have_stats)
        return true;
    cJSON *o = cJSON_AddObjectToObject(w, "step_time_s");
    const aitk_stats *s = &r->stats;
    return o && num(o, "mean", s->mean) && num(o, "median", s->median) && num(o, "p5", s->p5) &&
           num(o, "p95", s->p95) && num(o, "ci95_low", fmax(0, s->ci95_low)) &&
           num(o, "ci95_high", s->ci95_high) &&
           /* bench/stats.h: the 95% interval is the mean's (Student's t),
            * said so that nobody reads it as the median's or the steps'. */
           text(o, "interval_of", "mean");
}

static bool buckets_arr(cJSON *w, const aitk_bench_plan *p, const aitk_bench_result *r)
{
    if (!r->have_stats)
        return true;
    cJSON *a = cJSON_AddArrayToObject(w, "buckets");
    if (!a)
        return false;
    for (size_t b = 0; b < p->n_buckets; b++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(a, o))
            return cJSON_Delete(o), false;
        if (!num(o, "resolution", (double)p->resolutions[b]) ||
            !num(o, "steps", (double)r->bucket[b].n))
            return false;
        if (r->bucket[b].n && (!num(o, "mean_s", r->bucket[b].mean) ||
                               !num(o, "median_s", r->bucket[b].median)))
            return false;
        if (p->flops_per_step[b] > 0 &&
            !num(o, "cost_model_gflop", p->flops_per_step[b] / 1e9))
            return false;
    }
    return true;
}

static bool time_obj(cJSON *w, const aitk_bench_result *r, const aitk_bench_targets *t)
{
    cJSON *o = cJSON_AddObjectToObject(w, "time_per_1000_steps");
    if (!o)
        return false;
    if (!num(o, "measured_s", r->time_1000_s))
        return false;
    if (isfinite(r->time_1000_s) &&
        (!cJSON_AddBoolToObject(o, "extrapolated", !r->measured) ||
         !num(o, "from_steps", (double)r->from_steps) || !num(o, "error_pct", r->error_pct)))
        return false;
    if (t->cpu_figures)
        return cJSON_AddStringToObject(o, "note", "CPU figure of the small configuration, "
                                                  "not a GPU prediction") != NULL;
    const char *status = aitk_bench_judge_time(r->time_1000_s, t->target_s, t->documented_s);
    return num(o, "target_s", t->target_s) && num(o, "documented_s", t->documented_s) &&
           text(o, "target_gpu", t->target_gpu) &&
           text(o, "source", t->time_source) && text(o, "status", status);
}

static bool memory_obj(cJSON *w, const aitk_bench_result *r, const aitk_bench_targets *t)
{
    cJSON *o = cJSON_AddObjectToObject(w, "memory");
    if (!o || !num(o, "peak_bytes", r->peak_bytes))
        return false;
    if (t->cpu_figures)
        return cJSON_AddStringToObject(o, "note", "allocated by the CPU backend for the small "
                                                  "configuration, not GPU memory") != NULL;
    const char *status = aitk_bench_judge_memory(r->peak_bytes, t->vram_bytes,
                                                 t->documented_min_bytes);
    return num(o, "vram_bytes", t->vram_bytes) &&
           num(o, "documented_min_bytes", t->documented_min_bytes) &&
           text(o, "source", t->memory_source) && text(o, "status", status);
}

aitk_status aitk_bench_result_json(const aitk_bench_plan *p, const aitk_bench_result *r,
                                   const char *title, const char *backend, const char *device,
                                   const aitk_bench_targets *t, cJSON **out)
{
    *out = NULL;
    cJSON *w = cJSON_CreateObject();
    if (!w)
        return AITK_E_NOMEM;
    cJSON *steps = NULL, *tp = NULL;
    bool ok = text(w, "name", p->name) && text(w, "title", title) &&
              text(w, "status", aitk_bench_outcome_name(r->outcome)) &&
              text(w, "backend", backend) && text(w, "device", device) &&
              text(w, "message", aitk_str_cstr(&r->message)) &&
              (steps = cJSON_AddObjectToObject(w, "steps")) &&
              num(steps, "warmup", (double)r->warmup_steps) &&
              num(steps, "timed", (double)r->timed) &&
              /* What the run was asked for: timed steps, or with --full the
               * whole run; the 1000-step figure is time_per_1000_steps. */
              num(steps, "requested", (double)(p->full ? p->requested_steps : p->timed_steps)) &&
              cJSON_AddBoolToObject(steps, "settled", r->settled) && stats_obj(w, r) &&
              buckets_arr(w, p, r) && (tp = cJSON_AddObjectToObject(w, "throughput")) &&
              num(tp, "steps_per_s", r->steps_per_s) &&
              num(tp, "images_per_s", r->images_per_s) &&
              num(tp, "tflops", r->flops_per_s / 1e12) &&
              num(tp, "gflops", r->flops_per_s / 1e9) && num(tp, "mfu", r->mfu) &&
              (!isfinite(r->flops_per_s) ||
               text(tp, "flops_source", r->flops_counted ? "counted by the training-step graph"
                                                         : "cost model (models/cost.h)")) &&
              time_obj(w, r, t) && memory_obj(w, r, t);
    if (!ok) {
        cJSON_Delete(w);
        return AITK_E_NOMEM;
    }
    *out = w;
    return AITK_OK;
}
