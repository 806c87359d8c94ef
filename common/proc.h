/* Running a program with a time limit and captured output.
 *
 * Used for the deep Python check (import torch), for loading the libraries
 * the validator examines (common/libload.h) and by tests that drive the
 * CLI. The child runs in its own process group so a timeout kills the whole
 * tree (python may spawn helpers), not just the first process.
 *
 * A stop request (common/stop.h: the first Ctrl-C or SIGTERM of a run) ends
 * the program that runs now, so that the run goes on at once to write its
 * reports: SIGTERM to its process group, SIGKILL after
 * AITK_PROC_STOP_GRACE_MS (on Windows its job is ended at once: a program
 * there has no SIGTERM to take). Once a stop was requested no program is
 * started. Both are AITK_E_INTERRUPTED with res->interrupted: the program
 * gave no verdict, which a caller must not report as one. */
#ifndef AITK_COMMON_PROC_H
#define AITK_COMMON_PROC_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

typedef struct aitk_proc_result {
    int exit_code;    /* valid when exited is true */
    int term_signal;  /* non-zero when killed by a signal */
    bool exited;
    bool timed_out;
    bool interrupted; /* a stop request ended it, or kept it from starting */
    double wall_ms;
} aitk_proc_result;

/* How long a program may take to end after SIGTERM on a stop request. */
#define AITK_PROC_STOP_GRACE_MS 2000

typedef struct aitk_proc_opts {
    long timeout_ms;           /* <= 0: no limit */
    size_t max_output;         /* per stream; more is dropped (0: 1 MiB) */
    const char *cwd;           /* NULL: inherit */
    const char *const *env;    /* NULL: inherit; else "NAME=value" list, NULL-terminated */
    const char *stdin_text;    /* NULL: /dev/null */
    /* When the run ends. false: when both output pipes close (a helper the
     * child started and left holding them keeps the run going, up to the
     * limit). true: when the child itself ends; what it wrote is in the
     * pipes by then. Then nothing it started may outlive the run: on POSIX
     * its process group is killed, and on Linux this process is the run's
     * "child subreaper", so helpers that left the group (setsid) come back
     * to it as orphans and are killed too; children this process had before
     * the run are left alone (a child another thread starts during the run
     * is not told apart). On Windows the flag changes nothing: the run waits
     * for the pipes as without it, up to the limit (5 s without one), and a
     * job object ends the whole tree in either mode. */
    bool end_with_child;
} aitk_proc_opts;

/* Runs argv[0] (searched on PATH) with argv; a relative path with a folder
 * in it names a file from the caller's folder, also when opts->cwd starts
 * the child elsewhere (on both systems). Returns AITK_OK once the child
 * was started and collected, whatever its exit status; AITK_E_EXEC when it
 * could not be started (err says why); AITK_E_TIMEOUT when it was killed for
 * running over the limit (res still filled); AITK_E_INTERRUPTED when a stop
 * request ended it or kept it from starting (err says which signal).
 * `out`/`errout` may be NULL. */
aitk_status aitk_proc_run(const char *const *argv, const aitk_proc_opts *opts,
                          aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                          aitk_str *err);

#ifndef _WIN32
/* Kills the process group of the program aitk_proc_run is running now, if
 * any. For a signal handler about to end this process: the program runs in
 * a group of its own, which a terminal's Ctrl-C does not reach, so it would
 * run on alone. Async-signal-safe. */
void aitk_proc_kill_running(void);
#endif

#endif
