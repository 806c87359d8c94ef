/* The Google Benchmark shim and the microbenchmark suite: a C benchmark
 * with manual time and a rate counter whose figures are known in advance,
 * errors and interruption carried back through the JSON, and the suite's
 * real shapes. */
#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bench/config.h"
#include "bench/micro/micro.h"
#include "bench/micro/shim.h"
#include "bench/runner.h"
#include "common/stop.h"
#include "tests/bench/bt.h"

static long calls;

/* 10 iterations of 1 ms manual time, 10 items each: the rate counter is
 * 100 items / 0.010 s = 10000 per second; real_time 1 ms per iteration. */
static void manual(aitk_mb_state *s, void *user)
{
    (void)user;
    while (aitk_mb_keep_running(s)) {
        aitk_mb_pause(s);
        calls++;
        aitk_mb_resume(s);
        aitk_mb_set_iteration_time(s, 0.001);
    }
    aitk_mb_set_counter(s, "ITEMS", 10.0 * (double)aitk_mb_iterations(s), AITK_MB_COUNTER_RATE);
    aitk_mb_set_counter(s, "PER_IT", 3.0 * (double)aitk_mb_iterations(s),
                        AITK_MB_COUNTER_PER_ITERATION);
}

static void failing(aitk_mb_state *s, void *user)
{
    (void)user;
    aitk_mb_skip_with_error(s, "no device memory");
    while (aitk_mb_keep_running(s)) {
    }
}

static void test_shim_manual_time_and_counters(void **state)
{
    (void)state;
    aitk_mb_options opt = {.manual_time = true, .iterations = 10};
    assert_int_equal(aitk_mb_register("test.manual", manual, NULL, &opt), 0);
    aitk_str json = AITK_STR_INIT, err = AITK_STR_INIT;
    calls = 0;
    assert_int_equal(aitk_mb_run("test\\.manual", &json, &err), 0);
    assert_int_equal(calls, 10);
    aitk_micro_meta meta = {.name = "test.manual", .category = "test", .backend = "cpu",
                            .shape = "-", .unit = "items/s", .counter = "ITEMS", .scale = 1,
                            .higher_is_better = true};
    cJSON *e = NULL;
    assert_int_equal(aitk_micro_entry_from_json(json.ptr, &meta, &e, &err), 0);
    assert_near(cJSON_GetObjectItem(e, "value")->valuedouble, 10000, 1e-6);
    assert_near(cJSON_GetObjectItem(e, "time_ms")->valuedouble, 1.0, 1e-9);
    assert_int_equal(cJSON_GetObjectItem(e, "iterations")->valueint, 10);
    assert_string_equal(cJSON_GetObjectItem(e, "unit")->valuestring, "items/s");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "higher_is_better")));
    cJSON_Delete(e);
    /* The per-iteration counter: 30 / 10 iterations = 3. */
    meta.counter = "PER_IT";
    assert_int_equal(aitk_micro_entry_from_json(json.ptr, &meta, &e, &err), 0);
    assert_near(cJSON_GetObjectItem(e, "value")->valuedouble, 3, 1e-9);
    cJSON_Delete(e);
    /* Nothing matches: said, not silently empty. */
    aitk_str_clear(&json);
    assert_int_equal(aitk_mb_run("^nothing$", &json, &err), AITK_E_NOTFOUND);
    assert_non_null(strstr(err.ptr, "nothing"));
    aitk_mb_clear();
    aitk_str_free(&json);
    aitk_str_free(&err);
}

static void test_shim_error_reaches_the_report(void **state)
{
    (void)state;
    assert_int_equal(aitk_mb_register("test.failing", failing, NULL, NULL), 0);
    aitk_str json = AITK_STR_INIT, err = AITK_STR_INIT;
    assert_int_equal(aitk_mb_run(NULL, &json, &err), 0);
    aitk_micro_meta meta = {.name = "test.failing", .counter = "ITEMS", .scale = 1};
    cJSON *e = NULL;
    assert_int_equal(aitk_micro_entry_from_json(json.ptr, &meta, &e, &err), AITK_E_IO);
    assert_null(e);
    assert_non_null(strstr(err.ptr, "no device memory"));
    aitk_mb_clear();
    assert_int_equal(aitk_mb_register(NULL, failing, NULL, NULL), AITK_E_INVAL);
    aitk_str_free(&json);
    aitk_str_free(&err);
}

static void test_json_reader_by_hand(void **state)
{
    (void)state;
    /* Google Benchmark's shape, time in microseconds: 2500 us = 2.5 ms. */
    const char *json = "{\"context\":{},\"benchmarks\":[{\"name\":\"x/min_time:0.200\",\"run_type\":"
                       "\"iteration\",\"iterations\":7,\"real_time\":2500,\"cpu_time\":2400,"
                       "\"time_unit\":\"us\",\"bytes_per_second\":1.5e10}]}";
    aitk_micro_meta meta = {.name = "x", .category = "memcpy", .backend = "cpu", .shape = "s",
                            .unit = "GB/s", .counter = "bytes_per_second", .scale = 1e-9};
    aitk_str err = AITK_STR_INIT;
    cJSON *e = NULL;
    assert_int_equal(aitk_micro_entry_from_json(json, &meta, &e, &err), 0);
    assert_near(cJSON_GetObjectItem(e, "value")->valuedouble, 15, 1e-9);
    assert_near(cJSON_GetObjectItem(e, "time_ms")->valuedouble, 2.5, 1e-12);
    cJSON_Delete(e);
    meta.name = "y";
    assert_int_equal(aitk_micro_entry_from_json(json, &meta, &e, &err), AITK_E_NOTFOUND);
    meta.name = "x/min"; /* a prefix that is not a whole name */
    assert_int_equal(aitk_micro_entry_from_json(json, &meta, &e, &err), AITK_E_NOTFOUND);
    meta.name = "x";
    meta.counter = "FLOPS";
    assert_int_equal(aitk_micro_entry_from_json(json, &meta, &e, &err), AITK_E_PARSE);
    assert_int_equal(aitk_micro_entry_from_json("{not json", &meta, &e, &err), AITK_E_PARSE);
    aitk_str_free(&err);
}

static void test_suite_real_shapes(void **state)
{
    (void)state;
    aitk_bench_config *cfg = NULL;
    aitk_str err = AITK_STR_INIT, notes = AITK_STR_INIT;
    assert_int_equal(aitk_bench_config_load(&cfg, &err), 0);
    cJSON *arr = cJSON_CreateArray();
    /* FLUX img_qkv at 512 px: 512 / (8 x 2) = 32, 32^2 = 1024 image tokens;
     * one of q, k, v is 3072 -> 3072. */
    assert_int_equal(aitk_micro_run_suite(cfg, "flux1-dev.img_qkv", NULL, arr, &notes), 0);
    assert_string_equal(aitk_str_cstr(&notes), "");
    assert_int_equal(cJSON_GetArraySize(arr), 1);
    const cJSON *g = cJSON_GetArrayItem(arr, 0);
    assert_string_equal(cJSON_GetObjectItem(g, "name")->valuestring,
                        "gemm.cpu.fp32.flux1-dev.img_qkv");
    assert_non_null(strstr(cJSON_GetObjectItem(g, "shape")->valuestring, "M=1024 N=3072 K=3072"));
    assert_string_equal(cJSON_GetObjectItem(g, "unit")->valuestring, "GFLOP/s");
    assert_true(cJSON_GetObjectItem(g, "value")->valuedouble > 0);
    /* Host memcpy. */
    assert_int_equal(aitk_micro_run_suite(cfg, "memcpy", NULL, arr, &notes), 0);
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    const cJSON *m = cJSON_GetArrayItem(arr, 1);
    assert_string_equal(cJSON_GetObjectItem(m, "category")->valuestring, "memcpy");
    assert_string_equal(cJSON_GetObjectItem(m, "unit")->valuestring, "GB/s");
    assert_true(cJSON_GetObjectItem(m, "value")->valuedouble > 0.1);
    /* After a stop nothing more runs, and the notes say why: which signal
     * stopped it (SIGTERM from `timeout` or Slurm is not a Ctrl-C). */
    aitk_stop_request(SIGTERM);
    assert_int_equal(aitk_micro_run_suite(cfg, NULL, NULL, arr, &notes), 0);
    aitk_stop_reset();
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    assert_non_null(strstr(aitk_str_cstr(&notes), "interrupted (SIGTERM): the remaining"));
    assert_null(strstr(aitk_str_cstr(&notes), "Ctrl-C"));
    cJSON_Delete(arr);
    aitk_bench_config_free(cfg);
    aitk_str_free(&err);
    aitk_str_free(&notes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shim_manual_time_and_counters),
        cmocka_unit_test(test_shim_error_reaches_the_report),
        cmocka_unit_test(test_json_reader_by_hand),
        cmocka_unit_test(test_suite_real_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
