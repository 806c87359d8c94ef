/* The line that says which run a report comes from, shared by the HTML
 * page's banner and the Markdown summary. */
#ifndef AITK_REPORTS_IDENTITY_H
#define AITK_REPORTS_IDENTITY_H

#include "common/str.h"

typedef struct cJSON cJSON;

/* Appends report text to `out` made safe for one output format. */
typedef void (*aitk_text_escape)(aitk_str *out, const char *text);

/* "VERSION (COMMIT)", each value from the report through `escape`; the
 * commit only when the report names one. */
void aitk_report_version(aitk_str *out, const cJSON *report, aitk_text_escape escape);

/* "level L · profile P[ · strict] · CREATED_AT", each value through `escape`. */
void aitk_report_run(aitk_str *out, const cJSON *report, aitk_text_escape escape);

/* The version, then `after_version`, then the run, as above. */
void aitk_report_identity(aitk_str *out, const cJSON *report, const char *after_version,
                          aitk_text_escape escape);

#endif
