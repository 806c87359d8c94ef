/* Opening the GPU backend once (see gpu_backend.h). */
#include "bench/gpu_backend.h"

#include <string.h>

#include "bench/backend_loader.h"

static aitk_bench_gpu gpu;
static bool tried;
static int preferred; /* aitk_bench_gpu_prefer */

void aitk_bench_gpu_prefer(int ordinal)
{
    preferred = ordinal > 0 ? ordinal : 0;
}

static void open_first_device(void)
{
    const aitk_backend_load_result *ld = aitk_backend_load();
    if (ld->status) {
        aitk_str_appendf(&gpu.why, "the CUDA plugin could not be loaded: %s",
                         aitk_str_cstr(&ld->error));
        return;
    }
    const aitk_backend *be = ld->backend;
    static aitk_backend_probe probe; /* ~10 KiB: not on the stack */
    memset(&probe, 0, sizeof probe);
    if (be->probe(&probe) || probe.n_devices < 1) {
        aitk_str_appendf(&gpu.why, "the CUDA plugin lists no GPU: %s",
                         probe.error[0] ? probe.error : "no device answered");
        return;
    }
    /* One GPU per process of a launch on a node with several: the local
     * rank's, wrapping round when there are more ranks than GPUs. */
    const aitk_backend_device *dev = &probe.devices[preferred % probe.n_devices];
    if (be->open(dev->index)) {
        char why[AITK_BACKEND_ERROR_LEN] = "";
        be->last_error(why, sizeof why);
        aitk_str_appendf(&gpu.why, "the CUDA plugin could not open %s: %s", dev->name,
                         why[0] ? why : "no reason given");
        return;
    }
    gpu.device = *dev;
    gpu.backend = be;
}

const aitk_bench_gpu *aitk_bench_gpu_open(void)
{
    if (!tried) {
        tried = true;
        open_first_device();
    }
    return &gpu;
}
