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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_order_names_only_cuda_folders),
        cmocka_unit_test(test_pip_and_torch_lib_win),
        cmocka_unit_test(test_standard_loads_library),
        cmocka_unit_test(test_standard_broken_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
