/* The tiled attention backward of the plain kernels
 * (kernels/cuda/attention_plain.cu), FlashAttention-2 style, shared with
 * the CPU tests: tile geometry and per-entry arithmetic.
 *
 * The sequence is cut into tiles of `tile` rows (the last may be short).
 * Three passes, none with atomics:
 *   1. di = dout . out per query row (rowsum(dO * O)).
 *   2. One block per (key tile, kv head): dK and dV of its keys are summed
 *      in fp32 over every query tile of every query head of the GQA group,
 *      then stored once. Per pair of tiles, from the saved lse:
 *        P = exp(scale Q K^T - lse), dP = dO V^T, dS = P (dP - di),
 *        dV += P^T dO, dK += scale dS^T Q.
 *   3. One block per (query tile, query head): dQ = scale sum dS K over
 *      the key tiles, recomputing P and dS.
 * Pass 3 recomputes what pass 2 computed (14 T^2 D flops per head instead
 * of 10): the price of giving each output element one owner. Rows and
 * columns past the sequence end are masked: P = dS = 0. Their zero-padded
 * q, dout, k and v would add nothing to any sum anyway; the mask saves the
 * dot products and keeps a padded row's exp(0 - lse) out of P. */
#ifndef AITK_KERNELS_MATH_ATTENTION_TILE_H
#define AITK_KERNELS_MATH_ATTENTION_TILE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/math/attention.h"
#include "kernels/math/bf16.h"
#include "kernels/math/hd.h"

/* Tiles covering t rows. */
AITK_HD static inline int aitk_attn_tile_count(int t, int tile)
{
    return (t + tile - 1) / tile;
}

/* Rows in tile k: `tile`, or what is left for the last. */
AITK_HD static inline int aitk_attn_tile_rows(int t, int tile, int k)
{
    int left = t - k * tile;
    return left < tile ? left : tile;
}

/* Row stride (elements) of the bf16 tiles in shared memory. With d a
 * multiple of 64 (FLUX's 128) every row would start in the same bank, and
 * the score loop, whose 32 threads read 32 different k rows at one x,
 * would serialize 32 ways; two more elements move each row one 4-byte bank
 * on. */
AITK_HD static inline int aitk_attn_tile_ld(int d)
{
    return d + 2;
}

/* Shared memory of one block of passes 2 and 3 (bytes): four bf16 tiles
 * (q, dout, k, v: tile rows of aitk_attn_tile_ld(d)), two fp32
 * accumulators (tile x d), P and dS (tile x tile fp32), lse and di (tile
 * floats each). */
AITK_HD static inline size_t aitk_attn_bwd_smem(int tile, int d)
{
    size_t tl = (size_t)tile * (size_t)aitk_attn_tile_ld(d), td = (size_t)tile * (size_t)d;
    return 4 * tl * sizeof(uint16_t) + 2 * td * sizeof(float) +
           2 * (size_t)tile * (size_t)tile * sizeof(float) + 2 * (size_t)tile * sizeof(float);
}

/* bf16 . bf16, d terms in fp32, in order. */
AITK_HD static inline float aitk_attn_dot_bf16(const uint16_t *a, const uint16_t *b, int d)
{
    float s = 0.0f;
    for (int x = 0; x < d; x++)
        s += aitk_bf16_decode(a[x]) * aitk_bf16_decode(b[x]);
    return s;
}

/* Entry (r, c) of a tile pair: *p and *ds from the row's q, dout, lse, di
 * and the column's k, v (d elements each); masked to 0 when the
 * row or the column lies past the sequence end. */
AITK_HD static inline void aitk_attn_tile_entry(float *p, float *ds, const uint16_t *q_row,
                                                const uint16_t *do_row, const uint16_t *k_row,
                                                const uint16_t *v_row, int d, float scale,
                                                float lse, float di, int inside)
{
    if (!inside) {
        *p = 0.0f;
        *ds = 0.0f;
        return;
    }
    float pv = aitk_attn_prob(scale * aitk_attn_dot_bf16(q_row, k_row, d), lse);
    *p = pv;
    *ds = aitk_attn_dscore(pv, aitk_attn_dot_bf16(do_row, v_row, d), di);
}

/* Pass 2, element (c, x) of the key tile: adds sum over the query tile's
 * rows r of P[r][c] dout[r][x] to *dv and scale sum dS[r][c] q[r][x] to
 * *dk. p and ds are tile x tile (row r, column c); q and dout have rows
 * ld elements apart. */
AITK_HD static inline void aitk_attn_tile_kv(float *dv, float *dk, const float *p,
                                             const float *ds, const uint16_t *q,
                                             const uint16_t *dout, int rows, int tile, int ld,
                                             int c, int x, float scale)
{
    float sv = 0.0f, sk = 0.0f;
    for (int r = 0; r < rows; r++) {
        size_t rc = (size_t)r * tile + c, rx = (size_t)r * ld + x;
        sv += p[rc] * aitk_bf16_decode(dout[rx]);
        sk += ds[rc] * aitk_bf16_decode(q[rx]);
    }
    *dv += sv;
    *dk += scale * sk;
}

/* Pass 3, element (r, x) of the query tile: scale sum over the key tile's
 * columns c of dS[r][c] k[c][x], k's rows ld elements apart. */
AITK_HD static inline float aitk_attn_tile_q(const float *ds, const uint16_t *k, int cols,
                                             int tile, int ld, int r, int x, float scale)
{
    float s = 0.0f;
    for (int c = 0; c < cols; c++)
        s += ds[(size_t)r * tile + c] * aitk_bf16_decode(k[(size_t)c * ld + x]);
    return scale * s;
}

#endif
