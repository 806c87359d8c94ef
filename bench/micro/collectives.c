/* The multi-GPU collectives sweep (see collectives.h). Timing is the
 * backend's: device events around `iters` iterations after `warmup`
 * untimed ones, the slowest GPU's time, as nccl-tests measures; Google
 * Benchmark is not used here because one iteration spans every GPU and is
 * timed on the devices, not on the host. */
#include "bench/micro/collectives.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "bench/collective_bw.h"
#include "bench/runner.h"
#include "common/stop.h"

static const aitk_collective kinds[] = {AITK_COLLECTIVE_ALL_REDUCE, AITK_COLLECTIVE_ALL_GATHER,
                                        AITK_COLLECTIVE_REDUCE_SCATTER};

/* One micro[] entry; NULL only when the host is out of memory. */
static cJSON *entry_of(const char *name, aitk_collective kind, const aitk_coll_shape *s,
                       int n, int iters, double seconds, double alg, double bus,
                       double link_gbs)
{
    aitk_str shape = AITK_STR_INIT;
    aitk_str_appendf(&shape, "%s of %zu bytes (nccl-tests' size; count %zu bf16) over %d GPUs",
                     aitk_collective_name(kind), s->size_bytes, s->count, n);
    cJSON *e = cJSON_CreateObject();
    bool ok = e && !aitk_str_status(&shape) && cJSON_AddStringToObject(e, "name", name) &&
              cJSON_AddStringToObject(e, "category", "collective") &&
              cJSON_AddStringToObject(e, "backend", "cuda") &&
              cJSON_AddStringToObject(e, "kernel", "NCCL") &&
              cJSON_AddStringToObject(e, "shape", aitk_str_cstr(&shape)) &&
              cJSON_AddNumberToObject(e, "value", bus) &&
              cJSON_AddStringToObject(e, "unit", "GB/s") &&
              cJSON_AddBoolToObject(e, "higher_is_better", true) &&
              cJSON_AddNumberToObject(e, "time_ms", seconds * 1e3) &&
              cJSON_AddNumberToObject(e, "iterations", iters) &&
              cJSON_AddNumberToObject(e, "size_bytes", (double)s->size_bytes) &&
              cJSON_AddNumberToObject(e, "gpus", n) &&
              cJSON_AddNumberToObject(e, "algbw_gbs", alg) &&
              cJSON_AddNumberToObject(e, "busbw_gbs", bus);
    if (ok && isfinite(link_gbs) && link_gbs > 0)
        ok = cJSON_AddNumberToObject(e, "link_gbs", link_gbs) &&
             cJSON_AddNumberToObject(e, "busbw_of_link", bus / link_gbs);
    aitk_str_free(&shape);
    if (!ok) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

/* One collective at one size; a refusal becomes a note. */
static aitk_status run_one(const aitk_bench_config *cfg, const aitk_backend *be, int n,
                           aitk_collective kind, long mib, double link_gbs, cJSON *micro,
                           aitk_coll_best *best, aitk_str *notes)
{
    aitk_str name = AITK_STR_INIT;
    aitk_str_appendf(&name, "nccl.%s.bf16.%ldMiB", aitk_collective_name(kind), mib);
    aitk_coll_shape s;
    double secs = 0, alg = 0, bus = 0;
    aitk_status st = aitk_coll_shape_of(kind, (size_t)mib << 20, 2, n, &s);
    if (!st)
        st = be->collectives->time(kind, s.count, AITK_DTYPE_BF16, (int)cfg->coll_warmup,
                                   (int)cfg->coll_iters, &secs);
    if (!st)
        st = aitk_coll_bandwidth(kind, &s, n, secs, &alg, &bus);
    if (st) {
        char why[AITK_BACKEND_ERROR_LEN] = "";
        if (be->last_error)
            be->last_error(why, sizeof why);
        aitk_str_appendf(notes, "%s: %s; ", aitk_str_cstr(&name),
                         why[0] ? why : aitk_strerror(st));
        aitk_str_free(&name);
        return AITK_OK;
    }
    cJSON *e = entry_of(aitk_str_cstr(&name), kind, &s, n, (int)cfg->coll_iters, secs, alg,
                        bus, link_gbs);
    aitk_str_free(&name);
    if (!e || !cJSON_AddItemToArray(micro, e)) {
        cJSON_Delete(e);
        return AITK_E_NOMEM;
    }
    best->runs++;
    if (bus > best->busbw_gbs[kind]) {
        best->busbw_gbs[kind] = bus;
        best->at_size_bytes[kind] = (double)s.size_bytes;
    }
    return AITK_OK;
}

aitk_status aitk_coll_sweep(const aitk_bench_config *cfg, const aitk_backend *be,
                            int n_devices, double link_gbs, cJSON *micro, aitk_coll_best *best,
                            aitk_str *notes)
{
    if (!cfg || !be || !be->collectives || !micro || !best || !notes || n_devices < 2 ||
        cfg->coll_factor < 2 || cfg->coll_min_mib < 1)
        return AITK_E_INVAL;
    *best = (aitk_coll_best){0};
    aitk_status st = AITK_OK;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds && !st; k++)
        for (long mib = cfg->coll_min_mib; mib <= cfg->coll_max_mib && !st;
             mib *= cfg->coll_factor) {
            if (aitk_stop_requested()) {
                aitk_str_appendf(notes, "%s: the remaining collectives were not run; ",
                                 aitk_stop_words());
                k = sizeof kinds / sizeof *kinds; /* leave both loops, then close */
                break;
            }
            st = run_one(cfg, be, n_devices, kinds[k], mib, link_gbs, micro, best, notes);
        }
    /* The communicator holds memory on every GPU; the workloads that follow
     * want it back. */
    be->collectives->close();
    return st;
}
