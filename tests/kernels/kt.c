/* Kernel test helpers: see kt.h for the finite-difference tolerances. */
#include "kt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

float kt_uniform(kt_rng *r, float lo, float hi)
{
    /* splitmix64: tiny, seedable, and the same sequence on every platform. */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = (double)(z >> 11) / 9007199254740992.0; /* 2^53 */
    return (float)(lo + (hi - lo) * u);
}

float *kt_alloc(size_t n)
{
    float *p = calloc(n ? n : 1, sizeof *p);
    if (!p) {
        fprintf(stderr, "kt_alloc: out of memory for %zu floats\n", n);
        abort();
    }
    return p;
}

void kt_fill(kt_rng *r, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = kt_uniform(r, lo, hi);
}

void kt_fill_value(float *x, size_t n, float value)
{
    for (size_t i = 0; i < n; i++)
        x[i] = value;
}

double kt_max_rel_err(const float *a, const float *b, size_t n, double floor)
{
    double num = 0.0, den = floor;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (!(e <= num)) /* also catches NaN */
            num = isnan(e) ? INFINITY : e;
        if (fabs(b[i]) > den)
            den = fabs(b[i]);
    }
    return num / den;
}

double kt_fd_loss(const kt_fd *fd)
{
    fd->forward(fd->ctx);
    double l = 0.0;
    for (size_t i = 0; i < fd->n_out; i++)
        l += (double)fd->w[i] * fd->out[i];
    return l;
}

int kt_fd_check(const kt_fd *fd, float *x, const float *ana, size_t n, const char *label)
{
    size_t count = n <= 96 ? n : 96;
    int bad = 0;
    double worst = -1.0, worst_num = 0.0, worst_ana = 0.0;
    size_t worst_j = 0;
    for (size_t c = 0; c < count; c++) {
        size_t j = count == n ? c : c * (n - 1) / (count - 1);
        float saved = x[j];
        x[j] = saved + KT_FD_H;
        double lp = kt_fd_loss(fd);
        x[j] = saved - KT_FD_H;
        double lm = kt_fd_loss(fd);
        x[j] = saved;
        /* The perturbation actually applied, in fp32. */
        double h2 = (double)(saved + KT_FD_H) - (double)(saved - KT_FD_H);
        double num = (lp - lm) / h2;
        double a = ana[j];
        double err = fabs(num - a);
        double allowed = KT_FD_ATOL + KT_FD_RTOL * fmax(fabs(num), fabs(a));
        if (!(err <= allowed))
            bad++;
        double ratio = err / allowed;
        if (!(ratio <= worst)) {
            worst = isnan(ratio) ? INFINITY : ratio;
            worst_num = num;
            worst_ana = a;
            worst_j = j;
        }
    }
    kt_fd_loss(fd); /* leave the outputs as they were for x */
    printf("fd %-28s %zu checked, %d out of tolerance, worst [%zu] numeric %.6g analytic "
           "%.6g (%.2f of allowed)\n",
           label, count, bad, worst_j, worst_num, worst_ana, worst);
    return bad;
}
