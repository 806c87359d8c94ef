/* Where report text marks a command as code: a run of backticks and the
 * next run of exactly as many (CommonMark 0.29, 6.1 Code spans). Remedies
 * write commands that way; the Markdown view keeps such a span as it is
 * and the HTML view shows it in <code>. */
#ifndef AITK_REPORTS_CODE_SPANS_H
#define AITK_REPORTS_CODE_SPANS_H

#include <stddef.h>

/* The length of the run of backticks at s (0 when s holds none). */
size_t aitk_backtick_run(const char *s);

/* Where the code span opened by the run of n backticks at s closes: the
 * next run of exactly n backticks, or NULL when there is none and the
 * backticks are plain text. */
const char *aitk_code_span_end(const char *s, size_t n);

#endif
