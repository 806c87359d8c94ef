/* Host probe: OS, libc, CPU and its ISA, memory, free disk. What the
 * platform says comes from host_sys.h (host_linux.c, host_windows.c); the
 * judging rules come from the selected compat profile. */
#define _GNU_SOURCE
#include "validate/probes/host.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "common/alloc.h"
#include "common/fileio.h"
#include "validate/compat.h"
#include "validate/probes/host_sys.h"

#define GB 1e9 /* disk sizes are quoted in decimal GB, as vendors and the HF hub do */
#define GIB 1073741824.0

int aitk_version_compare(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
        if (ea == a && eb == b && (!isdigit((unsigned char)*a) || !isdigit((unsigned char)*b)))
            break; /* both stuck on a non-number: compare no further */
        if (!*ea && !*eb)
            break;
    }
    return 0;
}

/* The folder separator huggingface_hub's os.path.join writes: a path shown
 * to a Windows user is in Windows' one style (C:\Users\x\.cache\...). */
#ifdef _WIN32
#define SEP "\\"
#else
#define SEP "/"
#endif

aitk_status aitk_host_hf_home(aitk_str *dir, const char **why)
{
    const char *v;
    aitk_str_clear(dir);
    if ((v = getenv("HF_HOME")) && *v) {
        *why = "HF_HOME";
        return aitk_str_append(dir, v);
    }
    if ((v = getenv("XDG_CACHE_HOME")) && *v) {
        *why = "XDG_CACHE_HOME";
        return aitk_str_appendf(dir, "%s" SEP "huggingface", v);
    }
    const char *home = aitk_host_home();
    if (!home) {
        *why = "no home folder: HOME is not set and the user has none in the password database";
        return AITK_E_NOTFOUND;
    }
    *why = "default (~/.cache/huggingface)";
    return aitk_str_appendf(dir, "%s" SEP ".cache" SEP "huggingface", home);
}

aitk_status aitk_host_model_cache_dir(aitk_str *dir, const char **why)
{
    const char *v;
    aitk_str_clear(dir);
    if ((v = getenv("HF_HUB_CACHE")) && *v) {
        *why = "HF_HUB_CACHE";
        return aitk_str_append(dir, v);
    }
    if ((v = getenv("HUGGINGFACE_HUB_CACHE")) && *v) {
        *why = "HUGGINGFACE_HUB_CACHE";
        return aitk_str_append(dir, v);
    }
    aitk_status st = aitk_host_hf_home(dir, why);
    if (!st && strncmp(*why, "default", 7) == 0)
        *why = "default (~/.cache/huggingface/hub)";
    return st ? st : aitk_str_append(dir, SEP "hub");
}

static int has_flag(const char *flags, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = flags; (p = strstr(p, flag)); p += n)
        if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

static aitk_status add(aitk_run_ctx *ctx, const aitk_check *c) { return aitk_checklist_add(&ctx->checks, c); }

static aitk_status check_libc(aitk_run_ctx *ctx, cJSON *os)
{
#ifdef __GLIBC__
    const char *have = gnu_get_libc_version();
    aitk_str obs = AITK_STR_INIT, exp = AITK_STR_INIT;
    aitk_str_appendf(&obs, "glibc %s", have);
    cJSON_AddStringToObject(os, "libc", aitk_str_cstr(&obs));
    const aitk_yaml_node *rule = aitk_compat_rule(ctx->compat, "host", "min_glibc");
    const aitk_yaml_node *want = aitk_yaml_get(rule, "value");
    aitk_check c = {.id = "host.libc", .category = "host", .title = "C library (glibc)",
                    .observed = aitk_str_cstr(&obs)};
    if (!want || want->kind != AITK_YAML_SCALAR) {
        c.status = AITK_CHECK_SKIP;
        c.message = "the selected profile states no glibc minimum";
    } else {
        aitk_str_appendf(&exp, ">= %s", want->text);
        c.expected = aitk_str_cstr(&exp);
        c.source = aitk_compat_rule_source(rule);
        if (aitk_version_compare(have, want->text) >= 0) {
            c.status = AITK_CHECK_PASS;
            c.message = "new enough for the official PyTorch Linux wheels";
        } else {
            c.status = AITK_CHECK_FAIL;
            c.message = "older than the glibc the official PyTorch Linux wheels are built against";
            c.remedy = "Use a newer distribution (any current Debian, Ubuntu or RHEL release), "
                       "or run ai-toolkit in its Docker image.";
        }
    }
    aitk_status st = add(ctx, &c);
    aitk_str_free(&obs);
    aitk_str_free(&exp);
    return st;
#else
    (void)os;
    aitk_check c = {.id = "host.libc", .category = "host", .title = "C library",
                    .status = AITK_CHECK_SKIP, .message = "not a glibc system"};
    return add(ctx, &c);
#endif
}

static aitk_status check_model_cache(aitk_run_ctx *ctx, cJSON *disk)
{
    aitk_str dir = AITK_STR_INIT, probed = AITK_STR_INIT, obs = AITK_STR_INIT,
             exp = AITK_STR_INIT, flux = AITK_STR_INIT;
    const char *why = "";
    aitk_status st = aitk_host_model_cache_dir(&dir, &why);
    double freeb = 0;
    int ok = !st && aitk_host_free_bytes(aitk_str_cstr(&dir), &freeb, &probed) == 0;
    cJSON *mc = cJSON_AddObjectToObject(disk, "model_cache");
    cJSON_AddStringToObject(mc, "path", aitk_str_cstr(&dir));
    cJSON_AddStringToObject(mc, "chosen_by", why);
    /* A FLUX.1-dev already in the cache needs no new space. */
    aitk_path_join(&flux, aitk_str_cstr(&dir), "models--black-forest-labs--FLUX.1-dev");
    struct stat sb;
    int cached = stat(aitk_str_cstr(&flux), &sb) == 0 && S_ISDIR(sb.st_mode);
    cJSON_AddBoolToObject(mc, "flux1_dev_cached", cached);
    if (ok)
        cJSON_AddNumberToObject(mc, "free_bytes", freeb);

    const aitk_yaml_node *rule = aitk_compat_rule(ctx->compat, "host", "model_cache_free_gb");
    double need = 0;
    aitk_check c = {.id = "host.disk.model_cache", .category = "host",
                    .title = "Free disk for the model cache"};
    if (ok)
        aitk_str_appendf(&obs, "%.1f GB free in %s (cache folder from %s)", freeb / GB,
                         aitk_str_cstr(&probed), why);
    else if (st == AITK_E_NOTFOUND)
        aitk_str_appendf(&obs, "cache folder unknown: %s", why);
    if (st == AITK_E_NOTFOUND)
        st = AITK_OK; /* a finding, reported below */
    c.observed = aitk_str_cstr(&obs);
    if (!ok) {
        c.status = AITK_CHECK_WARN;
        c.message = "could not measure free space for the Hugging Face cache";
        c.remedy = "Set HF_HOME to a folder on a disk with room for the model weights.";
    } else if (!rule || aitk_yaml_double(ctx->compat->doc, aitk_yaml_get(rule, "value"), &need, NULL)) {
        c.status = AITK_CHECK_SKIP;
        c.message = "the selected profile states no model-cache size";
    } else {
        aitk_str_appendf(&exp, ">= %.0f GB free, or FLUX.1-dev already cached", need);
        c.expected = aitk_str_cstr(&exp);
        c.source = aitk_compat_rule_source(rule);
        if (cached) {
            c.status = AITK_CHECK_PASS;
            c.message = "FLUX.1-dev is already in the Hugging Face cache";
        } else if (freeb >= need * GB) {
            c.status = AITK_CHECK_PASS;
            c.message = "room to download FLUX.1-dev with its text encoders and VAE";
        } else {
            c.status = AITK_CHECK_WARN;
            c.message = "not enough free space to download FLUX.1-dev with its text encoders "
                        "and VAE into the Hugging Face cache";
            c.remedy = "Free disk space, or point HF_HOME (or HF_HUB_CACHE) at a larger disk "
                       "before the first training run.";
        }
    }
    st = add(ctx, &c);
    aitk_str_free(&dir);
    aitk_str_free(&probed);
    aitk_str_free(&obs);
    aitk_str_free(&exp);
    aitk_str_free(&flux);
    return st;
}

static aitk_status check_output_disk(aitk_run_ctx *ctx, cJSON *disk)
{
    const char *dir = ctx->output_dir ? ctx->output_dir : ".";
    aitk_str probed = AITK_STR_INIT, obs = AITK_STR_INIT;
    double freeb = 0;
    int ok = aitk_host_free_bytes(dir, &freeb, &probed) == 0;
    cJSON *od = cJSON_AddObjectToObject(disk, "output");
    cJSON_AddStringToObject(od, "path", dir);
    if (ok) {
        cJSON_AddNumberToObject(od, "free_bytes", freeb);
        aitk_str_appendf(&obs, "%.1f GB free in %s", freeb / GB, aitk_str_cstr(&probed));
    }
    aitk_check c = {.id = "host.disk.output", .category = "host", .title = "Free disk for reports",
                    .status = ok ? AITK_CHECK_PASS : AITK_CHECK_WARN,
                    .observed = aitk_str_cstr(&obs),
                    .message = ok ? "informational" : "could not measure free space for reports"};
    aitk_status st = add(ctx, &c);
    aitk_str_free(&probed);
    aitk_str_free(&obs);
    return st;
}

aitk_status aitk_host_checks(aitk_run_ctx *ctx)
{
    cJSON *host = cJSON_AddObjectToObject(ctx->env, "host");
    cJSON *os = host ? cJSON_AddObjectToObject(host, "os") : NULL;
    if (!os)
        return AITK_E_NOMEM;
    aitk_str obs = AITK_STR_INIT;
    aitk_host_read_os(host, os, &obs);
    aitk_check c = {.id = "host.os", .category = "host", .title = "Operating system",
                    .status = AITK_CHECK_PASS, .observed = aitk_str_cstr(&obs),
                    .message = "informational"};
    aitk_status st = add(ctx, &c);
    aitk_str_free(&obs);
    if (!st)
        st = check_libc(ctx, os);

    aitk_host_cpu ci;
    aitk_host_read_cpu(&ci);
    cJSON *cpu = cJSON_AddObjectToObject(host, "cpu");
    cJSON_AddStringToObject(cpu, "model", ci.model);
    cJSON_AddNumberToObject(cpu, "logical_cpus", (double)ci.logical);
    cJSON_AddNumberToObject(cpu, "physical_cores", (double)ci.physical);
    cJSON *isa = cJSON_AddObjectToObject(cpu, "isa");
    static const struct { const char *flag, *name; } isa_flags[] = {
        {"avx2", "avx2"}, {"fma", "fma"}, {"f16c", "f16c"}, {"avx512f", "avx512f"},
        {"avx512_bf16", "avx512_bf16"}, {"amx_tile", "amx_tile"}, {"amx_bf16", "amx_bf16"},
    };
    aitk_str isa_text = AITK_STR_INIT;
    for (size_t i = 0; i < sizeof isa_flags / sizeof *isa_flags; i++) {
        int on = has_flag(ci.flags, isa_flags[i].flag);
        cJSON_AddBoolToObject(isa, isa_flags[i].name, on);
        if (on)
            aitk_str_appendf(&isa_text, "%s%s", isa_text.len ? " " : "", isa_flags[i].name);
    }
    obs = (aitk_str)AITK_STR_INIT;
    aitk_str_appendf(&obs, "%s; %ld cores / %ld threads; %s", ci.model[0] ? ci.model : "unknown CPU",
                     ci.physical, ci.logical, isa_text.len ? aitk_str_cstr(&isa_text) : "no AVX2");
    aitk_check cc = {.id = "host.cpu", .category = "host", .title = "CPU",
                     .status = AITK_CHECK_PASS, .observed = aitk_str_cstr(&obs),
                     .message = "informational"};
    if (!st)
        st = add(ctx, &cc);
    aitk_str_free(&obs);
    aitk_str_free(&isa_text);

    cJSON *memory = cJSON_AddObjectToObject(host, "memory");
    obs = (aitk_str)AITK_STR_INIT;
    aitk_check mc = {.id = "host.memory", .category = "host", .title = "System memory"};
    double total = 0, avail = 0;
    const char *why = NULL;
    if (aitk_host_read_memory(&total, &avail, &why) == 0) {
        cJSON_AddNumberToObject(memory, "total_bytes", total);
        cJSON_AddNumberToObject(memory, "available_bytes", avail);
        aitk_str_appendf(&obs, "%.1f GiB total, %.1f GiB available", total / GIB, avail / GIB);
        mc.status = AITK_CHECK_PASS;
        mc.message = "informational";
    } else {
        mc.status = AITK_CHECK_SKIP;
        mc.message = why;
    }
    mc.observed = aitk_str_cstr(&obs);
    if (!st)
        st = add(ctx, &mc);
    aitk_str_free(&obs);

    cJSON *disk = cJSON_AddObjectToObject(host, "disk");
    if (!st)
        st = check_output_disk(ctx, disk);
    if (!st)
        st = check_model_cache(ctx, disk);
    return st;
}
