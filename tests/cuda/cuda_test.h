/* Shared by the CUDA plugin tests: open the plugin this build made and probe
 * it; a GPU test calls cuda_test_device() first and exits 77 (reported as
 * skipped by CTest, never as passed) when no GPU answers.
 * The plugin this build made must load: one that does not is a failure,
 * never a skip. */
#ifndef AITK_TESTS_CUDA_CUDA_TEST_H
#define AITK_TESTS_CUDA_CUDA_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/backend_loader.h"

static aitk_backend_probe cuda_test_probe;
/* The loader's words when the build's plugin did not load. */
static aitk_str cuda_test_load_error;

/* The plugin of this build, probed; NULL (with the reason printed and kept
 * in cuda_test_load_error) when it does not load. `*probe_st` gets the
 * probe's status. */
static inline const aitk_backend *cuda_test_open(aitk_status *probe_st)
{
    const aitk_backend *b = NULL;
    aitk_str_clear(&cuda_test_load_error);
    aitk_status st = aitk_backend_plugin_open(AITK_CUDA_PLUGIN_BUILD_PATH, &b,
                                              &cuda_test_load_error);
    if (st) {
        fprintf(stderr, "the plugin %s does not load: %s\n", AITK_CUDA_PLUGIN_BUILD_PATH,
                aitk_str_cstr(&cuda_test_load_error));
        return NULL;
    }
    *probe_st = b->probe(&cuda_test_probe);
    return b;
}

/* For GPU tests: the plugin with device 0 answering, or exit(77) when no GPU
 * answers. A plugin that does not load is a failure (exit 1), not a skip:
 * the build made it. */
static inline const aitk_backend *cuda_test_device(void)
{
    aitk_status st = AITK_OK;
    const aitk_backend *b = cuda_test_open(&st);
    if (!b)
        exit(1);
    if (st || cuda_test_probe.n_devices < 1) {
        fprintf(stderr, "skipped: no GPU answers (%s)\n", cuda_test_probe.error);
        exit(77);
    }
    const aitk_backend_device *d = &cuda_test_probe.devices[0];
    fprintf(stderr, "device 0: %s, cc %d.%d, %.1f GiB, %d SMs\n", d->name, d->cc_major,
            d->cc_minor, (double)d->total_memory_bytes / 1073741824.0, d->sm_count);
    return b;
}

#endif
