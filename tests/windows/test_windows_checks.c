/* The Windows checks (windows.*, and env.cuda_paths on Windows) in each of
 * their states, under Wine as on Windows: the real aitk-validate.exe runs
 * --quick and the test reads its JSON report. States come from where
 * Windows keeps them: Wine's own registry, changed with reg.exe (what
 * `wine reg add` runs), the DLLs in System32, the stub nvml.dll of the
 * probe tests, and the environment. The prefix is this test's scratch copy
 * (WINEPREFIX, set by CMake), so machine-wide changes stay here.
 *
 * Expected values are written out here: versions, build numbers and words
 * a user reads. The build numbers are Wine 8's (it reports the version set
 * under HKCU\Software\Wine\Version: win7 is 6.1.7601, win10 10.0.18362). */
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
#include "tests/exe_run.h"
#include "tests/report_json.h"
#include "tests/test_time.h"

#define RUN(...) run_timeout((const char *const[]){__VA_ARGS__, NULL}, aitk_test_ms(120000))
#define REG(...) reg((const char *const[]){"reg", __VA_ARGS__, NULL})

#define VCRT_KEY "HKLM\\SOFTWARE\\Microsoft\\VisualStudio\\14.0\\VC\\Runtimes\\x64"
#define FS_KEY "HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem"
#define WINE_VERSION_KEY "HKCU\\Software\\Wine"
#define NT_VERSION_KEY "HKLM\\Software\\Microsoft\\Windows NT\\CurrentVersion"
#define WINE_OVERRIDES_KEY "HKCU\\Software\\Wine\\DllOverrides"

static const char *const runtime_dlls[] = {"vcruntime140.dll", "vcruntime140_1.dll",
                                           "msvcp140.dll", "vcomp140.dll"};

/* reg.exe with these arguments; it must succeed, except a delete of what
 * is not there (rc 1), which leaves the state wanted. */
static void reg(const char *const *argv)
{
    ran r = run_program(argv, aitk_test_ms(120000));
    if (r.rc != 0 && !(strcmp(argv[1], "delete") == 0 && r.rc == 1))
        fail_msg("reg %s %s: exit %d: %s%s", argv[1], argv[2], r.rc, aitk_str_cstr(&r.out),
                 aitk_str_cstr(&r.err));
    ran_free(&r);
}

static void system32_file(const char *name, char *out, size_t size)
{
    char dir[MAX_PATH];
    UINT n = GetSystemDirectoryA(dir, sizeof dir);
    assert_true(n > 0 && n < sizeof dir);
    snprintf(out, size, "%s\\%s", dir, name);
}

/* Puts the fake runtime DLL of this age ("new", "old") into System32 as `name`. */
static void put_runtime_dll(const char *age, const char *name)
{
    char src[MAX_PATH], dst[MAX_PATH];
    snprintf(src, sizeof src, "%s/fake_vcrt_%s.dll", AITK_FAKE_VCRT_DIR, age);
    system32_file(name, dst, sizeof dst);
    if (!CopyFileA(src, dst, FALSE))
        fail_msg("cannot copy %s to %s (error %lu)", src, dst, GetLastError());
}

static void all_runtime_dlls(const char *age)
{
    for (size_t i = 0; i < sizeof runtime_dlls / sizeof *runtime_dlls; i++)
        put_runtime_dll(age, runtime_dlls[i]);
}

/* The registry as the x64 redistributable's installer leaves it. */
static void register_redistributable(const char *version, const char *major, const char *minor,
                                     const char *bld)
{
    REG("add", VCRT_KEY, "/v", "Installed", "/t", "REG_DWORD", "/d", "1", "/f");
    REG("add", VCRT_KEY, "/v", "Version", "/t", "REG_SZ", "/d", version, "/f");
    REG("add", VCRT_KEY, "/v", "Major", "/t", "REG_DWORD", "/d", major, "/f");
    REG("add", VCRT_KEY, "/v", "Minor", "/t", "REG_DWORD", "/d", minor, "/f");
    REG("add", VCRT_KEY, "/v", "Bld", "/t", "REG_DWORD", "/d", bld, "/f");
    REG("add", VCRT_KEY, "/v", "Rbld", "/t", "REG_DWORD", "/d", "0", "/f");
}

/* A UTF-8 value into the environment the child inherits, as UTF-16. */
static void set_env(const char *name, const char *utf8)
{
    wchar_t wname[64], wvalue[1024];
    assert_true(MultiByteToWideChar(CP_UTF8, 0, name, -1, wname, 64) > 0);
    assert_true(MultiByteToWideChar(CP_UTF8, 0, utf8, -1, wvalue, 1024) > 0);
    assert_int_equal(_wputenv_s(wname, wvalue), 0);
}

/* --quick into reports-out/<name>.json, then that report. */
static cJSON *quick(const char *name, ran *out)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.json", AITK_TEST_REPORTS, name);
    remove(path);
    ran r = RUN("--quick", "--json", path);
    if (r.rc != 0 && r.rc != 1)
        fail_msg("--quick exited %d:\n%s%s", r.rc, aitk_str_cstr(&r.out), aitk_str_cstr(&r.err));
    if (out)
        *out = r;
    else
        ran_free(&r);
    return load_json(path);
}

static const cJSON *check(const cJSON *doc, const char *id)
{
    const cJSON *c = find_check(doc, id);
    if (!c)
        fail_msg("no check %s in the report", id);
    return c;
}

/* The check has this status, and `words` in `field` (NULL: not asked). */
static void expect(const cJSON *doc, const char *id, const char *status, const char *field,
                   const char *words)
{
    const cJSON *c = check(doc, id);
    if (strcmp(json_str(c, "status"), status) != 0 || (field && !strstr(json_str(c, field), words)))
        fail_msg("%s: wanted %s with \"%s\" in %s; got %s\n  observed: %s\n  message: %s\n"
                 "  remedy: %s",
                 id, status, words ? words : "", field ? field : "-", json_str(c, "status"),
                 json_str(c, "observed"), json_str(c, "message"), json_str(c, "remedy"));
}

/* Every Windows check has a verdict of its own in a plain --quick run, in
 * the report and on the screen; none says "Windows only". */
static void every_windows_check_reported(void **state)
{
    (void)state;
    ran r;
    cJSON *doc = quick("windows-checks-all", &r);
    static const char *const ids[] = {"windows.build", "windows.vcredist", "windows.long_paths",
                                      "windows.gpu_mode", "windows.user_profile", "env.cuda_paths"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        const cJSON *c = check(doc, ids[i]);
        if (strcmp(json_str(c, "message"), "Windows only") == 0)
            fail_msg("%s is skipped as on Linux", ids[i]);
        if (!strstr(aitk_str_cstr(&r.out), ids[i]))
            fail_msg("%s is not on the screen:\n%s", ids[i], aitk_str_cstr(&r.out));
        if (!*json_str(c, "source"))
            fail_msg("%s cites no source", ids[i]);
    }
    ran_free(&r);
    cJSON_Delete(doc);
}

static void set_nt_version(const char *version, const char *build)
{
    REG("add", NT_VERSION_KEY, "/v", "CurrentVersion", "/t", "REG_SZ", "/d", version, "/f");
    REG("add", NT_VERSION_KEY, "/v", "CurrentBuildNumber", "/t", "REG_SZ", "/d", build, "/f");
    REG("add", NT_VERSION_KEY, "/v", "CurrentBuild", "/t", "REG_SZ", "/d", build, "/f");
}

/* windows.build from RtlGetVersion: Windows 7 (build 7601) fails every
 * profile; Windows 10 1903 (18362) passes the default profile (10240) but
 * not the seed guide's 20H2 (19042), which is passed at that very build. */
static void windows_build_old_and_new(void **state)
{
    (void)state;
    REG("add", WINE_VERSION_KEY, "/v", "Version", "/t", "REG_SZ", "/d", "win7", "/f");
    cJSON *doc = quick("windows-build-win7", NULL);
    expect(doc, "windows.build", "fail", "observed", "build 7601");
    expect(doc, "windows.build", "fail", "expected", "build >= 10240");
    expect(doc, "windows.build", "fail", "remedy", "Windows Update");
    cJSON_Delete(doc);

    REG("add", WINE_VERSION_KEY, "/v", "Version", "/t", "REG_SZ", "/d", "win10", "/f");
    doc = quick("windows-build-win10", NULL);
    expect(doc, "windows.build", "pass", "observed", "Windows 10.0 build 18362");
    cJSON_Delete(doc);
    char path[1024];
    snprintf(path, sizeof path, "%s/windows-build-seed-win10.json", AITK_TEST_REPORTS);
    ran r = RUN("--quick", "--profile", "seed-guide", "--json", path);
    ran_free(&r);
    doc = load_json(path);
    expect(doc, "windows.build", "fail", "expected", "build >= 19042");
    expect(doc, "windows.build", "fail", "message", "build 18362 is older than the build 19042");
    cJSON_Delete(doc);

    REG("delete", WINE_VERSION_KEY, "/v", "Version", "/f");
    /* Without a Wine version setting, Wine reports the version recorded
     * under HKLM\...\Windows NT\CurrentVersion: the seed guide's minimum,
     * 20H2's build 19042, passes; 19041 (2004) does not. */
    set_nt_version("10.0", "19041");
    snprintf(path, sizeof path, "%s/windows-build-seed-19041.json", AITK_TEST_REPORTS);
    r = RUN("--quick", "--profile", "seed-guide", "--json", path);
    ran_free(&r);
    doc = load_json(path);
    expect(doc, "windows.build", "fail", "observed", "Windows 10.0 build 19041");
    cJSON_Delete(doc);
    set_nt_version("10.0", "19042");
    snprintf(path, sizeof path, "%s/windows-build-seed-19042.json", AITK_TEST_REPORTS);
    r = RUN("--quick", "--profile", "seed-guide", "--json", path);
    ran_free(&r);
    doc = load_json(path);
    expect(doc, "windows.build", "pass", "observed", "Windows 10.0 build 19042");
    cJSON_Delete(doc);
    set_nt_version("6.1", "7601"); /* the prefix's own */
    REG("delete", WINE_VERSION_KEY, "/v", "Version", "/f");
}

/* windows.vcredist in the states a Windows machine is found in. */
static void vcredist_states(void **state)
{
    (void)state;
    char saved[4][MAX_PATH + 16];
    /* Wine answers a version query for a System32 DLL it has a builtin of
     * from that builtin, which has no version resource; Windows has no
     * builtins. "native" makes Wine read the file that is there, as Windows
     * does. Wine's own copies are kept aside and put back after. */
    for (size_t i = 0; i < 4; i++) {
        char stem[32];
        snprintf(stem, sizeof stem, "%.*s", (int)(strlen(runtime_dlls[i]) - 4), runtime_dlls[i]);
        REG("add", WINE_OVERRIDES_KEY, "/v", stem, "/t", "REG_SZ", "/d", "native", "/f");
    }
    for (size_t i = 0; i < 4; i++) {
        char path[MAX_PATH];
        system32_file(runtime_dlls[i], path, sizeof path);
        snprintf(saved[i], sizeof saved[i], "%s.aitk-saved", path);
        CopyFileA(path, saved[i], FALSE);
    }

    /* No redistributable registered, current DLLs from elsewhere. */
    REG("delete", VCRT_KEY, "/f");
    all_runtime_dlls("new");
    cJSON *doc = quick("windows-vcredist-unregistered", NULL);
    expect(doc, "windows.vcredist", "warn", "observed", "registry: no redistributable key");
    expect(doc, "windows.vcredist", "warn", "message", "not recorded as installed");
    expect(doc, "windows.vcredist", "warn", "remedy",
           "https://aka.ms/vs/17/release/vc_redist.x64.exe");
    cJSON_Delete(doc);

    /* An old redistributable (VS 2019's 14.29). */
    register_redistributable("v14.29.30133.00", "14", "29", "30133");
    doc = quick("windows-vcredist-old", NULL);
    expect(doc, "windows.vcredist", "fail", "message",
           "the installed redistributable is 14.29.30133, older than 14.40.33810");
    expect(doc, "windows.vcredist", "fail", "remedy", "vc_redist.x64.exe");
    cJSON_Delete(doc);

    /* A current one: passes, naming every DLL's version. */
    register_redistributable("v14.42.34433.00", "14", "42", "34433");
    doc = quick("windows-vcredist-current", NULL);
    expect(doc, "windows.vcredist", "pass", "observed", "registry: Installed=1, version 14.42.34433");
    expect(doc, "windows.vcredist", "pass", "observed", "vcruntime140_1.dll 14.42.34433.0");
    expect(doc, "windows.vcredist", "pass", "observed", "vcomp140.dll 14.42.34433.0");
    cJSON_Delete(doc);

    /* Microsoft documents Version and Major/Minor/Bld/Rbld, not Installed:
     * a key without Installed but with a current version is installed. */
    REG("delete", VCRT_KEY, "/v", "Installed", "/f");
    doc = quick("windows-vcredist-no-installed-value", NULL);
    expect(doc, "windows.vcredist", "pass", "observed",
           "registry: no Installed value, version 14.42.34433");
    cJSON_Delete(doc);

    /* The key only in the 32-bit view (SOFTWARE\Wow6432Node), where the
     * redistributable's 32-bit bootstrapper writes it on many machines. */
    REG("delete", VCRT_KEY, "/f");
    REG("add", VCRT_KEY, "/v", "Installed", "/t", "REG_DWORD", "/d", "1", "/reg:32", "/f");
    REG("add", VCRT_KEY, "/v", "Version", "/t", "REG_SZ", "/d", "v14.42.34433.00", "/reg:32",
        "/f");
    doc = quick("windows-vcredist-32-bit-view", NULL);
    expect(doc, "windows.vcredist", "pass", "observed",
           "registry (32-bit view): Installed=1, version 14.42.34433");
    cJSON_Delete(doc);
    REG("delete", VCRT_KEY, "/reg:32", "/f");
    register_redistributable("v14.42.34433.00", "14", "42", "34433");

    /* Registered, but one DLL gone: torch's WinError 126. */
    char vcomp[MAX_PATH];
    system32_file("vcomp140.dll", vcomp, sizeof vcomp);
    assert_true(DeleteFileA(vcomp));
    doc = quick("windows-vcredist-dll-missing", NULL);
    expect(doc, "windows.vcredist", "fail", "observed", "vcomp140.dll MISSING");
    expect(doc, "windows.vcredist", "fail", "message", "vcomp140.dll is missing from System32");
    expect(doc, "windows.vcredist", "fail", "message", "[WinError 126]");
    cJSON_Delete(doc);

    /* Registered as current, but an old msvcp140.dll in System32. */
    put_runtime_dll("new", "vcomp140.dll");
    put_runtime_dll("old", "msvcp140.dll");
    doc = quick("windows-vcredist-dll-old", NULL);
    expect(doc, "windows.vcredist", "fail", "observed", "msvcp140.dll 14.29.30133.0");
    expect(doc, "windows.vcredist", "fail", "message",
           "msvcp140.dll in System32 is older than 14.40.33810");
    cJSON_Delete(doc);

    REG("delete", VCRT_KEY, "/f");
    REG("delete", VCRT_KEY, "/reg:32", "/f");
    for (size_t i = 0; i < 4; i++) {
        char path[MAX_PATH];
        system32_file(runtime_dlls[i], path, sizeof path);
        if (CopyFileA(saved[i], path, FALSE))
            DeleteFileA(saved[i]);
        char stem[32];
        snprintf(stem, sizeof stem, "%.*s", (int)(strlen(runtime_dlls[i]) - 4), runtime_dlls[i]);
        REG("delete", WINE_OVERRIDES_KEY, "/v", stem, "/f");
    }
}

/* LongPathsEnabled 0, 1 and absent. */
static void long_paths_states(void **state)
{
    (void)state;
    REG("add", FS_KEY, "/v", "LongPathsEnabled", "/t", "REG_DWORD", "/d", "0", "/f");
    cJSON *doc = quick("windows-longpaths-0", NULL);
    expect(doc, "windows.long_paths", "warn", "observed", "LongPathsEnabled = 0");
    expect(doc, "windows.long_paths", "warn", "remedy", "-Name \"LongPathsEnabled\" -Value 1");
    cJSON_Delete(doc);

    REG("add", FS_KEY, "/v", "LongPathsEnabled", "/t", "REG_DWORD", "/d", "1", "/f");
    doc = quick("windows-longpaths-1", NULL);
    expect(doc, "windows.long_paths", "pass", "observed", "LongPathsEnabled = 1");
    cJSON_Delete(doc);

    REG("delete", FS_KEY, "/v", "LongPathsEnabled", "/f");
    doc = quick("windows-longpaths-unset", NULL);
    expect(doc, "windows.long_paths", "warn", "observed", "LongPathsEnabled is not set");
    cJSON_Delete(doc);
}

/* windows.gpu_mode from the stub nvml.dll in System32 (where DCH drivers
 * install it): a GeForce driving the display in WDDM mode warns with
 * ai-toolkit's low_vram advice; a TCC card, and a WDDM card with no
 * display, pass. */
static void gpu_mode_states(void **state)
{
    (void)state;
    char dll[MAX_PATH];
    system32_file("nvml.dll", dll, sizeof dll);
    if (!CopyFileA(AITK_WIN_STUB_NVML, dll, FALSE))
        fail_msg("cannot copy %s to %s (error %lu)", AITK_WIN_STUB_NVML, dll, GetLastError());

    set_env("AITK_STUB_GPU", "driver=572.16;gpu=NVIDIA GeForce RTX 4090|8.9|24564|display=1");
    cJSON *doc = quick("windows-gpu-wddm-display", NULL);
    expect(doc, "windows.gpu_mode", "warn", "observed",
           "GPU 0 NVIDIA GeForce RTX 4090: WDDM, drives a display, 512 MiB of 24.0 GiB already in use");
    expect(doc, "windows.gpu_mode", "warn", "message", "GPU 0 drives a display in WDDM mode");
    expect(doc, "windows.gpu_mode", "warn", "remedy", "low_vram: true");
    /* The probe's record: the model as nvidia-smi names it. */
    const cJSON *dev = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc,
            "environment"), "gpu"), "nvml"), "devices"), 0);
    assert_string_equal(json_str(cJSON_GetObjectItem(dev, "driver_model"), "current"), "WDDM");
    cJSON_Delete(doc);

    set_env("AITK_STUB_GPU", "driver=572.16;gpu=NVIDIA RTX A6000|8.6|49140|model=tcc");
    doc = quick("windows-gpu-tcc", NULL);
    expect(doc, "windows.gpu_mode", "pass", "observed", "GPU 0 NVIDIA RTX A6000: TCC, no display");
    cJSON_Delete(doc);

    set_env("AITK_STUB_GPU", "driver=572.16;gpu=NVIDIA GeForce RTX 3090|8.6|24576");
    doc = quick("windows-gpu-wddm-headless", NULL);
    expect(doc, "windows.gpu_mode", "pass", "observed", "WDDM, no display");
    cJSON_Delete(doc);

    /* A driver that refuses the question: said in NVML's words, not guessed. */
    set_env("AITK_STUB_GPU", "driver=572.16;refuse=nvmlDeviceGetDriverModel_v2:3;"
                             "gpu=NVIDIA GeForce RTX 3090|8.6|24576");
    doc = quick("windows-gpu-model-refused", NULL);
    expect(doc, "windows.gpu_mode", "pass", "observed", "NVML error 3: Not Supported");
    cJSON_Delete(doc);

    set_env("AITK_STUB_GPU", "");
    DeleteFileA(dll);
    doc = quick("windows-gpu-none", NULL);
    expect(doc, "windows.gpu_mode", "skip", "message", "no NVIDIA GPU answered");
    cJSON_Delete(doc);
}

/* Two CUDA toolkits' bin folders on PATH, as their installers leave them:
 * env.cuda_paths reads PATH with Windows' ';' and names both versions. */
static void several_cuda_toolkits_on_path(void **state)
{
    (void)state;
    char old_path[8192];
    DWORD n = GetEnvironmentVariableA("PATH", old_path, sizeof old_path);
    assert_true(n > 0 && n < sizeof old_path);
    char path[9000];
    snprintf(path, sizeof path,
             "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin;"
             "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin;%s", old_path);
    assert_int_equal(_putenv_s("PATH", path), 0);
    cJSON *doc = quick("windows-cuda-paths-two", NULL);
    assert_int_equal(_putenv_s("PATH", old_path), 0);
    expect(doc, "env.cuda_paths", "warn", "message", "2 CUDA versions are on the search paths (12.4, 11.8)");
    expect(doc, "env.cuda_paths", "warn", "observed",
           "PATH: C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin");
    expect(doc, "env.cuda_paths", "warn", "remedy", "CUDA_PATH");
    cJSON_Delete(doc);

    /* One toolkit: no warning. */
    snprintf(path, sizeof path,
             "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin;%s", old_path);
    assert_int_equal(_putenv_s("PATH", path), 0);
    doc = quick("windows-cuda-paths-one", NULL);
    assert_int_equal(_putenv_s("PATH", old_path), 0);
    expect(doc, "env.cuda_paths", "pass", "message", "one CUDA version");
    cJSON_Delete(doc);
}

static void put_file(const char *dir, const char *name, const char *text)
{
    char path[MAX_PATH];
    snprintf(path, sizeof path, "%s\\%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A Python installation as the checks read it: python.exe, the DLL that
 * names its version, and Lib\site-packages. */
static void fake_python(const char *dir, const char *dll)
{
    char lib[MAX_PATH], site[MAX_PATH];
    snprintf(lib, sizeof lib, "%s\\Lib", dir);
    snprintf(site, sizeof site, "%s\\site-packages", lib);
    CreateDirectoryA(dir, NULL);
    CreateDirectoryA(lib, NULL);
    CreateDirectoryA(site, NULL);
    put_file(dir, "python.exe", "MZ");
    put_file(dir, dll, "MZ");
}

/* --quick run in `cwd` (no venv there) with only this PATH and this
 * LOCALAPPDATA, and no active environment; all of them restored before
 * the report is returned, so a failing expectation leaves no trace. */
static cJSON *quick_with_path(const char *name, const char *cwd, const char *path,
                              const char *local)
{
    char old_path[8192], old_cwd[MAX_PATH], old_local[MAX_PATH];
    DWORD n = GetEnvironmentVariableA("PATH", old_path, sizeof old_path);
    assert_true(n > 0 && n < sizeof old_path);
    n = GetEnvironmentVariableA("LOCALAPPDATA", old_local, sizeof old_local);
    assert_true(n < sizeof old_local);
    if (n == 0)
        old_local[0] = '\0';
    assert_true(GetCurrentDirectoryA(sizeof old_cwd, old_cwd) > 0);
    assert_true(SetCurrentDirectoryA(cwd));
    _putenv_s("VIRTUAL_ENV", "");
    _putenv_s("CONDA_PREFIX", "");
    assert_int_equal(_putenv_s("LOCALAPPDATA", local), 0);
    assert_int_equal(_putenv_s("PATH", path), 0);
    cJSON *doc = quick(name, NULL);
    assert_int_equal(_putenv_s("PATH", old_path), 0);
    assert_int_equal(_putenv_s("LOCALAPPDATA", old_local), 0);
    assert_true(SetCurrentDirectoryA(old_cwd));
    return doc;
}

/* %LOCALAPPDATA%\Microsoft\WindowsApps holds the Microsoft Store's app
 * execution aliases python.exe and python3.exe (empty files to every
 * reader but CreateProcess); python.org's installer makes python.exe only.
 * The Python judged is the python.exe a shell runs, never the alias: with
 * python.org's Python after the aliases on PATH, that one, with a word
 * about the alias; with the aliases alone, a warning that says what they
 * are. The aliases here are the empty files Wine can make. */
static void store_aliases_on_path(void **state)
{
    (void)state;
    char base[MAX_PATH], apps[MAX_PATH], py[MAX_PATH], path[2048];
    assert_true(GetTempPathA(sizeof base, base) > 0);
    strncat(base, "aitk-store", sizeof base - strlen(base) - 1);
    snprintf(apps, sizeof apps, "%s\\WindowsApps", base);
    snprintf(py, sizeof py, "%s\\Python311", base);
    CreateDirectoryA(base, NULL);
    CreateDirectoryA(apps, NULL);
    put_file(apps, "python.exe", "");
    put_file(apps, "python3.exe", "");
    fake_python(py, "python311.dll");
    /* Only Windows' own folders besides these, and the aliases' entry
     * quoted and ending in a separator, as PATH entries may be written;
     * LOCALAPPDATA with no install manager's runtimes. */
    snprintf(path, sizeof path, "\"%s\\\";%s;C:\\windows\\system32;C:\\windows", apps, py);
    cJSON *doc = quick_with_path("windows-store-alias-then-python", base, path, base);
    snprintf(path, sizeof path, "%s\\;C:\\windows\\system32;C:\\windows", apps);
    cJSON *alone = quick_with_path("windows-store-alias-alone", base, path, base);
    expect(doc, "python.env", "pass", "observed", "Python311");
    expect(doc, "python.env", "pass", "observed", "an app execution alias or a launcher");
    expect(doc, "python.env", "pass", "observed", "Python 3.11");
    expect(alone, "python.env", "warn", "message", "the only python on PATH is an app "
                                                   "execution alias");
    expect(alone, "python.env", "warn", "observed", "WindowsApps\\python.exe");
    expect(alone, "python.env", "warn", "remedy", "python.org");
    cJSON_Delete(doc);
    cJSON_Delete(alone);
}

/* The Python install manager (python.org's installer from 3.14): `python`
 * is its alias in WindowsApps, python3.exe a launcher in
 * %LOCALAPPDATA%\Python\bin, and the runtimes pythoncore-<X.Y>-64 beside
 * it (python/pymanager src/pymanager.json: install_dir and global_dir).
 * The Python judged is the one `python` starts: the newest runtime. */
static void install_manager_on_path(void **state)
{
    (void)state;
    char base[MAX_PATH], local[MAX_PATH], apps[MAX_PATH], mgr[MAX_PATH], bin[MAX_PATH];
    assert_true(GetTempPathA(sizeof base, base) > 0);
    strncat(base, "aitk-pymanager", sizeof base - strlen(base) - 1);
    snprintf(local, sizeof local, "%s\\Local", base);
    snprintf(apps, sizeof apps, "%s\\Microsoft", local);
    snprintf(mgr, sizeof mgr, "%s\\Python", local);
    snprintf(bin, sizeof bin, "%s\\bin", mgr);
    const char *dirs[] = {base, local, apps, mgr, bin};
    for (size_t i = 0; i < 5; i++)
        CreateDirectoryA(dirs[i], NULL);
    strncat(apps, "\\WindowsApps", sizeof apps - strlen(apps) - 1);
    CreateDirectoryA(apps, NULL);
    put_file(apps, "python.exe", "");
    put_file(bin, "python3.exe", "MZ");
    put_file(bin, "python3.14.exe", "MZ");
    /* The free-threaded 3.15t is newer but not the default. */
    const char *runtimes[][2] = {{"pythoncore-3.13-64", "python313.dll"},
                                 {"pythoncore-3.14-64", "python314.dll"},
                                 {"pythoncore-3.15t-64", "python315t.dll"}};
    for (size_t i = 0; i < 3; i++) {
        char rt[MAX_PATH];
        snprintf(rt, sizeof rt, "%s\\%s", mgr, runtimes[i][0]);
        fake_python(rt, runtimes[i][1]);
    }
    char path[2048];
    snprintf(path, sizeof path, "%s;%s;C:\\windows\\system32;C:\\windows", apps, bin);
    cJSON *doc = quick_with_path("windows-pymanager", base, path, local);
    expect(doc, "python.env", "pass", "observed", "pythoncore-3.14-64");
    expect(doc, "python.env", "pass", "observed", "the Python install manager's default runtime");
    expect(doc, "python.env", "pass", "observed", "Python 3.14");
    cJSON_Delete(doc);
}

/* The whole file as text; the test fails when it cannot be read. */
static char *slurp(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    if (aitk_file_read(path, 1 << 24, &text, &len, NULL) != AITK_OK)
        fail_msg("cannot read %s", path);
    return text;
}

/* A user folder named Jörg (Latin-1, in code page 1252) or 张伟 (not in it)
 * end to end: the report is written into a folder of that name, the paths
 * in it and on the screen are that name in UTF-8, windows.user_profile
 * warns (the model cache is under it) and stops warning once HF_HOME moves
 * the cache out, and --redact leaves the name nowhere. */
static void non_ascii_user_folder(const char *name, const char *file_stem, const char *cp_words)
{
    char profile[256], dir[512], json[640], md[640];
    snprintf(profile, sizeof profile, "C:\\users\\%s", name);
    wchar_t wprofile[256];
    assert_true(MultiByteToWideChar(CP_UTF8, 0, profile, -1, wprofile, 256) > 0);
    CreateDirectoryW(wprofile, NULL);
    set_env("USERPROFILE", profile);
    set_env("USERNAME", name);
    set_env("HF_HOME", "");
    snprintf(dir, sizeof dir, "%s/%s", AITK_TEST_REPORTS, name);
    wchar_t wdir[512];
    assert_true(MultiByteToWideChar(CP_UTF8, 0, dir, -1, wdir, 512) > 0);
    CreateDirectoryW(wdir, NULL);
    snprintf(json, sizeof json, "%s/%s.json", dir, file_stem);
    snprintf(md, sizeof md, "%s/%s.md", dir, file_stem);

    ran r = RUN("--quick", "--json", json, "--markdown", md);
    if (r.rc != 1 && r.rc != 0)
        fail_msg("exit %d:\n%s", r.rc, aitk_str_cstr(&r.err));
    /* On the screen: the name in UTF-8, not "??" nor the legacy code page's bytes. */
    if (!strstr(aitk_str_cstr(&r.out), name))
        fail_msg("the screen does not show %s in UTF-8:\n%s", name, aitk_str_cstr(&r.out));
    ran_free(&r);
    cJSON *doc = load_json(json);
    char cache[512];
    snprintf(cache, sizeof cache, "%s\\.cache\\huggingface\\hub", profile);
    /* (Its verdict depends on this disk's free space; its path does not.) */
    if (!strstr(json_str(check(doc, "host.disk.model_cache"), "observed"), profile))
        fail_msg("host.disk.model_cache does not measure under %s", profile);
    expect(doc, "windows.user_profile", "warn", "observed", cache);
    expect(doc, "windows.user_profile", "warn", "observed", cp_words);
    expect(doc, "windows.user_profile", "warn", "remedy", "ASCII-only path");
    cJSON_Delete(doc);
    char *text = slurp(md);
    if (!strstr(text, name))
        fail_msg("the Markdown report does not name %s", profile);
    free(text);

    /* Redacted: the name is gone from every byte of the report. */
    r = RUN("--quick", "--redact", "--json", json);
    ran_free(&r);
    text = slurp(json);
    if (strstr(text, name))
        fail_msg("%s is still in the redacted report", name);
    free(text);

    /* The model cache moved to an ASCII folder: no warning. */
    set_env("HF_HOME", "C:\\ai\\hf-cache");
    r = RUN("--quick", "--json", json);
    ran_free(&r);
    doc = load_json(json);
    expect(doc, "windows.user_profile", "pass", "message", "the model cache is outside it");
    cJSON_Delete(doc);
    set_env("HF_HOME", "");
}

static void user_folder_latin(void **state)
{
    (void)state;
    non_ascii_user_folder("Jörg", "report-joerg", "all in the system code page 1252");
}

static void user_folder_chinese(void **state)
{
    (void)state;
    non_ascii_user_folder("张伟", "report-zhang-wei", "some not in the system code page 1252");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_windows_check_reported),
        cmocka_unit_test(windows_build_old_and_new),
        cmocka_unit_test(vcredist_states),
        cmocka_unit_test(long_paths_states),
        cmocka_unit_test(gpu_mode_states),
        cmocka_unit_test(several_cuda_toolkits_on_path),
        cmocka_unit_test(store_aliases_on_path),
        cmocka_unit_test(install_manager_on_path),
        cmocka_unit_test(user_folder_latin),
        cmocka_unit_test(user_folder_chinese),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
