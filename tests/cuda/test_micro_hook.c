/* The micro suite on a GPU backend, against the fake backend
 * (fake_plugin.c, loaded through AITK_CUDA_PLUGIN): one pretend GPU whose
 * every op answers AITK_E_UNSUPPORTED. The suite registers the GPU's
 * benchmarks through the same ops as the CPU's, and each one that cannot run
 * is left out with the backend's own words in the notes; nothing is timed
 * and the suite goes on. */
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

static void test_failing_gpu_ops_are_named_not_timed(void **state)
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
    /* Nothing is timed on the device; every GPU benchmark the filter selects
     * (4 GEMMs, attention forward and backward of 2 models) is named with the
     * backend's last_error. */
    assert_int_equal(cJSON_GetArraySize(arr), 0);
    const char *expect[] = {"gemm.cuda.bf16.flux1-dev.img_qkv: fake: every op is unsupported; ",
                            "gemm.cuda.bf16.omnigen2.ffn_in: fake: every op is unsupported; ",
                            "attention.cuda.bf16.flux1-dev: fake: every op is unsupported; ",
                            "attention_backward.cuda.bf16.omnigen2: fake: every op is "
                            "unsupported; "};
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++)
        assert_non_null(strstr(notes.ptr, expect[i]));
    size_t named = 0;
    for (const char *p = notes.ptr; (p = strstr(p, "; ")); p += 2)
        named++;
    assert_int_equal(named, 8);
    cJSON_Delete(arr);
    aitk_bench_config_free(cfg);
    aitk_str_free(&err);
    aitk_str_free(&notes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_failing_gpu_ops_are_named_not_timed)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
