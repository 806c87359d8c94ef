/* GPU provider: runs the NVML and CUDA driver probes, then judges what they
 * saw. When the driver is absent the loader's own sentence is the
 * observation: that is what torch would hit too. */
#include "validate/probes/gpu.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "reports/fields.h"
#include "validate/compat.h"
#include "validate/probes/cudadrv.h"
#include "validate/probes/gpu_util.h"
#include "validate/probes/nvml.h"

#define DRIVER_SOURCE                                                                      \
    "NVIDIA Driver Installation Guide "                                                    \
    "(https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/); "              \
    "NVIDIA DCGM diagnostics, level 1 "                                                    \
    "(https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html)"
/* Remedies in the words of the system the user is on: Windows has no
 * lsmod, /dev/nvidia-uvm or LD_LIBRARY_PATH, and its driver comes from
 * NVIDIA's installer. */
#ifdef _WIN32
#define REMEDY_INSTALL                                                                     \
    "Install the NVIDIA driver for this GPU from https://www.nvidia.com/Download/ (it "     \
    "ships nvml.dll and nvcuda.dll; the CUDA toolkit does not)."
#define REMEDY_NVML_SYMBOLS                                                                \
    "Reinstall the NVIDIA driver (its installer's clean installation); delete stray "      \
    "copies of nvml.dll from application folders and from folders on PATH."
#define REMEDY_NVML_INIT                                                                   \
    "Restart Windows after a driver update; if it persists, reinstall the NVIDIA driver "  \
    "with the installer's clean installation and check Device Manager for an error on the " \
    "GPU."
#define REMEDY_CUDA_SYMBOLS                                                                \
    "Reinstall the NVIDIA driver; delete stray copies of nvcuda.dll from application "     \
    "folders and from folders on PATH."
#define REMEDY_CUDA_INIT                                                                   \
    "Check that CUDA_VISIBLE_DEVICES does not hide every GPU, restart Windows after a "    \
    "driver update, and check Device Manager for an error on the GPU; reinstall the "      \
    "driver if it persists."
#define REMEDY_NO_GPU                                                                      \
    "Check that the card is seated and powered (Device Manager, Display adapters) and "    \
    "that CUDA_VISIBLE_DEVICES does not hide it."
#else
#define REMEDY_INSTALL                                                                     \
    "Install the NVIDIA driver for this GPU (it ships NVML and libcuda; the CUDA toolkit "  \
    "does not). In a container, start it with the NVIDIA container runtime "               \
    "(docker run --gpus all). Under WSL 2, install or update it on Windows, never inside " \
    "WSL (gpu.wsl says what is wrong there)."
#define REMEDY_NVML_SYMBOLS                                                                \
    "Reinstall the NVIDIA driver; remove stray copies of libnvidia-ml from "               \
    "LD_LIBRARY_PATH and application folders."
#define REMEDY_NVML_INIT                                                                   \
    "Reboot after a driver update; check `lsmod | grep nvidia` and `dmesg`; "              \
    "reinstall the driver if the versions differ."
#define REMEDY_CUDA_SYMBOLS                                                                \
    "Reinstall the NVIDIA driver; remove stray libcuda.so copies (e.g. the toolkit's "     \
    "stubs/ folder) from LD_LIBRARY_PATH."
#define REMEDY_CUDA_INIT                                                                   \
    "Check that /dev/nvidia-uvm exists (modprobe nvidia-uvm), that "                       \
    "CUDA_VISIBLE_DEVICES does not hide every GPU, that the driver's user-space "          \
    "and kernel versions match (reboot after an update), and in a container "              \
    "that the NVIDIA runtime is used."
#define REMEDY_NO_GPU                                                                      \
    "Check that the card is seated and powered (lspci | grep -i nvidia) "                  \
    "and that CUDA_VISIBLE_DEVICES does not hide it."
#endif

static aitk_status add(aitk_run_ctx *ctx, const aitk_check *c)
{
    return aitk_checklist_add(&ctx->checks, c);
}

/* What to say when a driver library's record (dlsyms.h: loaded,
 * missing_symbols, init_error, in the order they are found) shows that it
 * cannot be used. */
typedef struct lib_refusal_texts {
    const char *not_loaded, *lacks, *lacks_remedy, *init_failed, *init_remedy;
    const char *init_prefix; /* before the library's own init error */
} lib_refusal_texts;

/* Fills c as a failure when the library cannot be used (observed from the
 * record, in `obs` when composed); false when it can. */
static bool library_refused(aitk_check *c, const cJSON *lib, const lib_refusal_texts *t,
                            aitk_str *obs)
{
    if (!aitk_json_true(lib, "loaded")) {
        c->observed = aitk_field_str(lib, "loader_error");
        c->message = t->not_loaded;
        c->remedy = REMEDY_INSTALL;
    } else if (*aitk_field_str(lib, "missing_symbols")) {
        aitk_str_appendf(obs, "%s lacks %s", aitk_field_str(lib, "path"),
                         aitk_field_str(lib, "missing_symbols"));
        c->observed = aitk_str_cstr(obs);
        c->message = t->lacks;
        c->remedy = t->lacks_remedy;
    } else if (*aitk_field_str(lib, "init_error")) {
        aitk_str_appendf(obs, "%s%s", t->init_prefix, aitk_field_str(lib, "init_error"));
        c->observed = aitk_str_cstr(obs);
        c->message = t->init_failed;
        c->remedy = t->init_remedy;
    } else {
        return false;
    }
    c->status = AITK_CHECK_FAIL;
    return true;
}

static aitk_status check_nvml(aitk_run_ctx *ctx, const cJSON *nvml)
{
    aitk_check c = {.id = "gpu.nvml", .category = "gpu",
                    .title = "NVIDIA management library (NVML)", .expected = "loadable, initialises",
                    .source = DRIVER_SOURCE};
    static const lib_refusal_texts texts = {
        .not_loaded = "No NVIDIA driver is present on this machine (or it is hidden from this "
                      "process): no GPU can be used for training.",
        .lacks = "The NVML library is too old or is not NVIDIA's: required functions are "
                 "missing.",
        .lacks_remedy = REMEDY_NVML_SYMBOLS,
        .init_failed = "NVML loads but cannot talk to the driver (kernel module not loaded, or a "
                       "user-space/kernel version mismatch after an update).",
        .init_remedy = REMEDY_NVML_INIT,
        .init_prefix = "",
    };
    aitk_str obs = AITK_STR_INIT;
    if (!library_refused(&c, nvml, &texts, &obs)) {
        const char *version = aitk_field_str(nvml, "driver_version");
        if (*version)
            aitk_str_appendf(&obs, "driver %s (%s)", version, aitk_field_str(nvml, "path"));
        else
            aitk_str_appendf(&obs, "driver version unknown: %s (%s)",
                             aitk_field_str(nvml, "driver_version_error"),
                             aitk_field_str(nvml, "path"));
        c.status = AITK_CHECK_PASS;
        c.observed = aitk_str_cstr(&obs);
        c.message = "the NVIDIA driver answers";
    }
    aitk_status st = add(ctx, &c);
    aitk_str_free(&obs);
    return st;
}

static aitk_status check_cuda_driver(aitk_run_ctx *ctx, const cJSON *nvml, const cJSON *cu)
{
    aitk_check c = {.id = "gpu.cuda_driver", .category = "gpu", .title = "CUDA driver API (libcuda)",
                    .expected = "loadable, cuInit succeeds", .source = DRIVER_SOURCE};
    int nvml_gpus = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(nvml, "devices"));
    const lib_refusal_texts texts = {
        .not_loaded = aitk_json_true(nvml, "loaded")
                          ? "NVML is present but the CUDA driver library is not: torch cannot "
                            "use the GPU."
                          : "No NVIDIA driver is present: the CUDA driver library torch needs "
                            "is missing.",
        .lacks = "The CUDA driver library is too old or is not NVIDIA's: required functions are "
                 "missing.",
        .lacks_remedy = REMEDY_CUDA_SYMBOLS,
        .init_failed = nvml_gpus > 0 ? "NVML sees the GPU but the CUDA driver API fails: "
                                       "torch.cuda.is_available() will be False."
                                     : "The CUDA driver API fails to initialise: no GPU is "
                                       "usable.",
        .init_remedy = REMEDY_CUDA_INIT,
        .init_prefix = "cuInit: ",
    };
    aitk_str obs = AITK_STR_INIT;
    if (!library_refused(&c, cu, &texts, &obs)) {
        aitk_str_appendf(&obs, "CUDA %s driver API, %d device(s) (%s)",
                         aitk_field_str(cu, "cuda_version"),
                         cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cu, "devices")),
                         aitk_field_str(cu, "path"));
        c.status = AITK_CHECK_PASS;
        c.observed = aitk_str_cstr(&obs);
        c.message = "the CUDA driver API initialises";
    }
    /* Both missing, or both unable to reach the kernel module: one driver
     * problem, told first by NVML. */
    if ((!aitk_json_true(nvml, "loaded") && !aitk_json_true(cu, "loaded")) ||
        (*aitk_field_str(nvml, "init_error") && *aitk_field_str(cu, "init_error")))
        c.follows = "gpu.nvml";
    aitk_status st = add(ctx, &c);
    aitk_str_free(&obs);
    return st;
}

/* One check per GPU: what it is, and what is wrong with it for training. */
static aitk_status check_device(aitk_run_ctx *ctx, const cJSON *dev)
{
    int index = (int)aitk_json_number(dev, "index", -1);
    aitk_str id = AITK_STR_INIT, obs = AITK_STR_INIT, msg = AITK_STR_INIT, fix = AITK_STR_INIT;
    aitk_check_status status = AITK_CHECK_PASS;
    aitk_gpu_describe(dev, &obs);
    const cJSON *mig = cJSON_GetObjectItemCaseSensitive(dev, "mig_mode");
    const cJSON *rr = cJSON_GetObjectItemCaseSensitive(dev, "remapped_rows");
    if (strcmp(aitk_field_str(mig, "current"), "enabled") == 0 ||
        strcmp(aitk_field_str(mig, "pending"), "enabled") == 0) {
        status = AITK_CHECK_WARN;
        aitk_str_append(&msg, "MIG mode is enabled: CUDA sees only MIG instances, each with a "
                              "slice of the memory, and torch cannot use the whole GPU. ");
        aitk_str_appendf(&fix, "Disable MIG for training: sudo nvidia-smi -i %d -mig 0 "
                               "(then reset the GPU or reboot). ", index);
    }
    if (aitk_json_true(rr, "failure") || aitk_json_number(rr, "uncorrectable", 0) > 0 ||
        aitk_json_true(rr, "pending")) {
        status = AITK_CHECK_WARN;
        aitk_str_append(&msg, "The GPU memory has uncorrectable row remaps or a remap pending. ");
        aitk_str_append(&fix, "Reset the GPU to apply pending remaps; if failures persist, have "
                              "the card serviced (nvidia-smi -q -d ROW_REMAPPER). ");
    }
    if (aitk_json_true(dev, "display_active")) {
        if (status == AITK_CHECK_PASS)
            status = AITK_CHECK_WARN;
        aitk_str_append(&msg, "This GPU also drives a display, which takes VRAM and time slices. ");
        aitk_str_append(&fix, "Set `low_vram: true` under model: in the ai-toolkit config, or "
                              "train on a GPU without a display attached. ");
    }
    if (!msg.len)
        aitk_str_append(&msg, "GPU found");
    aitk_str_appendf(&id, "gpu.%d", index);
    aitk_str title = AITK_STR_INIT;
    aitk_str_appendf(&title, "GPU %d", index);
    aitk_check c = {.id = aitk_str_cstr(&id), .category = "gpu", .title = aitk_str_cstr(&title),
                    .status = status, .observed = aitk_str_cstr(&obs),
                    .expected = "whole GPU usable: MIG off, no display, healthy memory",
                    .message = aitk_str_cstr(&msg), .remedy = aitk_str_cstr(&fix),
                    .source = "NVML device queries; ostris/ai-toolkit README (low_vram) "
                              "(https://github.com/ostris/ai-toolkit)"};
    aitk_status st = add(ctx, &c);
    aitk_str_free(&id);
    aitk_str_free(&title);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    aitk_str_free(&fix);
    return st;
}

static aitk_status check_count(aitk_run_ctx *ctx, const cJSON *devices)
{
    int n = cJSON_GetArraySize(devices);
    aitk_str obs = AITK_STR_INIT;
    aitk_str_appendf(&obs, "%d", n);
    aitk_check c = {.id = "gpu.count", .category = "gpu", .title = "GPUs visible",
                    .status = n > 0 ? AITK_CHECK_PASS : AITK_CHECK_FAIL,
                    .observed = aitk_str_cstr(&obs), .expected = ">= 1",
                    .message = n > 0 ? "the driver lists GPUs" : "the driver is installed but lists no GPU",
                    .remedy = n > 0 ? "" : REMEDY_NO_GPU,
                    .source = DRIVER_SOURCE};
    aitk_status st = add(ctx, &c);
    aitk_str_free(&obs);
    return st;
}

/* VRAM per workload, judged per GPU: training uses one GPU's memory (data
 * parallel copies the model), so GPUs do not add up. The figures name a card
 * class ("24 GB"), while drivers report less: GDDR cards with ECC on reserve
 * 1/16 (an L4 or A10 reports 22.5 GiB, a 4090 24.0 GiB). A GPU within 10% of
 * the figure counts as that class. */
#define VRAM_CLASS_TOLERANCE 0.9

/* Why a device has no memory figure, in the driver's words. */
static const char *memory_refusal(const cJSON *dev)
{
    const cJSON *refused = cJSON_GetObjectItemCaseSensitive(dev, "refused");
    const char *why = aitk_field_str(refused, "nvmlDeviceGetMemoryInfo");
    if (!*why)
        why = aitk_field_str(refused, "cuDeviceTotalMem_v2");
    return *why ? why : "not reported";
}
static aitk_status check_vram(aitk_run_ctx *ctx, const cJSON *devices)
{
    const aitk_yaml_node *table = aitk_yaml_get(ctx->compat->profile, "workload_vram_gb");
    for (size_t i = 0; table && i < table->count; i++) {
        const char *model = table->pairs[i].key->text;
        if (ctx->models && !aitk_list_has(ctx->models, model))
            continue;
        const aitk_yaml_node *rule = table->pairs[i].value;
        double need = 0;
        if (aitk_yaml_double(ctx->compat->doc, aitk_yaml_get(rule, "value"), &need, NULL))
            continue;
        aitk_str id = AITK_STR_INIT, obs = AITK_STR_INIT, exp = AITK_STR_INIT,
                 msg = AITK_STR_INIT, fix = AITK_STR_INIT, title = AITK_STR_INIT;
        int fit = 0, total = 0, unknown = 0, best = -1;
        const cJSON *dev;
        cJSON_ArrayForEach(dev, devices)
        {
            double gib = aitk_gpu_vram_gib(dev);
            int idx = (int)aitk_json_number(dev, "index", -1);
            if (gib < 0) {
                unknown++;
                aitk_str_appendf(&obs, "%sGPU %d %s memory unknown (%s)", obs.len ? "; " : "",
                                 idx, aitk_field_str(dev, "name"), memory_refusal(dev));
                continue;
            }
            total++;
            aitk_str_appendf(&obs, "%sGPU %d %s %.1f GiB", obs.len ? "; " : "", idx,
                             aitk_field_str(dev, "name"), gib);
            if (gib >= need * VRAM_CLASS_TOLERANCE) {
                fit++;
                if (best < 0)
                    best = idx;
            }
        }
        /* A memory figure that was never read is unknown, never a pass. */
        aitk_check_status status = unknown > 0   ? AITK_CHECK_WARN
                                   : fit == total ? AITK_CHECK_PASS
                                   : fit > 0      ? AITK_CHECK_WARN
                                                  : aitk_compat_rule_severity(rule);
        aitk_str_appendf(&exp, ">= %g GB on the training GPU (a %g GB-class card: >= %.1f GiB reported)",
                         need, need, need * VRAM_CLASS_TOLERANCE);
        if (unknown > 0 && fit > 0) {
            aitk_str_appendf(&msg, "GPU %d has the %g GB %s needs; the memory of %d other GPU%s "
                                   "is unknown", best, need, model, unknown, unknown == 1 ? "" : "s");
            aitk_str_appendf(&fix, "Train on GPU %d: set `device: cuda:%d` in the ai-toolkit config "
                                   "or export CUDA_VISIBLE_DEVICES=%d.", best, best, best);
        } else if (unknown > 0) {
            aitk_str_appendf(&msg, "the driver did not report the memory of %d GPU%s, so whether "
                                   "%s fits in %g GB is unknown%s",
                             unknown, unknown == 1 ? "" : "s", model, need,
                             total > 0 ? "; no GPU whose memory is known has enough" : "");
            aitk_str_append(&fix, "Check the memory with nvidia-smi; some systems (unified memory, "
                                  "vGPU) do not report it through NVML or the CUDA driver.");
        } else if (status == AITK_CHECK_PASS) {
            aitk_str_appendf(&msg, "every GPU has the %g GB %s needs", need, model);
        } else if (fit > 0) {
            aitk_str_appendf(&msg, "%d of %d GPUs are under the %g GB %s needs; training on them "
                                   "runs out of memory", total - fit, total, need, model);
            aitk_str_appendf(&fix, "Train on GPU %d: set `device: cuda:%d` in the ai-toolkit config "
                                   "or export CUDA_VISIBLE_DEVICES=%d.", best, best, best);
        } else {
            aitk_str_appendf(&msg, "no GPU has the %g GB %s needs", need, model);
            aitk_str_append(&fix, "Use a GPU with more memory, or lower the need: `quantize: true`, "
                                  "`low_vram: true`, gradient checkpointing, a smaller resolution.");
        }
        aitk_str_appendf(&id, "gpu.vram.%s", model);
        aitk_str_appendf(&title, "VRAM for %s", model);
        aitk_check c = {.id = aitk_str_cstr(&id), .category = "gpu", .title = aitk_str_cstr(&title),
                        .status = status, .observed = aitk_str_cstr(&obs),
                        .expected = aitk_str_cstr(&exp), .message = aitk_str_cstr(&msg),
                        .remedy = aitk_str_cstr(&fix), .source = aitk_compat_rule_source(rule)};
        aitk_status st = add(ctx, &c);
        aitk_str *all[] = {&id, &obs, &exp, &msg, &fix, &title};
        for (size_t k = 0; k < 6; k++)
            aitk_str_free(all[k]);
        if (st)
            return st;
    }
    return AITK_OK;
}

/* The CUDA device that is the same card as NVML device `dev`: the one with its
 * PCI bus id, or, when NVML gave none and each library sees one device, that
 * one, unless it is a MIG slice (its figures are the slice's, not the GPU's). */
static cJSON *driver_twin(const cJSON *dev, const cJSON *nv_devices, const cJSON *cu_devices)
{
    const char *bus = aitk_field_str(dev, "pci_bus_id");
    cJSON *c;
    cJSON_ArrayForEach(c, cu_devices)
    {
        if (*bus && strcmp(bus, aitk_field_str(c, "pci_bus_id")) == 0)
            return aitk_json_true(c, "mig_instance") ? NULL : c;
    }
    c = cJSON_GetArrayItem(cu_devices, 0);
    if (!*bus && cJSON_GetArraySize(nv_devices) == 1 && cJSON_GetArraySize(cu_devices) == 1 &&
        !aitk_json_true(c, "mig_instance"))
        return c;
    return NULL;
}

/* NVML may refuse a figure the CUDA driver answers for the same card: total
 * memory on unified-memory systems such as DGX Spark (GB10), where
 * nvmlDeviceGetMemoryInfo answers NOT_SUPPORTED (leptonai/gpud#1170), and the
 * compute capability on old drivers. The driver's figure stands in, marked
 * with its source, so a check is judged on a figure that was read. */
static aitk_status fill_from_driver(cJSON *nvml, const cJSON *cu)
{
    cJSON *nv_devices = cJSON_GetObjectItemCaseSensitive(nvml, "devices");
    const cJSON *cu_devices = cJSON_GetObjectItemCaseSensitive(cu, "devices");
    cJSON *dev;
    cJSON_ArrayForEach(dev, nv_devices)
    {
        const cJSON *twin = driver_twin(dev, nv_devices, cu_devices);
        if (!twin)
            continue;
        double total = aitk_json_number(twin, "total_bytes", -1);
        if (!cJSON_GetObjectItemCaseSensitive(dev, "memory") && total >= 0) {
            cJSON *m = cJSON_AddObjectToObject(dev, "memory");
            if (!m || !cJSON_AddNumberToObject(m, "total_bytes", total) ||
                !cJSON_AddStringToObject(m, "source", "cuDeviceTotalMem_v2"))
                return AITK_E_NOMEM;
        }
        const char *cc = aitk_field_str(twin, "compute_capability");
        if (!cJSON_GetObjectItemCaseSensitive(dev, "compute_capability") && *cc) {
            if (!cJSON_AddStringToObject(dev, "compute_capability", cc) ||
                !cJSON_AddStringToObject(dev, "compute_capability_source", "cuDeviceGetAttribute"))
                return AITK_E_NOMEM;
        }
    }
    return AITK_OK;
}

aitk_status aitk_gpu_checks(aitk_run_ctx *ctx)
{
    cJSON *gpu = cJSON_AddObjectToObject(ctx->env, "gpu");
    cJSON *nvml = gpu ? cJSON_AddObjectToObject(gpu, "nvml") : NULL;
    cJSON *cu = gpu ? cJSON_AddObjectToObject(gpu, "cuda_driver") : NULL;
    if (!nvml || !cu)
        return AITK_E_NOMEM;
    aitk_status st = aitk_nvml_probe(nvml);
    if (!st)
        st = aitk_cudadrv_probe(cu);
    if (!st)
        st = fill_from_driver(nvml, cu);
    if (!st)
        st = check_nvml(ctx, nvml);
    if (!st)
        st = check_cuda_driver(ctx, nvml, cu);
    if (st)
        return st;
    /* NVML knows more per GPU; the driver API's list stands in when NVML fails. */
    const cJSON *devices = aitk_gpu_devices(ctx->env);
    if (!devices)
        return AITK_OK;
    st = check_count(ctx, devices);
    const cJSON *dev;
    cJSON_ArrayForEach(dev, devices)
    {
        if (!st)
            st = check_device(ctx, dev);
    }
    if (!st && cJSON_GetArraySize(devices) > 0)
        st = check_vram(ctx, devices);
    return st;
}
