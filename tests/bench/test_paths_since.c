/* A backend's paths since a snapshot (bench/paths_since.h), on hand-made
 * paths with hand-worked differences. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "bench/paths_since.h"
#include "tests/bench/bt.h"
#include "tests/bench/path_fixture.h"

static void test_steady_state_after_warmup(void **state)
{
    (void)state;
    /* After 2 warm-up steps: gemm X 20 calls in 50 ms (the first ones slow),
     * attention 4 in 30 ms, zero untimed 6. After 12 steps: gemm X 120 in
     * 150 ms, attention 24 in 70 ms, zero 36, and a new path (gemm Y, 5
     * calls in 2.5 ms) and the cuDNN-refused path that did not run since. */
    const aitk_backend_path before[] = {
        path("gemm", "X", 20, 50.0),
        path("attention_forward", "cuDNN", 4, 30.0),
        path("zero", "cudaMemsetAsync", 6, -1.0),
        path("attention_forward", "plain kernel", 1, 9.0),
    };
    const aitk_backend_path now[] = {
        path("gemm", "X", 120, 150.0),
        path("zero", "cudaMemsetAsync", 36, -1.0),
        path("attention_forward", "cuDNN", 24, 70.0),
        path("attention_forward", "plain kernel", 1, 9.0),
        path("lora_linear_forward", "Y", 5, 2.5),
    };
    aitk_backend_path out[8];
    size_t n = 0;
    assert_int_equal(aitk_paths_since(now, 5, before, 4, out, 8, &n), AITK_OK);
    assert_int_equal(n, 4); /* the plain kernel: 1 - 1 = 0 calls, dropped */
    /* gemm X: 120 - 20 = 100 calls, 150 - 50 = 100 ms */
    assert_string_equal(out[0].kernel, "X");
    assert_int_equal(out[0].calls, 100);
    assert_near(out[0].ms, 100.0, 1e-12);
    /* zero: 30 calls, still untimed */
    assert_int_equal(out[1].calls, 30);
    assert_near(out[1].ms, -1.0, 0.0);
    /* attention cuDNN: 20 calls, 40 ms */
    assert_int_equal(out[2].calls, 20);
    assert_near(out[2].ms, 40.0, 1e-12);
    /* Y: new since the snapshot, as it is */
    assert_string_equal(out[3].op, "lora_linear_forward");
    assert_int_equal(out[3].calls, 5);
    assert_near(out[3].ms, 2.5, 0.0);
    /* Room for 2: the first 2 written, 4 counted. */
    assert_int_equal(aitk_paths_since(now, 5, before, 4, out, 2, &n), AITK_E_RANGE);
    assert_int_equal(n, 4);
    assert_int_equal(out[1].calls, 30);
}

static void test_reopened_backend_refused(void **state)
{
    (void)state;
    const aitk_backend_path before[] = {path("gemm", "X", 20, 50.0)};
    const aitk_backend_path now[] = {path("gemm", "X", 3, 1.0)};
    aitk_backend_path out[2];
    size_t n = 0;
    assert_int_equal(aitk_paths_since(now, 1, before, 1, out, 2, &n), AITK_E_INVAL);
    assert_int_equal(aitk_paths_since(now, 1, before, 1, out, 2, NULL), AITK_E_INVAL);
    /* No snapshot: everything since open. */
    assert_int_equal(aitk_paths_since(now, 1, NULL, 0, out, 2, &n), AITK_OK);
    assert_int_equal(n, 1);
    assert_int_equal(out[0].calls, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steady_state_after_warmup),
        cmocka_unit_test(test_reopened_backend_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
