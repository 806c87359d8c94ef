/* Attention through cuDNN's fused SDPA (flash attention), by the backend
 * graph API of cudnn_graph.h: one SDPA_FWD or SDPA_BWD operation node in an
 * operation graph, the heuristic's engine configurations tried in order,
 * and the first plan that finalizes cached per shape.
 *
 * Why dlopen and not a link: libcudnn is a separate download, often missing
 * or of another major version on the machines this tool diagnoses. Linked,
 * the whole plugin would fail to load and the report would lose the GPU
 * entirely; opened at run time, the plugin loads without it, probe reports
 * cudnn_version 0, and attention runs the plain kernel with the reason in
 * the report's paths. Only the header's types and constants are used at
 * build time; every function comes through dlsym.
 *
 * Layout: q, out (B,T,Hq,D) and k, v (B,T,Hkv,D) are cuDNN's "BSHD" layout:
 * logical dims (B,H,S,D) with strides (T*H*D, D, H*D, 1). The stats tensor
 * (B,Hq,T,1) fp32 is cuDNN's softmax statistics, the natural-log
 * log-sum-exp of the scaled scores per query row (cuDNN's SDPA docs; the
 * same tensor PyTorch's cuDNN attention returns as logsumexp), which is
 * ops.h's lse, so it is passed through without conversion. GQA: K and V
 * simply have Hkv heads; cuDNN maps query head h to kv head h/(Hq/Hkv), as
 * ops.h does. Never run on a GPU in this project's CI: see the GPU test. */
#include <dlfcn.h>
#include <string.h>

#include <cudnn_graph.h>

#include "kernels/cuda/attention_check.h"
#include "kernels/cuda/gemm_map.h"
#include "kernels/cuda/internal.h"

/* The library's functions, resolved at run time. */
static struct {
    void *lib;
    bool tried;
    char load_error[256];
    size_t (*GetVersion)(void);
    const char *(*GetErrorString)(cudnnStatus_t);
    cudnnStatus_t (*Create)(cudnnHandle_t *);
    cudnnStatus_t (*Destroy)(cudnnHandle_t);
    cudnnStatus_t (*SetStream)(cudnnHandle_t, cudaStream_t);
    cudnnStatus_t (*CreateDescriptor)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t *);
    cudnnStatus_t (*DestroyDescriptor)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*Finalize)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*SetAttribute)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                                  cudnnBackendAttributeType_t, int64_t, const void *);
    cudnnStatus_t (*GetAttribute)(cudnnBackendDescriptor_t const, cudnnBackendAttributeName_t,
                                  cudnnBackendAttributeType_t, int64_t, int64_t *, void *);
    cudnnStatus_t (*Execute)(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t);
} dnn;

static cudnnHandle_t handle;

/* The handle attributes of the operation graph and the execution plan are
 * marked deprecated in cuDNN 9 headers but still accepted; their numeric
 * values keep the -Werror build free of deprecation warnings. */
#define ATTR_OPERATIONGRAPH_HANDLE ((cudnnBackendAttributeName_t)800)
#define ATTR_EXECUTION_PLAN_HANDLE ((cudnnBackendAttributeName_t)400)

static bool load(void)
{
    if (dnn.tried)
        return dnn.lib != NULL;
    dnn.tried = true;
    const char *names[] = {"libcudnn.so.9", "libcudnn.so"};
    for (size_t i = 0; i < sizeof names / sizeof *names && !dnn.lib; i++)
        dnn.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!dnn.lib) {
        const char *e = dlerror();
        aitk_cuda_errorf(dnn.load_error, sizeof dnn.load_error, "dlopen libcudnn.so.9: %s",
                         e ? e : "not found");
        return false;
    }
    /* dlsym returns void *; the cast through a union-free memcpy is what
     * ISO C allows for object -> function pointers. */
#define SYM(field, name)                                                                 \
    do {                                                                                 \
        void *p = dlsym(dnn.lib, name);                                                  \
        if (!p) {                                                                        \
            aitk_cuda_errorf(dnn.load_error, sizeof dnn.load_error, "dlsym %s: missing", \
                             name);                                                      \
            dlclose(dnn.lib);                                                            \
            dnn.lib = NULL;                                                              \
            return false;                                                                \
        }                                                                                \
        memcpy(&dnn.field, &p, sizeof p);                                                \
    } while (0)
    SYM(GetVersion, "cudnnGetVersion");
    SYM(GetErrorString, "cudnnGetErrorString");
    SYM(Create, "cudnnCreate");
    SYM(Destroy, "cudnnDestroy");
    SYM(SetStream, "cudnnSetStream");
    SYM(CreateDescriptor, "cudnnBackendCreateDescriptor");
    SYM(DestroyDescriptor, "cudnnBackendDestroyDescriptor");
    SYM(Finalize, "cudnnBackendFinalize");
    SYM(SetAttribute, "cudnnBackendSetAttribute");
    SYM(GetAttribute, "cudnnBackendGetAttribute");
    SYM(Execute, "cudnnBackendExecute");
#undef SYM
    return true;
}

int aitk_cudnn_runtime_version(void)
{
    return load() ? (int)dnn.GetVersion() : 0;
}

const char *aitk_cudnn_load_error(void)
{
    return dnn.load_error;
}

bool aitk_cudnn_ready(void)
{
    return handle != NULL;
}

/* ---- plans, cached per shape ---- */

enum { PLAN_SLOTS = 16, MAX_CFGS = 8 };

typedef struct sdpa_plan {
    bool used, backward;
    int b, t, hq, hkv, d;
    cudnnBackendDescriptor_t plan; /* NULL: cuDNN refused the shape, for `refusal` */
    int64_t workspace;
    char refusal[200];
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
            dnn.DestroyDescriptor(plans[i].plan);
    memset(plans, 0, sizeof plans);
    plan_next = 0;
}

aitk_status aitk_cudnn_open(void)
{
    if (!load())
        return AITK_E_DLOPEN;
    cudnnStatus_t s = dnn.Create(&handle);
    if (s == CUDNN_STATUS_SUCCESS)
        s = dnn.SetStream(handle, aitk_cuda.stream);
    if (s != CUDNN_STATUS_SUCCESS) {
        aitk_cuda_errorf(dnn.load_error, sizeof dnn.load_error, "cudnnCreate: %s",
                         dnn.GetErrorString(s));
        if (handle)
            dnn.Destroy(handle);
        handle = NULL;
        return AITK_E_INTERNAL;
    }
    return AITK_OK;
}

void aitk_cudnn_close(void)
{
    if (!dnn.lib)
        return;
    plans_free();
    if (handle)
        dnn.Destroy(handle);
    handle = NULL;
}

/* Uids of the graph's tensors (the variant pack names them). */
enum { UID_Q = 1, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE, UID_DQ, UID_DK, UID_DV, UID_DO };

/* A finalized tensor descriptor: BSHD strides for 4-d activations. */
static cudnnStatus_t tensor(cudnnBackendDescriptor_t *out, int64_t uid, cudnnDataType_t dt,
                            const int64_t dims[4], const int64_t strides[4], bool by_value)
{
    cudnnBackendDescriptor_t t = NULL;
    cudnnStatus_t s = dnn.CreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t);
    int64_t align = 16;
    bool bv = by_value;
    if (!s)
        s = dnn.SetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    if (!s)
        s = dnn.SetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    if (!s)
        s = dnn.SetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    if (!s)
        s = dnn.SetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    if (!s)
        s = dnn.SetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (!s && by_value)
        s = dnn.SetAttribute(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &bv);
    if (!s)
        s = dnn.Finalize(t);
    if (s && t) {
        dnn.DestroyDescriptor(t);
        t = NULL;
    }
    *out = t;
    return s;
}

static cudnnStatus_t set_desc(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
                              cudnnBackendDescriptor_t v)
{
    return dnn.SetAttribute(d, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

/* The graph's tensors, t[UID - 1] for each uid: q, k, v, out, stats and
 * the by-value scale; the backward adds dq, dk, dv and dout. */
enum { NT = UID_DO };

static cudnnStatus_t make_tensors(const sdpa_plan *p, cudnnBackendDescriptor_t t[NT])
{
    int64_t B = p->b, T = p->t, HQ = p->hq, HKV = p->hkv, D = p->d;
    int64_t qdims[4] = {B, HQ, T, D}, qstr[4] = {T * HQ * D, D, HQ * D, 1};
    int64_t kdims[4] = {B, HKV, T, D}, kstr[4] = {T * HKV * D, D, HKV * D, 1};
    int64_t sdims[4] = {B, HQ, T, 1}, sstr[4] = {HQ * T, T, 1, 1};
    int64_t one[4] = {1, 1, 1, 1};
    const struct {
        int uid;
        cudnnDataType_t dt;
        const int64_t *dims, *strides;
    } spec[NT] = {
        {UID_Q, CUDNN_DATA_BFLOAT16, qdims, qstr},  {UID_K, CUDNN_DATA_BFLOAT16, kdims, kstr},
        {UID_V, CUDNN_DATA_BFLOAT16, kdims, kstr},  {UID_O, CUDNN_DATA_BFLOAT16, qdims, qstr},
        {UID_STATS, CUDNN_DATA_FLOAT, sdims, sstr}, {UID_SCALE, CUDNN_DATA_FLOAT, one, one},
        {UID_DQ, CUDNN_DATA_BFLOAT16, qdims, qstr}, {UID_DK, CUDNN_DATA_BFLOAT16, kdims, kstr},
        {UID_DV, CUDNN_DATA_BFLOAT16, kdims, kstr}, {UID_DO, CUDNN_DATA_BFLOAT16, qdims, qstr},
    };
    int count = p->backward ? NT : UID_SCALE;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < count && !s; i++)
        s = tensor(&t[i], spec[i].uid, spec[i].dt, spec[i].dims, spec[i].strides,
                   spec[i].uid == UID_SCALE);
    return s;
}

/* The SDPA_FWD or SDPA_BWD node over the tensors, finalized. */
static cudnnStatus_t make_sdpa_op(const sdpa_plan *p, cudnnBackendDescriptor_t t[NT],
                                  cudnnBackendDescriptor_t *op)
{
    static const cudnnBackendAttributeName_t fwd[] = {
        CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC,     CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
        CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC,     CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC,
        CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC};
    static const cudnnBackendAttributeName_t bwd[] = {
        CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC,     CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC,
        CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC,     CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC,
        CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC,
        CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC,    CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC,
        CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC,    CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC};
    const cudnnBackendAttributeName_t *attr = p->backward ? bwd : fwd;
    int count = p->backward ? (int)(sizeof bwd / sizeof *bwd) : (int)(sizeof fwd / sizeof *fwd);
    cudnnStatus_t s = dnn.CreateDescriptor(p->backward
                                               ? CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR
                                               : CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR,
                                           op);
    for (int i = 0; i < count && !s; i++)
        s = set_desc(*op, attr[i], t[i]);
    return s ? s : dnn.Finalize(*op);
}

/* A one-node operation graph on the handle, finalized. */
static cudnnStatus_t make_graph(cudnnBackendDescriptor_t op, cudnnBackendDescriptor_t *graph)
{
    cudnnStatus_t s = dnn.CreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph);
    if (!s)
        s = dnn.SetAttribute(*graph, ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    if (!s)
        s = set_desc(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, op);
    return s ? s : dnn.Finalize(*graph);
}

/* Heuristic mode A's engine configurations for the graph, best first:
 * up to MAX_CFGS in cfg, *ncfg of them filled; none is NOT_SUPPORTED. */
static cudnnStatus_t make_configs(cudnnBackendDescriptor_t graph, cudnnBackendDescriptor_t *heur,
                                  cudnnBackendDescriptor_t cfg[MAX_CFGS], int64_t *ncfg)
{
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    cudnnStatus_t s = dnn.CreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, heur);
    if (!s)
        s = set_desc(*heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    if (!s)
        s = dnn.SetAttribute(*heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (!s)
        s = dnn.Finalize(*heur);
    for (int i = 0; i < MAX_CFGS && !s; i++)
        s = dnn.CreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]);
    if (!s)
        s = dnn.GetAttribute(*heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                             MAX_CFGS, ncfg, cfg);
    return !s && *ncfg == 0 ? CUDNN_STATUS_NOT_SUPPORTED : s;
}

/* The first configuration whose execution plan finalizes wins: it goes in
 * p->plan with its workspace size; the last failure otherwise. */
static cudnnStatus_t first_plan(sdpa_plan *p, cudnnBackendDescriptor_t cfg[MAX_CFGS],
                                int64_t ncfg)
{
    cudnnStatus_t s = CUDNN_STATUS_NOT_SUPPORTED;
    for (int64_t i = 0; i < ncfg; i++) {
        cudnnBackendDescriptor_t plan = NULL;
        int64_t got = 0;
        s = dnn.CreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
        if (!s)
            s = dnn.SetAttribute(plan, ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
        if (!s)
            s = set_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg[i]);
        if (!s)
            s = dnn.Finalize(plan);
        if (!s)
            s = dnn.GetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                 CUDNN_TYPE_INT64, 1, &got, &p->workspace);
        if (!s) {
            p->plan = plan;
            return s;
        }
        if (plan)
            dnn.DestroyDescriptor(plan);
    }
    return s;
}

static void destroy_all(cudnnBackendDescriptor_t *d, int n)
{
    for (int i = 0; i < n; i++)
        if (d[i])
            dnn.DestroyDescriptor(d[i]);
}

/* Builds the graph for one shape and keeps the first plan that finalizes;
 * *what names the failing step for the report. Only the plan outlives the
 * call: every other descriptor is destroyed here. */
static cudnnStatus_t build_plan(sdpa_plan *p, const char **what)
{
    cudnnBackendDescriptor_t t[NT] = {0}, cfg[MAX_CFGS] = {0};
    cudnnBackendDescriptor_t op = NULL, graph = NULL, heur = NULL;
    int64_t ncfg = 0;
    *what = "tensor descriptors";
    cudnnStatus_t s = make_tensors(p, t);
    if (!s) {
        *what = p->backward ? "SDPA_BWD operation" : "SDPA_FWD operation";
        s = make_sdpa_op(p, t, &op);
    }
    if (!s) {
        *what = "operation graph";
        s = make_graph(op, &graph);
    }
    if (!s) {
        *what = "engine heuristics";
        s = make_configs(graph, &heur, cfg, &ncfg);
    }
    if (!s) {
        *what = "execution plan";
        s = first_plan(p, cfg, ncfg);
    }
    destroy_all(cfg, MAX_CFGS);
    cudnnBackendDescriptor_t rest[3] = {heur, graph, op};
    destroy_all(rest, 3);
    destroy_all(t, NT);
    return s;
}

/* Why the last uncached failure happened (a plan build that may pass later,
 * or an execution): the refusal text of a slot that was given back. */
static char refusal[AITK_BACKEND_ERROR_LEN];

/* A failed cuDNN call `what` for the op: a refusal of the shape stays in
 * `slot` (NULL: nothing to cache), anything else frees the slot so the next
 * call tries again (aitk_cudnn_failure). AITK_E_UNSUPPORTED sends the call
 * to the plain kernel with *why set; AITK_E_NOMEM fails the op. */
static aitk_status failure(sdpa_plan *slot, const char *what, cudnnStatus_t s, const char **why)
{
    bool cache = false;
    aitk_status st = aitk_cudnn_failure((int)s, &cache);
    char *text = cache && slot ? slot->refusal : refusal;
    size_t len = cache && slot ? sizeof slot->refusal : sizeof refusal;
    aitk_cuda_errorf(text, len, "%s: %s", what, dnn.GetErrorString(s));
    if (slot && !cache) {
        if (slot->plan)
            dnn.DestroyDescriptor(slot->plan);
        memset(slot, 0, sizeof *slot);
    }
    if (st == AITK_E_NOMEM)
        aitk_cuda_errorf(aitk_cuda.error, sizeof aitk_cuda.error, "cuDNN SDPA %s", text);
    *why = text;
    return st;
}

/* The cached plan for the shape, built on first use. A shape cuDNN refused
 * stays refused (p->plan NULL, no rebuild per call); see failure(). */
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
        dnn.DestroyDescriptor(p->plan);
    memset(p, 0, sizeof *p);
    p->used = true;
    p->backward = backward;
    p->b = b;
    p->t = t;
    p->hq = hq;
    p->hkv = hkv;
    p->d = d;
    const char *what = "";
    cudnnStatus_t s = build_plan(p, &what);
    *out = p;
    return s ? failure(p, what, s, why) : AITK_OK;
}

static aitk_status run(sdpa_plan *p, int n, const int64_t *uids, void *const *ptrs,
                       const char **why)
{
    if (p->workspace > 0) {
        aitk_status st =
            aitk_cuda_reserve(&aitk_cuda.cudnn_ws, &aitk_cuda.cudnn_ws_bytes,
                              (size_t)p->workspace, "cudaMallocAsync(cuDNN workspace)");
        if (st)
            return st;
    }
    cudnnBackendDescriptor_t pack = NULL;
    cudnnStatus_t s = dnn.CreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
    void *ws = aitk_cuda.cudnn_ws;
    if (!s)
        s = dnn.SetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    if (!s)
        s = dnn.SetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                             ptrs);
    if (!s)
        s = dnn.SetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    if (!s)
        s = dnn.Finalize(pack);
    if (!s)
        s = dnn.Execute(handle, p->plan, pack);
    if (pack)
        dnn.DestroyDescriptor(pack);
    /* An execution failure never becomes the shape's cached refusal: the
     * plan stays, and the next call runs it again. */
    return s ? failure(NULL, "cudnnBackendExecute", s, why) : AITK_OK;
}

static const char *precheck(bool backward, int b, int t, int hq, int hkv, int d)
{
    if (!handle)
        return dnn.load_error[0] ? dnn.load_error : "cuDNN not loaded";
    return aitk_attention_cudnn_refusal((int)dnn.GetVersion(), aitk_cuda.cc_major, b, t, hq,
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
    int64_t uids[] = {UID_Q, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE};
    void *ptrs[] = {(void *)q, (void *)k, (void *)v, out, lse, &scale};
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
    int64_t uids[] = {UID_Q, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE,
                      UID_DQ, UID_DK, UID_DV, UID_DO};
    void *ptrs[] = {(void *)q, (void *)k, (void *)v, (void *)out, (void *)lse, &scale,
                    dq, dk, dv, (void *)dout};
    return run(p, 10, uids, ptrs, why);
}
