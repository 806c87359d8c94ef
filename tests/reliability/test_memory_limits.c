/* Every command under an address-space limit (RLIMIT_AS, what `ulimit -v`
 * sets): it must end, within a time limit, with the answer it gives without
 * the limit or with exit 3 and a plain one-line message -- never a hang, a
 * signal or a half-written stderr.
 *
 * This once hung: the executable linked OpenBLAS, whose constructor starts
 * worker threads that loop for ever on a failing 128 MiB malloc, and whose
 * destructor then waits for them at exit, even after `--version`
 * (kernels/cpu/blas.h). The limits span "too small for OpenBLAS" (60-300
 * MiB) so that a command loading it needlessly would hang here again.
 *
 * AddressSanitizer reserves terabytes of shadow memory at start, which no
 * address-space limit admits: in a sanitizer build this test skips (77). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/str.h"
#include "tests/test_time.h"
#include "tests/temp_tree.h"

static char base[] = "/tmp/aitk-memlimit-XXXXXX";
static char report[512];

typedef struct child_result {
    bool timed_out;
    int status; /* waitpid's */
    aitk_str err;
} child_result;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs aitk-validate with `args` under an address-space limit of `mib` MiB
 * (0: none), stdout to /dev/null, stderr captured, killed after limit_ms. */
static void run_limited(const char *const *args, long mib, long limit_ms, child_result *r)
{
    memset(r, 0, sizeof *r);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const char *argv[24] = {AITK_EXE};
    size_t n = 1;
    for (; args[n - 1] && n < 23; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(fds[1], 2);
        close(fds[0]);
        if (mib > 0) {
            struct rlimit lim = {.rlim_cur = (rlim_t)mib << 20, .rlim_max = (rlim_t)mib << 20};
            if (setrlimit(RLIMIT_AS, &lim) != 0)
                _exit(125);
        }
        execv(argv[0], (char *const *)argv);
        _exit(126);
    }
    close(fds[1]);
    const double deadline = now_ms() + (double)limit_ms;
    char buf[4096];
    for (;;) {
        double left = deadline - now_ms();
        if (left <= 0) {
            r->timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int k = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            continue;
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got <= 0)
            break; /* end of stderr: the child is exiting */
        aitk_str_appendn(&r->err, buf, (size_t)got);
    }
    close(fds[0]);
    /* Stderr closes at exit, but a hang in an exit handler keeps the
     * process alive after that: wait with the same deadline. */
    for (;;) {
        pid_t w = waitpid(pid, &r->status, WNOHANG);
        if (w == pid)
            break;
        if (now_ms() > deadline) {
            r->timed_out = true;
            kill(pid, SIGKILL);
            waitpid(pid, &r->status, 0);
            break;
        }
        usleep(20 * 1000);
    }
}

/* Raw control bytes or a line that does not end: what a terminal would
 * mangle. NULL when stderr is plain. */
static const char *plain_problem(const char *e)
{
    for (const unsigned char *p = (const unsigned char *)e; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
            return "a raw control byte";
    if (*e && e[strlen(e) - 1] != '\n')
        return "a last line without its end";
    return NULL;
}

typedef struct command {
    const char *name;
    /* 1 when every limit here is too small for it: only exit 3 will do, and
     * the run without a limit (minutes, for a measuring run) is skipped. */
    int must_refuse;
    const char *args[12];
} command;

static void check_command(const command *c)
{
    const long limits_mib[] = {60, 100, 150, 300};
    const long limit_ms = aitk_test_ms(60000);
    int expected = 3;
    if (!c->must_refuse) {
        child_result free_run;
        run_limited(c->args, 0, limit_ms, &free_run);
        if (free_run.timed_out || !WIFEXITED(free_run.status))
            fail_msg("%s: did not exit without a limit either", c->name);
        expected = WEXITSTATUS(free_run.status);
        aitk_str_free(&free_run.err);
    }
    for (size_t i = 0; i < sizeof limits_mib / sizeof *limits_mib; i++) {
        child_result r;
        double t0 = now_ms();
        run_limited(c->args, limits_mib[i], limit_ms, &r);
        const char *e = aitk_str_cstr(&r.err);
        if (r.timed_out)
            fail_msg("%s under %ld MiB: still running after %.0f ms (a hang); stderr: %s",
                     c->name, limits_mib[i], now_ms() - t0, e);
        if (WIFSIGNALED(r.status))
            fail_msg("%s under %ld MiB: killed by signal %d; stderr: %s", c->name,
                     limits_mib[i], WTERMSIG(r.status), e);
        const int rc = WEXITSTATUS(r.status);
        if (rc != expected && rc != 3)
            fail_msg("%s under %ld MiB: exit %d, expected %d (as without a limit) or 3; "
                     "stderr: %s", c->name, limits_mib[i], rc, expected, e);
        const char *bad = plain_problem(e);
        if (bad)
            fail_msg("%s under %ld MiB: %s on stderr: %s", c->name, limits_mib[i], bad, e);
        /* Exit 3 names its cause in a line of aitk-validate's own. */
        if (rc == 3 && (c->must_refuse || rc != expected) && !strstr(e, "aitk-validate: error: "))
            fail_msg("%s under %ld MiB: exit 3 without an error line; stderr: %s", c->name,
                     limits_mib[i], e);
        print_message("%-10s %4ld MiB: exit %d in %.0f ms\n", c->name, limits_mib[i], rc,
                      now_ms() - t0);
        aitk_str_free(&r.err);
    }
}

static void test_every_command(void **state)
{
    (void)state;
    char out_quick[600], out_std[600], md[600];
    snprintf(out_quick, sizeof out_quick, "%s/quick", base);
    snprintf(out_std, sizeof out_std, "%s/standard", base);
    snprintf(md, sizeof md, "%s/report.md", base);
    const command commands[] = {
        {"version", 0, {"--version", NULL}},
        {"help", 0, {"--help", NULL}},
        {"render-help", 0, {"render", "--help", NULL}},
        {"render", 0, {"render", report, "--markdown", md, NULL}},
        {"compare", 0, {"compare", report, report, NULL}},
        {"trend", 0, {"trend", report, NULL}},
        {"deps", 0, {"deps", AITK_EXE, NULL}},
        {"predict", 0, {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090", NULL}},
        {"gpus", 0, {"gpus", NULL}},
        {"quick", 0, {"--quick", "--no-color", "-o", out_quick, NULL}},
        /* The one that loads OpenBLAS: none of these limits holds its
         * buffers (329 MiB for one thread), so it must refuse at once. */
        {"standard", 1, {"--cpu", "-m", "flux1-dev", "--steps", "1", "-o", out_std, NULL}},
    };
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        check_command(&commands[i]);
}

int main(void)
{
#ifdef AITK_TEST_SANITIZED
    fprintf(stderr, "skipped: AddressSanitizer's shadow memory does not fit any address-space "
                    "limit\n");
    return 77;
#endif
    if (!mkdtemp(base))
        return 1;
    snprintf(report, sizeof report, "%s/tests/reports/fixtures/synthetic-report.json",
             AITK_SOURCE_DIR);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_command)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (aitk_test_remove_tree(base) != 0)
        rc = rc ? rc : 1;
    return rc;
}
