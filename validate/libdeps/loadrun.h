/* Running the `deps --load` child: this program loading one library in a
 * process of its own, under a time limit.
 *
 * Not aitk_proc_run, whose end is "both output pipes closed": a library
 * constructor may fork a helper that keeps running and keeps those pipes
 * open, and the verdict would wait for the time limit. Here the end is the
 * loading process itself ending; what it wrote is in the pipe by then. And
 * nothing it started may outlive the tool: on POSIX the child leads its own
 * process group, which is killed when the child ends or the limit passes,
 * and on Linux the tool is the "child subreaper" of the run, so helpers that
 * left the group (setsid) come back to it as orphans and are killed too.
 * On Windows aitk_proc_run's job object already ends the whole tree. */
#ifndef AITK_LIBDEPS_LOADRUN_H
#define AITK_LIBDEPS_LOADRUN_H

#include "common/proc.h"

/* Runs argv[0] (a path, not searched) with argv. As aitk_proc_run: AITK_OK
 * once the child was started and collected, AITK_E_EXEC (err says why) when
 * it could not be started, AITK_E_TIMEOUT when it was stopped at the limit. */
aitk_status aitk_deps_load_run(const char *const *argv, long timeout_ms, size_t max_output,
                               aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                               aitk_str *err);

#endif
