/* A run refused before it starts (exit 2) leaves nothing behind: the output
 * folders it would have written into are not created, or are removed again
 * when they were created before the refusal. A folder that existed before
 * is kept, and so is anything put in a created one. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "tests/validate/cli_run.h"
#include "tests/test_time.h"

static char base[] = "/tmp/aitk-refusal-XXXXXX";

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

static int exists(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    struct stat sb;
    return stat(p, &sb) == 0;
}

static void write_file(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A config with an unterminated quote is refused after the output folders
 * were prepared: a/b/c must not stay behind. */
static void test_bad_config(void **state)
{
    (void)state;
    write_file("bad.yaml", "job: extension\nconfig:\n  name: \"unterminated\n");
    char out[512], cfg[512];
    snprintf(out, sizeof out, "%s/a/b/c", base);
    snprintf(cfg, sizeof cfg, "%s/bad.yaml", base);
    const char *args[] = {"--quick", "--output-dir", out, "--config", cfg, NULL};
    cli_result r;
    cli_run(&r, args, NULL);
    assert_int_equal(r.exit_code, 2);
    assert_false(exists("a"));
    cli_free(&r);
}

/* An output that would replace another is refused: the new folders go, the
 * folder that was there before stays. */
static void test_output_clash(void **state)
{
    (void)state;
    assert_int_equal(mkdir(strcat(strcpy((char[512]){0}, base), "/kept"), 0755), 0);
    char out[512], json[512];
    snprintf(out, sizeof out, "%s/kept/x/y", base);
    snprintf(json, sizeof json, "%s/kept/x/y/report.json", base);
    const char *args[] = {"--quick", "--output-dir", out, "--json", json, NULL};
    cli_result r;
    cli_run(&r, args, NULL);
    assert_int_equal(r.exit_code, 2);
    assert_true(exists("kept"));
    assert_false(exists("kept/x"));
    cli_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_output_clash),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
