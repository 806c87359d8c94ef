/* The micro suite's GPU hook against the fake backend (fake_plugin.c,
 * loaded through AITK_CUDA_PLUGIN). The GPU microbenchmarks are being moved
 * onto the backend's ops table; until then a backend with a device
 * answering adds no entry and one note saying so, and the suite goes on. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench/config.h"
#include "bench/backend_loader.h"
#include "bench/micro/micro.h"

static void test_loaded_backend_is_named_not_run(void **state)
{
    (void)state;
    setenv("AITK_CUDA_PLUGIN", FAKE_PLUGIN, 1);
    assert_int_equal(aitk_backend_load()->status, AITK_OK);
    aitk_bench_config *cfg = NULL;
    aitk_str err = AITK_STR_INIT, notes = AITK_STR_INIT;
    assert_int_equal(aitk_bench_config_load(&cfg, &err), AITK_OK);
    cJSON *arr = cJSON_CreateArray();
    assert_int_equal(aitk_micro_run_suite(cfg, ".cuda.", NULL, arr, &notes), AITK_OK);
    print_message("notes: %s\n", notes.ptr ? notes.ptr : "");
    /* Nothing is timed on the device, and the note says why. */
    assert_int_equal(cJSON_GetArraySize(arr), 0);
    assert_string_equal(notes.ptr, "cuda microbenchmarks not run: the GPU microbenchmarks are "
                                   "being moved onto the backend's ops; ");
    cJSON_Delete(arr);
    aitk_bench_config_free(cfg);
    aitk_str_free(&err);
    aitk_str_free(&notes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_loaded_backend_is_named_not_run)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
