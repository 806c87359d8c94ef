/* A GPU library the plugin opens at run time instead of linking (cuDNN,
 * NCCL): the first of its names that loads, and a table of its functions
 * filled by name. Why run time and not a link is each user's to say
 * (cudnn_api.c, collectives.c); what they share is only this.
 *
 * Plain C with no CUDA runtime, so the deviceless cuDNN test compiles it
 * too. */
#ifndef AITK_KERNELS_CUDA_RUNTIME_LIB_H
#define AITK_KERNELS_CUDA_RUNTIME_LIB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One function of the table: its exported name, and the function-pointer
 * field its address is copied into. */
typedef struct aitk_lib_symbol {
    const char *name;
    void *field;
} aitk_lib_symbol;

/* Opens the first of names[0..nnames) that loads (RTLD_NOW | RTLD_LOCAL)
 * and copies each symbol's address into its field. Returns the handle, or
 * NULL with every field zeroed and `error` saying why: the loader's words
 * for the first name ("dlopen libcudnn.so.9: ..."), or the symbol that is
 * missing ("dlsym cudnnBackendExecute: missing"); "..." ends a text cut to
 * fit. */
void *aitk_lib_open(const char *const *names, size_t nnames, const aitk_lib_symbol *symbols,
                    size_t nsymbols, char *error, size_t len);

#ifdef __cplusplus
}
#endif

#endif
