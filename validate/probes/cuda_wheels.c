/* The nvidia-* pip wheels of an environment: which one owns a library file
 * (its RECORD, PEP 376 / PEP 627: one "path,hash,size" line per installed
 * file, relative to site-packages), which CUDA major each is for, and
 * whether the environment mixes majors (pip upgrading torch to a cu13 build
 * leaves the cu12 wheels beside the new ones). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/str.h"
#include "reports/fields.h"
#include "validate/probes/cuda_lib.h"
#include "validate/probes/gpu_util.h"

#define RECORD_MAX (8 * 1024 * 1024)

/* The RECORD text of a package's install Python imports (the first of
 * pyenv's "installs", its dist-info folder); NULL if none. */
static char *read_record(const cJSON *pkg)
{
    const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pkg, "installs"), 0);
    const char *meta = aitk_field_str(first, "metadata");
    if (!*meta)
        return NULL;
    aitk_str path = AITK_STR_INIT;
    aitk_path_join(&path, meta, "RECORD");
    char *text = NULL;
    size_t len = 0;
    if (aitk_file_read(aitk_str_cstr(&path), RECORD_MAX, &text, &len, NULL) != AITK_OK)
        text = NULL;
    aitk_str_free(&path);
    return text;
}

/* Calls `fn` on each path of a RECORD text until it returns true. */
static bool each_record_path(const char *text, bool (*fn)(const char *, size_t, void *), void *arg)
{
    for (const char *line = text; line && *line;) {
        size_t n = strcspn(line, ",\r\n");
        if (n && fn(line, n, arg))
            return true;
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return false;
}

static bool is_nvidia(const cJSON *pkg)
{
    return pkg->string && strncmp(pkg->string, "nvidia-", 7) == 0;
}

static bool same_path(const char *rec, size_t n, void *arg)
{
    const char *rel = arg;
    return strlen(rel) == n && strncmp(rec, rel, n) == 0;
}

bool aitk_cuda_wheel_owner(const cJSON *pyenv, const char *path, aitk_str *pkg, aitk_str *ver)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(pyenv, "packages"))
    {
        const char *site = aitk_field_str(p, "site");
        size_t n = strlen(site);
        if (!is_nvidia(p) || !n || strncmp(path, site, n) != 0 || (path[n] != '/' && path[n] != '\\'))
            continue;
        char *text = read_record(p);
        bool found = text && each_record_path(text, same_path, (void *)(path + n + 1));
        aitk_free(text);
        if (found) {
            aitk_str_append(pkg, p->string);
            aitk_str_append(ver, aitk_field_str(p, "version"));
            return true;
        }
    }
    return false;
}

static bool cu_folder(const char *rec, size_t n, void *arg)
{
    if (n < 10 || strncmp(rec, "nvidia/cu", 9) != 0)
        return false;
    char *end = NULL;
    long m = strtol(rec + 9, &end, 10);
    if (end == rec + 9 || *end != '/')
        return false;
    *(int *)arg = (int)m;
    return true;
}

int aitk_cuda_wheel_major(const char *name, const cJSON *pkg)
{
    const char *cu = strrchr(name, '-');
    if (cu && strncmp(cu, "-cu", 3) == 0 && cu[3] >= '0' && cu[3] <= '9')
        return atoi(cu + 3);
    int major = 0;
    char *text = read_record(pkg);
    if (text)
        each_record_path(text, cu_folder, &major);
    aitk_free(text);
    return major;
}

typedef struct missing_ctx {
    const aitk_cuda_lib *l;
    const char *site;
    aitk_str *missing;
} missing_ctx;

/* A versioned file of this library the RECORD lists and the disk lacks. */
static bool lib_missing(const char *rec, size_t n, void *arg)
{
    missing_ctx *m = arg;
    char *rel = aitk_strndup(rec, n);
    if (!rel)
        return false;
    const char *base = aitk_path_last_separator(rel);
    base = base ? base + 1 : rel;
    bool gone = false;
    if (aitk_cuda_names_lib(m->l, base) && strstr(base, ".so.")) {
        aitk_str full = AITK_STR_INIT;
        aitk_path_join(&full, m->site, rel);
        struct stat sb;
        gone = stat(aitk_str_cstr(&full), &sb) != 0;
        if (gone)
            aitk_str_append(m->missing, aitk_str_cstr(&full));
        aitk_str_free(&full);
    }
    aitk_free(rel);
    return gone;
}

/* The CUDA major torch was built for ("12.4" -> 12); 0 when unknown. */
static int torch_major(const cJSON *pyenv)
{
    const char *cuda = aitk_field_str(cJSON_GetObjectItemCaseSensitive(pyenv, "torch"), "cuda");
    return *cuda ? atoi(cuda) : 0;
}

bool aitk_cuda_wheel_file_missing(const aitk_cuda_lib *l, const cJSON *pyenv, aitk_str *pkg,
                                  aitk_str *ver, aitk_str *missing)
{
    int want = torch_major(pyenv);
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(pyenv, "packages"))
    {
        if (strncmp(p->string, l->pip, strlen(l->pip)) != 0)
            continue;
        int major = aitk_cuda_wheel_major(p->string, p);
        if (want && major && major != want)
            continue;
        char *text = read_record(p);
        missing_ctx m = {l, aitk_field_str(p, "site"), missing};
        bool gone = text && each_record_path(text, lib_missing, &m);
        aitk_free(text);
        if (gone) {
            aitk_str_append(pkg, p->string);
            aitk_str_append(ver, aitk_field_str(p, "version"));
            return true;
        }
    }
    return false;
}

/* "name version (cuNN)" of each nvidia-* wheel of CUDA major `major`. */
static void list_major(const cJSON *pkgs, int major, aitk_str *out, aitk_str *names)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, pkgs)
    {
        if (!is_nvidia(p) || aitk_cuda_wheel_major(p->string, p) != major)
            continue;
        aitk_str_appendf(out, "%s%s %s", out->len ? ", " : "", p->string,
                         aitk_field_str(p, "version"));
        if (names)
            aitk_str_appendf(names, " %s", p->string);
    }
}

aitk_status aitk_cuda_wheel_check(aitk_run_ctx *ctx, const cJSON *pyenv)
{
    const cJSON *pkgs = cJSON_GetObjectItemCaseSensitive(pyenv, "packages");
    int majors[8], n = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, pkgs)
    {
        int m = is_nvidia(p) ? aitk_cuda_wheel_major(p->string, p) : 0;
        bool seen = m == 0;
        for (int i = 0; i < n && !seen; i++)
            seen = majors[i] == m;
        if (!seen && n < 8)
            majors[n++] = m;
    }
    if (!n)
        return AITK_OK;
    int want = torch_major(pyenv);
    aitk_str obs = AITK_STR_INIT, msg = AITK_STR_INIT, fix = AITK_STR_INIT, stray = AITK_STR_INIT;
    for (int i = 0; i < n; i++) {
        aitk_str names = AITK_STR_INIT;
        list_major(pkgs, majors[i], &names, want && majors[i] != want ? &stray : NULL);
        aitk_str_appendf(&obs, "%scu%d: %s", i ? "; " : "", majors[i], aitk_str_cstr(&names));
        aitk_str_free(&names);
    }
    aitk_check c = {.id = "cuda.nvidia_wheels", .category = "cuda",
                    .title = "nvidia-* wheels of one CUDA version",
                    .expected = want ? "only wheels for torch's CUDA major" : "one CUDA major",
                    .source = "PyTorch's wheels depend on nvidia-*-cu<major> packages of one "
                              "CUDA version (torch METADATA Requires-Dist); the cu13 wheels "
                              "install into site-packages/nvidia/cu13"};
    if (n == 1) {
        c.status = AITK_CHECK_PASS;
        aitk_str_appendf(&msg, "every nvidia-* wheel is for CUDA %d", majors[0]);
    } else {
        c.status = AITK_CHECK_WARN;
        aitk_str_appendf(&msg, "nvidia-* wheels of %d CUDA major versions are installed side by "
                               "side; a library can be found in the wrong one, and versions "
                               "read from the wrong wheel", n);
        if (want)
            aitk_str_appendf(&msg, " (torch is built for CUDA %d)", want);
        if (stray.len)
            aitk_str_appendf(&fix, "pip uninstall -y%s (the wheels torch does not use)",
                             aitk_str_cstr(&stray));
        else
            aitk_str_append(&fix, "Keep the wheels of the CUDA version torch is built for: "
                                  "pip uninstall the others.");
    }
    c.observed = aitk_str_cstr(&obs);
    c.message = aitk_str_cstr(&msg);
    c.remedy = fix.len ? aitk_str_cstr(&fix) : NULL;
    aitk_status st = aitk_str_status(&obs) || aitk_str_status(&msg) || aitk_str_status(&fix)
                         ? AITK_E_NOMEM
                         : aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    aitk_str_free(&fix);
    aitk_str_free(&stray);
    return st;
}
