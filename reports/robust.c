/* Median, MAD and the modified z-score (see robust.h). */
#include "reports/robust.h"

#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "common/quantile.h"

const aitk_robust_rule aitk_robust_default_rule = {
    .z_limit = AITK_ROBUST_Z_LIMIT, .min_relative = 0.10, .min_values = 3};

/* Sorts s[0..n) in place and returns its median. */
static double median_sorting(double *s, size_t n)
{
    aitk_sort_doubles(s, n);
    return aitk_quantile_sorted(s, n, 0.5);
}

aitk_status aitk_robust_centre_of(const double *x, size_t n, const aitk_robust_rule *rule,
                                  aitk_robust_centre *out)
{
    if (n == 0)
        return AITK_E_INVAL;
    double *s = aitk_malloc(n * sizeof *s);
    if (!s)
        return AITK_E_NOMEM;
    memcpy(s, x, n * sizeof *s);
    out->median = median_sorting(s, n);
    for (size_t i = 0; i < n; i++)
        s[i] = fabs(x[i] - out->median);
    out->mad = median_sorting(s, n);
    out->judged = n >= rule->min_values;
    aitk_free(s);
    return AITK_OK;
}

aitk_robust_verdict aitk_robust_judge(const aitk_robust_centre *c, const aitk_robust_rule *rule,
                                      double x)
{
    aitk_robust_verdict v = {0};
    double d = x - c->median;
    v.relative = c->median != 0 ? fabs(d) / fabs(c->median) : (d == 0 ? 0 : INFINITY);
    bool far = v.relative > rule->min_relative;
    if (c->mad > 0) {
        v.has_z = true;
        v.z = AITK_ROBUST_Z_FACTOR * d / c->mad;
        v.outlier = c->judged && far && fabs(v.z) > rule->z_limit;
    } else {
        /* Most values agree exactly: no spread to score against, so the
         * distance from the median decides alone. */
        v.outlier = c->judged && far;
    }
    return v;
}
