/* Colour policy: only on a terminal, never with NO_COLOR set (non-empty) or
 * --no-color. A real pseudo-terminal stands in for the user's terminal. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>
#include <pty.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

static void test_colour_rules(void **state)
{
    (void)state;
    int saved = dup(2);
    int master, slave;
    assert_int_equal(openpty(&master, &slave, NULL, NULL, NULL), 0);

    /* Not a terminal: no colour even when wanted. */
    unsetenv("NO_COLOR");
    aitk_log_init(AITK_LOG_INFO, true);
    int not_a_tty_color = aitk_log_color();

    dup2(slave, 2);
    aitk_log_init(AITK_LOG_INFO, true);
    int tty_color = aitk_log_color();
    aitk_log_init(AITK_LOG_INFO, false); /* --no-color */
    int flag_off = aitk_log_color();
    setenv("NO_COLOR", "1", 1);
    aitk_log_init(AITK_LOG_INFO, true);
    int env_off = aitk_log_color();
    const char *red = aitk_color(AITK_RED);
    setenv("NO_COLOR", "", 1); /* no-color.org: only a non-empty value disables */
    aitk_log_init(AITK_LOG_INFO, true);
    int empty_env = aitk_log_color();
    dup2(saved, 2);
    close(saved);
    close(slave);
    close(master);
    unsetenv("NO_COLOR");

    assert_false(not_a_tty_color);
    assert_true(tty_color);
    assert_false(flag_off);
    assert_false(env_off);
    assert_string_equal(red, "");
    assert_true(empty_env);
}

static void test_levels(void **state)
{
    (void)state;
    aitk_log_init(AITK_LOG_ERROR, false); /* --quiet */
    assert_true(aitk_log_enabled(AITK_LOG_ERROR));
    assert_false(aitk_log_enabled(AITK_LOG_WARN));
    aitk_log_init(AITK_LOG_DEBUG, false); /* --verbose */
    assert_true(aitk_log_enabled(AITK_LOG_DEBUG));
}

/* What aitk_log wrote to stderr, captured through a temporary file. */
static char *captured_log(const char *key, const char *where)
{
    char path[] = "/tmp/aitk-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    aitk_log_init(AITK_LOG_INFO, false);
    aitk_log(AITK_LOG_ERROR, "unknown key '%s' at %s", key, where);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    static char buf[512];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    assert_true(n > 0);
    buf[n] = '\0';
    return buf;
}

/* A config key holding an OSC title write, a bell and a screen clear, and
 * a place holding a newline: printed as visible escapes, on one line. */
static void test_control_characters_escaped(void **state)
{
    (void)state;
    const char *line = captured_log("\x1b]0;pwned\x07\x1b[2J", "a.yaml\nforged line\r\x9b");
    assert_string_equal(line, "aitk-validate: error: unknown key '\\x1b]0;pwned\\x07\\x1b[2J' at "
                              "a.yaml\\x0aforged line\\x0d\\x9b\n");
    /* The UTF-8 form of C1 CSI (U+009B) too; ordinary UTF-8 passes. */
    line = captured_log("\xc2\x9b" "2J", "J\xc3\xb6rg");
    assert_string_equal(line, "aitk-validate: error: unknown key '\\u009b2J' at J\xc3\xb6rg\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_colour_rules),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_control_characters_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
