/* A request to stop a run early, made by a signal: Ctrl-C (SIGINT), or
 * SIGTERM from `timeout`, Kubernetes or Slurm (validate/run.c installs the
 * handlers). One flag, read by the benchmark runner and the
 * microbenchmarks (they finish the step in flight) and by common/proc.h
 * (it ends the program it runs, and starts no other). It carries the
 * signal, so that every report says alike which one stopped the run. */
#ifndef AITK_COMMON_STOP_H
#define AITK_COMMON_STOP_H

#include <stdbool.h>

/* Async-signal-safe. `sig` is the signal that asks (0: none known); the
 * first request's signal is kept, a later one changes nothing. */
void aitk_stop_request(int sig);
bool aitk_stop_requested(void);
/* The signal of the request, 0 when none was made or none was named. */
int aitk_stop_signal(void);
/* For tests: no request. */
void aitk_stop_reset(void);

/* The one wording of the stop, for messages and reports:
 * "interrupted (Ctrl-C)", "interrupted (SIGTERM)", "interrupted (Ctrl-Break)"
 * on Windows, "interrupted" when no signal is known. */
const char *aitk_stop_words(void);

#endif
