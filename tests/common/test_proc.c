/* Subprocesses: output capture, exit codes, signals, timeouts, exec failure,
 * and the run's stop request (Ctrl-C, SIGTERM) ending the program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/stop.h"
#include "tests/test_time.h"

static void test_captures_both_streams(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, errout = AITK_STR_INIT;
    aitk_proc_opts o = {.timeout_ms = 5000};
    assert_int_equal(aitk_proc_run(argv, &o, &r, &out, &errout, NULL), AITK_OK);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 3);
    assert_string_equal(aitk_str_cstr(&out), "out\n");
    assert_string_equal(aitk_str_cstr(&errout), "err\n");
    aitk_str_free(&out);
    aitk_str_free(&errout);
}

static void test_timeout_kills_the_group(void **state)
{
    (void)state;
    /* The shell's child (sleep) must die too, or the pipes stay open. */
    const char *argv[] = {"sh", "-c", "sleep 30 & sleep 30; echo never", NULL};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_proc_opts o = {.timeout_ms = 200};
    assert_int_equal(aitk_proc_run(argv, &o, &r, &out, NULL, &err), AITK_E_TIMEOUT);
    assert_true(r.timed_out);
    assert_int_equal(r.term_signal, SIGKILL);
    assert_true(r.wall_ms < 10000);
    assert_string_equal(aitk_str_cstr(&out), "");
    assert_non_null(strstr(aitk_str_cstr(&err), "killed after 200 ms"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void test_missing_program(void **state)
{
    (void)state;
    const char *argv[] = {"aitk-no-such-program-xyz", NULL};
    aitk_proc_result r;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_proc_run(argv, NULL, &r, NULL, NULL, &err), AITK_E_EXEC);
    assert_non_null(strstr(aitk_str_cstr(&err), "aitk-no-such-program-xyz"));
    assert_non_null(strstr(aitk_str_cstr(&err), "No such file"));
    aitk_str_free(&err);
}

static void test_stdin_env_cwd_and_cap(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "cat; echo \"$AITK_X\"; pwd; head -c 5000 /dev/zero | tr '\\0' a", NULL};
    const char *env[] = {"AITK_X=hello", "PATH=/usr/bin:/bin", NULL};
    aitk_proc_opts o = {.timeout_ms = 5000, .env = env, .cwd = "/tmp", .stdin_text = "in\n",
                        .max_output = 20};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_proc_run(argv, &o, &r, &out, NULL, NULL), AITK_OK);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(out.len, 20); /* capped, not grown without bound */
    assert_memory_equal(out.ptr, "in\nhello\n/tmp\naaaaaa", 20);
    aitk_str_free(&out);
}

/* "bin/hello" names a file from the caller's folder, also when the child
 * starts in another (exec runs after the child's chdir). */
static void test_relative_program_with_cwd(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-proc-rel-XXXXXX", here[4096];
    assert_non_null(mkdtemp(dir));
    char path[200];
    snprintf(path, sizeof path, "%s/bin", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/bin/hello", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\necho \"hi from $(pwd)\"\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
    assert_non_null(getcwd(here, sizeof here));
    assert_int_equal(chdir(dir), 0);
    const char *argv[] = {"bin/hello", NULL};
    aitk_proc_opts o = {.timeout_ms = 5000, .cwd = "/"};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_status st = aitk_proc_run(argv, &o, &r, &out, NULL, &err);
    assert_int_equal(chdir(here), 0);
    if (st != AITK_OK)
        fail_msg("bin/hello with cwd /: %s", aitk_str_cstr(&err));
    assert_string_equal(aitk_str_cstr(&out), "hi from /\n");
    aitk_str_free(&out);
    aitk_str_free(&err);
    unlink(path);
    snprintf(path, sizeof path, "%s/bin", dir);
    rmdir(path);
    rmdir(dir);
}

static void test_killed_by_signal(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "kill -TERM $$", NULL};
    aitk_proc_result r;
    assert_int_equal(aitk_proc_run(argv, NULL, &r, NULL, NULL, NULL), AITK_OK);
    assert_false(r.exited);
    assert_int_equal(r.term_signal, SIGTERM);
}

/* Whether process `pid` is gone, or a zombie someone else must reap (one
 * of ours left unreaped would be the runner's leak, so it does not count). */
static int gone(long pid)
{
    for (int i = 0; i < 200; i++) { /* up to 2 s for the kill to land */
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            return 1;
        char path[64], state = 0;
        int ppid = 0;
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (f) {
            int n = fscanf(f, "%*d %*s %c %d", &state, &ppid);
            fclose(f);
            if (n == 2 && state == 'Z' && ppid != getpid())
                return 1;
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    return 0;
}

/* A helper left holding the output pipes: by default the run lasts until
 * they close (here, the limit); with end_with_child it ends with the child,
 * keeps what the child wrote, and the helper does not outlive it, whether it
 * stayed in the child's process group or left it (setsid: Linux brings it
 * back to us as the run's subreaper). */
static void test_end_with_child(void **state)
{
    (void)state;
    const char *stay[] = {"sh", "-c", "sleep 30 & echo $!; echo bye >&2; exit 4", NULL};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, errout = AITK_STR_INIT;
    aitk_proc_opts o = {.timeout_ms = 1500};
    assert_int_equal(aitk_proc_run(stay, &o, &r, &out, NULL, NULL), AITK_E_TIMEOUT);
    aitk_str_free(&out);

    o.end_with_child = true;
    o.timeout_ms = 20000;
    assert_int_equal(aitk_proc_run(stay, &o, &r, &out, &errout, NULL), AITK_OK);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 4);
    assert_true(r.wall_ms < 10000);
    assert_string_equal(aitk_str_cstr(&errout), "bye\n");
    long helper = strtol(aitk_str_cstr(&out), NULL, 10);
    assert_true(helper > 0);
    assert_true(gone(helper));
    aitk_str_free(&out);
    aitk_str_free(&errout);
    /* At the limit the child and its group are stopped, as without it. */
    const char *hang[] = {"sh", "-c", "sleep 30 & sleep 30", NULL};
    o.timeout_ms = 300;
    assert_int_equal(aitk_proc_run(hang, &o, &r, NULL, NULL, NULL), AITK_E_TIMEOUT);
    assert_true(r.timed_out && !r.exited);
    assert_true(r.wall_ms < 10000);
    o.timeout_ms = 20000;
    /* A child this process had before the run is not the run's: it lives on. */
    pid_t mine = fork();
    assert_true(mine >= 0);
    if (mine == 0) {
        execlp("sleep", "sleep", "30", (char *)NULL);
        _exit(127);
    }
    const char *quick[] = {"true", NULL};
    assert_int_equal(aitk_proc_run(quick, &o, &r, NULL, NULL, NULL), AITK_OK);
    assert_int_equal(kill(mine, 0), 0);
    assert_int_equal(waitpid(mine, NULL, WNOHANG), 0); /* not reaped by the run either */
    kill(mine, SIGKILL);
    waitpid(mine, NULL, 0);
#ifdef __linux__
    const char *leave[] = {"sh", "-c", "setsid sleep 30 & echo $!", NULL};
    assert_int_equal(aitk_proc_run(leave, &o, &r, &out, NULL, NULL), AITK_OK);
    assert_int_equal(r.exit_code, 0);
    helper = strtol(aitk_str_cstr(&out), NULL, 10);
    assert_true(helper > 0);
    assert_true(gone(helper));
    aitk_str_free(&out);
#endif
}

/* What aitk_proc_run captures when this process runs with the std streams
 * in `closed` (bit n: fd n) closed, as a daemon or a `cmd <&- >&-` does:
 * the run's pipes then get those numbers, and with 0 and 1 closed stdout's
 * write end already is fd 1. A forked child closes them, runs sh and writes
 * what it saw to `seen`. */
static void run_with_closed(unsigned closed, aitk_str *seen)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Above 2 whatever the test runner left closed: the report must
         * not take a number the run is about to need. */
        int to_parent = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
        if (to_parent < 0)
            _exit(2); /* the parent names this exit */
        close(p[0]);
        close(p[1]);
        for (int fd = 0; fd < 3; fd++)
            if (closed & (1u << fd))
                close(fd);
        const char *argv[] = {"sh", "-c", "cat; echo out; echo err >&2", NULL};
        aitk_proc_opts o = {.timeout_ms = 10000, .stdin_text = "in\n"};
        aitk_proc_result r;
        aitk_str out = AITK_STR_INIT, errout = AITK_STR_INIT, rep = AITK_STR_INIT;
        aitk_status st = aitk_proc_run(argv, &o, &r, &out, &errout, &rep);
        aitk_str_appendf(&rep, "status %d exit %d out [%s] err [%s]", (int)st, r.exit_code,
                         aitk_str_cstr(&out), aitk_str_cstr(&errout));
        ssize_t n = write(to_parent, rep.ptr, rep.len);
        _exit(n == (ssize_t)rep.len ? 0 : 1);
    }
    close(p[1]);
    char buf[512];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            aitk_str_appendn(seen, buf, (size_t)n);
    close(p[0]);
    int wst = 0;
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    if (WIFEXITED(wst) && WEXITSTATUS(wst) == 2)
        fail_msg("the child could not move its report pipe above fd 2");
    assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
}

/* The child's stdin, stdout and stderr are the run's pipes whatever of 0-2
 * the caller had closed: a pipe end already on its own number stays open
 * across exec (no close-on-exec, no dup2 onto itself), and moving one end
 * onto 0-2 does not overwrite another that is still to be moved. */
static void test_std_streams_closed_in_the_caller(void **state)
{
    (void)state;
    for (unsigned closed = 1; closed < 8; closed++) {
        aitk_str seen = AITK_STR_INIT;
        run_with_closed(closed, &seen);
        const char *want = "status 0 exit 0 out [in\nout\n] err [err\n]";
        if (strcmp(aitk_str_cstr(&seen), want) != 0)
            fail_msg("with%s%s%s closed: %s", closed & 1 ? " stdin" : "",
                     closed & 2 ? " stdout" : "", closed & 4 ? " stderr" : "",
                     aitk_str_cstr(&seen));
        aitk_str_free(&seen);
    }
}

/* The stop request arrives as the real one does: from a signal handler,
 * while aitk_proc_run waits in poll(). */
static void on_alarm(int sig)
{
    (void)sig;
    aitk_stop_request(SIGTERM);
}

static void stop_in_a_second(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    aitk_stop_reset();
    alarm(1);
}

/* The first Ctrl-C or SIGTERM of a run ends the program a probe runs (an
 * import torch that would take two minutes): SIGTERM to its group first,
 * which the program sees (its trap answers), and the run is
 * AITK_E_INTERRUPTED, not the program's own verdict. */
static void test_stop_request_ends_the_program(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "trap 'echo term; exit 7' TERM; sleep 30 & wait", NULL};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_proc_opts o = {.timeout_ms = 60000};
    stop_in_a_second();
    aitk_status st = aitk_proc_run(argv, &o, &r, &out, NULL, &err);
    alarm(0);
    aitk_stop_reset();
    if (st != AITK_E_INTERRUPTED)
        fail_msg("status %d after %.0f ms (out: %s): the stop did not end the program", st,
                 r.wall_ms, aitk_str_cstr(&out));
    assert_true(r.interrupted);
    assert_false(r.timed_out);
    assert_string_equal(aitk_str_cstr(&out), "term\n");
    assert_true(r.wall_ms < aitk_test_ms(20000));
    assert_non_null(strstr(aitk_str_cstr(&err), "interrupted (SIGTERM)"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* A program that ignores SIGTERM is killed once the grace has passed, and
 * nothing of its group outlives the run. */
static void test_stop_request_kills_after_the_grace(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "trap '' TERM; sleep 30 & echo $!; wait", NULL};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT;
    aitk_proc_opts o = {.timeout_ms = 60000, .end_with_child = true};
    stop_in_a_second();
    aitk_status st = aitk_proc_run(argv, &o, &r, &out, NULL, NULL);
    alarm(0);
    aitk_stop_reset();
    if (st != AITK_E_INTERRUPTED)
        fail_msg("status %d after %.0f ms: the stop did not end the program", st, r.wall_ms);
    assert_true(r.interrupted);
    assert_int_equal(r.term_signal, SIGKILL);
    assert_true(r.wall_ms >= AITK_PROC_STOP_GRACE_MS);
    assert_true(r.wall_ms < aitk_test_ms(20000));
    long helper = strtol(aitk_str_cstr(&out), NULL, 10);
    assert_true(helper > 0);
    assert_true(gone(helper));
    aitk_str_free(&out);
}

/* Once the run is stopping, no program starts: it would only hold the
 * reports back. */
static void test_no_program_starts_after_a_stop(void **state)
{
    (void)state;
    char marker[] = "/tmp/aitk-proc-stop-XXXXXX";
    int fd = mkstemp(marker);
    assert_true(fd >= 0);
    close(fd);
    unlink(marker);
    const char *argv[] = {"touch", marker, NULL};
    aitk_proc_result r;
    aitk_str err = AITK_STR_INIT;
    aitk_stop_reset();
    aitk_stop_request(SIGINT);
    aitk_status st = aitk_proc_run(argv, NULL, &r, NULL, NULL, &err);
    aitk_stop_reset();
    assert_int_equal(st, AITK_E_INTERRUPTED);
    assert_true(r.interrupted);
    assert_int_equal(access(marker, F_OK), -1);
    assert_non_null(strstr(aitk_str_cstr(&err), "not started: interrupted (Ctrl-C)"));
    unlink(marker);
    aitk_str_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_captures_both_streams),
        cmocka_unit_test(test_timeout_kills_the_group),
        cmocka_unit_test(test_missing_program),
        cmocka_unit_test(test_stdin_env_cwd_and_cap),
        cmocka_unit_test(test_relative_program_with_cwd),
        cmocka_unit_test(test_killed_by_signal),
        cmocka_unit_test(test_end_with_child),
        cmocka_unit_test(test_std_streams_closed_in_the_caller),
        cmocka_unit_test(test_stop_request_ends_the_program),
        cmocka_unit_test(test_stop_request_kills_after_the_grace),
        cmocka_unit_test(test_no_program_starts_after_a_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
