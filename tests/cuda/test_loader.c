/* The CUDA plugin loader on any machine: the plugin this build made loads
 * (it links only the toolkit's libraries) and its probe either lists a GPU
 * or quotes the CUDA runtime's error; a path that does not exist, a library
 * without the entry point, and a plugin of another ABI each fail with their
 * own message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tests/cuda/cuda_test.h"

static void test_build_plugin_loads_and_probes(void **state)
{
    (void)state;
    aitk_status st = AITK_OK;
    const aitk_cuda_plugin *api = cuda_test_open(&st);
    assert_non_null(api);
    assert_int_equal(api->abi_version, AITK_CUDA_PLUGIN_ABI);
    assert_non_null(strstr(api->build, "CUDA "));
    const aitk_cuda_probe_result *p = &cuda_test_probe;
    /* The runtime always answers its own version: 13000 for CUDA 13.0. */
    assert_true(p->runtime_version >= 12000);
    if (st == AITK_OK) {
        /* A GPU machine: the devices are described. */
        assert_true(p->device_count >= 1);
        assert_true(p->n_devices >= 1);
        assert_true(p->driver_version >= p->runtime_version);
        assert_true(p->devices[0].name[0] != '\0');
        assert_true(p->devices[0].cc_major >= 7);
        assert_true(p->devices[0].total_memory_bytes > 0);
        assert_true(p->devices[0].sm_count > 0);
        print_message("probe: %d device(s), %s\n", p->device_count, p->devices[0].name);
    } else {
        /* No GPU (this CI machine: no driver): the CUDA error is quoted as
         * "call: errorName: error string", and no device is described. */
        print_message("probe: %s (driver version %d)\n", p->error, p->driver_version);
        assert_int_equal(st, AITK_E_NOTFOUND);
        assert_int_equal(p->device_count, 0);
        assert_int_equal(p->n_devices, 0);
        assert_true(p->cuda_error != 0);
        assert_non_null(strstr(p->error, "cudaGetDeviceCount: cudaError"));
        if (p->driver_version == 0) /* no libcuda.so.1 at all */
            assert_non_null(strstr(p->error, "cudaErrorInsufficientDriver"));
    }
    /* The benchmarks say why they cannot run rather than crash. */
    if (st) {
        aitk_cuda_memcpy_result m;
        assert_int_not_equal(api->memcpy_bench(0, 1 << 20, 0.01, &m), AITK_OK);
        assert_non_null(strstr(m.error, "cuda"));
        aitk_cuda_gemm_result g;
        aitk_cuda_gemm_args a = {.m = 64, .n = 64, .k = 64, .min_time_s = 0.01};
        assert_int_not_equal(api->gemm_bench(&a, &g), AITK_OK);
        assert_true(g.error[0] != '\0');
    }
    /* Bad arguments are refused before any device is touched. */
    aitk_cuda_gemm_result g;
    aitk_cuda_gemm_args bad = {.m = 0, .n = 64, .k = 64};
    assert_int_equal(api->gemm_bench(&bad, &g), AITK_E_INVAL);
    assert_non_null(strstr(g.error, "m=0"));
    api->close();
    api->close(); /* twice is fine */
}

static void expect_open_fails(const char *path, aitk_status want, const char *const *needles)
{
    const aitk_cuda_plugin *api = (const aitk_cuda_plugin *)1;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_cuda_plugin_open(path, &api, &err), want);
    assert_null(api);
    print_message("%s -> %s\n", path, aitk_str_cstr(&err));
    for (; *needles; needles++)
        if (!strstr(aitk_str_cstr(&err), *needles))
            fail_msg("expected \"%s\" in: %s", *needles, aitk_str_cstr(&err));
    aitk_str_free(&err);
}

static void test_missing_file_keeps_loader_text(void **state)
{
    (void)state;
    const char *const needles[] = {"/nonexistent/libaitk_cuda.so",
                                   "cannot open shared object file", NULL};
    expect_open_fails("/nonexistent/libaitk_cuda.so", AITK_E_DLOPEN, needles);
}

static void test_library_without_entry_point(void **state)
{
    (void)state;
    const char *const needles[] = {AITK_CUDA_PLUGIN_ENTRY, "is not an aitk-validate CUDA plugin",
                                   NULL};
    expect_open_fails(STUB_NOENTRY, AITK_E_DLSYM, needles);
}

static void test_plugin_of_another_abi(void **state)
{
    (void)state;
    char other[64], ours[64];
    snprintf(other, sizeof other, "implements plugin ABI %d", AITK_CUDA_PLUGIN_ABI + 1);
    snprintf(ours, sizeof ours, "needs ABI %d", AITK_CUDA_PLUGIN_ABI);
    const char *const needles[] = {other, ours, "rebuild or reinstall both", NULL};
    expect_open_fails(STUB_OTHER_ABI, AITK_E_UNSUPPORTED, needles);
}

static void test_plugin_declining_our_abi(void **state)
{
    (void)state;
    char ours[64];
    snprintf(ours, sizeof ours, "does not offer plugin ABI %d", AITK_CUDA_PLUGIN_ABI);
    const char *const needles[] = {ours, NULL};
    expect_open_fails(STUB_DECLINES, AITK_E_UNSUPPORTED, needles);
}

static void test_search_list(void **state)
{
    (void)state;
    unsetenv("AITK_CUDA_PLUGIN");
    aitk_str list = AITK_STR_INIT;
    assert_int_equal(aitk_cuda_plugin_candidates(&list), AITK_OK);
    /* Beside this executable first, the install layout, then the build tree. */
    assert_non_null(strstr(list.ptr, "/tests/cuda/libaitk_cuda.so\n"));
    assert_non_null(strstr(list.ptr, "/../lib/aitk-validate/libaitk_cuda.so\n"));
    assert_non_null(strstr(list.ptr, AITK_CUDA_PLUGIN_BUILD_PATH));
    aitk_str_clear(&list);
    setenv("AITK_CUDA_PLUGIN", "/opt/x/libaitk_cuda.so", 1);
    assert_int_equal(aitk_cuda_plugin_candidates(&list), AITK_OK);
    assert_string_equal(list.ptr, "/opt/x/libaitk_cuda.so"); /* nothing else is tried */
    unsetenv("AITK_CUDA_PLUGIN");
    aitk_str_free(&list);
}

/* The process-wide load follows the search: here the build tree's copy. */
static void test_load_finds_the_build_plugin(void **state)
{
    (void)state;
    unsetenv("AITK_CUDA_PLUGIN");
    const aitk_cuda_load *ld = aitk_cuda_plugin_load();
    assert_true(ld->built);
    assert_int_equal(ld->status, AITK_OK);
    assert_non_null(ld->api);
    assert_string_equal(ld->path.ptr, AITK_CUDA_PLUGIN_BUILD_PATH);
    assert_ptr_equal(aitk_cuda_plugin_load(), ld); /* once per process */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_plugin_loads_and_probes),
        cmocka_unit_test(test_missing_file_keeps_loader_text),
        cmocka_unit_test(test_library_without_entry_point),
        cmocka_unit_test(test_plugin_of_another_abi),
        cmocka_unit_test(test_plugin_declining_our_abi),
        cmocka_unit_test(test_search_list),
        cmocka_unit_test(test_load_finds_the_build_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
