/* The GPU workload entry's "gemm_in_step": how fast the training step's
 * GEMMs ran inside the step against the same GEMMs alone, the figure issue
 * #21 sets a target for (the step's GEMMs at >= 85% of their isolated
 * cuBLASLt rate at the same shapes).
 *
 * The parts are elsewhere: the backend's per-op device times
 * (kernels/backend.h, paths' ms, with AITK_TIME_OPS=1), the paths of the
 * timed steps alone (bench/paths_since.h: after the run less a snapshot
 * taken after the warm-up), one problem timed alone (bench/gemm_isolated.h)
 * and the ratios (bench/gemm_in_step.h). This module picks which problems
 * to time alone and writes the entry's object; workload.c only calls it.
 *
 * When the backend does not time ops (AITK_TIME_OPS unset, the default,
 * because the events add commands between kernels and the s/step must not
 * carry them), a GPU entry still gets the object, with status "skip" and
 * the sentence that says how to measure it: a field that is simply absent
 * reads as "not applicable", and the reader would not learn the switch. An
 * entry whose paths name no GEMM problem (the CPU reference, whose kernel
 * texts carry no shape) gets nothing. */
#ifndef AITK_BENCH_WORKLOAD_GEMM_IN_STEP_H
#define AITK_BENCH_WORKLOAD_GEMM_IN_STEP_H

#include <stddef.h>

#include "bench/gemm_in_step.h"
#include "bench/workload_kernels.h"
#include "common/status.h"
#include "kernels/backend.h"

typedef struct cJSON cJSON;

/* The target: in-step rate over isolated rate. */
#define AITK_BENCH_GEMM_TARGET 0.85
/* Problems timed alone: the slowest first, until they make up this share
 * of the step's GEMM time or there are AITK_BENCH_GEMM_MAX_TIMED of them.
 * A FLUX step has a few dozen distinct problems, most of the time in the
 * first ten (the MLP and attention projections); the tail of small LoRA
 * GEMMs would cost a second each to time for a few percent of the time. */
#define AITK_BENCH_GEMM_SHARE 0.95
#define AITK_BENCH_GEMM_MAX_TIMED 24
/* Rows written in the report's "problems", slowest first. */
#define AITK_BENCH_GEMM_MAX_ROWS 24

#define AITK_BENCH_GEMM_NOT_TIMED                                                              \
    "not measured: set AITK_TIME_OPS=1 (op timing adds CUDA events around every op)"

/* The problems to time alone, from the step's paths (`paths`, the timed
 * steps' only): distinct timed GEMM problems by their time in the step,
 * most first, until AITK_BENCH_GEMM_SHARE of the GEMM time is covered or
 * `cap` are picked; *n says how many were written. AITK_E_INVAL for NULL
 * arguments, AITK_E_NOMEM. */
aitk_status aitk_bench_gemm_pick(const aitk_backend_path *paths, size_t n_paths,
                                 aitk_gemm_shape *out, size_t cap, size_t *n);

/* Adds "gemm_in_step" to `entry` from the step's paths and the isolated
 * rates measured for some of its problems: nothing when no path names a
 * GEMM problem; status "skip" with AITK_BENCH_GEMM_NOT_TIMED when the GEMM
 * paths are untimed; else the overall ratio judged against
 * AITK_BENCH_GEMM_TARGET (pass at or above, warn below; skip when no
 * problem has an isolated rate) and the slowest problems' rows. `note`:
 * added as "message" when not NULL (why some problems have no isolated
 * rate). Pure: no backend. AITK_E_INVAL for NULL arguments or what
 * aitk_gemm_in_step_compute refuses, AITK_E_NOMEM. */
aitk_status aitk_bench_gemm_in_step_json(cJSON *entry, const aitk_backend_path *paths,
                                         size_t n_paths, const aitk_gemm_rate *isolated,
                                         size_t n_isolated, const char *note);

/* The whole measurement on the opened backend `be`: the step's paths as
 * `after` less `warm` (taken after the warm-up), the picked problems timed
 * alone (a problem no single op runs, or whose timing fails, is left out
 * and counted in "message"), and the object above. Nothing when either
 * snapshot is missing or the backend was reopened in between. Run it
 * after `after` was taken: the isolated calls add to the backend's paths.
 * AITK_E_NOMEM only; a backend error is a sentence, not a failure. */
aitk_status aitk_bench_gemm_in_step_add(cJSON *entry, const aitk_backend *be,
                                        const aitk_bench_paths *warm,
                                        const aitk_bench_paths *after);

#endif
