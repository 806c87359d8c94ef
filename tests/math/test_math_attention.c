/* The plain attention kernels' algorithm (kernels/math/attention.h, as
 * attention_plain.cu runs it: one query row at a time, fp32 sums, bf16
 * loads and stores, dk/dv summed in fp32 then stored once) compared with
 * the CPU reference (kernels/cpu/attention.c), with and without GQA, at
 * FLUX's head_dim 128 and OmniGen2's 120. */
#include "mt.h"

#include "kernels/cpu/cpu.h"
#include "kernels/math/attention.h"

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

static void backward_as_gpu(float *dq, float *dk, float *dv, const tens *dout, const tens *q,
                            const tens *k, const tens *v, const tens *out, const float *lse,
                            int b, int t, int hq, int hkv, int d, float scale)
{
    size_t nk = (size_t)b * t * hkv * d;
    float *qs = mt_alloc(d), *dos = mt_alloc(d), *p = mt_alloc(t), *ds = mt_alloc(t);
    float *dk32 = mt_alloc(nk), *dv32 = mt_alloc(nk);
    for (int bi = 0; bi < b; bi++)
        for (int h = 0; h < hq; h++)
            for (int i = 0; i < t; i++) {
                int g = aitk_attn_kv_head(h, hq, hkv);
                size_t qo = aitk_attn_offset(bi, i, h, t, hq, d);
                float di = 0.0f;
                for (int x = 0; x < d; x++) {
                    qs[x] = aitk_bf16_decode(q->h[qo + x]);
                    dos[x] = aitk_bf16_decode(dout->h[qo + x]);
                    di += dos[x] * aitk_bf16_decode(out->h[qo + x]);
                }
                float li = lse[((size_t)bi * hq + h) * t + i];
                for (int j = 0; j < t; j++) {
                    size_t ko = aitk_attn_offset(bi, j, g, t, hkv, d);
                    p[j] = aitk_attn_prob(scale * aitk_attn_dot(qs, k->h + ko, d), li);
                    ds[j] = aitk_attn_dscore(p[j], aitk_attn_dot(dos, v->h + ko, d), di);
                }
                for (int x = 0; x < d; x++) {
                    float acc = 0.0f;
                    for (int j = 0; j < t; j++)
                        acc += ds[j] *
                               aitk_bf16_decode(k->h[aitk_attn_offset(bi, j, g, t, hkv, d) + x]);
                    dq[qo + x] = aitk_bf16_rounded(scale * acc);
                }
                for (int j = 0; j < t; j++)
                    for (int x = 0; x < d; x++) {
                        size_t ko = aitk_attn_offset(bi, j, g, t, hkv, d) + x;
                        dk32[ko] += scale * ds[j] * qs[x];
                        dv32[ko] += p[j] * dos[x];
                    }
            }
    for (size_t e = 0; e < nk; e++) {
        dk[e] = aitk_bf16_rounded(dk32[e]);
        dv[e] = aitk_bf16_rounded(dv32[e]);
    }
    free(qs), free(dos), free(p), free(ds), free(dk32), free(dv32);
}

static void attention_case(int b, int t, int hq, int hkv, int d)
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
    backward_as_gpu(dq, dk, dv, &go, &q, &k, &v, &out, l, b, t, hq, hkv, d, scale);
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
    attention_case(2, 96, 4, 4, 128);
}

static void test_attention_gqa_head_dim_120(void **state)
{
    (void)state;
    attention_case(1, 160, 6, 2, 120);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_flux_heads),
        cmocka_unit_test(test_attention_gqa_head_dim_120),
        cmocka_unit_test(test_attention_indexing_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
