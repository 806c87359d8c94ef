/* GPU driver presence through the real loader (dlopen), never linked.
 *
 * When the driver is absent the loader's own sentence is the observation:
 * that is what torch would hit too. The per-GPU probe (NVML queries, driver
 * API, compatibility rules) builds on this; see issue "Machine and
 * software-stack probes". */
#include "validate/probes/gpu.h"

#include <cjson/cJSON.h>

#include "common/dynload.h"

typedef struct driver_lib {
    const char *id, *title, *what;
    const char *const *names;
    const char *remedy;
} driver_lib;

#ifdef _WIN32
static const char *const nvml_names[] = {"nvml.dll", NULL};
static const char *const cuda_names[] = {"nvcuda.dll", NULL};
#else
static const char *const nvml_names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};
static const char *const cuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};
#endif

static const driver_lib libs[] = {
    {"gpu.nvml", "NVIDIA management library (NVML)", "nvml",
     nvml_names,
     "Install the NVIDIA driver for this GPU (it ships NVML). In a container, start it with "
     "the NVIDIA container runtime (docker run --gpus all)."},
    {"gpu.cuda_driver", "CUDA driver library", "cuda_driver",
     cuda_names,
     "Install the NVIDIA driver (it ships the CUDA driver library; the CUDA toolkit does not). "
     "In a container, start it with the NVIDIA container runtime (docker run --gpus all)."},
};

#define DRIVER_SOURCE "NVIDIA driver installation guide; DCGM diagnostics level 1 checks (FACTS.md sections 10-11)"

aitk_status aitk_gpu_checks(aitk_run_ctx *ctx)
{
    cJSON *gpu = cJSON_AddObjectToObject(ctx->env, "gpu");
    if (!gpu)
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    for (size_t i = 0; i < sizeof libs / sizeof *libs && !st; i++) {
        const driver_lib *l = &libs[i];
        aitk_str err = AITK_STR_INIT, path = AITK_STR_INIT;
        aitk_dl *dl = NULL;
        const char *which = NULL;
        aitk_status lst = aitk_dl_open_first(l->names, AITK_DL_DEFAULT, &dl, &which, &err);
        if (lst == AITK_E_NOMEM)
            return lst;
        cJSON *o = cJSON_AddObjectToObject(gpu, l->what);
        cJSON_AddBoolToObject(o, "loaded", lst == AITK_OK);
        aitk_check c = {.id = l->id, .category = "gpu", .title = l->title,
                        .expected = "loadable", .source = DRIVER_SOURCE};
        if (lst == AITK_OK) {
            aitk_dl_path(dl, &path);
            cJSON_AddStringToObject(o, "path", aitk_str_cstr(&path));
            c.status = AITK_CHECK_PASS;
            c.observed = path.len ? aitk_str_cstr(&path) : which;
            c.message = "the NVIDIA driver library loads";
            aitk_dl_close(dl);
        } else {
            cJSON_AddStringToObject(o, "loader_error", aitk_str_cstr(&err));
            c.status = AITK_CHECK_FAIL;
            c.observed = aitk_str_cstr(&err);
            c.message = "no NVIDIA driver is installed (or it is hidden from this process): "
                        "no GPU can be used";
            c.remedy = l->remedy;
        }
        st = aitk_checklist_add(&ctx->checks, &c);
        aitk_str_free(&err);
        aitk_str_free(&path);
    }
    return st;
}
