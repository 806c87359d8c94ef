/* The op timer's event-pool ring (kernels/cuda/op_timer_ring.h), the host
 * bookkeeping behind AITK_TIME_OPS=1, run on the CPU: pairs are taken and
 * read in order, a full pool refuses until its oldest pair is read, a
 * failed call gives its pair back, and indices wrap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/cuda/op_timer_ring.h"

static void test_claims_in_order_and_reads_oldest_first(void **state)
{
    (void)state;
    aitk_op_timer_ring r;
    memset(&r, 0, sizeof r);
    assert_int_equal(aitk_op_timer_ring_oldest(&r), -1);
    assert_int_equal(aitk_op_timer_ring_claim(&r, 7), 0);
    assert_int_equal(aitk_op_timer_ring_claim(&r, 9), 1);
    assert_int_equal(aitk_op_timer_ring_oldest(&r), 0);
    assert_int_equal(r.path[0], 7);
    aitk_op_timer_ring_retire(&r);
    assert_int_equal(aitk_op_timer_ring_oldest(&r), 1);
    assert_int_equal(r.path[1], 9);
    aitk_op_timer_ring_retire(&r);
    assert_int_equal(aitk_op_timer_ring_oldest(&r), -1);
    aitk_op_timer_ring_retire(&r); /* nothing pending: no effect */
    assert_int_equal(r.count, 0);
}

static void test_full_pool_refuses_then_wraps(void **state)
{
    (void)state;
    aitk_op_timer_ring r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < AITK_OP_TIMER_PAIRS; i++)
        assert_int_equal(aitk_op_timer_ring_claim(&r, i), i);
    assert_int_equal(aitk_op_timer_ring_claim(&r, 999), -1);
    /* Reading the oldest (pair 0) frees it: the next claim takes pair 0. */
    assert_int_equal(aitk_op_timer_ring_oldest(&r), 0);
    aitk_op_timer_ring_retire(&r);
    assert_int_equal(aitk_op_timer_ring_claim(&r, 1000), 0);
    assert_int_equal(r.path[0], 1000);
    assert_int_equal(aitk_op_timer_ring_oldest(&r), 1);
    assert_int_equal(r.path[1], 1);
}

static void test_unclaim_gives_back_the_newest(void **state)
{
    (void)state;
    aitk_op_timer_ring r;
    memset(&r, 0, sizeof r);
    assert_int_equal(aitk_op_timer_ring_claim(&r, 3), 0);
    assert_int_equal(aitk_op_timer_ring_claim(&r, 4), 1);
    aitk_op_timer_ring_unclaim(&r); /* the call of path 4 failed */
    assert_int_equal(r.count, 1);
    assert_int_equal(aitk_op_timer_ring_claim(&r, 5), 1); /* its pair is reused */
    assert_int_equal(aitk_op_timer_ring_oldest(&r), 0);
    assert_int_equal(r.path[0], 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claims_in_order_and_reads_oldest_first),
        cmocka_unit_test(test_full_pool_refuses_then_wraps),
        cmocka_unit_test(test_unclaim_gives_back_the_newest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
