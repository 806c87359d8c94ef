/* The Windows checks on a system that is not Windows: each is in the report
 * as skipped, "Windows only" (as host.libc is skipped on Windows), so the
 * list of checks is the same everywhere. And their data file, compiled into
 * every build, holds what the Windows build will compare with. The checks
 * themselves run under Wine: tests/windows/test_windows_checks.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "probe_test.h"
#include "validate/probes/windows.h"

static void test_skipped_as_windows_only(void **state)
{
    (void)state;
    static const char *const ids[] = {"windows.build", "windows.vcredist", "windows.long_paths",
                                      "windows.gpu_mode", "windows.user_profile"};
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, NULL, &rc);
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        const cJSON *c = pt_check(r, ids[i]);
        pt_assert_status(c, "skip");
        assert_string_equal(pt_text(c, "message"), "Windows only");
        assert_string_equal(pt_text(c, "category"), "windows");
    }
    /* Nothing Windows-only is recorded as a fact here. */
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "environment"),
                                                 "windows"));
    cJSON_Delete(r);
}

static void test_data_file(void **state)
{
    (void)state;
    aitk_yaml_doc *doc = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_windows_data_load(&doc, &err))
        fail_msg("windows.yaml: %s", aitk_str_cstr(&err));
    assert_string_equal(aitk_windows_data_value(doc, "vcredist", "min_version"), "14.40.33810");
    assert_string_equal(aitk_windows_data_value(doc, "vcredist", "dlls"),
                        "vcruntime140.dll vcruntime140_1.dll msvcp140.dll vcomp140.dll");
    assert_string_equal(aitk_windows_data_value(doc, "vcredist", "registry"),
                        "HKLM\\SOFTWARE\\Microsoft\\VisualStudio\\14.0\\VC\\Runtimes\\x64");
    pt_assert_contains(aitk_windows_data_source(doc, "vcredist", "min_version"),
                       "https://github.com/microsoft/STL/wiki/Changelog#vs-2022-1710");
    pt_assert_contains(aitk_windows_data_source(doc, "long_paths", NULL),
                       "https://learn.microsoft.com/en-us/windows/win32/fileio/"
                       "maximum-file-path-limitation");
    aitk_yaml_free(doc);
    aitk_str_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skipped_as_windows_only),
        cmocka_unit_test(test_data_file),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
