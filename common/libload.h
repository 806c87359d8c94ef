/* Loading a library that is being examined, always in another process.
 *
 * The validator examines several library trees in one run (the CUDA
 * toolkit's, torch/lib, the nvidia-* wheels). Loaded into the validator's
 * own process they would contaminate each other: glibc binds a dependency
 * to an object already loaded under the same soname (elf/dl-load.c,
 * _dl_map_object compares sonames of loaded objects before searching), so
 * the venv's libcudnn_graph.so.9 loaded by one check is what the system's
 * libcudnn_cnn.so.9 gets in the next ("undefined symbol ... version
 * libcudnn_graph.so.9"), a deleted file still looks loaded, and a version
 * function answers for whichever copy was mapped first.
 *
 * So each load happens in a fresh copy of this program (the hidden
 * argument AITK_LIBLOAD_CHILD_ARG, answered by aitk_libload_child), one
 * process per library: what it reports is the file named, loaded as the
 * system loader would load it for a process of its own. A copy that is
 * exec'd, rather than a fork of this process, is chosen because a fork
 * inherits every library already mapped here (which is the contamination
 * to avoid), cannot safely call dlopen when the parent has other threads
 * (OpenBLAS starts some), and does not exist on Windows. */
#ifndef AITK_COMMON_LIBLOAD_H
#define AITK_COMMON_LIBLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

#define AITK_LIBLOAD_CHILD_ARG "--aitk-load-library"

typedef struct aitk_libload {
    bool loaded;       /* the loader accepted the file */
    bool python_ext;   /* refused only for Python C-API symbols: an extension module */
    aitk_str error;    /* the loader's words, or how the loading process ended */
    aitk_str mapped;   /* the path the loader mapped, when it can tell */
    long values[3];    /* what the version function returned */
    int n_values;      /* 0: no version function asked, or it failed */
    aitk_str fn_error; /* why the version function gave nothing */
} aitk_libload;

/* The program that loads: main() sets it to its own path. Test programs
 * that link the probes set the real aitk-validate. Without one, nothing is
 * loaded (AITK_E_UNSUPPORTED). The string is copied. */
aitk_status aitk_libload_set_helper(const char *exe);

/* Loads `path` in a fresh process and, when `fn` is one of the version
 * functions named in libload.c (cudaRuntimeGetVersion, cublasGetProperty,
 * cublasLtGetVersion, cudnnGetVersion, ncclGetVersion), calls it there.
 * AITK_OK when the process answered or ended (r says how); AITK_E_EXEC or
 * AITK_E_UNSUPPORTED (err says why) when no process could be started;
 * AITK_E_NOMEM. Free r with aitk_libload_free. */
aitk_status aitk_libload_probe(const char *path, const char *fn, long timeout_ms,
                               aitk_libload *r, aitk_str *err);

/* The same, in a process that first loads each of `before` by path, in
 * order and kept loaded, as a program that loads them itself would (torch
 * preloading the CUDA wheels' libraries): the library's links then bind to
 * them. No version function is called. A library of `before` the loader
 * refuses is the answer ("loading PATH before it: ..."). */
aitk_status aitk_libload_probe_after(const char *path, const char *const *before,
                                     size_t n_before, long timeout_ms, aitk_libload *r,
                                     aitk_str *err);

void aitk_libload_free(aitk_libload *r);

/* The child side: argv is {PATH, FN (absent or empty: none), BEFORE...}.
 * Prints the marked answer and ends the process at once (_Exit: the
 * library's destructors are not part of the question). */
int aitk_libload_child(int argc, char **argv);

#endif
