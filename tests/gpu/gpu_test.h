/* Opening the CUDA backend plugin for a GPU test, the way the validator
 * opens it (bench/backend_loader.h), and deciding whether there is anything
 * to test.
 *
 * gpu_test_open returns 0 with the backend open on device 0, 77 (ctest's
 * "skipped", SKIP_RETURN_CODE) when the plugin cannot be loaded or no
 * device answers, and 1 when the plugin loads but is broken: a machine
 * without a GPU skips, a GPU machine with a bad plugin fails. The test must
 * be compiled with AITK_CUDA_PLUGIN defined to the plugin's path
 * ($<TARGET_FILE:aitk_cuda>, tests/gpu/CMakeLists.txt). */
#ifndef AITK_TESTS_GPU_GPU_TEST_H
#define AITK_TESTS_GPU_GPU_TEST_H

#include <stdio.h>

#include "bench/backend_loader.h"
#include "kernels/backend.h"

#define GPU_TEST_SKIP 77

/* The backend's last failure in its own words, on stderr. */
static inline void gpu_test_print_last_error(const aitk_backend *be, const char *what)
{
    char err[AITK_BACKEND_ERROR_LEN];
    be->last_error(err, sizeof err);
    fprintf(stderr, "%s: %s\n", what, err[0] ? err : "(no error text)");
}

static inline int gpu_test_open(const aitk_backend **out)
{
    *out = NULL;
    aitk_str err = AITK_STR_INIT;
    const aitk_backend *be = NULL;
    aitk_status st = aitk_backend_plugin_open(AITK_CUDA_PLUGIN, &be, &err);
    if (st == AITK_E_DLOPEN) {
        /* No CUDA runtime on this machine: nothing a GPU test could run on. */
        printf("skipped: %s cannot be loaded: %s\n", AITK_CUDA_PLUGIN, aitk_str_cstr(&err));
        aitk_str_free(&err);
        return GPU_TEST_SKIP;
    }
    if (st != AITK_OK) {
        fprintf(stderr, "%s: %s\n", AITK_CUDA_PLUGIN, aitk_str_cstr(&err));
        aitk_str_free(&err);
        return 1;
    }
    aitk_str_free(&err);
    if (be->ops->act_dtype != AITK_DTYPE_BF16) {
        fprintf(stderr, "plugin act_dtype is %s, expected bf16\n",
                aitk_dtype_name(be->ops->act_dtype));
        return 1;
    }
    static aitk_backend_probe probe;
    st = be->probe(&probe);
    printf("%s; runtime %d, driver %d, cuBLASLt %d, cuDNN %d\n", be->build,
           probe.runtime_version, probe.driver_version, probe.cublaslt_version,
           probe.cudnn_version);
    if (st != AITK_OK || probe.n_devices < 1) {
        printf("skipped: no device answers: %s\n", probe.error);
        return GPU_TEST_SKIP;
    }
    const aitk_backend_device *d = &probe.devices[0];
    printf("device 0: %s, cc %d.%d, %d SMs, %.1f GiB\n", d->name, d->cc_major, d->cc_minor,
           d->sm_count, (double)d->total_memory_bytes / 1073741824.0);
    if (be->open(0) != AITK_OK) {
        gpu_test_print_last_error(be, "open(0)");
        return 1;
    }
    *out = be;
    return 0;
}

/* Which implementation served each op since open ("attention_forward ran
 * cuDNN fused SDPA 57 times"), and its device time when the backend times
 * ops (AITK_TIME_OPS=1 at open). GEMM paths are per shape: a full step has
 * a few hundred. */
static inline void gpu_test_print_paths(const aitk_backend *be)
{
    static aitk_backend_path paths[1024];
    size_t n = 0;
    if (be->paths(paths, sizeof paths / sizeof *paths, &n) != AITK_OK) {
        gpu_test_print_last_error(be, "paths");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (paths[i].ms >= 0.0)
            printf("path %-24s %8ld x %10.3f ms %s\n", paths[i].op, paths[i].calls, paths[i].ms,
                   paths[i].kernel);
        else
            printf("path %-24s %8ld x %s\n", paths[i].op, paths[i].calls, paths[i].kernel);
    }
}

#endif
