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

bool aitk_log_enabled(aitk_log_level level) { return level <= current_level; }

const char *aitk_color(const char *ansi) { return use_color ? ansi : ""; }

void aitk_log(aitk_log_level level, const char *fmt, ...)
{
    if (level > current_level)
        return;
    static const char *const prefix[] = {"error: ", "warning: ", "", "debug: "};
    static const char *const colour[] = {AITK_RED, AITK_YELLOW, "", AITK_DIM};
    fprintf(stderr, "%saitk-validate: %s", aitk_color(colour[level]), prefix[level]);
    va_list ap;
    va_start(ap, fmt);
    if (!filter_fn) {
        vfprintf(stderr, fmt, ap);
    } else {
        /* A filtered message is never printed unfiltered: on any failure
         * it is withheld. */
        aitk_str text = AITK_STR_INIT, out = AITK_STR_INIT;
        bool ok = !aitk_str_vappendf(&text, fmt, ap) &&
                  !filter_fn(filter_ctx, aitk_str_cstr(&text), &out);
        fputs(ok ? aitk_str_cstr(&out) : "(message withheld)", stderr);
        aitk_str_free(&text);
        aitk_str_free(&out);
    }
    va_end(ap);
    fprintf(stderr, "%s\n", aitk_color(AITK_RESET));
}
