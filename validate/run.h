/* The validation run itself: what `aitk-validate` does when no command is
 * named. */
#ifndef AITK_VALIDATE_RUN_H
#define AITK_VALIDATE_RUN_H

#include "validate/cli.h"

/* Runs the probes, the checks and (unless --quick) the measurements that
 * `o` asks for, writes the report files, prints the summary and returns the
 * exit code (validate/cli.h): 0 no failure, 1 a check failed, 2 a refused
 * input or output, 3 an internal error. */
int aitk_run_validate(const aitk_options *o);

typedef struct cJSON cJSON;

/* The same run with no file written and no summary printed: the probes,
 * the checks and the measurements of `o` (its output options are not
 * looked at), the report left in *report for the caller (cJSON_Delete);
 * the redacted one when `o` asks for redaction. Returns 0 with the report,
 * or the run's exit code (2 a refused input, 3 an internal error), logged,
 * with *report NULL. The report's own verdict is the caller's to read. */
int aitk_run_build(const aitk_options *o, cJSON **report);

#endif
