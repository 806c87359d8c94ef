/* The CUDA backend's host logic, run without a GPU: the row-major ->
 * column-major mapping of gemm onto cuBLASLt (checked by hand and by
 * running the mapped problem through a plain column-major product against
 * the CPU reference's aitk_cpu_gemm), the algorithm cache, and the
 * attention shape checks. */
#include "mt.h"

#include <string.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cuda/attention_check.h"
#include "kernels/cuda/gemm_map.h"
#include "kernels/cuda/lora_plan.h"

static void test_map_by_hand(void **state)
{
    (void)state;
    aitk_lt_problem p;
    /* C (2,3) = A (2,4) B (4,3): cuBLASLt sees C^T (3,2) = B^T A^T. */
    assert_true(aitk_lt_map(&p, 2, 3, 4, false, false, 1, 0, 0, 0));
    assert_int_equal(p.m, 3);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.k, 4);
    assert_int_equal(p.a.rows, 3), assert_int_equal(p.a.cols, 4), assert_int_equal(p.a.ld, 3);
    assert_false(p.a.trans);
    assert_int_equal(p.b.rows, 4), assert_int_equal(p.b.cols, 2), assert_int_equal(p.b.ld, 4);
    assert_false(p.b.trans);
    assert_int_equal(p.c.rows, 3), assert_int_equal(p.c.cols, 2), assert_int_equal(p.c.ld, 3);
    /* A Linear: y (N,out) = x (N,in) W^T with W stored (out,in): trans_b.
     * N = 4096, in = 3072, out = 9216 (FLUX's qkv). */
    assert_true(aitk_lt_map(&p, 4096, 9216, 3072, false, true, 1, 0, 0, 0));
    assert_int_equal(p.a.rows, 3072), assert_int_equal(p.a.cols, 9216);
    assert_int_equal(p.a.ld, 3072);
    assert_true(p.a.trans);
    assert_int_equal(p.b.rows, 3072), assert_int_equal(p.b.cols, 4096);
    assert_false(p.b.trans);
    assert_int_equal(p.c.ld, 9216);
    /* Impossible shapes, as the CPU backend refuses them. */
    assert_false(aitk_lt_map(&p, 0, 3, 4, false, false, 1, 0, 0, 0));
    assert_false(aitk_lt_map(&p, 2, 3, 4, false, false, 0, 0, 0, 0));
    assert_false(aitk_lt_map(&p, 2, 3, 4, false, false, 1, -1, 0, 0));
    assert_false(aitk_lt_map(&p, 2, 3, 4, false, false, 2, 8, 12, 5)); /* batches overlap in C */
    assert_true(aitk_lt_map(&p, 2, 3, 4, false, false, 2, 0, 12, 6));  /* A broadcast */
    assert_int_equal(p.a.stride, 12), assert_int_equal(p.b.stride, 0);
    assert_int_equal(p.c.stride, 6);
}

/* A column-major product exactly as cuBLASLt defines it: D (m,n) = alpha
 * op(A) op(B) + beta C, element (r,c) at r + c*ld, op T reading (c,r). */
static void colmajor_gemm(const aitk_lt_problem *p, float alpha, const float *a, const float *b,
                          float beta, float *c)
{
    for (int bt = 0; bt < p->batch; bt++)
        for (uint64_t r = 0; r < p->m; r++)
            for (uint64_t col = 0; col < p->n; col++) {
                double s = 0.0;
                for (uint64_t k = 0; k < p->k; k++) {
                    const float *ab = a + bt * p->a.stride, *bb = b + bt * p->b.stride;
                    float av = p->a.trans ? ab[k + r * p->a.ld] : ab[r + k * p->a.ld];
                    float bv = p->b.trans ? bb[col + k * p->b.ld] : bb[k + col * p->b.ld];
                    s += (double)av * bv;
                }
                float *cc = c + bt * p->c.stride + r + col * p->c.ld;
                *cc = (float)(alpha * s + beta * *cc);
            }
}

static void test_map_computes_row_major_gemm(void **state)
{
    (void)state;
    enum { M = 5, N = 7, K = 3, BATCH = 2 };
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            float *a = mt_draw_bf16((size_t)BATCH * M * K, 401, 1.0f, 0.0f);
            float *b = mt_draw_bf16((size_t)BATCH * K * N, 402, 1.0f, 0.0f);
            float *c = mt_draw_bf16((size_t)BATCH * M * N, 403, 1.0f, 0.0f);
            float *c_ref = mt_copy(c, (size_t)BATCH * M * N);
            aitk_lt_problem p;
            assert_true(aitk_lt_map(&p, M, N, K, ta, tb, BATCH, M * K, K * N, M * N));
            /* cuBLASLt's A is our B, its B our A (gemm.c passes them so). */
            colmajor_gemm(&p, 0.5f, b, a, 0.25f, c);
            assert_int_equal(aitk_cpu_gemm(c_ref, a, b, M, N, K, ta, tb, 0.5f, 0.25f, BATCH,
                                           M * K, K * N, M * N),
                             AITK_OK);
            mt_close("mapped gemm", c, c_ref, (size_t)BATCH * M * N, 1e-5f, 1e-6f);
            free(a), free(b), free(c), free(c_ref);
        }
}

static aitk_gemm_key key_of(int m, float beta, int c_dtype)
{
    aitk_gemm_key k;
    memset(&k, 0, sizeof k);
    k.m = m;
    k.n = 64;
    k.k = 32;
    k.batch = 1;
    k.trans_b = true;
    k.beta_nonzero = beta != 0.0f;
    k.c_dtype = c_dtype;
    return k;
}

static void test_algorithm_cache(void **state)
{
    (void)state;
    static aitk_gemm_cache c;
    memset(&c, 0, sizeof c);
    aitk_gemm_key k1 = key_of(128, 0.0f, 0), k1b = key_of(128, 1.0f, 0),
                  k1f = key_of(128, 1.0f, 1);
    assert_int_equal(aitk_gemm_cache_find(&c, &k1), -1);
    int s1 = aitk_gemm_cache_insert(&c, &k1);
    assert_int_equal(aitk_gemm_cache_find(&c, &k1), s1);
    /* beta != 0 and an fp32 C are different problems. */
    assert_int_equal(aitk_gemm_cache_find(&c, &k1b), -1);
    int s2 = aitk_gemm_cache_insert(&c, &k1b);
    assert_int_not_equal(s1, s2);
    assert_int_equal(aitk_gemm_cache_find(&c, &k1f), -1);
    /* Fill the table; the next insert reuses slot 0 (the oldest). */
    for (int i = 2; i < AITK_GEMM_CACHE_SLOTS; i++) {
        aitk_gemm_key k = key_of(1000 + i, 0.0f, 0);
        aitk_gemm_cache_insert(&c, &k);
    }
    aitk_gemm_key extra = key_of(5, 0.0f, 0);
    int se = aitk_gemm_cache_insert(&c, &extra);
    assert_int_equal(se, 0);
    assert_int_equal(aitk_gemm_cache_find(&c, &extra), 0);
    assert_int_equal(aitk_gemm_cache_find(&c, &k1), -1); /* evicted */
    assert_int_equal(aitk_gemm_cache_find(&c, &k1b), s2);
}

static void test_alignment(void **state)
{
    (void)state;
    const void *aligned[3] = {(const void *)0x10000, (const void *)0x20100, NULL};
    assert_int_equal(aitk_gemm_alignment(aligned, 3), 256);
    /* A view 3072 bf16 elements in (6144 bytes = 24 x 256): still 256. */
    const void *chunk[2] = {(const void *)0x10000, (const void *)(0x10000 + 6144)};
    assert_int_equal(aitk_gemm_alignment(chunk, 2), 256);
    /* One head of 120 bf16 elements in (240 bytes): 16. */
    const void *head[2] = {(const void *)0x10000, (const void *)(0x10000 + 240)};
    assert_int_equal(aitk_gemm_alignment(head, 2), 16);
    /* An odd element offset: 2 bytes. */
    const void *odd[1] = {(const void *)(0x10000 + 2)};
    assert_int_equal(aitk_gemm_alignment(odd, 1), 2);
    /* The alignment is part of the key. */
    aitk_gemm_key x = key_of(64, 0.0f, 0), y = x;
    x.align = 256;
    y.align = 16;
    assert_false(aitk_gemm_key_equal(&x, &y));
}

static void test_attention_checks(void **state)
{
    (void)state;
    assert_true(aitk_attention_shape_ok(1, 4608, 24, 24, 128, 0.0884f));
    assert_true(aitk_attention_shape_ok(2, 100, 24, 8, 120, 0.09f)); /* GQA 3:1 */
    assert_false(aitk_attention_shape_ok(1, 100, 24, 7, 128, 0.1f)); /* 24 % 7 */
    assert_false(aitk_attention_shape_ok(1, 0, 24, 24, 128, 0.1f));
    assert_false(aitk_attention_shape_ok(1, 10, 24, 24, 128, NAN));
    /* FLUX (128) and OmniGen2 (120) on an H200 with cuDNN 9.17: taken. */
    assert_null(aitk_attention_cudnn_refusal(91700, 9, 1, 4608, 24, 24, 128, true));
    assert_null(aitk_attention_cudnn_refusal(91700, 9, 1, 4096, 28, 7, 120, true));
    assert_non_null(aitk_attention_cudnn_refusal(0, 9, 1, 4608, 24, 24, 128, false));
    assert_non_null(aitk_attention_cudnn_refusal(90100, 9, 1, 4608, 24, 24, 128, false));
    /* The forward node from 9.13.1 (attention_check.c), both sides; the
     * composite backward on any cuDNN 9 but 9.10.0 and 9.10.1. */
    assert_non_null(aitk_attention_cudnn_refusal(91000, 9, 1, 4608, 24, 24, 128, false));
    assert_non_null(aitk_attention_cudnn_refusal(91300, 9, 1, 4608, 24, 24, 128, false));
    assert_null(aitk_attention_cudnn_refusal(91301, 9, 1, 4608, 24, 24, 128, false));
    assert_null(aitk_attention_cudnn_refusal(90100, 9, 1, 4608, 24, 24, 128, true));
    assert_null(aitk_attention_cudnn_refusal(91400, 9, 1, 4608, 24, 24, 128, true));
    assert_non_null(aitk_attention_cudnn_refusal(91000, 9, 1, 4608, 24, 24, 128, true));
    assert_non_null(aitk_attention_cudnn_refusal(91001, 9, 1, 4608, 24, 24, 128, true));
    assert_null(aitk_attention_cudnn_refusal(91002, 9, 1, 4608, 24, 24, 128, true));
    /* A sequence not a multiple of 128 (4600): the frontend pads it with a
     * mask up to 9.15, which this backend does not build; 9.16 takes it. */
    assert_non_null(aitk_attention_cudnn_refusal(91500, 9, 1, 4600, 24, 24, 128, true));
    assert_null(aitk_attention_cudnn_refusal(91600, 9, 1, 4600, 24, 24, 128, true));
    assert_null(aitk_attention_cudnn_refusal(91500, 9, 1, 4600, 24, 24, 128, false));
    /* One token: the frontend refuses the backward (s_q == s_kv == 1). */
    assert_non_null(aitk_attention_cudnn_refusal(91900, 9, 1, 1, 24, 24, 128, true));
    assert_null(aitk_attention_cudnn_refusal(91900, 9, 1, 1, 24, 24, 128, false));
    assert_non_null(aitk_attention_cudnn_refusal(91700, 9, 1, 64, 2, 2, 100, false)); /* %8 */
    assert_non_null(aitk_attention_cudnn_refusal(91700, 9, 1, 64, 2, 2, 264, false));
    /* head_dim 192: Hopper backward yes, Ampere and Blackwell backward no,
     * forward yes. */
    assert_null(aitk_attention_cudnn_refusal(91700, 9, 1, 64, 2, 2, 192, true));
    assert_non_null(aitk_attention_cudnn_refusal(91700, 8, 1, 64, 2, 2, 192, true));
    assert_non_null(aitk_attention_cudnn_refusal(91700, 10, 1, 64, 2, 2, 192, true));
    assert_null(aitk_attention_cudnn_refusal(91700, 8, 1, 64, 2, 2, 192, false));
    assert_non_null(aitk_attention_cudnn_refusal(91700, 7, 1, 64, 2, 2, 64, false));
    /* Plain backward tiles, by the opt-in shared memory per block of the
     * CUDA C Programming Guide's table (227 KiB on 9.0, 163 KiB on 8.0,
     * 99 KiB on 8.6/8.9): the largest tile that leaves room for two blocks. */
    assert_int_equal(aitk_attention_bwd_tile(128, 227 * 1024), 32);
    assert_int_equal(aitk_attention_bwd_tile(128, 163 * 1024), 32);
    assert_int_equal(aitk_attention_bwd_tile(128, 99 * 1024), 16);
    assert_int_equal(aitk_attention_bwd_tile(120, 99 * 1024), 16);
    assert_int_equal(aitk_attention_bwd_tile(256, 227 * 1024), 16);
    assert_int_equal(aitk_attention_bwd_tile(256, 99 * 1024), 8);
    assert_int_equal(aitk_attention_bwd_tile(64, 227 * 1024), 64);
    /* One block only: 8 x 1024 needs 128.7 KiB, more than half of 227. */
    assert_int_equal(aitk_attention_bwd_tile(1024, 227 * 1024), 8);
    /* Nothing fits: the backward refuses, naming head_dim. */
    assert_int_equal(aitk_attention_bwd_tile(4096, 227 * 1024), 0);
    assert_int_equal(aitk_attention_bwd_tile(0, 227 * 1024), 0);
    /* Plain forward: (2T + 2D) floats; T = 4608, D = 128 is 37 KiB. */
    assert_int_equal(aitk_attention_plain_smem(4608, 128, 227 * 1024), (2 * 4608 + 256) * 4);
    assert_int_equal(aitk_attention_plain_smem(100000, 128, 227 * 1024), 0);
    assert_int_equal(aitk_attention_plain_smem(0, 128, 227 * 1024), 0);
}

/* What a failed cuDNN call means for the attention op: only cuDNN's host
 * and device allocation failures are running out of memory (the op fails);
 * every other failure runs the plain kernel. Which failures the plan cache
 * keeps is cuda.cudnn_deviceless's test_refusals_that_last. */
static void test_cudnn_failures(void **state)
{
    (void)state;
    assert_int_equal(aitk_cudnn_failure(3000), AITK_E_UNSUPPORTED); /* NOT_SUPPORTED */
    assert_int_equal(aitk_cudnn_failure(3002), AITK_E_UNSUPPORTED); /* ..._SHAPE */
    assert_int_equal(aitk_cudnn_failure(3010), AITK_E_UNSUPPORTED); /* ..._SHARED_MEMORY */
    assert_int_equal(aitk_cudnn_failure(4004), AITK_E_NOMEM);       /* device allocation */
    assert_int_equal(aitk_cudnn_failure(4003), AITK_E_NOMEM);       /* host allocation */
    assert_int_equal(aitk_cudnn_failure(5000), AITK_E_UNSUPPORTED); /* EXECUTION_FAILED */
    assert_int_equal(aitk_cudnn_failure(5003), AITK_E_UNSUPPORTED); /* ..._CUDART */
    assert_int_equal(aitk_cudnn_failure(4000), AITK_E_UNSUPPORTED); /* INTERNAL_ERROR */
    assert_int_equal(aitk_cudnn_failure(2000), AITK_E_UNSUPPORTED); /* BAD_PARAM */
}

/* Runs a step list with aitk_cpu_gemm over fp32 tensors (bias added after
 * the step that asks for it, as the epilogue does). */
static void run_steps_cpu(const aitk_lora_step *s, int count, float *const t[AITK_LORA_TENSORS],
                          const float *bias)
{
    for (int i = 0; i < count; i++) {
        assert_int_equal(aitk_cpu_gemm(t[s[i].c], t[s[i].a], t[s[i].b], s[i].m, s[i].n, s[i].k,
                                       s[i].trans_a, s[i].trans_b, s[i].alpha, s[i].beta, 1, 0,
                                       0, 0),
                         AITK_OK);
        if (s[i].bias)
            for (int row = 0; row < s[i].m; row++)
                for (int col = 0; col < s[i].n; col++)
                    t[s[i].c][(size_t)row * s[i].n + col] += bias[col];
    }
}

static void lora_plan_case(int n, int in, int out, int r, bool with_bias, bool acc)
{
    float scale = 2.0f;
    size_t nx = (size_t)n * in, ny = (size_t)n * out;
    int rr = r ? r : 1;
    float *t[AITK_LORA_TENSORS], *ref[AITK_LORA_TENSORS];
    size_t sizes[AITK_LORA_TENSORS] = {nx, (size_t)out * in, (size_t)rr * in, (size_t)out * rr,
                                       (size_t)n * rr, ny, ny, nx, (size_t)n * rr,
                                       (size_t)rr * in, (size_t)out * rr};
    for (int i = 0; i < AITK_LORA_TENSORS; i++) {
        t[i] = mt_draw_bf16(sizes[i], 600 + (uint64_t)i, 0.5f, 0.0f);
        ref[i] = mt_copy(t[i], sizes[i]);
    }
    float *bias = mt_draw_bf16(out, 650, 0.5f, 0.0f);
    aitk_lora_step steps[AITK_LORA_MAX_STEPS];
    int count = aitk_lora_forward_plan(steps, n, in, out, r, scale, with_bias);
    assert_int_equal(count, r ? 3 : 1);
    run_steps_cpu(steps, count, t, bias);
    assert_int_equal(aitk_cpu_lora_linear_forward(ref[AITK_LORA_Y], r ? ref[AITK_LORA_XA] : NULL,
                                                  ref[AITK_LORA_X], ref[AITK_LORA_W],
                                                  with_bias ? bias : NULL,
                                                  r ? ref[AITK_LORA_A] : NULL,
                                                  r ? ref[AITK_LORA_B] : NULL, n, in, out, r,
                                                  scale),
                     AITK_OK);
    mt_close("lora plan y", t[AITK_LORA_Y], ref[AITK_LORA_Y], ny, 1e-5f, 1e-5f);
    if (r)
        mt_close("lora plan xa", t[AITK_LORA_XA], ref[AITK_LORA_XA], (size_t)n * r, 1e-5f, 1e-5f);
    count = aitk_lora_backward_plan(steps, n, in, out, r, scale, true, acc);
    assert_int_equal(count, r ? 5 : 1);
    run_steps_cpu(steps, count, t, NULL);
    assert_int_equal(aitk_cpu_lora_linear_backward(ref[AITK_LORA_DX], r ? ref[AITK_LORA_DA] : NULL,
                                                   r ? ref[AITK_LORA_DB] : NULL,
                                                   r ? ref[AITK_LORA_WORK] : NULL,
                                                   ref[AITK_LORA_DY], ref[AITK_LORA_X],
                                                   ref[AITK_LORA_XA], ref[AITK_LORA_W],
                                                   ref[AITK_LORA_A], ref[AITK_LORA_B], n, in, out,
                                                   r, scale, acc),
                     AITK_OK);
    mt_close("lora plan dx", t[AITK_LORA_DX], ref[AITK_LORA_DX], nx, 1e-5f, 1e-5f);
    if (r) {
        mt_close("lora plan work", t[AITK_LORA_WORK], ref[AITK_LORA_WORK], (size_t)n * r, 1e-5f,
                 1e-5f);
        mt_close("lora plan dA", t[AITK_LORA_DA], ref[AITK_LORA_DA], (size_t)r * in, 1e-5f,
                 1e-5f);
        mt_close("lora plan dB", t[AITK_LORA_DB], ref[AITK_LORA_DB], (size_t)out * r, 1e-5f,
                 1e-5f);
        /* The gradients are accumulated in fp32 straight into dA and dB. */
        for (int i = 0; i < count; i++)
            if (steps[i].c == AITK_LORA_DA || steps[i].c == AITK_LORA_DB)
                assert_true(steps[i].c_f32 && steps[i].beta == 1.0f);
    }
    /* Without dx only the gradient steps remain. */
    assert_int_equal(aitk_lora_backward_plan(steps, n, in, out, r, scale, false, acc), r ? 3 : 0);
    for (int i = 0; i < AITK_LORA_TENSORS; i++)
        free(t[i]), free(ref[i]);
    free(bias);
}

static void test_lora_plan_matches_reference(void **state)
{
    (void)state;
    lora_plan_case(64, 96, 80, 8, true, false);
    lora_plan_case(32, 48, 72, 4, false, true);
    lora_plan_case(16, 40, 24, 0, true, true);
}

/* The LoRA bf16 buffer: B starts on a 256-byte (128-element) boundary
 * whatever A's size, so cuBLASLt's fastest kernels may read it. */
static void test_lora_b_aligned(void **state)
{
    (void)state;
    /* FLUX rank 16 on 3072 features: A is already 49152 elements. */
    assert_int_equal(aitk_lora_b_offset(3072, 16), 49152);
    assert_int_equal(aitk_lora_bf16_elems(3072, 9216, 16), 49152 + 9216 * 16);
    /* Rank 4 on OmniGen2's head_dim 120: 480 elements, B at 512. */
    assert_int_equal(aitk_lora_b_offset(120, 4), 512);
    assert_int_equal(aitk_lora_bf16_elems(120, 120, 4), 512 + 480);
    assert_int_equal(aitk_lora_b_offset(1, 1), 128);
    assert_int_equal(aitk_lora_b_offset(3072, 0), 0);
    for (int in = 1; in <= 300; in += 7)
        for (int r = 1; r <= 33; r += 4) {
            size_t at = aitk_lora_b_offset(in, r), na = (size_t)in * r;
            assert_int_equal(at * sizeof(uint16_t) % 256, 0);
            assert_true(at >= na && at < na + 128); /* after A, no more padding than needed */
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_by_hand),
        cmocka_unit_test(test_map_computes_row_major_gemm),
        cmocka_unit_test(test_algorithm_cache),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_attention_checks),
        cmocka_unit_test(test_cudnn_failures),
        cmocka_unit_test(test_lora_plan_matches_reference),
        cmocka_unit_test(test_lora_b_aligned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
