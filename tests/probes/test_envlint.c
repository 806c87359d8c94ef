/* Environment-variable lint, through the real binary with a chosen
 * environment, plus the allocator-config parser on its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "probe_test.h"
#include "validate/probes/envlint.h"

static cJSON *run_env(const char *spec, const char *const *env)
{
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    return pt_run(spec ? AITK_STUB_DIR : "/nonexistent", spec, args, env, &rc);
}

static void test_flagged_variables(void **state)
{
    (void)state;
    const char *env[] = {"CUDA_LAUNCH_BLOCKING=1", "KMP_DUPLICATE_LIB_OK=TRUE",
                         "PYTORCH_ENABLE_MPS_FALLBACK=1", "CUDA_INJECTION64_PATH=/opt/x/libinj.so",
                         NULL};
    cJSON *r = run_env(NULL, env);
    const cJSON *c = pt_check(r, "env.flags");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "observed"), "CUDA_LAUNCH_BLOCKING=1");
    pt_assert_contains(pt_text(c, "observed"), "KMP_DUPLICATE_LIB_OK=TRUE");
    pt_assert_contains(pt_text(c, "observed"), "CUDA_INJECTION64_PATH=/opt/x/libinj.so");
#ifndef __APPLE__
    pt_assert_contains(pt_text(c, "message"), "PYTORCH_ENABLE_MPS_FALLBACK: only affects Apple's MPS");
#endif
    pt_assert_contains(pt_text(c, "message"), "every kernel launch waits for the GPU");
    cJSON_Delete(r);
}

static void test_harmless_values_pass(void **state)
{
    (void)state;
    const char *env[] = {"CUDA_LAUNCH_BLOCKING=0", "KMP_DUPLICATE_LIB_OK=FALSE", NULL};
    cJSON *r = run_env(NULL, env);
    const cJSON *c = pt_check(r, "env.flags");
    pt_assert_status(c, "pass");
    cJSON_Delete(r);
}

static void test_visible_devices(void **state)
{
    (void)state;
    const char *spec = "gpu=NVIDIA GeForce RTX 4090|8.9|24564;gpu=NVIDIA GeForce RTX 4090|8.9|24564";
    const char *hide[] = {"CUDA_VISIBLE_DEVICES=-1", NULL};
    cJSON *r = run_env(spec, hide);
    const cJSON *c = pt_check(r, "env.cuda_visible_devices");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "message"), "hides every GPU");
    pt_assert_contains(pt_text(c, "observed"), "2 GPUs installed");
    cJSON_Delete(r);

    const char *empty[] = {"CUDA_VISIBLE_DEVICES=", NULL};
    r = run_env(spec, empty);
    pt_assert_status(pt_check(r, "env.cuda_visible_devices"), "fail");
    cJSON_Delete(r);

    const char *past[] = {"CUDA_VISIBLE_DEVICES=1,2,0", NULL};
    r = run_env(spec, past);
    c = pt_check(r, "env.cuda_visible_devices");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "message"), "'2' is past the last GPU");
    pt_assert_contains(pt_text(c, "message"), "1 GPU stays visible");
    cJSON_Delete(r);

    const char *ok[] = {"CUDA_VISIBLE_DEVICES=1", NULL};
    r = run_env(spec, ok);
    pt_assert_status(pt_check(r, "env.cuda_visible_devices"), "pass");
    cJSON_Delete(r);
}

static void test_alloc_conf_in_report(void **state)
{
    (void)state;
    const char *env[] = {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments=True", NULL};
    cJSON *r = run_env(NULL, env);
    const cJSON *c = pt_check(r, "env.pytorch_cuda_alloc_conf");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "message"), "not '='");
    cJSON_Delete(r);
}

static void expect_conf(const char *text, int ok, const char *why_part)
{
    aitk_str why = AITK_STR_INIT;
    aitk_status st = aitk_envlint_alloc_conf(text, &why);
    if (ok && st)
        fail_msg("'%s' refused: %s", text, aitk_str_cstr(&why));
    if (!ok && !st)
        fail_msg("'%s' accepted", text);
    if (why_part)
        pt_assert_contains(aitk_str_cstr(&why), why_part);
    aitk_str_free(&why);
}

static void test_alloc_conf_parser(void **state)
{
    (void)state;
    expect_conf("expandable_segments:True", 1, NULL);
    expect_conf("max_split_size_mb:512,garbage_collection_threshold:0.6", 1, NULL);
    expect_conf("roundup_power2_divisions:[256:1,512:2,>:8],backend:cudaMallocAsync", 1, NULL);
    expect_conf("expandable_segments:true", 0, "True or False");
    expect_conf("max_split_size_mb:big", 0, "whole number");
    expect_conf("garbage_collection_threshold:1.5", 0, "between 0 and 1");
    expect_conf("expandable_segment:True", 0, "unknown option 'expandable_segment'");
    expect_conf("backend:cuda", 0, "cudaMallocAsync");
}

static void test_secret_values_never_shown(void **state)
{
    (void)state;
    const char *env[] = {"HF_TOKEN=hf_AITKTESTSECRET123", "AITK_UNLISTED_VAR=zzz-unlisted",
                         "CUDA_VISIBLE_DEVICES=0", NULL};
    cJSON *r = run_env(NULL, env);
    char *text = cJSON_PrintUnformatted(r);
    assert_null(strstr(text, "hf_AITKTESTSECRET123"));
    assert_null(strstr(text, "AITK_UNLISTED_VAR"));
    assert_null(strstr(text, "zzz-unlisted"));
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r, "environment"), "environment_variables"), "set");
    assert_string_equal(pt_text(set, "HF_TOKEN"), "(set; value not shown)");
    assert_string_equal(pt_text(set, "CUDA_VISIBLE_DEVICES"), "0");
    free(text);
    cJSON_Delete(r);
}

static void test_several_cuda_versions(void **state)
{
    (void)state;
    char *a = pt_tempdir("cuda-11.8"), *b = pt_tempdir("cuda-12.4");
    char path[2048], ld[1024];
    snprintf(path, sizeof path, "PATH=%s/bin:/usr/bin:/bin", a);
    snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s/lib64", b);
    const char *env[] = {path, NULL};
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    /* LD_LIBRARY_PATH through pt_run's own argument, PATH through env. */
    cJSON *r = pt_run(ld + strlen("LD_LIBRARY_PATH="), NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "env.cuda_paths");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "message"), "2 CUDA versions");
    pt_assert_contains(pt_text(c, "message"), "11.8");
    pt_assert_contains(pt_text(c, "message"), "12.4");
    /* Non-CUDA PATH entries are not reported. */
    assert_null(strstr(pt_text(c, "observed"), "/usr/bin"));
    cJSON_Delete(r);
    free(a);
    free(b);
}

/* Under WSL, Windows' PATH follows Linux's, with a Windows CUDA toolkit's
 * folders under /mnt/c: nothing a Linux program loads, so one CUDA version
 * (the Linux one), not two. */
static void test_windows_cuda_under_wsl_not_counted(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* a WSL PATH: Linux only */
#endif
    const char *env[] = {"PATH=/usr/local/cuda-12.8/bin:/usr/bin:/bin:"
                         "/mnt/c/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4/bin:"
                         "/mnt/c/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4/libnvvp",
                         NULL};
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "env.cuda_paths");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "/usr/local/cuda-12.8/bin");
    assert_null(strstr(pt_text(c, "observed"), "/mnt/c"));
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flagged_variables),
        cmocka_unit_test(test_harmless_values_pass),
        cmocka_unit_test(test_visible_devices),
        cmocka_unit_test(test_alloc_conf_in_report),
        cmocka_unit_test(test_alloc_conf_parser),
        cmocka_unit_test(test_secret_values_never_shown),
        cmocka_unit_test(test_several_cuda_versions),
        cmocka_unit_test(test_windows_cuda_under_wsl_not_counted),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
