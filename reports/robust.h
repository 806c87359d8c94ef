/* The robust outlier rule of the fleet report: median, median absolute
 * deviation (MAD) and the modified z-score.
 *
 * Iglewicz and Hoaglin's rule, as the NIST/SEMATECH e-Handbook of
 * Statistical Methods gives it (section 1.3.5.17, "Detection of Outliers",
 * https://www.itl.nist.gov/div898/handbook/eda/section3/eda35h.htm):
 * M_i = 0.6745 (x_i - median) / MAD, and |M_i| > 3.5 is a potential
 * outlier. The median and the MAD are not pulled by the outlier itself, as a
 * mean and a standard deviation are, so one slow node among five stands out
 * instead of widening the band that should catch it.
 *
 * A tight cluster has a tiny MAD, so the noise of a good fleet (a few
 * percent) could score far beyond 3.5: a value must also lie more than a
 * minimum relative distance from the median. When the MAD is 0 (most nodes
 * agree exactly) the z-score does not exist and the relative rule decides
 * alone. With fewer than `min_values` values no outlier is claimed. */
#ifndef AITK_REPORTS_ROBUST_H
#define AITK_REPORTS_ROBUST_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"

#define AITK_ROBUST_Z_FACTOR 0.6745
#define AITK_ROBUST_Z_LIMIT 3.5

typedef struct aitk_robust_rule {
    double z_limit;      /* |z| beyond this (3.5) */
    double min_relative; /* and |x - median| / |median| beyond this (0.10) */
    size_t min_values;   /* no claim below this many values (3) */
} aitk_robust_rule;

/* The defaults above: 3.5, 10%, 3 values. */
extern const aitk_robust_rule aitk_robust_default_rule;

typedef struct aitk_robust_centre {
    double median, mad;
    bool judged; /* enough values for the rule to claim anything */
} aitk_robust_centre;

typedef struct aitk_robust_verdict {
    bool has_z;      /* false when the MAD is 0 */
    double z;        /* modified z-score, with has_z */
    double relative; /* |x - median| / |median|; +inf off a median of 0 */
    bool outlier;
} aitk_robust_verdict;

/* Median and MAD of x[0..n) (n >= 1, finite values; x is not modified).
 * AITK_E_INVAL for n == 0; AITK_E_NOMEM. */
aitk_status aitk_robust_centre_of(const double *x, size_t n, const aitk_robust_rule *rule,
                                  aitk_robust_centre *out);

/* One value against its centre. Never an outlier when !c->judged. */
aitk_robust_verdict aitk_robust_judge(const aitk_robust_centre *c, const aitk_robust_rule *rule,
                                      double x);

#endif
