/* Shape checks of the attention ops, plain C so the tests run them: what
 * ops.h accepts at all, and what the cuDNN fused SDPA path is asked to take
 * (anything else goes to the plain kernel, with the reason recorded). */
#ifndef AITK_KERNELS_CUDA_ATTENTION_CHECK_H
#define AITK_KERNELS_CUDA_ATTENTION_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ops.h's contract: positive sizes, hq a multiple of hkv, a finite scale. */
bool aitk_attention_shape_ok(int b, int t, int hq, int hkv, int d, float scale);

/* The oldest cuDNN (cudnnGetVersion's MAJOR*10000 + MINOR*100 + PATCH)
 * for each graph this backend builds (attention_cudnn_graph.h): the SDPA_FWD
 * node, the composite backward graph, and the SDPA_BWD node tried after it;
 * sources in attention_check.c. */
#define AITK_CUDNN_SDPA_FWD_VERSION 91301
#define AITK_CUDNN_SDPA_BWD_VERSION 90000
#define AITK_CUDNN_SDPA_BWD_NODE_VERSION 91700

/* NULL when cuDNN's SDPA may take the shape; else why not, in words
 * (static text). cudnn_version 0: no cuDNN. */
const char *aitk_attention_cudnn_refusal(int cudnn_version, int cc_major, int b, int t, int hq,
                                         int hkv, int d, bool backward);

/* What a failed cuDNN call (its cudnnStatus_t as an int) means for the
 * attention op: AITK_E_UNSUPPORTED when the plain kernel should run
 * instead, AITK_E_NOMEM when memory ran out (the op fails; the plain kernel
 * needs memory too). Whether the failure may be cached as the shape's
 * refusal is a separate question, answered by aitk_dnn_refusal_lasts
 * (cudnn_api.h). */
aitk_status aitk_cudnn_failure(int cudnn_status);

/* Dynamic shared memory (bytes) of the plain forward kernel for row
 * length t and head_dim d: a score row of t floats plus one head row; 0
 * when it does not fit in `smem_limit`. (The tiled backward has no
 * sequence-length limit: aitk_attention_bwd_tile.) */
size_t aitk_attention_plain_smem(int t, int d, size_t smem_limit);

/* Rows per tile of the plain backward (kernels/math/attention_tile.h) for
 * head_dim d: the largest of 64, 32, 16, 8 whose shared memory leaves room
 * for two resident blocks in `smem_limit`, else the largest that fits at
 * all; 0 when not even 8 rows fit. */
int aitk_attention_bwd_tile(int d, size_t smem_limit);

#ifdef __cplusplus
}
#endif

#endif
