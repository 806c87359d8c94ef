/* The CUDA backend plugin loader on any machine: a backend with a complete
 * descriptor and operation table loads; a path that does not exist, a
 * library without the entry point, a plugin of the first ABI, a plugin of
 * another ABI, a descriptor or a table with a member missing each fail with
 * their own message. The plugin this build made is checked too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/cuda/cuda_test.h"

/* The plugin this build made loads, and its probe lists a GPU or quotes the
 * runtime. */
static void test_build_plugin_loads_and_probes(void **state)
{
    (void)state;
    aitk_status st = AITK_OK;
    const aitk_backend *b = cuda_test_open(&st);
    assert_non_null(b);
    assert_int_equal(b->abi_version, AITK_BACKEND_ABI);
    assert_string_equal(b->name, "cuda");
    assert_non_null(strstr(b->build, "CUDA "));
    const aitk_backend_probe *p = &cuda_test_probe;
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
        /* No GPU (no driver): the CUDA error is quoted as "call: errorName:
         * error string", and no device is described. */
        print_message("probe: %s (driver version %d)\n", p->error, p->driver_version);
        assert_int_equal(st, AITK_E_NOTFOUND);
        assert_int_equal(p->device_count, 0);
        assert_int_equal(p->n_devices, 0);
        assert_true(p->library_error != 0);
        assert_non_null(strstr(p->error, "cudaGetDeviceCount: cudaError"));
    }
    b->close();
    b->close(); /* twice is fine */
}

/* The fake backend (complete descriptor and table) loads, and what it
 * answers is what it was built to answer. */
static void test_complete_backend_loads(void **state)
{
    (void)state;
    const aitk_backend *b = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_backend_plugin_open(FAKE_PLUGIN, &b, &err), AITK_OK);
    assert_non_null(b);
    assert_int_equal(b->abi_version, AITK_BACKEND_ABI);
    assert_string_equal(b->name, "cuda");
    assert_string_equal(b->ops->name, "cuda");
    aitk_backend_probe *p = calloc(1, sizeof *p);
    assert_non_null(p);
    assert_int_equal(b->probe(p), AITK_OK);
    assert_string_equal(p->devices[0].name, "Fake GPU 9000");
    assert_int_equal(p->cudnn_version, 91400);
    free(p);
    assert_int_equal(b->ops->gemm(NULL, NULL, NULL, 1, 1, 1, false, false, 1, 0, 1, 0, 0, 0),
                     AITK_E_UNSUPPORTED);
    aitk_str_free(&err);
}

static void expect_open_fails(const char *path, aitk_status want, const char *const *needles)
{
    const aitk_backend *b = (const aitk_backend *)1;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_backend_plugin_open(path, &b, &err), want);
    assert_null(b);
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
    const char *const needles[] = {"aitk_backend_plugin_get",
                                   "is not an aitk-validate CUDA plugin", NULL};
    expect_open_fails(STUB_NOENTRY, AITK_E_DLSYM, needles);
}

static void test_plugin_of_the_first_abi(void **state)
{
    (void)state;
    const char *const needles[] = {"aitk_backend_plugin_get",
                                   "is a CUDA plugin of the older ABI 1, entry "
                                   "aitk_cuda_plugin_get",
                                   "rebuild or reinstall both", NULL};
    expect_open_fails(STUB_FIRST_ABI, AITK_E_DLSYM, needles);
}

static void test_descriptor_member_missing(void **state)
{
    (void)state;
    const char *const needles[] = {FAKE_NO_PATHS, ": the backend descriptor has no paths",
                                   "rebuild or reinstall both", NULL};
    expect_open_fails(FAKE_NO_PATHS, AITK_E_DLSYM, needles);
}

/* collectives may be NULL, but a present one with a NULL member would crash
 * the multigpu checks: refused like any other missing member. */
static void test_collectives_member_missing(void **state)
{
    (void)state;
    const char *const needles[] = {": the backend descriptor has no collectives.time", NULL};
    expect_open_fails(FAKE_NO_COLL_TIME, AITK_E_DLSYM, needles);
}

static void test_operation_missing(void **state)
{
    (void)state;
    const char *const needles[] = {": the backend's operation table has no attention_backward",
                                   NULL};
    expect_open_fails(FAKE_NO_OP, AITK_E_DLSYM, needles);
}

static void test_plugin_of_another_abi(void **state)
{
    (void)state;
    char other[64], ours[64];
    snprintf(other, sizeof other, "implements plugin ABI %d", AITK_BACKEND_ABI + 1);
    snprintf(ours, sizeof ours, "needs ABI %d", AITK_BACKEND_ABI);
    const char *const needles[] = {other, ours, "rebuild or reinstall both", NULL};
    expect_open_fails(STUB_OTHER_ABI, AITK_E_UNSUPPORTED, needles);
}

static void test_plugin_declining_our_abi(void **state)
{
    (void)state;
    char ours[64];
    snprintf(ours, sizeof ours, "does not offer plugin ABI %d", AITK_BACKEND_ABI);
    const char *const needles[] = {ours, NULL};
    expect_open_fails(STUB_DECLINES, AITK_E_UNSUPPORTED, needles);
}

static void test_search_list(void **state)
{
    (void)state;
    unsetenv("AITK_CUDA_PLUGIN");
    aitk_str list = AITK_STR_INIT;
    assert_int_equal(aitk_backend_plugin_candidates(&list), AITK_OK);
    /* Beside this executable first, the install layout, then the build tree. */
    assert_non_null(strstr(list.ptr, "/tests/cuda/libaitk_cuda.so\n"));
    assert_non_null(strstr(list.ptr, "/../lib/aitk-validate/libaitk_cuda.so\n"));
    assert_non_null(strstr(list.ptr, AITK_CUDA_PLUGIN_BUILD_PATH));
    aitk_str_clear(&list);
    setenv("AITK_CUDA_PLUGIN", "/opt/x/libaitk_cuda.so", 1);
    assert_int_equal(aitk_backend_plugin_candidates(&list), AITK_OK);
    assert_string_equal(list.ptr, "/opt/x/libaitk_cuda.so"); /* nothing else is tried */
    unsetenv("AITK_CUDA_PLUGIN");
    aitk_str_free(&list);
}

/* The process-wide load follows the search: here the build tree's copy,
 * which loads. */
static void test_load_finds_the_build_plugin(void **state)
{
    (void)state;
    unsetenv("AITK_CUDA_PLUGIN");
    const aitk_backend_load_result *ld = aitk_backend_load();
    assert_true(ld->built);
    assert_string_equal(ld->path.ptr, AITK_CUDA_PLUGIN_BUILD_PATH);
    assert_int_equal(ld->status, AITK_OK);
    assert_non_null(ld->backend);
    assert_ptr_equal(aitk_backend_load(), ld); /* once per process */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_plugin_loads_and_probes),
        cmocka_unit_test(test_complete_backend_loads),
        cmocka_unit_test(test_plugin_of_the_first_abi),
        cmocka_unit_test(test_descriptor_member_missing),
        cmocka_unit_test(test_operation_missing),
        cmocka_unit_test(test_collectives_member_missing),
        cmocka_unit_test(test_missing_file_keeps_loader_text),
        cmocka_unit_test(test_library_without_entry_point),
        cmocka_unit_test(test_plugin_of_another_abi),
        cmocka_unit_test(test_plugin_declining_our_abi),
        cmocka_unit_test(test_search_list),
        cmocka_unit_test(test_load_finds_the_build_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
