/* Attention through cuDNN's fused SDPA (flash attention), by the backend
 * graph API: the graphs of attention_cudnn_graph.c planned on this
 * device's handle (cudnn_api.c), the first plan that finalizes cached per
 * shape. The forward is one SDPA_FWD node; the backward is the composite
 * graph NVIDIA's cuDNN frontend builds, and the SDPA_BWD node when cuDNN
 * refuses that. Never run on a GPU in this project's CI: see the GPU test;
 * the graphs and plans are held to cuDNN without a GPU by
 * cuda.cudnn_deviceless. */
#include <string.h>

#include "kernels/cuda/attention_check.h"
#include "kernels/cuda/attention_cudnn_graph.h"
#include "kernels/cuda/cudnn_api.h"
#include "kernels/cuda/gemm_map.h"
#include "kernels/cuda/internal.h"

static cudnnHandle_t handle;
static char open_error[256];            /* why cudnnCreate failed */
static const char *last_graph[2];       /* forward, backward: the graph that last ran */

int aitk_cudnn_runtime_version(void)
{
    return aitk_dnn_load() ? (int)aitk_dnn.GetVersion() : 0;
}

const char *aitk_cudnn_load_error(void)
{
    return open_error[0] ? open_error : aitk_dnn_load_error();
}

bool aitk_cudnn_ready(void)
{
    return handle != NULL;
}

/* ---- plans, cached per shape ---- */

enum { PLAN_SLOTS = 16 };

typedef struct sdpa_plan {
    bool used, backward;
    int b, t, hq, hkv, d;
    aitk_sdpa_graph_kind kind;     /* the graph the plan was made from */
    aitk_dnn_desc plan;            /* NULL: cuDNN refused the shape, for `refusal` */
    int64_t workspace;             /* what the plan asks for */
    int64_t softmax_sum, dq_accum; /* the composite backward's own buffers */
    char refusal[240];
} sdpa_plan;

static sdpa_plan plans[PLAN_SLOTS];
static int plan_next;

size_t aitk_cudnn_plan_cache_bytes(void)
{
    return 0; /* plans live in host memory; their device workspace is cudnn_ws */
}

static void plans_free(void)
{
    for (int i = 0; i < PLAN_SLOTS; i++)
        if (plans[i].plan)
            aitk_dnn.DestroyDescriptor(plans[i].plan);
    memset(plans, 0, sizeof plans);
    plan_next = 0;
}

aitk_status aitk_cudnn_open(void)
{
    open_error[0] = '\0';
    if (!aitk_dnn_load())
        return AITK_E_DLOPEN;
    cudnnStatus_t s = aitk_dnn.Create(&handle);
    if (s == CUDNN_STATUS_SUCCESS)
        s = aitk_dnn.SetStream(handle, aitk_cuda.stream);
    if (s != CUDNN_STATUS_SUCCESS) {
        aitk_cuda_errorf(open_error, sizeof open_error, "cudnnCreate: %s",
                         aitk_dnn.GetErrorString(s));
        if (handle)
            aitk_dnn.Destroy(handle);
        handle = NULL;
        return AITK_E_INTERNAL;
    }
    return AITK_OK;
}

void aitk_cudnn_close(void)
{
    if (!aitk_dnn.lib)
        return;
    plans_free();
    if (handle)
        aitk_dnn.Destroy(handle);
    handle = NULL;
}

/* Builds graph `kind` for the slot's shape and plans it on the handle;
 * *what names the failing step for the report. */
static cudnnStatus_t build_plan(sdpa_plan *p, aitk_sdpa_graph_kind kind, const char **what)
{
    aitk_sdpa_graph g;
    aitk_dnn_target target = {.handle = handle};
    int64_t configs = 0;
    cudnnStatus_t s = aitk_sdpa_graph_build(&g, kind, p->b, p->t, p->hq, p->hkv, p->d, what);
    if (!s)
        s = aitk_dnn_plan(&target, g.ops, g.nops, &p->plan, &p->workspace, &configs, what);
    if (!s) {
        p->kind = kind;
        p->softmax_sum = g.softmax_sum_bytes;
        p->dq_accum = g.dq_accum_bytes;
    }
    aitk_sdpa_graph_free(&g);
    return s;
}

/* The forward's one graph; for the backward the composite graph, then the
 * SDPA_BWD node where the library has it. A refusal names every graph
 * tried; its status is the first that does not last, if any did not, so
 * that the shape is tried again on the next call. */
static cudnnStatus_t build_plans(sdpa_plan *p, char *why, size_t len)
{
    aitk_sdpa_graph_kind kinds[2] = {AITK_SDPA_FORWARD, AITK_SDPA_FORWARD};
    int n = 1;
    if (p->backward) {
        kinds[0] = AITK_SDPA_BACKWARD_COMPOSITE;
        kinds[1] = AITK_SDPA_BACKWARD_NODE;
        n = aitk_dnn.GetVersion() >= AITK_CUDNN_SDPA_BWD_NODE_VERSION ? 2 : 1;
    }
    cudnnStatus_t failed = CUDNN_STATUS_NOT_SUPPORTED;
    size_t used = 0;
    why[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *what = "";
        cudnnStatus_t s = build_plan(p, kinds[i], &what);
        if (!s)
            return s;
        failed = aitk_dnn_fold_failure(failed, s);
        if (used < len)
            used += (size_t)snprintf(why + used, len - used, "%s%s: %s: %s", i ? "; " : "",
                                     aitk_sdpa_graph_name(kinds[i]), what,
                                     aitk_dnn.GetErrorString(s));
    }
    return failed;
}

/* Why the last uncached failure happened (an allocation during a plan
 * build, or an execution): the text of a slot that was given back. */
static char refusal[AITK_BACKEND_ERROR_LEN];

/* A failed execution, or a plan build that ran out of memory: nothing is
 * cached, so the next call tries again (aitk_dnn_refusal_lasts). */
static aitk_status failure(const char *text, cudnnStatus_t s, const char **why)
{
    aitk_status st = aitk_cudnn_failure((int)s);
    aitk_cuda_errorf(refusal, sizeof refusal, "%s", text);
    if (st == AITK_E_NOMEM)
        aitk_cuda_errorf(aitk_cuda.error, sizeof aitk_cuda.error, "cuDNN SDPA %s", refusal);
    *why = refusal;
    return st;
}

/* The cached plan for the shape, built on first use. A graph cuDNN
 * refused for good (aitk_dnn_refusal_lasts) stays refused for the shape
 * (p->plan NULL, no rebuild per call: building is not free, and the same
 * descriptors get the same answer); any other failure, a compile or an
 * allocation or a kernel load on a full device, frees the slot, and the
 * next call builds again. */
static aitk_status plan_for(bool backward, int b, int t, int hq, int hkv, int d,
                            sdpa_plan **out, const char **why)
{
    for (int i = 0; i < PLAN_SLOTS; i++) {
        sdpa_plan *p = &plans[i];
        if (p->used && p->backward == backward && p->b == b && p->t == t && p->hq == hq &&
            p->hkv == hkv && p->d == d) {
            *out = p;
            return p->plan ? AITK_OK : (*why = p->refusal, AITK_E_UNSUPPORTED);
        }
    }
    sdpa_plan *p = &plans[plan_next];
    plan_next = (plan_next + 1) % PLAN_SLOTS;
    if (p->plan)
        aitk_dnn.DestroyDescriptor(p->plan);
    *p = (sdpa_plan){.used = true, .backward = backward, .b = b, .t = t, .hq = hq,
                     .hkv = hkv, .d = d};
    *out = p;
    cudnnStatus_t s = build_plans(p, p->refusal, sizeof p->refusal);
    if (!s)
        return AITK_OK;
    if (!aitk_dnn_refusal_lasts(s)) {
        aitk_status st = failure(p->refusal, s, why);
        memset(p, 0, sizeof *p);
        return st;
    }
    *why = p->refusal;
    return AITK_E_UNSUPPORTED;
}

static size_t align256(int64_t bytes)
{
    return ((size_t)bytes + 255) / 256 * 256;
}

/* Runs the plan on the variant pack (n uids and pointers); the composite
 * backward's softmax_sum and dq_accum come after cuDNN's workspace in the
 * one buffer, their uids appended here. */
static aitk_status run(sdpa_plan *p, int n, int64_t *uids, void **ptrs, const char **why)
{
    size_t ws_bytes = align256(p->workspace), sum_bytes = align256(p->softmax_sum);
    size_t total = ws_bytes + sum_bytes + (size_t)p->dq_accum;
    if (total > 0) {
        aitk_status st = aitk_cuda_reserve(&aitk_cuda.cudnn_ws, &aitk_cuda.cudnn_ws_bytes, total,
                                           "cudaMallocAsync(cuDNN workspace)");
        if (st)
            return st;
    }
    char *base = aitk_cuda.cudnn_ws;
    static float one = 1.0f;
    if (p->kind == AITK_SDPA_BACKWARD_COMPOSITE) {
        uids[n] = AITK_SDPA_UID_ONE;
        ptrs[n++] = &one;
        uids[n] = AITK_SDPA_UID_SOFTMAX_SUM;
        ptrs[n++] = base + ws_bytes;
        uids[n] = AITK_SDPA_UID_DQ_ACCUM;
        ptrs[n++] = base + ws_bytes + sum_bytes;
        if (aitk_dnn.GetVersion() < 90600) {
            aitk_status st = aitk_cuda_check(
                cudaMemsetAsync(base + ws_bytes + sum_bytes, 0, (size_t)p->dq_accum,
                                aitk_cuda.stream),
                "cudaMemsetAsync(cuDNN dq_accum)");
            if (st)
                return st;
        }
    }
    aitk_dnn_desc pack = NULL;
    void *ws = base;
    cudnnStatus_t s = aitk_dnn.CreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
    if (!s)
        s = aitk_dnn.SetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
                                  uids);
    if (!s)
        s = aitk_dnn.SetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                  CUDNN_TYPE_VOID_PTR, n, ptrs);
    if (!s)
        s = aitk_dnn.SetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                  &ws);
    if (!s)
        s = aitk_dnn.Finalize(pack);
    if (!s)
        s = aitk_dnn.Execute(handle, p->plan, pack);
    if (pack)
        aitk_dnn.DestroyDescriptor(pack);
    if (!s) {
        last_graph[p->backward] = aitk_sdpa_graph_name(p->kind);
        return AITK_OK;
    }
    /* An execution failure never becomes the shape's cached refusal: the
     * plan stays, and the next call runs it again. */
    char text[200];
    aitk_cuda_errorf(text, sizeof text, "cudnnBackendExecute: %s", aitk_dnn.GetErrorString(s));
    return failure(text, s, why);
}

const char *aitk_cudnn_last_graph(bool backward)
{
    return last_graph[backward];
}

static const char *precheck(bool backward, int b, int t, int hq, int hkv, int d)
{
    if (!handle)
        return aitk_cudnn_load_error()[0] ? aitk_cudnn_load_error() : "cuDNN not loaded";
    return aitk_attention_cudnn_refusal((int)aitk_dnn.GetVersion(), aitk_cuda.cc_major, b, t, hq,
                                        hkv, d, backward);
}

/* The tensor descriptors promise 16-byte aligned data (BYTE_ALIGNMENT). */
static const char *aligned(const void *const *ptrs, int count)
{
    return aitk_gemm_alignment(ptrs, count) >= 16 ? NULL : "operands not 16-byte aligned";
}

aitk_status aitk_cudnn_sdpa_forward(aitk_act *out, float *lse, const aitk_act *q,
                                    const aitk_act *k, const aitk_act *v, int b, int t, int hq,
                                    int hkv, int d, float scale, const char **why)
{
    const void *ops_[] = {out, lse, q, k, v};
    if ((*why = precheck(false, b, t, hq, hkv, d)) ||
        (*why = aligned(ops_, (int)(sizeof ops_ / sizeof *ops_))))
        return AITK_E_UNSUPPORTED;
    sdpa_plan *p = NULL;
    aitk_status st = plan_for(false, b, t, hq, hkv, d, &p, why);
    if (st)
        return st;
    int64_t uids[8] = {AITK_SDPA_UID_Q, AITK_SDPA_UID_K,     AITK_SDPA_UID_V,
                       AITK_SDPA_UID_O, AITK_SDPA_UID_STATS, AITK_SDPA_UID_SCALE};
    void *ptrs[8] = {(void *)q, (void *)k, (void *)v, out, lse, &scale};
    return run(p, 6, uids, ptrs, why);
}

aitk_status aitk_cudnn_sdpa_backward(aitk_act *dq, aitk_act *dk, aitk_act *dv,
                                     const aitk_act *dout, const aitk_act *q, const aitk_act *k,
                                     const aitk_act *v, const aitk_act *out, const float *lse,
                                     int b, int t, int hq, int hkv, int d, float scale,
                                     const char **why)
{
    const void *ops_[] = {dq, dk, dv, dout, q, k, v, out, lse};
    if ((*why = precheck(true, b, t, hq, hkv, d)) ||
        (*why = aligned(ops_, (int)(sizeof ops_ / sizeof *ops_))))
        return AITK_E_UNSUPPORTED;
    sdpa_plan *p = NULL;
    aitk_status st = plan_for(true, b, t, hq, hkv, d, &p, why);
    if (st)
        return st;
    int64_t uids[16] = {AITK_SDPA_UID_Q,     AITK_SDPA_UID_K,     AITK_SDPA_UID_V,
                        AITK_SDPA_UID_O,     AITK_SDPA_UID_STATS, AITK_SDPA_UID_SCALE,
                        AITK_SDPA_UID_DQ,    AITK_SDPA_UID_DK,    AITK_SDPA_UID_DV,
                        AITK_SDPA_UID_DO};
    void *ptrs[16] = {(void *)q, (void *)k, (void *)v, (void *)out, (void *)lse, &scale,
                      dq,        dk,        dv,        (void *)dout};
    return run(p, 10, uids, ptrs, why);
}
