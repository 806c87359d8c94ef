/* Attention shape checks (attention_check.h). */
#include "kernels/cuda/attention_check.h"

#include <math.h>

#include "kernels/math/attention_tile.h"

bool aitk_attention_shape_ok(int b, int t, int hq, int hkv, int d, float scale)
{
    return b > 0 && t > 0 && hq > 0 && hkv > 0 && d > 0 && hq % hkv == 0 && isfinite(scale);
}

/* The version gates are when each graph's operations appeared. The doc
 * comments of NVIDIA's cudnn_graph.h (cuDNN 9.22.0, enum
 * cudnnBackendDescriptorType_t) date CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR
 * "Since cuDNN 9.13.0" and CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR "Since
 * cuDNN 9.17.0"; NVIDIA's own cudnn-frontend (v1.23.0,
 * include/cudnn_frontend/node/scaled_dot_product_flash_attention.h,
 * UnifiedSDPANode) builds the forward node only on a 9.13.1 or newer
 * library, so forward asks for 9.13.1 here as well. The backward is the
 * frontend's composite graph of matmul, pointwise, reduction and reshape
 * operations, all in every cuDNN 9; the same frontend
 * (CompositeSDPABackwardNode::pre_validate_node, cudnn-frontend 3929da2)
 * refuses it on 9.10.0 and 9.10.1 ("known problematic versions") and for a
 * sequence of one token, and up to 9.15 builds a padding mask into it when
 * the sequence is not a multiple of 128, which this backend does not: such
 * a shape is refused here and runs the math path. An older library is refused before any descriptor is made,
 * so the report names the version.
 *
 * The shape limits are cuDNN's documented SDPA support matrix for
 * fp16/bf16, as the frontend checks them: compute capability 8.0 or newer,
 * head_dim a multiple of 8, at most 256 (forward everywhere, backward on
 * Hopper) or 128 (backward elsewhere). FLUX's 128 and OmniGen2's 120 both
 * pass; a refused shape runs the math path. */
const char *aitk_attention_cudnn_refusal(int cudnn_version, int cc_major, int b, int t, int hq,
                                         int hkv, int d, bool backward)
{
    if (cudnn_version <= 0)
        return "cuDNN not loaded";
    if (!backward && cudnn_version < AITK_CUDNN_SDPA_FWD_VERSION)
        return "cuDNN older than 9.13.1 has no single-node SDPA forward";
    if (backward && cudnn_version < AITK_CUDNN_SDPA_BWD_VERSION)
        return "cuDNN older than 9.0.0";
    if (backward && (cudnn_version == 91000 || cudnn_version == 91001))
        return "cuDNN 9.10.0 and 9.10.1 have a known SDPA backward fault";
    if (cc_major < 8)
        return "cuDNN SDPA needs compute capability 8.0 or newer";
    if (!aitk_attention_shape_ok(b, t, hq, hkv, d, 1.0f))
        return "invalid shape";
    if (d % 8 != 0)
        return "head_dim not a multiple of 8";
    if (d > 256)
        return "head_dim above 256";
    if (backward && cc_major != 9 && d > 128)
        return "backward with head_dim above 128 outside Hopper";
    if (backward && t == 1)
        return "backward with a sequence of one token";
    if (backward && cudnn_version <= 91500 && t % 128 != 0)
        return "backward with a sequence not a multiple of 128 before cuDNN 9.16";
    return NULL;
}

/* cuDNN 9's host and device allocation failures (cudnn_graph.h: 4003 and
 * 4004, in the internal-error thousand): the only failures that say the
 * device is short of memory rather than that cuDNN cannot run the graph. */
aitk_status aitk_cudnn_failure(int cudnn_status)
{
    enum { HOST_ALLOC_FAILED = 4003, DEVICE_ALLOC_FAILED = 4004 };
    if (cudnn_status == HOST_ALLOC_FAILED || cudnn_status == DEVICE_ALLOC_FAILED)
        return AITK_E_NOMEM;
    return AITK_E_UNSUPPORTED;
}

size_t aitk_attention_plain_smem(int t, int d, size_t smem_limit)
{
    if (t <= 0 || d <= 0)
        return 0;
    size_t bytes = (2 * (size_t)t + 2 * (size_t)d) * sizeof(float);
    return bytes <= smem_limit ? bytes : 0;
}

/* Two resident blocks let one block's loads overlap the other's
 * arithmetic; a lone block per SM still beats refusing the shape. */
int aitk_attention_bwd_tile(int d, size_t smem_limit)
{
    static const int tiles[] = {64, 32, 16, 8};
    if (d <= 0)
        return 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < sizeof tiles / sizeof *tiles; i++)
            if (aitk_attn_bwd_smem(tiles[i], d) <= (pass ? smem_limit : smem_limit / 2))
                return tiles[i];
    return 0;
}
