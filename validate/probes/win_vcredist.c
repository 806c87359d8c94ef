/* windows.vcredist: the Visual C++ 2015-2022 x64 runtime torch's DLLs
 * import. Two witnesses, because they can disagree: the key the
 * redistributable's installer writes (installed? which version?) and the
 * version resources of the DLLs actually in System32, which are what the
 * loader maps when torch\lib\c10.dll asks for msvcp140.dll. A missing DLL
 * is torch's WinError 126 ("Error loading ...\torch\lib\c10.dll or one of
 * its dependencies"); one older than the toolset torch was built with
 * crashes on the first mutex lock instead. */
#include <string.h>
#include <windows.h>

#include "common/alloc.h"
#include "common/wide.h"
#include "validate/probes/host.h"
#include "validate/probes/win_checks.h"
#include "validate/probes/win_sys.h"
#include "validate/probes/windows.h"

typedef struct registry_view {
    bool key, installed;
    bool has_installed; /* the Installed value exists */
    bool wow32;       /* found in the 32-bit view (Wow6432Node), not the 64-bit one */
    aitk_str version; /* "14.40.33810" (Major.Minor.Bld), else the Version text without its 'v' */
    aitk_str text;    /* the Version value as written, "v14.40.33810.00" */
} registry_view;

/* The key's values in one view. Microsoft documents Version and
 * Major/Minor/Bld/Rbld; the installer also writes Installed=1. A key with a
 * version but no Installed value counts as installed, an explicit
 * Installed=0 does not. */
static void read_view(aitk_win_reg_view view, const wchar_t *key, registry_view *r)
{
    r->key = aitk_win_reg_key_exists(view, key);
    r->wow32 = view == AITK_WIN_REG_32;
    if (!r->key)
        return;
    DWORD installed = 0, major = 0, minor = 0, bld = 0;
    r->has_installed = aitk_win_reg_dword(view, key, L"Installed", &installed);
    aitk_win_reg_string(view, key, L"Version", &r->text);
    if (aitk_win_reg_dword(view, key, L"Major", &major) &&
        aitk_win_reg_dword(view, key, L"Minor", &minor) &&
        aitk_win_reg_dword(view, key, L"Bld", &bld))
        aitk_str_appendf(&r->version, "%lu.%lu.%lu", (unsigned long)major, (unsigned long)minor,
                         (unsigned long)bld);
    else if (r->text.len)
        aitk_str_append(&r->version, aitk_str_cstr(&r->text) + (r->text.ptr[0] == 'v'));
    r->installed = r->has_installed ? installed == 1 : r->version.len > 0;
}

static void view_free(registry_view *r)
{
    aitk_str_free(&r->version);
    aitk_str_free(&r->text);
}

/* The x64 redistributable's key, in the 64-bit view and else in the
 * 32-bit one: its bootstrapper is a 32-bit program, and Microsoft Learn
 * names the key under Wow6432Node (windows.yaml's source), so a machine
 * can hold it in either. The view that records an installation wins. */
static void read_registry(const char *key_text, registry_view *r, cJSON *rec)
{
    /* windows.yaml names the key as people write it, "HKLM\SOFTWARE\..." */
    const char *sub = strncmp(key_text, "HKLM\\", 5) == 0 ? key_text + 5 : key_text;
    wchar_t *key = aitk_wide(sub);
    registry_view v64 = {0}, v32 = {0};
    if (key) {
        read_view(AITK_WIN_REG_64, key, &v64);
        read_view(AITK_WIN_REG_32, key, &v32);
    }
    bool use32 = v32.key && (!v64.key || (v32.installed && !v64.installed));
    *r = use32 ? v32 : v64;
    view_free(use32 ? &v64 : &v32);

    cJSON *o = cJSON_AddObjectToObject(rec, "registry");
    cJSON_AddStringToObject(o, "key", key_text);
    cJSON_AddBoolToObject(o, "present", r->key);
    cJSON_AddStringToObject(o, "view", !r->key ? "none" : r->wow32 ? "32-bit" : "64-bit");
    if (r->key) {
        cJSON_AddBoolToObject(o, "installed", r->installed);
        if (r->text.len)
            cJSON_AddStringToObject(o, "version_text", aitk_str_cstr(&r->text));
        if (r->version.len)
            cJSON_AddStringToObject(o, "version", aitk_str_cstr(&r->version));
    }
    aitk_free(key);
}

typedef struct dll_tally {
    aitk_str missing, old, unversioned; /* names, ", "-separated */
} dll_tally;

static void list_add(aitk_str *list, const char *name)
{
    aitk_str_appendf(list, "%s%s", list->len ? ", " : "", name);
}

/* One DLL of windows.yaml's list, looked for in System32. */
static void read_dll(const wchar_t *sys32, const char *name, const char *min, cJSON *dlls,
                     aitk_str *obs, dll_tally *t)
{
    aitk_str path = AITK_STR_INIT;
    aitk_win_utf8(sys32, &path);
    aitk_str_appendf(&path, "\\%s", name);
    wchar_t *wpath = aitk_wide(aitk_str_cstr(&path));
    cJSON *d = cJSON_CreateObject();
    cJSON_AddItemToArray(dlls, d);
    cJSON_AddStringToObject(d, "name", name);
    cJSON_AddStringToObject(d, "path", aitk_str_cstr(&path));
    unsigned v[4] = {0, 0, 0, 0};
    DWORD attr = wpath ? GetFileAttributesW(wpath) : INVALID_FILE_ATTRIBUTES;
    if (attr == INVALID_FILE_ATTRIBUTES || (attr & FILE_ATTRIBUTE_DIRECTORY)) {
        cJSON_AddBoolToObject(d, "present", false);
        aitk_str_appendf(obs, "%s%s MISSING", obs->len ? ", " : "", name);
        list_add(&t->missing, name);
    } else if (!aitk_win_file_version(wpath, v)) {
        cJSON_AddBoolToObject(d, "present", true);
        aitk_str_appendf(obs, "%s%s (no version resource)", obs->len ? ", " : "", name);
        list_add(&t->unversioned, name);
    } else {
        char ver[64];
        snprintf(ver, sizeof ver, "%u.%u.%u.%u", v[0], v[1], v[2], v[3]);
        cJSON_AddBoolToObject(d, "present", true);
        cJSON_AddStringToObject(d, "version", ver);
        aitk_str_appendf(obs, "%s%s %s", obs->len ? ", " : "", name, ver);
        if (aitk_version_compare(ver, min) < 0)
            list_add(&t->old, name);
    }
    aitk_free(wpath);
    aitk_str_free(&path);
}

aitk_status aitk_win_vcredist_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec)
{
    const char *min = aitk_windows_data_value(data, "vcredist", "min_version");
    const char *download = aitk_windows_data_value(data, "vcredist", "download");
    cJSON *o = cJSON_AddObjectToObject(rec, "vcredist");
    registry_view reg = {0};
    read_registry(aitk_windows_data_value(data, "vcredist", "registry"), &reg, o);

    aitk_str obs = AITK_STR_INIT, dll_obs = AITK_STR_INIT, exp = AITK_STR_INIT,
             msg = AITK_STR_INIT, fix = AITK_STR_INIT, src = AITK_STR_INIT;
    dll_tally t = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    wchar_t sys32[MAX_PATH];
    cJSON *dlls = cJSON_AddArrayToObject(o, "dlls");
    if (aitk_win_system32(sys32, MAX_PATH)) {
        /* The list is space-separated in windows.yaml. */
        const char *p = aitk_windows_data_value(data, "vcredist", "dlls");
        while (*p) {
            size_t n = strcspn(p, " ");
            if (n) {
                char *name = aitk_strndup(p, n);
                if (name)
                    read_dll(sys32, name, min, dlls, &dll_obs, &t);
                aitk_free(name);
            }
            p += n + (p[n] == ' ');
        }
    } else {
        aitk_str_append(&dll_obs, "System32 unknown (GetSystemDirectoryW failed)");
        list_add(&t.unversioned, "System32");
    }

    if (!reg.key)
        aitk_str_append(&obs, "registry: no redistributable key");
    else
        aitk_str_appendf(&obs, "registry%s: %s%s%s", reg.wow32 ? " (32-bit view)" : "",
                         !reg.has_installed ? "no Installed value"
                         : reg.installed    ? "Installed=1"
                                            : "Installed is not 1",
                         reg.version.len ? ", version " : "", aitk_str_cstr(&reg.version));
    aitk_str_appendf(&obs, "; System32: %s", aitk_str_cstr(&dll_obs));
    aitk_str_appendf(&exp, "Installed=1 and every DLL present, all >= %s", min);
    aitk_str_appendf(&src, "%s; %s; %s", aitk_windows_data_source(data, "vcredist", "min_version"),
                     aitk_windows_data_source(data, "vcredist", "registry"),
                     aitk_windows_data_source(data, "vcredist", "dlls"));
    aitk_str_appendf(&fix, "Install the latest Visual C++ 2015-2022 x64 Redistributable (%s; "
                           "choose Repair if it says it is installed), restart if it asks, "
                           "then run this check again.", download);

    aitk_check c = {.id = "windows.vcredist", .category = "windows",
                    .title = aitk_windows_check_title("windows.vcredist"),
                    .observed = aitk_str_cstr(&obs), .expected = aitk_str_cstr(&exp),
                    .source = aitk_str_cstr(&src)};
    bool reg_old = reg.key && reg.version.len &&
                   aitk_version_compare(aitk_str_cstr(&reg.version), min) < 0;
    if (t.missing.len) {
        c.status = AITK_CHECK_FAIL;
        aitk_str_appendf(&msg, "%s %s missing from System32: torch cannot load (import torch "
                               "fails with [WinError 126] Error loading \"...\\torch\\lib\\c10.dll\" "
                               "or one of its dependencies)",
                         aitk_str_cstr(&t.missing), strchr(aitk_str_cstr(&t.missing), ',') ? "are" : "is");
    } else if (t.old.len) {
        c.status = AITK_CHECK_FAIL;
        aitk_str_appendf(&msg, "%s in System32 %s older than %s: torch's DLLs, built with a newer "
                               "Visual C++ toolset, can crash on load or on the first lock",
                         aitk_str_cstr(&t.old), strchr(aitk_str_cstr(&t.old), ',') ? "are" : "is", min);
    } else if (reg_old) {
        c.status = AITK_CHECK_FAIL;
        aitk_str_appendf(&msg, "the installed redistributable is %s, older than %s",
                         aitk_str_cstr(&reg.version), min);
    } else if (!reg.key || !reg.installed) {
        c.status = AITK_CHECK_WARN;
        aitk_str_append(&msg, "the runtime DLLs are in System32 but the Visual C++ "
                              "redistributable is not recorded as installed: another program "
                              "copied them, and Windows will not keep them up to date");
    } else if (t.unversioned.len) {
        c.status = AITK_CHECK_WARN;
        aitk_str_appendf(&msg, "the version of %s could not be read, so whether it is new enough "
                               "is unknown", aitk_str_cstr(&t.unversioned));
    } else {
        c.status = AITK_CHECK_PASS;
        aitk_str_appendf(&msg, "the Visual C++ %s runtime is installed and its DLLs are new enough",
                         aitk_str_cstr(&reg.version));
    }
    c.message = aitk_str_cstr(&msg);
    c.remedy = c.status == AITK_CHECK_PASS ? "" : aitk_str_cstr(&fix);
    aitk_status st = aitk_checklist_add(&ctx->checks, &c);
    aitk_str *all[] = {&obs, &dll_obs, &exp, &msg, &fix, &src, &reg.version, &reg.text, &t.missing, &t.old,
                       &t.unversioned};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        aitk_str_free(all[i]);
    return st;
}
