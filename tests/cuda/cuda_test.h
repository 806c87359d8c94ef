/* Shared by the CUDA plugin tests: open the plugin this build made and probe
 * it; a GPU test calls cuda_test_device() first and exits 77 (reported as
 * skipped by CTest, never as passed) when no GPU answers. */
#ifndef AITK_TESTS_CUDA_CUDA_TEST_H
#define AITK_TESTS_CUDA_CUDA_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "bench/cuda_loader.h"

static aitk_cuda_probe_result cuda_test_probe;

/* The plugin of this build, probed; NULL (with the reason printed) when it
 * does not load. `*probe_st` gets the probe's status. */
static inline const aitk_cuda_plugin *cuda_test_open(aitk_status *probe_st)
{
    const aitk_cuda_plugin *api = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_cuda_plugin_open(AITK_CUDA_PLUGIN_BUILD_PATH, &api, &err);
    if (st) {
        fprintf(stderr, "the plugin %s does not load: %s\n", AITK_CUDA_PLUGIN_BUILD_PATH,
                aitk_str_cstr(&err));
        aitk_str_free(&err);
        return NULL;
    }
    aitk_str_free(&err);
    *probe_st = api->probe(&cuda_test_probe);
    return api;
}

/* For GPU tests: the plugin with device 0 answering, or exit(77). A plugin
 * that does not load is a failure (exit 1), not a skip: the build made it. */
static inline const aitk_cuda_plugin *cuda_test_device(void)
{
    aitk_status st = AITK_OK;
    const aitk_cuda_plugin *api = cuda_test_open(&st);
    if (!api)
        exit(1);
    if (st || cuda_test_probe.n_devices < 1) {
        fprintf(stderr, "skipped: no GPU answers (%s)\n", cuda_test_probe.error);
        exit(77);
    }
    const aitk_cuda_device_info *d = &cuda_test_probe.devices[0];
    fprintf(stderr, "device 0: %s, cc %d.%d, %.1f GiB, %d SMs\n", d->name, d->cc_major,
            d->cc_minor, (double)d->total_memory_bytes / 1073741824.0, d->sm_count);
    return api;
}

#endif
