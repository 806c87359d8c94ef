/* Progress output in its three modes, written to a memory stream with a fake
 * clock, so what a person or a CI log sees is checked character by character. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench/progress.h"

static uint64_t now;
static uint64_t fake_clock(void)
{
    return now;
}

typedef struct sink {
    char *buf;
    size_t len;
    FILE *f;
} sink;

static void sink_open(sink *s)
{
    memset(s, 0, sizeof *s);
    s->f = open_memstream(&s->buf, &s->len);
    assert_non_null(s->f);
}

static const char *sink_text(sink *s)
{
    fflush(s->f);
    return s->buf ? s->buf : "";
}

static void sink_close(sink *s)
{
    fclose(s->f);
    free(s->buf);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void test_bar(void **state)
{
    (void)state;
    sink s;
    sink_open(&s);
    aitk_progress p;
    aitk_progress_init(&p, AITK_PROGRESS_BAR, s.f);
    p.clock_ns = fake_clock;
    p.bar_width = 10;
    now = 0;
    aitk_progress_begin(&p, "flux1-dev", 4);
    assert_string_equal(sink_text(&s), "\r  flux1-dev [..........] 0/4");
    /* Within the redraw interval nothing is drawn. */
    now += 50000000; /* 50 ms */
    aitk_progress_update(&p, 1, 0.5);
    assert_int_equal(count(sink_text(&s), "\r"), 1);
    /* After it: 2 steps of 0.5 s -> 0.5 s/step, 2 left -> ETA 0:01. */
    now += 100000000;
    aitk_progress_update(&p, 2, 0.5);
    assert_non_null(strstr(sink_text(&s), "\r  flux1-dev [#####.....] 2/4  0.5 s/step  ETA 0:01"));
    /* The last step is always drawn, then the outcome on its own line. */
    aitk_progress_update(&p, 3, 0.5);
    aitk_progress_update(&p, 4, 0.5);
    aitk_progress_end(&p, "completed");
    assert_non_null(strstr(sink_text(&s), "[##########] 4/4  0.5 s/step  ETA 0:00"));
    const char *t = sink_text(&s);
    assert_string_equal(t + strlen(t) - strlen("  completed\n"), "  completed\n");
    aitk_progress_free(&p);
    sink_close(&s);
}

static void test_lines(void **state)
{
    (void)state;
    sink s;
    sink_open(&s);
    aitk_progress p;
    aitk_progress_init(&p, AITK_PROGRESS_LINES, s.f);
    p.clock_ns = fake_clock;
    now = 0;
    aitk_progress_begin(&p, "chroma", 1000);
    for (long i = 1; i <= 1000; i++) {
        now += 100000000; /* 0.1 s a step: 100 s in all */
        aitk_progress_update(&p, i, 0.1);
    }
    aitk_progress_end(&p, "completed");
    const char *t = sink_text(&s);
    assert_null(strchr(t, '\r'));
    /* A start line, one line per 10 s (at 10 s .. 90 s: 9; the 100 s one is
     * the last step, which the end line covers) and the end line. */
    assert_int_equal(count(t, "\n"), 11);
    assert_non_null(strstr(t, "chroma: 1000 steps\n"));
    assert_non_null(strstr(t, "chroma: step 100/1000  0.1 s/step  ETA 1:30\n"));
    assert_non_null(strstr(t, "chroma: completed, 1000 steps in 100.0 s\n"));
    aitk_progress_free(&p);
    sink_close(&s);
}

static void test_off_and_modes(void **state)
{
    (void)state;
    sink s;
    sink_open(&s);
    aitk_progress p;
    aitk_progress_init(&p, AITK_PROGRESS_OFF, s.f);
    aitk_progress_begin(&p, "x", 3);
    aitk_progress_update(&p, 3, 1);
    aitk_progress_end(&p, "completed");
    assert_string_equal(sink_text(&s), "");
    aitk_progress_free(&p);
    /* A memory stream is no terminal: lines; quiet: off. */
    assert_int_equal(aitk_progress_mode_for(s.f, false), AITK_PROGRESS_LINES);
    assert_int_equal(aitk_progress_mode_for(s.f, true), AITK_PROGRESS_OFF);
    /* The default stays silent until the CLI chooses. */
    aitk_progress_init_default(&p);
    assert_int_equal(p.mode, AITK_PROGRESS_OFF);
    aitk_progress_free(&p);
    sink_close(&s);
}

static void test_eta_format(void **state)
{
    (void)state;
    aitk_str s = AITK_STR_INIT;
    aitk_progress_fmt_eta(&s, 65);
    aitk_str_append(&s, " ");
    aitk_progress_fmt_eta(&s, 43207);
    aitk_str_append(&s, " ");
    aitk_progress_fmt_eta(&s, -1);
    assert_string_equal(aitk_str_cstr(&s), "1:05 12:00:07 ?");
    aitk_str_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bar),
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_off_and_modes),
        cmocka_unit_test(test_eta_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
