/* The gpu.plugin provider (see gpu_plugin.h): loads the CUDA plugin through
 * bench/cuda_loader.h, asks it to probe, records what it saw under
 * env.cuda_plugin and judges it. The wording quotes the loader and the CUDA
 * runtime verbatim ("cudaGetDeviceCount: cudaErrorInsufficientDriver: ...")
 * and then says in plain words what that means on this machine. */
#include "validate/probes/gpu_plugin.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cuda_loader.h"
#include "common/alloc.h"
#include "common/str.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* 13000 -> "13.0" */
static void version_text(aitk_str *s, int v)
{
    aitk_str_appendf(s, "%d.%d", v / 1000, (v % 1000) / 10);
}

static cJSON *record(cJSON *env, const aitk_cuda_load *ld, const aitk_cuda_probe_result *pr,
                     aitk_status probe_st)
{
    cJSON *o = cJSON_AddObjectToObject(env, "cuda_plugin");
    if (!o || !cJSON_AddBoolToObject(o, "built", ld->built) ||
        !cJSON_AddBoolToObject(o, "loaded", ld->status == AITK_OK) ||
        !cJSON_AddStringToObject(o, "path", aitk_str_cstr(&ld->path)))
        return NULL;
    if (ld->status)
        return cJSON_AddStringToObject(o, "loader_error", aitk_str_cstr(&ld->error)) ? o : NULL;
    if (!cJSON_AddNumberToObject(o, "abi_version", ld->api->abi_version) ||
        !cJSON_AddStringToObject(o, "build", ld->api->build ? ld->api->build : "") ||
        !cJSON_AddNumberToObject(o, "runtime_version", pr->runtime_version) ||
        !cJSON_AddNumberToObject(o, "driver_version", pr->driver_version) ||
        !cJSON_AddNumberToObject(o, "device_count", pr->device_count))
        return NULL;
    if (probe_st && !cJSON_AddStringToObject(o, "error", pr->error))
        return NULL;
    cJSON *devs = cJSON_AddArrayToObject(o, "devices");
    if (!devs)
        return NULL;
    for (int i = 0; i < pr->n_devices; i++) {
        const aitk_cuda_device_info *d = &pr->devices[i];
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(devs, e)) {
            cJSON_Delete(e);
            return NULL;
        }
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
        if (!cJSON_AddNumberToObject(e, "index", d->index) ||
            !cJSON_AddStringToObject(e, "name", d->name) ||
            !cJSON_AddStringToObject(e, "compute_capability", cc) ||
            !cJSON_AddNumberToObject(e, "total_memory_bytes", (double)d->total_memory_bytes) ||
            !cJSON_AddNumberToObject(e, "sm_count", d->sm_count) ||
            !cJSON_AddNumberToObject(e, "clock_khz", d->clock_khz) ||
            !cJSON_AddNumberToObject(e, "memory_clock_khz", d->memory_clock_khz) ||
            !cJSON_AddNumberToObject(e, "memory_bus_bits", d->memory_bus_bits) ||
            !cJSON_AddStringToObject(e, "pci_bus_id", d->pci_bus_id))
            return NULL;
    }
    return o;
}

/* What a failed probe means, in plain words, and what to do about it. */
static void explain_probe(const aitk_cuda_probe_result *pr, aitk_str *msg, aitk_str *fix)
{
    aitk_str rt = AITK_STR_INIT;
    version_text(&rt, pr->runtime_version);
    aitk_str_appendf(msg, "The CUDA plugin loads, but its CUDA runtime (%s) finds no GPU: %s.",
                     rt.ptr, pr->error);
    if (pr->driver_version == 0) {
        aitk_str_append(msg, " No NVIDIA driver is loaded on this machine (cudaDriverGetVersion "
                             "reports 0: libcuda.so.1 is missing or cannot be opened), so "
                             "nothing can run on a GPU here.");
        aitk_str_appendf(fix, "Install the NVIDIA driver (one that supports CUDA %s or newer) "
                              "and check with nvidia-smi; in a container, start it with the "
                              "GPU passed through (docker run --gpus all, with the NVIDIA "
                              "Container Toolkit).", rt.ptr);
    } else if (pr->driver_version < pr->runtime_version) {
        aitk_str dv = AITK_STR_INIT;
        version_text(&dv, pr->driver_version);
        aitk_str_appendf(msg, " The driver supports CUDA up to %s; this runtime needs %s.",
                         dv.ptr, rt.ptr);
        aitk_str_appendf(fix, "Update the NVIDIA driver to one that supports CUDA %s (see "
                              "the gpu.* checks for the installed version).", rt.ptr);
        aitk_str_free(&dv);
    } else {
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        if (cvd)
            aitk_str_appendf(msg, " CUDA_VISIBLE_DEVICES is set to \"%s\".", cvd);
        aitk_str_append(fix, "Check that the GPU is visible (nvidia-smi, the gpu.* checks), "
                             "that CUDA_VISIBLE_DEVICES does not hide it, and that "
                             "/dev/nvidia* are accessible to this user.");
    }
    aitk_str_free(&rt);
}

aitk_status aitk_gpu_plugin_checks(aitk_run_ctx *ctx)
{
    const aitk_cuda_load *ld = aitk_cuda_plugin_load();
    aitk_cuda_probe_result *pr = aitk_calloc(1, sizeof *pr);
    if (!pr)
        return AITK_E_NOMEM;
    aitk_status probe_st = ld->status ? ld->status : ld->api->probe(pr);
    aitk_str obs = AITK_STR_INIT, msg = AITK_STR_INIT, fix = AITK_STR_INIT;
    aitk_check c = {.id = "gpu.plugin", .category = "gpu",
                    .title = "CUDA plugin (cuBLASLt GEMMs, device benchmarks)",
                    .expected = "the plugin loads and its CUDA runtime lists at least one GPU",
                    .source = "kernels/cuda (plugin ABI " STRINGIFY(AITK_CUDA_PLUGIN_ABI) ")"};
    if (!ld->built) {
        c.status = AITK_CHECK_SKIP;
        aitk_str_append(&msg, "this build has no CUDA plugin (no CUDA toolkit at build time)");
        aitk_str_append(&fix, "rebuild aitk-validate on a machine with the CUDA toolkit (nvcc) "
                              "to measure on the GPU");
    } else if (ld->status) {
        c.status = AITK_CHECK_FAIL;
        aitk_str_append(&obs, aitk_str_cstr(&ld->error));
        aitk_str_appendf(&msg, "The CUDA plugin could not be loaded, so nothing can be measured "
                               "on a GPU: %s", aitk_str_cstr(&ld->error));
        aitk_str_append(&fix, "The message names the library the loader could not find or use; "
                              "`aitk-validate deps` shows where each CUDA library was looked for. "
                              "AITK_CUDA_PLUGIN=/path/to/the/plugin selects another copy.");
    } else {
        aitk_str_append(&obs, "CUDA runtime ");
        version_text(&obs, pr->runtime_version);
        aitk_str_append(&obs, ", driver ");
        if (pr->driver_version)
            version_text(&obs, pr->driver_version);
        else
            aitk_str_append(&obs, "none");
        aitk_str_appendf(&obs, "; %d device%s", pr->device_count, pr->device_count == 1 ? "" : "s");
        for (int i = 0; i < pr->n_devices; i++) {
            const aitk_cuda_device_info *d = &pr->devices[i];
            aitk_str_appendf(&obs, "%s%s (cc %d.%d, %.1f GiB, %d SMs, %d MHz)", i ? "; " : ": ",
                             d->name, d->cc_major, d->cc_minor,
                             (double)d->total_memory_bytes / 1073741824.0, d->sm_count,
                             d->clock_khz / 1000);
        }
        if (probe_st) {
            c.status = AITK_CHECK_FAIL;
            explain_probe(pr, &msg, &fix);
        } else {
            c.status = AITK_CHECK_PASS;
            aitk_str_appendf(&msg, "the CUDA plugin (%s) loads and its runtime answers",
                             aitk_str_cstr(&ld->path));
        }
    }
    aitk_status st = record(ctx->env, ld, pr, probe_st) ? AITK_OK : AITK_E_NOMEM;
    c.observed = aitk_str_cstr(&obs);
    c.message = aitk_str_cstr(&msg);
    c.remedy = c.status == AITK_CHECK_PASS ? NULL : aitk_str_cstr(&fix);
    if (!st && (aitk_str_status(&obs) || aitk_str_status(&msg) || aitk_str_status(&fix)))
        st = AITK_E_NOMEM;
    if (!st)
        st = aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    aitk_str_free(&fix);
    aitk_free(pr);
    return st;
}
