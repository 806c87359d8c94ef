/* aitk_str: one owned, growable string for building text (Redis sds habit).
 *
 * No fixed buffers that silently truncate. An allocation failure is sticky:
 * the string keeps what it had, every later append is refused, and
 * aitk_str_status() reports AITK_E_NOMEM, so a renderer can append freely and
 * check once at the end. A zero-initialised aitk_str is a valid empty string. */
#ifndef AITK_COMMON_STR_H
#define AITK_COMMON_STR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/status.h"

typedef struct aitk_str {
    char *ptr;   /* NUL-terminated when len > 0 or after any append */
    size_t len;
    size_t cap;
    bool failed; /* sticky allocation failure */
} aitk_str;

#define AITK_STR_INIT {0}

/* printf-style checking of our formatting functions. mingw-w64 builds use its
 * C99 printf (__USE_MINGW_ANSI_STDIO, set by CMake), whose archetype is
 * gnu_printf, not the msvcrt one that `printf` names there. */
#if defined(__MINGW32__)
#define AITK_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__)
#define AITK_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define AITK_PRINTF(fmt, args)
#endif

aitk_status aitk_str_append(aitk_str *s, const char *text);
aitk_status aitk_str_appendn(aitk_str *s, const char *text, size_t n);
aitk_status aitk_str_appendc(aitk_str *s, char c);
AITK_PRINTF(2, 3)
aitk_status aitk_str_appendf(aitk_str *s, const char *fmt, ...);
aitk_status aitk_str_vappendf(aitk_str *s, const char *fmt, va_list ap);
/* A JSON number as cJSON writes it into a report: the shorter of %.15g and
 * %.17g that reads back as the same double, so 24.2 stays "24.2" and not
 * "24.199999999999999". */
aitk_status aitk_str_append_number(aitk_str *s, double v);

/* Text so far; "" for an empty string, never NULL. */
const char *aitk_str_cstr(const aitk_str *s);
aitk_status aitk_str_status(const aitk_str *s);
void aitk_str_clear(aitk_str *s);
/* Hand the buffer to the caller (free with aitk_free); the string becomes empty.
 * Returns NULL when an allocation had failed. */
char *aitk_str_steal(aitk_str *s);
void aitk_str_free(aitk_str *s);

/* Length of the well-formed UTF-8 sequence at s (1-4), or 0 when s starts an
 * ill-formed one (stray continuation byte, overlong form, surrogate, beyond
 * U+10FFFF, truncated). */
size_t aitk_utf8_sequence(const unsigned char *s);

/* Whether `s` ends with `tail` (bytes, case counted). */
bool aitk_text_ends_with(const char *s, const char *tail);
/* Whether `s` is NULL, empty or only white space (isspace). */
bool aitk_text_blank(const char *s);
/* NULL when `s` is well-formed UTF-8 (nothing to do); otherwise a copy (free
 * with aitk_free) in which each ill-formed byte is U+FFFD. File names and
 * environment values are bytes, but JSON and Markdown must be UTF-8. The
 * return value cannot tell "valid" from "out of memory": `*nomem` can. */
char *aitk_utf8_repaired(const char *s, bool *nomem);

/* Appends `text` for a terminal: C0 and C1 control characters (ESC, BEL, the
 * UTF-8 encoded U+0080-U+009F, DEL) and bytes that are not well-formed UTF-8
 * become visible "\xNN" / "\u00NN", so a
 * report or a library name from elsewhere cannot move the cursor, clear the
 * screen or retitle the window. `lines`: newline and tab pass (a rendered
 * page); else they are escaped too (a name that must stay on one line). */
aitk_status aitk_str_append_printable(aitk_str *s, const char *text, bool lines);
/* Writes `text` to `out` made printable as above (lines kept): for text a
 * report (someone else's, perhaps) put on a terminal. */
aitk_status aitk_fputs_printable(const char *text, FILE *out);

#endif
