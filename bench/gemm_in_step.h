/* GEMMs inside a training step against the same GEMMs alone.
 *
 * The CUDA backend names each GEMM path's problem in a fixed form inside
 * its kernel text (kernels/backend.h, aitk_backend_path) and, with
 * AITK_TIME_OPS=1, sums each path's device time. This module reads those
 * paths back: it parses the problem, counts its FLOPs (2 m n k per batch
 * entry, a multiply and an add per term of each output), merges the paths
 * of one problem (the gemm op and the LoRA steps may run the same one),
 * and sets each problem's rate inside the step against the rate the same
 * problem reaches alone (bench/gemm_isolated.h measures that), per problem
 * and over the whole step: the target is the step's GEMMs at >= 85%
 * of their isolated rate.
 *
 * The overall ratio weighs each problem by its time: it is the time the
 * step's GEMMs would take at their isolated rates divided by the time they
 * took, i.e. sum(flops_i / isolated_rate_i) / sum(ms_i), over the problems
 * that have an isolated rate; a mean of per-problem ratios would let a
 * tiny GEMM count as much as the MLP's. Give it the measured steps' paths
 * (bench/paths_since.h: the paths after the run less a snapshot taken
 * after the warm-up), so first-call costs stay out. Plain C, no backend
 * needed. */
#ifndef AITK_BENCH_GEMM_IN_STEP_H
#define AITK_BENCH_GEMM_IN_STEP_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One GEMM problem in ops.h's terms: C (m,n) = alpha op(A) op(B) + beta C,
 * `batch` times. Type names as the path writes them ("bf16", "fp32"). */
typedef struct aitk_gemm_shape {
    long m, n, k, batch;
    int trans_a, trans_b; /* 0 or 1 */
    int beta;             /* 1 when the call read C (beta != 0) */
    char a[8], b[8], c[8], compute[8];
    char epilogue[8];     /* "none", "bias" */
} aitk_gemm_shape;

/* Reads the "[m=... epilogue=...]" part of a path's kernel text; false when
 * the text has none (not a GEMM path, or another backend) or it is
 * malformed: a key missing, a size not positive, a flag not 0 or 1, a type
 * name too long. Keys it does not know are skipped. */
bool aitk_gemm_shape_parse(const char *kernel, aitk_gemm_shape *out);

/* Writes the shape back in the path's form, "[m=... epilogue=...]";
 * false when it does not fit in len. */
bool aitk_gemm_shape_format(const aitk_gemm_shape *s, char *buf, size_t len);

bool aitk_gemm_shape_equal(const aitk_gemm_shape *x, const aitk_gemm_shape *y);

/* 2 m n k batch: FLOPs of one call. */
double aitk_gemm_shape_flops(const aitk_gemm_shape *s);

/* A rate measured for one problem alone. */
typedef struct aitk_gemm_rate {
    aitk_gemm_shape shape;
    double flops_per_s;
} aitk_gemm_rate;

/* One problem of the step. */
typedef struct aitk_gemm_in_step_row {
    aitk_gemm_shape shape;
    long calls;
    double ms;                   /* device time of its calls in the step */
    double flops;                /* calls * aitk_gemm_shape_flops */
    double flops_per_s;          /* flops / time; 0 when ms is 0 */
    double isolated_flops_per_s; /* 0: no isolated rate for this problem */
    double ratio;                /* flops_per_s / isolated_flops_per_s; -1: no isolated rate */
} aitk_gemm_in_step_row;

/* The step's GEMMs together. */
typedef struct aitk_gemm_in_step {
    size_t n_rows;               /* distinct timed problems (rows filled: at most cap) */
    size_t untimed_paths;        /* GEMM paths with calls but ms < 0: timing was off */
    long calls;
    double ms, flops, flops_per_s; /* over every timed problem */
    /* Over the problems with an isolated rate: */
    double matched_ms, matched_flops;
    double matched_share;        /* matched_flops / flops; 0 when flops is 0 */
    double isolated_ms;          /* sum of flops_i / isolated_rate_i, in ms */
    double ratio;                /* isolated_ms / matched_ms; -1 when nothing matched */
} aitk_gemm_in_step;

/* Rows per distinct problem among `paths` (the GEMM paths with calls and
 * ms >= 0, in the order first met), each set against the entry of
 * `isolated` with an equal shape (none: ratio -1), and the totals.
 * AITK_E_RANGE when there are more problems than cap (the totals are still
 * complete and sum->n_rows says how many rows are needed); AITK_E_INVAL for
 * NULL arguments, an isolated rate not above 0, or ms not finite. */
aitk_status aitk_gemm_in_step_compute(const aitk_backend_path *paths, size_t n_paths,
                                      const aitk_gemm_rate *isolated, size_t n_isolated,
                                      aitk_gemm_in_step_row *rows, size_t cap,
                                      aitk_gemm_in_step *sum);

#ifdef __cplusplus
}
#endif

#endif
