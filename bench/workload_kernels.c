/* The kernels a workload ran, from the backend's paths (workload_kernels.h). */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

#include "bench/workload_kernels.h"
#include "common/alloc.h"

/* More distinct (op, kernel) pairs than a step makes: the CUDA backend keeps
 * at most 64 (kernels/cuda/backend.c), the CPU three. */
#define PATHS_CAP 256

aitk_status aitk_bench_paths_take(const aitk_backend *be, aitk_bench_paths *out)
{
    memset(out, 0, sizeof *out);
    if (!be || !be->paths)
        return AITK_OK;
    out->items = aitk_calloc(PATHS_CAP, sizeof *out->items);
    if (!out->items)
        return AITK_E_NOMEM;
    out->ok = be->paths(out->items, PATHS_CAP, &out->n) == AITK_OK;
    if (!out->ok)
        out->n = 0;
    return AITK_OK;
}

void aitk_bench_paths_free(aitk_bench_paths *p)
{
    aitk_free(p->items);
    memset(p, 0, sizeof *p);
}

static long calls_before(const aitk_bench_paths *before, const aitk_backend_path *p)
{
    for (size_t i = 0; i < before->n; i++)
        if (!strcmp(before->items[i].op, p->op) && !strcmp(before->items[i].kernel, p->kernel))
            return before->items[i].calls;
    return 0;
}

aitk_status aitk_bench_paths_json(cJSON *entry, const aitk_bench_paths *before,
                                  const aitk_bench_paths *after)
{
    if (!before->ok || !after->ok)
        return AITK_OK;
    cJSON *arr = cJSON_AddArrayToObject(entry, "kernels");
    if (!arr)
        return AITK_E_NOMEM;
    for (size_t i = 0; i < after->n; i++) {
        const aitk_backend_path *p = &after->items[i];
        /* A backend that was opened again in between restarts its counts:
         * then the count after is this workload's own. */
        long prior = calls_before(before, p);
        long calls = p->calls >= prior ? p->calls - prior : p->calls;
        if (calls <= 0)
            continue;
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o))
            return cJSON_Delete(o), AITK_E_NOMEM;
        if (!cJSON_AddStringToObject(o, "op", p->op) ||
            !cJSON_AddStringToObject(o, "kernel", p->kernel) ||
            !cJSON_AddNumberToObject(o, "calls", (double)calls))
            return AITK_E_NOMEM;
    }
    return AITK_OK;
}
