/* The lint. The flag table (which variable, when it is a problem, why, source)
 * lives in compat.yaml's env_flags; CUDA_VISIBLE_DEVICES, the allocator
 * configuration and CUDA versions on the search paths need parsing, so they
 * are here. */
#define _GNU_SOURCE
#include "validate/probes/envlint.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/str.h"
#include "validate/compat.h"
#include "validate/probes/gpu_util.h"

/* The only names a report may contain. secret: the value is never shown. */
static const struct allowed {
    const char *name;
    int secret;
} allow[] = {
    {"CUDA_VISIBLE_DEVICES", 0}, {"CUDA_DEVICE_ORDER", 0}, {"CUDA_HOME", 0}, {"CUDA_PATH", 0},
    {"CUDA_MODULE_LOADING", 0}, {"CUDA_LAUNCH_BLOCKING", 0}, {"CUDA_INJECTION64_PATH", 0},
    {"CUDA_INJECTION32_PATH", 0}, {"NSIGHT_CUDA_DEBUGGER", 0}, {"CUDA_AUTO_BOOST", 0},
    {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", 0}, {"CUDA_COREDUMP_FILE", 0},
    {"CUDA_DEVICE_WAITS_ON_EXCEPTION", 0}, {"CUDA_PROFILE", 0}, {"COMPUTE_PROFILE", 0},
    {"PYTORCH_CUDA_ALLOC_CONF", 0}, {"PYTORCH_ALLOC_CONF", 0}, {"PYTORCH_ENABLE_MPS_FALLBACK", 0},
    {"PYTORCH_MPS_HIGH_WATERMARK_RATIO", 0}, {"KMP_DUPLICATE_LIB_OK", 0}, {"OMP_NUM_THREADS", 0},
    {"TORCH_CUDA_ARCH_LIST", 0}, {"NCCL_DEBUG", 0}, {"NCCL_P2P_DISABLE", 0}, {"NCCL_IB_DISABLE", 0},
    {"NVIDIA_VISIBLE_DEVICES", 0}, {"NVIDIA_DRIVER_CAPABILITIES", 0}, {"HF_HOME", 0},
    {"HF_HUB_CACHE", 0}, {"HF_HUB_OFFLINE", 0}, {"HF_HUB_ENABLE_HF_TRANSFER", 0},
    {"VIRTUAL_ENV", 0}, {"CONDA_PREFIX", 0},
    {"HF_TOKEN", 1}, {"HUGGING_FACE_HUB_TOKEN", 1},
};

static aitk_status add(aitk_run_ctx *ctx, const aitk_check *c)
{
    return aitk_checklist_add(&ctx->checks, c);
}

static void record_variables(cJSON *rec)
{
    for (size_t i = 0; i < sizeof allow / sizeof *allow; i++) {
        const char *v = getenv(allow[i].name);
        if (!v)
            continue;
        cJSON_AddStringToObject(rec, allow[i].name, allow[i].secret ? "(set; value not shown)" : v);
    }
}

static int is_flagged(const char *rule, const char *value)
{
    if (strcmp(rule, "set") == 0)
        return 1;
    if (strcmp(rule, "not-macos") == 0) {
#ifdef __APPLE__
        return 0;
#else
        return 1;
#endif
    }
    return strcasecmp(rule, value) == 0;
}

static aitk_status check_flags(aitk_run_ctx *ctx)
{
    const aitk_yaml_node *t = aitk_compat_table(ctx->compat, "env_flags");
    aitk_str obs = AITK_STR_INIT, msg = AITK_STR_INIT, fix = AITK_STR_INIT, src = AITK_STR_INIT;
    aitk_check_status status = AITK_CHECK_PASS;
    size_t checked = 0;
    for (size_t i = 0; t && i < t->count; i++) {
        const char *name = t->pairs[i].key->text;
        const aitk_yaml_node *row = t->pairs[i].value;
        const char *rule = aitk_compat_rule_text(row);
        const char *v = getenv(name);
        checked++;
        if (!v || !rule || !is_flagged(rule, v))
            continue;
        aitk_check_status sev = aitk_compat_rule_severity(row);
        if (sev > status)
            status = sev;
        const aitk_yaml_node *note = aitk_yaml_get(row, "note");
        aitk_str_appendf(&obs, "%s%s=%s", obs.len ? ", " : "", name, v);
        aitk_str_appendf(&msg, "%s: %s. ", name,
                         note && note->kind == AITK_YAML_SCALAR ? note->text : "flagged");
        aitk_str_appendf(&fix, "%s%s", fix.len ? " " : "unset ", name);
        if (!strstr(aitk_str_cstr(&src), aitk_compat_rule_source(row)))
            aitk_str_appendf(&src, "%s%s", src.len ? "; " : "", aitk_compat_rule_source(row));
    }
    if (status == AITK_CHECK_PASS) {
        aitk_str_append(&obs, "none set");
        aitk_str_appendf(&msg, "none of the %zu variables that slow or mislead CUDA training is set",
                         checked);
        aitk_str_append(&src, "compat.yaml env_flags (the DCGM software plugin's list, and each "
                              "variable's own documentation)");
    } else {
        aitk_str_append(&fix, " (and remove it from shell profiles, .env files or the launcher)");
    }
    aitk_check c = {.id = "env.flags", .category = "env", .title = "CUDA / torch variables",
                    .status = status, .observed = aitk_str_cstr(&obs), .expected = "none set",
                    .message = aitk_str_cstr(&msg), .remedy = aitk_str_cstr(&fix),
                    .source = aitk_str_cstr(&src)};
    aitk_status st = add(ctx, &c);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    aitk_str_free(&fix);
    aitk_str_free(&src);
    return st;
}

/* CUDA reads the list left to right and stops at the first entry it cannot
 * use: an index past the last GPU or a malformed entry hides it and every
 * entry after it; an empty list or -1 hides all GPUs. */
static aitk_status check_visible_devices(aitk_run_ctx *ctx)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (!v)
        return AITK_OK;
    const cJSON *devices = aitk_gpu_devices(ctx->env);
    int gpus = devices ? cJSON_GetArraySize(devices) : -1;
    aitk_str obs = AITK_STR_INIT, msg = AITK_STR_INIT, exp = AITK_STR_INIT;
    aitk_str_appendf(&obs, "CUDA_VISIBLE_DEVICES=%s", v);
    if (gpus >= 0)
        aitk_str_appendf(&obs, " (%d GPU%s installed)", gpus, gpus == 1 ? "" : "s");
    aitk_str_append(&exp, "GPU indices, UUIDs (GPU-...) or MIG ids, comma-separated");
    if (gpus >= 0)
        aitk_str_appendf(&exp, "; indices below %d", gpus);
    int usable = 0, stopped = 0;
    for (const char *p = v; *p && !stopped;) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, ",");
        char *tok = aitk_strndup(p, n);
        if (!tok)
            break;
        for (size_t k = strlen(tok); k > 0 && tok[k - 1] == ' '; k--)
            tok[k - 1] = '\0';
        char *end = NULL;
        long idx = strtol(tok, &end, 10);
        if (strncmp(tok, "GPU-", 4) == 0 || strncmp(tok, "MIG-", 4) == 0) {
            usable++;
        } else if (!*tok || end == tok || *end || idx < 0 || (gpus >= 0 && idx >= gpus)) {
            aitk_str_appendf(&msg, "'%s' is %s: CUDA ignores it and every entry after it. ", tok,
                             (!*tok || end == tok || *end) ? "not a GPU index or UUID"
                             : idx < 0                     ? "negative"
                                                           : "past the last GPU");
            stopped = 1;
        } else {
            usable++;
        }
        aitk_free(tok);
        p += n;
        if (*p == ',')
            p++;
    }
    aitk_check c = {.id = "env.cuda_visible_devices", .category = "env",
                    .title = "CUDA_VISIBLE_DEVICES", .observed = aitk_str_cstr(&obs),
                    .expected = aitk_str_cstr(&exp),
                    .source = "CUDA C programming guide, CUDA environment variables: "
                              "CUDA_VISIBLE_DEVICES"};
    if (usable == 0) {
        c.status = AITK_CHECK_FAIL;
        aitk_str_append(&msg, "It hides every GPU: torch.cuda.is_available() is False.");
        c.remedy = "unset CUDA_VISIBLE_DEVICES, or set it to the index of the GPU to train on "
                   "(e.g. CUDA_VISIBLE_DEVICES=0).";
    } else if (stopped) {
        c.status = AITK_CHECK_WARN;
        aitk_str_appendf(&msg, "%d GPU%s visible.", usable, usable == 1 ? " stays" : "s stay");
        c.remedy = "List only valid indices (see nvidia-smi -L).";
    } else {
        c.status = AITK_CHECK_PASS;
        aitk_str_appendf(&msg, "%d GPU%s visible to CUDA", usable, usable == 1 ? "" : "s");
    }
    c.message = aitk_str_cstr(&msg);
    aitk_status st = add(ctx, &c);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    aitk_str_free(&exp);
    return st;
}

static int is_uint(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* torch's CUDACachingAllocator config: "key:value,key:value"; list values
 * in brackets may hold commas ("roundup_power2_divisions:[256:1,512:2]"). */
aitk_status aitk_envlint_alloc_conf(const char *text, aitk_str *why)
{
    static const char *const bools[] = {"expandable_segments", "release_lock_on_cudamalloc",
                                        "pinned_use_cuda_host_register",
                                        "pinned_use_background_threads", NULL};
    for (const char *p = text; *p;) {
        size_t n = 0;
        int depth = 0;
        while (p[n] && (depth > 0 || p[n] != ',')) {
            depth += p[n] == '[' ? 1 : p[n] == ']' ? -1 : 0;
            n++;
        }
        char *item = aitk_strndup(p, n);
        if (!item)
            return AITK_E_NOMEM;
        char *colon = strchr(item, ':');
        aitk_status st = AITK_OK;
        if (!colon) {
            aitk_str_appendf(why, "'%s' is not key:value%s", item,
                             strchr(item, '=') ? " (torch uses ':' here, not '=')" : "");
            st = AITK_E_PARSE;
        } else {
            *colon = '\0';
            const char *k = item, *v = colon + 1;
            int is_bool = 0;
            for (const char *const *b = bools; *b; b++)
                is_bool |= strcmp(k, *b) == 0;
            if (is_bool) {
                if (strcmp(v, "True") != 0 && strcmp(v, "False") != 0) {
                    aitk_str_appendf(why, "%s expects True or False, found '%s'", k, v);
                    st = AITK_E_PARSE;
                }
            } else if (strcmp(k, "max_split_size_mb") == 0 ||
                       strcmp(k, "pinned_num_register_threads") == 0) {
                if (!is_uint(v)) {
                    aitk_str_appendf(why, "%s expects a whole number, found '%s'", k, v);
                    st = AITK_E_PARSE;
                }
            } else if (strcmp(k, "garbage_collection_threshold") == 0) {
                char *end = NULL;
                double d = strtod(v, &end);
                if (end == v || *end || !(d > 0.0 && d < 1.0)) {
                    aitk_str_appendf(why, "%s expects a number between 0 and 1, found '%s'", k, v);
                    st = AITK_E_PARSE;
                }
            } else if (strcmp(k, "backend") == 0) {
                if (strcmp(v, "native") != 0 && strcmp(v, "cudaMallocAsync") != 0) {
                    aitk_str_appendf(why, "backend expects native or cudaMallocAsync, found '%s'", v);
                    st = AITK_E_PARSE;
                }
            } else if (strcmp(k, "roundup_power2_divisions") == 0) {
                if (!is_uint(v) && v[0] != '[') {
                    aitk_str_appendf(why, "%s expects a number or a [size:divisions,...] list", k);
                    st = AITK_E_PARSE;
                }
            } else {
                aitk_str_appendf(why, "unknown option '%s' (torch stops with \"Unrecognized "
                                      "CachingAllocator option\")", k);
                st = AITK_E_PARSE;
            }
        }
        aitk_free(item);
        if (st)
            return st;
        p += n;
        if (*p == ',')
            p++;
    }
    return AITK_OK;
}

static aitk_status check_alloc_conf(aitk_run_ctx *ctx)
{
    static const char *const names[] = {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"};
    aitk_status st = AITK_OK;
    for (size_t i = 0; i < 2 && !st; i++) {
        const char *v = getenv(names[i]);
        if (!v)
            continue;
        aitk_str why = AITK_STR_INIT, obs = AITK_STR_INIT, id = AITK_STR_INIT;
        aitk_str_appendf(&obs, "%s=%s", names[i], v);
        aitk_str_appendf(&id, "env.%s", i == 0 ? "pytorch_cuda_alloc_conf" : "pytorch_alloc_conf");
        aitk_status pst = aitk_envlint_alloc_conf(v, &why);
        aitk_check c = {.id = aitk_str_cstr(&id), .category = "env", .title = names[i],
                        .status = pst ? AITK_CHECK_FAIL : AITK_CHECK_PASS,
                        .observed = aitk_str_cstr(&obs),
                        .expected = "key:value pairs torch knows, comma-separated "
                                    "(e.g. expandable_segments:True)",
                        .message = pst ? aitk_str_cstr(&why) : "torch can parse it",
                        .remedy = pst ? "Fix or unset the variable; a common good value is "
                                        "expandable_segments:True" : "",
                        .source = "PyTorch CUDA semantics, 'Optimizing memory usage with "
                                  "PYTORCH_CUDA_ALLOC_CONF'"};
        st = pst == AITK_E_NOMEM ? pst : add(ctx, &c);
        aitk_str_free(&why);
        aitk_str_free(&obs);
        aitk_str_free(&id);
    }
    return st;
}

/* strcasestr, which is a GNU extension (and absent from mingw-w64). */
static const char *find_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return hay;
    }
    return NULL;
}

/* "…/cuda-12.4/bin" -> "12.4"; "/usr/local/cuda/bin" -> the version of
 * the folder the symlink points to. */
static void cuda_version_of(const char *entry, aitk_str *out)
{
    char *real = aitk_realpath(entry);
    const char *s = real ? real : entry;
    const char *p = find_ci(s, "cuda");
    while (p) {
        const char *q = p + 4;
        if (*q == '-' || *q == '/' || *q == '\\' || *q == '_')
            q++;
        if (*q == 'v' || *q == 'V')
            q++;
        if (isdigit((unsigned char)*q)) {
            size_t n = strspn(q, "0123456789.");
            while (n > 0 && q[n - 1] == '.')
                n--;
            aitk_str_appendn(out, q, n);
            break;
        }
        p = find_ci(p + 4, "cuda");
    }
    free(real);
}

/* WSL appends Windows' PATH to Linux's, its drives mounted at /mnt/<letter>
 * (Microsoft Learn, Advanced settings configuration in WSL, wsl.conf
 * [interop] appendWindowsPath and [automount] root, default /mnt/). A
 * Windows CUDA toolkit's bin folder there holds nvcc.exe and DLLs that no
 * Linux program loads: not a second CUDA version for this system. */
static bool windows_drive_under_wsl(const char *entry)
{
#ifdef _WIN32
    (void)entry;
    return false;
#else
    return strncmp(entry, "/mnt/", 5) == 0 && isalpha((unsigned char)entry[5]) &&
           entry[6] == '/';
#endif
}

static aitk_status check_cuda_paths(aitk_run_ctx *ctx, cJSON *rec)
{
    static const char *const vars[] = {"PATH", "LD_LIBRARY_PATH"};
    /* Windows separates PATH entries with ';' (each entry has a ':' after
     * its drive letter); Windows has no LD_LIBRARY_PATH. */
#ifdef _WIN32
    const char *sep = ";";
    const size_t nvars = 1;
#else
    const char *sep = ":";
    const size_t nvars = 2;
#endif
    aitk_str obs = AITK_STR_INIT, versions = AITK_STR_INIT;
    int distinct = 0;
    cJSON *found = cJSON_AddArrayToObject(rec, "cuda_on_search_paths");
    for (size_t i = 0; i < nvars; i++) {
        const char *v = getenv(vars[i]);
        for (const char *p = v; p && *p;) {
            size_t n = strcspn(p, sep);
            char *entry = aitk_strndup(p, n);
            p += n;
            if (*p == *sep)
                p++;
            if (!entry) {
                aitk_str_free(&obs);
                aitk_str_free(&versions);
                return AITK_E_NOMEM;
            }
            aitk_str ver = AITK_STR_INIT, seen = AITK_STR_INIT;
            aitk_str_appendf(&seen, "%s: %s", vars[i], entry);
            if (find_ci(entry, "cuda") && !strstr(aitk_str_cstr(&obs), aitk_str_cstr(&seen)) &&
                !windows_drive_under_wsl(entry))
                cuda_version_of(entry, &ver);
            aitk_str_free(&seen);
            if (ver.len) {
                /* Only CUDA folders are reported: the rest of PATH may name private folders. */
                aitk_str_appendf(&obs, "%s%s: %s", obs.len ? "; " : "", vars[i], entry);
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "variable", vars[i]);
                cJSON_AddStringToObject(o, "entry", entry);
                cJSON_AddStringToObject(o, "cuda_version", aitk_str_cstr(&ver));
                cJSON_AddItemToArray(found, o);
                /* versions holds ", 12.4, 13.0, " style entries so lookups match whole items. */
                aitk_str key = AITK_STR_INIT;
                aitk_str_appendf(&key, ", %s, ", aitk_str_cstr(&ver));
                if (!strstr(aitk_str_cstr(&versions), aitk_str_cstr(&key))) {
                    aitk_str_appendf(&versions, "%s%s, ", versions.len ? "" : ", ",
                                     aitk_str_cstr(&ver));
                    distinct++;
                }
                aitk_str_free(&key);
            }
            aitk_str_free(&ver);
            aitk_free(entry);
        }
    }
    aitk_check c = {.id = "env.cuda_paths", .category = "env",
                    .title = "CUDA versions on PATH / LD_LIBRARY_PATH",
                    .observed = obs.len ? aitk_str_cstr(&obs) : "no CUDA folder",
                    .expected = "at most one CUDA version",
                    .source = "ld.so and PATH search order: the first folder wins, so mixed "
                              "CUDA folders load libraries from different releases "
                              "(ld.so(8), https://man7.org/linux/man-pages/man8/ld.so.8.html; "
                              "Microsoft, Dynamic-link library search order, "
                              "https://learn.microsoft.com/en-us/windows/win32/dlls/"
                              "dynamic-link-library-search-order)"};
    aitk_str msg = AITK_STR_INIT;
    if (distinct > 1) {
        c.status = AITK_CHECK_WARN;
        aitk_str_appendf(&msg, "%d CUDA versions are on the search paths (%.*s): tools and "
                               "libraries may come from different releases",
                         distinct, (int)(versions.len - 4), aitk_str_cstr(&versions) + 2);
#ifdef _WIN32
        c.remedy = "Keep one CUDA toolkit's bin folder in PATH (System Properties > Environment "
                   "Variables; the toolkit installers add theirs at the front) and CUDA_PATH "
                   "pointing at it; torch from pip needs none of them.";
#else
        c.remedy = "Keep one CUDA folder in PATH and LD_LIBRARY_PATH (usually /usr/local/cuda, "
                   "a symlink to the version you want); torch from pip needs none of them.";
#endif
    } else {
        c.status = AITK_CHECK_PASS;
        aitk_str_append(&msg, distinct ? "one CUDA version on the search paths"
                                       : "no CUDA folder on the search paths (torch's pip "
                                         "wheels bring their own libraries)");
    }
    c.message = aitk_str_cstr(&msg);
    aitk_status st = add(ctx, &c);
    aitk_str_free(&obs);
    aitk_str_free(&versions);
    aitk_str_free(&msg);
    return st;
}

aitk_status aitk_envlint_checks(aitk_run_ctx *ctx)
{
    cJSON *rec = cJSON_AddObjectToObject(ctx->env, "environment_variables");
    cJSON *vars = rec ? cJSON_AddObjectToObject(rec, "set") : NULL;
    if (!vars)
        return AITK_E_NOMEM;
    record_variables(vars);
    aitk_status st = check_flags(ctx);
    if (!st)
        st = check_visible_devices(ctx);
    if (!st)
        st = check_alloc_conf(ctx);
    if (!st)
        st = check_cuda_paths(ctx, rec);
    return st;
}
