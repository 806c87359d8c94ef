/* Internal to the HTML renderers (the report page, html.c + html_bench.c,
 * the trend page, trend_render.c, and the fleet page, fleet_render.c): the
 * page style, the sections html_bench.c draws, and the number formats they
 * share. Not for other modules. */
#ifndef AITK_REPORTS_HTML_PARTS_H
#define AITK_REPORTS_HTML_PARTS_H

#include "common/str.h"

typedef struct cJSON cJSON;

/* The style sheet of every page: light/dark colours, cards, tables, charts. */
extern const char aitk_html_css[];

/* "21.5 GiB", "512 MiB" */
void aitk_html_fmt_bytes(aitk_str *out, double bytes);
/* "38 min 20 s", "2 h 15 min", "4.2 s" */
void aitk_html_fmt_duration(aitk_str *out, double seconds);

/* Each appends its section, or nothing when the report has no such data. */
void aitk_html_workloads(aitk_str *out, const cJSON *report);
void aitk_html_micro(aitk_str *out, const cJSON *report);
void aitk_html_deps(aitk_str *out, const cJSON *report);

#endif
