/* WSL probe (wsl.h). The signals and the remedies are in wsl.yaml with their
 * sources. The Windows driver's own remedy matters most here: the generic
 * "install the NVIDIA driver" that gpu.cuda_driver gives would, followed
 * inside WSL, install the Linux driver that breaks it. */
#define _GNU_SOURCE
#include "validate/probes/wsl.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/data.h"
#include "common/fileio.h"
#include "common/str.h"
#include "reports/fields.h"
#include "validate/probes/gpu_util.h"

#define DATA_FILE "validate/probes/wsl.yaml"

#ifndef _WIN32

static bool exists_at(const char *root, const char *rel, bool want_dir)
{
    aitk_str p = AITK_STR_INIT;
    struct stat sb;
    aitk_str_appendf(&p, "%s/%s", root, rel);
    bool ok = stat(aitk_str_cstr(&p), &sb) == 0 && (!want_dir || S_ISDIR(sb.st_mode));
    aitk_str_free(&p);
    return ok;
}

/* 1 or 2 for the WSL version, 0 when not under WSL. */
static int wsl_version(const char *release, const char *root)
{
    if (strstr(release, "Microsoft"))
        return 1;
    if (strstr(release, "WSL2"))
        return 2;
    return strcasestr(release, "microsoft") && exists_at(root, "usr/lib/wsl", true) ? 2 : 0;
}

/* Every remedy the judgement may name, and the driver's place, must be in
 * the data: a check that fails with an empty fix helps no one. */
static aitk_status load_data(aitk_yaml_doc **out, aitk_str *err)
{
    static const char *const remedies[] = {"wsl1", "no_windows_driver", "shadowed",
                                           "not_on_loader_path"};
    aitk_yaml_doc *doc = NULL;
    aitk_status st = aitk_data_load_schema(DATA_FILE, 1, &doc, err);
    const aitk_yaml_node *top = doc ? doc->root : NULL;
    const aitk_yaml_node *driver = aitk_yaml_get(top, "windows_driver");
    if (!st && (!*aitk_yaml_text(driver, "path") || !*aitk_yaml_text(driver, "folder") ||
                !*aitk_yaml_text(aitk_yaml_get(top, "kernel_release"), "path"))) {
        aitk_str_appendf(err, "%s: windows_driver.path, windows_driver.folder and "
                              "kernel_release.path are required", DATA_FILE);
        st = AITK_E_PARSE;
    }
    if (!st)
        st = aitk_data_need_sourced(doc, "remedy", remedies, sizeof remedies / sizeof *remedies,
                                    "value", err);
    if (st) {
        aitk_yaml_free(doc);
        return st;
    }
    *out = doc;
    return AITK_OK;
}

/* The judgement of a WSL 2 machine from the CUDA driver record (loaded,
 * path, loader_error): which remedy applies, or NULL when libcuda is the
 * Windows driver's. */
static const char *wsl2_problem(const cJSON *cu, bool stub, const char *folder, aitk_str *obs,
                                aitk_str *msg)
{
    const char *path = aitk_field_str(cu, "path");
    if (aitk_json_true(cu, "loaded") && strncmp(path, folder, strlen(folder)) != 0) {
        aitk_str_appendf(obs, "libcuda.so.1 loaded from %s", path);
        aitk_str_appendf(msg, "the CUDA driver library comes from %s, not from Windows' NVIDIA "
                              "driver (%slib): a Linux driver installed inside WSL, or a stray "
                              "copy, shadows it, and it cannot reach the GPU from WSL",
                         path, folder);
        return "shadowed";
    }
    if (!stub) {
        aitk_str_appendf(obs, "no %slib/libcuda.so.1", folder);
        aitk_str_append(msg, "Windows' NVIDIA driver does not reach this WSL 2 distribution: "
                             "its libcuda is missing, so no GPU can be used");
        return "no_windows_driver";
    }
    if (!aitk_json_true(cu, "loaded")) {
        aitk_str_appendf(obs, "%slib/libcuda.so.1 is there; loading libcuda.so.1: %s", folder,
                         aitk_field_str(cu, "loader_error"));
        aitk_str_appendf(msg, "Windows' driver is in %slib but the loader does not search that "
                              "folder, so torch cannot find libcuda",
                         folder);
        return "not_on_loader_path";
    }
    aitk_str_appendf(obs, "libcuda.so.1 from Windows' NVIDIA driver (%s)", path);
    aitk_str_append(msg, "WSL 2 reaches the GPU through the Windows driver");
    return NULL;
}

static aitk_status judge(aitk_run_ctx *ctx, const aitk_yaml_doc *data, int version,
                         const char *release, const char *root)
{
    const aitk_yaml_node *top = data->root;
    const aitk_yaml_node *driver = aitk_yaml_get(top, "windows_driver");
    const aitk_yaml_node *remedy = aitk_yaml_get(top, "remedy");
    aitk_str obs = AITK_STR_INIT, msg = AITK_STR_INIT;
    aitk_check c = {.id = "gpu.wsl", .category = "gpu", .title = "GPU under WSL",
                    .expected = "WSL 2 with libcuda from Windows' NVIDIA driver (/usr/lib/wsl/lib)",
                    .remedy = "", .source = aitk_yaml_text(driver, "source")};
    const char *key = NULL;
    bool judged = true; /* false for the two skips */
    const bool in_container = aitk_json_true(
        cJSON_GetObjectItemCaseSensitive(ctx->env, "container"), "in_container");
    if (version == 0) {
        judged = false;
        c.status = AITK_CHECK_SKIP;
        c.observed = "not under WSL";
        c.message = "the kernel is not WSL's: nothing to check";
        c.expected = "";
        c.source = "";
    } else if (version == 1) {
        aitk_str_appendf(&obs, "WSL 1 (kernel %s)", release);
        aitk_str_append(&msg, "WSL 1 has no GPU access: CUDA runs under WSL 2 only");
        key = "wsl1";
    } else if (in_container) {
        /* In a container the NVIDIA Container Toolkit mounts Windows'
         * driver libraries where it chooses (into /usr/lib/x86_64-linux-gnu:
         * NVIDIA/nvidia-docker issue #1699's mount error names that path),
         * so where libcuda sits says nothing; gpu.container judges access. */
        judged = false;
        c.status = AITK_CHECK_SKIP;
        c.observed = "in a container under WSL 2";
        c.message = "the container runtime places the driver's libraries; gpu.container judges "
                    "whether the container reaches the GPU";
        c.expected = "";
        c.source = "";
    } else {
        const cJSON *cu = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(ctx->env, "gpu"), "cuda_driver");
        key = wsl2_problem(cu, exists_at(root, aitk_yaml_text(driver, "path"), false),
                           aitk_yaml_text(driver, "folder"), &obs, &msg);
    }
    if (judged) {
        c.observed = aitk_str_cstr(&obs);
        c.message = aitk_str_cstr(&msg);
        c.status = key ? AITK_CHECK_FAIL : AITK_CHECK_PASS;
    }
    if (key) {
        c.remedy = aitk_yaml_text(remedy, key);
        c.source = aitk_yaml_text(aitk_yaml_get(remedy, key), "source");
    }
    aitk_status st = aitk_str_status(&obs) ? aitk_str_status(&obs) : aitk_str_status(&msg);
    if (!st)
        st = aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    return st;
}

#endif /* !_WIN32 */

aitk_status aitk_wsl_checks_at(aitk_run_ctx *ctx, const char *root)
{
#ifdef _WIN32
    (void)root;
    aitk_check c = {.id = "gpu.wsl", .category = "gpu", .title = "GPU under WSL",
                    .status = AITK_CHECK_SKIP, .observed = "Windows",
                    .message = "checked inside the Linux distribution, not on Windows",
                    .expected = "", .remedy = "", .source = ""};
    return aitk_checklist_add(&ctx->checks, &c);
#else
    aitk_yaml_doc *data = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = load_data(&data, &err);
    if (st) {
        /* The file is compiled in: only a broken build or AITK_DATA_DIR gets here. */
        aitk_check c = {.id = "gpu.wsl", .category = "gpu", .title = "GPU under WSL",
                        .status = AITK_CHECK_FAIL, .observed = aitk_str_cstr(&err),
                        .expected = "", .message = "the WSL check cannot run without its data",
                        .remedy = "Rebuild aitk-validate, or unset AITK_DATA_DIR if it points at "
                                  "an edited copy.", .source = ""};
        st = st == AITK_E_NOMEM ? st : aitk_checklist_add(&ctx->checks, &c);
        aitk_str_free(&err);
        return st;
    }
    aitk_str path = AITK_STR_INIT;
    char *text = NULL;
    size_t len = 0;
    aitk_str_appendf(&path, "%s/%s", root,
                     aitk_yaml_text(aitk_yaml_get(data->root, "kernel_release"), "path"));
    if (aitk_file_read(aitk_str_cstr(&path), 4096, &text, &len, NULL) != AITK_OK)
        text = NULL;
    char release[256] = "";
    if (text)
        snprintf(release, sizeof release, "%.*s", (int)strcspn(text, "\r\n"), text);
    int version = wsl_version(release, root);
    cJSON *rec = cJSON_AddObjectToObject(ctx->env, "wsl");
    if (!rec || !cJSON_AddNumberToObject(rec, "version", version) ||
        !cJSON_AddStringToObject(rec, "kernel_release", release))
        st = AITK_E_NOMEM;
    if (!st)
        st = judge(ctx, data, version, release, root);
    aitk_free(text);
    aitk_str_free(&path);
    aitk_yaml_free(data);
    aitk_str_free(&err);
    return st;
#endif
}

aitk_status aitk_wsl_checks(aitk_run_ctx *ctx)
{
    return aitk_wsl_checks_at(ctx, "");
}
