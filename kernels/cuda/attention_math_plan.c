/* Workspace layout of the math attention path (attention_math_plan.h). */
#include "kernels/cuda/attention_math_plan.h"

#include <stdint.h>

#include "kernels/cuda/attention_check.h"

/* Reserves `bytes` at the next 256-byte boundary; false on overflow. */
static bool take(size_t *at, size_t *total, size_t bytes)
{
    size_t start = (*total + 255) & ~(size_t)255;
    if (start < *total || bytes > SIZE_MAX - start)
        return false;
    *at = start;
    *total = start + bytes;
    return true;
}

const char *aitk_attn_math_plan_make(aitk_attn_math_plan *plan, int b, int t, int hq, int hkv,
                                     int d, bool backward, size_t budget)
{
    *plan = (aitk_attn_math_plan){0};
    if (!aitk_attention_shape_ok(b, t, hq, hkv, d, 1.0f))
        return "invalid shape";
    /* bf16 rows of d elements stay 16-byte aligned only when d % 8 == 0. */
    if (d % 8 != 0)
        return "head_dim not a multiple of 8";
    if (t > INT32_MAX - 7)
        return "sequence too long";
    plan->tp = (t + 7) / 8 * 8;
    plan->heads = b * hq;
    size_t tp = (size_t)plan->tp, per_head_scores = tp * tp * (sizeof(float) + 2);
    size_t group = budget / per_head_scores;
    if (group < 1)
        group = 1; /* one head always runs, whatever the budget says */
    if (group > (size_t)plan->heads)
        group = (size_t)plan->heads;
    plan->group = (int)group;
    plan->head_elems = tp * (size_t)d;
    size_t tensor = plan->head_elems * (size_t)plan->heads * 2, total = 0;
    bool ok = take(&plan->q, &total, tensor) && take(&plan->k, &total, tensor) &&
              take(&plan->v, &total, tensor);
    if (backward)
        ok = ok && take(&plan->dout, &total, tensor) && take(&plan->dq, &total, tensor) &&
             take(&plan->dk, &total, tensor) && take(&plan->dv, &total, tensor);
    else
        ok = ok && take(&plan->o, &total, tensor);
    ok = ok && take(&plan->s, &total, group * tp * tp * sizeof(float)) &&
         take(&plan->p, &total, group * tp * tp * 2);
    if (!ok)
        return "workspace size overflows";
    plan->total = total;
    return NULL;
}
