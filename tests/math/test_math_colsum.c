/* The grid of the two-stage column sums (kernels/math/colsum.h) that
 * norm.cu and modulate.cu launch: at least two blocks per SM for FLUX's
 * shapes, every row in exactly one non-empty chunk, and a fixed order of
 * addition. Values by hand; the sums themselves are compared with the CPU
 * reference in math.norm and math.modulate. */
#include "mt.h"

#include "kernels/math/colsum.h"

/* Every row of [0, rows) in exactly one chunk, chunks in order, none empty,
 * all but the last of rows_per_chunk rows. */
static void check_cover(const aitk_colsum_grid *g, int rows)
{
    int next = 0;
    for (int k = 0; k < g->chunks; k++) {
        int begin, end;
        aitk_colsum_rows(g, rows, k, &begin, &end);
        assert_int_equal(begin, next);
        assert_true(end > begin);
        if (k + 1 < g->chunks)
            assert_int_equal(end - begin, g->rows_per_chunk);
        next = end;
    }
    assert_int_equal(next, rows);
}

static void test_grid_fills_the_gpu(void **state)
{
    (void)state;
    /* FLUX at 1024 px: 4096 image tokens, C = 3072, on an H100 (132 SMs).
     * One thread per column was 12 blocks; now 12 x 22 = 264 = 2 x 132. */
    aitk_colsum_grid g = aitk_colsum_grid_for(4096, 3072, 1, 256, 132);
    assert_int_equal(g.col_blocks, 12);
    assert_int_equal(g.chunks, 22);
    assert_int_equal(g.rows_per_chunk, 187); /* ceil(4096 / 22); the last has 169 */
    check_cover(&g, 4096);
    /* The joint sequence's 4608 tokens of RMSNorm rows at width 3072. */
    g = aitk_colsum_grid_for(4608, 3072, 1, 256, 132);
    assert_true(g.col_blocks * g.chunks >= 2 * 132);
    check_cover(&g, 4608);
    /* Per-head q/k norms: 4608 x 24 rows of 128 columns, one column block. */
    g = aitk_colsum_grid_for(4608 * 24, 128, 1, 256, 132);
    assert_int_equal(g.col_blocks, 1);
    assert_true(g.chunks >= 2 * 132);
    check_cover(&g, 4608 * 24);
    /* Per-sample sums at batch 4 on a B200-size GPU (148 SMs). */
    g = aitk_colsum_grid_for(4096, 3072, 4, 256, 148);
    assert_true(g.col_blocks * g.chunks * 4 >= 2 * 148);
    check_cover(&g, 4096);
}

static void test_grid_edges(void **state)
{
    (void)state;
    /* Fewer rows than wanted chunks: one row a chunk. */
    aitk_colsum_grid g = aitk_colsum_grid_for(5, 3072, 1, 256, 132);
    assert_int_equal(g.chunks, 5);
    assert_int_equal(g.rows_per_chunk, 1);
    check_cover(&g, 5);
    /* Rounding rows_per_chunk up would leave empty trailing chunks: 40 rows
     * in 22 wanted chunks is 20 chunks of 2. */
    g = aitk_colsum_grid_for(40, 3072, 1, 256, 132);
    assert_int_equal(g.rows_per_chunk, 2);
    assert_int_equal(g.chunks, 20);
    check_cover(&g, 40);
    /* One row, one column. */
    g = aitk_colsum_grid_for(1, 1, 1, 256, 132);
    assert_int_equal(g.col_blocks, 1);
    assert_int_equal(g.chunks, 1);
    check_cover(&g, 1);
    /* Many rows, a tiny GPU: still two blocks per SM, no more. */
    g = aitk_colsum_grid_for(100000, 3072, 1, 256, 2);
    assert_int_equal(g.chunks, 1);
    check_cover(&g, 100000);
    /* The chunk count is capped (partials memory) on a huge SM count. */
    g = aitk_colsum_grid_for(1000000, 64, 1, 256, 100000);
    assert_true(g.chunks <= AITK_COLSUM_MAX_CHUNKS);
    check_cover(&g, 1000000);
    /* Ragged columns: 3000 columns need 12 blocks of 256. */
    assert_int_equal(aitk_colsum_grid_for(64, 3000, 1, 256, 132).col_blocks, 12);
}

static void test_finish_adds_chunks_in_order(void **state)
{
    (void)state;
    /* Two groups, three chunks, two columns: partials laid out (group,
     * chunk, column). 1e8 + 1 - 1e8 in fp32 is 0 in this order, 1 in
     * another: the order is part of the contract. */
    aitk_colsum_grid g = aitk_colsum_grid_for(3, 2, 2, 256, 3);
    assert_int_equal(g.chunks, 3);
    float p[12] = {1e8f, 5.0f, 1.0f, 6.0f, -1e8f, 7.0f, /* group 0 */
                   1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}; /* group 1 */
    assert_int_equal(aitk_colsum_at(&g, 2, 1, 2, 1), 11);
    assert_float_equal(aitk_colsum_finish(&g, p, 2, 0, 0), 0.0f, 0.0f);
    assert_float_equal(aitk_colsum_finish(&g, p, 2, 0, 1), 18.0f, 0.0f);
    assert_float_equal(aitk_colsum_finish(&g, p, 2, 1, 0), 9.0f, 0.0f);
    assert_float_equal(aitk_colsum_finish(&g, p, 2, 1, 1), 12.0f, 0.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_fills_the_gpu),
        cmocka_unit_test(test_grid_edges),
        cmocka_unit_test(test_finish_adds_chunks_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
