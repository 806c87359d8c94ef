/* The summary on standard output is coloured only where standard output is a
 * terminal. Run at a terminal with its output sent elsewhere (`aitk-validate
 * --quick > summary.txt`, `| tee summary.txt` to paste into an issue), the
 * file must hold plain text: colour followed stderr, and the file held ANSI
 * escape sequences. A real pseudo-terminal stands in for the user's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "common/str.h"
#include "tests/test_time.h"

static char base[] = "/tmp/aitk-stdout-colour-XXXXXX";

/* Runs `aitk-validate --quick` with stderr on a pseudo-terminal and stdout
 * into out_path, or onto the terminal too when out_path is NULL. What the
 * terminal showed is put in *tty; returns the exit status. */
static int run_at_terminal(const char *out_path, aitk_str *tty)
{
    int master, slave;
    assert_int_equal(openpty(&master, &slave, NULL, NULL, NULL), 0);
    int out = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : slave;
    assert_true(out >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, STDIN_FILENO);
        dup2(out, STDOUT_FILENO);
        dup2(slave, STDERR_FILENO);
        close(master);
        unsetenv("NO_COLOR");
        execl(AITK_EXE, AITK_EXE, "--quick", (char *)NULL);
        _exit(127);
    }
    close(slave);
    if (out_path)
        close(out);
    /* Drain the terminal while the run lasts, so that it never blocks on a
     * full one; once the run has ended, what is left is read until the
     * terminal reports its end (EIO, or nothing more to read). */
    const double t0 = aitk_clock_ms(), limit = aitk_test_ms(60000);
    int wst = 0;
    pid_t ended = 0;
    for (;;) {
        struct pollfd p = {.fd = master, .events = POLLIN};
        if (poll(&p, 1, 100) > 0) {
            char buf[4096];
            ssize_t n = read(master, buf, sizeof buf);
            if (n > 0) {
                aitk_str_appendn(tty, buf, (size_t)n);
                continue;
            }
            if (ended)
                break;
        } else if (ended) {
            break;
        }
        if (!ended && (ended = waitpid(pid, &wst, WNOHANG)) == pid)
            continue;
        if (aitk_clock_ms() - t0 > limit) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            close(master);
            fail_msg("--quick did not end within %.0f ms", limit);
        }
    }
    close(master);
    assert_true(WIFEXITED(wst));
    return WEXITSTATUS(wst);
}

static void test_summary_into_a_file_is_plain(void **state)
{
    (void)state;
    aitk_str path = AITK_STR_INIT, tty = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_path_join(&path, base, "summary.txt");
    int rc = run_at_terminal(path.ptr, &tty);
    assert_true(rc == 0 || rc == 1);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(path.ptr, 1 << 20, &text, &len, &err), 0);
    assert_non_null(strstr(text, "PASS"));
    if (memchr(text, '\x1b', len))
        fail_msg("ESC in the summary written to a file: %.200s", strchr(text, '\x1b'));
    free(text);
    aitk_str_free(&path);
    aitk_str_free(&tty);
    aitk_str_free(&err);
}

/* The control: on the terminal itself the summary is coloured, so the test
 * above sees colour when there is some to see. */
static void test_summary_at_a_terminal_is_coloured(void **state)
{
    (void)state;
    aitk_str tty = AITK_STR_INIT;
    int rc = run_at_terminal(NULL, &tty);
    assert_true(rc == 0 || rc == 1);
    assert_non_null(strstr(aitk_str_cstr(&tty), "\033[32mPASS"));
    aitk_str_free(&tty);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(base) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    aitk_str path = AITK_STR_INIT;
    aitk_path_join(&path, base, "summary.txt");
    remove(path.ptr);
    rmdir(base);
    aitk_str_free(&path);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_into_a_file_is_plain),
        cmocka_unit_test(test_summary_at_a_terminal_is_coloured),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
