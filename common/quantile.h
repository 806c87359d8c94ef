/* Sorting numbers and reading quantiles off the sorted list.
 *
 * One definition of a quantile for the whole house: linear interpolation
 * between the two nearest ranks, h = (n - 1) p, which is type 7 of Hyndman
 * and Fan, "Sample Quantiles in Statistical Packages" (The American
 * Statistician 50(4), 1996), and the default of R's quantile() and NumPy's
 * percentile(). Step-time statistics, prediction ranges and the fleet's
 * medians all use it, so a median printed in one report means the same in
 * another. */
#ifndef AITK_COMMON_QUANTILE_H
#define AITK_COMMON_QUANTILE_H

#include <stddef.h>

#include "common/status.h"

/* Sorts ascending in place. NaN must not be present (callers check). */
void aitk_sort_doubles(double *v, size_t n);

/* A sorted copy of x in *out (free with aitk_free); AITK_E_NOMEM, or
 * AITK_E_INVAL for n == 0 or a NULL pointer. */
aitk_status aitk_sorted_copy(const double *x, size_t n, double **out);

/* The p-quantile (p in [0, 1], clamped) of an ascending list; NAN when n is
 * 0. p = 0.5 is the median: the middle value, or the mean of the middle two. */
double aitk_quantile_sorted(const double *sorted, size_t n, double p);

#endif
