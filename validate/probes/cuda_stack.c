/* Finding and versioning the CUDA user-space libraries. Reading headers is
 * what lets --quick give a version without loading a 500 MB library; the
 * header beside a library (../include) is only trusted for the library in
 * the same installation. */
#define _GNU_SOURCE
#include "validate/probes/cuda_stack.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/dynload.h"
#include "common/fileio.h"
#include "common/str.h"
#include "reports/fields.h"
#include "validate/probes/cuda_lib.h"
#include "validate/probes/gpu_util.h"
#include "validate/probes/python.h"


typedef aitk_cuda_lib cuda_lib;

static const cuda_lib libs[] = {
    {"cudart", "CUDA runtime (cudart)", "libcudart", "nvidia-cuda-runtime", "cuda_runtime",
     "cuda_runtime_api.h", VER_RUNTIME},
    {"cublas", "cuBLAS", "libcublas", "nvidia-cublas", "cublas", "cublas_api.h", VER_CUBLAS},
    {"cublaslt", "cuBLASLt", "libcublasLt", "nvidia-cublas", "cublas", "cublas_api.h",
     VER_CUBLASLT},
    {"cudnn", "cuDNN", "libcudnn", "nvidia-cudnn", "cudnn", "cudnn_version.h", VER_CUDNN},
    {"nccl", "NCCL", "libnccl", "nvidia-nccl", "nccl", "nccl.h", VER_NCCL},
};

long aitk_header_define(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; (p = strstr(p, "#define")) != NULL; p++) {
        const char *q = p + 7;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, name, n) != 0 || (q[n] != ' ' && q[n] != '\t'))
            continue;
        q += n;
        while (*q == ' ' || *q == '\t' || *q == '(')
            q++;
        char *end = NULL;
        long v = strtol(q, &end, 10);
        if (end != q)
            return v;
    }
    return -1;
}

#ifdef _WIN32
/* Windows names: the stem, the major version, ".dll" (cudart64_12.dll,
 * cublasLt64_12.dll, cudnn64_9.dll), as the CUDA installer and torch\lib
 * ship them. NCCL has no Windows build. */
static const char *windows_stem(const cuda_lib *l)
{
    static const struct { const char *key, *stem; } stems[] = {
        {"cudart", "cudart64_"}, {"cublas", "cublas64_"}, {"cublaslt", "cublasLt64_"},
        {"cudnn", "cudnn64_"},
    };
    for (size_t i = 0; i < sizeof stems / sizeof *stems; i++)
        if (strcmp(stems[i].key, l->key) == 0)
            return stems[i].stem;
    return NULL;
}

int aitk_cuda_names_lib(const cuda_lib *l, const char *name)
{
    const char *stem = windows_stem(l);
    size_t n = stem ? strlen(stem) : 0;
    if (!stem || strncmp(name, stem, n) != 0)
        return 0;
    size_t digits = strspn(name + n, "0123456789");
    return digits > 0 && strcmp(name + n + digits, ".dll") == 0;
}

/* "cudart64_12.dll" -> "12". */
void aitk_cuda_soname_version(const char *file, aitk_str *out)
{
    const char *us = strrchr(file, '_');
    if (us)
        aitk_str_appendn(out, us + 1, strspn(us + 1, "0123456789"));
}

#define VERSIONED_MARK ".dll"
#else
/* Does `name` name this library ("libcudart.so.13", "libcudart-d0da41ae.so.11.0")
 * and not another with the same stem (libcublasLt vs libcublas)? */
int aitk_cuda_names_lib(const cuda_lib *l, const char *name)
{
    size_t n = strlen(l->stem);
    if (strncmp(name, l->stem, n) != 0)
        return 0;
    return strncmp(name + n, ".so", 3) == 0 || name[n] == '-';
}

/* "libcudart.so.13.0.96" -> "13.0.96"; "" for an unversioned name. */
void aitk_cuda_soname_version(const char *file, aitk_str *out)
{
    const char *so = strstr(file, ".so.");
    if (so)
        aitk_str_append(out, so + 4);
}

#define VERSIONED_MARK ".so."
#endif

/* Finds this library in `dir`: the versioned soname preferred over the
 * bare development symlink (which the loader never asks for). */
static int find_in_dir(const cuda_lib *l, const char *dir, aitk_str *path)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char best[256] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!aitk_cuda_names_lib(l, e->d_name) || strlen(e->d_name) >= sizeof best)
            continue;
        /* Shortest versioned name: libcudart.so.13 rather than libcudart.so.13.0.96. */
        int versioned = strstr(e->d_name, VERSIONED_MARK) != NULL;
        int best_versioned = strstr(best, VERSIONED_MARK) != NULL;
        if (!*best || (versioned && !best_versioned) ||
            (versioned == best_versioned && strlen(e->d_name) < strlen(best)))
            strcpy(best, e->d_name);
    }
    closedir(d);
    if (!*best)
        return 0;
    aitk_path_join(path, dir, best);
    return 1;
}

typedef struct search_dir {
    char *dir;
    char *real; /* the folder it resolves to: /usr/local/cuda/lib64 is often a symlink */
    const char *why;
} search_dir;

typedef struct search_path {
    search_dir *dirs;
    size_t count, cap;
} search_path;

/* Adds a folder that exists and is not already searched under another name. */
static void sp_add(search_path *sp, const char *dir, const char *why)
{
    char *resolved = aitk_realpath(dir);
    if (!resolved)
        return;
    char *real = aitk_strdup(resolved);
    free(resolved);
    if (!real)
        return;
    for (size_t i = 0; i < sp->count; i++) {
        if (strcmp(sp->dirs[i].real, real) == 0) {
            aitk_free(real);
            return;
        }
    }
    search_dir *p = aitk_grow(sp->dirs, sizeof *p, sp->count, &sp->cap, 16);
    if (!p) {
        aitk_free(real);
        return;
    }
    sp->dirs = p;
    char *copy = aitk_strdup(dir);
    if (copy)
        sp->dirs[sp->count++] = (search_dir){copy, real, why};
    else
        aitk_free(real);
}

static void sp_free(search_path *sp)
{
    for (size_t i = 0; i < sp->count; i++) {
        aitk_free(sp->dirs[i].dir);
        aitk_free(sp->dirs[i].real);
    }
    aitk_free(sp->dirs);
}

/* torch/lib, then every site-packages/nvidia/<x>/lib, then the system. */
static void build_search_path(const cJSON *pyenv, search_path *sp)
{
    const cJSON *torch = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(pyenv, "packages"), "torch");
    aitk_str p = AITK_STR_INIT;
    if (torch) {
        aitk_path_join(&p, aitk_field_str(torch, "site"), "torch/lib");
        sp_add(sp, aitk_str_cstr(&p), "torch/lib");
    }
    const cJSON *site;
    cJSON_ArrayForEach(site, cJSON_GetObjectItemCaseSensitive(pyenv, "site_packages"))
    {
        aitk_str_clear(&p);
        aitk_path_join(&p, aitk_field_str(site, "path"), "nvidia");
        DIR *d = opendir(aitk_str_cstr(&p));
        struct dirent *e;
        char *names[64];
        size_t n = 0;
        while (d && (e = readdir(d)) != NULL && n < 64)
            if (e->d_name[0] != '.')
                names[n++] = aitk_strdup(e->d_name);
        if (d)
            closedir(d);
        for (size_t i = 0; i < n; i++) {
            if (!names[i])
                continue;
            aitk_str lib = AITK_STR_INIT;
            aitk_str_appendf(&lib, "%s/%s/lib", aitk_str_cstr(&p), names[i]);
            sp_add(sp, aitk_str_cstr(&lib), "site-packages/nvidia");
            aitk_str_free(&lib);
            aitk_free(names[i]);
        }
    }
#ifdef _WIN32
    /* Then the CUDA installer's bin folder and PATH, which LoadLibrary's
     * legacy search (torch's fallback) walks. */
    const char *cuda_path = getenv("CUDA_PATH");
    if (cuda_path && *cuda_path) {
        aitk_str_clear(&p);
        aitk_str_appendf(&p, "%s\\bin", cuda_path);
        sp_add(sp, aitk_str_cstr(&p), "CUDA_PATH");
    }
    const char *env_dirs = getenv("PATH"), *env_name = "PATH", *sep = ";";
#else
    const char *env_dirs = getenv("LD_LIBRARY_PATH"), *env_name = "LD_LIBRARY_PATH", *sep = ":";
#endif
    for (const char *s = env_dirs; s && *s;) {
        size_t n = strcspn(s, sep);
        char *dir = aitk_strndup(s, n);
        if (dir && *dir)
            sp_add(sp, dir, env_name);
        aitk_free(dir);
        s += n;
        if (*s == *sep)
            s++;
    }
#ifndef _WIN32
    static const char *const sys[] = {"/usr/local/cuda/lib64",
                                      "/usr/local/cuda/targets/x86_64-linux/lib",
                                      "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", NULL};
    for (const char *const *s = sys; *s; s++)
        sp_add(sp, *s, "system");
#endif
    aitk_str_free(&p);
}

/* Every copy of the library along the search order, with its --quick
 * version; the first is the one the loader takes. */
static aitk_status collect_candidates(const cuda_lib *l, const search_path *sp,
                                      const cJSON *pyenv, cJSON *cands)
{
    aitk_str path = AITK_STR_INIT;
    for (size_t i = 0; i < sp->count; i++) {
        aitk_str_clear(&path);
        if (!find_in_dir(l, sp->dirs[i].dir, &path))
            continue;
        cJSON *c = cJSON_CreateObject();
        if (!c || !cJSON_AddItemToArray(cands, c)) {
            cJSON_Delete(c);
            aitk_str_free(&path);
            return AITK_E_NOMEM;
        }
        cJSON_AddStringToObject(c, "path", aitk_str_cstr(&path));
        cJSON_AddStringToObject(c, "found_in", sp->dirs[i].why);
        aitk_cuda_quick_version(l, aitk_str_cstr(&path), sp->dirs[i].why, pyenv, c);
    }
    aitk_str_free(&path);
    return AITK_OK;
}

/* "12.4.5" (what cublasGetProperty says) agrees with "12.4.5.8" (the
 * wheel's version), and "9" (a file name) with "9.1.0": the shorter one's
 * numbers start the longer. */
static bool version_agrees(const char *a, const char *b)
{
    if (strlen(a) > strlen(b)) {
        const char *t = a;
        a = b, b = t;
    }
    size_t n = strlen(a);
    return n && strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '.');
}

/* The version reported: at --quick the one read without loading; beyond,
 * the library's own answer, written as fully as the quick source writes it
 * when that agrees and says more, so both levels name one version for one
 * file (12.4.5.8 at both, not 12.4.5.8 and 12.4.5). */
static const char *reported_version(const cJSON *chosen, const cJSON *o)
{
    const char *quick = aitk_field_str(chosen, "version");
    const char *loaded = aitk_field_str(o, "loaded_version");
    if (!*loaded || (version_agrees(loaded, quick) && strlen(quick) >= strlen(loaded)))
        return quick;
    return loaded;
}

/* torch's own copy is missing: its wheel's RECORD lists a file the disk
 * lacks, so another copy (often the system's) would be found in its place,
 * of another version. */
static bool judge_missing_wheel_file(const cuda_lib *l, const cJSON *pyenv, aitk_check *c,
                                     aitk_str *obs, aitk_str *fix)
{
    aitk_str pkg = AITK_STR_INIT, ver = AITK_STR_INIT, missing = AITK_STR_INIT;
    bool gone = aitk_cuda_wheel_file_missing(l, pyenv, &pkg, &ver, &missing);
    if (gone) {
        c->status = AITK_CHECK_FAIL;
        aitk_str_appendf(obs, "%s%s of %s %s is missing", obs->len ? "; " : "",
                         aitk_str_cstr(&missing), aitk_str_cstr(&pkg), aitk_str_cstr(&ver));
        c->message = "torch's own copy of this library (from its nvidia-* wheel) is missing: "
                     "torch cannot load it, and a copy found elsewhere is not the version "
                     "torch was built with";
        aitk_str_appendf(fix, "pip install --force-reinstall --no-deps %s==%s",
                         aitk_str_cstr(&pkg), aitk_str_cstr(&ver));
        c->remedy = aitk_str_cstr(fix);
    }
    aitk_str_free(&pkg);
    aitk_str_free(&ver);
    aitk_str_free(&missing);
    return gone;
}

/* The found library: its version and, beyond --quick, whether it loads. */
static aitk_status judge_found(aitk_run_ctx *ctx, const cuda_lib *l, cJSON *o, aitk_check *c,
                               aitk_str *obs, aitk_str *err)
{
    const cJSON *cands = cJSON_GetObjectItemCaseSensitive(o, "candidates");
    const cJSON *chosen = cJSON_GetArrayItem(cands, 0);
    const char *first = aitk_field_str(chosen, "path"), *why = aitk_field_str(chosen, "found_in");
    cJSON_AddBoolToObject(o, "found", 1);
    cJSON_AddStringToObject(o, "path", first);
    cJSON_AddStringToObject(o, "found_in", why);
    if (ctx->level >= AITK_LEVEL_STANDARD && aitk_cuda_loaded_version(l, first, o, err))
        return AITK_E_NOMEM;
    const char *ver = reported_version(chosen, o);
    if (*ver)
        cJSON_AddStringToObject(o, "version", ver);
    const char *loaded = aitk_field_str(o, "loaded_version");
    const char *from = aitk_field_str(chosen, "version_from");
    aitk_str_appendf(obs, "%s %s (%s; version from ", first, *ver ? ver : "version unknown", why);
    if (*loaded && ver == loaded)
        aitk_str_append(obs, "the library itself");
    else
        aitk_str_appendf(obs, "%s%s", *from ? from : "nowhere",
                         *loaded ? ", confirmed by the library itself" : "");
    aitk_str_append(obs, ")");
    c->status = AITK_CHECK_PASS;
    if (*loaded && ver == loaded && *from &&
        !version_agrees(loaded, aitk_field_str(chosen, "version")))
        aitk_str_appendf(obs, "; %s says %s: this file is not the one it describes", from,
                         aitk_field_str(chosen, "version"));
    c->message = cJSON_GetArraySize(cands) > 1
                     ? "found; other copies further down the search order are listed in the "
                       "report (the first one wins)"
                     : "found";
    if (err->len) {
        c->status = AITK_CHECK_FAIL;
        cJSON_AddStringToObject(o, "load_error", aitk_str_cstr(err));
        aitk_str_appendf(obs, ": %s", aitk_str_cstr(err));
        c->message = "the library is there but does not load: a dependency is missing or it "
                     "is damaged";
        c->remedy = "Run `aitk-validate deps` for the dependency tree; reinstall the package "
                    "that owns this file.";
    }
    return AITK_OK;
}

static aitk_status probe_lib(aitk_run_ctx *ctx, const cuda_lib *l, const search_path *sp,
                             const cJSON *pyenv, cJSON *rec)
{
    cJSON *o = cJSON_AddObjectToObject(rec, l->key);
    cJSON *cands = o ? cJSON_AddArrayToObject(o, "candidates") : NULL;
    if (!cands || collect_candidates(l, sp, pyenv, cands))
        return AITK_E_NOMEM;
    aitk_str obs = AITK_STR_INIT, err = AITK_STR_INIT, fix = AITK_STR_INIT, id = AITK_STR_INIT;
    aitk_str_appendf(&id, "cuda.%s", l->key);
    aitk_check c = {.id = aitk_str_cstr(&id), .category = "cuda", .title = l->title,
                    .expected = "found where torch looks; version readable",
                    .source = "torch's library search: torch/lib, site-packages/nvidia/*/lib "
                              "(RPATH of libtorch_cuda.so), then the system loader; DCGM r1 "
                              "'CUDA toolkit libraries'"};
    aitk_status st = AITK_OK;
    if (!cJSON_GetArraySize(cands)) {
        cJSON_AddBoolToObject(o, "found", 0);
        c.status = AITK_CHECK_WARN;
        aitk_str_append(&obs, "not found");
        c.message = "not found in torch/lib, site-packages/nvidia or the system folders; torch's "
                    "pip wheels bring their own, but the GPU plugin and a system-wide setup need it";
        c.remedy = "pip install torch from download.pytorch.org (it pulls the nvidia-* packages), "
                   "or install the CUDA toolkit / libcudnn / libnccl packages for your CUDA version.";
    } else {
        st = judge_found(ctx, l, o, &c, &obs, &err);
    }
    judge_missing_wheel_file(l, pyenv, &c, &obs, &fix);
    c.observed = aitk_str_cstr(&obs);
    if (!st)
        st = aitk_str_status(&obs) || aitk_str_status(&fix) ? AITK_E_NOMEM
                                                            : aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&id);
    aitk_str_free(&obs);
    aitk_str_free(&err);
    aitk_str_free(&fix);
    return st;
}

static bool contains_ci(const char *hay, const char *needle)
{
    for (; *hay; hay++) {
        size_t k = 0;
        while (needle[k] && tolower((unsigned char)hay[k]) == needle[k])
            k++;
        if (!needle[k])
            return true;
    }
    return false;
}

/* A folder some probed library was found in (a candidate's path is the
 * folder joined with the file name). */
static bool holds_candidate(const cJSON *rec, const char *dir)
{
    size_t n = strlen(dir);
    const cJSON *lib, *c;
    cJSON_ArrayForEach(lib, rec)
    {
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(lib, "candidates"))
        {
            const char *path = aitk_field_str(c, "path");
            if (strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\\'))
                return true;
        }
    }
    return false;
}

/* The folders searched, in order. A folder that came from LD_LIBRARY_PATH
 * (PATH on Windows) is listed only when it matters to CUDA: a library was
 * found there, or its name says CUDA or NVIDIA. The others are counted, not
 * named, for the reason envlint.c gives: the rest of those variables may
 * name private folders, and a report names only what it needs. Torch's,
 * pip's and the system's folders are always listed. */
static aitk_status fill_search_order(cJSON *rec, const search_path *sp, const char *env_name)
{
    cJSON *order = cJSON_AddArrayToObject(rec, "search_order");
    if (!order)
        return AITK_E_NOMEM;
    int hidden = 0;
    for (size_t i = 0; i < sp->count; i++) {
        const char *dir = sp->dirs[i].dir;
        if (strcmp(sp->dirs[i].why, env_name) == 0 && !holds_candidate(rec, dir) &&
            !contains_ci(dir, "cuda") && !contains_ci(dir, "nvidia")) {
            hidden++;
            continue;
        }
        if (!cJSON_AddItemToArray(order, cJSON_CreateString(dir)))
            return AITK_E_NOMEM;
    }
    if (hidden && !cJSON_AddNumberToObject(rec, "search_order_unlisted", hidden))
        return AITK_E_NOMEM;
    return AITK_OK;
}

aitk_status aitk_cuda_stack_checks(aitk_run_ctx *ctx)
{
    cJSON *rec = cJSON_AddObjectToObject(ctx->env, "cuda_stack");
    if (!rec)
        return AITK_E_NOMEM;
    const cJSON *pyenv = aitk_python_selected(ctx->env);
    search_path sp = {0};
    build_search_path(pyenv, &sp);
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < sizeof libs / sizeof *libs; i++) {
#ifdef _WIN32
        if (!windows_stem(&libs[i])) {
            aitk_str id = AITK_STR_INIT;
            aitk_str_appendf(&id, "cuda.%s", libs[i].key);
            aitk_check c = {.id = aitk_str_cstr(&id), .category = "cuda", .title = libs[i].title,
                            .status = AITK_CHECK_SKIP,
                            .message = "not used on Windows (torch's Windows wheels have no NCCL)"};
            st = aitk_str_status(&id) ? AITK_E_NOMEM : aitk_checklist_add(&ctx->checks, &c);
            aitk_str_free(&id);
            continue;
        }
#endif
        st = probe_lib(ctx, &libs[i], &sp, pyenv, rec);
    }
#ifdef _WIN32
    const char *env_name = "PATH";
#else
    const char *env_name = "LD_LIBRARY_PATH";
#endif
    if (!st)
        st = fill_search_order(rec, &sp, env_name);
    if (!st && pyenv)
        st = aitk_cuda_wheel_check(ctx, pyenv);
    sp_free(&sp);
    return st;
}
