/* One GEMM problem timed alone (bench/gemm_isolated.h), on the CPU
 * reference backend: which op runs which problem, how many calls the
 * timing made (read back from the backend's own call counter), that the
 * last batch lasted at least the minimum time, and the problems no single
 * op runs. The rates themselves are measurements, not checked here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bench/gemm_isolated.h"
#include "kernels/backend.h"
#include "tests/bench/path_fixture.h"

static const aitk_backend *be;

static long gemm_calls(void)
{
    long calls = gemm_path_calls(be);
    if (calls < 0)
        fail_msg("no gemm path (%ld)", calls);
    return calls;
}

static aitk_gemm_shape shape(long m, long n, long k, long batch, int ta, int tb, int beta,
                             const char *type, const char *epilogue)
{
    aitk_gemm_shape s;
    memset(&s, 0, sizeof s);
    s.m = m, s.n = n, s.k = k, s.batch = batch;
    s.trans_a = ta, s.trans_b = tb, s.beta = beta;
    strcpy(s.a, type), strcpy(s.b, type), strcpy(s.c, type), strcpy(s.compute, "fp32");
    strcpy(s.epilogue, epilogue);
    return s;
}

/* A run of `calls` timed calls is 1 + 2 + ... + calls = 2 calls - 1 op
 * calls after one warm-up call: 2 calls in all on the counter. */
static void check_timed(const aitk_gemm_shape *s)
{
    const double min_s = 0.005;
    long before = gemm_calls();
    aitk_gemm_isolated r;
    assert_int_equal(aitk_gemm_isolated_time(be, s, min_s, &r), AITK_OK);
    assert_true(r.calls >= 1);
    assert_int_equal(gemm_calls() - before, 2 * r.calls);
    assert_int_equal(r.from_events, 0); /* the CPU reference does not time ops */
    assert_true(r.ms_per_call * (double)r.calls >= min_s * 1e3);
    assert_true(r.rate.flops_per_s > 0.0);
    assert_int_equal(r.rate.shape.m, s->m);
}

static void test_plain_gemm_problems(void **state)
{
    (void)state;
    aitk_gemm_shape s = shape(64, 32, 16, 1, 0, 1, 0, "fp32", "none");
    check_timed(&s);
    s = shape(48, 40, 24, 3, 1, 0, 1, "fp32", "none"); /* batched, transposed A, beta 1 */
    check_timed(&s);
}

static void test_bias_epilogue_through_the_linear_op(void **state)
{
    (void)state;
    aitk_gemm_shape s = shape(64, 32, 16, 1, 0, 1, 0, "fp32", "bias");
    check_timed(&s);
}

static void test_problems_no_op_runs(void **state)
{
    (void)state;
    aitk_gemm_isolated r;
    aitk_gemm_shape s = shape(64, 32, 16, 1, 0, 1, 0, "bf16", "none"); /* not this backend's type */
    assert_int_equal(aitk_gemm_isolated_time(be, &s, 0.001, &r), AITK_E_UNSUPPORTED);
    s = shape(64, 32, 16, 1, 0, 1, 0, "fp32", "none");
    strcpy(s.c, "bf16"); /* an output type the op does not write here */
    assert_int_equal(aitk_gemm_isolated_time(be, &s, 0.001, &r), AITK_E_UNSUPPORTED);
    s = shape(64, 32, 16, 1, 0, 1, 1, "fp32", "bias"); /* bias with beta 1: no op */
    assert_int_equal(aitk_gemm_isolated_time(be, &s, 0.001, &r), AITK_E_UNSUPPORTED);
    s = shape(64, 32, 16, 1, 0, 1, 0, "fp32", "gelu"); /* an epilogue nothing runs */
    assert_int_equal(aitk_gemm_isolated_time(be, &s, 0.001, &r), AITK_E_UNSUPPORTED);
    s = shape(0, 32, 16, 1, 0, 1, 0, "fp32", "none");
    assert_int_equal(aitk_gemm_isolated_time(be, &s, 0.001, &r), AITK_E_INVAL);
    s = shape(64, 32, 16, 1, 0, 1, 0, "fp32", "none");
    assert_int_equal(aitk_gemm_isolated_time(be, &s, 0.0, &r), AITK_E_INVAL);
    assert_int_equal(aitk_gemm_isolated_time(NULL, &s, 0.001, &r), AITK_E_INVAL);
}

int main(void)
{
    be = aitk_backend_cpu();
    if (be->open(0) != AITK_OK)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_gemm_problems),
        cmocka_unit_test(test_bias_epilogue_through_the_linear_op),
        cmocka_unit_test(test_problems_no_op_runs),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    be->close();
    return rc;
}
