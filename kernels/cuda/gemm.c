/* GEMMs through cuBLASLt: ops.h's gemm and the LoRA linear layer.
 *
 * bf16 A and B, fp32 accumulation (CUBLAS_COMPUTE_32F, fp32 alpha/beta),
 * bf16 C/D for activations and fp32 C/D for the LoRA gradients, which are
 * accumulated with beta = 1 straight into the fp32 gradient buffers (no bf16
 * round trip). Row-major to column-major: gemm_map.c. Each distinct problem
 * (gemm_map.h's key) keeps its descriptors and the heuristic's first
 * algorithm in a 64-slot table, so a training step asks the heuristic once
 * per shape, not once per call; one 32 MiB workspace serves all of them
 * (calls are serialized on the one stream). Each path names its problem
 * (backend.h's fixed form), and AITK_TIME_OPS=1 times each matmul.
 *
 * LoRA: the GEMM steps are listed by lora_plan.c (plain C, so the tests
 * run the same list on the CPU); this file runs them. The adapter's fp32
 * masters change every optimizer step, so each call converts la and lb
 * into one backend-owned bf16 buffer (counted in workspace_bytes) before
 * its GEMMs; the stream orders the next call's conversion after this
 * call's GEMMs, so one buffer is enough. */
#include <string.h>

#include "kernels/cuda/gemm_map.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/lora_plan.h"

typedef struct gemm_plan {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    char summary[160];
} gemm_plan;

static aitk_gemm_cache cache;
static gemm_plan plans[AITK_GEMM_CACHE_SLOTS];

static void plan_free(gemm_plan *p)
{
    if (p->op)
        cublasLtMatmulDescDestroy(p->op);
    if (p->a)
        cublasLtMatrixLayoutDestroy(p->a);
    if (p->b)
        cublasLtMatrixLayoutDestroy(p->b);
    if (p->c)
        cublasLtMatrixLayoutDestroy(p->c);
    memset(p, 0, sizeof *p);
}

void aitk_cuda_gemm_close(void)
{
    for (int i = 0; i < AITK_GEMM_CACHE_SLOTS; i++)
        plan_free(&plans[i]);
    memset(&cache, 0, sizeof cache);
}

static aitk_status layout(cublasLtMatrixLayout_t *l, cudaDataType t, const aitk_lt_operand *o,
                          int batch)
{
    aitk_status st = aitk_cublas_check(cublasLtMatrixLayoutCreate(l, t, o->rows, o->cols, o->ld),
                                       "cublasLtMatrixLayoutCreate");
    if (st || batch == 1)
        return st;
    int32_t count = batch;
    int64_t stride = o->stride;
    st = aitk_cublas_check(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                            &count, sizeof count),
                           "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
    if (!st)
        st = aitk_cublas_check(
            cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof stride),
            "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
    return st;
}

/* Builds descriptors and asks the heuristic for the problem in slot s. */
static aitk_status plan_make(gemm_plan *p, const aitk_lt_problem *pr, const aitk_gemm_key *key)
{
    cudaDataType cdt = key->c_dtype ? CUDA_R_32F : CUDA_R_16BF;
    cublasOperation_t ta = pr->a.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = pr->b.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    aitk_status st = aitk_cublas_check(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F,
                                                                CUDA_R_32F),
                                       "cublasLtMatmulDescCreate");
    if (!st)
        st = aitk_cublas_check(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA,
                                                              &ta, sizeof ta),
                               "cublasLtMatmulDescSetAttribute(TRANSA)");
    if (!st)
        st = aitk_cublas_check(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB,
                                                              &tb, sizeof tb),
                               "cublasLtMatmulDescSetAttribute(TRANSB)");
    if (!st && key->epilogue) {
        /* Bias per row of the column-major D = per output feature. */
        cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        cudaDataType bias_t = CUDA_R_16BF;
        st = aitk_cublas_check(cublasLtMatmulDescSetAttribute(
                                   p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
                               "cublasLtMatmulDescSetAttribute(EPILOGUE)");
        if (!st)
            st = aitk_cublas_check(cublasLtMatmulDescSetAttribute(
                                       p->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_t,
                                       sizeof bias_t),
                                   "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)");
    }
    if (!st)
        st = layout(&p->a, CUDA_R_16BF, &pr->a, pr->batch);
    if (!st)
        st = layout(&p->b, CUDA_R_16BF, &pr->b, pr->batch);
    if (!st)
        st = layout(&p->c, cdt, &pr->c, pr->batch);
    cublasLtMatmulPreference_t pref = NULL;
    uint64_t ws = aitk_cuda.gemm_ws_bytes;
    if (!st)
        st = aitk_cublas_check(cublasLtMatmulPreferenceCreate(&pref),
                               "cublasLtMatmulPreferenceCreate");
    if (!st)
        st = aitk_cublas_check(cublasLtMatmulPreferenceSetAttribute(
                                   pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                               "cublasLtMatmulPreferenceSetAttribute");
    /* Only algorithms that accept the operands' actual alignment. */
    const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    uint32_t align = key->align;
    for (int i = 0; i < 4 && !st; i++)
        st = aitk_cublas_check(cublasLtMatmulPreferenceSetAttribute(pref, align_attr[i], &align,
                                                                    sizeof align),
                               "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    if (!st) {
        cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(aitk_cuda.lt, p->op, p->a, p->b, p->c,
                                                           p->c, pref, 1, &heur, &found);
        if (hs == CUBLAS_STATUS_SUCCESS && found == 0)
            hs = CUBLAS_STATUS_NOT_SUPPORTED;
        st = aitk_cublas_check(hs, "cublasLtMatmulAlgoGetHeuristic");
        if (st) {
            size_t used = strlen(aitk_cuda.error);
            aitk_cuda_errorf(aitk_cuda.error + used, sizeof aitk_cuda.error - used,
                             " (no algorithm for m=%d n=%d k=%d batch=%d)", key->m, key->n,
                             key->k, key->batch);
        }
    }
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    if (st)
        return st;
    p->algo = heur.algo;
    int id = -1, tile = -1, stages = -1;
    size_t w = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                         sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                         sizeof stages, &w);
    /* The problem in backend.h's fixed form, so the report can count the
     * path's FLOPs (bench/gemm_in_step.h parses it); the algorithm after. */
    aitk_cuda_errorf(p->summary, sizeof p->summary,
                     "cuBLASLt [m=%d n=%d k=%d batch=%d ta=%d tb=%d beta=%d a=bf16 b=bf16 "
                     "c=%s compute=fp32 epilogue=%s] algo %d tile %d stages %d",
                     key->m, key->n, key->k, key->batch, key->trans_a ? 1 : 0,
                     key->trans_b ? 1 : 0, key->beta_nonzero ? 1 : 0,
                     key->c_dtype ? "fp32" : "bf16", key->epilogue ? "bias" : "none", id, tile,
                     stages);
    return AITK_OK;
}

/* D = alpha op(A) op(B) + beta C in ops.h's row-major terms; c_f32 selects
 * an fp32 C/D; bias (N elements, bf16) or NULL. op NULL: a GEMM inside
 * another op, with no path or timing of its own. */
static aitk_status matmul(const char *op, void *c, bool c_f32, const void *a, const void *b,
                          int m, int n, int k, bool trans_a, bool trans_b, float alpha,
                          float beta, int batch, long long sa, long long sb, long long sc,
                          const void *bias)
{
    aitk_lt_problem pr;
    if (!aitk_lt_map(&pr, m, n, k, trans_a, trans_b, batch, sa, sb, sc))
        return aitk_cuda_inval(op ? op : "inner gemm", "impossible GEMM shape");
    aitk_gemm_key key;
    memset(&key, 0, sizeof key);
    key.m = m;
    key.n = n;
    key.k = k;
    key.batch = batch;
    key.stride_a = batch > 1 ? sa : 0;
    key.stride_b = batch > 1 ? sb : 0;
    key.stride_c = batch > 1 ? sc : 0;
    key.trans_a = trans_a;
    key.trans_b = trans_b;
    key.beta_nonzero = beta != 0.0f;
    key.c_dtype = c_f32 ? 1 : 0;
    key.epilogue = bias ? 1 : 0;
    const void *operands[4] = {a, b, c, bias};
    key.align = aitk_gemm_alignment(operands, 4);
    int slot = aitk_gemm_cache_find(&cache, &key);
    aitk_status st = AITK_OK;
    if (slot < 0) {
        slot = aitk_gemm_cache_insert(&cache, &key);
        plan_free(&plans[slot]);
        st = plan_make(&plans[slot], &pr, &key);
        if (st) {
            plan_free(&plans[slot]);
            cache.used[slot] = false;
            return st;
        }
    }
    gemm_plan *p = &plans[slot];
    if (bias) {
        st = aitk_cublas_check(cublasLtMatmulDescSetAttribute(p->op,
                                                              CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                              &bias, sizeof bias),
                               "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
        if (st)
            return st;
    }
    /* Timed (AITK_TIME_OPS=1) around the matmul alone: the plan lookup and
     * the LoRA conversions are not the GEMM's time. */
    int timing = -1;
    if (op && (st = aitk_cuda_timer_start(aitk_cuda_path(op, p->summary), &timing)))
        return st;
    /* cuBLASLt's A is our B and its B our A (gemm_map.h). */
    st = aitk_cublas_check(cublasLtMatmul(aitk_cuda.lt, p->op, &alpha, b, p->a, a, p->b, &beta, c,
                                          p->c, c, p->c, &p->algo, aitk_cuda.gemm_ws,
                                          aitk_cuda.gemm_ws_bytes, aitk_cuda.stream),
                           "cublasLtMatmul");
    return op ? aitk_cuda_timer_stop(timing, st) : st;
}

aitk_status aitk_cuda_gemm_inner(void *c, bool c_f32, const void *a, const void *b, int m, int n,
                                 int k, bool trans_a, bool trans_b, float alpha, float beta,
                                 int batch, long long stride_a, long long stride_b,
                                 long long stride_c)
{
    return matmul(NULL, c, c_f32, a, b, m, n, k, trans_a, trans_b, alpha, beta, batch, stride_a,
                  stride_b, stride_c, NULL);
}

aitk_status aitk_cuda_gemm(aitk_act *c, const aitk_act *a, const aitk_act *b, int m, int n,
                           int k, bool trans_a, bool trans_b, float alpha, float beta, int batch,
                           long long stride_a, long long stride_b, long long stride_c)
{
    aitk_status st = aitk_cuda_need_open("gemm");
    if (st)
        return st;
    if (!c || !a || !b)
        return aitk_cuda_inval("gemm", "NULL tensor");
    return matmul("gemm", c, false, a, b, m, n, k, trans_a, trans_b, alpha, beta, batch, stride_a,
                  stride_b, stride_c, NULL);
}

/* bf16 copies of la (r,in) and lb (out,r) in the backend's buffer, lb at
 * a 256-byte boundary (lora_plan.h: aitk_lora_b_offset). */
static aitk_status lora_bf16(const float *la, const float *lb, int in, int out, int r,
                             const uint16_t **la16, const uint16_t **lb16)
{
    size_t na = (size_t)r * in, nb = (size_t)out * r, at_b = aitk_lora_b_offset(in, r);
    aitk_status st = aitk_cuda_reserve((void **)&aitk_cuda.lora_bf16, &aitk_cuda.lora_bf16_bytes,
                                       aitk_lora_bf16_elems(in, out, r) * sizeof(uint16_t),
                                       "cudaMallocAsync(LoRA bf16 copies)");
    if (!st)
        st = aitk_cuda_f32_to_bf16(aitk_cuda.lora_bf16, la, na, "LoRA A to bf16");
    if (!st)
        st = aitk_cuda_f32_to_bf16(aitk_cuda.lora_bf16 + at_b, lb, nb, "LoRA B to bf16");
    *la16 = aitk_cuda.lora_bf16;
    *lb16 = aitk_cuda.lora_bf16 + at_b;
    return st;
}

/* Runs a lora_plan.c step list; ptr[] maps its tensor names to memory. */
static aitk_status run_steps(const char *op, const aitk_lora_step *steps, int count,
                             void *const ptr[AITK_LORA_TENSORS], const void *bias)
{
    aitk_status st = AITK_OK;
    for (int i = 0; i < count && !st; i++) {
        const aitk_lora_step *s = &steps[i];
        st = matmul(op, ptr[s->c], s->c_f32, ptr[s->a], ptr[s->b], s->m, s->n, s->k, s->trans_a,
                    s->trans_b, s->alpha, s->beta, 1, 0, 0, 0, s->bias ? bias : NULL);
    }
    return st;
}

/* The tensors both directions read, by their slot in the step list
 * (lora_plan.h); the steps only read them. */
static void lora_inputs(void *ptr[AITK_LORA_TENSORS], const aitk_act *x, const aitk_act *w,
                        const uint16_t *la16, const uint16_t *lb16, const aitk_act *xa)
{
    ptr[AITK_LORA_X] = (void *)x;
    ptr[AITK_LORA_W] = (void *)w;
    ptr[AITK_LORA_A] = (void *)la16;
    ptr[AITK_LORA_B] = (void *)lb16;
    ptr[AITK_LORA_XA] = (void *)xa;
}

aitk_status aitk_cuda_lora_linear_forward(aitk_act *y, aitk_act *xa, const aitk_act *x,
                                          const aitk_act *w, const aitk_act *bias,
                                          const float *la, const float *lb, int n, int in,
                                          int out, int r, float scale)
{
    const char *op = "lora_linear_forward";
    aitk_status st = aitk_cuda_need_open(op);
    if (st)
        return st;
    if (!y || !x || !w || n <= 0 || in <= 0 || out <= 0 || r < 0 || (r > 0 && (!xa || !la || !lb)))
        return aitk_cuda_inval(op, "NULL tensor or impossible shape");
    const uint16_t *la16 = NULL, *lb16 = NULL;
    if (r > 0 && (st = lora_bf16(la, lb, in, out, r, &la16, &lb16)))
        return st;
    void *ptr[AITK_LORA_TENSORS] = {0};
    lora_inputs(ptr, x, w, la16, lb16, xa);
    ptr[AITK_LORA_Y] = y;
    aitk_lora_step steps[AITK_LORA_MAX_STEPS];
    int count = aitk_lora_forward_plan(steps, n, in, out, r, scale, bias != NULL);
    return run_steps(op, steps, count, ptr, bias);
}

aitk_status aitk_cuda_lora_linear_backward(aitk_act *dx, float *dla, float *dlb, aitk_act *work,
                                           const aitk_act *dy, const aitk_act *x,
                                           const aitk_act *xa, const aitk_act *w,
                                           const float *la, const float *lb, int n, int in,
                                           int out, int r, float scale, bool accumulate_dx)
{
    const char *op = "lora_linear_backward";
    aitk_status st = aitk_cuda_need_open(op);
    if (st)
        return st;
    if (!dy || !w || n <= 0 || in <= 0 || out <= 0 || r < 0 ||
        (r > 0 && (!dla || !dlb || !work || !x || !xa || !la || !lb)))
        return aitk_cuda_inval(op, "NULL tensor or impossible shape");
    const uint16_t *la16 = NULL, *lb16 = NULL;
    if (r > 0 && (st = lora_bf16(la, lb, in, out, r, &la16, &lb16)))
        return st;
    void *ptr[AITK_LORA_TENSORS] = {0};
    lora_inputs(ptr, x, w, la16, lb16, xa);
    ptr[AITK_LORA_DY] = (void *)dy;
    ptr[AITK_LORA_DX] = dx;
    ptr[AITK_LORA_WORK] = work;
    ptr[AITK_LORA_DA] = dla;
    ptr[AITK_LORA_DB] = dlb;
    aitk_lora_step steps[AITK_LORA_MAX_STEPS];
    int count = aitk_lora_backward_plan(steps, n, in, out, r, scale, dx != NULL, accumulate_dx);
    return run_steps(op, steps, count, ptr, NULL);
}
