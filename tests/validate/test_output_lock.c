/* One run at a time in an output folder, and nothing of a killed run left
 * there. The lock is taken with the kernel's flock, the same call another
 * aitk-validate process would make, by this test process on the folder. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/validate/cli_run.h"
#include "tests/test_time.h"

static char base[] = "/tmp/aitk-lock-XXXXXX";

static int exists(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* A folder another run holds: exit 2 at once, naming it; no file written. */
static void test_second_run_refused(void **state)
{
    (void)state;
    int fd = open(base, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    const char *args[] = {"--quick", "--output-dir", base, NULL};
    cli_result r;
    cli_run(&r, args, NULL);
    close(fd);
    assert_int_equal(r.exit_code, 2);
    if (!strstr(aitk_str_cstr(&r.err), "another aitk-validate run is writing its reports here"))
        fail_msg("stderr: %s", aitk_str_cstr(&r.err));
    assert_false(exists("report.json"));
    cli_free(&r);
    /* Released: the next run writes its set. */
    cli_run(&r, args, NULL);
    assert_true(r.exit_code == 0 || r.exit_code == 1);
    assert_true(exists("report.json") && exists("report.md") && exists("report.html") &&
                exists("junit.xml"));
    cli_free(&r);
}

/* A run killed after staging its files left report.json.tmp.XXXXXX; the
 * next run into the folder removes it, and only files of that shape. */
static void test_leftovers_removed(void **state)
{
    (void)state;
    const char *left[] = {"report.json.tmp.Ab12Cd", "report.html.tmp.zzzzzz", "junit.xml.tmp.000000"};
    char p[512];
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", base, left[i]);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/notes.tmp.Ab12Cd", base); /* not ours: kept */
    fclose(fopen(p, "w"));
    const char *args[] = {"--quick", "--output-dir", base, NULL};
    cli_result r;
    cli_run(&r, args, NULL);
    assert_true(r.exit_code == 0 || r.exit_code == 1);
    for (int i = 0; i < 3; i++)
        if (exists(left[i]))
            fail_msg("%s is still there", left[i]);
    assert_true(exists("notes.tmp.Ab12Cd"));
    assert_non_null(strstr(aitk_str_cstr(&r.err), "removed 3 unfinished file(s)") ||
                    strstr(aitk_str_cstr(&r.err), "removed 1 unfinished file(s)"));
    cli_free(&r);
}

static int setup(void **state)
{
    (void)state;
    return cli_scratch_make(base);
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_run_refused),
        cmocka_unit_test(test_leftovers_removed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
