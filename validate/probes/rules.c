/* Cross-probe rules. The tables come from compat.yaml (tables: section); the
 * deep Python check's own answers (torch.cuda.get_arch_list()) win over the
 * table when the deep check ran, because they describe the installed wheel
 * rather than the official one. */
#include "validate/probes/rules.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "reports/fields.h"
#include "validate/compat.h"
#include "validate/probes/gpu_util.h"
#include "validate/probes/host.h"
#include "validate/probes/pyenv.h"
#include "validate/probes/python.h"

#ifdef _WIN32
#define DRIVER_TABLE "driver_min_windows"
#else
#define DRIVER_TABLE "driver_min_linux"
#endif
#define PIP_INDEX "https://download.pytorch.org/whl/"

int aitk_rules_arch_supports(const char *list, int sm)
{
    int best = 0, last = -1;
    for (const char *p = list; p && *p;) {
        while (*p && (isspace((unsigned char)*p) || *p == ','))
            p++;
        if (!*p)
            break;
        int ptx = 0;
        if (strncmp(p, "+PTX", 4) == 0) {
            /* "+PTX" after a list: the last architecture also ships PTX. */
            if (last >= 0 && last <= sm && best < 1)
                best = 1;
            p += 4;
            continue;
        }
        if (strncmp(p, "sm_", 3) == 0)
            p += 3;
        else if (strncmp(p, "compute_", 8) == 0)
            p += 8, ptx = 1;
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p) { /* unknown word: skip it */
            while (*p && !isspace((unsigned char)*p))
                p++;
            continue;
        }
        p = end;
        while (*p && !isspace((unsigned char)*p) && *p != ',')
            p++; /* "90a": the suffix names an arch-specific variant */
        last = (int)v;
        if (ptx && v <= sm && best < 1)
            best = 1;
        if (!ptx && v / 10 == sm / 10 && v <= sm)
            best = 2;
    }
    return best;
}

/* The torch_arch row for torch `major.minor` and `variant` ("2.1-2.5/cu121"). */
static const aitk_yaml_node *arch_row(const aitk_compat *c, int tmm, const char *variant,
                                      const char **key)
{
    const aitk_yaml_node *t = aitk_compat_table(c, "torch_arch");
    for (size_t i = 0; t && i < t->count; i++) {
        const char *k = t->pairs[i].key->text;
        const char *slash = strchr(k, '/');
        if (!slash || strcmp(slash + 1, variant) != 0)
            continue;
        int a1, b1, a2, b2;
        if (!aitk_pyver_major_minor(k, &a1, &b1))
            continue;
        const char *dash = memchr(k, '-', (size_t)(slash - k));
        if (!dash || !aitk_pyver_major_minor(dash + 1, &a2, &b2))
            a2 = a1, b2 = b1;
        if (tmm >= a1 * 100 + b1 && tmm <= a2 * 100 + b2) {
            *key = k;
            return t->pairs[i].value;
        }
    }
    return NULL;
}

static aitk_status add(aitk_run_ctx *ctx, const aitk_check *c)
{
    return aitk_checklist_add(&ctx->checks, c);
}

static aitk_status check_driver(aitk_run_ctx *ctx, const cJSON *torch)
{
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(ctx->env, "gpu");
    const cJSON *nvml = cJSON_GetObjectItemCaseSensitive(gpu, "nvml");
    const cJSON *cu = cJSON_GetObjectItemCaseSensitive(gpu, "cuda_driver");
    const char *tcuda = aitk_field_str(torch, "cuda");
    const char *driver = aitk_field_str(nvml, "driver_version");
    double api = aitk_json_number(cu, "driver_api_version", -1);
    int ma, mi;
    if (!*tcuda || !aitk_pyver_major_minor(tcuda, &ma, &mi) || (!*driver && api < 0))
        return AITK_OK; /* no CUDA torch or no driver: python.torch / gpu.* say so */
    char key[32];
    snprintf(key, sizeof key, "%d.%d", ma, mi);
    const aitk_yaml_node *row = aitk_compat_table_row(ctx->compat, DRIVER_TABLE, key);
    const char *need = aitk_compat_rule_text(row);
    aitk_str obs = AITK_STR_INIT, exp = AITK_STR_INIT, msg = AITK_STR_INIT, fix = AITK_STR_INIT;
    aitk_check c = {.id = "gpu.driver_for_torch", .category = "gpu",
                    .title = "Driver new enough for torch's CUDA"};
    if (*driver)
        aitk_str_appendf(&obs, "driver %s", driver);
    if (api >= 0)
        aitk_str_appendf(&obs, "%sCUDA %d.%d driver API", obs.len ? ", " : "", (int)api / 1000,
                         ((int)api % 1000) / 10);
    aitk_str_appendf(&obs, "; torch %s built with CUDA %s", aitk_field_str(torch, "version"), tcuda);
    int ok;
    if (need && *driver) {
        aitk_str_appendf(&exp, ">= %s (CUDA %s)", need, key);
        ok = aitk_version_compare(driver, need) >= 0;
        c.source = aitk_compat_rule_source(row);
    } else {
        /* No table row or no NVML: the driver's own CUDA version must reach torch's. */
        aitk_str_appendf(&exp, "driver supporting CUDA >= %s", key);
        ok = api >= ma * 1000 + mi * 10;
        c.source = "CUDA driver API: cuDriverGetVersion must be >= the runtime's version "
                   "(NVIDIA CUDA Toolkit Release Notes, "
                   "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/)";
    }
    if (ok) {
        c.status = AITK_CHECK_PASS;
        aitk_str_appendf(&msg, "the driver supports the CUDA %s runtime torch ships", key);
    } else {
        c.status = AITK_CHECK_FAIL;
        aitk_str_appendf(&msg, "torch %s needs an NVIDIA driver for CUDA %s (%s) and this driver "
                               "is older: torch.cuda.is_available() is False with \"The NVIDIA "
                               "driver on your system is too old\"",
                         aitk_field_str(torch, "version"), key, aitk_str_cstr(&exp));
        aitk_str_appendf(&fix, "Update the NVIDIA driver to %s or newer", need ? need : "a newer release");
        if (api >= 0)
            aitk_str_appendf(&fix, ", or install a torch built for CUDA %d.%d or older (the "
                                   "driver's own CUDA version)", (int)api / 1000,
                             ((int)api % 1000) / 10);
        aitk_str_append(&fix, ".");
    }
    c.observed = aitk_str_cstr(&obs);
    c.expected = aitk_str_cstr(&exp);
    c.message = aitk_str_cstr(&msg);
    c.remedy = aitk_str_cstr(&fix);
    aitk_status st = add(ctx, &c);
    aitk_str_free(&obs);
    aitk_str_free(&exp);
    aitk_str_free(&msg);
    aitk_str_free(&fix);
    return st;
}

/* The earliest table row whose wheel has native kernels for `sm`. */
static void remedy_for_sm(const aitk_compat *compat, int sm, aitk_str *fix)
{
    const aitk_yaml_node *t = aitk_compat_table(compat, "torch_arch");
    for (size_t i = 0; t && i < t->count; i++) {
        const char *k = t->pairs[i].key->text;
        const char *slash = strchr(k, '/');
        if (slash && aitk_rules_arch_supports(aitk_compat_rule_text(t->pairs[i].value), sm) == 2) {
            aitk_str_appendf(fix, "Install a torch build with sm_%d kernels: torch %.*s or newer "
                                  "with the %s variant, e.g. pip install --force-reinstall torch "
                                  "torchvision torchaudio --index-url " PIP_INDEX "%s",
                             sm, (int)strcspn(k, "-/"), k, slash + 1, slash + 1);
            return;
        }
    }
    aitk_str_appendf(fix, "No official torch wheel in the matrix has sm_%d kernels; build torch "
                          "from source with TORCH_CUDA_ARCH_LIST including %d.%d.", sm, sm / 10, sm % 10);
}

static aitk_status check_arch(aitk_run_ctx *ctx, const cJSON *sel, const cJSON *torch)
{
    const cJSON *devices = aitk_gpu_devices(ctx->env);
    const char *variant = aitk_field_str(torch, "variant");
    if (!cJSON_GetArraySize(devices) || strncmp(variant, "cu", 2) != 0)
        return AITK_OK;
    aitk_str list = AITK_STR_INIT, obs = AITK_STR_INIT, exp = AITK_STR_INIT, msg = AITK_STR_INIT,
             fix = AITK_STR_INIT, src = AITK_STR_INIT;
    const cJSON *deep_list = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(sel, "deep"), "arch_list");
    const cJSON *a;
    cJSON_ArrayForEach(a, deep_list)
    {
        if (cJSON_IsString(a))
            aitk_str_appendf(&list, "%s%s", list.len ? " " : "", a->valuestring);
    }
    int ta, tb;
    const char *key = "";
    if (list.len) {
        aitk_str_append(&src, "torch.cuda.get_arch_list() of the installed torch (deep check)");
    } else if (aitk_pyver_major_minor(aitk_field_str(torch, "version"), &ta, &tb)) {
        const aitk_yaml_node *row = arch_row(ctx->compat, ta * 100 + tb, variant, &key);
        if (row && aitk_compat_rule_text(row)) {
            aitk_str_append(&list, aitk_compat_rule_text(row));
            aitk_str_append(&src, aitk_compat_rule_source(row));
        }
    }
    aitk_check c = {.id = "gpu.arch_for_torch", .category = "gpu",
                    .title = "torch has kernels for this GPU"};
    if (!list.len) {
        c.status = AITK_CHECK_SKIP;
        aitk_str_appendf(&msg, "the matrix has no architecture list for torch %s; run without "
                               "--quick to ask torch itself", aitk_field_str(torch, "version"));
    } else {
        aitk_str_appendf(&exp, "GPU architecture in torch %s's list: %s",
                         aitk_field_str(torch, "version"), aitk_str_cstr(&list));
        c.status = AITK_CHECK_PASS;
        const cJSON *dev;
        cJSON_ArrayForEach(dev, devices)
        {
            int sm = aitk_gpu_sm(dev);
            if (sm < 0) {
                /* Not read is unknown, never a pass. */
                aitk_str_appendf(&obs, "%sGPU %.0f %s: compute capability unknown",
                                 obs.len ? "; " : "", aitk_json_number(dev, "index", -1),
                                 aitk_field_str(dev, "name"));
                if (c.status == AITK_CHECK_PASS)
                    c.status = AITK_CHECK_WARN;
                aitk_str_append(&msg, "the driver did not report a GPU's compute capability, so "
                                      "whether torch has kernels for it is unknown. ");
                if (!fix.len)
                    aitk_str_append(&fix, "Check the GPU's compute capability with nvidia-smi "
                                          "--query-gpu=compute_cap --format=csv and compare it "
                                          "with torch.cuda.get_arch_list(). ");
                continue;
            }
            int s = aitk_rules_arch_supports(aitk_str_cstr(&list), sm);
            aitk_str_appendf(&obs, "%sGPU %.0f %s sm_%d: %s", obs.len ? "; " : "",
                             aitk_json_number(dev, "index", -1), aitk_field_str(dev, "name"), sm,
                             s == 2 ? "native kernels" : s == 1 ? "PTX only" : "no kernels");
            if (s == 0) {
                c.status = AITK_CHECK_FAIL;
                aitk_str_appendf(&msg, "%s (sm_%d) is not among torch %s's architectures: every "
                                       "CUDA operation fails with \"CUDA error: no kernel image is "
                                       "available for execution on the device\". ",
                                 aitk_field_str(dev, "name"), sm, aitk_field_str(torch, "version"));
                if (!fix.len)
                    remedy_for_sm(ctx->compat, sm, &fix);
            } else if (s == 1 && c.status == AITK_CHECK_PASS) {
                c.status = AITK_CHECK_WARN;
                aitk_str_appendf(&msg, "sm_%d runs only through PTX JIT: slow first start and "
                                       "possibly slower kernels. ", sm);
                remedy_for_sm(ctx->compat, sm, &fix);
            }
        }
        if (c.status == AITK_CHECK_PASS)
            aitk_str_append(&msg, "torch ships kernels for every GPU");
    }
    c.observed = aitk_str_cstr(&obs);
    c.expected = aitk_str_cstr(&exp);
    c.message = aitk_str_cstr(&msg);
    c.remedy = aitk_str_cstr(&fix);
    c.source = aitk_str_cstr(&src);
    aitk_status st = add(ctx, &c);
    aitk_str *all[] = {&list, &obs, &exp, &msg, &fix, &src};
    for (size_t i = 0; i < 6; i++)
        aitk_str_free(all[i]);
    return st;
}

aitk_status aitk_rules_checks(aitk_run_ctx *ctx)
{
    const cJSON *sel = aitk_python_selected(ctx->env);
    const cJSON *torch = cJSON_GetObjectItemCaseSensitive(sel, "torch");
    if (!torch)
        return AITK_OK;
    aitk_status st = check_driver(ctx, torch);
    if (!st)
        st = check_arch(ctx, sel, torch);
    return st;
}
