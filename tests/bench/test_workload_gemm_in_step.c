/* The workload entry's "gemm_in_step" (bench/workload_gemm_in_step.h): the
 * JSON built from hand-made step paths and isolated rates, with every
 * expected figure worked out by hand in the comment beside it; which
 * problems get timed alone; the "not measured" sentence when ops are
 * untimed; and the whole measurement on the CPU reference backend, whose
 * ops really run the problems alone (its own paths carry no shape, so the
 * step's paths are written by hand). The JSON is also written into a
 * report that schema.all_reports holds to reports/schema. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench/workload_gemm_in_step.h"
#include "common/alloc.h"
#include "common/fileio.h"
#include "kernels/backend.h"
#include "tests/bench/bt.h"
#include "tests/bench/path_fixture.h"

/* A: 2 * 1000 * 2000 * 500 = 2e9 FLOPs a call. */
#define SHAPE_A "m=1000 n=2000 k=500 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16 c=bf16 " \
                "compute=fp32 epilogue=none"
/* B: 2 * 500 * 500 * 400 = 2e8 FLOPs a call. */
#define SHAPE_B "m=500 n=500 k=400 batch=1 ta=0 tb=0 beta=1 a=bf16 b=bf16 c=bf16 " \
                "compute=fp32 epilogue=none"
/* C, a LoRA gradient (fp32 C): 2 * 16 * 1000 * 1000 = 3.2e7 FLOPs a call. */
#define SHAPE_C "m=16 n=1000 k=1000 batch=1 ta=1 tb=0 beta=1 a=bf16 b=bf16 c=fp32 " \
                "compute=fp32 epilogue=none"
/* D, a tiny tail problem: 2 * 8 * 8 * 8 = 1024 FLOPs a call. */
#define SHAPE_D "m=8 n=8 k=8 batch=1 ta=0 tb=0 beta=0 a=bf16 b=bf16 c=bf16 " \
                "compute=fp32 epilogue=none"

static aitk_gemm_rate rate(const char *shape_text, double flops_per_s)
{
    char text[200];
    snprintf(text, sizeof text, "[%s]", shape_text);
    aitk_gemm_rate r;
    memset(&r, 0, sizeof r);
    assert_true(aitk_gemm_shape_parse(text, &r.shape));
    r.flops_per_s = flops_per_s;
    return r;
}

/* The step: B first met, A on two paths (the gemm op and a LoRA forward at
 * one shape), C untimed alone, attention (no shape) ignored.
 *   A: 30 + 10 = 40 calls, 60 + 20 = 80 ms, 40 * 2e9 = 8e10 FLOPs -> 1.0 TFLOP/s
 *   B: 50 calls, 20 ms, 50 * 2e8 = 1e10 FLOPs -> 0.5 TFLOP/s
 *   C: 100 calls, 10 ms, 100 * 3.2e7 = 3.2e9 FLOPs -> 0.32 TFLOP/s
 *   all: 190 calls, 110 ms, 9.32e10 FLOPs -> 0.847272... TFLOP/s */
static size_t step_paths(aitk_backend_path *p, double ms_scale)
{
    p[0] = path("gemm", "cuBLASLt [" SHAPE_B "] algo 1", 50, 20 * ms_scale);
    p[1] = path("attention_forward", "cuDNN 9.14.0 fused SDPA", 40, 30 * ms_scale);
    p[2] = path("gemm", "cuBLASLt [" SHAPE_A "] algo 6", 30, 60 * ms_scale);
    p[3] = path("lora_linear_backward", "cuBLASLt [" SHAPE_C "] algo 1", 100, 10 * ms_scale);
    p[4] = path("lora_linear_forward", "cuBLASLt [" SHAPE_A "] algo 7", 10, 20 * ms_scale);
    return 5;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        fail_msg("no \"%s\"", key);
    return v;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

/* The report schema.all_reports validates: the synthetic report with one
 * GPU workload carrying `g`. */
static void write_report(const cJSON *g)
{
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(AITK_SOURCE_DIR "/tests/reports/fixtures/synthetic-report.json",
                                     1 << 20, &text, &len, NULL),
                     AITK_OK);
    cJSON *r = cJSON_Parse(text);
    aitk_free(text);
    assert_non_null(r);
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "name", "flux1-dev");
    cJSON_AddStringToObject(w, "status", "completed");
    cJSON_AddStringToObject(w, "backend", "cuda");
    cJSON_AddItemToObject(w, "gemm_in_step", cJSON_Duplicate(g, 1));
    cJSON *ws = cJSON_CreateArray();
    cJSON_AddItemToArray(ws, w);
    cJSON_ReplaceItemInObjectCaseSensitive(r, "workloads", ws);
    char *out = cJSON_Print(r);
    assert_int_equal(aitk_file_write_atomic(AITK_TEST_REPORTS "/bench-gemm-in-step.json", out,
                                            strlen(out), NULL),
                     AITK_OK);
    free(out);
    cJSON_Delete(r);
}

static void test_json_from_hand_made_paths(void **state)
{
    (void)state;
    aitk_backend_path p[8];
    size_t n = step_paths(p, 1.0);
    /* A alone at 1.25 TFLOP/s, B at 0.5; C has no op of its own. */
    aitk_gemm_rate iso[2] = {rate(SHAPE_A, 1.25e12), rate(SHAPE_B, 0.5e12)};
    cJSON *w = cJSON_CreateObject();
    assert_int_equal(aitk_bench_gemm_in_step_json(w, p, n, iso, 2, "a note"), AITK_OK);
    const cJSON *g = get(w, "gemm_in_step");
    /* At their isolated rates A takes 8e10 / 1.25e12 = 64 ms and B
     * 1e10 / 0.5e12 = 20 ms: 84 ms for what took 80 + 20 = 100 ms, a ratio
     * of 0.84, below the 0.85 target: warn. */
    assert_string_equal(get(g, "status")->valuestring, "warn");
    assert_near(num(g, "ratio"), 0.84, 1e-12);
    assert_near(num(g, "target"), 0.85, 0);
    assert_near(num(g, "calls"), 190, 0);
    assert_near(num(g, "ms_in_step"), 110, 1e-12);
    assert_near(num(g, "tflops_in_step"), 0.0932 / 0.110, 1e-12);
    /* A and B: 9e10 of the 9.32e10 FLOPs. */
    assert_near(num(g, "matched_share"), 9e10 / 9.32e10, 1e-12);
    assert_near(num(g, "problems_total"), 3, 0);
    assert_string_equal(get(g, "message")->valuestring, "a note");
    assert_non_null(strstr(get(g, "source")->valuestring, "AITK_TIME_OPS=1"));
    /* Slowest first: A (80 ms), B (20 ms), C (10 ms). */
    const cJSON *rows = get(g, "problems");
    assert_int_equal(cJSON_GetArraySize(rows), 3);
    const cJSON *a = cJSON_GetArrayItem(rows, 0), *b = cJSON_GetArrayItem(rows, 1),
                *c = cJSON_GetArrayItem(rows, 2);
    assert_string_equal(get(a, "shape")->valuestring, SHAPE_A);
    assert_near(num(a, "calls"), 40, 0);
    assert_near(num(a, "ms_in_step"), 80, 1e-12);
    assert_near(num(a, "tflops_in_step"), 1.0, 1e-12);
    assert_near(num(a, "tflops_isolated"), 1.25, 1e-12);
    assert_near(num(a, "ratio"), 0.8, 1e-12); /* 1.0 / 1.25 */
    assert_string_equal(get(b, "shape")->valuestring, SHAPE_B);
    assert_near(num(b, "calls"), 50, 0);
    assert_near(num(b, "tflops_in_step"), 0.5, 1e-12);
    assert_near(num(b, "ratio"), 1.0, 1e-12);
    assert_string_equal(get(c, "shape")->valuestring, SHAPE_C);
    assert_near(num(c, "tflops_in_step"), 0.32, 1e-12);
    assert_null(cJSON_GetObjectItem(c, "tflops_isolated"));
    assert_null(cJSON_GetObjectItem(c, "ratio"));
    write_report(g);
    cJSON_Delete(w);

    /* A alone at 1.0 TFLOP/s, its rate in the step: 80 + 20 = 100 ms at the
     * isolated rates for 100 ms taken, a ratio of 1.0: pass. */
    iso[0] = rate(SHAPE_A, 1.0e12);
    w = cJSON_CreateObject();
    assert_int_equal(aitk_bench_gemm_in_step_json(w, p, n, iso, 2, NULL), AITK_OK);
    g = get(w, "gemm_in_step");
    assert_string_equal(get(g, "status")->valuestring, "pass");
    assert_near(num(g, "ratio"), 1.0, 1e-12);
    assert_null(cJSON_GetObjectItem(g, "message"));
    cJSON_Delete(w);
}

static void test_no_isolated_rate_is_a_skip(void **state)
{
    (void)state;
    aitk_backend_path p[8];
    size_t n = step_paths(p, 1.0);
    cJSON *w = cJSON_CreateObject();
    assert_int_equal(aitk_bench_gemm_in_step_json(w, p, n, NULL, 0, "none ran"), AITK_OK);
    const cJSON *g = get(w, "gemm_in_step");
    assert_string_equal(get(g, "status")->valuestring, "skip");
    assert_null(cJSON_GetObjectItem(g, "ratio"));
    assert_string_equal(get(g, "message")->valuestring,
                        "no GEMM problem of the step could be timed alone; none ran");
    assert_near(num(g, "ms_in_step"), 110, 1e-12); /* the step's figures stay */
    cJSON_Delete(w);
}

/* Ops untimed (ms -1): the object says how to measure; no figures. */
static void test_untimed_says_how_to_measure(void **state)
{
    (void)state;
    aitk_backend_path p[8];
    size_t n = step_paths(p, 1.0);
    for (size_t i = 0; i < n; i++)
        p[i].ms = -1.0;
    cJSON *w = cJSON_CreateObject();
    assert_int_equal(aitk_bench_gemm_in_step_json(w, p, n, NULL, 0, NULL), AITK_OK);
    const cJSON *g = get(w, "gemm_in_step");
    assert_string_equal(get(g, "status")->valuestring, "skip");
    assert_string_equal(get(g, "message")->valuestring,
                        "not measured: set AITK_TIME_OPS=1 (op timing adds CUDA events around "
                        "every op)");
    assert_null(cJSON_GetObjectItem(g, "ratio"));
    assert_null(cJSON_GetObjectItem(g, "problems"));
    cJSON_Delete(w);
}

/* Paths without a GEMM shape (the CPU reference's): no object at all. */
static void test_no_gemm_problem_no_field(void **state)
{
    (void)state;
    aitk_backend_path p[2] = {path("gemm", "OpenBLAS sgemm (fp32)", 90, -1),
                              path("attention_forward", "CPU reference", 10, -1)};
    cJSON *w = cJSON_CreateObject();
    assert_int_equal(aitk_bench_gemm_in_step_json(w, p, 2, NULL, 0, NULL), AITK_OK);
    assert_null(cJSON_GetObjectItem(w, "gemm_in_step"));
    assert_int_equal(aitk_bench_gemm_in_step_json(NULL, p, 2, NULL, 0, NULL), AITK_E_INVAL);
    cJSON_Delete(w);
}

/* With D (1 call, 1 ms) the GEMM time is 111 ms and 95% of it 105.45 ms:
 * A (80) and B (100 together) fall short, C brings 110, which covers it,
 * so D is not timed alone. */
static void test_pick_slowest_until_95_percent(void **state)
{
    (void)state;
    aitk_backend_path p[8];
    size_t n = step_paths(p, 1.0);
    p[n++] = path("gemm", "cuBLASLt [" SHAPE_D "] algo 1", 1, 1.0);
    aitk_gemm_shape out[8];
    size_t k = 0;
    aitk_gemm_shape want_a, want_b, want_c;
    assert_true(aitk_gemm_shape_parse("[" SHAPE_A "]", &want_a));
    assert_true(aitk_gemm_shape_parse("[" SHAPE_B "]", &want_b));
    assert_true(aitk_gemm_shape_parse("[" SHAPE_C "]", &want_c));
    assert_int_equal(aitk_bench_gemm_pick(p, n, out, 8, &k), AITK_OK);
    assert_int_equal(k, 3);
    assert_true(aitk_gemm_shape_equal(&out[0], &want_a));
    assert_true(aitk_gemm_shape_equal(&out[1], &want_b));
    assert_true(aitk_gemm_shape_equal(&out[2], &want_c));
    /* The cap wins over the share. */
    assert_int_equal(aitk_bench_gemm_pick(p, n, out, 2, &k), AITK_OK);
    assert_int_equal(k, 2);
    assert_true(aitk_gemm_shape_equal(&out[1], &want_b));
    /* Untimed paths: nothing to pick. */
    for (size_t i = 0; i < n; i++)
        p[i].ms = -1.0;
    assert_int_equal(aitk_bench_gemm_pick(p, n, out, 8, &k), AITK_OK);
    assert_int_equal(k, 0);
    assert_int_equal(aitk_bench_gemm_pick(p, n, out, 8, NULL), AITK_E_INVAL);
}

/* fp32 problems the CPU reference runs (F) and one it cannot (G, bf16). */
#define SHAPE_F "[m=64 n=32 k=16 batch=1 ta=0 tb=1 beta=0 a=fp32 b=fp32 c=fp32 " \
                "compute=fp32 epilogue=none]"
#define SHAPE_G "[m=64 n=32 k=16 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16 c=bf16 " \
                "compute=fp32 epilogue=none]"

/* The whole measurement on the CPU reference: the step's paths are after
 * less warm (F: 25 - 5 = 20 calls, 10 - 2 = 8 ms; G: 14 - 4 = 10 calls,
 * 6 - 1 = 5 ms), F really timed alone through the CPU's gemm op, G left
 * out and said so. */
static void test_measure_on_the_cpu_reference(void **state)
{
    (void)state;
    const aitk_backend *be = aitk_backend_cpu();
    assert_int_equal(be->open(0), AITK_OK);
    aitk_backend_path warm_p[2] = {path("gemm", "x " SHAPE_F, 5, 2.0),
                                   path("gemm", "x " SHAPE_G, 4, 1.0)};
    aitk_backend_path after_p[3] = {path("gemm", "x " SHAPE_F, 25, 10.0),
                                    path("gemm", "x " SHAPE_G, 14, 6.0),
                                    path("attention_forward", "cuDNN", 7, 3.0)};
    aitk_bench_paths warm = {.items = warm_p, .n = 2, .ok = true};
    aitk_bench_paths after = {.items = after_p, .n = 3, .ok = true};
    const long calls0 = gemm_path_calls(be);
    cJSON *w = cJSON_CreateObject();
    assert_int_equal(aitk_bench_gemm_in_step_add(w, be, &warm, &after), AITK_OK);
    assert_true(gemm_path_calls(be) > calls0); /* F ran alone */
    const cJSON *g = get(w, "gemm_in_step");
    assert_true(num(g, "ratio") > 0.0);
    assert_near(num(g, "calls"), 30, 0);
    assert_near(num(g, "ms_in_step"), 13, 1e-12);
    assert_non_null(strstr(get(g, "message")->valuestring,
                           "1 of the problems picked have no op that runs them alone"));
    const cJSON *rows = get(g, "problems");
    assert_int_equal(cJSON_GetArraySize(rows), 2);
    const cJSON *f = cJSON_GetArrayItem(rows, 0), *gr = cJSON_GetArrayItem(rows, 1);
    assert_near(num(f, "calls"), 20, 0);
    assert_near(num(f, "ms_in_step"), 8, 1e-12);
    assert_true(num(f, "tflops_isolated") > 0.0);
    assert_near(num(gr, "calls"), 10, 0);
    assert_null(cJSON_GetObjectItem(gr, "tflops_isolated"));
    cJSON_Delete(w);

    /* No snapshot after the warm-up, or a backend reopened in between
     * (fewer calls after than before): no figure. */
    w = cJSON_CreateObject();
    warm.ok = false;
    assert_int_equal(aitk_bench_gemm_in_step_add(w, be, &warm, &after), AITK_OK);
    warm.ok = true;
    warm_p[0].calls = 30;
    assert_int_equal(aitk_bench_gemm_in_step_add(w, be, &warm, &after), AITK_OK);
    assert_null(cJSON_GetObjectItem(w, "gemm_in_step"));
    cJSON_Delete(w);
    be->close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_from_hand_made_paths),
        cmocka_unit_test(test_no_isolated_rate_is_a_skip),
        cmocka_unit_test(test_untimed_says_how_to_measure),
        cmocka_unit_test(test_no_gemm_problem_no_field),
        cmocka_unit_test(test_pick_slowest_until_95_percent),
        cmocka_unit_test(test_measure_on_the_cpu_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
