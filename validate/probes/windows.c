/* The Windows provider: loads windows.yaml and runs the Windows checks
 * (win_checks.h); elsewhere, reports each as skipped. */
#include "validate/probes/windows.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/data.h"
#ifdef _WIN32
#include "validate/probes/win_checks.h"
#endif

#define DATA_FILE "validate/probes/windows.yaml"

/* The checks, in report order: the ids a Linux report lists as skipped. */
static const struct {
    const char *id, *title;
} windows_checks[] = {
    {"windows.build", "Windows build"},
    {"windows.vcredist", "Visual C++ 2015-2022 x64 runtime"},
    {"windows.long_paths", "Long paths (LongPathsEnabled)"},
    {"windows.gpu_mode", "GPU driver model and display"},
    {"windows.user_profile", "User folder name"},
};

const char *aitk_windows_check_title(const char *id)
{
    for (size_t i = 0; i < sizeof windows_checks / sizeof *windows_checks; i++)
        if (strcmp(windows_checks[i].id, id) == 0)
            return windows_checks[i].title;
    return id;
}

/* section.key entries the checks read; each needs a value and a source. */
static const struct {
    const char *section, *key;
} required_entries[] = {
    {"vcredist", "min_version"}, {"vcredist", "dlls"}, {"vcredist", "download"},
    {"vcredist", "registry"},
};
/* Sections whose own source is what their check cites. */
static const char *const sourced_sections[] = {"long_paths", "build", "gpu_mode", "user_profile"};

static const aitk_yaml_node *entry(const aitk_yaml_doc *doc, const char *section, const char *key)
{
    const aitk_yaml_node *s = doc ? aitk_yaml_get(doc->root, section) : NULL;
    return key ? aitk_yaml_get(s, key) : s;
}

static const char *scalar(const aitk_yaml_node *n)
{
    return n && n->kind == AITK_YAML_SCALAR && n->text ? n->text : "";
}

const char *aitk_windows_data_value(const aitk_yaml_doc *doc, const char *section, const char *key)
{
    return scalar(aitk_yaml_get(entry(doc, section, key), "value"));
}

const char *aitk_windows_data_source(const aitk_yaml_doc *doc, const char *section,
                                     const char *key)
{
    return scalar(aitk_yaml_get(entry(doc, section, key), "source"));
}

aitk_status aitk_windows_data_load(aitk_yaml_doc **out, aitk_str *err)
{
    aitk_yaml_doc *doc = NULL;
    aitk_status st = aitk_data_load_schema(DATA_FILE, 1, &doc, err);
    for (size_t i = 0; !st && i < sizeof required_entries / sizeof *required_entries; i++) {
        const char *s = required_entries[i].section, *k = required_entries[i].key;
        if (!*aitk_windows_data_value(doc, s, k) || !*aitk_windows_data_source(doc, s, k)) {
            aitk_str_appendf(err, "%s: %s.%s needs a value and a source", DATA_FILE, s, k);
            st = AITK_E_PARSE;
        }
    }
    for (size_t i = 0; !st && i < sizeof sourced_sections / sizeof *sourced_sections; i++) {
        if (!*scalar(aitk_yaml_get(entry(doc, sourced_sections[i], NULL), "source"))) {
            aitk_str_appendf(err, "%s: %s needs a source", DATA_FILE, sourced_sections[i]);
            st = AITK_E_PARSE;
        }
    }
    if (st) {
        aitk_yaml_free(doc);
        return st;
    }
    *out = doc;
    return AITK_OK;
}

#ifdef _WIN32
aitk_status aitk_windows_checks(aitk_run_ctx *ctx)
{
    cJSON *rec = cJSON_AddObjectToObject(ctx->env, "windows");
    if (!rec)
        return AITK_E_NOMEM;
    aitk_yaml_doc *data = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_windows_data_load(&data, &err);
    if (st) {
        /* The file is compiled in: only a broken build gets here. */
        aitk_check c = {.id = "windows.data", .category = "windows", .title = "Windows check data",
                        .status = AITK_CHECK_FAIL, .observed = aitk_str_cstr(&err),
                        .message = "the Windows checks cannot run without their data",
                        .remedy = "Rebuild aitk-validate, or unset AITK_DATA_DIR if it points at "
                                  "an edited copy."};
        st = st == AITK_E_NOMEM ? st : aitk_checklist_add(&ctx->checks, &c);
        aitk_str_free(&err);
        return st;
    }
    aitk_status (*const run[])(aitk_run_ctx *, const aitk_yaml_doc *, cJSON *) = {
        aitk_win_build_check, aitk_win_vcredist_check, aitk_win_long_paths_check,
        aitk_win_gpu_mode_check, aitk_win_user_profile_check,
    };
    for (size_t i = 0; !st && i < sizeof run / sizeof *run; i++)
        st = run[i](ctx, data, rec);
    aitk_yaml_free(data);
    aitk_str_free(&err);
    return st;
}
#else
aitk_status aitk_windows_checks(aitk_run_ctx *ctx)
{
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < sizeof windows_checks / sizeof *windows_checks; i++) {
        aitk_check c = {.id = windows_checks[i].id, .category = "windows",
                        .title = windows_checks[i].title, .status = AITK_CHECK_SKIP,
                        .message = "Windows only"};
        st = aitk_checklist_add(&ctx->checks, &c);
    }
    return st;
}
#endif
