/* One GEMM problem timed alone (gemm_isolated.h). */
#include "bench/gemm_isolated.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "kernels/ops.h"

/* The buffers of one problem: A, B, C and the bias, in backend memory. */
typedef struct problem_bufs {
    void *a, *b, *c, *bias;
} problem_bufs;

static void bufs_free(const aitk_ops *o, problem_bufs *p)
{
    o->free(p->a);
    o->free(p->b);
    o->free(p->c);
    o->free(p->bias);
    memset(p, 0, sizeof *p);
}

static aitk_status bufs_make(const aitk_ops *o, const aitk_gemm_shape *s, problem_bufs *p)
{
    const size_t na = (size_t)s->m * (size_t)s->k * (size_t)s->batch,
                 nb = (size_t)s->k * (size_t)s->n * (size_t)s->batch,
                 nc = (size_t)s->m * (size_t)s->n * (size_t)s->batch;
    const aitk_dtype t = o->act_dtype;
    aitk_status st = o->alloc(&p->a, aitk_dtype_bytes(t, na));
    if (!st)
        st = o->alloc(&p->b, aitk_dtype_bytes(t, nb));
    if (!st)
        st = o->alloc(&p->c, aitk_dtype_bytes(t, nc));
    if (!st && !strcmp(s->epilogue, "bias"))
        st = o->alloc(&p->bias, aitk_dtype_bytes(t, (size_t)s->n));
    /* As the microbenchmarks do: activations of unit scale, weights of a
     * trained layer's (0.02), C and bias small and non-zero. */
    if (!st)
        st = o->draw_act(p->a, na, 11, 0, 1.0f, 0.0f);
    if (!st)
        st = o->draw_act(p->b, nb, 12, 0, 0.02f, 0.0f);
    if (!st)
        st = o->draw_act(p->c, nc, 13, 0, 0.01f, 0.0f);
    if (!st && p->bias)
        st = o->draw_act(p->bias, (size_t)s->n, 14, 0, 0.01f, 0.0f);
    if (st)
        bufs_free(o, p);
    return st;
}

/* The one op call that runs shape s. */
static aitk_status run_once(const aitk_ops *o, const aitk_gemm_shape *s, const problem_bufs *p)
{
    if (p->bias)
        return o->lora_linear_forward(p->c, NULL, p->a, p->b, p->bias, NULL, NULL, (int)s->m,
                                      (int)s->k, (int)s->n, 0, 0.0f);
    const long long sa = s->m * s->k, sb = s->k * s->n, sc = s->m * s->n;
    return o->gemm(p->c, p->a, p->b, (int)s->m, (int)s->n, (int)s->k, s->trans_a != 0,
                   s->trans_b != 0, 1.0f, s->beta ? 1.0f : 0.0f, (int)s->batch,
                   s->batch > 1 ? sa : 0, s->batch > 1 ? sb : 0, s->batch > 1 ? sc : 0);
}

/* Whether one op runs s on this backend (gemm_isolated.h). */
static bool runnable(const aitk_backend *be, const aitk_gemm_shape *s)
{
    const char *act = be->ops->act_dtype == AITK_DTYPE_BF16 ? "bf16" : "fp32";
    if (strcmp(s->c, act) != 0 || strcmp(s->a, act) != 0 || strcmp(s->b, act) != 0)
        return false;
    if (!strcmp(s->epilogue, "none"))
        return true;
    return !strcmp(s->epilogue, "bias") && !s->trans_a && s->trans_b && !s->beta &&
           s->batch == 1;
}

/* The summed ms and calls of the backend's path for shape s; false when the
 * backend does not time ops (or has no such path yet: *ms = 0). */
static bool path_ms(const aitk_backend *be, const aitk_gemm_shape *s, double *ms, long *calls)
{
    enum { CAP = 1024 };
    *ms = 0.0;
    *calls = 0;
    aitk_backend_path *paths = be->paths ? malloc(CAP * sizeof *paths) : NULL;
    size_t n = 0;
    bool timed = paths && be->paths(paths, CAP, &n) == AITK_OK;
    for (size_t i = 0; timed && i < n; i++) {
        aitk_gemm_shape o;
        if (!aitk_gemm_shape_parse(paths[i].kernel, &o) || !aitk_gemm_shape_equal(&o, s))
            continue;
        if (paths[i].ms < 0.0)
            timed = false;
        *ms += paths[i].ms;
        *calls += paths[i].calls;
    }
    free(paths);
    return timed;
}

/* `calls` back-to-back calls and one synchronize, on the host clock. */
static aitk_status timed_batch(const aitk_backend *be, const aitk_gemm_shape *s,
                               const problem_bufs *p, long calls, double *seconds)
{
    const uint64_t t0 = aitk_clock_ns();
    aitk_status st = AITK_OK;
    for (long i = 0; i < calls && !st; i++)
        st = run_once(be->ops, s, p);
    if (!st)
        st = be->synchronize();
    *seconds = (double)(aitk_clock_ns() - t0) * 1e-9;
    return st;
}

aitk_status aitk_gemm_isolated_time(const aitk_backend *be, const aitk_gemm_shape *shape,
                                    double min_time_s, aitk_gemm_isolated *out)
{
    if (!be || !be->ops || !shape || !out || shape->m <= 0 || shape->n <= 0 || shape->k <= 0 ||
        shape->batch <= 0 || !(min_time_s > 0.0))
        return AITK_E_INVAL;
    memset(out, 0, sizeof *out);
    out->rate.shape = *shape;
    if (!runnable(be, shape))
        return AITK_E_UNSUPPORTED;
    problem_bufs p = {0};
    aitk_status st = bufs_make(be->ops, shape, &p);
    /* One untimed call: the plan search is not what is measured. */
    if (!st)
        st = run_once(be->ops, shape, &p);
    if (!st)
        st = be->synchronize();
    double ms0 = 0.0, seconds = 0.0;
    long calls0 = 0, calls = 1;
    const bool events = !st && path_ms(be, shape, &ms0, &calls0);
    while (!st && (st = timed_batch(be, shape, &p, calls, &seconds)) == AITK_OK &&
           seconds < min_time_s && calls < (1L << 30))
        calls *= 2;
    double ms1 = 0.0;
    long calls1 = 0;
    if (!st && events && path_ms(be, shape, &ms1, &calls1) && calls1 > calls0) {
        /* The mean over every timed batch (1 + 2 + ... + calls calls): the
         * events time each call's own device work. */
        out->from_events = 1;
        out->ms_per_call = (ms1 - ms0) / (double)(calls1 - calls0);
    }
    bufs_free(be->ops, &p);
    if (st)
        return st;
    out->calls = calls;
    if (!out->from_events)
        out->ms_per_call = seconds * 1e3 / (double)calls;
    out->rate.flops_per_s = aitk_gemm_shape_flops(shape) / (out->ms_per_call * 1e-3);
    return AITK_OK;
}
