/* A backend's paths (kernels/backend.h) since an earlier snapshot of them.
 *
 * paths() counts and times from open; a workload wants its measured steps
 * only. The first calls of a shape carry one-time costs that are not the
 * kernel's: cuBLASLt and cuDNN load their kernels on first launch (CUDA
 * lazy loading), cuDNN builds its plan inside the timed attention call,
 * and with the GPU idle meanwhile the events count that wait. Taking a
 * snapshot after the warm-up steps and subtracting it leaves the steady
 * state. */
#ifndef AITK_BENCH_PATHS_SINCE_H
#define AITK_BENCH_PATHS_SINCE_H

#include <stddef.h>

#include "common/status.h"
#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[] = now[] less before[], path by path (same op and kernel): calls
 * subtracted, ms subtracted where both are timed (ms >= 0; a path untimed
 * before and timed now keeps its ms), paths with no calls left dropped, in
 * now[]'s order. AITK_E_RANGE when more than cap remain (*n says how many:
 * the first cap are written); AITK_E_INVAL for NULL arguments or a path
 * with fewer calls now than before (the backend was reopened in between). */
aitk_status aitk_paths_since(const aitk_backend_path *now, size_t n_now,
                             const aitk_backend_path *before, size_t n_before,
                             aitk_backend_path *out, size_t cap, size_t *n);

#ifdef __cplusplus
}
#endif

#endif
