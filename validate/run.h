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

#endif
