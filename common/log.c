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
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", aitk_color(AITK_RESET));
}
