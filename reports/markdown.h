/* Markdown rendering of a report: short, for the body of a GitHub issue. */
#ifndef AITK_REPORTS_MARKDOWN_H
#define AITK_REPORTS_MARKDOWN_H

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

/* Failures first, each with observed/expected and its remedy; then warnings;
 * then every check in a collapsed table. Input: a report tree (see report.h). */
aitk_status aitk_render_markdown(const cJSON *report, aitk_str *out);

/* Report text made safe for one Markdown table cell or list item: pipes
 * escaped, newlines folded, '<' as &lt; so no markup or <script> from a
 * report reaches an issue page. Shared with `compare --format markdown`. */
void aitk_markdown_inline(aitk_str *out, const char *s);

#endif
