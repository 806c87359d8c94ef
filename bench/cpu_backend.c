/* The CPU backend's readiness (see cpu_backend.h). */
#include "bench/cpu_backend.h"

#include "kernels/cpu/blas.h"

aitk_status aitk_bench_cpu_ready(aitk_str *why)
{
    aitk_status st = aitk_cpu_blas_load();
    if (st && why)
        aitk_str_append(why, aitk_cpu_blas_error());
    return st;
}
