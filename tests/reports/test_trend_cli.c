/* `aitk-validate trend` as a nightly job runs it: the real binary over a
 * folder laid out as nightly/<date>/report.json (plus a loose *.json, a
 * folder without a report and a file that is not JSON), a report named
 * twice counted once, the gate's exit code, each format, --output written
 * and nothing on stdout; and every bad input refused with one stderr line
 * and exit 2. The nightly reports are copies of the synthetic fixture with
 * created_at and one step time set here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_test_util.h"

/* Valid reports live under the test reports folder (schema.all_reports
 * checks them); broken inputs live beside the binary, outside it. */
#define BAD_DIR AITK_BINARY_DIR "/tests/trend-inputs"

static aitk_str nightly; /* the folder of nightly reports */

static void write_night(const char *path, const char *when, double flux_median)
{
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    cJSON_ReplaceItemInObjectCaseSensitive(r, "created_at", cJSON_CreateString(when));
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "workloads"), 0);
    cJSON *st = cJSON_GetObjectItemCaseSensitive(w, "step_time_s");
    cJSON_ReplaceItemInObjectCaseSensitive(st, "median", cJSON_CreateNumber(flux_median));
    assert_int_equal(rt_write_json(path, r), 0);
    cJSON_Delete(r);
}

static int setup(void **state)
{
    (void)state;
    aitk_str p = AITK_STR_INIT;
    rt_dir(&nightly, "trend/nightly");
    /* Four nights in folders; the last is 10% slower than the 2.30 s before. */
    static const char *const days[] = {"2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05"};
    for (int i = 0; i < 4; i++) {
        aitk_str_clear(&p);
        aitk_str_appendf(&p, "%s/%s", nightly.ptr, days[i]);
        aitk_dir_create(p.ptr, NULL);
        aitk_str_append(&p, "/report.json");
        char when[32];
        snprintf(when, sizeof when, "%sT05:00:00Z", days[i]);
        write_night(p.ptr, when, i == 3 ? 2.53 : 2.30);
    }
    /* A loose report, the oldest night. */
    aitk_str_clear(&p);
    aitk_str_appendf(&p, "%s/first.json", nightly.ptr);
    write_night(p.ptr, "2026-11-01T05:00:00Z", 2.30);
    /* Neither is a report, neither is read. */
    aitk_str_clear(&p);
    aitk_str_appendf(&p, "%s/logs", nightly.ptr);
    aitk_dir_create(p.ptr, NULL);
    aitk_str_clear(&p);
    aitk_str_appendf(&p, "%s/notes.txt", nightly.ptr);
    assert_int_equal(aitk_file_write_atomic(p.ptr, "{", 1, NULL), AITK_OK);
    aitk_str_free(&p);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    aitk_str_free(&nightly);
    return 0;
}

/* Runs `aitk-validate trend ARGS...`; stdout and stderr into out/err. */
static int trend(aitk_str *out, aitk_str *err, const char *a1, const char *a2, const char *a3,
                 const char *a4, const char *a5)
{
    const char *argv[] = {AITK_EXE, "trend", a1, a2, a3, a4, a5, NULL};
    aitk_str_clear(out);
    aitk_str_clear(err);
    return rt_run(argv, NULL, out, err);
}

static void test_folder_and_gate(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT, one = AITK_STR_INIT;
    assert_int_equal(trend(&out, &err, nightly.ptr, NULL, NULL, NULL, NULL), 0);
    assert_non_null(strstr(out.ptr, "5 run(s), 2026-11-01T05:00:00Z .. 2026-11-05T05:00:00Z"));
    assert_non_null(strstr(out.ptr, "Result: REGRESSION (1 series)"));
    /* The regression is listed first, +10.0% against the 2.300 s median. */
    const char *first = strstr(out.ptr, "\nworkload ");
    assert_non_null(first);
    assert_true(strncmp(first + 1, "workload flux1-dev (cuda): median step time ", 44) == 0);
    assert_non_null(strstr(first, "2.300 s"));
    assert_non_null(strstr(first, "+10.0%"));
    assert_int_equal(err.len, 0);

    /* Night 4 named again, by its own path: still five runs. */
    aitk_str_appendf(&one, "%s/2026-11-04/report.json", nightly.ptr);
    assert_int_equal(trend(&out, &err, nightly.ptr, one.ptr, NULL, NULL, NULL), 0);
    assert_non_null(strstr(out.ptr, "5 run(s)"));

    assert_int_equal(trend(&out, &err, nightly.ptr, "--fail-on-regression", NULL, NULL, NULL), 1);
    assert_int_equal(
        trend(&out, &err, nightly.ptr, "--fail-on-regression", "--threshold", "12%", NULL), 0);
    /* The newest night alone has no baseline: every series is new. */
    assert_int_equal(trend(&out, &err, nightly.ptr, "--last", "1", "--fail-on-regression", NULL),
                     0);
    assert_non_null(strstr(out.ptr, "1 run(s), 2026-11-05T05:00:00Z"));
    assert_int_equal(trend(&out, &err, nightly.ptr, "--last", "2", "--fail-on-regression", NULL),
                     1);
    aitk_str_clear(&one);
    aitk_str_appendf(&one, "%s/2026-11-05/report.json", nightly.ptr);
    assert_int_equal(trend(&out, &err, one.ptr, "--fail-on-regression", NULL, NULL, NULL), 0);
    assert_non_null(strstr(out.ptr, "1 run(s)"));
    aitk_str_free(&out);
    aitk_str_free(&err);
    aitk_str_free(&one);
}

static void test_formats_and_output(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT, html = AITK_STR_INIT,
             printed = AITK_STR_INIT;
    aitk_str_appendf(&html, "%s/../trend.html", nightly.ptr);
    assert_int_equal(trend(&out, &err, nightly.ptr, "--format", "html", "--output", html.ptr), 0);
    assert_int_equal(out.len, 0);
    char *page = rt_read(html.ptr);
    assert_non_null(page);
    assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(page, "REGRESSION: 1 series got worse in the latest run"));
    /* The page equals what the same command prints without --output. */
    assert_int_equal(trend(&printed, &err, nightly.ptr, "--format", "html", NULL, NULL), 0);
    assert_string_equal(printed.ptr, page);
    aitk_free(page);

    assert_int_equal(trend(&out, &err, nightly.ptr, "--format", "csv", NULL, NULL), 0);
    assert_true(strncmp(out.ptr, "created_at,git_commit,report,series,unit,device,value\n", 54) ==
                0);
    /* 5 nights x (checks failed + the fixture's 2 failing checks + 2 workloads
     * x 7 metrics + 3 micro) = 100 rows; a check that never failed has none. */
    assert_int_equal(rt_count(out.ptr, "\n"), 1 + 5 * 20);
    assert_int_equal(trend(&out, &err, nightly.ptr, "--format", "markdown", NULL, NULL), 0);
    assert_true(strncmp(out.ptr, "## aitk-validate trend: REGRESSION\n", 35) == 0);
    aitk_str_free(&out);
    aitk_str_free(&err);
    aitk_str_free(&html);
    aitk_str_free(&printed);
}

/* One line on stderr, exit 2, nothing on stdout, and the message names the
 * culprit. */
static void refused(const char *why, const char *a1, const char *a2, const char *a3,
                    const char *a4)
{
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    int rc = trend(&out, &err, a1, a2, a3, a4, NULL);
    if (rc != 2 || out.len != 0 || rt_count(err.ptr, "\n") != 1 || !strstr(err.ptr, why))
        fail_msg("trend %s %s %s %s: rc %d, stdout '%s', stderr '%s' (wanted '%s')", a1,
                 a2 ? a2 : "", a3 ? a3 : "", a4 ? a4 : "", rc, out.ptr ? out.ptr : "",
                 err.ptr ? err.ptr : "", why);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* Sets check `id` of report `r` to `status`. */
static void set_check(cJSON *r, const char *id, const char *status)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "checks"))
    {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "id")), id) == 0)
            cJSON_ReplaceItemInObjectCaseSensitive((cJSON *)c, "status",
                                                   cJSON_CreateString(status));
    }
}

/* Whether the line of `text` that starts with `start` holds `word`. */
static bool line_says(const char *text, const char *start, const char *word)
{
    const char *line = strstr(text, start);
    if (!line)
        return false;
    const char *end = strchr(line + 1, '\n');
    const char *hit = strstr(line, word);
    return hit && (!end || hit < end);
}

/* Four nights of the fixture into folder `name`; the last one changed by
 * `last_night`. */
static void write_four_nights(aitk_str *dir, const char *name, void (*last_night)(cJSON *))
{
    aitk_str p = AITK_STR_INIT;
    rt_dir(dir, name);
    for (int night = 1; night <= 4; night++) {
        cJSON *r = rt_load(FIXTURE);
        assert_non_null(r);
        char when[32];
        snprintf(when, sizeof when, "2026-11-0%dT05:00:00Z", night);
        cJSON_ReplaceItemInObjectCaseSensitive(r, "created_at", cJSON_CreateString(when));
        if (night == 4)
            last_night(r);
        aitk_str_clear(&p);
        aitk_str_appendf(&p, "%s/night%d.json", dir->ptr, night);
        assert_int_equal(rt_write_json(p.ptr, r), 0);
        cJSON_Delete(r);
    }
    aitk_str_free(&p);
}

static void swap_failures(cJSON *r)
{
    set_check(r, "cuda.cudnn", "pass");
    set_check(r, "host.libc", "fail");
    /* The schema wants a remedy beside a failure. */
    cJSON *libc = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 1);
    cJSON_ReplaceItemInObjectCaseSensitive(libc, "remedy", cJSON_CreateString("Use glibc 2.35+."));
}

/* A check no earlier night had, failing, in place of cuda.cudnn's failure. */
static void add_failing_check(cJSON *r)
{
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(r, "checks");
    cJSON *c = cJSON_Duplicate(cJSON_GetArrayItem(checks, 2), true); /* gpu.driver, fail */
    cJSON_ReplaceItemInObjectCaseSensitive(c, "id", cJSON_CreateString("gpu.extra"));
    cJSON_AddItemToArray(checks, c);
    set_check(r, "cuda.cudnn", "pass");
}

/* The latest night fixes cuda.cudnn and breaks host.libc: as many checks
 * fail as before, and the gate still fails on the new failure, as compare
 * fails it; so does a failing check that no earlier night had. A check
 * that never failed (host.os) is not listed. */
static void test_check_that_fails_anew(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, out = AITK_STR_INIT, err = AITK_STR_INIT;
    write_four_nights(&dir, "trend/swap", swap_failures);
    assert_int_equal(trend(&out, &err, dir.ptr, "--fail-on-regression", NULL, NULL, NULL), 1);
    assert_non_null(strstr(out.ptr, "Result: REGRESSION (1 series)"));
    assert_true(line_says(out.ptr, "\ncheck host.libc ", "REGRESSION"));
    assert_true(line_says(out.ptr, "\ncheck cuda.cudnn ", "improved"));
    assert_true(line_says(out.ptr, "\nchecks failed ", "ok"));
    assert_null(strstr(out.ptr, "check host.os"));

    write_four_nights(&dir, "trend/anew", add_failing_check);
    assert_int_equal(trend(&out, &err, dir.ptr, "--fail-on-regression", NULL, NULL, NULL), 1);
    assert_non_null(strstr(out.ptr, "Result: REGRESSION (1 series)"));
    assert_true(line_says(out.ptr, "\ncheck gpu.extra ", "REGRESSION"));
    aitk_str_free(&dir);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    aitk_dir_create(BAD_DIR "/empty", NULL);
    aitk_dir_create(BAD_DIR "/broken", NULL);
    assert_int_equal(aitk_file_write_atomic(BAD_DIR "/broken/2026-11-06.json", "{\"a\": ", 6,
                                            NULL),
                     AITK_OK);
    static const char undated[] = "{\"schema_version\": \"1.0\", \"checks\": [], "
                                  "\"summary\": {}}";
    assert_int_equal(
        aitk_file_write_atomic(BAD_DIR "/undated.json", undated, strlen(undated), NULL), AITK_OK);
    refused("name the reports", NULL, NULL, NULL, NULL);
    refused(BAD_DIR "/empty: no reports", BAD_DIR "/empty", NULL, NULL, NULL);
    refused(BAD_DIR "/broken/2026-11-06.json:1:", nightly.ptr, BAD_DIR "/broken", NULL, NULL);
    refused(BAD_DIR "/undated.json: created_at (missing)", BAD_DIR "/undated.json", NULL, NULL,
            NULL);
    refused(BAD_DIR "/nothing-here.json", BAD_DIR "/nothing-here.json", NULL, NULL, NULL);
    /* A named pipe nobody writes to, among the reports or named itself,
     * stops nothing: the open used to wait for a writer for ever. */
    aitk_dir_create(BAD_DIR "/piped", NULL);
    unlink(BAD_DIR "/piped/2026-11-07.json");
    unlink(BAD_DIR "/lone-pipe.json");
    assert_int_equal(mkfifo(BAD_DIR "/piped/2026-11-07.json", 0600), 0);
    assert_int_equal(mkfifo(BAD_DIR "/lone-pipe.json", 0600), 0);
    refused(BAD_DIR "/piped/2026-11-07.json: not a regular file", nightly.ptr, BAD_DIR "/piped",
            NULL, NULL);
    refused(BAD_DIR "/lone-pipe.json:1:1: not valid JSON", BAD_DIR "/lone-pipe.json", NULL, NULL,
            NULL);
    refused("--format: 'pdf'", nightly.ptr, "--format", "pdf", NULL);
    refused("--window: 0 is out of range", nightly.ptr, "--window", "0", NULL);
    refused("--last: 'x' is not a whole number", nightly.ptr, "--last", "x", NULL);
    refused("--threshold", nightly.ptr, "--threshold", "lots", NULL);
    refused("unknown option '--bogus'", nightly.ptr, "--bogus", NULL, NULL);
    refused("--output needs a value", nightly.ptr, "--output", NULL, NULL);
    /* An output that is a folder is refused before any report is read. */
    refused(BAD_DIR "/empty", BAD_DIR "/nothing-here.json", "--output", BAD_DIR "/empty", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folder_and_gate),
        cmocka_unit_test(test_formats_and_output),
        cmocka_unit_test(test_check_that_fails_anew),
        cmocka_unit_test(test_bad_inputs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
