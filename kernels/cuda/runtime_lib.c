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

/* snprintf into error, ending in "..." when the text did not fit, as the
 * plugin's other error texts do. */
static void set_error(char *error, size_t len, const char *what, const char *name,
                      const char *why)
{
    int n = snprintf(error, len, "%s %s: %s", what, name, why);
    if (n >= 0 && (size_t)n >= len && len > 4)
        memcpy(error + len - 4, "...", 4);
}

void *aitk_lib_open(const char *const *names, size_t nnames, const aitk_lib_symbol *symbols,
                    size_t nsymbols, char *error, size_t len)
{
    void *lib = NULL;
    /* The first name's failure is the one worth reading: later names are
     * fallbacks (an unversioned link), whose absence says little. */
    char first[512] = "not found";
    for (size_t i = 0; i < nnames && !lib; i++) {
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        const char *e = lib ? NULL : dlerror();
        if (i == 0 && e)
            snprintf(first, sizeof first, "%s", e);
    }
    if (!lib) {
        set_error(error, len, "dlopen", nnames ? names[0] : "(no name)", first);
        clear_fields(symbols, nsymbols);
        return NULL;
    }
    for (size_t i = 0; i < nsymbols; i++) {
        void *p = dlsym(lib, symbols[i].name);
        if (!p) {
            set_error(error, len, "dlsym", symbols[i].name, "missing");
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
