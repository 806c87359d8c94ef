/* Two-stage column sums: the token-reduced gradients (rmsnorm's dweight,
 * adaLN's dshift/dscale, the gated residual's dgate) sum `rows` rows of a
 * (rows, cols) matrix per column, per group (a group is one sample for the
 * per-sample sums, or the whole batch).
 *
 * One thread per column over all rows gives cols/256 blocks, 12 for FLUX's
 * 3072 channels, on a GPU with 132 SMs: most of the GPU idles while each
 * thread walks thousands of rows. So the rows are cut into `chunks` equal
 * row ranges; stage 1 runs a block per (column block, chunk, group) and
 * writes one fp32 partial per (group, chunk, column); stage 2 sums each
 * column's partials over the chunks. Both stages add in a fixed order (rows
 * in order inside a chunk, chunks in order), so a result is the same on
 * every run and every GPU with the same SM count. The grid is sized to give
 * at least two blocks per SM when there are rows enough. */
#ifndef AITK_KERNELS_MATH_COLSUM_H
#define AITK_KERNELS_MATH_COLSUM_H

#include <stddef.h>

#include "kernels/math/hd.h"

/* The most chunks a sum is cut into: bounds the partials' memory
 * (chunks x cols x groups floats) when there are few columns. */
#define AITK_COLSUM_MAX_CHUNKS 1024

typedef struct aitk_colsum_grid {
    int col_blocks;     /* blocks across the columns, `threads` columns each */
    int chunks;         /* row ranges; none is empty */
    int rows_per_chunk; /* every range but the last has exactly this many */
} aitk_colsum_grid;

/* The grid for `groups` independent sums of `rows` x `cols`, `threads`
 * columns a block, on a GPU with `sm_count` SMs. All sizes positive. */
AITK_HD static inline aitk_colsum_grid aitk_colsum_grid_for(int rows, int cols, int groups,
                                                            int threads, int sm_count)
{
    aitk_colsum_grid g;
    g.col_blocks = (cols + threads - 1) / threads;
    long long per_chunk = (long long)g.col_blocks * groups; /* blocks one chunk adds */
    long long want = 2LL * sm_count;
    long long chunks = (want + per_chunk - 1) / per_chunk;
    if (chunks > AITK_COLSUM_MAX_CHUNKS)
        chunks = AITK_COLSUM_MAX_CHUNKS;
    if (chunks > rows)
        chunks = rows;
    if (chunks < 1)
        chunks = 1;
    g.rows_per_chunk = (int)((rows + chunks - 1) / chunks);
    /* Rounding rows_per_chunk up can leave trailing chunks empty: drop them. */
    g.chunks = (rows + g.rows_per_chunk - 1) / g.rows_per_chunk;
    return g;
}

/* Rows [*begin, *end) of chunk k. */
AITK_HD static inline void aitk_colsum_rows(const aitk_colsum_grid *g, int rows, int k,
                                            int *begin, int *end)
{
    *begin = k * g->rows_per_chunk;
    *end = *begin + g->rows_per_chunk < rows ? *begin + g->rows_per_chunk : rows;
}

/* Index of the partial of (group, chunk k, column j). */
AITK_HD static inline size_t aitk_colsum_at(const aitk_colsum_grid *g, int cols, size_t group,
                                            int k, int j)
{
    return (group * (size_t)g->chunks + (size_t)k) * (size_t)cols + (size_t)j;
}

/* Stage 2: column j of `group`, its chunks' partials added in order. */
AITK_HD static inline float aitk_colsum_finish(const aitk_colsum_grid *g, const float *partials,
                                               int cols, size_t group, int j)
{
    float s = 0.0f;
    for (int k = 0; k < g->chunks; k++)
        s += partials[aitk_colsum_at(g, cols, group, k, j)];
    return s;
}

#endif
