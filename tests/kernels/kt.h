/* Helpers shared by the kernel tests: a seeded PRNG, buffers, tolerant
 * comparisons and the finite-difference gradient checker.
 *
 * The finite-difference check: for an op y = f(x) and fixed random weights w,
 * L(x) = sum_i w_i y_i (summed in double). Backward is called with dout = w,
 * so its input gradient must equal dL/dx, which is estimated by central
 * differences (L(x + h e_j) - L(x - h e_j)) / 2h.
 * Tolerance, and why: the ops compute in fp32, so each L carries rounding of
 * about 1e-7 * sum|w_i y_i| (~1e-6 for these tiny shapes), which the
 * quotient amplifies by 1/2h = 50 (h = 1e-2) to ~5e-5; the truncation error
 * of central differences is h^2/6 * |f'''| ~ 2e-5 for these smooth ops with
 * inputs in [-1, 1]. An element passes when |num - ana| <= 2e-3 + 1e-2 *
 * max(|num|, |ana|): ten times above that noise, and far below the error of a
 * real bug (a missing term or factor moves the gradient by O(1)); the
 * checker's own test shows a 5% error is caught. */
#ifndef AITK_TESTS_KERNELS_KT_H
#define AITK_TESTS_KERNELS_KT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ops.h"

/* A host float array handed to the CPU table as activation storage: the CPU
 * backend's act_dtype is fp32, so its aitk_act* is a float*. */
#define KT_A(p) ((aitk_act *)(p))

#define KT_FD_H 1e-2f
#define KT_FD_ATOL 2e-3
#define KT_FD_RTOL 1e-2

typedef struct kt_rng {
    uint64_t s;
} kt_rng;

/* Uniform in [lo, hi). */
float kt_uniform(kt_rng *r, float lo, float hi);
/* A calloc'd buffer of n floats (the test fails, not crashes, on OOM). */
float *kt_alloc(size_t n);
/* Fill with uniform [lo, hi). */
void kt_fill(kt_rng *r, float *x, size_t n, float lo, float hi);
void kt_fill_value(float *x, size_t n, float value);
/* max |a-b| / max(floor, max|b|): a relative error against the reference b. */
double kt_max_rel_err(const float *a, const float *b, size_t n, double floor);

/* One finite-difference check. `forward` recomputes the op's output into
 * `out` (n_out values) from the current inputs held in ctx. */
typedef struct kt_fd {
    void (*forward)(void *ctx);
    void *ctx;
    const float *out;
    size_t n_out;
    const float *w; /* n_out weights of L; also the dout given to backward */
} kt_fd;

double kt_fd_loss(const kt_fd *fd);
/* Compare the analytic gradient `ana` (n values) of L with respect to `x`
 * (perturbed in place and restored) with central differences. Checks every
 * element when n <= 96, else 96 spread over the tensor. Returns the number of
 * elements out of tolerance and prints the worst one under `label`. */
int kt_fd_check(const kt_fd *fd, float *x, const float *ana, size_t n, const char *label);

#endif
