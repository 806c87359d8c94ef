/* windows.gpu_mode: per NVIDIA GPU, the driver model (WDDM: a display
 * device whose memory Windows shares with the desktop; TCC or MCDM: compute
 * only) and whether it drives a display. A GeForce card is always WDDM;
 * what costs a trainer is the display: the desktop, the browser and every
 * window hold VRAM on that GPU before training starts, and the advice for
 * it is ai-toolkit's own (low_vram). Read from the NVML record the GPU
 * provider made (nvml.c asks nvmlDeviceGetDriverModel on Windows). */
#include <string.h>

#include "validate/probes/gpu_util.h"
#include "reports/fields.h"
#include "validate/probes/win_checks.h"
#include "validate/probes/windows.h"

#define MIB 1048576.0
#define GIB 1073741824.0

aitk_status aitk_win_gpu_mode_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec)
{
    const cJSON *nvml = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(ctx->env, "gpu"), "nvml");
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(nvml, "devices");
    cJSON *out = cJSON_AddArrayToObject(rec, "gpu_mode");
    aitk_str obs = AITK_STR_INIT, msg = AITK_STR_INIT, fix = AITK_STR_INIT;
    aitk_check c = {.id = "windows.gpu_mode", .category = "windows",
                    .title = aitk_windows_check_title("windows.gpu_mode"),
                    .expected = "the training GPU drives no display (TCC, MCDM, or WDDM with "
                                "nothing attached)",
                    .source = aitk_windows_data_source(data, "gpu_mode", NULL)};
    int displays = 0, n = 0;
    const cJSON *dev;
    cJSON_ArrayForEach(dev, devices)
    {
        n++;
        int index = (int)aitk_json_number(dev, "index", -1);
        const cJSON *dm = cJSON_GetObjectItemCaseSensitive(dev, "driver_model");
        const char *model = aitk_field_str(dm, "current");
        const char *refused = aitk_field_str(cJSON_GetObjectItemCaseSensitive(dev, "refused"),
                                             "nvmlDeviceGetDriverModel");
        bool display = aitk_json_true(dev, "display_active");
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(dev, "memory");
        double used = aitk_json_number(mem, "used_bytes", -1);
        double total = aitk_json_number(mem, "total_bytes", -1);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(out, o);
        cJSON_AddNumberToObject(o, "index", index);
        cJSON_AddStringToObject(o, "driver_model", *model ? model : "unknown");
        cJSON_AddBoolToObject(o, "display_active", display);
        if (used >= 0)
            cJSON_AddNumberToObject(o, "used_bytes", used);
        aitk_str_appendf(&obs, "%sGPU %d %s: %s", obs.len ? "; " : "", index,
                         aitk_field_str(dev, "name"),
                         *model ? model : *refused ? refused : "driver model not reported");
        aitk_str_append(&obs, display ? ", drives a display" : ", no display");
        if (used >= 0 && total > 0)
            aitk_str_appendf(&obs, ", %.0f MiB of %.1f GiB already in use", used / MIB,
                             total / GIB);
        if (display) {
            displays++;
            aitk_str_appendf(&msg, "%sGPU %d drives a display%s: the desktop and every open "
                                   "window hold part of its memory",
                             msg.len ? "; " : "", index,
                             strcmp(model, "WDDM") == 0 ? " in WDDM mode" : "");
            if (used >= 0)
                aitk_str_appendf(&msg, " (%.0f MiB before training starts)", used / MIB);
        }
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(nvml, "loaded")) || n == 0) {
        c.status = AITK_CHECK_SKIP;
        c.observed = "";
        c.message = "no NVIDIA GPU answered through NVML (see gpu.nvml)";
    } else if (displays > 0) {
        c.status = AITK_CHECK_WARN;
        c.observed = aitk_str_cstr(&obs);
        aitk_str_append(&msg, ", and training shares the GPU with the desktop");
        c.message = aitk_str_cstr(&msg);
        aitk_str_append(&fix, "Set `low_vram: true` under model: in the ai-toolkit config "
                              "(ai-toolkit's advice for a GPU that also runs your monitors); "
                              "better, plug the monitors into the integrated graphics or another "
                              "GPU, and close GPU-heavy programs (browsers, games) while "
                              "training.");
        c.remedy = aitk_str_cstr(&fix);
    } else {
        c.status = AITK_CHECK_PASS;
        c.observed = aitk_str_cstr(&obs);
        c.message = "no NVIDIA GPU drives a display: its memory is free for training";
    }
    aitk_status st = aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    aitk_str_free(&fix);
    return st;
}
