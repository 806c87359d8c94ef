/* The operation graphs of cuDNN's fused attention (SDPA), built for one
 * shape with no handle, so a test can plan them without a GPU:
 * - the forward: one SDPA_FWD operation node (cuDNN 9.13.1 and later);
 * - the backward as NVIDIA's cuDNN frontend builds it (CompositeSDPABackward
 *   in include/cudnn_frontend/node/scaled_dot_product_flash_attention.h):
 *   matmul, pointwise, reduction and reshape operations that cuDNN's engines
 *   recognize as one fused flash-attention backward;
 * - the backward as one SDPA_BWD operation node (cuDNN 9.17 headers), which
 *   cuDNN 9.19 refuses when the operation graph is finalized, on an H200 and
 *   deviceless alike: kept as the second try.
 *
 * Layout: q, out, dq, dout (B,T,Hq,D) and k, v, dk, dv (B,T,Hkv,D) are
 * cuDNN's "BSHD": logical dims (B,H,S,D), strides (T*H*D, D, H*D, 1). stats
 * (B,Hq,T,1) fp32 is the natural-log log-sum-exp of the scaled scores per
 * query row, ops.h's lse. */
#ifndef AITK_KERNELS_CUDA_ATTENTION_CUDNN_GRAPH_H
#define AITK_KERNELS_CUDA_ATTENTION_CUDNN_GRAPH_H

#include <stdint.h>

#include "kernels/cuda/cudnn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aitk_sdpa_graph_kind {
    AITK_SDPA_FORWARD,
    AITK_SDPA_BACKWARD_COMPOSITE,
    AITK_SDPA_BACKWARD_NODE,
} aitk_sdpa_graph_kind;

/* What the report calls each kind. */
const char *aitk_sdpa_graph_name(aitk_sdpa_graph_kind kind);

/* The variant pack's uids. ONE is the by-value 1.0 the composite graph
 * multiplies by; SOFTMAX_SUM (B,Hq,T,1) and DQ_ACCUM (B,Hq,T,D), both fp32,
 * are its buffers in device memory (see softmax_sum_bytes). */
enum {
    AITK_SDPA_UID_Q = 1,
    AITK_SDPA_UID_K,
    AITK_SDPA_UID_V,
    AITK_SDPA_UID_O,
    AITK_SDPA_UID_STATS,
    AITK_SDPA_UID_SCALE,
    AITK_SDPA_UID_DQ,
    AITK_SDPA_UID_DK,
    AITK_SDPA_UID_DV,
    AITK_SDPA_UID_DO,
    AITK_SDPA_UID_ONE,
    AITK_SDPA_UID_SOFTMAX_SUM,
    AITK_SDPA_UID_DQ_ACCUM,
};

enum { AITK_SDPA_MAX_OPS = 24 };

typedef struct aitk_sdpa_graph {
    aitk_sdpa_graph_kind kind;
    aitk_dnn_list descs; /* every descriptor, freed by aitk_sdpa_graph_free */
    aitk_dnn_desc ops[AITK_SDPA_MAX_OPS];
    int nops;
    /* Device buffers the composite backward needs beside cuDNN's workspace
     * (0 for the single nodes). dq_accum must be zeroed before each run on
     * cuDNN before 9.6.0; later versions zero it themselves (the frontend's
     * collect_tensors_in_workspace_node). */
    int64_t softmax_sum_bytes, dq_accum_bytes;
} aitk_sdpa_graph;

/* Builds the graph's finalized operations; on failure *what names the
 * tensor or operation that cuDNN refused. */
cudnnStatus_t aitk_sdpa_graph_build(aitk_sdpa_graph *g, aitk_sdpa_graph_kind kind, int b, int t,
                                    int hq, int hkv, int d, const char **what);
void aitk_sdpa_graph_free(aitk_sdpa_graph *g);

#ifdef __cplusplus
}
#endif

#endif
