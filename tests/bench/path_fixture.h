/* A backend path written by hand, as a backend's paths() would return it:
 * the fixtures of the tests that read GEMM paths back (bench/paths_since.h,
 * bench/gemm_in_step.h, bench/workload_gemm_in_step.h). */
#ifndef AITK_TESTS_BENCH_PATH_FIXTURE_H
#define AITK_TESTS_BENCH_PATH_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "kernels/backend.h"

static inline aitk_backend_path path(const char *op, const char *kernel, long calls, double ms)
{
    aitk_backend_path p;
    memset(&p, 0, sizeof p);
    snprintf(p.op, sizeof p.op, "%s", op);
    snprintf(p.kernel, sizeof p.kernel, "%s", kernel);
    p.calls = calls;
    p.ms = ms;
    return p;
}

/* Calls so far of the backend's "gemm" path, -1 when it has none. */
static inline long gemm_path_calls(const aitk_backend *be)
{
    aitk_backend_path p[8];
    size_t n = 0;
    if (be->paths(p, 8, &n) != AITK_OK)
        return -2;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].op, "gemm"))
            return p[i].calls;
    return -1;
}

#endif
