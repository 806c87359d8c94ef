/* OpenBLAS, opened when the first matrix product needs it.
 *
 * Debian's libopenblas0-pthread starts one worker thread per CPU in a library
 * constructor, and each worker at once allocates a 128 MiB buffer in a loop
 * that never gives up (OpenBLAS 0.3.21, driver/others/memory.c,
 * blas_memory_alloc). Under an address-space limit (ulimit -v) the process
 * then hangs at exit, in the destructor that joins those workers, even when
 * it never multiplied a matrix. So on Linux the executable does not link
 * OpenBLAS: the first GEMM dlopens it, after checking that the buffers fit,
 * and the commands that do no linear algebra never load it at all.
 *
 * The Windows build links a static OpenBLAS built with USE_OPENMP=1
 * (ci/build-win-deps.sh): it has no thread server, its constructor starts no
 * thread, and its buffers are taken at the first GEMM, so there it is called
 * directly. Windows has no RLIMIT_AS to check against. */
#ifndef AITK_KERNELS_CPU_BLAS_H
#define AITK_KERNELS_CPU_BLAS_H

#include <stdbool.h>

#include "common/status.h"

/* Loads OpenBLAS once (later calls return the first answer). AITK_E_NOMEM
 * when the address-space limit leaves no room for one thread's buffers,
 * AITK_E_DLOPEN / AITK_E_DLSYM when the library or cblas_sgemm is missing;
 * aitk_cpu_blas_error() then says why in one line. */
aitk_status aitk_cpu_blas_load(void);

/* Why the load failed, one line ("" when it did not). */
const char *aitk_cpu_blas_error(void);

/* cblas_sgemm, row-major: C = alpha op(A) op(B) + beta C. Call only after
 * aitk_cpu_blas_load() returned AITK_OK. */
void aitk_cpu_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *b, int ldb, float beta, float *c,
                    int ldc);

#endif
