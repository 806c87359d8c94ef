/* ci/nightly.sh as a GPU runner's nightly job runs it, with the real binary
 * at --quick: each night's four reports land in HISTORY/runs/<UTC time>/,
 * the trend page and the job summary are written (and appended to
 * $GITHUB_STEP_SUMMARY), --bless makes the latest report the baseline, the
 * next night is compared with it, and a check that newly fails against the
 * baseline is reported by the compare step. The exit code follows the
 * report's own verdict (on a machine without a GPU, --quick fails the GPU
 * checks). Bad usage is exit 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/str.h"
#include "reports/report.h"
#include "tests/test_time.h"

#define SCRIPT AITK_SOURCE_DIR "/ci/nightly.sh"

static aitk_str history, summary_file;

typedef struct nightly {
    int rc;
    aitk_str out, err;
} nightly;

/* bash ci/nightly.sh ARGS... with a pinned environment. */
static nightly run_nightly(const char *validate, const char *const *args)
{
    char path_env[4096], validate_env[2048], summary_env[2048];
    snprintf(path_env, sizeof path_env, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    snprintf(validate_env, sizeof validate_env, "AITK_VALIDATE=%s", validate);
    snprintf(summary_env, sizeof summary_env, "GITHUB_STEP_SUMMARY=%s", summary_file.ptr);
    const char *env[] = {path_env, validate_env, summary_env, "NO_COLOR=1", "HOME=/nonexistent",
                         NULL};
    const char *argv[16] = {"bash", SCRIPT};
    size_t n = 2;
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    nightly r = {0};
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(300000), .env = env};
    aitk_proc_result res;
    aitk_str err = AITK_STR_INIT;
    if (aitk_proc_run(argv, &o, &res, &r.out, &r.err, &err) || !res.exited)
        fail_msg("could not run %s: %s", SCRIPT, aitk_str_cstr(&err));
    aitk_str_free(&err);
    r.rc = res.exit_code;
    return r;
}

static void nightly_free(nightly *r)
{
    aitk_str_free(&r->out);
    aitk_str_free(&r->err);
}

static char *slurp(const char *path)
{
    char *data = NULL;
    size_t len = 0;
    if (aitk_file_read(path, 64u << 20, &data, &len, NULL))
        return NULL;
    return data;
}

static int is_file(const char *dir, const char *name)
{
    aitk_str p = AITK_STR_INIT;
    aitk_path_join(&p, dir, name);
    struct stat sb;
    int ok = stat(p.ptr, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
    aitk_str_free(&p);
    return ok;
}

/* The run folders, oldest first (their names are UTC times). */
static size_t run_dirs(char ***names)
{
    aitk_str runs = AITK_STR_INIT;
    aitk_path_join(&runs, history.ptr, "runs");
    size_t n = 0;
    assert_int_equal(aitk_dir_names(runs.ptr, names, &n, NULL), AITK_OK);
    aitk_str_free(&runs);
    return n;
}

/* The exit code the report's own verdict calls for. */
static int verdict_rc(const char *report_path)
{
    char *text = slurp(report_path);
    assert_non_null(text);
    cJSON *r = NULL;
    assert_int_equal(aitk_report_parse(report_path, text, strlen(text), &r, NULL), AITK_OK);
    aitk_verdict v;
    assert_int_equal(aitk_report_verdict(r, &v), AITK_OK);
    cJSON_Delete(r);
    aitk_free(text);
    return v == AITK_VERDICT_FAIL ? 1 : 0;
}

static void latest_report(aitk_str *out)
{
    char **names = NULL;
    size_t n = run_dirs(&names);
    assert_true(n > 0);
    aitk_str_clear(out);
    aitk_str_appendf(out, "%s/runs/%s/report.json", history.ptr, names[n - 1]);
    aitk_dir_names_free(names, n);
}

static int setup(void **state)
{
    (void)state;
    aitk_str_appendf(&history, "%s/nightly-history", AITK_TEST_REPORTS);
    aitk_str_appendf(&summary_file, "%s/nightly-step-summary.md", AITK_TEST_REPORTS);
    /* A history left by an earlier run of this test would change the counts. */
    const char *argv[] = {"rm", "-rf", history.ptr, summary_file.ptr, NULL};
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(60000)};
    aitk_proc_result res;
    if (aitk_proc_run(argv, &o, &res, NULL, NULL, NULL) || !res.exited || res.exit_code)
        return -1;
    return aitk_dir_create(history.ptr, NULL) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    aitk_str_free(&history);
    aitk_str_free(&summary_file);
    return 0;
}

static void test_nights_bless_and_gate(void **state)
{
    (void)state;
    const char *quick[] = {history.ptr, "--", "--quick", NULL};
    aitk_str report = AITK_STR_INIT;

    /* Night 1: no baseline yet. */
    nightly r = run_nightly(AITK_EXE, quick);
    char **names = NULL;
    size_t n = run_dirs(&names);
    assert_int_equal(n, 1);
    aitk_str dir = AITK_STR_INIT;
    aitk_str_appendf(&dir, "%s/runs/%s", history.ptr, names[0]);
    static const char *const outputs[] = {"report.json", "report.md", "report.html", "junit.xml"};
    for (size_t i = 0; i < 4; i++)
        assert_true(is_file(dir.ptr, outputs[i]));
    aitk_dir_names_free(names, n);
    latest_report(&report);
    assert_int_equal(r.rc, verdict_rc(report.ptr));
    assert_non_null(strstr(r.out.ptr, "compare skipped"));
    assert_true(is_file(history.ptr, "trend.html"));
    assert_false(is_file(history.ptr, "compare.md"));
    char *summary = slurp(summary_file.ptr);
    assert_non_null(summary);
    assert_true(strncmp(summary, "## aitk-validate trend: no regression", 37) == 0);
    aitk_free(summary);
    nightly_free(&r);

    /* Bless it: the baseline is that very report. */
    const char *bless[] = {history.ptr, "--bless", NULL};
    r = run_nightly(AITK_EXE, bless);
    assert_int_equal(r.rc, 0);
    char *a = slurp(report.ptr), *b = NULL;
    aitk_str base = AITK_STR_INIT;
    aitk_str_appendf(&base, "%s/baseline.json", history.ptr);
    b = slurp(base.ptr);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    aitk_free(b);
    nightly_free(&r);

    /* A baseline in which every check passed: tonight each check that fails
     * newly fails against it, and the compare step says so. */
    cJSON *tree = NULL;
    assert_int_equal(aitk_report_parse(base.ptr, a, strlen(a), &tree, NULL), AITK_OK);
    aitk_free(a);
    int failing = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(tree, "checks"))
    {
        cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "status");
        failing += strcmp(st->valuestring, "fail") == 0;
        cJSON_ReplaceItemInObjectCaseSensitive(c, "status", cJSON_CreateString("pass"));
    }
    char *text = cJSON_Print(tree);
    assert_int_equal(aitk_file_write_atomic(base.ptr, text, strlen(text), NULL), AITK_OK);
    cJSON_free(text);
    cJSON_Delete(tree);

    /* Night 2. */
    r = run_nightly(AITK_EXE, quick);
    n = run_dirs(&names);
    assert_int_equal(n, 2);
    aitk_dir_names_free(names, n);
    latest_report(&report);
    int rc = verdict_rc(report.ptr);
    if (failing) {
        assert_non_null(strstr(r.out.ptr, "compare with the baseline: exit 1"));
        rc = 1;
    } else {
        assert_non_null(strstr(r.out.ptr, "compare with the baseline: exit 0"));
    }
    assert_int_equal(r.rc, rc);
    assert_true(is_file(history.ptr, "compare.md"));
    summary = slurp(summary_file.ptr);
    /* Both nights' summaries were appended; the second ends with compare. */
    assert_non_null(strstr(summary, "## aitk-validate compare: "));
    const char *second = strstr(summary + 1, "## aitk-validate trend:");
    assert_non_null(second);
    assert_non_null(strstr(second, "2 run(s)"));
    aitk_free(summary);
    printf("nightly: night 2 exit %d (%d check(s) fail tonight)\n", r.rc, failing);
    nightly_free(&r);
    aitk_str_free(&report);
    aitk_str_free(&base);
    aitk_str_free(&dir);
}

static void test_bad_usage(void **state)
{
    (void)state;
    const char *none[] = {NULL};
    nightly r = run_nightly(AITK_EXE, none);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err.ptr, "usage: ci/nightly.sh"));
    nightly_free(&r);

    const char *quick[] = {history.ptr, "--", "--quick", NULL};
    r = run_nightly("/nonexistent/aitk-validate", quick);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err.ptr, "/nonexistent/aitk-validate is not an executable"));
    nightly_free(&r);

    aitk_str empty = AITK_STR_INIT;
    aitk_str_appendf(&empty, "%s/nightly-empty", AITK_TEST_REPORTS);
    const char *bless[] = {empty.ptr, "--bless", NULL};
    r = run_nightly(AITK_EXE, bless);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err.ptr, "no run in"));
    nightly_free(&r);

    const char *stray[] = {history.ptr, "--quick", NULL}; /* options go after -- */
    r = run_nightly(AITK_EXE, stray);
    assert_int_equal(r.rc, 2);
    nightly_free(&r);
    aitk_str_free(&empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nights_bless_and_gate),
        cmocka_unit_test(test_bad_usage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
