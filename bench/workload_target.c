/* The documented time target of a reference workload (the model spec's
 * targets: N minutes per 1000 steps on a recommended GPU) scaled to the GPU
 * in front of us through the cost model (workload.h says how). Split from
 * workload.c: reading "2 x A100" and the scaling are their own job. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workload.h"
#include "models/cost.h"
#include "models/gpudb.h"
#include "models/spec.h"

static aitk_status target_gpu(const aitk_gpudb *db, const char *text, long *count,
                              const aitk_gpu_spec **out, aitk_str *source)
{
    /* "2 x A100": a count, then the GPU. */
    char *end = NULL;
    long n = strtol(text, &end, 10);
    const char *name = text;
    *count = 1;
    if (end != text && n > 0) {
        while (*end == ' ')
            end++;
        if (*end == 'x' || *end == 'X') {
            *count = n;
            name = end + 1;
            while (*name == ' ')
                name++;
        }
    }
    aitk_status st = aitk_gpudb_find(db, name, out, NULL);
    if (st == AITK_E_INVAL) {
        /* Ambiguous: the first match in database order, said out loud. */
        for (size_t i = 0; i < db->count && st; i++) {
            const aitk_gpu_spec *g = NULL;
            if (strstr(db->gpus[i].name, name) &&
                !aitk_gpudb_find(db, db->gpus[i].name, &g, NULL)) {
                *out = g;
                st = AITK_OK;
                aitk_str_appendf(source, "; '%s' read as %s", name, g->name);
            }
        }
    }
    return st;
}

aitk_status aitk_bench_scaled_target(const aitk_model_spec *spec, const aitk_gpudb *db,
                                     const aitk_gpu_spec *gpu, const aitk_cost_params *params,
                                     double *target_s, const aitk_gpu_spec **tgpu,
                                     aitk_str *source, aitk_str *err)
{
    *target_s = NAN;
    *tgpu = NULL;
    const aitk_model_targets *t = &spec->targets;
    if (!t->recommended_gpu || !(t->minutes_per_1000 > 0)) {
        aitk_str_append(err, "the model documents no time target");
        return AITK_E_NOTFOUND;
    }
    aitk_str_append(source, t->source ? t->source : "model spec targets");
    long count = 1;
    const aitk_gpu_spec *ref = NULL;
    aitk_status st = target_gpu(db, t->recommended_gpu, &count, &ref, source);
    if (st) {
        aitk_str_appendf(err, "the target GPU '%s' is not in models/gpus.yaml",
                         t->recommended_gpu);
        return st;
    }
    aitk_workload w;
    aitk_workload_defaults(&w, spec);
    w.n_resolutions = spec->defaults.n_resolutions ? spec->defaults.n_resolutions : 1;
    if (spec->defaults.n_resolutions)
        memcpy(w.resolutions, spec->defaults.resolutions, w.n_resolutions * sizeof(long));
    aitk_prediction here, there;
    if ((st = aitk_cost_predict(&w, params, gpu, &here, err)) ||
        (st = aitk_cost_predict(&w, params, ref, &there, err)))
        return st;
    if (!(there.step_s > 0))
        return AITK_E_INTERNAL;
    *target_s = t->minutes_per_1000 * 60.0 * (double)count * here.step_s / there.step_s;
    *tgpu = ref;
    aitk_str_appendf(source, "; scaled from %s%s to %s by the cost model's step times",
                     count > 1 ? "one of the " : "", ref->name, gpu->name);
    if (count > 1)
        aitk_str_appendf(source, " (assumption: %ld GPUs in data parallel, so one GPU takes "
                         "%ld times as long)", count, count);
    return aitk_str_status(source);
}
