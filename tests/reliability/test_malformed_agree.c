/* render, compare and trend read the same malformed reports and must agree:
 * each file of tests/reliability/corpus is refused by all three (exit 2,
 * one plain line naming the file) or, for the few named ok-*, which hold
 * damage every reader repairs the same way, accepted by all three.
 *
 * They once disagreed: trend passed a median of -2.3 that compare refused,
 * and compare and trend read a verdict of "maybe", a created_at of 17, a
 * step time of 0 and a name cut short by a NUL that render refused or
 * would have shown wrong. The corpus is written by gen_corpus.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/exe_run.h"

#define CORPUS AITK_SOURCE_DIR "/tests/reliability/corpus"
#define GOOD AITK_SOURCE_DIR "/tests/reports/fixtures/synthetic-report.json"

static char md_out[] = "/tmp/aitk-agree-XXXXXX";

/* Accepted (0 or 1: compare's "regression" is an answer about a report it
 * read) or refused (2) with one plain line of aitk-validate's naming `file`. */
static bool accepted(const char *what, const char *file, const char *const *args)
{
    ran r = run(args);
    const char *e = aitk_str_cstr(&r.err);
    if (r.rc != 0 && r.rc != 1 && r.rc != 2)
        fail_msg("%s: exit %d; stderr: %s", what, r.rc, e);
    if (r.rc == 2) {
        const char *nl = strchr(e, '\n');
        if (strncmp(e, "aitk-validate: error: ", 22) != 0 || !nl || nl[1])
            fail_msg("%s: the refusal is not one line of aitk-validate's: %s", what, e);
        for (const unsigned char *p = (const unsigned char *)e; *p; p++)
            if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
                fail_msg("%s: raw control byte 0x%02x on stderr", what, *p);
        const char *base = strrchr(file, '/');
        if (!strstr(e, base ? base + 1 : file))
            fail_msg("%s: the refusal does not name the file: %s", what, e);
    }
    bool ok = r.rc != 2;
    ran_free(&r);
    return ok;
}

/* The four readings of one file; fails unless they agree with `expect`. */
static void expect_all(const char *file, bool expect)
{
    const char *render[] = {"render", file, "--markdown", md_out, NULL};
    const char *as_new[] = {"compare", GOOD, file, NULL};
    const char *as_base[] = {"compare", file, GOOD, NULL};
    const char *trend[] = {"trend", file, NULL};
    const bool got[4] = {accepted("render", file, render), accepted("compare (new)", file, as_new),
                         accepted("compare (base)", file, as_base),
                         accepted("trend", file, trend)};
    for (int i = 0; i < 4; i++)
        if (got[i] != expect)
            fail_msg("%s: render %s, compare-as-new %s, compare-as-base %s, trend %s "
                     "(all should %s)",
                     file, got[0] ? "accepts" : "refuses", got[1] ? "accepts" : "refuses",
                     got[2] ? "accepts" : "refuses", got[3] ? "accepts" : "refuses",
                     expect ? "accept" : "refuse");
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_good_report_accepted(void **state)
{
    (void)state;
    expect_all(GOOD, true);
}

static void test_corpus_agrees(void **state)
{
    (void)state;
    DIR *d = opendir(CORPUS);
    assert_non_null(d);
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;)
        if (strstr(e->d_name, ".json"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    /* The issue asks for at least 30 malformed reports. */
    size_t refused = 0;
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", CORPUS, names[i]);
        const bool ok = strncmp(names[i], "ok-", 3) == 0;
        expect_all(path, ok);
        refused += !ok;
        free(names[i]);
    }
    print_message("%zu reports, %zu refused by all three readers\n", n, refused);
    assert_true(refused >= 30);
}

int main(void)
{
    int fd = mkstemp(md_out);
    if (fd < 0)
        return 1;
    close(fd);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_good_report_accepted),
                                       cmocka_unit_test(test_corpus_agrees)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    remove(md_out);
    return rc;
}
