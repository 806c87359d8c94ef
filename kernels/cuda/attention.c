/* Attention dispatch: cuDNN's fused SDPA when it is loaded and takes the
 * shape, else the plain kernel; the report's paths say which ran and, for
 * the plain kernel, why cuDNN did not.
 *
 * Timing (AITK_TIME_OPS=1) brackets the whole dispatch, because which path
 * ran is known only after it: the time between the events includes cuDNN's
 * plan build on a shape's first call when the GPU has run out of queued
 * work meanwhile; later calls reuse the plan, and bench/paths_since.h
 * leaves the warm-up's calls out. */
#include <stdio.h>

#include "kernels/cuda/attention_check.h"
#include "kernels/cuda/internal.h"

static int note_path(const char *op, bool cudnn, const char *why)
{
    char kernel[160];
    if (cudnn) {
        int v = aitk_cudnn_runtime_version();
        snprintf(kernel, sizeof kernel, "cuDNN %d.%d.%d fused SDPA", v / 10000, v / 100 % 100,
                 v % 100);
    } else {
        snprintf(kernel, sizeof kernel, "plain kernel: cuDNN refused: %s", why ? why : "?");
    }
    return aitk_cuda_path(op, kernel);
}

aitk_status aitk_cuda_attention_forward(aitk_act *out, float *lse, const aitk_act *q,
                                        const aitk_act *k, const aitk_act *v, int b, int t,
                                        int hq, int hkv, int d, float scale)
{
    aitk_status st = aitk_cuda_need_open("attention_forward");
    if (st)
        return st;
    if (!out || !lse || !q || !k || !v || !aitk_attention_shape_ok(b, t, hq, hkv, d, scale))
        return aitk_cuda_inval("attention_forward", "NULL tensor or impossible shape");
    int timing = -1;
    if ((st = aitk_cuda_timer_start(AITK_CUDA_PATH_LATER, &timing)))
        return st;
    const char *why = NULL;
    st = aitk_cudnn_sdpa_forward(out, lse, q, k, v, b, t, hq, hkv, d, scale, &why);
    if (st == AITK_OK || st != AITK_E_UNSUPPORTED) {
        if (!st)
            aitk_cuda_timer_name(timing, note_path("attention_forward", true, NULL));
        return aitk_cuda_timer_stop(timing, st);
    }
    aitk_cuda_timer_name(timing, note_path("attention_forward", false, why));
    st = aitk_cuda_attention_plain_forward(out, lse, q, k, v, b, t, hq, hkv, d, scale);
    return aitk_cuda_timer_stop(timing, st);
}

aitk_status aitk_cuda_attention_backward(aitk_act *dq, aitk_act *dk, aitk_act *dv,
                                         const aitk_act *dout, const aitk_act *q,
                                         const aitk_act *k, const aitk_act *v,
                                         const aitk_act *out, const float *lse, int b, int t,
                                         int hq, int hkv, int d, float scale)
{
    aitk_status st = aitk_cuda_need_open("attention_backward");
    if (st)
        return st;
    if (!dq || !dk || !dv || !dout || !q || !k || !v || !out || !lse ||
        !aitk_attention_shape_ok(b, t, hq, hkv, d, scale))
        return aitk_cuda_inval("attention_backward", "NULL tensor or impossible shape");
    int timing = -1;
    if ((st = aitk_cuda_timer_start(AITK_CUDA_PATH_LATER, &timing)))
        return st;
    const char *why = NULL;
    st = aitk_cudnn_sdpa_backward(dq, dk, dv, dout, q, k, v, out, lse, b, t, hq, hkv, d, scale,
                                  &why);
    if (st == AITK_OK || st != AITK_E_UNSUPPORTED) {
        if (!st)
            aitk_cuda_timer_name(timing, note_path("attention_backward", true, NULL));
        return aitk_cuda_timer_stop(timing, st);
    }
    aitk_cuda_timer_name(timing, note_path("attention_backward", false, why));
    st = aitk_cuda_attention_plain_backward(dq, dk, dv, dout, q, k, v, out, lse, b, t, hq, hkv, d,
                                            scale);
    return aitk_cuda_timer_stop(timing, st);
}
