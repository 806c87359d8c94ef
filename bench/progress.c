/* Progress display (see progress.h). Output failures are ignored on purpose:
 * a closed stderr must never cost a measurement. */
#include "bench/progress.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"

static aitk_progress_mode default_mode = AITK_PROGRESS_OFF;
static FILE *default_out = NULL;

aitk_progress_mode aitk_progress_mode_for(FILE *out, bool quiet)
{
    if (quiet || !out)
        return AITK_PROGRESS_OFF;
    return isatty(fileno(out)) ? AITK_PROGRESS_BAR : AITK_PROGRESS_LINES;
}

void aitk_progress_set_default(aitk_progress_mode mode, FILE *out)
{
    default_mode = mode;
    default_out = out;
}

void aitk_progress_init_default(aitk_progress *p)
{
    aitk_progress_init(p, default_out ? default_mode : AITK_PROGRESS_OFF, default_out);
}

void aitk_progress_init(aitk_progress *p, aitk_progress_mode mode, FILE *out)
{
    memset(p, 0, sizeof *p);
    p->mode = out ? mode : AITK_PROGRESS_OFF;
    p->out = out;
    p->clock_ns = aitk_clock_ns;
    /* A CI log line every 10 s shows the run is alive; a bar at 10 Hz looks
     * live without costing the measured steps anything noticeable. */
    p->line_interval_s = 10.0;
    p->redraw_s = 0.1;
    p->bar_width = 24;
    p->unit = "steps";
}

void aitk_progress_fmt_eta(aitk_str *out, double s)
{
    if (!isfinite(s) || s < 0) {
        aitk_str_append(out, "?");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        aitk_str_appendf(out, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        aitk_str_appendf(out, "%ld:%02ld", t / 60, t % 60);
}

static double since(const aitk_progress *p, uint64_t t0)
{
    return (double)(p->clock_ns() - t0) / 1e9;
}

static void append_rate(aitk_progress *p, aitk_str *line)
{
    if (p->done <= 0)
        return;
    double per = p->step_sum_s / (double)p->done;
    aitk_str_appendf(line, "  %.3g s%s", per,
                     p->unit && strcmp(p->unit, "steps") != 0 ? " each" : "/step");
    if (p->total > 0) {
        aitk_str_append(line, "  ETA ");
        aitk_progress_fmt_eta(line, per * (double)(p->total - p->done));
    }
}

static void draw_bar(aitk_progress *p)
{
    aitk_str line = AITK_STR_INIT;
    aitk_str_appendf(&line, "\r  %s [", aitk_str_cstr(&p->label));
    int fill = p->total > 0 ? (int)((double)p->bar_width * (double)p->done / (double)p->total)
                            : 0;
    for (int i = 0; i < p->bar_width; i++)
        aitk_str_appendc(&line, i < fill ? '#' : '.');
    aitk_str_appendf(&line, "] %ld", p->done);
    if (p->total > 0)
        aitk_str_appendf(&line, "/%ld", p->total);
    append_rate(p, &line);
    /* Blank out what a longer previous line left behind. */
    size_t len = line.len;
    for (size_t i = len; i < p->drawn; i++)
        aitk_str_appendc(&line, ' ');
    p->drawn = len;
    if (!aitk_str_status(&line)) {
        fputs(aitk_str_cstr(&line), p->out);
        fflush(p->out);
    }
    aitk_str_free(&line);
}

void aitk_progress_begin(aitk_progress *p, const char *label, long total)
{
    aitk_str_clear(&p->label);
    aitk_str_append(&p->label, label);
    p->total = total;
    p->done = 0;
    p->step_sum_s = 0;
    p->start_ns = p->last_ns = p->clock_ns();
    p->drawn = 0;
    if (p->mode == AITK_PROGRESS_BAR) {
        draw_bar(p);
    } else if (p->mode == AITK_PROGRESS_LINES) {
        if (total > 0)
            fprintf(p->out, "%s: %ld %s\n", label, total, p->unit);
        else
            fprintf(p->out, "%s\n", label);
        fflush(p->out);
    }
}

void aitk_progress_update(aitk_progress *p, long done, double step_s)
{
    if (p->mode == AITK_PROGRESS_OFF)
        return;
    p->done = done;
    if (isfinite(step_s) && step_s > 0)
        p->step_sum_s += step_s;
    bool last = p->total > 0 && done >= p->total;
    double wait = p->mode == AITK_PROGRESS_BAR ? p->redraw_s : p->line_interval_s;
    if (!last && since(p, p->last_ns) < wait)
        return;
    p->last_ns = p->clock_ns();
    if (p->mode == AITK_PROGRESS_BAR) {
        draw_bar(p);
        return;
    }
    if (last)
        return; /* the end line says it */
    aitk_str line = AITK_STR_INIT;
    aitk_str_appendf(&line, "%s: step %ld", aitk_str_cstr(&p->label), done);
    if (p->total > 0)
        aitk_str_appendf(&line, "/%ld", p->total);
    append_rate(p, &line);
    if (!aitk_str_status(&line)) {
        fprintf(p->out, "%s\n", aitk_str_cstr(&line));
        fflush(p->out);
    }
    aitk_str_free(&line);
}

void aitk_progress_end(aitk_progress *p, const char *outcome)
{
    if (p->mode == AITK_PROGRESS_OFF)
        return;
    if (p->mode == AITK_PROGRESS_BAR) {
        draw_bar(p);
        fprintf(p->out, "  %s\n", outcome);
    } else {
        fprintf(p->out, "%s: %s, %ld %s in %.1f s\n", aitk_str_cstr(&p->label), outcome,
                p->done, p->unit, since(p, p->start_ns));
    }
    fflush(p->out);
}

void aitk_progress_free(aitk_progress *p)
{
    aitk_str_free(&p->label);
}
