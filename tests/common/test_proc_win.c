/* Subprocesses on Windows (run under Wine in CI): CreateProcess with a
 * quoted command line, captured streams, stdin, environment, working folder,
 * output cap, a timeout that ends the whole job tree, and the run's stop
 * request (Ctrl-C) that ends it too. The child is this
 * very program, started again with a role as its first argument, so the
 * test needs no shell and knows exactly what the child does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <io.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "common/proc.h"
#include "common/stop.h"
#include "tests/test_time.h"

static char self[MAX_PATH];

/* ---- the child's roles ---- */

static int child_args(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        printf("[%s]\n", argv[i]);
    return 0;
}

static int child_echo(void)
{
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf, stdin);
    fwrite(buf, 1, n, stdout);
    const char *x = getenv("AITK_X");
    printf("%s\n", x ? x : "(unset)");
    char cwd[MAX_PATH];
    GetCurrentDirectoryA(sizeof cwd, cwd);
    printf("%s\n", cwd);
    for (int i = 0; i < 5000; i++)
        putchar('a');
    return 0;
}

/* Starts a grandchild that sleeps, then sleeps itself: both hold stdout. */
static int child_tree(void)
{
    char cmd[MAX_PATH + 32];
    snprintf(cmd, sizeof cmd, "\"%s\" child-sleep", self);
    STARTUPINFOA si = {.cb = sizeof si};
    PROCESS_INFORMATION pi;
    if (!CreateProcessA(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi))
        return 9;
    Sleep(30000);
    return 0;
}

static int child(int argc, char **argv)
{
    /* Bytes as written: no CRLF translation in what the parent compares. */
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    _setmode(_fileno(stdin), _O_BINARY);
    if (!strcmp(argv[1], "child-args"))
        return child_args(argc, argv);
    if (!strcmp(argv[1], "child-echo"))
        return child_echo();
    if (!strcmp(argv[1], "child-tree"))
        return child_tree();
    if (!strcmp(argv[1], "child-sleep")) {
        Sleep(30000);
        return 0;
    }
    if (!strcmp(argv[1], "child-exit3")) {
        fputs("out\n", stdout);
        fputs("err\n", stderr);
        return 3;
    }
    return 2;
}

/* ---- the tests ---- */

static void captures_both_streams_and_the_exit_code(void **state)
{
    (void)state;
    const char *argv[] = {self, "child-exit3", NULL};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_proc_opts o = {.timeout_ms = 30000};
    assert_int_equal(aitk_proc_run(argv, &o, &r, &out, &err, NULL), AITK_OK);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 3);
    assert_string_equal(aitk_str_cstr(&out), "out\n");
    assert_string_equal(aitk_str_cstr(&err), "err\n");
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void arguments_survive_quoting(void **state)
{
    (void)state;
    /* Spaces, quotes, backslashes before quotes and at the end, empty. */
    const char *argv[] = {self, "child-args", "plain", "two words", "say \"hi\"", "C:\\dir\\",
                          "back\\\\\"slash", "", NULL};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT;
    aitk_proc_opts o = {.timeout_ms = 30000};
    assert_int_equal(aitk_proc_run(argv, &o, &r, &out, NULL, NULL), AITK_OK);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(aitk_str_cstr(&out), "[plain]\n[two words]\n[say \"hi\"]\n[C:\\dir\\]\n"
                                             "[back\\\\\"slash]\n[]\n");
    aitk_str_free(&out);
}

static void stdin_env_cwd_and_cap(void **state)
{
    (void)state;
    char tmp[MAX_PATH];
    DWORD n = GetTempPathA(sizeof tmp, tmp);
    assert_true(n > 0 && n < sizeof tmp);
    if (n > 3 && tmp[n - 1] == '\\')
        tmp[n - 1] = '\0'; /* the form GetCurrentDirectory gives back */
    const char *argv[] = {self, "child-echo", NULL};
    const char *env[] = {"AITK_X=hello", NULL};
    aitk_proc_opts o = {.timeout_ms = 30000, .env = env, .cwd = tmp, .stdin_text = "in\n",
                        .max_output = 4096};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_proc_run(argv, &o, &r, &out, NULL, NULL), AITK_OK);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(out.len, 4096); /* capped, not grown without bound */
    char want[MAX_PATH + 16];
    snprintf(want, sizeof want, "in\nhello\n%s\naaa", tmp);
    assert_memory_equal(out.ptr, want, strlen(want));
    aitk_str_free(&out);
}

static void timeout_ends_the_whole_tree(void **state)
{
    (void)state;
    /* The grandchild holds the output pipe too: unless the job ends it,
     * the readers would wait its 30 s out. */
    const char *argv[] = {self, "child-tree", NULL};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_proc_opts o = {.timeout_ms = 1500};
    assert_int_equal(aitk_proc_run(argv, &o, &r, &out, NULL, &err), AITK_E_TIMEOUT);
    assert_true(r.timed_out);
    assert_false(r.exited);
    if (r.wall_ms > 15000)
        fail_msg("the timeout took %.0f ms: the grandchild outlived the job", r.wall_ms);
    assert_non_null(strstr(aitk_str_cstr(&err), "killed after 1500 ms"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void missing_program(void **state)
{
    (void)state;
    const char *argv[] = {"aitk-no-such-program-xyz.exe", NULL};
    aitk_proc_result r;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_proc_run(argv, NULL, &r, NULL, NULL, &err), AITK_E_EXEC);
    assert_non_null(strstr(aitk_str_cstr(&err), "aitk-no-such-program-xyz.exe"));
    assert_non_null(strstr(aitk_str_cstr(&err), "[WinError 2]"));
    aitk_str_free(&err);
}

/* Ctrl-C's handler runs on a thread of the C runtime's own: so here. */
static DWORD WINAPI stop_later(void *arg)
{
    (void)arg;
    Sleep(1000);
    aitk_stop_request(SIGINT);
    return 0;
}

/* The first Ctrl-C of a run ends the program a probe runs, and all it
 * started, at once: the run goes on to write its reports. */
static void stop_request_ends_the_whole_tree(void **state)
{
    (void)state;
    const char *argv[] = {self, "child-tree", NULL};
    aitk_proc_result r;
    aitk_str err = AITK_STR_INIT;
    aitk_proc_opts o = {.timeout_ms = 60000};
    aitk_stop_reset();
    HANDLE t = CreateThread(NULL, 0, stop_later, NULL, 0, NULL);
    assert_non_null(t);
    aitk_status st = aitk_proc_run(argv, &o, &r, NULL, NULL, &err);
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
    aitk_stop_reset();
    if (st != AITK_E_INTERRUPTED)
        fail_msg("status %d after %.0f ms: the stop did not end the program", st, r.wall_ms);
    assert_true(r.interrupted);
    assert_false(r.exited);
    if (r.wall_ms > aitk_test_ms(20000))
        fail_msg("the stop took %.0f ms: the grandchild outlived the job", r.wall_ms);
    assert_non_null(strstr(aitk_str_cstr(&err), "interrupted (Ctrl-C)"));
    aitk_str_free(&err);
}

static void no_program_starts_after_a_stop(void **state)
{
    (void)state;
    const char *argv[] = {self, "child-exit3", NULL};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_stop_reset();
    aitk_stop_request(SIGINT);
    aitk_status st = aitk_proc_run(argv, NULL, &r, &out, NULL, &err);
    aitk_stop_reset();
    assert_int_equal(st, AITK_E_INTERRUPTED);
    assert_true(r.interrupted);
    assert_string_equal(aitk_str_cstr(&out), "");
    assert_non_null(strstr(aitk_str_cstr(&err), "not started: interrupted (Ctrl-C)"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

int main(int argc, char **argv)
{
    DWORD n = GetModuleFileNameA(NULL, self, sizeof self);
    if (n == 0 || n >= sizeof self)
        return 1;
    if (argc > 1)
        return child(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(captures_both_streams_and_the_exit_code),
        cmocka_unit_test(arguments_survive_quoting),
        cmocka_unit_test(stdin_env_cwd_and_cap),
        cmocka_unit_test(timeout_ends_the_whole_tree),
        cmocka_unit_test(missing_program),
        cmocka_unit_test(stop_request_ends_the_whole_tree),
        cmocka_unit_test(no_program_starts_after_a_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
