/* Turning a dependency tree into what a person reads (text) and what a
 * program reads (JSON). Both carry the same facts: each broken chain, the
 * folders searched in order, skipped candidates, and the remedy with its
 * source. */
#ifndef AITK_LIBDEPS_RENDER_H
#define AITK_LIBDEPS_RENDER_H

#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"
#include "validate/libdeps/remedies.h"
#include "validate/libdeps/tree.h"

typedef struct cJSON cJSON;

/* Problems and warnings; with `all`, the whole tree first. Control
 * characters from the files (a DT_NEEDED name with an escape sequence) are
 * written as \xNN, as aitk_deps_text_escape does. */
aitk_status aitk_deps_render_text(const aitk_dep_tree *t, const aitk_remedies *r, bool all,
                                  aitk_str *out);
/* `s` with C0 control characters and DEL as \xNN, for a terminal. */
void aitk_deps_text_escape(aitk_str *out, const char *s);

/* {"path", "format", "arch", "ok", "load" (with --load), "problems": [...],
 *  "warnings": [...], "unknown": [...] (links that cannot be judged from
 *  here: name, chain, detail, remedy), "tree": {...}}; for a root that is no library under a
 * library's name, "format" is null and "not_library" says what it is
 * ("git_lfs_pointer", "empty", ...), as does its problem entry. */
aitk_status aitk_deps_render_json(const aitk_dep_tree *t, const aitk_remedies *r, cJSON **out);

/* One paragraph per problem for a report check: chain, searched, remedy. */
aitk_status aitk_deps_describe_problems(const aitk_dep_tree *t, const aitk_remedies *r,
                                        aitk_str *observed, aitk_str *remedy, aitk_str *sources);
/* The same for the problems under a library opened at run time (opened.yaml),
 * which `import torch` does not meet, leaving out the NVIDIA driver's own
 * libraries not found (the GPU checks say that); *count gets how many. */
aitk_status aitk_deps_describe_run_time_problems(const aitk_dep_tree *t, const aitk_remedies *r,
                                                 aitk_str *observed, aitk_str *remedy,
                                                 aitk_str *sources, size_t *count);

#endif
