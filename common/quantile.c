/* Sorting and quantiles, see quantile.h. */
#include "common/quantile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

static int ascending(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void aitk_sort_doubles(double *v, size_t n)
{
    if (v && n > 1)
        qsort(v, n, sizeof *v, ascending);
}

aitk_status aitk_sorted_copy(const double *x, size_t n, double **out)
{
    *out = NULL;
    if (!x || n == 0)
        return AITK_E_INVAL;
    double *v = aitk_malloc(n * sizeof *v);
    if (!v)
        return AITK_E_NOMEM;
    memcpy(v, x, n * sizeof *v);
    aitk_sort_doubles(v, n);
    *out = v;
    return AITK_OK;
}

double aitk_quantile_sorted(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    if (!(p > 0.0))
        return sorted[0];
    if (p >= 1.0)
        return sorted[n - 1];
    const double h = (double)(n - 1) * p;
    const size_t k = (size_t)floor(h);
    if (k + 1 >= n)
        return sorted[n - 1];
    return sorted[k] + (h - (double)k) * (sorted[k + 1] - sorted[k]);
}
