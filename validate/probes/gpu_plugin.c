/* The gpu.plugin provider (see gpu_plugin.h): loads the CUDA backend plugin
 * through bench/backend_loader.h, asks it to probe, records what it saw under
 * env.cuda_plugin and judges it. The wording quotes the loader and the CUDA
 * runtime verbatim ("cudaGetDeviceCount: cudaErrorInsufficientDriver: ...")
 * and then says in plain words what that means on this machine. */
#include "validate/probes/gpu_plugin.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/backend_loader.h"
#include "common/alloc.h"
#include "common/str.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* 13000 -> "13.0" */
static void version_text(aitk_str *s, int v)
{
    aitk_str_appendf(s, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* cuDNN 9 and cuBLASLt count major*10000 + minor*100 + patch (91400 ->
 * "9.14.0"); cuDNN 8 counted major*1000 + minor*100 + patch (8907 ->
 * "8.9.7"). */
static void library_version_text(aitk_str *s, int v)
{
    if (v >= 10000)
        aitk_str_appendf(s, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
    else
        aitk_str_appendf(s, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
}

static cJSON *record(cJSON *env, const aitk_backend_load_result *ld,
                     const aitk_backend_probe *pr, aitk_status probe_st)
{
    cJSON *o = cJSON_AddObjectToObject(env, "cuda_plugin");
    if (!o || !cJSON_AddBoolToObject(o, "built", ld->built) ||
        !cJSON_AddBoolToObject(o, "loaded", ld->status == AITK_OK) ||
        !cJSON_AddStringToObject(o, "path", aitk_str_cstr(&ld->path)))
        return NULL;
    if (ld->status)
        return cJSON_AddStringToObject(o, "loader_error", aitk_str_cstr(&ld->error)) ? o : NULL;
    if (!cJSON_AddNumberToObject(o, "abi_version", ld->backend->abi_version) ||
        !cJSON_AddStringToObject(o, "backend", ld->backend->name) ||
        !cJSON_AddStringToObject(o, "build", ld->backend->build) ||
        !cJSON_AddNumberToObject(o, "runtime_version", pr->runtime_version) ||
        !cJSON_AddNumberToObject(o, "driver_version", pr->driver_version) ||
        !cJSON_AddNumberToObject(o, "cublaslt_version", pr->cublaslt_version) ||
        !cJSON_AddNumberToObject(o, "cudnn_version", pr->cudnn_version) ||
        !cJSON_AddNumberToObject(o, "device_count", pr->device_count))
        return NULL;
    if (probe_st && !cJSON_AddStringToObject(o, "error", pr->error))
        return NULL;
    cJSON *devs = cJSON_AddArrayToObject(o, "devices");
    if (!devs)
        return NULL;
    for (int i = 0; i < pr->n_devices; i++) {
        const aitk_backend_device *d = &pr->devices[i];
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
static void explain_probe(const aitk_backend_probe *pr, aitk_str *msg, aitk_str *fix)
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

/* Which attention the plugin's runs use. A missing cuDNN stays a PASS, on
 * purpose: this check asks whether the validator can run the training step
 * on the GPU, and it can (the plain kernel is correct, only slower).
 * ai-toolkit itself never uses this cuDNN: PyTorch brings its own in the
 * nvidia-cudnn wheel, which the python and CUDA-wheel checks look at. A WARN
 * here would send people installing a library their training does not
 * need; the words instead say that the measured attention is then slower
 * than ai-toolkit's, so measured minutes are on the high side. */
static void say_attention_path(const aitk_backend_probe *pr, aitk_str *msg)
{
    if (pr->cudnn_version) {
        aitk_str_append(msg, "it sees cuDNN ");
        library_version_text(msg, pr->cudnn_version);
        aitk_str_append(msg, ", so attention can use cuDNN's fused kernel");
    } else {
        aitk_str_append(msg, "cuDNN not found: attention will use the plain kernel, slower "
                             "than the fused one PyTorch uses, so measured step times are on "
                             "the high side (ai-toolkit brings its own cuDNN with PyTorch)");
    }
}

aitk_status aitk_gpu_plugin_checks(aitk_run_ctx *ctx)
{
    const aitk_backend_load_result *ld = aitk_backend_load();
    aitk_backend_probe *pr = aitk_calloc(1, sizeof *pr);
    if (!pr)
        return AITK_E_NOMEM;
    aitk_status probe_st = ld->status ? ld->status : ld->backend->probe(pr);
    aitk_str obs = AITK_STR_INIT, msg = AITK_STR_INIT, fix = AITK_STR_INIT;
    aitk_check c = {.id = "gpu.plugin", .category = "gpu",
                    .title = "CUDA backend plugin (the training step on the GPU)",
                    .expected = "the plugin loads and its CUDA runtime lists at least one GPU",
                    .source = "kernels/cuda (plugin ABI " STRINGIFY(AITK_BACKEND_ABI) ")"};
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
        aitk_str_append(&obs, ", cuBLASLt ");
        if (pr->cublaslt_version)
            library_version_text(&obs, pr->cublaslt_version);
        else
            aitk_str_append(&obs, "not loaded");
        aitk_str_append(&obs, ", cuDNN ");
        if (pr->cudnn_version)
            library_version_text(&obs, pr->cudnn_version);
        else
            aitk_str_append(&obs, "none");
        aitk_str_appendf(&obs, "; %d device%s", pr->device_count, pr->device_count == 1 ? "" : "s");
        for (int i = 0; i < pr->n_devices; i++) {
            const aitk_backend_device *d = &pr->devices[i];
            aitk_str_appendf(&obs, "%s%s (cc %d.%d, %.1f GiB, %d SMs, %d MHz)", i ? "; " : ": ",
                             d->name, d->cc_major, d->cc_minor,
                             (double)d->total_memory_bytes / 1073741824.0, d->sm_count,
                             d->clock_khz / 1000);
        }
        if (probe_st) {
            c.status = AITK_CHECK_FAIL;
            explain_probe(pr, &msg, &fix);
            /* No driver at all: gpu.cuda_driver's failure, seen again. */
            if (pr->driver_version == 0 && pr->runtime_version != 0)
                c.follows = "gpu.cuda_driver";
        } else {
            c.status = AITK_CHECK_PASS;
            aitk_str_appendf(&msg, "the CUDA plugin (%s) loads and its runtime answers; ",
                             aitk_str_cstr(&ld->path));
            say_attention_path(pr, &msg);
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
