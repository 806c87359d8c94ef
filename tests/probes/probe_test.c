/* Test helpers: everything here builds inputs or runs the binary; no
 * expected value is computed here. */
#define _GNU_SOURCE
#include "probe_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _WIN32
#include <windows.h>
#endif

#include "common/alloc.h"
#include "common/data.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/str.h"
#include "tests/proc_start.h"
#include "tests/temp_tree.h"
#include "tests/test_time.h"

#ifndef _WIN32
extern char **environ;
#endif

/* The scratch folders this program made, for pt_finish. */
static char **made_dirs;
static size_t n_made_dirs;

char *pt_tempdir(const char *tag)
{
    char path[512];
    snprintf(path, sizeof path, "%s/probes-tmp", AITK_BINARY_DIR);
    aitk_dir_create(path, NULL);
    snprintf(path, sizeof path, "%s/probes-tmp/%s-XXXXXX", AITK_BINARY_DIR, tag);
    char *d = mkdtemp(path);
    assert_non_null(d);
    char **grown = realloc(made_dirs, (n_made_dirs + 1) * sizeof *made_dirs);
    assert_non_null(grown);
    made_dirs = grown;
    made_dirs[n_made_dirs] = strdup(d);
    assert_non_null(made_dirs[n_made_dirs]);
    n_made_dirs++;
    return strdup(d);
}

int pt_finish(int failed)
{
    int left = 0;
    for (size_t i = 0; i < n_made_dirs; i++) {
        if (!failed && aitk_test_remove_tree(made_dirs[i]) != 0) {
            fprintf(stderr, "could not remove the scratch folder %s\n", made_dirs[i]);
            left++;
        }
        free(made_dirs[i]);
    }
    if (failed && n_made_dirs)
        fprintf(stderr, "kept this program's %zu scratch folders under %s/probes-tmp to look at\n",
                n_made_dirs, AITK_BINARY_DIR);
    free(made_dirs);
    made_dirs = NULL;
    n_made_dirs = 0;
    return failed ? failed : (left ? 1 : 0);
}

void pt_write(const char *dir, const char *rel, const char *text)
{
    aitk_str p = AITK_STR_INIT;
    aitk_path_join(&p, dir, rel);
    char *parent = strdup(aitk_str_cstr(&p));
    *strrchr(parent, '/') = '\0';
    assert_int_equal(aitk_dir_create(parent, NULL), 0);
    FILE *f = fopen(aitk_str_cstr(&p), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(parent);
    aitk_str_free(&p);
}

void pt_chmod_x(const char *dir, const char *rel)
{
    aitk_str p = AITK_STR_INIT;
    aitk_path_join(&p, dir, rel);
    assert_int_equal(chmod(aitk_str_cstr(&p), 0755), 0);
    aitk_str_free(&p);
}

char *pt_site(const char *root, const char *pyver)
{
    int ma = 0, mi = 0;
    sscanf(pyver, "%d.%d", &ma, &mi);
    char buf[1024];
#ifdef _WIN32
    (void)ma;
    (void)mi;
    snprintf(buf, sizeof buf, "%s/Lib/site-packages", root);
#else
    snprintf(buf, sizeof buf, "%s/lib/python%d.%d/site-packages", root, ma, mi);
#endif
    return strdup(buf);
}

void pt_fake_venv(const char *root, const char *pyver, const char *const *pkgs,
                  const char *torch_cuda)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "home = /usr/bin\ninclude-system-site-packages = false\n"
                              "version = %s\n", pyver);
    pt_write(root, "pyvenv.cfg", buf);
#ifdef _WIN32
    /* Not a program: Windows refuses to start it, as the Linux script exits 99. */
    pt_write(root, "Scripts/python.exe", "not a program\n");
#else
    pt_write(root, "bin/python3", "#!/bin/sh\nexit 99\n");
    pt_chmod_x(root, "bin/python3");
#endif
    char *site = pt_site(root, pyver);
    for (const char *const *p = pkgs; p && *p; p++) {
        const char *eq = strstr(*p, "==");
        char name[128], ver[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq - *p), *p);
        snprintf(ver, sizeof ver, "%s", eq + 2);
        char rel[512], dirname[256];
        snprintf(dirname, sizeof dirname, "%s", name);
        for (char *c = dirname; *c; c++)
            if (*c == '-')
                *c = '_';
        snprintf(rel, sizeof rel, "%s-%s.dist-info/METADATA", dirname, ver);
        snprintf(buf, sizeof buf, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: x\n\nbody\n",
                 name, ver);
        pt_write(site, rel, buf);
        if (strcmp(name, "torch") == 0) {
            if (torch_cuda)
                snprintf(buf, sizeof buf,
                         "__version__ = '%s'\ndebug = False\ncuda: Optional[str] = '%s'\n"
                         "git_version = '0123456789abcdef'\nhip: Optional[str] = None\n",
                         ver, torch_cuda);
            else
                snprintf(buf, sizeof buf,
                         "__version__ = '%s'\ndebug = False\ncuda: Optional[str] = None\n"
                         "git_version = '0123456789abcdef'\nhip: Optional[str] = None\n", ver);
            pt_write(site, "torch/version.py", buf);
        }
    }
    free(site);
}

static int dropped(const char *entry, const char *const *extra)
{
    /* Variables that would steer the probes away from the test's setup. */
    static const char *const drop[] = {"LD_LIBRARY_PATH=", "AITK_STUB_GPU=", "VIRTUAL_ENV=",
                                       "CONDA_PREFIX=", "PYTHONPATH=", "CUDA_VISIBLE_DEVICES=",
                                       "AITK_DATA_DIR=", NULL};
    for (const char *const *d = drop; *d; d++)
        if (strncmp(entry, *d, strlen(*d)) == 0)
            return 1;
    for (const char *const *e = extra; e && *e; e++) {
        size_t n = strcspn(*e, "=") + 1;
        if (strncmp(entry, *e, n) == 0)
            return 1;
    }
    return 0;
}

/* A sanitizer report that is about our code: any memory error, any UBSan
 * "runtime error", and any leak whose allocation stack passes through this
 * repository's sources. Leaks allocated inside the CUDA libraries (their
 * statically linked C++ runtimes keep a pool; the standard level's dependency
 * check also unloads them, leaving "<unknown module>" frames) are not ours. */
static int sanitizer_complaint(const char *err)
{
    if (strstr(err, "runtime error:") || strstr(err, "ERROR: AddressSanitizer"))
        return 1;
    for (const char *p = err; (p = strstr(p, " leak of ")) != NULL; p++) {
        const char *end = strstr(p, "\n\n");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *block = aitk_strndup(p, n);
        int ours = block && strstr(block, AITK_SOURCE_DIR) != NULL;
        aitk_free(block);
        if (ours)
            return 1;
    }
    return 0;
}

void pt_nvml_only(const char *stub_dir, const char *dir)
{
    char target[1024], link[1024];
    snprintf(target, sizeof target, "%s/" PT_NVML_LIB, stub_dir);
    snprintf(link, sizeof link, "%s/" PT_NVML_LIB, dir);
#ifdef _WIN32
    assert_true(CopyFileA(target, link, FALSE));
#else
    assert_int_equal(symlink(target, link), 0);
#endif
}

#ifdef _WIN32
/* The NVIDIA driver of this Windows: each of nvml.dll and nvcuda.dll from
 * the first folder of `dirs` (';'-separated) that has it, copied into
 * System32, where DCH drivers install them and the probes look first; a
 * library no folder has is removed from there. The prefix is the test's
 * own scratch copy (WINEPREFIX, set by CMake). */
static void install_driver(const char *dirs)
{
    static const char *const libs[] = {PT_NVML_LIB, PT_CUDA_LIB};
    char sys32[MAX_PATH];
    UINT n = GetSystemDirectoryA(sys32, sizeof sys32);
    assert_true(n > 0 && n < sizeof sys32);
    for (size_t i = 0; i < 2; i++) {
        char dst[MAX_PATH + 32];
        snprintf(dst, sizeof dst, "%s\\%s", sys32, libs[i]);
        DeleteFileA(dst);
        for (const char *p = dirs ? dirs : ""; *p;) {
            size_t len = strcspn(p, ";");
            char src[1024];
            snprintf(src, sizeof src, "%.*s/%s", (int)len, p, libs[i]);
            if (GetFileAttributesA(src) != INVALID_FILE_ATTRIBUTES) {
                if (!CopyFileA(src, dst, FALSE))
                    fail_msg("cannot copy %s to %s (error %lu)", src, dst, GetLastError());
                break;
            }
            p += len + (p[len] == ';');
        }
    }
}
#endif

#ifndef _WIN32
/* Runs at the standard level spend half a minute and more each on 2 cores
 * in CPU microbenchmarks at the models' real GEMM widths, which no probe
 * test is about. pt_run gives the binary the build's own data files from a
 * folder (AITK_DATA_DIR) where bench/workloads.yaml times them at 64 px (16
 * image tokens) for 1 ms each and copies 1 MiB. */
static const struct {
    const char *from, *to;
} fast_micro[] = {
    {"  memcpy_mib:\n    value: 256\n", "  memcpy_mib:\n    value: 1\n"},
    {"  gemm_resolution:\n    value: 512\n", "  gemm_resolution:\n    value: 64\n"},
    {"  attention_resolution:\n    value: 256\n", "  attention_resolution:\n    value: 64\n"},
    {"  min_time_s:\n    value: 0.2\n", "  min_time_s:\n    value: 0.001\n"},
};

/* text with `from` replaced by `to`; fails the test unless `from` is there
 * once (workloads.yaml spelled otherwise would make the runs slow again
 * unnoticed). */
static void replace_once(aitk_str *text, const char *from, const char *to)
{
    const char *t = aitk_str_cstr(text), *at = strstr(t, from);
    if (!at || strstr(at + 1, from))
        fail_msg("bench/workloads.yaml does not hold '%s' once", from);
    aitk_str out = AITK_STR_INIT;
    aitk_str_appendf(&out, "%.*s%s%s", (int)(at - t), t, to, at + strlen(from));
    assert_int_equal(aitk_str_status(&out), AITK_OK);
    aitk_str_free(text);
    *text = out;
}

/* "AITK_DATA_DIR=<folder>", the folder written on the first call. */
static const char *fast_data_env(void)
{
    static char env[700];
    if (env[0])
        return env;
    char *dir = pt_tempdir("fast-data");
    size_t patched = 0;
    for (size_t i = 0; i < aitk_embedded_file_count; i++) {
        const aitk_embedded_file *f = &aitk_embedded_files[i];
        aitk_str text = AITK_STR_INIT;
        aitk_str_appendf(&text, "%.*s", (int)f->len, (const char *)f->data);
        assert_int_equal(aitk_str_status(&text), AITK_OK);
        if (strcmp(f->name, "bench/workloads.yaml") == 0) {
            for (size_t k = 0; k < sizeof fast_micro / sizeof *fast_micro; k++)
                replace_once(&text, fast_micro[k].from, fast_micro[k].to);
            patched++;
        }
        pt_write(dir, f->name, aitk_str_cstr(&text));
        aitk_str_free(&text);
    }
    assert_int_equal(patched, 1);
    snprintf(env, sizeof env, "AITK_DATA_DIR=%s", dir);
    free(dir);
    return env;
}
#endif

cJSON *pt_run(const char *lib_dir, const char *spec, const char *const *args,
              const char *const *extra_env, int *exit_code)
{
    static int serial;
    /* Into the shared reports folder, so schema.all_reports validates them too. */
    char json_path[600];
    snprintf(json_path, sizeof json_path, "%s/probes-%ld-%d.json", AITK_TEST_REPORTS,
             (long)getpid(), serial++);
    size_t n = 0;
    while (environ[n])
        n++;
    const char **env = calloc(n + 16, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!dropped(environ[i], extra_env))
            env[k++] = environ[i];
    char ld[1024], sp[1024];
#ifdef _WIN32
    install_driver(lib_dir);
    if (0) {
#else
    if (lib_dir) {
#endif
        snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", lib_dir);
        env[k++] = ld;
    }
    if (spec) {
        snprintf(sp, sizeof sp, "AITK_STUB_GPU=%s", spec);
        env[k++] = sp;
    }
    bool own_data = false;
    for (const char *const *e = extra_env; e && *e && k < n + 15; e++) {
        own_data |= strncmp(*e, "AITK_DATA_DIR=", 14) == 0;
        env[k++] = *e;
    }
#ifndef _WIN32
    if (!own_data && k < n + 15)
        env[k++] = fast_data_env();
#else
    (void)own_data; /* Wine's runs keep the embedded data */
#endif
    env[k] = NULL;
    const char *argv[64];
    size_t a = 0;
    argv[a++] = AITK_EXE;
    for (const char *const *p = args; p && *p && a < 60; p++)
        argv[a++] = *p;
    argv[a++] = "--json";
    argv[a++] = json_path;
    argv[a] = NULL;
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(60000), .env = env};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, errout = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_status st = aitk_test_proc_run(argv, &o, &r, &out, &errout, &err);
    free(env);
    if (st)
        fail_msg("could not run %s: %s", AITK_EXE, aitk_str_cstr(&err));
    *exit_code = r.exited ? r.exit_code : 128 + r.term_signal;
    /* Under AITK_SANITIZE the child is instrumented too: its reports count. */
    if (sanitizer_complaint(aitk_str_cstr(&errout)))
        fail_msg("sanitizer report from %s:\n%s", AITK_EXE, aitk_str_cstr(&errout));
    char *text = NULL;
    size_t len = 0;
    if (aitk_file_read(json_path, 1 << 24, &text, &len, NULL))
        fail_msg("no report written (exit %d)\nstdout:\n%s\nstderr:\n%s", *exit_code,
                 aitk_str_cstr(&out), aitk_str_cstr(&errout));
    cJSON *report = cJSON_Parse(text);
    aitk_free(text);
    if (!report)
        fail_msg("report is not JSON: %s", json_path);
    aitk_str_free(&out);
    aitk_str_free(&errout);
    aitk_str_free(&err);
    return report;
}

const char *pt_text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

const cJSON *pt_find_check(const cJSON *report, const char *id)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "checks"))
    {
        if (strcmp(pt_text(c, "id"), id) == 0)
            return c;
    }
    return NULL;
}

const cJSON *pt_check(const cJSON *report, const char *id)
{
    const cJSON *c = pt_find_check(report, id);
    if (!c) {
        aitk_str ids = AITK_STR_INIT;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "checks"))
        {
            aitk_str_appendf(&ids, " %s", pt_text(c, "id"));
        }
        fail_msg("no check '%s' in the report (have:%s)", id, aitk_str_cstr(&ids));
    }
    return c;
}

void pt_assert_contains_at(const char *hay, const char *needle, const char *file, int line)
{
    if (!strstr(hay, needle)) {
        print_error("ERROR: expected to find \"%s\" in \"%s\"\n", needle, hay);
        _fail(file, line);
    }
}

void pt_assert_status_at(const cJSON *check, const char *status, const char *file, int line)
{
    if (strcmp(pt_text(check, "status"), status) != 0) {
        print_error("ERROR: check %s: status %s, expected %s (observed: %s; message: %s)\n",
                    pt_text(check, "id"), pt_text(check, "status"), status,
                    pt_text(check, "observed"), pt_text(check, "message"));
        _fail(file, line);
    }
}

char *pt_real_venv(const char *venv, const char *const dists[][2], size_t n, const char *cuda,
                   char root[800])
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "python3 -m venv --without-pip '%s/v' >/dev/null 2>&1", venv);
    if (system(cmd) != 0)
        skip();
    char ver[32] = "";
    snprintf(root, 800, "%s/v", venv);
    snprintf(cmd, sizeof cmd, "'%s/bin/python3' -c 'import sys; print(\"%%d.%%d\" %% "
                              "sys.version_info[:2])'", root);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    assert_non_null(fgets(ver, sizeof ver, f));
    pclose(f);
    ver[strcspn(ver, "\n")] = '\0';
    char *site = pt_site(root, ver);
    for (size_t i = 0; i < n; i++) {
        char rel[256], meta[256];
        snprintf(rel, sizeof rel, "%s-%s.dist-info/METADATA", dists[i][0], dists[i][1]);
        snprintf(meta, sizeof meta, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n",
                 dists[i][0], dists[i][1]);
        pt_write(site, rel, meta);
    }
    char text[256];
    snprintf(text, sizeof text, "__version__ = '%s'\n", dists[0][1]);
    pt_write(site, "torch/__init__.py", text);
    snprintf(text, sizeof text, "__version__ = '%s'\ncuda = '%s'\n", dists[0][1], cuda);
    pt_write(site, "torch/version.py", text);
    return site;
}
