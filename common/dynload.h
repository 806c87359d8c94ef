/* Loading optional libraries at run time (dlopen / LoadLibraryExW).
 *
 * The validator links no GPU library: NVML, the CUDA driver and the GPU plugin
 * are opened here, and when that fails the loader's own words are kept,
 * because "libcuda.so.1: cannot open shared object file" is itself a finding. */
#ifndef AITK_COMMON_DYNLOAD_H
#define AITK_COMMON_DYNLOAD_H

#include "common/status.h"
#include "common/str.h"

typedef struct aitk_dl aitk_dl;

enum {
    /* RTLD_LAZY | RTLD_LOCAL on POSIX; torch's LoadLibraryExW flags on Windows
     * (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR) when
     * the name is a path, default search otherwise. */
    AITK_DL_DEFAULT = 0,
    /* Resolve every symbol now (RTLD_NOW): surfaces missing symbols at open. */
    AITK_DL_NOW = 1,
};

/* Opens `name` (a soname such as "libnvidia-ml.so.1" or a path). On failure
 * returns AITK_E_DLOPEN and, when `err` is given, appends the loader's text. */
aitk_status aitk_dl_open(const char *name, int flags, aitk_dl **out, aitk_str *err);

/* Opens the first of `names` (NULL-terminated) that loads; `err` collects the
 * loader text of every failed attempt, joined by "; ". `*which` (optional) is the
 * name that loaded. */
aitk_status aitk_dl_open_first(const char *const *names, int flags, aitk_dl **out,
                               const char **which, aitk_str *err);

/* Looks up a symbol; AITK_E_DLSYM with the loader's text when absent. */
aitk_status aitk_dl_sym(aitk_dl *dl, const char *symbol, void **out, aitk_str *err);

/* The path the loader actually mapped, when the platform can tell (else ""). */
aitk_status aitk_dl_path(aitk_dl *dl, aitk_str *out);

void aitk_dl_close(aitk_dl *dl);

/* Keeps `dl` loaded for the life of the process instead of closing it.
 * A library this program uses itself (the CUDA plugin and the runtime it
 * links) allocates in its constructors and frees at process exit; dlclose
 * strands those allocations (LeakSanitizer reports them from "<unknown
 * module>"). The handle stays reachable from a process-wide list. Libraries
 * that are only examined are never loaded here: see common/libload.h. */
void aitk_dl_keep(aitk_dl *dl);

#endif
