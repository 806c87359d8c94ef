/* The plain attention kernels' algorithm (kernels/math/attention.h and
 * attention_tile.h, as attention_plain.cu runs it: the forward one query
 * row at a time, the backward in tiles with ragged last tiles, fp32 sums,
 * bf16 loads and stores, dk/dv/dq summed in fp32 then stored once)
 * compared with the CPU reference (kernels/cpu/attention.c), with and without GQA, at
 * FLUX's head_dim 128 and OmniGen2's 120. */
#include "mt.h"

#include "kernels/cpu/cpu.h"
#include "kernels/math/attention.h"
#include "kernels/math/attention_tile.h"

typedef struct tens {
    float *f;    /* values (bf16-representable) */
    uint16_t *h; /* the same values as bf16 storage */
} tens;

static tens draw(size_t n, uint64_t key, float scale)
{
    tens t = {mt_draw_bf16(n, key, scale, 0.0f), calloc(n, sizeof(uint16_t))};
    assert_non_null(t.h);
    for (size_t i = 0; i < n; i++)
        t.h[i] = aitk_bf16_encode(t.f[i]);
    return t;
}

static void forward_as_gpu(float *out, float *lse, const tens *q, const tens *k, const tens *v,
                           int b, int t, int hq, int hkv, int d, float scale)
{
    float *qs = mt_alloc(d), *p = mt_alloc(t);
    for (int bi = 0; bi < b; bi++)
        for (int h = 0; h < hq; h++)
            for (int i = 0; i < t; i++) {
                int g = aitk_attn_kv_head(h, hq, hkv);
                size_t qo = aitk_attn_offset(bi, i, h, t, hq, d);
                for (int x = 0; x < d; x++)
                    qs[x] = aitk_bf16_decode(q->h[qo + x]);
                float mx = -INFINITY, l = 0.0f;
                for (int j = 0; j < t; j++) {
                    size_t ko = aitk_attn_offset(bi, j, g, t, hkv, d);
                    p[j] = scale * aitk_attn_dot(qs, k->h + ko, d);
                    mx = p[j] > mx ? p[j] : mx;
                }
                for (int j = 0; j < t; j++)
                    l += aitk_attn_prob(p[j], mx);
                float row_lse = aitk_attn_lse(mx, l);
                for (int j = 0; j < t; j++)
                    p[j] = aitk_attn_prob(p[j], row_lse);
                for (int x = 0; x < d; x++) {
                    float o = 0.0f;
                    for (int j = 0; j < t; j++)
                        o += p[j] *
                             aitk_bf16_decode(v->h[aitk_attn_offset(bi, j, g, t, hkv, d) + x]);
                    out[qo + x] = aitk_bf16_rounded(o);
                }
                lse[((size_t)bi * hq + h) * t + i] = row_lse;
            }
    free(qs), free(p);
}

/* The tiled backward as attention_plain.cu runs it (attention_tile.h):
 * pass 1 di, pass 2 dK/dV per key tile over the query tiles of the GQA
 * group, pass 3 dQ per query tile over the key tiles, each tile a
 * bf16 copy padded with zero rows, accumulators fp32, one bf16 store. */
typedef struct tile_bufs {
    uint16_t *q, *dout, *k, *v;
    float *acc0, *acc1, *p, *ds, *lse, *di;
} tile_bufs;

static void load_rows(uint16_t *dst, const uint16_t *src, int bi, int first, int rows, int h,
                      int t, int heads, int d, int tile)
{
    for (int r = 0; r < tile; r++)
        for (int x = 0; x < d; x++)
            dst[(size_t)r * aitk_attn_tile_ld(d) + x] =
                r < rows ? src[aitk_attn_offset(bi, first + r, h, t, heads, d) + x] : 0;
}

static void load_query_tile(tile_bufs *m, const tens *q, const tens *dout, const float *lse,
                            const float *di, int bi, int h, int qt, int t, int hq, int d,
                            int tile)
{
    int first = qt * tile, rows = aitk_attn_tile_rows(t, tile, qt);
    load_rows(m->q, q->h, bi, first, rows, h, t, hq, d, tile);
    load_rows(m->dout, dout->h, bi, first, rows, h, t, hq, d, tile);
    for (int r = 0; r < tile; r++) {
        size_t at = ((size_t)bi * hq + h) * t + first + r;
        m->lse[r] = r < rows ? lse[at] : 0.0f;
        m->di[r] = r < rows ? di[at] : 0.0f;
    }
}

static void tile_scores(tile_bufs *m, int d, float scale, int tile, int qrows, int kcols)
{
    for (int r = 0; r < tile; r++)
        for (int c = 0; c < tile; c++) {
            size_t e = (size_t)r * tile + c, ro = (size_t)r * aitk_attn_tile_ld(d);
            size_t co = (size_t)c * aitk_attn_tile_ld(d);
            aitk_attn_tile_entry(&m->p[e], &m->ds[e], m->q + ro, m->dout + ro, m->k + co,
                                 m->v + co, d, scale, m->lse[r], m->di[r],
                                 r < qrows && c < kcols);
        }
}

static void backward_tiled(float *dq, float *dk, float *dv, const tens *dout, const tens *q,
                           const tens *k, const tens *v, const tens *out, const float *lse,
                           int b, int t, int hq, int hkv, int d, float scale, int tile)
{
    int ld = aitk_attn_tile_ld(d);
    size_t td = (size_t)tile * d, tl = (size_t)tile * ld, rows_all = (size_t)b * hq * t;
    tile_bufs m;
    uint16_t *bf = calloc(4 * tl, sizeof *bf);
    assert_non_null(bf);
    m.q = bf, m.dout = bf + tl, m.k = bf + 2 * tl, m.v = bf + 3 * tl;
    m.acc0 = mt_alloc(td), m.acc1 = mt_alloc(td);
    m.p = mt_alloc((size_t)tile * tile), m.ds = mt_alloc((size_t)tile * tile);
    m.lse = mt_alloc(tile), m.di = mt_alloc(tile);
    float *di = mt_alloc(rows_all);
    for (size_t idx = 0; idx < rows_all; idx++) { /* pass 1, lse's layout */
        int i = (int)(idx % t), h = (int)(idx / t % hq), bi = (int)(idx / t / hq);
        size_t o = aitk_attn_offset(bi, i, h, t, hq, d);
        di[idx] = aitk_attn_dot_bf16(dout->h + o, out->h + o, d);
    }
    int tiles = aitk_attn_tile_count(t, tile), group = hq / hkv;
    for (int bi = 0; bi < b; bi++)
        for (int g = 0; g < hkv; g++)
            for (int kt = 0; kt < tiles; kt++) { /* pass 2: one block */
                int kcols = aitk_attn_tile_rows(t, tile, kt);
                load_rows(m.k, k->h, bi, kt * tile, kcols, g, t, hkv, d, tile);
                load_rows(m.v, v->h, bi, kt * tile, kcols, g, t, hkv, d, tile);
                for (size_t e = 0; e < td; e++)
                    m.acc0[e] = m.acc1[e] = 0.0f;
                for (int h = g * group; h < (g + 1) * group; h++)
                    for (int qt = 0; qt < tiles; qt++) {
                        load_query_tile(&m, q, dout, lse, di, bi, h, qt, t, hq, d, tile);
                        int qrows = aitk_attn_tile_rows(t, tile, qt);
                        tile_scores(&m, d, scale, tile, qrows, kcols);
                        for (size_t e = 0; e < td; e++)
                            aitk_attn_tile_kv(&m.acc1[e], &m.acc0[e], m.p, m.ds, m.q, m.dout,
                                              qrows, tile, ld, (int)(e / d), (int)(e % d), scale);
                    }
                for (size_t e = 0; e < (size_t)kcols * d; e++) {
                    size_t o = aitk_attn_offset(bi, (size_t)kt * tile + e / d, g, t, hkv, d);
                    dk[o + e % d] = aitk_bf16_rounded(m.acc0[e]);
                    dv[o + e % d] = aitk_bf16_rounded(m.acc1[e]);
                }
            }
    for (int bi = 0; bi < b; bi++)
        for (int h = 0; h < hq; h++)
            for (int qt = 0; qt < tiles; qt++) { /* pass 3: one block */
                int qrows = aitk_attn_tile_rows(t, tile, qt), g = aitk_attn_kv_head(h, hq, hkv);
                load_query_tile(&m, q, dout, lse, di, bi, h, qt, t, hq, d, tile);
                for (size_t e = 0; e < td; e++)
                    m.acc0[e] = 0.0f;
                for (int kt = 0; kt < tiles; kt++) {
                    int kcols = aitk_attn_tile_rows(t, tile, kt);
                    load_rows(m.k, k->h, bi, kt * tile, kcols, g, t, hkv, d, tile);
                    load_rows(m.v, v->h, bi, kt * tile, kcols, g, t, hkv, d, tile);
                    tile_scores(&m, d, scale, tile, qrows, kcols);
                    for (size_t e = 0; e < td; e++)
                        m.acc0[e] += aitk_attn_tile_q(m.ds, m.k, kcols, tile, ld, (int)(e / d),
                                                      (int)(e % d), scale);
                }
                for (size_t e = 0; e < (size_t)qrows * d; e++)
                    dq[aitk_attn_offset(bi, (size_t)qt * tile + e / d, h, t, hq, d) + e % d] =
                        aitk_bf16_rounded(m.acc0[e]);
            }
    free(bf), free(m.acc0), free(m.acc1), free(m.p), free(m.ds), free(m.lse), free(m.di);
    free(di);
}

static void attention_case(int b, int t, int hq, int hkv, int d, int tile)
{
    float scale = 1.0f / sqrtf((float)d);
    size_t nq = (size_t)b * t * hq * d, nk = (size_t)b * t * hkv * d, nl = (size_t)b * hq * t;
    /* Scores of spread ~2 after scaling: peaked rows, not uniform ones. */
    tens q = draw(nq, 501, 2.0f), k = draw(nk, 502, 2.0f), v = draw(nk, 503, 1.0f);
    tens go = draw(nq, 504, 1.0f);
    float *o = mt_alloc(nq), *l = mt_alloc(nl), *o_ref = mt_alloc(nq), *l_ref = mt_alloc(nl);
    forward_as_gpu(o, l, &q, &k, &v, b, t, hq, hkv, d, scale);
    assert_int_equal(aitk_cpu_attention_forward(o_ref, l_ref, q.f, k.f, v.f, b, t, hq, hkv, d,
                                                scale),
                     AITK_OK);
    /* lse: fp32 dot products and sums on both sides, ~1e-6 relative. */
    mt_close("attention lse", l, l_ref, nl, 1e-5f, 1e-5f);
    /* out: one bf16 store of a weighted mean of values in [-1, 1]. */
    mt_close("attention out", o, o_ref, nq, 4e-3f, 1e-4f);
    /* Backward from this emulation's own bf16 out and lse, on both sides. */
    tens out = {o, calloc(nq, sizeof(uint16_t))};
    assert_non_null(out.h);
    for (size_t i = 0; i < nq; i++)
        out.h[i] = aitk_bf16_encode(o[i]);
    float *dq = mt_alloc(nq), *dk = mt_alloc(nk), *dv = mt_alloc(nk);
    float *dq_ref = mt_alloc(nq), *dk_ref = mt_alloc(nk), *dv_ref = mt_alloc(nk);
    backward_tiled(dq, dk, dv, &go, &q, &k, &v, &out, l, b, t, hq, hkv, d, scale, tile);
    assert_int_equal(aitk_cpu_attention_backward(dq_ref, dk_ref, dv_ref, go.f, q.f, k.f, v.f, o,
                                                 l, b, t, hq, hkv, d, scale),
                     AITK_OK);
    /* One bf16 store each; dS = P (dP - di) cancels, so the floor is a
     * small fraction of the largest gradient. */
    mt_close("attention dq", dq, dq_ref, nq, 4e-3f, 2e-3f * 1.0f);
    mt_close("attention dk", dk, dk_ref, nk, 4e-3f, 2e-3f * 1.0f);
    mt_close("attention dv", dv, dv_ref, nk, 4e-3f, 2e-3f * 1.0f);
    free(q.f), free(q.h), free(k.f), free(k.h), free(v.f), free(v.h), free(go.f), free(go.h);
    free(o), free(l), free(o_ref), free(l_ref), free(out.h), free(dq), free(dk), free(dv),
        free(dq_ref), free(dk_ref), free(dv_ref);
}

static void test_attention_flux_heads(void **state)
{
    (void)state;
    attention_case(2, 96, 4, 4, 128, 32); /* three whole tiles */
    attention_case(1, 100, 2, 2, 128, 16); /* six whole tiles and a 4-row one */
}

static void test_attention_gqa_head_dim_120(void **state)
{
    (void)state;
    attention_case(1, 160, 6, 2, 120, 64); /* two whole tiles and a 32-row one */
}

static void test_attention_indexing_by_hand(void **state)
{
    (void)state;
    /* (B,T,H,D) = (2,3,4,5): sample 1, row 2, head 3 starts at
     * ((1*3 + 2)*4 + 3)*5 = 115. */
    assert_int_equal(aitk_attn_offset(1, 2, 3, 3, 4, 5), 115);
    /* 24 query heads on 8 kv heads: groups of 3. */
    assert_int_equal(aitk_attn_kv_head(0, 24, 8), 0);
    assert_int_equal(aitk_attn_kv_head(2, 24, 8), 0);
    assert_int_equal(aitk_attn_kv_head(3, 24, 8), 1);
    assert_int_equal(aitk_attn_kv_head(23, 24, 8), 7);
    /* lse of two equal scores 0: log 2; their probabilities 1/2. */
    assert_float_equal(aitk_attn_lse(0.0f, 2.0f), 0.69314718f, 1e-7f);
    assert_float_equal(aitk_attn_prob(0.0f, 0.69314718f), 0.5f, 1e-7f);
    assert_float_equal(aitk_attn_dscore(0.5f, 3.0f, 1.0f), 1.0f, 0.0f);
}

static void test_tile_geometry(void **state)
{
    (void)state;
    /* FLUX at 1024 px: 4096 + 512 tokens in tiles of 32 is 144 tiles; of
     * 64, 72; OmniGen2-like 4100 tokens leave a 4-row last tile. */
    assert_int_equal(aitk_attn_tile_count(4608, 32), 144);
    assert_int_equal(aitk_attn_tile_count(4608, 64), 72);
    assert_int_equal(aitk_attn_tile_rows(4608, 32, 143), 32);
    assert_int_equal(aitk_attn_tile_count(4100, 32), 129);
    assert_int_equal(aitk_attn_tile_rows(4100, 32, 127), 32);
    assert_int_equal(aitk_attn_tile_rows(4100, 32, 128), 4);
    assert_int_equal(aitk_attn_tile_count(1, 64), 1);
    assert_int_equal(aitk_attn_tile_rows(1, 64, 0), 1);
    /* Shared memory: 4 bf16 tiles of rows padded to d + 2, 2 fp32
     * accumulators of tile x d, P and dS of tile x tile, lse and di: at
     * 32 x 128, 32.5 + 32 + 8 + 0.25 KiB. */
    assert_int_equal(aitk_attn_tile_ld(128), 130);
    assert_int_equal(aitk_attn_bwd_smem(32, 128), 4 * 32 * 130 * 2 + 2 * 32 * 128 * 4 +
                                                      2 * 32 * 32 * 4 + 2 * 32 * 4);
    assert_int_equal(aitk_attn_bwd_smem(32, 128), 74496);
    assert_int_equal(aitk_attn_bwd_smem(8, 256), 33472);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_flux_heads),
        cmocka_unit_test(test_attention_gqa_head_dim_120),
        cmocka_unit_test(test_attention_indexing_by_hand),
        cmocka_unit_test(test_tile_geometry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
