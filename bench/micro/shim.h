/* A C interface to Google Benchmark (IREE's habit): register a function,
 * loop while keep_running, pause/resume around set-up, set bytes, items or
 * any counter, and, for GPU work, report manual time measured with device
 * events so that rates divide by device time, not host time.
 *
 * Implemented in one C++ file (shim.cc); nothing C++ leaks out and no
 * exception crosses into C. Not thread-safe: benchmarks are registered and
 * run from one thread. */
#ifndef AITK_BENCH_MICRO_SHIM_H
#define AITK_BENCH_MICRO_SHIM_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "common/str.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aitk_mb_state aitk_mb_state; /* a benchmark::State */
typedef void (*aitk_mb_fn)(aitk_mb_state *state, void *user);

typedef struct aitk_mb_options {
    bool manual_time;  /* iteration time comes from aitk_mb_set_iteration_time */
    double min_time_s; /* 0: Google Benchmark's default (0.5 s) */
    long iterations;   /* 0: as many as min_time needs */
} aitk_mb_options;

/* Counter flags (Google Benchmark's Counter::Flags). */
enum {
    AITK_MB_COUNTER_DEFAULT = 0,
    AITK_MB_COUNTER_RATE = 1,          /* divided by the (manual or real) time */
    AITK_MB_COUNTER_PER_ITERATION = 2, /* divided by the iteration count */
};

/* `name` and `user` must stay valid until aitk_mb_clear or the run. */
aitk_status aitk_mb_register(const char *name, aitk_mb_fn fn, void *user,
                             const aitk_mb_options *opt);
bool aitk_mb_keep_running(aitk_mb_state *s);
void aitk_mb_pause(aitk_mb_state *s);
void aitk_mb_resume(aitk_mb_state *s);
void aitk_mb_set_iteration_time(aitk_mb_state *s, double seconds);
void aitk_mb_set_bytes_processed(aitk_mb_state *s, int64_t bytes);
void aitk_mb_set_items_processed(aitk_mb_state *s, int64_t items);
void aitk_mb_set_counter(aitk_mb_state *s, const char *name, double value, int flags);
int64_t aitk_mb_iterations(const aitk_mb_state *s);
/* Marks the benchmark failed (reported with `msg`); keep_running then stops. */
void aitk_mb_skip_with_error(aitk_mb_state *s, const char *msg);

/* Runs the registered benchmarks whose names match the regular expression
 * `filter` (NULL: all) and appends Google Benchmark's JSON report to `json`.
 * AITK_E_NOTFOUND when nothing matched; AITK_E_INTERNAL (err says what)
 * when the library threw. */
aitk_status aitk_mb_run(const char *filter, aitk_str *json, aitk_str *err);
/* Forgets every registered benchmark. */
void aitk_mb_clear(void);

#ifdef __cplusplus
}
#endif

#endif
