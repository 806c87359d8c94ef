/* Progress of a long measurement on stderr, for a person waiting.
 *
 * On a terminal: one bar redrawn in place with the step count, seconds per
 * step and the time left. Otherwise (a CI log, a pipe): a plain line now and
 * then, so a log shows the run is alive without thousands of lines. With
 * --quiet: nothing. Probes never print on their own: the CLI chooses the
 * mode once (aitk_progress_set_default) and the default is OFF, so tests and
 * library callers stay silent. */
#ifndef AITK_BENCH_PROGRESS_H
#define AITK_BENCH_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/str.h"

typedef enum aitk_progress_mode {
    AITK_PROGRESS_OFF,
    AITK_PROGRESS_LINES, /* a line at the start, every `line_interval_s`, and at the end */
    AITK_PROGRESS_BAR,   /* a bar redrawn with '\r', at most every `redraw_s` */
} aitk_progress_mode;

typedef struct aitk_progress {
    aitk_progress_mode mode;
    FILE *out;
    uint64_t (*clock_ns)(void); /* aitk_clock_ns unless a test injects one */
    double line_interval_s, redraw_s;
    int bar_width;
    const char *unit;           /* what is counted, plural: "steps" (default), "benchmarks" */
    /* state of the current task */
    aitk_str label;
    long total, done;
    double step_sum_s;          /* sum of the step times reported so far */
    uint64_t start_ns, last_ns;
    size_t drawn;               /* characters of the bar on screen */
} aitk_progress;

/* BAR when `out` is a terminal, LINES otherwise, OFF when quiet. */
aitk_progress_mode aitk_progress_mode_for(FILE *out, bool quiet);

/* The mode the CLI chose (OFF until it chooses) and its stream. */
void aitk_progress_set_default(aitk_progress_mode mode, FILE *out);
void aitk_progress_init_default(aitk_progress *p);

void aitk_progress_init(aitk_progress *p, aitk_progress_mode mode, FILE *out);
/* A new task: `label` ("flux1-dev warm-up"), `total` steps (0: unknown). */
void aitk_progress_begin(aitk_progress *p, const char *label, long total);
/* `done` steps finished; the last took step_s seconds. */
void aitk_progress_update(aitk_progress *p, long done, double step_s);
/* Ends the task with a one-line outcome ("completed", "interrupted"). */
void aitk_progress_end(aitk_progress *p, const char *outcome);
void aitk_progress_free(aitk_progress *p);

/* "1:05", "12:00:07": h:mm:ss or m:ss, for an ETA. */
void aitk_progress_fmt_eta(aitk_str *out, double seconds);

#endif
