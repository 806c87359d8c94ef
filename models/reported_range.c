/* The range of reported over predicted step times, see reported_range.h. */
#include "models/reported_range.h"

#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "common/quantile.h"

aitk_status aitk_time_range_of(const double *values, size_t n, aitk_time_range *out)
{
    return aitk_time_range_at(values, n, AITK_RANGE_LOW_PERCENTILE, AITK_RANGE_HIGH_PERCENTILE,
                              out);
}

aitk_status aitk_time_range_at(const double *values, size_t n, double lo_pct, double hi_pct,
                               aitk_time_range *out)
{
    *out = (aitk_time_range){0};
    if (n == 0)
        return AITK_OK;
    double *v;
    aitk_status st = aitk_sorted_copy(values, n, &v);
    if (st)
        return st;
    out->n = n;
    out->lo = aitk_quantile_sorted(v, n, lo_pct / 100.0);
    out->hi = aitk_quantile_sorted(v, n, hi_pct / 100.0);
    out->median = aitk_quantile_sorted(v, n, 0.5);
    aitk_free(v);
    return AITK_OK;
}

bool aitk_time_range_covers(const aitk_time_range *r, double value)
{
    return r->n > 0 && value >= r->lo && value <= r->hi;
}

size_t aitk_reported_source_key(const char *source)
{
    const char *colon = strchr(source, ':');
    return colon ? (size_t)(colon - source) : strlen(source);
}

bool aitk_reported_same_source(const aitk_reported_speed *a, const aitk_reported_speed *b)
{
    const size_t n = aitk_reported_source_key(a->source);
    return n == aitk_reported_source_key(b->source) && strncmp(a->source, b->source, n) == 0;
}

aitk_status aitk_reported_range_coverage(const aitk_reported_row *rows, size_t n,
                                         aitk_range_coverage *out, bool *in_range,
                                         bool *in_range_loso)
{
    *out = (aitk_range_coverage){0};
    aitk_status st = aitk_reported_time_range(rows, n, NULL, &out->all);
    for (size_t i = 0; !st && i < n; i++) {
        const aitk_reported_speed *r = rows[i].report;
        bool in = false, in_loso = false;
        if (!r->setup.inference) {
            const double value = r->seconds_per_step / rows[i].pred.step_s;
            aitk_time_range others;
            st = aitk_reported_time_range(rows, n, r, &others);
            in = aitk_time_range_covers(&out->all, value);
            in_loso = !st && aitk_time_range_covers(&others, value);
            out->rows++;
            out->covered += in;
            out->covered_loso += in_loso;
        }
        if (in_range)
            in_range[i] = in;
        if (in_range_loso)
            in_range_loso[i] = in_loso;
    }
    return st;
}

aitk_status aitk_reported_by_source(const aitk_reported_row *rows, size_t n,
                                    aitk_source_check *out, size_t *n_out)
{
    *n_out = 0;
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < n; i++) {
        const aitk_reported_speed *r = rows[i].report;
        bool seen = r->setup.inference;
        for (size_t k = 0; !seen && k < *n_out; k++)
            seen = aitk_reported_same_source(out[k].first, r);
        if (seen)
            continue;
        aitk_source_check *c = &out[(*n_out)++];
        *c = (aitk_source_check){.first = r};
        st = aitk_reported_time_range(rows, n, r, &c->others);
        double log_sum = 0;
        for (size_t k = i; !st && k < n; k++) {
            const aitk_reported_speed *q = rows[k].report;
            if (q->setup.inference || !aitk_reported_same_source(q, r))
                continue;
            c->rows++;
            log_sum += fabs(log(rows[k].ratio));
            c->covered += aitk_time_range_covers(&c->others,
                                                 q->seconds_per_step / rows[k].pred.step_s);
        }
        c->error = exp(log_sum / (double)c->rows);
    }
    return st;
}

aitk_status aitk_reported_time_range(const aitk_reported_row *rows, size_t n,
                                     const aitk_reported_speed *skip, aitk_time_range *out)
{
    double *v = aitk_malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return AITK_E_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const aitk_reported_speed *r = rows[i].report;
        if (r->setup.inference || (skip && aitk_reported_same_source(r, skip)))
            continue;
        v[k++] = r->seconds_per_step / rows[i].pred.step_s;
    }
    aitk_status st = aitk_time_range_of(v, k, out);
    aitk_free(v);
    return st;
}

/* Ratio v scaled by s lies within factor of 1, ends included: the same
 * test as a row judged alone. */
static bool scaled_within(double v, double s, double factor)
{
    return v * s <= factor && v * s >= 1.0 / factor;
}

aitk_status aitk_best_scale_of(const double *ratios, size_t n, double factor, size_t *within,
                               double *scale)
{
    *scale = 1.0;
    *within = 0;
    if (n == 0)
        return AITK_OK;
    double *v;
    aitk_status st = aitk_sorted_copy(ratios, n, &v);
    if (st)
        return st;
    /* Every best set is a run of sorted ratios no more than factor^2 apart;
     * each run's scale is the one that centres it. The runs are counted with
     * the rows' own test, so a pair exactly factor^2 apart counts only where
     * rounding lets both through. Among equal counts the scale nearest 1
     * wins: the least change that does as well. */
    for (size_t i = 0, j = 0; i < n; i++) {
        if (j < i)
            j = i;
        while (j + 1 < n && v[j + 1] <= v[i] * factor * factor)
            j++;
        const double s = 1.0 / sqrt(v[i] * v[j]);
        size_t count = 0;
        for (size_t k = 0; k < n; k++)
            count += scaled_within(v[k], s, factor);
        if (count > *within || (count == *within && fabs(log(s)) < fabs(log(*scale)))) {
            *within = count;
            *scale = s;
        }
    }
    aitk_free(v);
    return AITK_OK;
}

aitk_status aitk_reported_best_scale(const aitk_reported_row *rows, size_t n, double factor,
                                     size_t *within, size_t *training_rows, double *scale)
{
    double *v = aitk_malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return AITK_E_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!rows[i].report->setup.inference)
            v[k++] = rows[i].ratio;
    *training_rows = k;
    aitk_status st = aitk_best_scale_of(v, k, factor, within, scale);
    aitk_free(v);
    return st;
}
