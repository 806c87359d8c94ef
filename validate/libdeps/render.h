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

/* Problems and warnings; with `all`, the whole tree first. */
aitk_status aitk_deps_render_text(const aitk_dep_tree *t, const aitk_remedies *r, bool all,
                                  aitk_str *out);
/* {"path", "format", "arch", "ok", "load" (with --load), "problems": [...],
 *  "warnings": [...], "tree": {...}} */
aitk_status aitk_deps_render_json(const aitk_dep_tree *t, const aitk_remedies *r, cJSON **out);

/* One paragraph per problem for a report check: chain, searched, remedy. */
aitk_status aitk_deps_describe_problems(const aitk_dep_tree *t, const aitk_remedies *r,
                                        aitk_str *observed, aitk_str *remedy, aitk_str *sources);

#endif
