/* Markdown rendering of a report: short, for the body of a GitHub issue. */
#ifndef AITK_REPORTS_MARKDOWN_H
#define AITK_REPORTS_MARKDOWN_H

#include "common/status.h"
#include "common/str.h"
/* The text escapes every Markdown view of a report uses, here so that the
 * views that include this header have them. */
#include "reports/markdown_text.h"

typedef struct cJSON cJSON;

/* Failures first, each with observed/expected and its remedy; then warnings;
 * then every check in a collapsed table. Input: a report tree (see report.h). */
aitk_status aitk_render_markdown(const cJSON *report, aitk_str *out);

#endif
