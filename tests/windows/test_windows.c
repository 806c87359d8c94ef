/* The Windows build on Windows (Wine in CI): the real aitk-validate.exe,
 * started with CreateProcess, finds the classic broken link of a torch 2.4.0
 * install, fbgemm.dll -> libomp140.x86_64.dll, using this system's own
 * System32 (no --windows-root) and, with --load, LoadLibraryExW's own
 * verdict; and writes a report whose host section says Windows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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

#include "tests/exe_run.h"
#include "tests/report_json.h"
#include "tests/test_time.h"

/* Wine starts slowly the first time (it creates its C: drive). */
#define RUN(...) run_timeout((const char *const[]){__VA_ARGS__, NULL}, aitk_test_ms(120000))

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
    ran r = RUN("deps", TORCH_LIB "/fbgemm.dll");
    const char *out = aitk_str_cstr(&r.out);
    assert_int_equal(r.rc, 1);
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
    ran_free(&r);
}

/* The same DLL named as a Windows user names it, C:\...\torch\lib\fbgemm.dll
 * (the fixture's path, Z:/... under Wine, with '\\'): its own folder and
 * torch's are searched as with '/' (they were not: the folder was cut at
 * the last '/', so every sibling DLL came out missing). */
static void backslash_path_searches_the_dlls_folder(void **state)
{
    (void)state;
    char dos[1024];
    size_t k = 0;
    for (const char *p = TORCH_LIB "/fbgemm.dll"; *p && k + 1 < sizeof dos; p++)
        dos[k++] = *p == '/' ? '\\' : *p;
    dos[k] = '\0';
    ran r = RUN("deps", dos);
    const char *out = aitk_str_cstr(&r.out);
    if (r.rc != 1 || !strstr(out, "PROBLEM: fbgemm.dll -> libomp140.x86_64.dll: NOT FOUND") ||
        !strstr(out, "2 problems") || !strstr(out, "torch\\lib (the DLL's folder)") ||
        !strstr(out, "env\\Library\\bin (add_dll_directory"))
        fail_msg("exit %d:\n%s%s", r.rc, out, aitk_str_cstr(&r.err));
    ran_free(&r);
}

/* The same DLL given with '/' (Z:/.../fbgemm.dll, as the fixture path is
 * written): every path printed is in Windows' one style, '\\', beside this
 * system's own C:\\windows\\system32 (they came out in both styles). */
static void slash_path_printed_in_one_style(void **state)
{
    (void)state;
    ran r = RUN("deps", TORCH_LIB "/fbgemm.dll");
    const char *out = aitk_str_cstr(&r.out);
    /* AITK_WIN_FIXTURES is "Z:/..." itself: in the output only as Z:\\... */
    if (r.rc != 1 || !strstr(out, "torch\\lib (the DLL's folder)") ||
        strstr(out, AITK_WIN_FIXTURES) || strstr(out, "Z:/"))
        fail_msg("exit %d (a path with '/'?):\n%s%s", r.rc, out, aitk_str_cstr(&r.err));
    ran_free(&r);
}

/* python311.dll is python.exe's own, loaded from its folder: pyvenv.cfg's
 * home (base311) for the fixture venv, a base holding only python312.dll
 * for venv312. The oracle is Windows' own loader, started from a copy of
 * loadlib.exe placed where python.exe is (its application folder), asked
 * to load torch_python.dll as torch asks; the tool, run without --app-dir,
 * must agree (it said NOT FOUND, no remedy, for both). */
static void python_dll_judged_as_the_loader_does(void **state)
{
    (void)state;
    static const char *const envs[] = {"venv", "venv312"}, *const bases[] = {"base311", "base312"};
    for (size_t i = 0; i < 2; i++) {
        char exe[1024], dll[1024], lib[1024];
        snprintf(exe, sizeof exe, "%s/pe/%s/loadlib.exe", AITK_WIN_FIXTURES, bases[i]);
        snprintf(lib, sizeof lib, "%s/pe/%s/Lib/site-packages/torch/lib", AITK_WIN_FIXTURES,
                 envs[i]);
        snprintf(dll, sizeof dll, "%s/torch_python.dll", lib);
        assert_true(CopyFileA(AITK_LOADLIB, exe, FALSE));
        const char *argv[] = {exe, dll, lib, NULL};
        ran o = run_program(argv, aitk_test_ms(120000));
        bool loaded = strstr(aitk_str_cstr(&o.out), "loaded") != NULL;
        ran t = RUN("deps", dll);
        if (loaded != (t.rc == 0) || (t.rc != 0 && t.rc != 1))
            fail_msg("%s: the loader says %s; the tool exits %d:\n%s", envs[i],
                     aitk_str_cstr(&o.out), t.rc, aitk_str_cstr(&t.out));
        assert_true(loaded == (i == 0)); /* the fixture is what it claims */
        ran_free(&o);
        ran_free(&t);
    }
}

static void load_gives_the_windows_loader_error(void **state)
{
    (void)state;
    ran r = RUN("deps", "--load", TORCH_LIB "/fbgemm.dll");
    const char *out = aitk_str_cstr(&r.out);
    /* The loader's own words, as Python shows them in the WinError 126 report. */
    if (!strstr(out, "[WinError 126]"))
        fail_msg("no [WinError 126] from LoadLibraryExW in:\n%s", out);
    assert_int_equal(r.rc, 1);
    ran_free(&r);

    /* A DLL with nothing missing loads: the fixture's libiomp5md.dll imports
     * only what every Windows has. */
    r = RUN("deps", "--load", TORCH_LIB "/libiomp5md.dll");
    if (r.rc != 0 || strstr(aitk_str_cstr(&r.out), "[WinError"))
        fail_msg("libiomp5md.dll should load (exit %d):\n%s", r.rc, aitk_str_cstr(&r.out));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "loaded"));
    ran_free(&r);
}

/* A Git LFS pointer where a DLL should be (a torch\lib copied from a git
 * checkout without `git lfs pull`): a problem named for what it is, with
 * the fix, and LoadLibraryExW's own refusal beside it (error 193). */
static void lfs_pointer_dll_is_not_a_library(void **state)
{
    (void)state;
    char dir[MAX_PATH];
    DWORD n = GetTempPathA(sizeof dir, dir);
    assert_true(n > 0 && n < sizeof dir - 32);
    strcat(dir, "aitk-lfs-dll");
    CreateDirectoryA(dir, NULL);
    char path[MAX_PATH + 16];
    snprintf(path, sizeof path, "%s\\fbgemm.dll", dir);
    static const char pointer[] =
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 48234496\n";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(pointer, 1, sizeof pointer - 1, f), sizeof pointer - 1);
    fclose(f);
    ran r = RUN("deps", "--load", path);
    const char *out = aitk_str_cstr(&r.out);
    const char *loader = strstr(out, "loader says: ");
    if (r.rc != 1 || !strstr(out, "PROBLEM: fbgemm.dll: NOT A LIBRARY") ||
        !strstr(out, "why: a Git LFS pointer") || !strstr(out, "git lfs pull") || !loader ||
        !strstr(loader, "[WinError 193]") || !strstr(out, "result: 1 problem"))
        fail_msg("exit %d:\n%s", r.rc, loader ? loader : out);
    ran_free(&r);
    /* JSON names it by its file name, as the text does. */
    r = RUN("deps", "--json", path);
    assert_int_equal(r.rc, 1);
    cJSON *doc = cJSON_Parse(aitk_str_cstr(&r.out));
    assert_non_null(doc);
    const cJSON *root = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "roots"), 0);
    assert_string_equal(json_str(root, "not_library"), "git_lfs_pointer");
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "problems"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "chain"), 0)),
                        "fbgemm.dll");
    assert_string_equal(json_str(cJSON_GetObjectItem(root, "tree"), "name"), "fbgemm.dll");
    cJSON_Delete(doc);
    ran_free(&r);
    remove(path);
    RemoveDirectoryA(dir);
}

/* The check with this id; the test fails when there is none. */
static const cJSON *check_by_id(const cJSON *doc, const char *id)
{
    const cJSON *c = find_check(doc, id);
    if (!c)
        fail_msg("no check %s in the report", id);
    return c;
}

static void report_describes_windows(void **state)
{
    (void)state;
    const char *path = AITK_TEST_REPORTS "/windows-quick.json";
    remove(path);
    ran r = RUN("--quick", "--json", path);
    /* No NVIDIA driver under Wine: the GPU checks fail, so the verdict is 1. */
    assert_int_equal(r.rc, 1);
    ran_free(&r);
    cJSON *doc = load_json(path);
    const cJSON *os = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "host"), "os");
    assert_string_equal(json_str(os, "system"), "Windows");
    /* Under Wine the report says so (figures are Wine's view of Linux);
     * on Windows itself it says nothing of Wine. Asked of ntdll directly. */
    bool wine = GetProcAddress(GetModuleHandleA("ntdll.dll"), "wine_get_version") != NULL;
    assert_int_equal(*json_str(os, "wine") != '\0', wine);
    /* gpu.nvml fails with the loader's own Windows error for nvml.dll. */
    const cJSON *c = check_by_id(doc, "gpu.nvml");
    assert_string_equal(json_str(c, "status"), "fail");
    assert_non_null(strstr(json_str(c, "observed"), "nvml.dll"));
    assert_non_null(strstr(json_str(c, "observed"), "[WinError 126]"));
    cJSON_Delete(doc);
}

/* Drivers before the DCH model install nvml.dll in %ProgramFiles%\NVIDIA
 * Corporation\NVSMI, not in System32 (Wine has none there either): the
 * probe finds it there, as NVIDIA's own Python bindings do. The DLL is the
 * stub NVML of the Linux probe tests, answering from AITK_STUB_GPU; it goes
 * into this test's scratch Wine prefix and is removed after. */
static void nvml_found_in_nvsmi_folder(void **state)
{
    (void)state;
    char pf[MAX_PATH], dir[MAX_PATH], dll[MAX_PATH];
    DWORD n = GetEnvironmentVariableA("ProgramFiles", pf, sizeof pf);
    assert_true(n > 0 && n < sizeof pf);
    snprintf(dir, sizeof dir, "%s\\NVIDIA Corporation", pf);
    CreateDirectoryA(dir, NULL);
    snprintf(dir, sizeof dir, "%s\\NVIDIA Corporation\\NVSMI", pf);
    CreateDirectoryA(dir, NULL);
    snprintf(dll, sizeof dll, "%s\\nvml.dll", dir);
    if (!CopyFileA(AITK_WIN_STUB_NVML, dll, FALSE))
        fail_msg("cannot copy %s to %s (error %lu)", AITK_WIN_STUB_NVML, dll, GetLastError());
    assert_int_equal(_putenv_s("AITK_STUB_GPU", "driver=472.12;gpu=NVIDIA GeForce RTX 3090|8.6|24576"), 0);
    const char *path = AITK_TEST_REPORTS "/windows-nvsmi.json";
    remove(path);
    ran r = RUN("--quick", "--json", path);
    ran_free(&r);
    assert_int_equal(_putenv_s("AITK_STUB_GPU", ""), 0);
    DeleteFileA(dll);
    cJSON *doc = load_json(path);
    const cJSON *c = check_by_id(doc, "gpu.nvml");
    assert_string_equal(json_str(c, "status"), "pass");
    assert_non_null(strstr(json_str(c, "observed"), "driver 472.12"));
    if (!path_contains(json_str(c, "observed"), "NVIDIA Corporation/NVSMI/nvml.dll"))
        fail_msg("nvml.dll was not loaded from NVSMI: %s", json_str(c, "observed"));
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
    ran r = RUN("--quick", "--redact", "--json", path);
    assert_int_equal(r.rc, 1);
    ran_free(&r);
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
    r = RUN("--quick", "--json", plain);
    ran_free(&r);
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
    ran r = RUN("--quick", "--json", path);
    assert_int_equal(r.rc, 1);
    const char *out = aitk_str_cstr(&r.out);
    const char *line = strstr(out, "deps.torch");
    if (!line || strncmp(line - 6, "FAIL", 4) != 0)
        fail_msg("deps.torch did not fail:\n%s", out);
    ran_free(&r);
    assert_int_equal(_putenv_s("VIRTUAL_ENV", ""), 0);
    cJSON *doc = load_json(path);
    const cJSON *c = check_by_id(doc, "deps.torch");
    const char *obs = json_str(c, "observed"), *fix = json_str(c, "remedy");
    if (!strstr(obs, "fbgemm.dll") || !strstr(obs, "libomp140.x86_64.dll"))
        fail_msg("deps.torch does not name the broken link: %s", obs);
    if (!strstr(fix, "2.4.1"))
        fail_msg("deps.torch does not give the torch 2.4.1 fix: %s", fix);
    cJSON_Delete(doc);
}

/* Writes text at path, making its folders. */
static void put_file(const char *path, const char *text)
{
    char dir[MAX_PATH];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *c = dir + 3; *c; c++) {
        if (*c == '/' || *c == '\\') {
            char keep = *c;
            *c = '\0';
            CreateDirectoryA(dir, NULL);
            *c = keep;
        }
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* python.shadowing of a --quick run on `python`, with APPDATA set. */
static void expect_user_site_torch(const char *python, const char *appdata, const char *report)
{
    char old[MAX_PATH] = "";
    GetEnvironmentVariableA("APPDATA", old, sizeof old);
    assert_int_equal(_putenv_s("APPDATA", appdata), 0);
    remove(report);
    ran r = RUN("--quick", "--python", python, "--json", report);
    ran_free(&r);
    assert_int_equal(_putenv_s("APPDATA", old), 0);
    cJSON *doc = load_json(report);
    const cJSON *c = check_by_id(doc, "python.shadowing");
    if (!strstr(json_str(c, "message"), "Python imports 2.5.1") ||
        !path_contains(json_str(c, "message"), "AppData/Python/Python311/site-packages"))
        fail_msg("%s: python.shadowing does not say the user site's torch is imported: %s",
                 python, json_str(c, "message"));
    cJSON_Delete(doc);
}

/* Python installed for all users (C:\Program Files\Python311) is not
 * writable by its user, so pip puts torch into the user site,
 * %APPDATA%\Python\Python311\site-packages ("Defaulting to user
 * installation because normal site-packages is not writeable"). Python
 * reads it before the installation's Lib\site-packages, and a venv made
 * with --system-site-packages after its own (site.py: getuserbase,
 * _get_path). The tool read neither on Windows, nor a venv's base there:
 * pyvenv.cfg's home is the installation itself, python.exe at its top. */
static void python_user_site_on_windows(void **state)
{
    (void)state;
#define PY_BASE AITK_BINARY_DIR "/tests/windows/py-usersite"
    put_file(PY_BASE "/Python311/python.exe", "not a program\n");
    put_file(PY_BASE "/Python311/python311.dll", "not a library\n");
    put_file(PY_BASE "/Python311/Lib/site-packages/torch-2.4.0.dist-info/METADATA",
             "Name: torch\nVersion: 2.4.0\n\n");
    put_file(PY_BASE "/AppData/Python/Python311/site-packages/torch-2.5.1.dist-info/METADATA",
             "Name: torch\nVersion: 2.5.1\n\n");
    put_file(PY_BASE "/venv/Scripts/python.exe", "not a program\n");
    put_file(PY_BASE "/venv/pyvenv.cfg", "home = " PY_BASE "/Python311\n"
                                         "include-system-site-packages = true\nversion = 3.11.9\n");
    put_file(PY_BASE "/venv/Lib/site-packages/.keep", "");
    expect_user_site_torch(PY_BASE "/Python311", PY_BASE "/AppData",
                           AITK_TEST_REPORTS "/windows-user-site.json");
    expect_user_site_torch(PY_BASE "/venv", PY_BASE "/AppData",
                           AITK_TEST_REPORTS "/windows-user-site-venv.json");
#undef PY_BASE
}

/* Windows' embeddable Python (ComfyUI's portable build ships one) has a
 * python311._pth: its lines are the whole search path and Python runs
 * isolated, so a torch in the user site is never imported ("Using Python
 * on Windows", "Finding modules"). Reading the user site there would call
 * a healthy install shadowed. */
static void embedded_python_reads_its_pth_only(void **state)
{
    (void)state;
#define PY_BASE AITK_BINARY_DIR "/tests/windows/py-embedded"
    put_file(PY_BASE "/python_embeded/python.exe", "not a program\n");
    put_file(PY_BASE "/python_embeded/python311.dll", "not a library\n");
    put_file(PY_BASE "/python_embeded/python311._pth",
             "python311.zip\r\n.\r\nLib/site-packages\r\n\r\n# Uncomment to run site.main()\r\n"
             "import site\r\n");
    put_file(PY_BASE "/python_embeded/Lib/site-packages/torch-2.4.0.dist-info/METADATA",
             "Name: torch\nVersion: 2.4.0\n\n");
    put_file(PY_BASE "/AppData/Python/Python311/site-packages/torch-2.5.1.dist-info/METADATA",
             "Name: torch\nVersion: 2.5.1\n\n");
    char old[MAX_PATH] = "";
    GetEnvironmentVariableA("APPDATA", old, sizeof old);
    assert_int_equal(_putenv_s("APPDATA", PY_BASE "/AppData"), 0);
    const char *report = AITK_TEST_REPORTS "/windows-embedded-python.json";
    remove(report);
    ran r = RUN("--quick", "--python", PY_BASE "/python_embeded", "--json", report);
    ran_free(&r);
    assert_int_equal(_putenv_s("APPDATA", old), 0);
    cJSON *doc = load_json(report);
    const cJSON *c = check_by_id(doc, "python.shadowing");
    if (strcmp(json_str(c, "status"), "pass") != 0)
        fail_msg("python.shadowing %s: %s", json_str(c, "status"), json_str(c, "message"));
    c = check_by_id(doc, "python.torch");
    if (!strstr(json_str(c, "observed"), "2.4.0"))
        fail_msg("python.torch does not read the embedded torch: %s", json_str(c, "observed"));
    cJSON_Delete(doc);
#undef PY_BASE
}

/* python.torch and python.shadowing of a --quick run on the embeddable
 * Python at `python`. */
static void expect_embedded_torch(const char *python, const char *report, const char *version)
{
    remove(report);
    ran r = RUN("--quick", "--python", python, "--json", report);
    ran_free(&r);
    cJSON *doc = load_json(report);
    const cJSON *c = check_by_id(doc, "python.torch");
    if (!strstr(json_str(c, "observed"), version))
        fail_msg("%s: python.torch does not read torch %s: %s", python, version,
                 json_str(c, "observed"));
    c = check_by_id(doc, "python.shadowing");
    if (strcmp(json_str(c, "status"), "pass") != 0)
        fail_msg("%s: python.shadowing %s: %s", python, json_str(c, "status"),
                 json_str(c, "message"));
    cJSON_Delete(doc);
}

/* ComfyUI's portable build: the embeddable zip's python311._pth with
 * "import site" appended and "../ComfyUI" put first
 * (comfyanonymous/ComfyUI .github/workflows/windows_release_package.yml),
 * no Lib\site-packages line. site.py, run by that line, adds the prefix's
 * Lib\site-packages (CPython Lib/site.py, getsitepackages on Windows),
 * where pip put torch; the tool called it not installed. A ._pth that
 * lists that folder too and imports site reads it once: sys.path holds it
 * once, and counting its torch twice would fail python.shadowing. */
static void embedded_python_import_site_reads_site_packages(void **state)
{
    (void)state;
#define PY_BASE AITK_BINARY_DIR "/tests/windows/py-comfyui"
    static const char *const pth[] = {
        /* as the workflow leaves it: the zip's own lines end in CR LF */
        "../ComfyUI\npython311.zip\r\n.\r\n\r\n# Uncomment to run site.main() automatically\r\n"
        "#import site\r\nimport site\n",
        /* the same folder named by a line and by site.py */
        "python311.zip\n.\nLib\nLib\\site-packages\n\n  import site  # run site.main()\n",
    };
    for (size_t i = 0; i < sizeof pth / sizeof *pth; i++) {
        char root[MAX_PATH], file[MAX_PATH];
        snprintf(root, sizeof root, PY_BASE "/%zu/python_embeded", i);
        static const char *const stand_ins[] = {"python.exe", "python311.dll", "python311.zip"};
        for (size_t k = 0; k < sizeof stand_ins / sizeof *stand_ins; k++) {
            snprintf(file, sizeof file, "%s/%s", root, stand_ins[k]);
            put_file(file, "stand-in\n");
        }
        snprintf(file, sizeof file, "%s/python311._pth", root);
        put_file(file, pth[i]);
        snprintf(file, sizeof file, "%s/Lib/site-packages/torch-2.4.1.dist-info/METADATA", root);
        put_file(file, "Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1\n\n");
        snprintf(file, sizeof file, "%s/Lib/site-packages/torch/version.py", root);
        put_file(file, "__version__ = '2.4.1+cu124'\ncuda: Optional[str] = '12.4'\n");
        snprintf(file, sizeof file, AITK_TEST_REPORTS "/windows-embedded-site-%zu.json", i);
        expect_embedded_torch(root, file, "2.4.1+cu124");
    }
#undef PY_BASE
}

/* A venv made on Linux, given to the Windows build (through \\wsl$): its
 * pyvenv.cfg names a pyenv Python's bin folder, a path no Windows Python
 * writes. python.env said that Python was uninstalled or moved and told
 * to recreate the venv in place with --clear, which would wipe the venv
 * Linux trains in. */
static void linux_venv_is_named_as_such(void **state)
{
    (void)state;
#define PY_BASE AITK_BINARY_DIR "/tests/windows/py-linux-venv"
#define PYENV_BIN "/home/ana/.pyenv/versions/3.12.3/bin"
    put_file(PY_BASE "/venv/pyvenv.cfg",
             "home = " PYENV_BIN "\ninclude-system-site-packages = false\nversion = 3.12.3\n"
             "executable = " PYENV_BIN "/python3.12\ncommand = " PYENV_BIN
             "/python3 -m venv /home/ana/ai-toolkit/venv\n");
    put_file(PY_BASE "/venv/bin/python3", "not a program\n");
    put_file(PY_BASE "/venv/lib/python3.12/site-packages/torch-2.7.1.dist-info/METADATA",
             "Name: torch\nVersion: 2.7.1\n\n");
    const char *report = AITK_TEST_REPORTS "/windows-linux-venv.json";
    remove(report);
    ran r = RUN("--quick", "--python", PY_BASE "/venv", "--json", report);
    ran_free(&r);
    cJSON *doc = load_json(report);
    const cJSON *c = check_by_id(doc, "python.env");
    if (strcmp(json_str(c, "status"), "fail") != 0 ||
        !strstr(json_str(c, "message"),
                "this venv was made on Linux or macOS: pyvenv.cfg names home = " PYENV_BIN) ||
        strstr(json_str(c, "remedy"), "--clear"))
        fail_msg("python.env %s: %s / %s", json_str(c, "status"), json_str(c, "message"),
                 json_str(c, "remedy"));
    cJSON_Delete(doc);
#undef PYENV_BIN
#undef PY_BASE
}

/* A conda environment on Windows keeps pip's packages in Lib\site-packages
 * whatever its Python's version, so `conda install python=3.12` leaves the
 * cp311 torch pip put there where Python 3.12 reads it, and import torch
 * fails: 3.12 loads only ".cp312-win_amd64.pyd" and ".pyd" extension files
 * (CPython Python/dynload_win.c), not torch\_C.cp311-win_amd64.pyd. The
 * tool passed python.torch_python, torch 2.4 being made for 3.12 too. The
 * same environment before the upgrade passes. */
static void conda_torch_for_another_python(void **state)
{
    (void)state;
#define PY_BASE AITK_BINARY_DIR "/tests/windows/py-conda-upgrade"
    static const char *const dlls[] = {"python311.dll", "python312.dll"};
    for (size_t i = 0; i < 2; i++) {
        char env[MAX_PATH], file[MAX_PATH];
        snprintf(env, sizeof env, PY_BASE "/%zu/envs/aitk", i);
        snprintf(file, sizeof file, "%s/python.exe", env);
        put_file(file, "stand-in\n");
        snprintf(file, sizeof file, "%s/%s", env, dlls[i]);
        put_file(file, "stand-in\n");
        snprintf(file, sizeof file, "%s/conda-meta/history", env);
        put_file(file, "==> 2026-01-01 00:00:00 <==\n");
        snprintf(file, sizeof file, "%s/Lib/site-packages/torch-2.4.1.dist-info/METADATA", env);
        put_file(file, "Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1\n\n");
        /* torch 2.4.1's own WHEEL file, as PyPI's cp311 win_amd64 wheel has it */
        snprintf(file, sizeof file, "%s/Lib/site-packages/torch-2.4.1.dist-info/WHEEL", env);
        put_file(file, "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.44.0)\n"
                       "Root-Is-Purelib: false\nTag: cp311-cp311-win_amd64\n\n");
        snprintf(file, sizeof file, "%s/Lib/site-packages/torch/version.py", env);
        put_file(file, "__version__ = '2.4.1+cu124'\ncuda: Optional[str] = '12.4'\n");
        snprintf(file, sizeof file, "%s/python.exe", env);
        const char *report = AITK_TEST_REPORTS "/windows-conda-upgrade.json";
        remove(report);
        ran r = RUN("--quick", "--python", file, "--json", report);
        ran_free(&r);
        cJSON *doc = load_json(report);
        const cJSON *c = check_by_id(doc, "python.torch_python");
        const char *want = i ? "fail" : "pass";
        if (strcmp(json_str(c, "status"), want) != 0 ||
            (i && !strstr(json_str(c, "message"), "built for Python 3.11")))
            fail_msg("%s: python.torch_python %s, not %s: %s", dlls[i], json_str(c, "status"),
                     want, json_str(c, "message"));
        cJSON_Delete(doc);
    }
#undef PY_BASE
}

/* AI-Toolkit-Easy-Install (the one-click Windows install of ai-toolkit,
 * Tavris1/AI-Toolkit-Easy-Install, AI-Toolkit-Easy-Install.bat v0.4.1) has
 * no venv: torch lives in an embeddable Python, python_embeded, beside the
 * ai-toolkit checkout, with the python312._pth the installer writes. A run
 * from the checkout, and one given the checkout with --aitk-dir, find it. */
static void easy_install_python_found(void **state)
{
    (void)state;
#define EI_BASE AITK_BINARY_DIR "/tests/windows/easy-install"
    put_file(EI_BASE "/python_embeded/python.exe", "not a program\n");
    put_file(EI_BASE "/python_embeded/python312.dll", "not a library\n");
    put_file(EI_BASE "/python_embeded/python312._pth",
             "../AI-Toolkit\r\nLib/site-packages\r\nLib\r\nScripts\r\npython312.zip\r\n.\r\n"
             "# import site\r\n");
    put_file(EI_BASE "/python_embeded/Lib/site-packages/torch-2.8.0+cu128.dist-info/METADATA",
             "Name: torch\nVersion: 2.8.0+cu128\n\n");
    put_file(EI_BASE "/python_embeded/Lib/site-packages/torch/version.py",
             "__version__ = '2.8.0+cu128'\ncuda = '12.8'\n");
    put_file(EI_BASE "/ai-toolkit/run.py", "\n");
    char here[MAX_PATH];
    assert_true(GetCurrentDirectoryA(sizeof here, here) > 0);
    const char *report = AITK_TEST_REPORTS "/windows-easy-install.json";
    for (int via_aitk_dir = 0; via_aitk_dir < 2; via_aitk_dir++) {
        remove(report);
        assert_true(SetCurrentDirectoryA(via_aitk_dir ? here : EI_BASE "/ai-toolkit"));
        ran r = via_aitk_dir ? RUN("--quick", "--aitk-dir", EI_BASE "/ai-toolkit", "--json", report)
                             : RUN("--quick", "--json", report);
        ran_free(&r);
        assert_true(SetCurrentDirectoryA(here));
        cJSON *doc = load_json(report);
        const cJSON *c = check_by_id(doc, "python.env");
        if (!path_contains(json_str(c, "observed"), "python_embeded"))
            fail_msg("python.env does not name python_embeded: %s", json_str(c, "observed"));
        c = check_by_id(doc, "python.torch");
        if (!strstr(json_str(c, "observed"), "2.8.0+cu128"))
            fail_msg("python.torch does not read the embedded torch: %s", json_str(c, "observed"));
        cJSON_Delete(doc);
    }
#undef EI_BASE
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fbgemm_missing_link_found_natively),
        cmocka_unit_test(backslash_path_searches_the_dlls_folder),
        cmocka_unit_test(slash_path_printed_in_one_style),
        cmocka_unit_test(python_dll_judged_as_the_loader_does),
        cmocka_unit_test(load_gives_the_windows_loader_error),
        cmocka_unit_test(lfs_pointer_dll_is_not_a_library),
        cmocka_unit_test(report_describes_windows),
        cmocka_unit_test(nvml_found_in_nvsmi_folder),
        cmocka_unit_test(redact_removes_windows_user_and_machine),
        cmocka_unit_test(quick_run_finds_the_broken_torch_on_its_own),
        cmocka_unit_test(python_user_site_on_windows),
        cmocka_unit_test(embedded_python_reads_its_pth_only),
        cmocka_unit_test(embedded_python_import_site_reads_site_packages),
        cmocka_unit_test(linux_venv_is_named_as_such),
        cmocka_unit_test(conda_torch_for_another_python),
        cmocka_unit_test(easy_install_python_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
