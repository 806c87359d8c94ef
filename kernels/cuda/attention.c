/* Attention dispatch: cuDNN's fused SDPA when it is loaded and takes the
 * shape; else the math path (batched cuBLASLt GEMMs, attention_math.cu);
 * else, when the math path cannot take the shape or its workspace does not
 * fit, the plain kernel. The report's paths say which ran and why the
 * faster ones did not.
 *
 * AITK_ATTENTION=math or =plain skips the paths before it, so the GPU tests
 * can hold each path against the CPU reference on one machine; unset (or
 * anything else) is the order above.
 *
 * Timing (AITK_TIME_OPS=1) brackets the whole dispatch, because which path
 * ran is known only after it: the time between the events includes cuDNN's
 * plan build on a shape's first call when the GPU has run out of queued
 * work meanwhile; later calls reuse the plan, and bench/paths_since.h
 * leaves the warm-up's calls out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/attention_check.h"
#include "kernels/cuda/internal.h"

enum attention_path { PATH_CUDNN, PATH_MATH, PATH_PLAIN };

/* The first path to try: AITK_ATTENTION (read per call: tests change it). */
static enum attention_path first_path(void)
{
    const char *e = getenv("AITK_ATTENTION");
    if (e && strcmp(e, "plain") == 0)
        return PATH_PLAIN;
    if (e && strcmp(e, "math") == 0)
        return PATH_MATH;
    return PATH_CUDNN;
}

static int note_path(const char *op, enum attention_path path, const char *cudnn_why,
                     const char *math_why)
{
    char kernel[240];
    const char *c = cudnn_why ? cudnn_why : "skipped (AITK_ATTENTION)";
    if (path == PATH_CUDNN) {
        int v = aitk_cudnn_runtime_version();
        snprintf(kernel, sizeof kernel, "cuDNN %d.%d.%d fused SDPA", v / 10000, v / 100 % 100,
                 v % 100);
    } else if (path == PATH_MATH) {
        snprintf(kernel, sizeof kernel, "cuBLASLt math SDPA: cuDNN refused: %s", c);
    } else {
        snprintf(kernel, sizeof kernel, "plain kernel: cuDNN refused: %s; math path: %s", c,
                 math_why ? math_why : "skipped (AITK_ATTENTION)");
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
    enum attention_path first = first_path();
    const char *cudnn_why = NULL, *math_why = NULL;
    if (first == PATH_CUDNN) {
        st = aitk_cudnn_sdpa_forward(out, lse, q, k, v, b, t, hq, hkv, d, scale, &cudnn_why);
        if (st != AITK_E_UNSUPPORTED) {
            if (!st)
                aitk_cuda_timer_name(timing, note_path("attention_forward", PATH_CUDNN, NULL,
                                                       NULL));
            return aitk_cuda_timer_stop(timing, st);
        }
    }
    if (first != PATH_PLAIN) {
        st = aitk_cuda_attention_math_forward(out, lse, q, k, v, b, t, hq, hkv, d, scale,
                                              &math_why);
        if (st == AITK_E_NOMEM) {
            math_why = "its workspace did not fit";
            (void)cudaGetLastError(); /* else the plain kernel's launch check reports it */
        } else if (st != AITK_E_UNSUPPORTED) {
            if (!st)
                aitk_cuda_timer_name(timing, note_path("attention_forward", PATH_MATH, cudnn_why,
                                                       NULL));
            return aitk_cuda_timer_stop(timing, st);
        }
    }
    aitk_cuda_timer_name(timing,
                         note_path("attention_forward", PATH_PLAIN, cudnn_why, math_why));
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
    enum attention_path first = first_path();
    const char *cudnn_why = NULL, *math_why = NULL;
    if (first == PATH_CUDNN) {
        st = aitk_cudnn_sdpa_backward(dq, dk, dv, dout, q, k, v, out, lse, b, t, hq, hkv, d,
                                      scale, &cudnn_why);
        if (st != AITK_E_UNSUPPORTED) {
            if (!st)
                aitk_cuda_timer_name(timing, note_path("attention_backward", PATH_CUDNN, NULL,
                                                       NULL));
            return aitk_cuda_timer_stop(timing, st);
        }
    }
    if (first != PATH_PLAIN) {
        st = aitk_cuda_attention_math_backward(dq, dk, dv, dout, q, k, v, out, lse, b, t, hq,
                                               hkv, d, scale, &math_why);
        if (st == AITK_E_NOMEM) {
            math_why = "its workspace did not fit";
            (void)cudaGetLastError(); /* else the plain kernel's launch check reports it */
        } else if (st != AITK_E_UNSUPPORTED) {
            if (!st)
                aitk_cuda_timer_name(timing, note_path("attention_backward", PATH_MATH,
                                                       cudnn_why, NULL));
            return aitk_cuda_timer_stop(timing, st);
        }
    }
    aitk_cuda_timer_name(timing,
                         note_path("attention_backward", PATH_PLAIN, cudnn_why, math_why));
    st = aitk_cuda_attention_plain_backward(dq, dk, dv, dout, q, k, v, out, lse, b, t, hq, hkv,
                                            d, scale);
    return aitk_cuda_timer_stop(timing, st);
}
