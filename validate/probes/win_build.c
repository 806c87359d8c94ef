/* windows.build: the Windows build, from ntdll's RtlGetVersion. GetVersionEx
 * answers what the program's manifest declares (Windows 8 for a program
 * that declares nothing newer), so it cannot tell an old Windows 10 from a
 * new one. The minimum is the selected profile's host.min_windows_build. */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

#include "validate/compat.h"
#include "validate/probes/win_checks.h"
#include "validate/probes/win_sys.h"
#include "validate/probes/windows.h"

typedef LONG(WINAPI *rtl_get_version_fn)(OSVERSIONINFOW *);

static bool true_version(OSVERSIONINFOW *vi)
{
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    rtl_get_version_fn rtl =
        ntdll ? (rtl_get_version_fn)(void (*)(void))GetProcAddress(ntdll, "RtlGetVersion") : NULL;
    vi->dwOSVersionInfoSize = sizeof *vi;
    return rtl && rtl(vi) == 0;
}

aitk_status aitk_win_build_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec)
{
    OSVERSIONINFOW vi = {0};
    bool known = true_version(&vi);
    /* The update revision (19045.4291's 4291): informational, from the
     * registry, as winver shows it. */
    DWORD ubr = 0;
    bool has_ubr = aitk_win_reg_dword(AITK_WIN_REG_64,
                                      L"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion", L"UBR",
                                      &ubr);
    aitk_str obs = AITK_STR_INIT, exp = AITK_STR_INIT, src = AITK_STR_INIT, msg = AITK_STR_INIT;
    cJSON *b = cJSON_AddObjectToObject(rec, "build");
    if (known) {
        cJSON_AddNumberToObject(b, "major", vi.dwMajorVersion);
        cJSON_AddNumberToObject(b, "minor", vi.dwMinorVersion);
        cJSON_AddNumberToObject(b, "build", vi.dwBuildNumber);
        if (has_ubr)
            cJSON_AddNumberToObject(b, "update_revision", ubr);
        aitk_str_appendf(&obs, "Windows %lu.%lu build %lu", (unsigned long)vi.dwMajorVersion,
                         (unsigned long)vi.dwMinorVersion, (unsigned long)vi.dwBuildNumber);
        if (has_ubr)
            aitk_str_appendf(&obs, ".%lu", (unsigned long)ubr);
        aitk_str_append(&obs, " (RtlGetVersion)");
    } else {
        aitk_str_append(&obs, "RtlGetVersion did not answer");
    }
    const aitk_yaml_node *rule = aitk_compat_rule(ctx->compat, "host", "min_windows_build");
    const char *min_text = aitk_compat_rule_text(rule);
    aitk_check c = {.id = "windows.build", .category = "windows",
                    .title = aitk_windows_check_title("windows.build"),
                    .observed = aitk_str_cstr(&obs)};
    aitk_str_appendf(&src, "%s; %s", min_text ? aitk_compat_rule_source(rule) : "",
                     aitk_windows_data_source(data, "build", NULL));
    c.source = min_text ? aitk_str_cstr(&src) : aitk_windows_data_source(data, "build", NULL);
    if (!min_text) {
        c.status = AITK_CHECK_SKIP;
        c.message = "the selected profile states no minimum Windows build";
    } else if (!known) {
        c.status = AITK_CHECK_WARN;
        c.message = "the Windows version could not be read, so whether it is new enough is unknown";
        c.remedy = "Run winver and compare its build with the minimum; update Windows if it is "
                   "older.";
    } else {
        unsigned long min = strtoul(min_text, NULL, 10);
        aitk_str_appendf(&exp, "build >= %lu", min);
        c.expected = aitk_str_cstr(&exp);
        if (vi.dwBuildNumber >= min) {
            c.status = AITK_CHECK_PASS;
            aitk_str_appendf(&msg, "build %lu is at or above the %lu the profile '%s' requires",
                             (unsigned long)vi.dwBuildNumber, min,
                             ctx->profile_name ? ctx->profile_name : "default");
        } else {
            c.status = aitk_compat_rule_severity(rule);
            aitk_str_appendf(&msg, "build %lu is older than the build %lu the profile '%s' "
                                   "requires: torch's Windows wheels and NVIDIA's current "
                                   "drivers are built for newer Windows",
                             (unsigned long)vi.dwBuildNumber, min,
                             ctx->profile_name ? ctx->profile_name : "default");
            c.remedy = "Update Windows (Settings > Windows Update; Windows 10 22H2 is build "
                       "19045, Windows 11 starts at build 22000), then run this check again.";
        }
        c.message = aitk_str_cstr(&msg);
    }
    aitk_status st = aitk_checklist_add(&ctx->checks, &c);
    aitk_str *all[] = {&obs, &exp, &src, &msg};
    for (size_t i = 0; i < 4; i++)
        aitk_str_free(all[i]);
    return st;
}
