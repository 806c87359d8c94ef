/* CUDA stack probe on fake library trees: search order (torch/lib, then
 * site-packages/nvidia, then LD_LIBRARY_PATH, then the system), the version
 * sources at --quick (pip dist-info, headers, file names), and loading at
 * the standard level. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_test.h"

static void test_pip_and_torch_lib_win(void **state)
{
    (void)state;
    char *venv = pt_tempdir("cs-venv");
    const char *pkgs[] = {"torch==2.1.2+cu118", "nvidia-cudnn-cu12==9.1.0.70", NULL};
    pt_fake_venv(venv, "3.11.9", pkgs, "11.8");
    char *site = pt_site(venv, "3.11.9");
    pt_write(site, "torch/lib/libcudart-d0da41ae.so.11.0", "not an ELF");
    pt_write(site, "nvidia/cudnn/lib/libcudnn.so.9", "not an ELF");
    /* A toolkit on LD_LIBRARY_PATH with its header: later in the order. */
    char *tk = pt_tempdir("cs-toolkit");
    pt_write(tk, "lib64/libnccl.so.2", "not an ELF");
    pt_write(tk, "lib64/libcudnn.so.8", "not an ELF");
    pt_write(tk, "include/nccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 21\n#define NCCL_PATCH 5\n");
    char ld[800];
    snprintf(ld, sizeof ld, "%s/lib64", tk);
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(ld, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "cuda.cudart");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "torch/lib/libcudart-d0da41ae.so.11.0 11.0 (torch/lib");
    c = pt_check(r, "cuda.cudnn");
    pt_assert_contains(pt_text(c, "observed"), "nvidia/cudnn/lib/libcudnn.so.9 9.1.0.70");
    pt_assert_contains(pt_text(c, "observed"), "pip package nvidia-cudnn-cu12");
    pt_assert_contains(pt_text(c, "message"), "other copies");
    c = pt_check(r, "cuda.nccl");
    pt_assert_contains(pt_text(c, "observed"), "lib64/libnccl.so.2 2.21.5 (LD_LIBRARY_PATH");
    /* The order searched is in the record, torch's own folder first. */
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "environment"),
                                         "cuda_stack"), "search_order");
    pt_assert_contains(cJSON_GetArrayItem(order, 0)->valuestring, "torch/lib");
    cJSON_Delete(r);
    free(site);
    free(tk);
    free(venv);
}

/* LD_LIBRARY_PATH folders that hold no CUDA library and do not say CUDA in
 * their name are counted in the search order, not named: they may name
 * private folders (envlint.c's rule for PATH-like variables). The folder
 * where a library was found, and one named for CUDA, are listed. */
static void test_search_order_names_only_cuda_folders(void **state)
{
    (void)state;
    char *venv = pt_tempdir("cs-order-venv");
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    char *tk = pt_tempdir("cs-order-toolkit");
    pt_write(tk, "lib64/libnccl.so.2", "not an ELF");
    pt_write(tk, "secretpw_LDLIBsecret42/readme", "x");
    pt_write(tk, "cuda-12.4/bin/readme", "x");
    char ld[1200];
    snprintf(ld, sizeof ld, "%s/secretpw_LDLIBsecret42:%s/lib64:%s/cuda-12.4/bin", tk, tk, tk);
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(ld, NULL, args, NULL, &rc);
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r, "environment"), "cuda_stack");
    char *text = cJSON_PrintUnformatted(rec);
    if (strstr(text, "secretpw_LDLIBsecret42"))
        fail_msg("a private LD_LIBRARY_PATH folder is in the record: %s", text);
    pt_assert_contains(text, "/lib64\"");
    pt_assert_contains(text, "cuda-12.4/bin");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(rec, "search_order_unlisted")->valueint, 1);
    cJSON_free(text);
    cJSON_Delete(r);
    free(tk);
    free(venv);
}

static void test_standard_loads_library(void **state)
{
    (void)state;
    char *venv = pt_tempdir("cs-load");
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    const char *args[] = {"--python", venv, "--model", "flux1-dev", "--steps", "1", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_CUDNN_DIR, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "cuda.cudnn");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "stub-cudnn/libcudnn.so.9 9.1.0 (LD_LIBRARY_PATH; "
                                               "version from the library itself)");
    cJSON_Delete(r);
    free(venv);
}

static void test_standard_broken_library(void **state)
{
    (void)state;
    char *venv = pt_tempdir("cs-broken");
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    char *site = pt_site(venv, "3.12.3");
    pt_write(site, "nvidia/nccl/lib/libnccl.so.2", "not an ELF");
    const char *args[] = {"--python", venv, "--model", "flux1-dev", "--steps", "1", NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "cuda.nccl");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "libnccl.so.2");
    pt_assert_contains(pt_text(c, "message"), "does not load");
    pt_assert_contains(pt_text(c, "remedy"), "aitk-validate deps");
    assert_int_equal(rc, 1);
    cJSON_Delete(r);
    free(site);
    free(venv);
}

/* A RECORD as pip writes it: one "path,hash,size" line per installed file. */
static void write_record(const char *site, const char *distinfo, const char *const *files)
{
    char text[2048] = "", rel[512];
    for (const char *const *f = files; *f; f++) {
        strcat(text, *f);
        strcat(text, ",sha256=AAAA,10\n");
    }
    snprintf(rel, sizeof rel, "%s/RECORD", distinfo);
    pt_write(site, rel, text);
}

/* Issue 20: pip upgraded to cu13 wheels beside the cu12 ones. The version of
 * libcublas.so.12 is the one of the wheel whose RECORD lists it (12.4.5.8),
 * not the first nvidia-cublas* package's (13.1.0.3, which sorts first), and
 * the mixture is flagged, naming the wheels torch does not use. */
static void test_mixed_cuda_majors(void **state)
{
    (void)state;
    char *venv = pt_tempdir("cs-mixed");
    const char *pkgs[] = {"torch==2.5.1", "nvidia-cublas==13.1.0.3",
                          "nvidia-cublas-cu12==12.4.5.8", NULL};
    pt_fake_venv(venv, "3.11.9", pkgs, "12.4");
    char *site = pt_site(venv, "3.11.9");
    pt_write(site, "nvidia/cublas/lib/libcublas.so.12", "not an ELF");
    pt_write(site, "nvidia/cu13/lib/libcublas.so.13", "not an ELF");
    const char *cu12[] = {"nvidia/cublas/lib/libcublas.so.12", NULL};
    const char *cu13[] = {"nvidia/cu13/lib/libcublas.so.13", NULL};
    write_record(site, "nvidia_cublas_cu12-12.4.5.8.dist-info", cu12);
    write_record(site, "nvidia_cublas-13.1.0.3.dist-info", cu13);
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(venv, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "cuda.cublas");
    pt_assert_contains(pt_text(c, "observed"), "libcublas.so.12 12.4.5.8 (site-packages/nvidia; "
                                               "version from pip package nvidia-cublas-cu12)");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "environment"),
                                         "cuda_stack"), "cublas");
    const cJSON *second = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec, "candidates"), 1);
    pt_assert_contains(pt_text(second, "path"), "cu13/lib/libcublas.so.13");
    assert_string_equal(pt_text(second, "version"), "13.1.0.3");
    c = pt_check(r, "cuda.nvidia_wheels");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "observed"), "cu13: nvidia-cublas 13.1.0.3");
    pt_assert_contains(pt_text(c, "remedy"), "pip uninstall -y nvidia-cublas (");
    cJSON_Delete(r);
    free(site);
    free(venv);
}

/* Issue 20: the file of torch's nvidia-cudnn-cu12 is gone and a cuDNN
 * elsewhere (here on LD_LIBRARY_PATH, on that machine the system's) is
 * found instead: that is no pass, and the remedy names the wheel. */
static void test_torch_wheel_file_missing(void **state)
{
    (void)state;
    char *venv = pt_tempdir("cs-gone");
    const char *pkgs[] = {"torch==2.5.1", "nvidia-cudnn-cu12==9.1.0.70", NULL};
    pt_fake_venv(venv, "3.11.9", pkgs, "12.4");
    char *site = pt_site(venv, "3.11.9");
    const char *files[] = {"nvidia/cudnn/lib/libcudnn.so.9", "nvidia/cudnn/lib/libcudnn_ops.so.9",
                           NULL};
    write_record(site, "nvidia_cudnn_cu12-9.1.0.70.dist-info", files);
    pt_write(site, "nvidia/cudnn/lib/libcudnn_ops.so.9", "not an ELF");
    const char *args[] = {"--python", venv, "--model", "flux1-dev", "--steps", "1", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_CUDNN_DIR, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "cuda.cudnn");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "stub-cudnn/libcudnn.so.9 9.1.0");
    pt_assert_contains(pt_text(c, "observed"),
                       "nvidia/cudnn/lib/libcudnn.so.9 of nvidia-cudnn-cu12 9.1.0.70 is missing");
    assert_string_equal(pt_text(c, "remedy"),
                        "pip install --force-reinstall --no-deps nvidia-cudnn-cu12==9.1.0.70");
    cJSON_Delete(r);
    free(site);
    free(venv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_order_names_only_cuda_folders),
        cmocka_unit_test(test_pip_and_torch_lib_win),
        cmocka_unit_test(test_standard_loads_library),
        cmocka_unit_test(test_standard_broken_library),
        cmocka_unit_test(test_mixed_cuda_majors),
        cmocka_unit_test(test_torch_wheel_file_missing),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
