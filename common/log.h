/* Logging to stderr for people: levels, colour only where it helps.
 *
 * Colour is used when stderr is a terminal, NO_COLOR is unset or empty
 * (no-color.org), and --no-color was not given. --quiet keeps errors only;
 * --verbose adds debug lines. Probes never log: only the CLI layer does. */
#ifndef AITK_COMMON_LOG_H
#define AITK_COMMON_LOG_H

#include <stdbool.h>
#include <stdio.h>

#include "common/str.h"

typedef enum aitk_log_level {
    AITK_LOG_ERROR,
    AITK_LOG_WARN,
    AITK_LOG_INFO,
    AITK_LOG_DEBUG,
} aitk_log_level;

/* want_color: false when --no-color was given. */
void aitk_log_init(aitk_log_level max_level, bool want_color);
bool aitk_log_color(void);
/* Colour for text written to `out` (the summary on stdout): only where that
 * stream is a terminal too, so `> summary.txt` at a terminal stays plain. */
bool aitk_log_color_on(FILE *out);
bool aitk_log_enabled(aitk_log_level level);

AITK_PRINTF(2, 3)
void aitk_log(aitk_log_level level, const char *fmt, ...);

/* Rewrites a message before it is printed (--redact: stderr must not show
 * what the report hides). Returns nonzero on failure, and the message is
 * then printed as "(message withheld)" rather than unfiltered. */
typedef int (*aitk_log_filter)(void *ctx, const char *message, aitk_str *out);
/* NULL: messages are printed as they are. */
void aitk_log_set_filter(aitk_log_filter filter, void *ctx);

/* ANSI wrappers that collapse to "" when colour is off. */
const char *aitk_color(const char *ansi);
#define AITK_RED "\033[31m"
#define AITK_GREEN "\033[32m"
#define AITK_YELLOW "\033[33m"
#define AITK_DIM "\033[2m"
#define AITK_BOLD "\033[1m"
#define AITK_RESET "\033[0m"

#endif
