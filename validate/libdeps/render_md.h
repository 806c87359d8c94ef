/* `deps` in Markdown, for support issues: `deps --markdown FILE` and
 * `render DEPS.json`. Drawn from the deps JSON document (schema
 * aitk-deps/1, render.h's roots), so a saved --json renders the same. */
#ifndef AITK_LIBDEPS_RENDER_MD_H
#define AITK_LIBDEPS_RENDER_MD_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

/* The page for a deps document; AITK_E_NOMEM only. */
aitk_status aitk_deps_render_markdown(const cJSON *doc, aitk_str *out);

/* Before any work: the --markdown file can be written and is none of the
 * inputs (AITK_E_INVAL / AITK_E_IO, one line in err); "-" is standard
 * output, nothing to check. */
aitk_status aitk_deps_markdown_ready(const char *md, char *const *inputs, size_t n, aitk_str *err);
/* The page for `doc`, written atomically to `md`, or to standard output
 * for "-". */
aitk_status aitk_deps_markdown_write(const cJSON *doc, const char *md, aitk_str *err);

/* `render DEPS.json`: secrets scrubbed (and with `redact`, user and host
 * names too, reports/redact.h), then the page. */
aitk_status aitk_deps_render_saved(cJSON *doc, bool redact, aitk_str *page);

/* A saved deps document from `text` (the file `path`):
 *   AITK_OK: *out holds it, its shape checked (everything the renderer
 *     reads is of the kind it expects);
 *   AITK_E_NOTFOUND: not a deps document (no "schema": "aitk-deps/1"), to
 *     be read as something else; *out NULL, err untouched;
 *   AITK_E_PARSE: a deps document with a malformed field, "path: field:
 *     problem" in err. */
aitk_status aitk_deps_json_load(const char *path, const char *text, size_t len, cJSON **out,
                                aitk_str *err);

#endif
