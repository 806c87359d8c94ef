/* Opening a GPU library at run time (see runtime_lib.h). */
#include "kernels/cuda/runtime_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static void clear_fields(const aitk_lib_symbol *symbols, size_t nsymbols)
{
    void *none = NULL;
    for (size_t i = 0; i < nsymbols; i++)
        memcpy(symbols[i].field, &none, sizeof none);
}

void *aitk_lib_open(const char *const *names, size_t nnames, const aitk_lib_symbol *symbols,
                    size_t nsymbols, char *error, size_t len)
{
    void *lib = NULL;
    for (size_t i = 0; i < nnames && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(error, len, "dlopen %s: %s", nnames ? names[0] : "(no name)",
                 e ? e : "not found");
        clear_fields(symbols, nsymbols);
        return NULL;
    }
    for (size_t i = 0; i < nsymbols; i++) {
        void *p = dlsym(lib, symbols[i].name);
        if (!p) {
            snprintf(error, len, "dlsym %s: missing", symbols[i].name);
            dlclose(lib);
            clear_fields(symbols, nsymbols);
            return NULL;
        }
        /* dlsym answers with an object pointer; copying its bytes into the
         * function pointer is the conversion ISO C allows. */
        memcpy(symbols[i].field, &p, sizeof p);
    }
    return lib;
}
