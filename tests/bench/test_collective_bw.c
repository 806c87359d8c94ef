/* nccl-tests' busbw arithmetic (bench/collective_bw.h). Every expected figure
 * is worked by hand in the comment beside it from doc/PERFORMANCE.md's
 * factors and src/all_gather.cu's / src/reduce_scatter.cu's buffer split
 * (github.com/NVIDIA/nccl-tests), never computed by the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bench/collective_bw.h"
#include "tests/bench/bt.h"

static void test_all_reduce_two_gpus(void **state)
{
    (void)state;
    /* 1 MiB fp32 over 2 ranks: count = 1048576 / 4 = 262144, buffers 1048576
     * bytes each. 100 us: algbw = 1048576 / 1e9 / 1e-4 = 10.48576 GB/s;
     * busbw = algbw * 2(2-1)/2 = 10.48576. */
    aitk_coll_shape s;
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_ALL_REDUCE, 1048576, 4, 2, &s), 0);
    assert_int_equal(s.count, 262144);
    assert_int_equal(s.send_bytes, 1048576);
    assert_int_equal(s.recv_bytes, 1048576);
    assert_int_equal(s.size_bytes, 1048576);
    double alg = 0, bus = 0;
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_ALL_REDUCE, &s, 2, 1e-4, &alg, &bus), 0);
    assert_near(alg, 10.48576, 1e-9);
    assert_near(bus, 10.48576, 1e-9);
}

static void test_all_reduce_eight_gpus(void **state)
{
    (void)state;
    /* 1 GiB bf16 over 8 ranks in 10 ms: algbw = 1073741824 / 1e9 / 0.01 =
     * 107.3741824 GB/s; busbw = 107.3741824 * 2*7/8 (1.75) = 187.9048192. */
    aitk_coll_shape s;
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_ALL_REDUCE, 1073741824, 2, 8, &s), 0);
    assert_int_equal(s.count, 536870912);
    double alg = 0, bus = 0;
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_ALL_REDUCE, &s, 8, 0.01, &alg, &bus), 0);
    assert_near(alg, 107.3741824, 1e-7);
    assert_near(bus, 187.9048192, 1e-7);
}

static void test_all_gather_size_is_the_gathered_buffer(void **state)
{
    (void)state;
    /* 1 MiB bf16 asked over 3 ranks: 524288 elements; / 3 = 174762 (rounded
     * down); to a multiple of 16 bytes = 8 bf16: 174760 (8 * 21845). Each
     * rank sends 174760 * 2 = 349520 bytes and receives 3 * 349520 =
     * 1048560, which is nccl-tests' size. 1 ms: algbw = 1048560 / 1e9 /
     * 1e-3 = 1.04856 GB/s; busbw = 1.04856 * 2/3 = 0.69904. */
    aitk_coll_shape s;
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_ALL_GATHER, 1048576, 2, 3, &s), 0);
    assert_int_equal(s.count, 174760);
    assert_int_equal(s.send_bytes, 349520);
    assert_int_equal(s.recv_bytes, 1048560);
    assert_int_equal(s.size_bytes, 1048560);
    double alg = 0, bus = 0;
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_ALL_GATHER, &s, 3, 1e-3, &alg, &bus), 0);
    assert_near(alg, 1.04856, 1e-12);
    assert_near(bus, 0.69904, 1e-12);
}

static void test_reduce_scatter_size_is_the_input(void **state)
{
    (void)state;
    /* 16 MiB fp32 over 4 ranks: 4194304 elements, 1048576 per rank (already
     * a multiple of 4 fp32 = 16 bytes). Input 16777216 bytes (the size),
     * output 4194304. 2 ms: algbw = 16777216 / 1e9 / 2e-3 = 8.388608;
     * busbw = 8.388608 * 3/4 = 6.291456. */
    aitk_coll_shape s;
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_REDUCE_SCATTER, 16777216, 4, 4, &s), 0);
    assert_int_equal(s.count, 1048576);
    assert_int_equal(s.send_bytes, 16777216);
    assert_int_equal(s.recv_bytes, 4194304);
    assert_int_equal(s.size_bytes, 16777216);
    double alg = 0, bus = 0;
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_REDUCE_SCATTER, &s, 4, 2e-3, &alg, &bus),
                     0);
    assert_near(alg, 8.388608, 1e-12);
    assert_near(bus, 6.291456, 1e-12);
}

static void test_one_rank_moves_nothing_over_the_bus(void **state)
{
    (void)state;
    /* n = 1: factors 2*0/1 = 0 and 0/1 = 0, so busbw is 0 whatever the time;
     * algbw is still size / time: 4194304 / 1e9 / 1e-3 = 4.194304. All-gather
     * of 1 MiB bf16 on one rank: 524288 elements, all of them the rank's. */
    aitk_coll_shape s;
    double alg = -1, bus = -1;
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_ALL_REDUCE, 4194304, 4, 1, &s), 0);
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_ALL_REDUCE, &s, 1, 1e-3, &alg, &bus), 0);
    assert_near(alg, 4.194304, 1e-12);
    assert_near(bus, 0.0, 0);
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_ALL_GATHER, 1048576, 2, 1, &s), 0);
    assert_int_equal(s.count, 524288);
    assert_int_equal(s.size_bytes, 1048576);
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_ALL_GATHER, &s, 1, 1e-3, &alg, &bus), 0);
    assert_near(alg, 1.048576, 1e-12);
    assert_near(bus, 0.0, 0);
}

static void test_factors(void **state)
{
    (void)state;
    /* doc/PERFORMANCE.md "Summary": 2(n-1)/n, (n-1)/n, (n-1)/n, 1, 1.
     * n = 4: 1.5, 0.75, 0.75, 1, 1. n = 2: 1, 0.5. */
    assert_near(aitk_coll_busbw_factor(AITK_COLLECTIVE_ALL_REDUCE, 4), 1.5, 1e-15);
    assert_near(aitk_coll_busbw_factor(AITK_COLLECTIVE_ALL_GATHER, 4), 0.75, 1e-15);
    assert_near(aitk_coll_busbw_factor(AITK_COLLECTIVE_REDUCE_SCATTER, 4), 0.75, 1e-15);
    assert_near(aitk_coll_busbw_factor(AITK_COLLECTIVE_BROADCAST, 4), 1.0, 0);
    assert_near(aitk_coll_busbw_factor(AITK_COLLECTIVE_REDUCE, 4), 1.0, 0);
    assert_near(aitk_coll_busbw_factor(AITK_COLLECTIVE_ALL_REDUCE, 2), 1.0, 1e-15);
    assert_near(aitk_coll_busbw_factor(AITK_COLLECTIVE_REDUCE_SCATTER, 2), 0.5, 1e-15);
    assert_near(aitk_coll_busbw_factor(AITK_COLLECTIVE_ALL_REDUCE, 0), 0.0, 0);
    assert_near(aitk_coll_busbw_factor(AITK_COLLECTIVE_COUNT, 4), 0.0, 0);
}

static void test_broadcast_busbw_is_algbw(void **state)
{
    (void)state;
    /* 1 MiB over 4 ranks in 100 us: 1048576 / 1e9 / 1e-4 = 10.48576 both. */
    aitk_coll_shape s;
    double alg = 0, bus = 0;
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_BROADCAST, 1048576, 4, 4, &s), 0);
    assert_int_equal(s.size_bytes, 1048576);
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_BROADCAST, &s, 4, 1e-4, &alg, &bus), 0);
    assert_near(alg, 10.48576, 1e-9);
    assert_near(bus, 10.48576, 1e-9);
}

static void test_refusals(void **state)
{
    (void)state;
    aitk_coll_shape s = {.size_bytes = 1024};
    double alg, bus;
    /* 16 bytes of fp32 over 8 ranks: 4 elements, 0 per rank after the split. */
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_ALL_GATHER, 16, 4, 8, &s), AITK_E_INVAL);
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_ALL_REDUCE, 2, 4, 2, &s), AITK_E_INVAL);
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_ALL_REDUCE, 1024, 4, 0, &s), AITK_E_INVAL);
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_ALL_REDUCE, 1024, 0, 2, &s), AITK_E_INVAL);
    assert_int_equal(aitk_coll_shape_of(AITK_COLLECTIVE_COUNT, 1024, 4, 2, &s), AITK_E_INVAL);
    s.size_bytes = 1024;
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_ALL_REDUCE, &s, 2, 0.0, &alg, &bus),
                     AITK_E_INVAL);
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_ALL_REDUCE, &s, 2, -1.0, &alg, &bus),
                     AITK_E_INVAL);
    assert_int_equal(aitk_coll_bandwidth(AITK_COLLECTIVE_ALL_REDUCE, &s, 0, 1.0, &alg, &bus),
                     AITK_E_INVAL);
    assert_string_equal(aitk_collective_name(AITK_COLLECTIVE_REDUCE_SCATTER), "reduce_scatter");
    assert_string_equal(aitk_collective_name(AITK_COLLECTIVE_COUNT), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_reduce_two_gpus),
        cmocka_unit_test(test_all_reduce_eight_gpus),
        cmocka_unit_test(test_all_gather_size_is_the_gathered_buffer),
        cmocka_unit_test(test_reduce_scatter_size_is_the_input),
        cmocka_unit_test(test_one_rank_moves_nothing_over_the_bus),
        cmocka_unit_test(test_factors),
        cmocka_unit_test(test_broadcast_busbw_is_algbw),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
