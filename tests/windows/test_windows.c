/* The Windows build on Windows (Wine in CI): the real aitk-validate.exe,
 * started with CreateProcess, finds the classic broken link of a torch 2.4.0
 * install, fbgemm.dll -> libomp140.x86_64.dll, using this system's own
 * System32 (no --windows-root) and, with --load, LoadLibraryExW's own
 * verdict; and writes a report whose host section says Windows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "common/fileio.h"
#include "common/proc.h"

#define TORCH_LIB AITK_WIN_FIXTURES "/pe/env/Lib/site-packages/torch/lib"

typedef struct run {
    int exit_code;
    aitk_str out, err;
} run;

/* Runs aitk-validate.exe with `args` (NULL-terminated), inheriting the
 * environment: a Windows process needs SystemRoot and friends. */
static void run_exe(run *r, const char *const *args)
{
    const char *argv[32] = {AITK_EXE};
    int n = 1;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    aitk_proc_opts o = {.timeout_ms = 120000};
    aitk_proc_result pr;
    r->out = (aitk_str)AITK_STR_INIT;
    r->err = (aitk_str)AITK_STR_INIT;
    aitk_str why = AITK_STR_INIT;
    aitk_status st = aitk_proc_run(argv, &o, &pr, &r->out, &r->err, &why);
    if (st || !pr.exited)
        fail_msg("could not run %s: %s", AITK_EXE, aitk_str_cstr(&why));
    aitk_str_free(&why);
    r->exit_code = pr.exit_code;
}

static void run_free(run *r)
{
    aitk_str_free(&r->out);
    aitk_str_free(&r->err);
}

/* Case-insensitive, with / and \ equal: Windows paths as Windows compares them. */
static int path_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        for (; i < n && hay[i]; i++) {
            char a = (char)(hay[i] == '\\' ? '/' : hay[i]);
            char b = (char)(needle[i] == '\\' ? '/' : needle[i]);
            if (a >= 'A' && a <= 'Z')
                a = (char)(a - 'A' + 'a');
            if (b >= 'A' && b <= 'Z')
                b = (char)(b - 'A' + 'a');
            if (a != b)
                break;
        }
        if (i == n)
            return 1;
    }
    return 0;
}

/* The folder the test compares with: asked of Windows directly, not of the
 * code under test. */
static void system32(char *out, size_t size)
{
    UINT n = GetSystemDirectoryA(out, (UINT)size);
    assert_true(n > 0 && n < size);
}

static void fbgemm_missing_link_found_natively(void **state)
{
    (void)state;
    run r;
    run_exe(&r, (const char *const[]){"deps", TORCH_LIB "/fbgemm.dll", NULL});
    const char *out = aitk_str_cstr(&r.out);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(out, "PROBLEM: fbgemm.dll -> libomp140.x86_64.dll: NOT FOUND"));
    /* The folders searched are this system's: its real System32. */
    char sys[MAX_PATH];
    system32(sys, sizeof sys);
    if (!path_contains(out, sys))
        fail_msg("the searched folders do not include %s:\n%s", sys, out);
    /* What every Windows has is not reported missing: the MSVC runtime
     * (Wine, like Windows 10+, has vcruntime140.dll in System32) and the
     * API sets. */
    assert_null(strstr(out, "vcruntime140.dll: NOT FOUND"));
    assert_null(strstr(out, "api-ms-win-crt-runtime-l1-1-0.dll: NOT FOUND"));
    /* The fixture's fbgemm.dll imports a made-up function (vcrt_stub) from
     * vcruntime140.dll: the real System32 copy does not export it, and the
     * doctor reads that copy's export table to say so. */
    assert_non_null(strstr(out, "fbgemm.dll -> vcruntime140.dll: MISSING FUNCTION"));
    assert_non_null(strstr(out, "does not export vcrt_stub"));
    assert_non_null(strstr(out, "2 problems"));
    run_free(&r);
}

static void load_gives_the_windows_loader_error(void **state)
{
    (void)state;
    run r;
    run_exe(&r, (const char *const[]){"deps", "--load", TORCH_LIB "/fbgemm.dll", NULL});
    const char *out = aitk_str_cstr(&r.out);
    /* The loader's own words, as Python shows them in the WinError 126 report. */
    if (!strstr(out, "[WinError 126]"))
        fail_msg("no [WinError 126] from LoadLibraryExW in:\n%s", out);
    assert_int_equal(r.exit_code, 1);
    run_free(&r);

    /* A DLL with nothing missing loads: the fixture's libiomp5md.dll imports
     * only what every Windows has. */
    run_exe(&r, (const char *const[]){"deps", "--load", TORCH_LIB "/libiomp5md.dll", NULL});
    if (r.exit_code != 0 || strstr(aitk_str_cstr(&r.out), "[WinError"))
        fail_msg("libiomp5md.dll should load (exit %d):\n%s", r.exit_code, aitk_str_cstr(&r.out));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "loaded"));
    run_free(&r);
}

static void report_describes_windows(void **state)
{
    (void)state;
    const char *path = AITK_TEST_REPORTS "/windows-quick.json";
    remove(path);
    run r;
    run_exe(&r, (const char *const[]){"--quick", "--json", path, NULL});
    /* No NVIDIA driver under Wine: the GPU checks fail, so the verdict is 1. */
    assert_int_equal(r.exit_code, 1);
    run_free(&r);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(path, 1 << 24, &text, &len, NULL), AITK_OK);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    const cJSON *os = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "environment"),
                                             "host"),
            "os"),
        "system");
    if (!cJSON_IsString(os)) /* the host section may sit at the top level */
        os = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "host"), "os"),
            "system");
    assert_true(cJSON_IsString(os));
    assert_string_equal(os->valuestring, "Windows");
    /* gpu.nvml fails with the loader's own Windows error for nvml.dll. */
    const cJSON *c;
    int seen = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "checks"))
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (!cJSON_IsString(id) || strcmp(id->valuestring, "gpu.nvml") != 0)
            continue;
        seen = 1;
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "status")->valuestring, "fail");
        const cJSON *obs = cJSON_GetObjectItemCaseSensitive(c, "observed");
        assert_true(cJSON_IsString(obs));
        assert_non_null(strstr(obs->valuestring, "nvml.dll"));
        assert_non_null(strstr(obs->valuestring, "[WinError 126]"));
    }
    assert_true(seen);
    cJSON_Delete(doc);
}

static void redact_removes_windows_user_and_machine(void **state)
{
    (void)state;
    /* Wine runs as the Linux user (root here, which names nobody and is
     * kept), so the child gets a distinctive Windows user instead: the
     * variables Windows sets for a logged-in user, inherited by the child. */
    assert_int_equal(_putenv_s("USERNAME", "aitkwinuser"), 0);
    assert_int_equal(_putenv_s("USERPROFILE", "C:\\users\\aitkwinuser"), 0);
    char machine[MAX_COMPUTERNAME_LENGTH + 1];
    DWORD n = sizeof machine;
    assert_true(GetComputerNameA(machine, &n));
    const char *path = AITK_TEST_REPORTS "/windows-quick-redacted.json";
    remove(path);
    run r;
    run_exe(&r, (const char *const[]){"--quick", "--redact", "--json", path, NULL});
    assert_int_equal(r.exit_code, 1);
    run_free(&r);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(path, 1 << 24, &text, &len, NULL), AITK_OK);
    /* The unredacted run would show it: the model cache sits below USERPROFILE. */
    if (strstr(text, "aitkwinuser"))
        fail_msg("the user name is still in the redacted report");
    if (strlen(machine) >= 3 && strstr(text, machine))
        fail_msg("the machine name '%s' is still in the redacted report", machine);
    free(text);

    /* Without --redact the same run names the user: the check above can fail. */
    const char *plain = AITK_TEST_REPORTS "/windows-quick-plain.json";
    run_exe(&r, (const char *const[]){"--quick", "--json", plain, NULL});
    run_free(&r);
    assert_int_equal(aitk_file_read(plain, 1 << 24, &text, &len, NULL), AITK_OK);
    assert_non_null(strstr(text, "aitkwinuser"));
    free(text);
}

/* The whole story with nothing pointed at: a venv whose torch 2.4.0 lacks
 * libomp140.x86_64.dll is active, and a plain --quick run finds the broken
 * link in it, says why, and gives the fix. */
static void quick_run_finds_the_broken_torch_on_its_own(void **state)
{
    (void)state;
    assert_int_equal(_putenv_s("VIRTUAL_ENV", AITK_WIN_FIXTURES "/pe/env"), 0);
    const char *path = AITK_TEST_REPORTS "/windows-quick-venv.json";
    remove(path);
    run r;
    run_exe(&r, (const char *const[]){"--quick", "--json", path, NULL});
    assert_int_equal(r.exit_code, 1);
    const char *out = aitk_str_cstr(&r.out);
    const char *line = strstr(out, "deps.torch");
    if (!line || strncmp(line - 6, "FAIL", 4) != 0)
        fail_msg("deps.torch did not fail:\n%s", out);
    run_free(&r);
    assert_int_equal(_putenv_s("VIRTUAL_ENV", ""), 0);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(path, 1 << 24, &text, &len, NULL), AITK_OK);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    const cJSON *c;
    int seen = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "checks"))
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (!cJSON_IsString(id) || strcmp(id->valuestring, "deps.torch") != 0)
            continue;
        seen = 1;
        const char *obs = cJSON_GetObjectItemCaseSensitive(c, "observed")->valuestring;
        const char *fix = cJSON_GetObjectItemCaseSensitive(c, "remedy")->valuestring;
        if (!strstr(obs, "fbgemm.dll") || !strstr(obs, "libomp140.x86_64.dll"))
            fail_msg("deps.torch does not name the broken link: %s", obs);
        if (!strstr(fix, "2.4.1"))
            fail_msg("deps.torch does not give the torch 2.4.1 fix: %s", fix);
    }
    assert_true(seen);
    cJSON_Delete(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fbgemm_missing_link_found_natively),
        cmocka_unit_test(load_gives_the_windows_loader_error),
        cmocka_unit_test(report_describes_windows),
        cmocka_unit_test(redact_removes_windows_user_and_machine),
        cmocka_unit_test(quick_run_finds_the_broken_torch_on_its_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
