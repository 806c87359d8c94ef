/* windows.long_paths: LongPathsEnabled. Without it a path is limited to 260
 * characters (MAX_PATH) for programs such as pip and Python, and a venv in a
 * user folder plus a deep site-packages path (nvidia\cu13\include\...,
 * transformers' model folders) passes that: pip stops with "Could not
 * install packages due to an OSError: [Errno 2] No such file or directory".
 * Off is Windows' default, so it is a warning, with the one-line fix. */
#include <windows.h>

#include "validate/probes/win_checks.h"
#include "validate/probes/win_sys.h"
#include "validate/probes/windows.h"

aitk_status aitk_win_long_paths_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec)
{
    DWORD v = 0;
    bool set = aitk_win_reg_dword(AITK_WIN_REG_64,
                                  L"SYSTEM\\CurrentControlSet\\Control\\FileSystem",
                                  L"LongPathsEnabled", &v);
    if (set)
        cJSON_AddNumberToObject(rec, "long_paths_enabled", v);
    else
        cJSON_AddNullToObject(rec, "long_paths_enabled");
    aitk_check c = {.id = "windows.long_paths", .category = "windows",
                    .title = aitk_windows_check_title("windows.long_paths"),
                    .observed = !set ? "LongPathsEnabled is not set (Windows' default: off)"
                                : v == 1 ? "LongPathsEnabled = 1"
                                         : "LongPathsEnabled = 0",
                    .expected = "LongPathsEnabled = 1 under "
                                "HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem",
                    .source = aitk_windows_data_source(data, "long_paths", NULL)};
    if (set && v == 1) {
        c.status = AITK_CHECK_PASS;
        c.message = "paths longer than 260 characters work for pip and Python";
    } else {
        c.status = AITK_CHECK_WARN;
        c.message = "paths are limited to 260 characters: pip fails on the deep paths of some "
                    "packages inside a venv (\"Could not install packages due to an OSError\")";
        c.remedy = "In PowerShell run as administrator: New-ItemProperty -Path "
                   "\"HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem\" -Name "
                   "\"LongPathsEnabled\" -Value 1 -PropertyType DWORD -Force ; then open a new "
                   "terminal (the Python installer's \"Disable path length limit\" does the same).";
    }
    return aitk_checklist_add(&ctx->checks, &c);
}
