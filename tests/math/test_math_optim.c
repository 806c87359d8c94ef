/* kernels/math/optim.h as optim.cu runs it (AdamW per element; 8-bit AdamW
 * per quantization block), compared with the CPU reference
 * (kernels/cpu/optim.c) over several steps on a LoRA-sized tensor. Both
 * compute in fp32 in the same order, so the tolerances are a few fp32 ulp
 * and the 8-bit codes must be equal. */
#include "mt.h"

#include <string.h>

#include "kernels/cpu/cpu.h"
#include "kernels/math/optim.h"

/* Rank-16 LoRA A of a 3072-wide linear, plus a ragged tail block. */
enum { N = 16 * 3072 + 77, STEPS = 5 };

static const aitk_adamw_hparams hp = {1e-4f, 0.9f, 0.999f, 1e-8f, 0.01f};

static void test_adamw(void **state)
{
    (void)state;
    float *p = mt_draw_bf16(N, 91, 0.02f, 0.0f), *p_ref = mt_copy(p, N);
    float *m = mt_alloc(N), *v = mt_alloc(N), *m_ref = mt_alloc(N), *v_ref = mt_alloc(N);
    for (long step = 1; step <= STEPS; step++) {
        float *g = mt_draw_bf16(N, 100 + (uint64_t)step, 1e-3f, 0.0f);
        aitk_adamw_consts k = {0};
        assert_int_equal(aitk_adamw_consts_make(&k, &hp, step), 0);
        for (size_t i = 0; i < N; i++)
            aitk_adamw_elem(&k, &p[i], &m[i], &v[i], g[i]);
        assert_int_equal(aitk_cpu_adamw_update(p_ref, m_ref, v_ref, g, N, &hp, step), AITK_OK);
        free(g);
    }
    mt_close("adamw param", p, p_ref, N, 1e-6f, 0.0f);
    mt_close("adamw m", m, m_ref, N, 1e-6f, 0.0f);
    mt_close("adamw v", v, v_ref, N, 1e-6f, 0.0f);
    /* The checks ops.h asks for: step 0 and a beta of 1 are refused. */
    aitk_adamw_consts k = {0};
    assert_int_equal(aitk_adamw_consts_make(&k, &hp, 0), -1);
    aitk_adamw_hparams bad = hp;
    bad.beta2 = 1.0f;
    assert_int_equal(aitk_adamw_consts_make(&k, &bad, 1), -1);
    free(p), free(p_ref), free(m), free(v), free(m_ref), free(v_ref);
}

/* One launch of adamw8_kernel, block by block, thread by thread. */
static void adamw8_as_gpu(float *p, uint8_t *mq, uint8_t *vq, float *ms, float *vs,
                          const float *g, size_t n, const aitk_adamw_consts *k)
{
    float m[AITK_ADAMW8_BLOCK], sv[AITK_ADAMW8_BLOCK];
    for (size_t blk = 0; blk < aitk_adamw8_blocks(n); blk++) {
        float am = 0.0f, av = 0.0f;
        for (size_t t = 0; t < AITK_ADAMW8_BLOCK; t++) {
            size_t i = blk * AITK_ADAMW8_BLOCK + t;
            float mm = 0.0f, vv = 0.0f;
            if (i < n) {
                mm = aitk_adamw8_m(mq[i], ms[blk]);
                vv = aitk_adamw8_v(vq[i], vs[blk]);
                aitk_adamw_elem(k, &p[i], &mm, &vv, g[i]);
            }
            m[t] = mm;
            sv[t] = sqrtf(vv);
            am = fabsf(mm) > am ? fabsf(mm) : am;
            av = sv[t] > av ? sv[t] : av;
        }
        float sm = aitk_adamw8_scale(am), ss = aitk_adamw8_scale(av);
        for (size_t t = 0; t < AITK_ADAMW8_BLOCK; t++) {
            size_t i = blk * AITK_ADAMW8_BLOCK + t;
            if (i < n) {
                mq[i] = aitk_adamw8_code(m[t], sm);
                vq[i] = aitk_adamw8_code(sv[t], ss);
            }
        }
        ms[blk] = sm;
        vs[blk] = ss;
    }
}

static void test_adamw8(void **state)
{
    (void)state;
    size_t nb = aitk_adamw8_blocks(N);
    float *p = mt_draw_bf16(N, 93, 0.02f, 0.0f), *p_ref = mt_copy(p, N);
    uint8_t *mq = calloc(N, 1), *vq = calloc(N, 1), *mq_ref = calloc(N, 1), *vq_ref = calloc(N, 1);
    float *ms = mt_alloc(nb), *vs = mt_alloc(nb), *ms_ref = mt_alloc(nb), *vs_ref = mt_alloc(nb);
    assert_non_null(mq), assert_non_null(vq), assert_non_null(mq_ref), assert_non_null(vq_ref);
    for (long step = 1; step <= STEPS; step++) {
        float *g = mt_draw_bf16(N, 200 + (uint64_t)step, 1e-3f, 0.0f);
        /* A zero block stays zero: the all-zero state's first block. */
        for (size_t i = 0; i < AITK_ADAMW8_BLOCK; i++)
            g[i] = 0.0f;
        aitk_adamw_consts k = {0};
        assert_int_equal(aitk_adamw_consts_make(&k, &hp, step), 0);
        adamw8_as_gpu(p, mq, vq, ms, vs, g, N, &k);
        assert_int_equal(aitk_cpu_adamw8_update(p_ref, mq_ref, vq_ref, ms_ref, vs_ref, g, N, &hp,
                                                step),
                         AITK_OK);
        free(g);
    }
    mt_close("adamw8 param", p, p_ref, N, 1e-6f, 0.0f);
    mt_close("adamw8 m scale", ms, ms_ref, nb, 1e-6f, 0.0f);
    mt_close("adamw8 v scale", vs, vs_ref, nb, 1e-6f, 0.0f);
    assert_memory_equal(mq, mq_ref, N);
    assert_memory_equal(vq, vq_ref, N);
    assert_float_equal(ms[0], 0.0f, 0.0f);
    free(p), free(p_ref), free(mq), free(vq), free(mq_ref), free(vq_ref), free(ms), free(vs),
        free(ms_ref), free(vs_ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adamw),
        cmocka_unit_test(test_adamw8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
