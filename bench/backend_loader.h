/* Finding and opening the CUDA backend plugin (kernels/cuda) at run time.
 *
 * The validator links no CUDA library; this loader dlopens the plugin
 * module through common/dynload.h, asks its one entry point
 * (AITK_BACKEND_PLUGIN_ENTRY, kernels/backend.h) for the backend descriptor
 * and checks it before anyone calls through it: the ABI version, every
 * member of the descriptor, and the operation table (aitk_ops_check). When
 * loading fails, the loader's own text ("libcudart.so.13: cannot open
 * shared object file: No such file or directory") is kept: it is a finding
 * for the report, and the dependency doctor (aitk-validate deps) explains it.
 *
 * Search order: the AITK_CUDA_PLUGIN environment variable (a path; when set,
 * nothing else is tried), then beside the executable, then
 * <exe>/../lib/aitk-validate (the install layout), then the build tree's
 * copy (a path fixed at build time, for tests run from the build tree). The
 * first file that exists is the one opened: a broken plugin beside the
 * executable is reported, not masked by another copy. */
#ifndef AITK_BENCH_BACKEND_LOADER_H
#define AITK_BENCH_BACKEND_LOADER_H

#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"
#include "kernels/backend.h"

/* The outcome of finding and loading the plugin, kept for the process. */
typedef struct aitk_backend_load_result {
    bool built;                 /* this build has a plugin (a CUDA toolkit at build time) */
    aitk_status status;         /* AITK_OK when `backend` is usable */
    const aitk_backend *backend; /* NULL unless status == AITK_OK */
    aitk_str path;              /* the file opened, or the paths looked at */
    aitk_str error;             /* the loader's words when status != AITK_OK */
} aitk_backend_load_result;

/* True when this build has a CUDA backend plugin to look for. */
bool aitk_backend_plugin_built(void);

/* Opens the plugin at `path` (no search) and checks its descriptor. Errors:
 * AITK_E_DLOPEN (the dynamic loader's text), AITK_E_DLSYM (no entry point,
 * or a descriptor or operation table with a member missing, named in err),
 * AITK_E_UNSUPPORTED (another ABI version). A file the dynamic loader
 * mapped stays mapped for the life of the process (aitk_dl_keep), even when
 * refused: its runtime's constructors have run. */
aitk_status aitk_backend_plugin_open(const char *path, const aitk_backend **backend,
                                     aitk_str *err);

/* Searches and opens once per process (later calls return the same
 * outcome); never NULL. Not thread-safe: the validator loads from one thread. */
const aitk_backend_load_result *aitk_backend_load(void);

/* The search list, one path per entry joined by "\n", for messages and tests. */
aitk_status aitk_backend_plugin_candidates(aitk_str *out);

#endif
