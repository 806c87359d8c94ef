/* What every backend's table goes through before a step uses it: the table
 * check, the data-type names and sizes, and activation addressing.
 *
 * Backend-neutral and free of everything but libc and common/status.h, so
 * the CUDA plugin can link this same file and a table is judged the same
 * way whichever backend made it. */
#include <stddef.h>
#include <stdint.h>

#include "kernels/ops.h"

const char *aitk_dtype_name(aitk_dtype dt)
{
    switch (dt) {
    case AITK_DTYPE_F32: return "f32";
    case AITK_DTYPE_BF16: return "bf16";
    case AITK_DTYPE_FP8_E4M3: return "fp8_e4m3";
    case AITK_DTYPE_NF4: return "nf4";
    case AITK_DTYPE_COUNT: break;
    }
    return "unknown";
}

/* A count whose bytes do not fit in size_t gives SIZE_MAX rather than a
 * wrapped small number: an allocation of it then fails instead of
 * succeeding too small. */
size_t aitk_dtype_bytes(aitk_dtype dt, size_t n)
{
    size_t per;
    switch (dt) {
    case AITK_DTYPE_F32: per = 4; break;
    case AITK_DTYPE_BF16: per = 2; break;
    case AITK_DTYPE_FP8_E4M3: per = 1; break;
    case AITK_DTYPE_NF4: return n / 2 + n % 2;
    default: return 0;
    }
    return n > SIZE_MAX / per ? SIZE_MAX : n * per;
}

/* NULL stays NULL, so "absent" (a frozen linear's xa) survives offsetting. */
aitk_act *aitk_act_at(const aitk_ops *ops, aitk_act *p, size_t elems)
{
    if (!p)
        return NULL;
    return (aitk_act *)((unsigned char *)p + aitk_dtype_bytes(ops->act_dtype, elems));
}

const aitk_act *aitk_act_cat(const aitk_ops *ops, const aitk_act *p, size_t elems)
{
    if (!p)
        return NULL;
    return (const aitk_act *)((const unsigned char *)p +
                              aitk_dtype_bytes(ops->act_dtype, elems));
}

/* Every function member of aitk_ops, in declaration order. */
#define AITK_OPS_FUNCTIONS(X)                                                             \
    X(alloc) X(free) X(upload) X(download) X(upload_act) X(download_act) X(zero)          \
    X(draw_act) X(draw_f32) X(absmax) X(gemm) X(lora_linear_forward)                      \
    X(lora_linear_backward) X(layernorm_forward) X(layernorm_backward)                    \
    X(rmsnorm_forward) X(rmsnorm_backward) X(modulate_forward) X(modulate_backward)       \
    X(layernorm_modulate_forward) X(layernorm_modulate_backward)                          \
    X(gated_residual_forward) X(gated_residual_backward) X(rope_table) X(rope_forward)    \
    X(rope_backward) X(gelu_forward) X(gelu_backward) X(silu_forward) X(silu_backward)    \
    X(swiglu_forward) X(swiglu_backward) X(attention_forward) X(attention_backward)       \
    X(mse_forward) X(mse_backward) X(adamw_update) X(adamw8_update) X(fp8_dequantize)     \
    X(fp8_quantize) X(nf4_dequantize) X(nf4_quantize) X(bf16_round) X(copy2d) X(axpy)

/* The table is two data members (name, act_dtype) followed by nothing but
 * function pointers, `alloc` first. Counted from `alloc` on, the size must
 * be the listed functions exactly: a member added to ops.h and not listed
 * here fails the build instead of going unchecked. (Function pointers share
 * one size on every platform this builds for.) */
#define AITK_OPS_COUNT_ONE(member) +1
_Static_assert(offsetof(aitk_ops, alloc) >= offsetof(aitk_ops, act_dtype) + sizeof(aitk_dtype),
               "aitk_ops: the function members must follow name and act_dtype");
_Static_assert(sizeof(aitk_ops) - offsetof(aitk_ops, alloc) ==
                   (0 AITK_OPS_FUNCTIONS(AITK_OPS_COUNT_ONE)) * sizeof(void (*)(void)),
               "aitk_ops and AITK_OPS_FUNCTIONS disagree: list the new member in both");
#undef AITK_OPS_COUNT_ONE

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
    if (!ops->name) {
        *missing = "name";
        return AITK_E_INTERNAL;
    }
    if (ops->act_dtype != AITK_DTYPE_F32 && ops->act_dtype != AITK_DTYPE_BF16) {
        *missing = "act_dtype";
        return AITK_E_INTERNAL;
    }
#define AITK_OPS_CHECK_ONE(member) \
    if (!ops->member) {            \
        *missing = #member;        \
        return AITK_E_INTERNAL;    \
    }
    AITK_OPS_FUNCTIONS(AITK_OPS_CHECK_ONE)
#undef AITK_OPS_CHECK_ONE
    return AITK_OK;
}
