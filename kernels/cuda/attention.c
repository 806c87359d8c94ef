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
        const char *graph = aitk_cudnn_last_graph(strcmp(op, "attention_backward") == 0);
        snprintf(kernel, sizeof kernel, "cuDNN %d.%d.%d fused SDPA (%s)", v / 10000,
                 v / 100 % 100, v % 100, graph ? graph : "?");
    } else if (path == PATH_MATH) {
        snprintf(kernel, sizeof kernel, "cuBLASLt math SDPA: cuDNN refused: %s", c);
    } else {
        snprintf(kernel, sizeof kernel, "plain kernel: cuDNN refused: %s; math path: %s", c,
                 math_why ? math_why : "skipped (AITK_ATTENTION)");
    }
    return aitk_cuda_path(op, kernel);
}

/* One call's tensors: out/lse_out for the forward; dq, dk, dv and the
 * saved o and lse for the backward. */
typedef struct attn_args {
    bool backward;
    aitk_act *out, *dq, *dk, *dv;
    float *lse_out;
    const aitk_act *dout, *q, *k, *v, *o;
    const float *lse;
    int b, t, hq, hkv, d;
    float scale;
} attn_args;

/* Runs `path`; AITK_E_UNSUPPORTED with *why when it does not take the call. */
static aitk_status run_path(enum attention_path path, const attn_args *a, const char **why)
{
    *why = NULL;
    if (!a->backward) {
        if (path == PATH_CUDNN)
            return aitk_cudnn_sdpa_forward(a->out, a->lse_out, a->q, a->k, a->v, a->b, a->t,
                                           a->hq, a->hkv, a->d, a->scale, why);
        if (path == PATH_MATH)
            return aitk_cuda_attention_math_forward(a->out, a->lse_out, a->q, a->k, a->v, a->b,
                                                    a->t, a->hq, a->hkv, a->d, a->scale, why);
        return aitk_cuda_attention_plain_forward(a->out, a->lse_out, a->q, a->k, a->v, a->b, a->t,
                                                 a->hq, a->hkv, a->d, a->scale);
    }
    if (path == PATH_CUDNN)
        return aitk_cudnn_sdpa_backward(a->dq, a->dk, a->dv, a->dout, a->q, a->k, a->v, a->o,
                                        a->lse, a->b, a->t, a->hq, a->hkv, a->d, a->scale, why);
    if (path == PATH_MATH)
        return aitk_cuda_attention_math_backward(a->dq, a->dk, a->dv, a->dout, a->q, a->k, a->v,
                                                 a->o, a->lse, a->b, a->t, a->hq, a->hkv, a->d,
                                                 a->scale, why);
    return aitk_cuda_attention_plain_backward(a->dq, a->dk, a->dv, a->dout, a->q, a->k, a->v,
                                              a->o, a->lse, a->b, a->t, a->hq, a->hkv, a->d,
                                              a->scale);
}

/* Tries the paths in order from first_path(); the plain kernel always
 * answers. The path is named after a faster path ran, or before the plain
 * kernel runs (its name carries why the others did not). */
static aitk_status dispatch(const attn_args *a)
{
    const char *op = a->backward ? "attention_backward" : "attention_forward";
    int timing = -1;
    aitk_status st = aitk_cuda_timer_start(AITK_CUDA_PATH_LATER, &timing);
    if (st)
        return st;
    const char *why[PATH_PLAIN] = {NULL, NULL}; /* cuDNN's and the math path's refusals */
    for (int p = first_path(); p <= PATH_PLAIN; p++) {
        if (p == PATH_PLAIN)
            aitk_cuda_timer_name(timing, note_path(op, PATH_PLAIN, why[PATH_CUDNN],
                                                   why[PATH_MATH]));
        const char *w = NULL;
        st = run_path((enum attention_path)p, a, &w);
        if (p == PATH_MATH && st == AITK_E_NOMEM) {
            w = "its workspace did not fit";
            (void)cudaGetLastError(); /* else the plain kernel's launch check reports it */
            st = AITK_E_UNSUPPORTED;
        }
        if (p == PATH_PLAIN || st != AITK_E_UNSUPPORTED) {
            if (!st && p != PATH_PLAIN)
                aitk_cuda_timer_name(timing, note_path(op, (enum attention_path)p,
                                                       why[PATH_CUDNN], NULL));
            return aitk_cuda_timer_stop(timing, st);
        }
        why[p] = w;
    }
    return aitk_cuda_timer_stop(timing, st); /* not reached: the plain kernel answers */
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
    attn_args a = {.out = out, .lse_out = lse, .q = q, .k = k, .v = v,
                   .b = b, .t = t, .hq = hq, .hkv = hkv, .d = d, .scale = scale};
    return dispatch(&a);
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
    attn_args a = {.backward = true, .dq = dq, .dk = dk, .dv = dv, .dout = dout, .q = q,
                   .k = k, .v = v, .o = out, .lse = lse,
                   .b = b, .t = t, .hq = hq, .hkv = hkv, .d = d, .scale = scale};
    return dispatch(&a);
}
