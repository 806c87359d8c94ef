/* Time: a monotonic clock for measuring, wall-clock UTC for report stamps. */
#ifndef AITK_COMMON_CLOCK_H
#define AITK_COMMON_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic time in nanoseconds / milliseconds from an arbitrary origin. */
uint64_t aitk_clock_ns(void);
double aitk_clock_ms(void);
void aitk_sleep_ms(long ms);

/* CPU time this process has used, all its threads, in nanoseconds: the work
 * done, which a busy machine stretches in wall time but does not change. */
uint64_t aitk_cpu_ns(void);

/* Current UTC time as ISO 8601 ("2026-12-01T04:48:36Z") into buf (>= 21 bytes). */
void aitk_utc_iso8601(char *buf, size_t size);

#endif
