/* The real aitk-validate binary running the CPU workloads: a short standard
 * run writes all four outputs with workloads[] and micro[]; SIGINT sent in
 * the middle of a workload still leaves a valid report.json that says
 * "interrupted", and one sent while a probe's program runs ends that
 * program. Both reports are checked against the JSON Schema and kept
 * in the test-reports folder for schema.all_reports. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/str.h"
#include "tests/report_json.h"
#include "tests/test_time.h"

static char tmp[] = "/tmp/aitk-bench-cli-XXXXXX";

static bool exists(const char *dir, const char *name)
{
    aitk_str p = AITK_STR_INIT;
    aitk_path_join(&p, dir, name);
    struct stat sb;
    bool ok = stat(p.ptr, &sb) == 0 && sb.st_size > 0;
    aitk_str_free(&p);
    return ok;
}

/* Schema check with the project's validator; skipped (not passed) when
 * python3-jsonschema is missing. Keeps a copy for schema.all_reports. */
static void check_schema(const char *report, const char *keep_as)
{
    aitk_str keep = AITK_STR_INIT, err = AITK_STR_INIT;
    char *data = NULL;
    size_t len = 0;
    aitk_path_join(&keep, AITK_TEST_REPORTS, keep_as);
    assert_int_equal(aitk_file_read(report, 64 << 20, &data, &len, &err), 0);
    assert_int_equal(aitk_file_write_atomic(keep.ptr, data, len, &err), 0);
    free(data);
    const char *argv[] = {"/usr/bin/python3", AITK_SOURCE_DIR "/tests/tools/validate_reports.py",
                          AITK_SOURCE_DIR "/reports/schema/report.schema.json", report, NULL};
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(60000)};
    aitk_proc_result pr;
    aitk_str out = AITK_STR_INIT, errout = AITK_STR_INIT;
    if (aitk_proc_run(argv, &o, &pr, &out, &errout, &err) == AITK_OK && pr.exited &&
        pr.exit_code != 77 && pr.exit_code != 0)
        fail_msg("schema: %s%s", aitk_str_cstr(&out), aitk_str_cstr(&errout));
    aitk_str_free(&out);
    aitk_str_free(&errout);
    aitk_str_free(&keep);
    aitk_str_free(&err);
}

static const cJSON *item(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static void test_standard_cpu_run_writes_everything(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, json = AITK_STR_INIT, out = AITK_STR_INIT,
             errs = AITK_STR_INIT, why = AITK_STR_INIT;
    aitk_path_join(&dir, tmp, "standard");
    const char *argv[] = {AITK_EXE, "--cpu", "--model", "chroma", "--steps", "6",
                          "--output-dir", dir.ptr, "--no-color", NULL};
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(600000)};
    aitk_proc_result pr;
    assert_int_equal(aitk_proc_run(argv, &o, &pr, &out, &errs, &why), 0);
    if (!pr.exited || (pr.exit_code != 0 && pr.exit_code != 1))
        fail_msg("exit %d: %s", pr.exit_code, aitk_str_cstr(&errs));
    assert_true(exists(dir.ptr, "report.json") && exists(dir.ptr, "report.html") &&
                exists(dir.ptr, "report.md") && exists(dir.ptr, "junit.xml"));
    /* Not a terminal: plain progress lines, no carriage returns. */
    assert_non_null(strstr(errs.ptr, "chroma warm-up"));
    assert_null(strchr(errs.ptr, '\r'));
    aitk_path_join(&json, dir.ptr, "report.json");
    cJSON *r = load_json(json.ptr);
    const cJSON *w = cJSON_GetArrayItem(item(r, "workloads"), 0);
    assert_non_null(w);
    assert_int_equal(cJSON_GetArraySize(item(r, "workloads")), 1);
    assert_string_equal(item(w, "name")->valuestring, "chroma");
    assert_string_equal(item(w, "backend")->valuestring, "cpu");
    const char *status = item(w, "status")->valuestring;
    if (strcmp(status, "skipped") == 0) {
        /* A build without the training-step graph says so. */
        assert_non_null(strstr(item(w, "message")->valuestring, "step"));
    } else {
        assert_string_equal(status, "completed");
        /* --steps 6 -> two whole cycles of the three buckets. */
        assert_int_equal(item(item(w, "steps"), "timed")->valueint, 6);
        assert_true(cJSON_IsTrue(item(item(w, "time_per_1000_steps"), "extrapolated")));
        assert_null(item(item(w, "time_per_1000_steps"), "target_s")); /* CPU figure */
        assert_true(item(item(w, "throughput"), "steps_per_s")->valuedouble > 0);
        assert_true(item(item(w, "memory"), "peak_bytes")->valuedouble > 0);
    }
    assert_true(cJSON_GetArraySize(item(r, "micro")) >= 1);
    assert_null(item(item(r, "environment"), "workloads")); /* moved to the top level */
    cJSON_Delete(r);
    check_schema(json.ptr, "bench-standard-cpu.json");
    aitk_str_free(&dir);
    aitk_str_free(&json);
    aitk_str_free(&out);
    aitk_str_free(&errs);
    aitk_str_free(&why);
}

/* Reads what is available from fd into s within wait_ms; false at EOF. */
static bool read_some(int fd, aitk_str *s, int wait_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, wait_ms) <= 0)
        return true;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0)
        return false;
    aitk_str_appendn(s, buf, (size_t)n);
    return true;
}

/* Runs a long workload, sends `signals` signals `sig` (SIGINT or SIGTERM)
 * 50 ms apart once it runs, and checks that the run stops after its step
 * and still writes its report. Two in quick succession is what `timeout -s
 * INT` delivers (to the child, then to its process group): one request, not
 * a second Ctrl-C. With reader_gone, the reader of stderr goes away just
 * before the signal, as `tee` does in `aitk-validate 2>&1 | tee log` when
 * Ctrl-C reaches the whole pipeline. */
static void signal_keeps_report(const char *name, int sig, int signals, bool reader_gone)
{
    aitk_str dir = AITK_STR_INIT, json = AITK_STR_INIT, errs = AITK_STR_INIT;
    aitk_path_join(&dir, tmp, name);
    /* A full run of far more steps than the test will wait for. */
    const char *argv[] = {AITK_EXE, "--cpu", "--full", "--model", "flux1-dev", "--steps",
                          "1000000", "--output-dir", dir.ptr, "--no-color", NULL};
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[0]);
        /* As a shell starts it: a SIGPIPE that ctest ignores must not hide
         * what the program does with its own. */
        signal(SIGPIPE, SIG_DFL);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    /* Wait until the workload is running (its progress has started). */
    double t0 = aitk_clock_ms();
    bool open_ = true;
    while (open_ && !strstr(aitk_str_cstr(&errs), "flux1-dev warm-up") &&
           aitk_clock_ms() - t0 < 300000)
        open_ = read_some(pipefd[0], &errs, 200);
    if (!strstr(aitk_str_cstr(&errs), "flux1-dev warm-up")) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("the workload never started: %s", aitk_str_cstr(&errs));
    }
    aitk_sleep_ms(700);
    if (reader_gone) {
        close(pipefd[0]);
        open_ = false;
    }
    for (int i = 0; i < signals; i++) {
        if (i)
            aitk_sleep_ms(50); /* else the two merge into one pending signal */
        assert_int_equal(kill(pid, sig), 0);
    }
    t0 = aitk_clock_ms();
    int wst = 0;
    pid_t ended = 0;
    if (reader_gone) {
        /* No pipe to see the end by: the process itself is watched. */
        while ((ended = waitpid(pid, &wst, WNOHANG)) == 0 && aitk_clock_ms() - t0 < 120000)
            aitk_sleep_ms(200);
    } else {
        while (open_ && aitk_clock_ms() - t0 < 120000)
            open_ = read_some(pipefd[0], &errs, 200);
        close(pipefd[0]);
        if (!open_)
            ended = waitpid(pid, &wst, 0);
    }
    if (ended != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("no exit within 120 s of signal %d", sig);
    }
    if (!WIFEXITED(wst) || (WEXITSTATUS(wst) != 0 && WEXITSTATUS(wst) != 1))
        fail_msg("status %d after signal %d: %s", wst, sig, aitk_str_cstr(&errs));
    if (!reader_gone)
        assert_non_null(strstr(errs.ptr, "stopping after the current step"));
    aitk_path_join(&json, dir.ptr, "report.json");
    cJSON *r = load_json(json.ptr);
    const cJSON *w = cJSON_GetArrayItem(item(r, "workloads"), 0);
    assert_string_equal(item(w, "status")->valuestring, "interrupted");
    /* The message names the signal: SIGTERM (timeout, Slurm) is no Ctrl-C. */
    const char *said = sig == SIGTERM ? "interrupted (SIGTERM)" : "interrupted (Ctrl-C)";
    if (!strstr(item(w, "message")->valuestring, said))
        fail_msg("the workload's message lacks \"%s\": %s", said,
                 item(w, "message")->valuestring);
    const cJSON *c;
    int seen = 0;
    cJSON_ArrayForEach(c, item(r, "checks"))
    {
        if (strcmp(item(c, "id")->valuestring, "workload.flux1-dev") == 0) {
            seen = 1;
            assert_string_equal(item(c, "status")->valuestring, "warn");
        }
    }
    assert_true(seen);
    assert_true(exists(dir.ptr, "report.html") && exists(dir.ptr, "junit.xml") &&
                exists(dir.ptr, "report.md"));
    cJSON_Delete(r);
    check_schema(json.ptr, "bench-sigint.json");
    aitk_str_free(&dir);
    aitk_str_free(&json);
    aitk_str_free(&errs);
}

static void test_sigint_during_workload_keeps_report(void **state)
{
    (void)state;
    signal_keeps_report("sigint", SIGINT, 1, false);
}

static void test_double_sigint_at_once_keeps_report(void **state)
{
    (void)state;
    signal_keeps_report("sigint2", SIGINT, 2, false);
}

/* SIGTERM is how `timeout`, Kubernetes and Slurm stop a run; it killed the
 * program at once and left an empty --output-dir. */
static void test_sigterm_during_workload_keeps_report(void **state)
{
    (void)state;
    signal_keeps_report("sigterm", SIGTERM, 1, false);
}

/* `aitk-validate 2>&1 | tee log` and Ctrl-C: tee ends too, and the run's
 * next line on stderr raised SIGPIPE, which killed it before its reports. */
static void test_sigint_with_reader_gone_keeps_report(void **state)
{
    (void)state;
    signal_keeps_report("sigint-tee", SIGINT, 1, true);
}

/* True when process `pid` is gone or only a zombie waiting for its reaper. */
static bool gone_or_zombie(pid_t pid)
{
    char path[64], stat[512] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *close_paren = strrchr(stat, ')');
    return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

/* A second Ctrl-C ends the program at once, and with it the program a
 * probe is running: that one runs in a process group of its own, which the
 * terminal's signal never reaches, and was left behind (a "python" that
 * sleeps stands in for a slow import torch). The first Ctrl-C sends that
 * program SIGTERM and waits AITK_PROC_STOP_GRACE_MS before killing it; this
 * one ignores SIGTERM, so it still runs when the second press comes. */
static void test_abort_during_a_probe_ends_its_program(void **state)
{
    (void)state;
    aitk_str py = AITK_STR_INIT, pidfile = AITK_STR_INIT, dir = AITK_STR_INIT,
             text = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_path_join(&py, tmp, "python3");
    aitk_path_join(&pidfile, tmp, "python.pid");
    aitk_path_join(&dir, tmp, "abort");
    aitk_str_appendf(&text,
                     "#!/bin/sh\ntrap '' TERM\necho $$ > '%s.tmp'\nmv '%s.tmp' '%s'\n"
                     "exec sleep 300\n",
                     pidfile.ptr, pidfile.ptr, pidfile.ptr);
    assert_int_equal(aitk_file_write_atomic(py.ptr, text.ptr, text.len, &err), 0);
    assert_int_equal(chmod(py.ptr, 0755), 0);
    const char *argv[] = {AITK_EXE,   "--standard",  "--cpu", "--python", py.ptr,
                          "--output-dir", dir.ptr, "--no-color", NULL};
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        dup2(devnull, STDERR_FILENO);
        signal(SIGINT, SIG_DFL);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    /* Wait until the probe's program runs (it has written its pid). */
    const double limit = aitk_test_ms(60000);
    double t0 = aitk_clock_ms();
    char *data = NULL;
    size_t len = 0;
    while (aitk_file_read(pidfile.ptr, 64, &data, &len, NULL) != AITK_OK &&
           aitk_clock_ms() - t0 < limit)
        aitk_sleep_ms(50);
    if (!data) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("the fake python never ran");
    }
    pid_t child = (pid_t)atol(data);
    free(data);
    assert_true(child > 0);
    const double first = aitk_clock_ms();
    assert_int_equal(kill(pid, SIGINT), 0);
    aitk_sleep_ms(700); /* a second press, not the first one delivered twice */
    const double gap = aitk_clock_ms() - first;
    assert_int_equal(kill(pid, SIGINT), 0);
    int wst = 0;
    pid_t ended = 0;
    t0 = aitk_clock_ms();
    while ((ended = waitpid(pid, &wst, WNOHANG)) == 0 && aitk_clock_ms() - t0 < limit)
        aitk_sleep_ms(50);
    if (ended != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        kill(child, SIGKILL);
        fail_msg("no exit after the second SIGINT");
    }
    /* A machine too busy to send the second press within the grace saw the
     * first one end the program and the run: nothing to abort then. */
    if (gap < AITK_PROC_STOP_GRACE_MS - 300)
        assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGINT);
    t0 = aitk_clock_ms();
    while (!gone_or_zombie(child) && aitk_clock_ms() - t0 < aitk_test_ms(10000))
        aitk_sleep_ms(50);
    bool left = !gone_or_zombie(child);
    if (left)
        kill(child, SIGKILL);
    assert_false(left);
    aitk_str_free(&py);
    aitk_str_free(&pidfile);
    aitk_str_free(&dir);
    aitk_str_free(&text);
    aitk_str_free(&err);
}

/* The check of `id` in report r, failing the test when there is none. */
static const cJSON *check_of(const cJSON *r, const char *id)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, item(r, "checks"))
    {
        if (strcmp(item(c, "id")->valuestring, id) == 0)
            return c;
    }
    fail_msg("no check %s in the report", id);
    return NULL;
}

/* A single Ctrl-C or SIGTERM while a probe's program runs (a "python" that
 * sleeps stands in for an import torch that takes two minutes) ends that
 * program, and the run goes on at once to write its reports, the check
 * marked interrupted: skipped, never failed. The run waited for the program
 * to end by itself (up to import torch's 120 s) and then failed the check
 * as "importing torch hung". With ignore_term the program ignores SIGTERM,
 * and is killed once the grace has passed. */
static void first_signal_during_a_probe(const char *name, int sig, bool ignore_term)
{
    aitk_str py = AITK_STR_INIT, pidfile = AITK_STR_INIT, dir = AITK_STR_INIT,
             text = AITK_STR_INIT, err = AITK_STR_INIT, json = AITK_STR_INIT,
             log = AITK_STR_INIT;
    aitk_path_join(&dir, tmp, name);
    /* Named python3, as the interpreter search expects, in a folder of its
     * own beside the output folder. */
    aitk_str_appendf(&py, "%s-bin", dir.ptr);
    assert_int_equal(mkdir(py.ptr, 0755), 0);
    aitk_str_append(&py, "/python3");
    aitk_str_appendf(&pidfile, "%s-python.pid", dir.ptr);
    aitk_str_appendf(&log, "%s-stderr.log", dir.ptr);
    aitk_str_appendf(&text, "#!/bin/sh\n%secho $$ > '%s.tmp'\nmv '%s.tmp' '%s'\nexec sleep 300\n",
                     ignore_term ? "trap '' TERM\n" : "", pidfile.ptr, pidfile.ptr, pidfile.ptr);
    assert_int_equal(aitk_file_write_atomic(py.ptr, text.ptr, text.len, &err), 0);
    assert_int_equal(chmod(py.ptr, 0755), 0);
    const char *argv[] = {AITK_EXE,   "--standard",  "--cpu", "--python", py.ptr,
                          "--output-dir", dir.ptr, "--no-color", NULL};
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        int errfd = open(log.ptr, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        dup2(errfd >= 0 ? errfd : devnull, STDERR_FILENO);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    /* Wait until the probe's program runs (it has written its pid). */
    const double limit = aitk_test_ms(60000);
    double t0 = aitk_clock_ms();
    char *data = NULL;
    size_t len = 0;
    while (aitk_file_read(pidfile.ptr, 64, &data, &len, NULL) != AITK_OK &&
           aitk_clock_ms() - t0 < limit)
        aitk_sleep_ms(50);
    if (!data) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("the fake python never ran");
    }
    pid_t child = (pid_t)atol(data);
    free(data);
    assert_true(child > 0);
    assert_int_equal(kill(pid, sig), 0);
    /* Well within import torch's own 120 s, however busy the machine. */
    int wst = 0;
    pid_t ended = 0;
    t0 = aitk_clock_ms();
    while ((ended = waitpid(pid, &wst, WNOHANG)) == 0 && aitk_clock_ms() - t0 < limit)
        aitk_sleep_ms(50);
    if (ended != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        kill(child, SIGKILL);
        fail_msg("no exit within %.0f s of one signal %d: the run waited for the probe's "
                 "program", limit / 1000, sig);
    }
    char *errs = NULL;
    aitk_file_read(log.ptr, 1 << 20, &errs, &len, NULL);
    if (!WIFEXITED(wst) || (WEXITSTATUS(wst) != 0 && WEXITSTATUS(wst) != 1))
        fail_msg("status %d after signal %d: %s", wst, sig, errs ? errs : "");
    free(errs);
    t0 = aitk_clock_ms();
    while (!gone_or_zombie(child) && aitk_clock_ms() - t0 < aitk_test_ms(10000))
        aitk_sleep_ms(50);
    bool left = !gone_or_zombie(child);
    if (left)
        kill(child, SIGKILL);
    assert_false(left);
    aitk_path_join(&json, dir.ptr, "report.json");
    cJSON *r = load_json(json.ptr);
    const cJSON *c = check_of(r, "python.import_torch");
    const char *words = sig == SIGTERM ? "interrupted (SIGTERM)" : "interrupted (Ctrl-C)";
    if (strcmp(item(c, "status")->valuestring, "skip") != 0 ||
        !strstr(item(c, "observed")->valuestring, words))
        fail_msg("python.import_torch: %s, \"%s\", \"%s\" (expected a skip, %s)",
                 item(c, "status")->valuestring, item(c, "observed")->valuestring,
                 item(c, "message")->valuestring, words);
    /* The workloads were not started after the stop, and say why. */
    const cJSON *w = cJSON_GetArrayItem(item(r, "workloads"), 0);
    assert_non_null(w);
    assert_non_null(strstr(item(w, "message")->valuestring, words));
    cJSON_Delete(r);
    check_schema(json.ptr, "bench-probe-interrupted.json");
    aitk_str_free(&py);
    aitk_str_free(&pidfile);
    aitk_str_free(&dir);
    aitk_str_free(&text);
    aitk_str_free(&err);
    aitk_str_free(&json);
    aitk_str_free(&log);
}

static void test_sigint_during_a_probe_ends_its_program(void **state)
{
    (void)state;
    first_signal_during_a_probe("probe-sigint", SIGINT, false);
}

static void test_sigterm_during_a_probe_kills_a_program_that_ignores_it(void **state)
{
    (void)state;
    first_signal_during_a_probe("probe-sigterm", SIGTERM, true);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *argv[] = {"rm", "-rf", tmp, NULL};
    aitk_proc_result pr;
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(30000)};
    aitk_proc_run(argv, &o, &pr, NULL, NULL, NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standard_cpu_run_writes_everything),
        cmocka_unit_test(test_sigint_during_workload_keeps_report),
        cmocka_unit_test(test_double_sigint_at_once_keeps_report),
        cmocka_unit_test(test_sigterm_during_workload_keeps_report),
        cmocka_unit_test(test_sigint_with_reader_gone_keeps_report),
        cmocka_unit_test(test_abort_during_a_probe_ends_its_program),
        cmocka_unit_test(test_sigint_during_a_probe_ends_its_program),
        cmocka_unit_test(test_sigterm_during_a_probe_kills_a_program_that_ignores_it),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
