/* The math attention path (kernels/cuda/attention_math.cu) run on the CPU:
 * its workspace plan, its head-major copies with padding and repeated kv
 * heads, and its algorithm with every bf16 rounding the GPU makes (P and
 * dS stored as bf16, GEMMs summed in fp32, group gradients summed in fp32),
 * held against the CPU reference at the GPU test's tolerances. The GEMMs
 * here are plain loops, so what this proves is the composition; the GPU
 * test (tests/gpu, AITK_ATTENTION=math) runs the same composition through
 * cuBLASLt. */
#include "mt.h"

#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cuda/attention_math_plan.h"
#include "kernels/math/attention_math.h"

static void test_plan_by_hand(void **state)
{
    (void)state;
    aitk_attn_math_plan p;
    /* FLUX at 1024 px: 4096 image + 512 text tokens, 24 heads of 128. */
    assert_null(aitk_attn_math_plan_make(&p, 1, 4608, 24, 24, 128, true, AITK_ATTN_MATH_BUDGET));
    assert_int_equal(p.tp, 4608);
    assert_int_equal(p.heads, 24);
    /* 256 MiB / (4608^2 * (4 + 2) bytes = 127,401,984) = 2 heads a group. */
    assert_int_equal(p.group, 2);
    size_t tensor = 4608u * 128u * 24u * 2u; /* 28,311,552 bytes, 256-aligned */
    assert_int_equal(p.q, 0);
    assert_int_equal(p.dv, 6 * tensor);
    assert_int_equal(p.s, 7 * tensor);
    assert_int_equal(p.p, 7 * tensor + 2u * 4608u * 4608u * 4u);
    assert_int_equal(p.total, p.p + 2u * 4608u * 4608u * 2u);
    /* Padding to a multiple of 8, a group of at least one head and at most
     * all of them, offsets 256-byte aligned. */
    assert_null(aitk_attn_math_plan_make(&p, 2, 300, 12, 4, 120, false, 1));
    assert_int_equal(p.tp, 304);
    assert_int_equal(p.group, 1);
    assert_int_equal(p.o % 256, 0);
    assert_int_equal(p.dq, 0); /* forward: no gradients */
    assert_null(aitk_attn_math_plan_make(&p, 2, 300, 12, 4, 120, false, (size_t)1 << 40));
    assert_int_equal(p.group, 24);
    assert_non_null(aitk_attn_math_plan_make(&p, 1, 200, 4, 4, 100, true, 1 << 20));
    assert_non_null(aitk_attn_math_plan_make(&p, 1, 200, 6, 4, 128, true, 1 << 20));
}

/* C[m][n] = sum_k op(A) op(B) for one head, fp32 sums as cuBLASLt's
 * CUBLAS_COMPUTE_32F; out_bf16 rounds the stored result as a bf16 C. */
static void gemm(float *c, const float *a, const float *b, int m, int n, int k, bool ta, bool tb,
                 bool out_bf16)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int x = 0; x < k; x++)
                s += (ta ? a[(size_t)x * m + i] : a[(size_t)i * k + x]) *
                     (tb ? b[(size_t)j * k + x] : b[(size_t)x * n + j]);
            c[(size_t)i * n + j] = out_bf16 ? aitk_bf16_rounded(s) : s;
        }
}

static float *to_heads(const float *src, const aitk_attn_math_plan *p, int t, int hq, int hs,
                       int d)
{
    size_t n = (size_t)p->heads * p->head_elems, at;
    float *dst = mt_alloc(n);
    for (size_t e = 0; e < n; e++)
        dst[e] = aitk_attn_math_src(e, t, p->tp, hq, hs, d, &at) ? src[at] : 0.0f;
    return dst;
}

static void from_heads(float *dst, const float *src, const aitk_attn_math_plan *p, int b, int t,
                       int hq, int hs, int d)
{
    for (size_t e = 0; e < (size_t)b * t * hs * d; e++) {
        float sum = 0.0f;
        for (int j = 0; j < hq / hs; j++)
            sum += src[aitk_attn_math_back(e, t, p->tp, hq, hs, d, j)];
        dst[e] = aitk_bf16_rounded(sum);
    }
}

static void math_case(int b, int t, int hq, int hkv, int d, size_t budget)
{
    float scale = 1.0f / sqrtf((float)d);
    size_t nq = (size_t)b * t * hq * d, nk = (size_t)b * t * hkv * d, nl = (size_t)b * hq * t;
    float *q = mt_draw_bf16(nq, 60, 2.0f, 0.0f), *k = mt_draw_bf16(nk, 61, 2.0f, 0.0f);
    float *v = mt_draw_bf16(nk, 62, 1.0f, 0.0f), *go = mt_draw_bf16(nq, 63, 1.0f, 0.0f);
    aitk_attn_math_plan p;
    assert_null(aitk_attn_math_plan_make(&p, b, t, hq, hkv, d, true, budget));
    int tp = p.tp;
    size_t he = p.head_elems, ss = (size_t)tp * tp;
    float *qh = to_heads(q, &p, t, hq, hq, d), *kh = to_heads(k, &p, t, hq, hkv, d);
    float *vh = to_heads(v, &p, t, hq, hkv, d), *doh = to_heads(go, &p, t, hq, hq, d);
    float *oh = mt_alloc(p.heads * he), *dqh = mt_alloc(p.heads * he);
    float *dkh = mt_alloc(p.heads * he), *dvh = mt_alloc(p.heads * he);
    float *s = mt_alloc(p.group * ss), *pb = mt_alloc(p.group * ss), *lse = mt_alloc(nl);
    /* Forward, a group of heads at a time as the GPU runs it. */
    for (int h0 = 0; h0 < p.heads; h0 += p.group) {
        int n = p.heads - h0 < p.group ? p.heads - h0 : p.group;
        for (int h = 0; h < n; h++) {
            size_t o = (size_t)(h0 + h) * he;
            float *sh = s + h * ss, *ph = pb + h * ss;
            gemm(sh, qh + o, kh + o, tp, tp, d, false, true, false);
            for (int i = 0; i < tp; i++) {
                float mx = -INFINITY, l = 0.0f, row_lse = 0.0f;
                if (i < t) {
                    for (int j = 0; j < t; j++)
                        mx = fmaxf(mx, scale * sh[(size_t)i * tp + j]);
                    for (int j = 0; j < t; j++)
                        l += aitk_attn_prob(scale * sh[(size_t)i * tp + j], mx);
                    row_lse = aitk_attn_lse(mx, l);
                    lse[(size_t)(h0 + h) * t + i] = row_lse;
                }
                for (int j = 0; j < tp; j++)
                    ph[(size_t)i * tp + j] = aitk_bf16_rounded(
                        aitk_attn_math_prob(sh[(size_t)i * tp + j], row_lse, i, j, t, scale));
            }
            gemm(oh + o, ph, vh + o, tp, d, tp, false, false, true);
        }
    }
    float *out = mt_alloc(nq), *o_ref = mt_alloc(nq), *l_ref = mt_alloc(nl);
    from_heads(out, oh, &p, b, t, hq, hq, d);
    assert_int_equal(aitk_cpu_attention_forward(o_ref, l_ref, q, k, v, b, t, hq, hkv, d, scale),
                     AITK_OK);
    mt_close("math lse", lse, l_ref, nl, 1e-4f, 1e-4f);
    mt_close("math out", out, o_ref, nq, 1.6e-2f, 4e-3f);
    /* Backward from this forward's out and lse, as a step would. */
    float *di = mt_alloc(nl);
    for (size_t r = 0; r < nl; r++) { /* r = (bi * hq + h) * t + i */
        size_t i = r % t, h = r / t % hq, bi = r / t / hq;
        for (int x = 0; x < d; x++) {
            size_t e = aitk_attn_offset(bi, i, (int)h, t, hq, d) + x;
            di[r] += go[e] * out[e];
        }
    }
    for (int h0 = 0; h0 < p.heads; h0 += p.group) {
        int n = p.heads - h0 < p.group ? p.heads - h0 : p.group;
        for (int h = 0; h < n; h++) {
            size_t o = (size_t)(h0 + h) * he, e;
            float *sh = s + h * ss, *ph = pb + h * ss;
            gemm(sh, qh + o, kh + o, tp, tp, d, false, true, false);
            for (e = 0; e < ss; e++) {
                int i = (int)(e / tp), j = (int)(e % tp);
                float l = lse[(size_t)(h0 + h) * t + (i < t ? i : 0)];
                ph[e] = aitk_bf16_rounded(aitk_attn_math_prob(sh[e], l, i, j, t, scale));
            }
            gemm(dvh + o, ph, doh + o, tp, d, tp, true, false, true);
            gemm(sh, doh + o, vh + o, tp, tp, d, false, true, false);
            for (e = 0; e < ss; e++) {
                int i = (int)(e / tp), j = (int)(e % tp);
                float dd = di[(size_t)(h0 + h) * t + (i < t ? i : 0)];
                ph[e] = aitk_bf16_rounded(aitk_attn_math_dscore(ph[e], sh[e], dd, i, j, t, scale));
            }
            gemm(dqh + o, ph, kh + o, tp, d, tp, false, false, true);
            gemm(dkh + o, ph, qh + o, tp, d, tp, true, false, true);
        }
    }
    float *dq = mt_alloc(nq), *dk = mt_alloc(nk), *dv = mt_alloc(nk);
    float *dq_ref = mt_alloc(nq), *dk_ref = mt_alloc(nk), *dv_ref = mt_alloc(nk);
    from_heads(dq, dqh, &p, b, t, hq, hq, d);
    from_heads(dk, dkh, &p, b, t, hq, hkv, d);
    from_heads(dv, dvh, &p, b, t, hq, hkv, d);
    assert_int_equal(aitk_cpu_attention_backward(dq_ref, dk_ref, dv_ref, go, q, k, v, out, lse, b,
                                                 t, hq, hkv, d, scale),
                     AITK_OK);
    mt_close("math dq", dq, dq_ref, nq, 2e-2f, 8e-3f);
    mt_close("math dk", dk, dk_ref, nk, 2e-2f, 8e-3f);
    mt_close("math dv", dv, dv_ref, nk, 2e-2f, 8e-3f);
    float *all[] = {q, k, v, go, qh, kh, vh, doh, oh, dqh, dkh, dvh, s, pb, lse, out, o_ref,
                    l_ref, di, dq, dk, dv, dq_ref, dk_ref, dv_ref};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
}

/* FLUX's head_dim with a sequence that needs padding (T = 77 -> 80) and
 * groups of 2 heads with a ragged last one (5 heads). */
static void test_flux_heads_padded(void **state)
{
    (void)state;
    math_case(1, 77, 5, 5, 128, 2 * 80 * 80 * 6);
}

/* OmniGen2's head_dim 120 with GQA 3:1 over two samples, one head a group,
 * then all heads in one group. */
static void test_gqa(void **state)
{
    (void)state;
    math_case(2, 45, 6, 2, 120, 1);
    math_case(2, 64, 6, 2, 120, AITK_ATTN_MATH_BUDGET);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_by_hand),
        cmocka_unit_test(test_flux_heads_padded),
        cmocka_unit_test(test_gqa),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
