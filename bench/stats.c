/* Statistics of step timings (see stats.h for the definitions).
 *
 * The t table is the two-sided 95% column of Student's t for 1..30 degrees of
 * freedom, as printed in standard tables (e.g. NIST/SEMATECH e-Handbook of
 * Statistical Methods, section 1.3.6.7.2), checked here against a numerical
 * integration of the t density. Beyond 30 the Cornish-Fisher expansion of
 * Abramowitz & Stegun 26.7.5 around z = 1.959964 is within 1e-4 of the exact
 * value, far below what timing noise can resolve. */
#include "bench/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/quantile.h"

/* Why these: 3 steps at least because the first step of a graph pays for
 * first-touch page faults, BLAS thread start-up and (on a GPU) autotuning and
 * lazy module loading, and the second often still pays for cache warm-up; a
 * window of 3 steps within 10% of their median is "settled" for step times
 * whose run-to-run noise is a few percent, without mistaking a monotone
 * decline for a plateau; 20 steps cap the cost when a machine never settles
 * (a shared host), and the report then says so. Bucket cycling makes
 * successive steps differ by design, so the runner applies this rule to the
 * steps of one bucket (see runner.c). */
const aitk_warmup_rule aitk_warmup_default = {
    .min_steps = 3, .max_steps = 20, .window = 3, .tolerance = 0.10};

static const double t95_table[30] = {
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
};

double aitk_stats_t95(size_t df)
{
    if (df == 0)
        df = 1;
    if (df <= 30)
        return t95_table[df - 1];
    const double z = 1.959963984540054, v = (double)df;
    const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
    return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
           (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

aitk_status aitk_stats_compute(const double *x, size_t n, aitk_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!x || n == 0)
        return AITK_E_INVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return AITK_E_INVAL;
    double *s;
    aitk_status st = aitk_sorted_copy(x, n, &s);
    if (st)
        return st;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    double mean = sum / (double)n, ss = 0;
    /* Two passes: the one-pass formula loses digits when the spread is tiny
     * next to the mean, which is exactly the case of settled step times. */
    for (size_t i = 0; i < n; i++)
        ss += (s[i] - mean) * (s[i] - mean);
    out->n = n;
    out->mean = mean;
    out->min = s[0];
    out->max = s[n - 1];
    out->median = aitk_quantile_sorted(s, n, 0.50);
    out->p5 = aitk_quantile_sorted(s, n, 0.05);
    out->p95 = aitk_quantile_sorted(s, n, 0.95);
    out->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    double half = n > 1 ? aitk_stats_t95(n - 1) * out->stddev / sqrt((double)n) : 0;
    out->ci95_low = mean - half;
    out->ci95_high = mean + half;
    aitk_free(s);
    return AITK_OK;
}

bool aitk_stats_settled(const double *x, size_t n, const aitk_warmup_rule *rule)
{
    size_t w = rule->window ? rule->window : 1;
    if (n < rule->min_steps || n < w)
        return false;
    /* The median of the window without allocating: windows are a few steps. */
    double win[16];
    if (w > sizeof win / sizeof *win)
        w = sizeof win / sizeof *win;
    memcpy(win, x + n - w, w * sizeof *win);
    aitk_sort_doubles(win, w);
    double med = aitk_quantile_sorted(win, w, 0.50);
    if (!(med > 0))
        return false;
    for (size_t i = 0; i < w; i++)
        if (fabs(win[i] - med) > rule->tolerance * med)
            return false;
    return true;
}

aitk_status aitk_stats_extrapolate(const double *times, const size_t *bucket_of, size_t n,
                                   size_t n_buckets, long target_steps,
                                   aitk_extrapolation *out)
{
    memset(out, 0, sizeof *out);
    if (!times || !bucket_of || n == 0 || n_buckets == 0 || target_steps <= 0)
        return AITK_E_INVAL;
    double *sum = aitk_calloc(3 * n_buckets, sizeof *sum);
    if (!sum)
        return AITK_E_NOMEM;
    double *sq = sum + n_buckets, *cnt = sq + n_buckets;
    aitk_status st = AITK_OK;
    for (size_t i = 0; i < n && !st; i++) {
        if (bucket_of[i] >= n_buckets || !isfinite(times[i]) || times[i] < 0)
            st = AITK_E_INVAL;
        else {
            sum[bucket_of[i]] += times[i];
            cnt[bucket_of[i]] += 1;
        }
    }
    for (size_t b = 0; b < n_buckets && !st; b++)
        if (cnt[b] == 0)
            st = AITK_E_INVAL;
    if (st) {
        aitk_free(sum);
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        double d = times[i] - sum[bucket_of[i]] / cnt[bucket_of[i]];
        sq[bucket_of[i]] += d * d;
    }
    /* Pooled relative variance, for buckets measured only once. */
    double rel_num = 0, rel_den = 0;
    for (size_t b = 0; b < n_buckets; b++) {
        double m = sum[b] / cnt[b];
        if (cnt[b] >= 2 && m > 0) {
            rel_num += sq[b] / (m * m);
            rel_den += cnt[b] - 1;
        }
    }
    double total = 0, var = 0;
    long per = target_steps / (long)n_buckets, extra = target_steps % (long)n_buckets;
    for (size_t b = 0; b < n_buckets; b++) {
        double c = (double)(per + ((long)b < extra ? 1 : 0));
        double m = sum[b] / cnt[b];
        double s2 = cnt[b] >= 2 ? sq[b] / (cnt[b] - 1) : rel_den > 0 ? m * m * rel_num / rel_den : NAN;
        total += c * m;
        var += c * c * s2 / cnt[b];
    }
    out->total_s = total;
    out->from_steps = n;
    out->target_steps = target_steps;
    if (rel_den > 0 && isfinite(var)) {
        size_t df = n > n_buckets ? n - n_buckets : 1;
        out->half_width_s = aitk_stats_t95(df) * sqrt(var);
        out->error_pct = total > 0 ? 100.0 * out->half_width_s / total : NAN;
    } else {
        /* Too few steps to say how sure it is: say nothing rather than 0%. */
        out->half_width_s = NAN;
        out->error_pct = NAN;
    }
    aitk_free(sum);
    return AITK_OK;
}
