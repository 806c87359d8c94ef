/* Helpers of the math tests: inputs drawn with kernels/math/draw.h, bf16
 * storage emulation, and a closeness check that prints the worst element.
 *
 * Tolerances are per comparison, written at the call: the GPU emulation
 * stores bf16 (8 significant bits, a relative step of 2^-8 = 0.39%) and
 * sums in fp32 where the CPU reference stores fp32 and sums in double, so a
 * result may differ by one bf16 rounding of the output (0.2% relative) plus
 * the rounding of an intermediate that was stored in bf16 on the way. */
#ifndef AITK_TESTS_MATH_MT_H
#define AITK_TESTS_MATH_MT_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "kernels/math/bf16.h"
#include "kernels/math/draw.h"

static inline float *mt_alloc(size_t n)
{
    float *p = calloc(n ? n : 1, sizeof *p);
    assert_non_null(p);
    return p;
}

/* x[j] = bf16(add + scale * u(key, j)): what a bf16 tensor on the GPU holds
 * and the CPU reference is given (ops.h: bf16-round the CPU inputs). */
static inline float *mt_draw_bf16(size_t n, uint64_t key, float scale, float add)
{
    float *x = mt_alloc(n);
    for (size_t j = 0; j < n; j++)
        x[j] = aitk_bf16_rounded(add + aitk_draw(key, j, scale));
    return x;
}

static inline float *mt_copy(const float *x, size_t n)
{
    float *y = mt_alloc(n);
    for (size_t j = 0; j < n; j++)
        y[j] = x[j];
    return y;
}

/* |got - want| <= atol + rtol |want| for every element; prints the worst
 * one (index, both values) and fails when any is outside. */
static inline void mt_close(const char *what, const float *got, const float *want, size_t n,
                            float rtol, float atol)
{
    size_t worst = 0, bad = 0;
    double worst_excess = -1.0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)got[i] - (double)want[i]);
        double lim = atol + rtol * fabs((double)want[i]);
        bool nan_mismatch = isnan(got[i]) != isnan(want[i]);
        if (nan_mismatch || err > lim)
            bad++;
        double excess = nan_mismatch ? INFINITY : err - lim;
        if (excess > worst_excess) {
            worst_excess = excess;
            worst = i;
        }
    }
    if (bad)
        fprintf(stderr,
                "%s: %zu of %zu outside (rtol %g, atol %g); worst [%zu] got %.9g want %.9g\n",
                what, bad, n, rtol, atol, worst, got[worst], want[worst]);
    assert_int_equal(bad, 0);
}

#endif
