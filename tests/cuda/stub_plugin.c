/* Broken plugins for the loader tests, built at test time:
 * STUB_MODE 0: no entry point at all (some other shared library);
 * STUB_MODE 1: an entry point whose descriptor says another ABI version;
 * STUB_MODE 2: an entry point that declines the ABI asked for (NULL);
 * STUB_MODE 3: only the entry point of the first plugin ABI
 *              (aitk_cuda_plugin_get), as a plugin left from an older build. */
#include <stddef.h>

#include "kernels/backend.h"

#if STUB_MODE == 0
int aitk_stub_not_a_plugin(void);
int aitk_stub_not_a_plugin(void)
{
    return 1;
}
#elif STUB_MODE == 3
/* The old entry's signature does not matter: the loader never calls it. */
const void *aitk_cuda_plugin_get(int abi_version);
const void *aitk_cuda_plugin_get(int abi_version)
{
    (void)abi_version;
    return NULL;
}
#else
static const aitk_backend other_abi = {.abi_version = AITK_BACKEND_ABI + 1, .name = "stub",
                                       .build = "stub"};

const aitk_backend *aitk_backend_plugin_get(int abi_version);
const aitk_backend *aitk_backend_plugin_get(int abi_version)
{
    (void)abi_version;
    return STUB_MODE == 1 ? &other_abi : NULL;
}
#endif
