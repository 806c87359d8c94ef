/* The version of one CUDA library file. At --quick it is read without
 * loading: from the pip wheel whose RECORD lists the file, from a header of
 * the same installation, else from the file name. Beyond --quick the
 * library is asked itself, in a process of its own (common/libload.h), so
 * the answer is the file's and not that of another copy this process or an
 * earlier check had mapped. Both are the version of the file named: the
 * two levels cannot disagree about one file unless the file itself lies. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/libload.h"
#include "common/str.h"
#include "reports/fields.h"
#include "validate/probes/cuda_lib.h"
#include "validate/probes/cuda_stack.h"
#include "validate/probes/gpu_util.h"

#define HEADER_MAX (4 * 1024 * 1024)
#define LOAD_TIMEOUT_MS 120000

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static void header_numbers(aitk_cuda_ver_kind kind, const char *text, aitk_str *ver)
{
    static const char *const names[][3] = {
        [VER_CUBLAS] = {"CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH"},
        [VER_CUBLASLT] = {"CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH"},
        [VER_CUDNN] = {"CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"},
        [VER_NCCL] = {"NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"},
    };
    if (kind == VER_RUNTIME) {
        long a = aitk_header_define(text, "CUDART_VERSION");
        if (a >= 0)
            aitk_str_appendf(ver, "%ld.%ld", a / 1000, (a % 1000) / 10);
        return;
    }
    long a = aitk_header_define(text, names[kind][0]);
    long b = aitk_header_define(text, names[kind][1]);
    long c = aitk_header_define(text, names[kind][2]);
    if (a >= 0 && b >= 0 && c >= 0)
        aitk_str_appendf(ver, "%ld.%ld.%ld", a, b, c);
}

/* Versions from a header, as text "13.0" / "13.1.0" / "9.19.0". */
static void header_version(const aitk_cuda_lib *l, const char *include_dir, aitk_str *ver,
                           aitk_str *where)
{
    aitk_str path = AITK_STR_INIT;
    aitk_path_join(&path, include_dir, l->header);
    char *text = NULL;
    size_t len = 0;
    if (is_file(aitk_str_cstr(&path)) &&
        aitk_file_read(aitk_str_cstr(&path), HEADER_MAX, &text, &len, NULL) == AITK_OK) {
        header_numbers(l->kind, text, ver);
        if (ver->len)
            aitk_str_append(where, aitk_str_cstr(&path));
        aitk_free(text);
    }
    aitk_str_free(&path);
}

/* The header of the installation the file belongs to: <root>/lib64/libx.so
 * -> <root>/include (also <root>/lib/.. for the pip layouts). */
static void installation_header(const aitk_cuda_lib *l, const char *path, aitk_str *ver,
                                aitk_str *where)
{
    char *dir = aitk_strdup(path);
    char *slash = dir ? (char *)aitk_path_last_separator(dir) : NULL;
    if (slash) {
        *slash = '\0';
        slash = (char *)aitk_path_last_separator(dir);
    }
    if (slash) {
        *slash = '\0';
        aitk_str inc = AITK_STR_INIT;
        aitk_path_join(&inc, dir, "include");
        header_version(l, aitk_str_cstr(&inc), ver, where);
        aitk_str_free(&inc);
    }
    aitk_free(dir);
}

/* A version whose first number differs from the major in the file's name
 * ("13.1.0" for libcublas.so.12) is another copy's, never this file's. */
static bool major_contradicts(const char *path, const char *ver)
{
    char *real = aitk_realpath(path);
    const char *base = aitk_path_last_separator(real ? real : path);
    aitk_str from_name = AITK_STR_INIT;
    aitk_cuda_soname_version(base ? base + 1 : path, &from_name);
    bool bad = from_name.len && atol(aitk_str_cstr(&from_name)) != atol(ver);
    aitk_str_free(&from_name);
    free(real);
    return bad;
}

void aitk_cuda_quick_version(const aitk_cuda_lib *l, const char *path, const char *why,
                             const cJSON *pyenv, cJSON *o)
{
    aitk_str ver = AITK_STR_INIT, where = AITK_STR_INIT, pkg = AITK_STR_INIT;
    bool from_pip = strcmp(why, "site-packages/nvidia") == 0;
    if (from_pip && aitk_cuda_wheel_owner(pyenv, path, &pkg, &ver)) {
        aitk_str_appendf(&where, "pip package %s", aitk_str_cstr(&pkg));
    } else if (from_pip) {
        /* No RECORD names the file (an environment copied without them):
         * the wheel of this library whose version agrees with the file's
         * name, never one of another CUDA major. */
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(pyenv, "packages"))
        {
            if (!ver.len && strncmp(p->string, l->pip, strlen(l->pip)) == 0 &&
                !major_contradicts(path, aitk_field_str(p, "version"))) {
                aitk_str_append(&ver, aitk_field_str(p, "version"));
                aitk_str_appendf(&where, "pip package %s", p->string);
            }
        }
    }
    if (!ver.len)
        installation_header(l, path, &ver, &where);
    if (!ver.len) {
        char *real = aitk_realpath(path);
        const char *base = aitk_path_last_separator(real ? real : path);
        aitk_cuda_soname_version(base ? base + 1 : path, &ver);
        if (ver.len)
            aitk_str_append(&where, "file name");
        free(real);
    }
    if (ver.len) {
        cJSON_AddStringToObject(o, "version", aitk_str_cstr(&ver));
        cJSON_AddStringToObject(o, "version_from", aitk_str_cstr(&where));
    }
    aitk_str_free(&ver);
    aitk_str_free(&where);
    aitk_str_free(&pkg);
}

static const char *const version_fn[] = {
    [VER_RUNTIME] = "cudaRuntimeGetVersion", [VER_CUBLAS] = "cublasGetProperty",
    [VER_CUBLASLT] = "cublasLtGetVersion", [VER_CUDNN] = "cudnnGetVersion",
    [VER_NCCL] = "ncclGetVersion",
};

/* The numbers the version function returned, in each library's encoding. */
static void format_version(aitk_cuda_ver_kind kind, const long v[3], aitk_str *ver)
{
    long s = v[0];
    switch (kind) {
    case VER_RUNTIME: /* major*1000 + minor*10 */
        aitk_str_appendf(ver, "%ld.%ld", s / 1000, (s % 1000) / 10);
        break;
    case VER_CUBLAS: /* MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL */
        aitk_str_appendf(ver, "%ld.%ld.%ld", v[0], v[1], v[2]);
        break;
    case VER_CUDNN: /* 9.x: major*10000 + minor*100 + patch; 8.x: major*1000 + minor*100 + patch */
        if (s < 90000)
            aitk_str_appendf(ver, "%ld.%ld.%ld", s / 1000, (s / 100) % 10, s % 100);
        else
            aitk_str_appendf(ver, "%ld.%ld.%ld", s / 10000, (s / 100) % 100, s % 100);
        break;
    case VER_CUBLASLT:
    case VER_NCCL: /* major*10000 + minor*100 + patch */
        aitk_str_appendf(ver, "%ld.%ld.%ld", s / 10000, (s / 100) % 100, s % 100);
        break;
    }
}

aitk_status aitk_cuda_loaded_version(const aitk_cuda_lib *l, const char *path, cJSON *o,
                                     aitk_str *err)
{
    aitk_libload r;
    aitk_status st = aitk_libload_probe(path, version_fn[l->kind], LOAD_TIMEOUT_MS, &r, err);
    if (st == AITK_E_NOMEM)
        return st;
    if (st) {
        /* No process could load it: not the library's fault, and no verdict. */
        cJSON_AddStringToObject(o, "load_skipped", aitk_str_cstr(err));
        aitk_str_clear(err);
        return AITK_OK;
    }
    aitk_str ver = AITK_STR_INIT;
    if (!r.loaded)
        aitk_str_append(err, aitk_str_cstr(&r.error));
    else if (r.n_values > 0)
        format_version(l->kind, r.values, &ver);
    else
        aitk_str_append(err, aitk_str_cstr(&r.fn_error));
    if (ver.len)
        cJSON_AddStringToObject(o, "loaded_version", aitk_str_cstr(&ver));
    aitk_str_free(&ver);
    aitk_libload_free(&r);
    return aitk_str_status(err) ? AITK_E_NOMEM : AITK_OK;
}
