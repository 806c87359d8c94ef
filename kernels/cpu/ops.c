/* The CPU backend's operation table and the table check every backend's
 * table goes through before a step uses it. */
#include "kernels/cpu/cpu.h"

static const aitk_ops cpu_ops = {
    .name = "cpu",
    .alloc = aitk_cpu_alloc,
    .free = aitk_cpu_free,
    .upload = aitk_cpu_copy,
    .download = aitk_cpu_copy,
    .gemm = aitk_cpu_gemm,
    .lora_linear_forward = aitk_cpu_lora_linear_forward,
    .lora_linear_backward = aitk_cpu_lora_linear_backward,
    .layernorm_forward = aitk_cpu_layernorm_forward,
    .layernorm_backward = aitk_cpu_layernorm_backward,
    .rmsnorm_forward = aitk_cpu_rmsnorm_forward,
    .rmsnorm_backward = aitk_cpu_rmsnorm_backward,
    .modulate_forward = aitk_cpu_modulate_forward,
    .modulate_backward = aitk_cpu_modulate_backward,
    .gated_residual_forward = aitk_cpu_gated_residual_forward,
    .gated_residual_backward = aitk_cpu_gated_residual_backward,
    .rope_table = aitk_cpu_rope_table,
    .rope_forward = aitk_cpu_rope_forward,
    .rope_backward = aitk_cpu_rope_backward,
    .gelu_forward = aitk_cpu_gelu_forward,
    .gelu_backward = aitk_cpu_gelu_backward,
    .silu_forward = aitk_cpu_silu_forward,
    .silu_backward = aitk_cpu_silu_backward,
    .swiglu_forward = aitk_cpu_swiglu_forward,
    .swiglu_backward = aitk_cpu_swiglu_backward,
    .attention_forward = aitk_cpu_attention_forward,
    .attention_backward = aitk_cpu_attention_backward,
    .mse_forward = aitk_cpu_mse_forward,
    .mse_backward = aitk_cpu_mse_backward,
    .adamw_update = aitk_cpu_adamw_update,
    .adamw8_update = aitk_cpu_adamw8_update,
    .fp8_dequantize = aitk_cpu_fp8_dequantize,
    .fp8_quantize = aitk_cpu_fp8_quantize,
    .bf16_pack = aitk_cpu_bf16_pack,
    .bf16_unpack = aitk_cpu_bf16_unpack,
    .bf16_round = aitk_cpu_bf16_round,
    .copy2d = aitk_cpu_copy2d,
    .axpy = aitk_cpu_axpy,
    .zero = aitk_cpu_zero,
};

/* Every member of aitk_ops, for the check below. The static assertion
 * fails the build when ops.h gains a member that this list lacks (all
 * members are pointers of one size on the platforms we build for). */
#define AITK_OPS_MEMBERS(X)                                                          \
    X(name) X(alloc) X(free) X(upload) X(download) X(gemm) X(lora_linear_forward)    \
    X(lora_linear_backward) X(layernorm_forward) X(layernorm_backward)               \
    X(rmsnorm_forward) X(rmsnorm_backward) X(modulate_forward) X(modulate_backward)  \
    X(gated_residual_forward) X(gated_residual_backward) X(rope_table)               \
    X(rope_forward) X(rope_backward) X(gelu_forward) X(gelu_backward)                \
    X(silu_forward) X(silu_backward) X(swiglu_forward) X(swiglu_backward)            \
    X(attention_forward) X(attention_backward) X(mse_forward) X(mse_backward)        \
    X(adamw_update) X(adamw8_update) X(fp8_dequantize) X(fp8_quantize) X(bf16_pack)  \
    X(bf16_unpack) X(bf16_round) X(copy2d) X(axpy) X(zero)
#define AITK_OPS_COUNT_ONE(member) +1
_Static_assert(sizeof(aitk_ops) ==
                   (0 AITK_OPS_MEMBERS(AITK_OPS_COUNT_ONE)) * sizeof(void (*)(void)),
               "aitk_ops and AITK_OPS_MEMBERS disagree: list the new member in both");
#undef AITK_OPS_COUNT_ONE

const aitk_ops *aitk_ops_cpu(void)
{
    return &cpu_ops;
}

aitk_status aitk_ops_check(const aitk_ops *ops, const char **missing)
{
    const char *dummy;
    if (!missing)
        missing = &dummy;
    *missing = NULL;
    if (!ops) {
        *missing = "table";
        return AITK_E_INVAL;
    }
#define AITK_OPS_CHECK_ONE(member)   \
    if (!ops->member) {              \
        *missing = #member;          \
        return AITK_E_INTERNAL;      \
    }
    AITK_OPS_MEMBERS(AITK_OPS_CHECK_ONE)
#undef AITK_OPS_CHECK_ONE
    return AITK_OK;
}
