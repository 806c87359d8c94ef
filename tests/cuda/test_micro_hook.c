/* The micro suite's GPU hook against a fake plugin (fake_plugin.c, loaded
 * through AITK_CUDA_PLUGIN): with a device answering, the suite adds
 * gemm.cuda.bf16.<model>.<linear> at the Linears' real shapes at the GPU
 * buckets' largest resolution, and memcpy.device, with backend "cuda", their
 * units and the device's name; a GEMM that fails on the device becomes a
 * note and the others still run. Names are what `predict --calibrate` reads. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench/config.h"
#include "bench/cuda_loader.h"
#include "bench/micro/micro.h"

static const cJSON *entry(const cJSON *arr, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    if (!strcmp(cJSON_GetObjectItem(e, "name")->valuestring, name))
        return e;
    fail_msg("micro[] lacks %s", name);
    return NULL;
}

static const char *str(const cJSON *e, const char *k)
{
    return cJSON_GetObjectItem(e, k)->valuestring;
}

static double num(const cJSON *e, const char *k)
{
    return cJSON_GetObjectItem(e, k)->valuedouble;
}

static void test_cuda_entries(void **state)
{
    (void)state;
    setenv("AITK_CUDA_PLUGIN", FAKE_PLUGIN, 1);
    assert_int_equal(aitk_cuda_plugin_load()->status, AITK_OK);
    aitk_bench_config *cfg = NULL;
    aitk_str err = AITK_STR_INIT, notes = AITK_STR_INIT;
    assert_int_equal(aitk_bench_config_load(&cfg, &err), AITK_OK);
    cJSON *arr = cJSON_CreateArray();
    assert_int_equal(aitk_micro_run_suite(cfg, ".cuda.", NULL, arr, &notes), AITK_OK);
    assert_int_equal(aitk_micro_run_suite(cfg, "memcpy.device", NULL, arr, &notes), AITK_OK);
    print_message("notes: %s\n", notes.ptr ? notes.ptr : "");
    /* FLUX img_qkv at 1024 px: 4096 image tokens, 3072 -> 3072 (q, k and v
     * are three such Linears). */
    const cJSON *g = entry(arr, "gemm.cuda.bf16.flux1-dev.img_qkv");
    assert_string_equal(str(g, "category"), "gemm");
    assert_string_equal(str(g, "backend"), "cuda");
    assert_string_equal(str(g, "unit"), "TFLOP/s");
    assert_string_equal(str(g, "device"), "Fake GPU 9000");
    assert_string_equal(str(g, "shape"),
                        "M=4096 N=3072 K=3072 (flux1-dev double_stream.img_qkv at 1024 px)");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(g, "higher_is_better")));
    assert_float_equal(num(g, "value"), 2.0 * 4096 * 3072 * 3072 / 1e9, 1e-6);
    assert_float_equal(num(g, "time_ms"), 1.0, 1e-12);
    assert_float_equal(num(g, "iterations"), 10, 0);
    /* Chroma's single-stream blocks see image + text tokens: 4096 + 512. */
    g = entry(arr, "gemm.cuda.bf16.chroma.mlp_in");
    assert_non_null(strstr(str(g, "shape"), "M=4608 "));
    entry(arr, "gemm.cuda.bf16.omnigen2.ffn_in");
    /* img_mlp_in (4096 x 12288) "ran out of device memory": a note, not an entry. */
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    assert_string_not_equal(str(e, "name"), "gemm.cuda.bf16.flux1-dev.img_mlp_in");
    assert_non_null(strstr(notes.ptr, "gemm.cuda.bf16.flux1-dev.img_mlp_in: cudaMalloc"));
    assert_non_null(strstr(notes.ptr, "cudaErrorMemoryAllocation"));
    const cJSON *m = entry(arr, "memcpy.device");
    assert_string_equal(str(m, "category"), "memcpy");
    assert_string_equal(str(m, "backend"), "cuda");
    assert_string_equal(str(m, "unit"), "GB/s");
    assert_string_equal(str(m, "device"), "Fake GPU 9000");
    /* 256 MiB read + 256 MiB written in 2 ms. */
    assert_float_equal(num(m, "value"), 2.0 * (256 << 20) / 2e-3 / 1e9, 1e-6);
    /* Only what the filters asked for, and no CPU entry among them. */
    assert_int_equal(cJSON_GetArraySize(arr), 4);
    cJSON_Delete(arr);
    aitk_bench_config_free(cfg);
    aitk_str_free(&err);
    aitk_str_free(&notes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cuda_entries)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
