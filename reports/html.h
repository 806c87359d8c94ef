/* HTML rendering of a report: one self-contained page for people.
 *
 * Inline CSS and inline SVG only (no script, no network), printable, and
 * dark-mode aware through prefers-color-scheme. Every text from the report
 * is escaped. */
#ifndef AITK_REPORTS_HTML_H
#define AITK_REPORTS_HTML_H

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

/* Verdict banner; failed checks first with remedies, then warnings; per
 * workload charts of time per 1000 steps against its target and of peak
 * memory against VRAM and the documented minimum; the microbenchmark table;
 * the dependency tree of a broken library; every check; the environment.
 * Sections whose data the report lacks are left out. */
aitk_status aitk_render_html(const cJSON *report, aitk_str *out);

#endif
