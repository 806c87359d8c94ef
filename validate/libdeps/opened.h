/* Libraries a library opens at run time rather than names among its needs
 * (opened.yaml, with the source of each): cuDNN 9's shim and graph library
 * open their sub-libraries with dlopen or LoadLibrary, so a missing one
 * passes every static and `import torch` check and fails the first call
 * into cuDNN. Loaded from the embedded data file, or from AITK_DATA_DIR
 * when set. */
#ifndef AITK_LIBDEPS_OPENED_H
#define AITK_LIBDEPS_OPENED_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

typedef struct aitk_opened aitk_opened;

/* AITK_E_PARSE with "validate/libdeps/opened.yaml:L:C: ..." when malformed. */
aitk_status aitk_opened_load(aitk_opened **out, aitk_str *err);
void aitk_opened_free(aitk_opened *o);

/* What `opener` (a file name, compared exactly, or ignoring case for a
 * Windows DLL when fold_case) opens at run time: the count, with *names
 * pointing at that many names (borrowed from the list), those of cuDNN's
 * GRAPH_JIT_ONLY configuration alone when graph_jit_only. *when_missing
 * gets the opener's symptom text (NULL, and 0 returned, when it opens
 * nothing). */
size_t aitk_opened_by(const aitk_opened *o, const char *opener, bool fold_case,
                      bool graph_jit_only, const char *const **names, const char **when_missing);

/* Whether the opener's file holds `name` (its stem, before ".so" or
 * ".dll", as bytes or as UTF-16 text): the list holds the names of every
 * cuDNN 9 release, and one a release does not name is not one it opens
 * (libcudnn_engines_tensor_ir.so.9 came after 9.1). Read only for a name
 * the walk did not find; true when the file cannot be read. */
bool aitk_opened_named_in(const char *opener_path, const char *name);

/* Whether CUDNN_LIB_CONFIG names cuDNN's GRAPH_JIT_ONLY configuration. */
bool aitk_opened_graph_jit_only(void);

#endif
