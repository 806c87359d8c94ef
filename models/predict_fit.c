/* The smallest change that makes a job fit, see predict_fit.h. */
#include "models/predict_fit.h"

#include <stdio.h>
#include <string.h>

/* One change besides the batch; a part the job already has is dropped. */
typedef struct change {
    bool cache_text;  /* text embeddings cached, encoders off the GPU */
    bool no_validation; /* the trainer's validation stage left out */
    bool nf4;         /* a 4-bit base (aitk_workload_set_base: encoders fp8) */
    long resolution;  /* 0: keep the buckets */
} change;

static long largest_resolution(const aitk_workload *w)
{
    long r = 0;
    for (size_t i = 0; i < w->n_resolutions; i++)
        if (w->resolutions[i] > r)
            r = w->resolutions[i];
    return r;
}

/* `c` without what `w` already has (a cache it has, its own storage, a
 * resolution not below its largest). */
static change effective(const aitk_workload *w, change c)
{
    c.cache_text = c.cache_text && !w->cache_text;
    c.no_validation = c.no_validation && w->validation_resolution > 0;
    /* A uint5 to uint7 base is packed on NF4's path with more bits: NF4
     * itself would still take less. */
    c.nf4 = c.nf4 && (w->base_dtype != AITK_WEIGHT_NF4 || w->base_packed_bits > 4.5);
    if (c.resolution >= largest_resolution(w))
        c.resolution = 0;
    return c;
}

static bool same(change a, change b)
{
    return a.cache_text == b.cache_text && a.no_validation == b.no_validation &&
           a.nf4 == b.nf4 && a.resolution == b.resolution;
}

static aitk_workload changed(const aitk_workload *w, change c, long batch)
{
    aitk_workload x = *w;
    x.batch = batch;
    if (c.cache_text)
        x.cache_text = true;
    if (c.no_validation)
        x.validation_resolution = 0;
    if (c.nf4)
        aitk_workload_set_base(&x, AITK_WEIGHT_NF4);
    if (c.resolution)
        aitk_workload_set_resolution(&x, c.resolution);
    return x;
}

static void describe(change c, long batch, long original_batch, aitk_str *out)
{
    if (batch < original_batch)
        aitk_str_appendf(out, " --batch %ld", batch);
    if (c.cache_text)
        aitk_str_append(out, " --cache-text-embeddings");
    if (c.no_validation)
        aitk_str_append(out, " --no-validation");
    if (c.nf4)
        aitk_str_append(out, " --quantize nf4");
    if (c.resolution)
        aitk_str_appendf(out, " --resolution %ld", c.resolution);
}

/* The largest batch up to w's that fits with `c` (0: none), and its
 * prediction; memory grows with the batch, so a bisection finds it. */
static aitk_status largest_batch(const aitk_workload *w, const aitk_cost_params *p,
                                 const aitk_gpu_spec *gpu, change c, long *batch,
                                 aitk_prediction *pred, aitk_str *err)
{
    long lo = 0, hi = w->batch + 1; /* lo fits (0: none known), hi does not */
    while (hi - lo > 1) {
        const long b = lo + (hi - lo) / 2;
        const aitk_workload x = changed(w, c, b);
        aitk_prediction q;
        aitk_status st = aitk_cost_predict(&x, p, gpu, &q, err);
        if (st)
            return st;
        if (q.fits) {
            lo = b;
            *pred = q;
        } else {
            hi = b;
        }
    }
    *batch = lo;
    return AITK_OK;
}

const char aitk_fit_tries_text[] =
    "a smaller --batch, --cache-text-embeddings, --no-validation, --quantize nf4, "
    "--resolution 768 or 512";

aitk_status aitk_predict_fit_hint(const aitk_workload *w, const aitk_cost_params *p,
                                  const aitk_gpu_spec *gpu, aitk_fit_hint *out, aitk_str *err)
{
    /* Nothing but the batch first; then cached embeddings and no validation
     * stage, which change nothing trained; a 4-bit base; both; a lower
     * resolution; all three. */
    static const change tries[] = {
        {0},
        {.cache_text = true},
        {.no_validation = true},
        {.cache_text = true, .no_validation = true},
        {.nf4 = true},
        {.cache_text = true, .nf4 = true},
        {.resolution = 768},
        {.resolution = 512},
        {.cache_text = true, .nf4 = true, .resolution = 768},
        {.cache_text = true, .nf4 = true, .resolution = 512},
    };
    enum { N = sizeof tries / sizeof *tries };
    change done[N];
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < N; i++) {
        const change c = effective(w, tries[i]);
        bool repeat = false;
        for (size_t k = 0; k < i && !repeat; k++)
            repeat = same(done[k], c);
        done[i] = c;
        if (repeat)
            continue;
        long batch = 0;
        aitk_status st = largest_batch(w, p, gpu, c, &batch, &out->pred, err);
        if (st)
            return st;
        if (batch >= 1) {
            aitk_str text = AITK_STR_INIT;
            describe(c, batch, w->batch, &text);
            if (aitk_str_status(&text)) {
                aitk_str_free(&text);
                return AITK_E_NOMEM;
            }
            snprintf(out->change, sizeof out->change, "%s", aitk_str_cstr(&text) + 1);
            aitk_str_free(&text);
            out->found = true;
            return AITK_OK;
        }
    }
    memset(&out->pred, 0, sizeof out->pred);
    return AITK_OK;
}
