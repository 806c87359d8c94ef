/* A redacted run (--redact, or a support bundle, which is always
 * redacted) redacts all it shows: files, the summary, stderr and the
 * closing lines. People paste the terminal along with the bundle. */
#ifndef AITK_VALIDATE_RUN_REDACT_H
#define AITK_VALIDATE_RUN_REDACT_H

#include "common/str.h"
#include "reports/redact.h"

typedef struct cJSON cJSON;

/* The redactor of a redacted run, told who runs this and where: a probe may
 * have recorded them in a place no rule knows about, and stderr and the
 * closing lines are rewritten with it before the report exists. NULL: out
 * of memory. */
aitk_redactor *aitk_run_redactor_new(void);

/* aitk_log's filter in a redacted run (common/log.h). */
int aitk_run_redact_message(void *redactor, const char *message, aitk_str *out);

/* A redacted copy of the report, by the run's redactor (which learns what
 * the tree gives away as well), marked "redacted"; NULL: out of memory. */
cJSON *aitk_run_redacted_copy(const cJSON *report, aitk_redactor *r);

#endif
