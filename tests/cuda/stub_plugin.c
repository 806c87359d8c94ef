/* Broken plugins for the loader tests, built at test time:
 * STUB_MODE 0: no entry point at all (some other shared library);
 * STUB_MODE 1: an entry point whose table says another ABI version;
 * STUB_MODE 2: an entry point that declines the ABI asked for (NULL). */
#include <stddef.h>

#include "kernels/cuda_plugin.h"

#if STUB_MODE == 0
int aitk_stub_not_a_plugin(void);
int aitk_stub_not_a_plugin(void)
{
    return 1;
}
#else
static const aitk_cuda_plugin other_abi = {.abi_version = AITK_CUDA_PLUGIN_ABI + 1,
                                           .build = "stub"};

const aitk_cuda_plugin *aitk_cuda_plugin_get(int abi_version);
const aitk_cuda_plugin *aitk_cuda_plugin_get(int abi_version)
{
    (void)abi_version;
    return STUB_MODE == 1 ? &other_abi : NULL;
}
#endif
