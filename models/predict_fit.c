/* The smallest change that makes a job fit, see predict_fit.h. */
#include "models/predict_fit.h"

#include <stdio.h>
#include <string.h>

typedef struct change {
    long batch;       /* 0: keep */
    bool cache_text;  /* text embeddings cached, encoders off the GPU */
    bool nf4;         /* a 4-bit base (text encoders stay fp8, as ai-toolkit does) */
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

/* Whether `c` changes anything in `w` (a change to what it already is, or to
 * a larger resolution, is not one). Batches are bisected apart. */
static bool applies(const aitk_workload *w, const change *c)
{
    if (c->nf4 && w->base_dtype == AITK_DTYPE_NF4)
        return false;
    if (c->cache_text && w->cache_text)
        return false;
    if (c->resolution && c->resolution >= largest_resolution(w))
        return false;
    return true;
}

static void apply(aitk_workload *w, const change *c, char *text, size_t size)
{
    size_t n = 0;
    text[0] = '\0';
    if (c->batch) {
        w->batch = c->batch;
        n += (size_t)snprintf(text + n, size - n, "%s--batch %ld", n ? " " : "", c->batch);
    }
    if (c->cache_text && n < size) {
        w->cache_text = true;
        n += (size_t)snprintf(text + n, size - n, "%s--cache-text-embeddings", n ? " " : "");
    }
    if (c->nf4 && n < size) {
        w->base_dtype = AITK_DTYPE_NF4;
        w->te_dtype = AITK_DTYPE_FP8;
        n += (size_t)snprintf(text + n, size - n, "%s--quantize nf4", n ? " " : "");
    }
    if (c->resolution && n < size) {
        w->resolutions[0] = c->resolution;
        w->n_resolutions = 1;
        snprintf(text + n, size - n, "%s--resolution %ld", n ? " " : "", c->resolution);
    }
}

/* Predicts `w` changed by `c` into out->change and out->pred. */
static aitk_status try_change(const aitk_workload *w, const aitk_cost_params *p,
                              const aitk_gpu_spec *gpu, const change *c, aitk_fit_hint *out,
                              bool *fits, aitk_str *err)
{
    aitk_workload changed = *w;
    apply(&changed, c, out->change, sizeof out->change);
    aitk_status st = aitk_cost_predict(&changed, p, gpu, &out->pred, err);
    *fits = !st && out->pred.fits;
    return st;
}

aitk_status aitk_predict_fit_hint(const aitk_workload *w, const aitk_cost_params *p,
                                  const aitk_gpu_spec *gpu, aitk_fit_hint *out, aitk_str *err)
{
    /* Cached embeddings change nothing trained; a 4-bit base, then a lower
     * resolution, change more. */
    static const change tries[] = {
        {.cache_text = true},
        {.nf4 = true},
        {.cache_text = true, .nf4 = true},
        {.resolution = 768},
        {.resolution = 512},
        {.cache_text = true, .nf4 = true, .resolution = 768},
        {.cache_text = true, .nf4 = true, .resolution = 512},
    };
    memset(out, 0, sizeof *out);
    /* The largest smaller batch that fits, before anything that changes
     * what is trained; memory grows with the batch, so a bisection finds it. */
    long lo = 0, hi = w->batch; /* lo fits (0: none known), hi does not */
    while (hi - lo > 1) {
        const long b = lo + (hi - lo) / 2;
        bool fits = false;
        aitk_status st = try_change(w, p, gpu, &(change){.batch = b}, out, &fits, err);
        if (st)
            return st;
        if (fits)
            lo = b;
        else
            hi = b;
    }
    if (lo >= 1)
        return try_change(w, p, gpu, &(change){.batch = lo}, out, &out->found, err);
    for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
        if (!applies(w, &tries[i]))
            continue;
        aitk_status st = try_change(w, p, gpu, &tries[i], out, &out->found, err);
        if (st || out->found)
            return st;
    }
    out->change[0] = '\0';
    memset(&out->pred, 0, sizeof out->pred);
    return AITK_OK;
}
