/* stderr logging with NO_COLOR / isatty handling. */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef _WIN32
#include <io.h>
#define isatty _isatty
#define fileno _fileno
#else
#include <unistd.h>
#endif

static aitk_log_level current_level = AITK_LOG_INFO;
static bool use_color = false;
static aitk_log_filter filter_fn;
static void *filter_ctx;

void aitk_log_set_filter(aitk_log_filter filter, void *ctx)
{
    filter_fn = filter;
    filter_ctx = ctx;
}

void aitk_log_init(aitk_log_level max_level, bool want_color)
{
    current_level = max_level;
    const char *no_color = getenv("NO_COLOR");
    use_color = want_color && isatty(fileno(stderr)) && !(no_color && no_color[0]);
}

bool aitk_log_color(void) { return use_color; }

bool aitk_log_color_on(FILE *out) { return use_color && isatty(fileno(out)); }

bool aitk_log_enabled(aitk_log_level level) { return level <= current_level; }

const char *aitk_color(const char *ansi) { return use_color ? ansi : ""; }

/* Every message leaves as one line with no control character: a config key,
 * a file name or a library's words may hold ESC sequences (a retitled window,
 * a cleared screen) or newlines that would forge lines of their own. A
 * message that cannot be built (out of memory, or the filter failed) is never
 * printed unfiltered: it is withheld. */
void aitk_log(aitk_log_level level, const char *fmt, ...)
{
    if (level > current_level)
        return;
    static const char *const prefix[] = {"error: ", "warning: ", "", "debug: "};
    static const char *const colour[] = {AITK_RED, AITK_YELLOW, "", AITK_DIM};
    aitk_str text = AITK_STR_INIT, filtered = AITK_STR_INIT, shown = AITK_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    bool ok = !aitk_str_vappendf(&text, fmt, ap);
    va_end(ap);
    const char *message = aitk_str_cstr(&text);
    if (ok && filter_fn) {
        ok = !filter_fn(filter_ctx, message, &filtered);
        message = aitk_str_cstr(&filtered);
    }
    ok = ok && !aitk_str_append_printable(&shown, message, false);
    fprintf(stderr, "%saitk-validate: %s%s%s\n", aitk_color(colour[level]), prefix[level],
            ok ? aitk_str_cstr(&shown) : "(message withheld)", aitk_color(AITK_RESET));
    aitk_str_free(&text);
    aitk_str_free(&filtered);
    aitk_str_free(&shown);
}
