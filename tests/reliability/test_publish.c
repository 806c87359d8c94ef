/* The report set in an output folder is always one run's, whole: with
 * several runs started at once into one folder, and with runs killed
 * (SIGKILL, which no handler sees) at random points, publishing included.
 *
 * Each run names itself through --python /nonexistent/run-K/python, which
 * every one of the four files repeats, so a set mixing two runs shows. A
 * killed run may leave a mixed set or temporary files behind: the promise is
 * that the next run replaces the one and clears the other. Quick runs keep
 * this to seconds; the kill points are spread over a whole run, so only some
 * land in the few milliseconds of publishing (the count is printed). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "tests/test_time.h"
#include "tests/temp_tree.h"

static char base[] = "/tmp/aitk-publish-XXXXXX";
static char out[600];
static const char *const files[] = {"report.json", "report.md", "report.html", "junit.xml"};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Starts run K into `out`; its stderr goes to base/err-K. */
static pid_t start_run(int k)
{
    char python[64], err[700];
    snprintf(python, sizeof python, "/nonexistent/run-%d/python", k);
    snprintf(err, sizeof err, "%s/err-%d", base, k);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(null, 0);
        dup2(null, 1);
        dup2(e, 2);
        execl(AITK_EXE, AITK_EXE, "--quick", "--no-color", "--python", python, "-o", out,
              (char *)NULL);
        _exit(126);
    }
    return pid;
}

/* waitpid with the test's deadline: a run that does not end is a failure. */
static int wait_run(pid_t pid)
{
    const double deadline = now_ms() + (double)aitk_test_ms(60000);
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("a run did not end within %ld ms", aitk_test_ms(60000));
        }
        usleep(2000);
    }
    return status;
}

/* Which run wrote `file` (-1: none or unreadable). */
static int run_of(const char *file)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", out, file);
    char *text = NULL;
    size_t len = 0;
    if (aitk_file_read(path, 64 << 20, &text, &len, NULL))
        return -1;
    const char *p = strstr(text, "/nonexistent/run-");
    int k = p ? atoi(p + strlen("/nonexistent/run-")) : -1;
    aitk_free(text);
    return k;
}

/* The run whose set the folder holds, when all four files are its and no
 * other entry is there; -1 when the set is mixed or incomplete, -2 when a
 * temporary file is left. */
static int folder_run(void)
{
    DIR *d = opendir(out);
    if (!d)
        return -1;
    int extra = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strstr(e->d_name, ".tmp."))
            extra = -2;
    }
    closedir(d);
    if (extra)
        return extra;
    int k = run_of(files[0]);
    for (size_t i = 1; i < sizeof files / sizeof *files; i++)
        if (run_of(files[i]) != k)
            return -1;
    return k;
}

/* A refused run says why in one plain line of its own. */
static void expect_refusal_line(int k)
{
    char path[700];
    snprintf(path, sizeof path, "%s/err-%d", base, k);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(path, 1 << 20, &text, &len, NULL), AITK_OK);
    const char *nl = memchr(text, '\n', len);
    if (strncmp(text, "aitk-validate: error: ", 22) != 0 || !nl || (size_t)(nl - text) != len - 1)
        fail_msg("run %d was refused without one error line: %.*s", k, (int)len, text);
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)text[i] < 0x20 && text[i] != '\n') || text[i] == 0x7f)
            fail_msg("run %d: a raw control byte on stderr", k);
    aitk_free(text);
}

static void test_concurrent_runs(void **state)
{
    (void)state;
    enum { ROUNDS = 5, N = 6 };
    int refused = 0, ran = 0;
    for (int round = 0; round < ROUNDS; round++) {
        pid_t pids[N];
        for (int i = 0; i < N; i++)
            pids[i] = start_run(round * N + i);
        int rc[N];
        for (int i = 0; i < N; i++) {
            int status = wait_run(pids[i]);
            if (!WIFEXITED(status))
                fail_msg("run %d ended by signal %d", round * N + i, WTERMSIG(status));
            rc[i] = WEXITSTATUS(status);
            if (rc[i] != 0 && rc[i] != 1 && rc[i] != 2) {
                char path[700], *text = NULL;
                size_t len = 0;
                snprintf(path, sizeof path, "%s/err-%d", base, round * N + i);
                aitk_file_read(path, 1 << 20, &text, &len, NULL);
                fail_msg("run %d: exit %d; stderr: %s", round * N + i, rc[i], text ? text : "");
            }
            if (rc[i] == 2)
                expect_refusal_line(round * N + i);
            refused += rc[i] == 2;
            ran += rc[i] != 2;
        }
        const int k = folder_run();
        if (k < 0)
            fail_msg("round %d: the folder holds %s", round,
                     k == -2 ? "a temporary file" : "a mixed or incomplete set");
        if (k < round * N || k >= (round + 1) * N || rc[k - round * N] == 2)
            fail_msg("round %d: the set is run %d's, which did not publish", round, k);
    }
    print_message("%d runs published, %d refused (the folder was held)\n", ran, refused);
}

static void test_killed_runs(void **state)
{
    (void)state;
    /* How long one run takes here, to spread the kill points over it. */
    double t0 = now_ms();
    int status = wait_run(start_run(1000));
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
    const double run_ms = now_ms() - t0;
    srand(20261203u); /* fixed: a failure repeats */
    enum { KILLS = 40 };
    int mid_run = 0, mixed_after_kill = 0;
    for (int i = 0; i < KILLS; i++) {
        pid_t pid = start_run(2000 + i);
        const double delay_ms = (double)rand() / RAND_MAX * run_ms;
        usleep((useconds_t)(delay_ms * 1000.0));
        kill(pid, SIGKILL);
        status = wait_run(pid);
        if (WIFSIGNALED(status)) {
            mid_run++;
            mixed_after_kill += folder_run() < 0;
        }
        /* The next run, left alone, puts one whole set in place. */
        status = wait_run(start_run(3000 + i));
        if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
            fail_msg("the run after kill %d: status 0x%x", i, status);
        int k = folder_run();
        if (k != 3000 + i)
            fail_msg("after kill %d (%.1f ms into a %.1f ms run) and a whole run: %s", i,
                     delay_ms, run_ms,
                     k == -2 ? "a temporary file is left" : "the set is not the last run's");
    }
    print_message("%d of %d kills landed mid-run; %d left a mixed or partial set or "
                  "temporary files, each made whole by the next run\n",
                  mid_run, KILLS, mixed_after_kill);
}

int main(void)
{
    if (!mkdtemp(base))
        return 1;
    snprintf(out, sizeof out, "%s/out", base);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_concurrent_runs),
                                       cmocka_unit_test(test_killed_runs)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (aitk_test_remove_tree(base) != 0)
        rc = rc ? rc : 1;
    return rc;
}
