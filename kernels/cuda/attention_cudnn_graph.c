/* cuDNN's SDPA operation graphs for one shape (see attention_cudnn_graph.h).
 *
 * The composite backward follows the operation list of NVIDIA's cuDNN
 * frontend (CompositeSDPABackwardNode::expand_node, cudnn-frontend at
 * 3929da2, 2026-05-08) for attention without mask, bias or dropout, in its
 * order and with its data types: cuDNN's engines match the pattern, so a
 * graph that computes the same values another way is not fused. With P the
 * softmax and dO the output's gradient:
 *   softmax_sum = rowsum(dO * O)                       (fp32, kept)
 *   P   = exp(scale * Q K^T - stats)                    (recomputed)
 *   dV  = P^T dO
 *   dS  = scale * P * (dO V^T - softmax_sum)
 *   dK  = dS^T Q,   dQ = dS K                           (dQ summed in fp32)
 * K and V enter transposed, as views of the same memory (the frontend swaps
 * their last two dimensions and strides). With fewer K/V heads than query
 * heads (GQA), dK and dV are first formed per query head and then summed
 * over each group by a reduction, as the frontend does. */
#include "kernels/cuda/attention_cudnn_graph.h"

#include <string.h>

const char *aitk_sdpa_graph_name(aitk_sdpa_graph_kind kind)
{
    switch (kind) {
    case AITK_SDPA_FORWARD:
        return "SDPA_FWD node";
    case AITK_SDPA_BACKWARD_COMPOSITE:
        return "composite backward graph";
    case AITK_SDPA_BACKWARD_NODE:
        return "SDPA_BWD node";
    }
    return "?";
}

typedef struct shape {
    int64_t b, t, hq, hkv, d;
} shape;

/* The graph being built, and the uid of its next virtual tensor. */
typedef struct builder {
    aitk_sdpa_graph *g;
    shape s;
    int64_t next_uid;
    const char **what;
} builder;

static cudnnStatus_t tensor(builder *bd, aitk_dnn_desc *out, int64_t uid, cudnnDataType_t type,
                            const int64_t dims[4], const int64_t strides[4], unsigned flags)
{
    return aitk_dnn_tensor(&bd->g->descs, out, uid, type, dims, strides, flags);
}

/* A virtual (never stored) tensor with the next free uid. */
static cudnnStatus_t virt(builder *bd, aitk_dnn_desc *out, cudnnDataType_t type,
                          const int64_t dims[4], const int64_t strides[4])
{
    return tensor(bd, out, bd->next_uid++, type, dims, strides, AITK_DNN_VIRTUAL);
}

/* One pointwise operation of the graph; b NULL for a unary mode. */
static cudnnStatus_t pointwise(builder *bd, cudnnPointwiseMode_t mode, aitk_dnn_desc a,
                               aitk_dnn_desc b, aitk_dnn_desc out)
{
    return aitk_dnn_pointwise(&bd->g->descs, bd->g->ops, &bd->g->nops, mode, a, b, out);
}

/* The graph's stored tensors, t[uid - 1]; K and V transposed for the
 * composite backward. */
enum { N_IO = AITK_SDPA_UID_DQ_ACCUM };

static cudnnStatus_t io_tensors(builder *bd, aitk_dnn_desc t[N_IO])
{
    const shape *s = &bd->s;
    const cudnnDataType_t BF = CUDNN_DATA_BFLOAT16, F = CUDNN_DATA_FLOAT;
    bool composite = bd->g->kind == AITK_SDPA_BACKWARD_COMPOSITE;
    int64_t qd[4] = {s->b, s->hq, s->t, s->d}, qs[4] = {s->t * s->hq * s->d, s->d, s->hq * s->d, 1};
    int64_t kd[4] = {s->b, s->hkv, s->t, s->d};
    int64_t ks[4] = {s->t * s->hkv * s->d, s->d, s->hkv * s->d, 1};
    int64_t ktd[4] = {s->b, s->hkv, s->d, s->t};
    int64_t kts[4] = {s->t * s->hkv * s->d, s->d, 1, s->hkv * s->d};
    int64_t rd[4] = {s->b, s->hq, s->t, 1}, rs[4] = {s->hq * s->t, s->t, 1, 1};
    int64_t ad[4] = {s->b, s->hq, s->t, s->d}, as[4] = {s->hq * s->t * s->d, s->t * s->d, s->d, 1};
    int64_t one[4] = {1, 1, 1, 1};
    const struct {
        cudnnDataType_t type;
        const int64_t *dims, *strides;
        unsigned flags;
    } spec[N_IO] = {
        {BF, qd, qs, 0},
        {BF, composite ? ktd : kd, composite ? kts : ks, 0},
        {BF, composite ? ktd : kd, composite ? kts : ks, 0},
        {BF, qd, qs, 0},
        {F, rd, rs, 0},
        {F, one, one, AITK_DNN_BY_VALUE},
        {BF, qd, qs, 0},
        {BF, kd, ks, 0},
        {BF, kd, ks, 0},
        {BF, qd, qs, 0},
        {F, one, one, AITK_DNN_BY_VALUE},
        {F, rd, rs, 0},
        {F, ad, as, 0},
    };
    int count = bd->g->kind == AITK_SDPA_FORWARD ? AITK_SDPA_UID_SCALE
                : composite                       ? N_IO
                                                  : AITK_SDPA_UID_DO;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    *bd->what = "tensor descriptors";
    for (int i = 0; i < count && !st; i++)
        st = tensor(bd, &t[i], i + 1, spec[i].type, spec[i].dims, spec[i].strides,
                    spec[i].flags);
    return st;
}

/* One SDPA_FWD or SDPA_BWD operation over the stored tensors. */
static cudnnStatus_t single_node(builder *bd, aitk_dnn_desc t[N_IO])
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
    bool backward = bd->g->kind == AITK_SDPA_BACKWARD_NODE;
    const cudnnBackendAttributeName_t *attr = backward ? bwd : fwd;
    int count = backward ? (int)(sizeof bwd / sizeof *bwd) : (int)(sizeof fwd / sizeof *fwd);
    aitk_dnn_list *l = &bd->g->descs;
    aitk_dnn_desc op = NULL;
    *bd->what = backward ? "SDPA_BWD operation" : "SDPA_FWD operation";
    if (l->n >= AITK_DNN_MAX_DESCS)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = aitk_dnn.CreateDescriptor(
        backward ? CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR
                 : CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR,
        &op);
    if (st)
        return st;
    l->d[l->n++] = op;
    for (int i = 0; i < count && !st; i++)
        st = aitk_dnn.SetAttribute(op, attr[i], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t[i]);
    if (!st)
        st = aitk_dnn.Finalize(op);
    if (!st)
        bd->g->ops[bd->g->nops++] = op;
    return st;
}

/* softmax_sum = rowsum(dO * O) * 1. */
static cudnnStatus_t softmax_sum(builder *bd, aitk_dnn_desc t[N_IO])
{
    const shape *s = &bd->s;
    aitk_sdpa_graph *g = bd->g;
    int64_t pd[4] = {s->b, s->hq, s->t, s->d};
    int64_t ps[4] = {s->hq * s->t * s->d, s->t * s->d, s->hq * s->d, 1};
    int64_t rd[4] = {s->b, s->hq, s->t, 1}, rs[4] = {s->hq * s->t, s->t, 1, 1};
    aitk_dnn_desc prod = NULL, sum = NULL;
    *bd->what = "softmax_sum = rowsum(dO * O)";
    cudnnStatus_t st = virt(bd, &prod, CUDNN_DATA_FLOAT, pd, ps);
    if (!st)
        st = virt(bd, &sum, CUDNN_DATA_FLOAT, rd, rs);
    if (!st)
        st = pointwise(bd, CUDNN_POINTWISE_MUL, t[AITK_SDPA_UID_DO - 1], t[AITK_SDPA_UID_O - 1],
                       prod);
    if (!st)
        st = aitk_dnn_reduce_add(&g->descs, g->ops, &g->nops, prod, sum);
    if (!st)
        st = pointwise(bd, CUDNN_POINTWISE_MUL, sum, t[AITK_SDPA_UID_ONE - 1],
                       t[AITK_SDPA_UID_SOFTMAX_SUM - 1]);
    return st;
}

/* out = a x b into `target` (dK or dV): directly with as many K/V heads as
 * query heads, else per query head and summed over each group. */
static cudnnStatus_t grad_kv(builder *bd, aitk_dnn_desc a, aitk_dnn_desc b,
                             aitk_dnn_desc target)
{
    const shape *s = &bd->s;
    aitk_sdpa_graph *g = bd->g;
    if (s->hq == s->hkv)
        return aitk_dnn_matmul(&g->descs, g->ops, &g->nops, a, b, target);
    int64_t fd[4] = {s->b, s->hq, s->t, s->d};
    int64_t fs[4] = {s->hq * s->t * s->d, s->t * s->d, s->d, 1};
    aitk_dnn_desc full = NULL;
    cudnnStatus_t st = virt(bd, &full, CUDNN_DATA_BFLOAT16, fd, fs);
    if (!st)
        st = aitk_dnn_matmul(&g->descs, g->ops, &g->nops, a, b, full);
    if (!st)
        st = aitk_dnn_reduce_add(&g->descs, g->ops, &g->nops, full, target);
    return st;
}

/* Four (b, hq, t, t) fp32 virtual tensors in row order, and a bf16 view
 * of the fourth's memory transposed (the operand of dV = P^T dO and
 * dK = dS^T Q), with uids in that order. */
static cudnnStatus_t score_tensors(builder *bd, aitk_dnn_desc *v[4], aitk_dnn_desc *transposed)
{
    const shape *s = &bd->s;
    int64_t sd[4] = {s->b, s->hq, s->t, s->t}, ss[4] = {s->hq * s->t * s->t, s->t * s->t, s->t, 1};
    int64_t ts[4] = {s->hq * s->t * s->t, s->t * s->t, 1, s->t};
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < 4 && !st; i++)
        st = virt(bd, v[i], CUDNN_DATA_FLOAT, sd, ss);
    if (!st)
        st = virt(bd, transposed, CUDNN_DATA_BFLOAT16, sd, ts);
    return st;
}

/* The tail both score chains share: `last` viewed transposed as
 * `transposed`, times `other`, into the K/V gradient `target`. */
static cudnnStatus_t transposed_product(builder *bd, aitk_dnn_desc last,
                                        aitk_dnn_desc transposed, aitk_dnn_desc other,
                                        aitk_dnn_desc target)
{
    aitk_sdpa_graph *g = bd->g;
    cudnnStatus_t st = aitk_dnn_reshape(&g->descs, g->ops, &g->nops, last, transposed);
    if (!st)
        st = grad_kv(bd, transposed, other, target);
    return st;
}

/* P = exp(scale * Q K^T - stats) into *p; dV = P^T dO. */
static cudnnStatus_t softmax_and_dv(builder *bd, aitk_dnn_desc t[N_IO], aitk_dnn_desc *p)
{
    aitk_sdpa_graph *g = bd->g;
    aitk_dnn_desc scores = NULL, scaled = NULL, shifted = NULL, pt = NULL;
    *bd->what = "P = exp(scale * Q K^T - stats), dV = P^T dO";
    cudnnStatus_t st = score_tensors(bd, (aitk_dnn_desc *[4]){&scores, &scaled, &shifted, p}, &pt);
    if (!st)
        st = aitk_dnn_matmul(&g->descs, g->ops, &g->nops, t[AITK_SDPA_UID_Q - 1],
                             t[AITK_SDPA_UID_K - 1], scores);
    if (!st)
        st = pointwise(bd, CUDNN_POINTWISE_MUL, scores, t[AITK_SDPA_UID_SCALE - 1], scaled);
    if (!st)
        st = pointwise(bd, CUDNN_POINTWISE_SUB, scaled, t[AITK_SDPA_UID_STATS - 1], shifted);
    if (!st)
        st = pointwise(bd, CUDNN_POINTWISE_EXP, shifted, NULL, *p);
    if (!st)
        st = transposed_product(bd, *p, pt, t[AITK_SDPA_UID_DO - 1], t[AITK_SDPA_UID_DV - 1]);
    return st;
}

/* dS = scale * P * (dO V^T - softmax_sum) into *ds; dK = dS^T Q. */
static cudnnStatus_t ds_and_dk(builder *bd, aitk_dnn_desc t[N_IO], aitk_dnn_desc p,
                               aitk_dnn_desc *ds)
{
    aitk_sdpa_graph *g = bd->g;
    aitk_dnn_desc dp = NULL, centred = NULL, weighted = NULL, dst = NULL;
    *bd->what = "dS = scale * P * (dO V^T - softmax_sum), dK = dS^T Q";
    cudnnStatus_t st = score_tensors(bd, (aitk_dnn_desc *[4]){&dp, &centred, &weighted, ds}, &dst);
    if (!st)
        st = aitk_dnn_matmul(&g->descs, g->ops, &g->nops, t[AITK_SDPA_UID_DO - 1],
                             t[AITK_SDPA_UID_V - 1], dp);
    if (!st)
        st = pointwise(bd, CUDNN_POINTWISE_SUB, dp, t[AITK_SDPA_UID_SOFTMAX_SUM - 1], centred);
    if (!st)
        st = pointwise(bd, CUDNN_POINTWISE_MUL, centred, p, weighted);
    if (!st)
        st = pointwise(bd, CUDNN_POINTWISE_MUL, weighted, t[AITK_SDPA_UID_SCALE - 1], *ds);
    if (!st)
        st = transposed_product(bd, *ds, dst, t[AITK_SDPA_UID_Q - 1], t[AITK_SDPA_UID_DK - 1]);
    return st;
}

/* dQ = dS K, summed in fp32 into dq_accum and converted into dQ. */
static cudnnStatus_t dq(builder *bd, aitk_dnn_desc t[N_IO], aitk_dnn_desc ds)
{
    const shape *s = &bd->s;
    aitk_sdpa_graph *g = bd->g;
    int64_t kd[4] = {s->b, s->hkv, s->t, s->d};
    int64_t ks[4] = {s->t * s->hkv * s->d, s->d, s->hkv * s->d, 1};
    aitk_dnn_desc k = NULL;
    *bd->what = "dQ = dS K";
    /* FLOAT, as the frontend leaves it: its reshape fills the unset type
     * from the context's intermediate type before it would copy the
     * input's (ReshapeNode::infer_properties_node). */
    cudnnStatus_t st = virt(bd, &k, CUDNN_DATA_FLOAT, kd, ks);
    if (!st)
        st = aitk_dnn_reshape(&g->descs, g->ops, &g->nops, t[AITK_SDPA_UID_K - 1], k);
    if (!st)
        st = aitk_dnn_matmul(&g->descs, g->ops, &g->nops, ds, k,
                             t[AITK_SDPA_UID_DQ_ACCUM - 1]);
    if (!st)
        st = pointwise(bd, CUDNN_POINTWISE_IDENTITY, t[AITK_SDPA_UID_DQ_ACCUM - 1], NULL,
                       t[AITK_SDPA_UID_DQ - 1]);
    return st;
}

static cudnnStatus_t composite_backward(builder *bd, aitk_dnn_desc t[N_IO])
{
    const shape *s = &bd->s;
    aitk_dnn_desc p = NULL, ds = NULL;
    cudnnStatus_t st = softmax_sum(bd, t);
    if (!st)
        st = softmax_and_dv(bd, t, &p);
    if (!st)
        st = ds_and_dk(bd, t, p, &ds);
    if (!st)
        st = dq(bd, t, ds);
    if (!st) {
        bd->g->softmax_sum_bytes = s->b * s->hq * s->t * (int64_t)sizeof(float);
        bd->g->dq_accum_bytes = s->b * s->hq * s->t * s->d * (int64_t)sizeof(float);
    }
    return st;
}

cudnnStatus_t aitk_sdpa_graph_build(aitk_sdpa_graph *g, aitk_sdpa_graph_kind kind, int b, int t,
                                    int hq, int hkv, int d, const char **what)
{
    memset(g, 0, sizeof *g);
    g->kind = kind;
    builder bd = {.g = g, .s = {b, t, hq, hkv, d}, .next_uid = 100, .what = what};
    aitk_dnn_desc io[N_IO] = {0};
    cudnnStatus_t st = io_tensors(&bd, io);
    if (!st)
        st = kind == AITK_SDPA_BACKWARD_COMPOSITE ? composite_backward(&bd, io)
                                                  : single_node(&bd, io);
    if (st)
        aitk_sdpa_graph_free(g);
    return st;
}

void aitk_sdpa_graph_free(aitk_sdpa_graph *g)
{
    aitk_dnn_list_free(&g->descs);
    g->nops = 0;
}
