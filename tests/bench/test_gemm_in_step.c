/* GEMMs inside a step against the same GEMMs alone (bench/gemm_in_step.h):
 * the path parser on good and broken texts, and the per-problem and
 * overall rates on hand-made paths. Every expected figure is worked out by
 * hand in the comment beside it, never by the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "bench/gemm_in_step.h"
#include "tests/bench/bt.h"
#include "tests/bench/path_fixture.h"

/* The CUDA backend's text for a FLUX Linear (kernels/cuda/gemm.c). */
#define QKV "cuBLASLt [m=4096 n=3072 k=3072 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16 " \
            "c=bf16 compute=fp32 epilogue=none] algo 6 tile 20 stages 8"
#define QKV_OTHER_ALGO "cuBLASLt [m=4096 n=3072 k=3072 batch=1 ta=0 tb=1 beta=0 a=bf16 " \
                       "b=bf16 c=bf16 compute=fp32 epilogue=none] algo 7 tile 20 stages 8"
#define LORA_DA "cuBLASLt [m=16 n=3072 k=4096 batch=1 ta=1 tb=0 beta=1 a=bf16 b=bf16 " \
                "c=fp32 compute=fp32 epilogue=none] algo 1 tile 2 stages 3"

static void test_parse_backend_text(void **state)
{
    (void)state;
    aitk_gemm_shape s;
    assert_true(aitk_gemm_shape_parse(LORA_DA, &s));
    assert_int_equal(s.m, 16);
    assert_int_equal(s.n, 3072);
    assert_int_equal(s.k, 4096);
    assert_int_equal(s.batch, 1);
    assert_int_equal(s.trans_a, 1);
    assert_int_equal(s.trans_b, 0);
    assert_int_equal(s.beta, 1);
    assert_string_equal(s.a, "bf16");
    assert_string_equal(s.b, "bf16");
    assert_string_equal(s.c, "fp32");
    assert_string_equal(s.compute, "fp32");
    assert_string_equal(s.epilogue, "none");
    /* 2 * 16 * 3072 * 4096 = 402 653 184 */
    assert_near(aitk_gemm_shape_flops(&s), 402653184.0, 0.0);
}

static void test_parse_refuses_broken_texts(void **state)
{
    (void)state;
    aitk_gemm_shape s;
    static const char *const bad[] = {
        "OpenBLAS sgemm (fp32)",                      /* no problem at all: the CPU */
        "cuDNN 9.14.0 fused SDPA",
        "cuBLASLt [m=4096 n=3072 k=3072 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16 c=bf16 "
        "compute=fp32] algo 1",                       /* epilogue missing */
        "cuBLASLt [m=0 n=3072 k=3072 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16 c=bf16 "
        "compute=fp32 epilogue=none]",                /* m not positive */
        "cuBLASLt [m=4096 n=3072 k=3072 batch=1 ta=2 tb=1 beta=0 a=bf16 b=bf16 c=bf16 "
        "compute=fp32 epilogue=none]",                /* a flag not 0 or 1 */
        "cuBLASLt [m=4x96 n=3072 k=3072 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16 c=bf16 "
        "compute=fp32 epilogue=none]",                /* not a number */
        "cuBLASLt [m=4096 n=3072 k=3072 batch=1 ta=0 tb=1 beta=0 a=bfloat16 b=bf16 "
        "c=bf16 compute=fp32 epilogue=none]",         /* a type name too long */
        "cuBLASLt [m=4096 n=3072 k=3072 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16 c=bf16 "
        "compute=fp32 epilogue=none",                 /* cut before the bracket closes */
        "cuBLASLt [m=4096 n=3072 k=3072 batch=1 ta=0 tb=1 beta=0 a=bf16 b=bf16 c=bf16 "
        "compute=fp32 epilogue]",                     /* a key without a value */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (aitk_gemm_shape_parse(bad[i], &s)) {
            print_error("parsed: %s\n", bad[i]);
            fail();
        }
}

static void test_parse_skips_unknown_keys_and_formats_back(void **state)
{
    (void)state;
    aitk_gemm_shape s;
    assert_true(aitk_gemm_shape_parse("x [m=2 n=3 k=5 batch=7 ta=0 tb=1 beta=0 a=bf16 "
                                      "b=bf16 c=bf16 compute=fp32 epilogue=bias swizzle=4]",
                                      &s));
    /* 2 * 2 * 3 * 5 * 7 = 420 */
    assert_near(aitk_gemm_shape_flops(&s), 420.0, 0.0);
    char buf[160];
    assert_true(aitk_gemm_shape_format(&s, buf, sizeof buf));
    assert_string_equal(buf, "[m=2 n=3 k=5 batch=7 ta=0 tb=1 beta=0 a=bf16 b=bf16 c=bf16 "
                             "compute=fp32 epilogue=bias]");
    assert_false(aitk_gemm_shape_format(&s, buf, 20)); /* does not fit: said, not cut */
}

/* Two paths of one problem (the gemm op and a LoRA step, different
 * algorithms), one small LoRA gradient GEMM, attention, an untimed path. */
static size_t step_paths(aitk_backend_path *p)
{
    size_t n = 0;
    p[n++] = path("gemm", QKV, 10, 20.0);
    p[n++] = path("attention_forward", "cuDNN 9.14.0 fused SDPA", 3, 5.0);
    p[n++] = path("lora_linear_forward", QKV_OTHER_ALGO, 5, 12.0);
    p[n++] = path("lora_linear_backward", LORA_DA, 4, 1.0);
    p[n++] = path("gemm", "cuBLASLt [m=8 n=8 k=8 batch=1 ta=0 tb=0 beta=0 a=bf16 b=bf16 "
                          "c=bf16 compute=fp32 epilogue=none] algo 0 tile 0 stages 0", 2, -1.0);
    p[n++] = path("gemm", LORA_DA, 0, 0.0); /* no calls: left out */
    return n;
}

static void test_rates_against_isolated(void **state)
{
    (void)state;
    aitk_backend_path p[8];
    size_t n = step_paths(p);
    aitk_gemm_rate iso;
    assert_true(aitk_gemm_shape_parse(QKV, &iso.shape));
    iso.flops_per_s = 4.0e13;
    aitk_gemm_in_step_row rows[4];
    aitk_gemm_in_step sum;
    assert_int_equal(aitk_gemm_in_step_compute(p, n, &iso, 1, rows, 4, &sum), AITK_OK);
    assert_int_equal(sum.n_rows, 2);
    assert_int_equal(sum.untimed_paths, 1);
    /* QKV: 2 * 4096 * 3072 * 3072 = 77 309 411 328 FLOPs a call; 15 calls
     * = 1 159 641 169 920 in 32 ms: 3.623878656e13 FLOP/s, 0.905969664 of
     * 4e13. */
    assert_int_equal(rows[0].calls, 15);
    assert_near(rows[0].ms, 32.0, 1e-12);
    assert_near(rows[0].flops, 1159641169920.0, 0.5);
    assert_near(rows[0].flops_per_s, 3.623878656e13, 1e3);
    assert_near(rows[0].isolated_flops_per_s, 4.0e13, 0.0);
    assert_near(rows[0].ratio, 0.905969664, 1e-12);
    /* LoRA dA: 402 653 184 x 4 = 1 610 612 736 FLOPs in 1 ms:
     * 1.610612736e12 FLOP/s; no isolated rate. */
    assert_int_equal(rows[1].calls, 4);
    assert_near(rows[1].flops_per_s, 1.610612736e12, 1e2);
    assert_near(rows[1].ratio, -1.0, 0.0);
    /* All: 1 161 251 782 656 FLOPs in 33 ms = 3.5189447959e13 FLOP/s.
     * Matched: QKV alone, 32 ms; at 4e13 it would take
     * 1.15964116992e12 / 4e13 = 28.991029248 ms: 28.991029248 / 32 =
     * 0.905969664; share 1 159 641 169 920 / 1 161 251 782 656 = 0.99861304. */
    assert_int_equal(sum.calls, 19);
    assert_near(sum.ms, 33.0, 1e-12);
    assert_near(sum.flops, 1161251782656.0, 0.5);
    assert_near(sum.flops_per_s, 3.5189447959e13, 1e3);
    assert_near(sum.matched_ms, 32.0, 1e-12);
    assert_near(sum.isolated_ms, 28.991029248, 1e-9);
    assert_near(sum.ratio, 0.905969664, 1e-12);
    assert_near(sum.matched_share, 0.99861304, 1e-8);
}

static void test_without_isolated_or_timing(void **state)
{
    (void)state;
    aitk_backend_path p[8];
    size_t n = step_paths(p);
    aitk_gemm_in_step_row rows[4];
    aitk_gemm_in_step sum;
    assert_int_equal(aitk_gemm_in_step_compute(p, n, NULL, 0, rows, 4, &sum), AITK_OK);
    assert_near(sum.ratio, -1.0, 0.0);
    assert_near(sum.matched_share, 0.0, 0.0);
    assert_near(rows[0].ratio, -1.0, 0.0);
    /* Timing off: every GEMM path has ms -1; nothing timed, all counted. */
    for (size_t i = 0; i < n; i++)
        p[i].ms = -1.0;
    assert_int_equal(aitk_gemm_in_step_compute(p, n, NULL, 0, rows, 4, &sum), AITK_OK);
    assert_int_equal(sum.n_rows, 0);
    assert_int_equal(sum.untimed_paths, 4); /* QKV twice, dA, the 8^3; not the 0-call one */
    assert_near(sum.flops_per_s, 0.0, 0.0);
}

static void test_more_problems_than_rows(void **state)
{
    (void)state;
    aitk_backend_path p[8];
    size_t n = step_paths(p);
    aitk_gemm_in_step_row rows[1];
    aitk_gemm_in_step sum;
    /* Room for one row: the totals still count both problems. */
    assert_int_equal(aitk_gemm_in_step_compute(p, n, NULL, 0, rows, 1, &sum), AITK_E_RANGE);
    assert_int_equal(sum.n_rows, 2);
    assert_int_equal(rows[0].calls, 15);
    assert_near(sum.ms, 33.0, 1e-12);
    /* The dA path again, after the cap: one problem, not a third. */
    p[n++] = path("lora_linear_backward", LORA_DA, 1, 0.5);
    assert_int_equal(aitk_gemm_in_step_compute(p, n, NULL, 0, rows, 1, &sum), AITK_E_RANGE);
    assert_int_equal(sum.n_rows, 2);
    assert_near(sum.ms, 33.5, 1e-12);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    aitk_backend_path p[8];
    size_t n = step_paths(p);
    aitk_gemm_in_step sum;
    aitk_gemm_rate iso;
    assert_true(aitk_gemm_shape_parse(QKV, &iso.shape));
    iso.flops_per_s = 0.0;
    assert_int_equal(aitk_gemm_in_step_compute(p, n, &iso, 1, NULL, 0, &sum), AITK_E_INVAL);
    assert_int_equal(aitk_gemm_in_step_compute(p, n, NULL, 0, NULL, 0, NULL), AITK_E_INVAL);
    assert_int_equal(aitk_gemm_in_step_compute(NULL, 1, NULL, 0, NULL, 0, &sum), AITK_E_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_backend_text),
        cmocka_unit_test(test_parse_refuses_broken_texts),
        cmocka_unit_test(test_parse_skips_unknown_keys_and_formats_back),
        cmocka_unit_test(test_rates_against_isolated),
        cmocka_unit_test(test_without_isolated_or_timing),
        cmocka_unit_test(test_more_problems_than_rows),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
