/* The real aitk-validate binary and the CUDA plugin:
 * - --quick does not map the plugin (the dynamic loader's own trace,
 *   LD_DEBUG=files, is searched for it) and has no gpu.plugin check;
 * - a standard run opens it (the same trace shows it) and reports gpu.plugin:
 *   on a machine without a GPU it fails with the CUDA runtime's words, and
 *   micro[] holds CPU entries only; on one with a GPU it passes and micro[]
 *   holds the GPU's entries too, timed through the same ops.
 * The standard report is checked against the JSON Schema and kept for
 * schema.all_reports. */
#include <cjson/cJSON.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "tests/report_json.h"
#include "tests/cuda/cuda_test.h"
#include "tests/test_time.h"

static char tmp[] = "/tmp/aitk-cuda-cli-XXXXXX";

typedef struct run {
    int exit_code;
    double ms;
    aitk_str out, err;
} run;

static void run_exe(run *r, const char *const *args)
{
    const char *argv[32] = {AITK_EXE};
    int n = 1;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    static aitk_str path_env, home_env, asan_env;
    aitk_str_clear(&path_env);
    aitk_str_clear(&home_env);
    aitk_str_clear(&asan_env);
    aitk_str_appendf(&path_env, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    aitk_str_appendf(&home_env, "HOME=%s", getenv("HOME") ? getenv("HOME") : "/tmp");
    const char *env[8] = {path_env.ptr, home_env.ptr, "NO_COLOR=1", "LD_DEBUG=files"};
    if (getenv("ASAN_OPTIONS")) {
        aitk_str_appendf(&asan_env, "ASAN_OPTIONS=%s", getenv("ASAN_OPTIONS"));
        env[4] = asan_env.ptr;
    }
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(600000), .env = env};
    aitk_proc_result pr;
    r->out = (aitk_str)AITK_STR_INIT;
    r->err = (aitk_str)AITK_STR_INIT;
    aitk_str why = AITK_STR_INIT;
    double t0 = aitk_clock_ms();
    if (aitk_proc_run(argv, &o, &pr, &r->out, &r->err, &why) || !pr.exited)
        fail_msg("could not run %s: %s", AITK_EXE, aitk_str_cstr(&why));
    r->ms = aitk_clock_ms() - t0;
    r->exit_code = pr.exit_code;
    aitk_str_free(&why);
}

static void run_free(run *r)
{
    aitk_str_free(&r->out);
    aitk_str_free(&r->err);
}

/* The dynamic loader's trace names every object it maps. */
static bool mapped_plugin(const run *r)
{
    return strstr(aitk_str_cstr(&r->err), "libaitk_cuda.so") != NULL;
}

static void test_quick_does_not_load_the_plugin(void **state)
{
    (void)state;
    aitk_str json = AITK_STR_INIT;
    aitk_path_join(&json, tmp, "quick.json");
    const char *args[] = {"--quick", "--json", json.ptr, "--no-color", NULL};
    run r;
    run_exe(&r, args);
    print_message("--quick took %.0f ms (exit %d)\n", r.ms, r.exit_code);
    assert_true(r.exit_code == 0 || r.exit_code == 1);
    /* The trace is there (the positive control is the standard run below)... */
    assert_non_null(strstr(r.err.ptr, "file="));
    /* ...and does not name the plugin. */
    assert_false(mapped_plugin(&r));
    cJSON *rep = load_json(json.ptr);
    assert_null(find_check(rep, "gpu.plugin"));
    assert_null(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(rep, "environment"), "cuda_plugin"));
    cJSON_Delete(rep);
    run_free(&r);
    aitk_str_free(&json);
}

static const cJSON *find_micro(const cJSON *report, const char *name)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(report, "micro"))
    if (!strcmp(json_str(m, "name"), name))
        return m;
    return NULL;
}

static void check_schema(const char *report)
{
    aitk_str keep = AITK_STR_INIT, err = AITK_STR_INIT, out = AITK_STR_INIT, eout = AITK_STR_INIT;
    char *data = NULL;
    size_t len = 0;
    aitk_path_join(&keep, AITK_TEST_REPORTS, "cuda-standard.json");
    assert_int_equal(aitk_file_read(report, 64 << 20, &data, &len, &err), 0);
    assert_int_equal(aitk_file_write_atomic(keep.ptr, data, len, &err), 0);
    free(data);
    const char *argv[] = {"/usr/bin/python3", AITK_SOURCE_DIR "/tests/tools/validate_reports.py",
                          AITK_SOURCE_DIR "/reports/schema/report.schema.json", report, NULL};
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(60000)};
    aitk_proc_result pr;
    if (aitk_proc_run(argv, &o, &pr, &out, &eout, &err) == AITK_OK && pr.exited &&
        pr.exit_code != 77 && pr.exit_code != 0)
        fail_msg("schema: %s%s", aitk_str_cstr(&out), aitk_str_cstr(&eout));
    aitk_str_free(&keep);
    aitk_str_free(&err);
    aitk_str_free(&out);
    aitk_str_free(&eout);
}

static void test_standard_reports_gpu_plugin(void **state)
{
    (void)state;
    /* What the plugin itself says on this machine decides what to expect. */
    aitk_status probe_st = AITK_OK;
    assert_non_null(cuda_test_open(&probe_st));
    const bool gpu = probe_st == AITK_OK && cuda_test_probe.n_devices > 0;
    aitk_str dir = AITK_STR_INIT, json = AITK_STR_INIT;
    aitk_path_join(&dir, tmp, "standard");
    aitk_path_join(&json, dir.ptr, "report.json");
    const char *args[] = {"--model", "chroma", "--steps", "2", "--output-dir", dir.ptr,
                          "--no-color", NULL};
    run r;
    run_exe(&r, args);
    print_message("standard run took %.1f s (exit %d)\n", r.ms / 1e3, r.exit_code);
    assert_true(r.exit_code == 0 || r.exit_code == 1);
    assert_true(mapped_plugin(&r));
    cJSON *rep = load_json(json.ptr);
    const cJSON *c = find_check(rep, "gpu.plugin");
    assert_non_null(c);
    print_message("gpu.plugin: %s: %s\n", json_str(c, "status"), json_str(c, "message"));
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(rep, "environment"), "cuda_plugin");
    assert_true(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(rec, "loaded")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "loaded")));
    int cuda_entries = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(rep, "micro"))
    cuda_entries += strcmp(json_str(m, "backend"), "cuda") == 0;
    assert_non_null(find_micro(rep, "gemm.cpu.fp32.flux1-dev.img_qkv"));
    if (gpu)
        assert_non_null(find_micro(rep, "gemm.cuda.bf16.flux1-dev.img_qkv"));
    else
        assert_int_equal(cuda_entries, 0);
    if (probe_st) {
        assert_string_equal(json_str(c, "status"), "fail");
        assert_non_null(strstr(json_str(c, "message"), "The CUDA plugin loads, but its CUDA runtime"));
        assert_non_null(strstr(json_str(c, "message"), cuda_test_probe.error));
        if (cuda_test_probe.driver_version == 0)
            assert_non_null(strstr(json_str(c, "message"), "No NVIDIA driver is loaded"));
        assert_true(*json_str(c, "remedy"));
    } else {
        assert_string_equal(json_str(c, "status"), "pass");
        assert_non_null(strstr(json_str(c, "message"), "cuDNN"));
    }
    cJSON_Delete(rep);
    check_schema(json.ptr);
    run_free(&r);
    aitk_str_free(&dir);
    aitk_str_free(&json);
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb, (void)type, (void)ftw;
    return remove(path);
}

int main(void)
{
    if (!mkdtemp(tmp))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quick_does_not_load_the_plugin),
        cmocka_unit_test(test_standard_reports_gpu_plugin),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* The reports were checked above; whatever the runs wrote goes, pass or fail, so
     * repeated runs leave nothing in /tmp. */
    nftw(tmp, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return failed;
}
