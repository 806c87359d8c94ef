/* Every error line on stderr is one line with no control character, whatever
 * hostile text an input carries: a profile name, a file name, a report's
 * created_at, a config key. Each case runs the real binary on an input
 * holding an OSC title write, a bell, a screen clear and a newline. The
 * lines on stdout that name the report files are held to the same rule. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/validate/cli_run.h"
#include "tests/test_time.h"

#define HOSTILE "\x1b]0;pwned\x07\x1b[2J\nforged: line"

static char base[] = "/tmp/aitk-stderr-XXXXXX";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Exit 2, and stderr holds only aitk-validate's own lines, in printable
 * text, with the hostile text shown escaped. */
static void expect_plain_refusal(const char *what, const char *const *args)
{
    cli_result r;
    cli_run(&r, args, NULL);
    const char *e = aitk_str_cstr(&r.err);
    if (r.exit_code != 2)
        fail_msg("%s: exit %d, stderr: %s", what, r.exit_code, e);
    for (const unsigned char *p = (const unsigned char *)e; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
            fail_msg("%s: raw control byte 0x%02x on stderr", what, *p);
    /* Every line is one of ours: none was forged by a newline in the input. */
    if (!*e || e[strlen(e) - 1] != '\n')
        fail_msg("%s: stderr does not end a line: %s", what, e);
    for (const char *line = e; *line; line = strchr(line, '\n') + 1)
        if (strncmp(line, "aitk-validate: ", 15) != 0)
            fail_msg("%s: a line not of aitk-validate's on stderr: %s", what, line);
    if (!strstr(e, "\\x1b"))
        fail_msg("%s: the hostile text is not shown escaped: %s", what, e);
    cli_free(&r);
}

static void test_profile_name(void **state)
{
    (void)state;
    const char *args[] = {"--quick", "--profile", HOSTILE, NULL};
    expect_plain_refusal("--profile", args);
}

static void test_report_file_name(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/" HOSTILE ".json", base);
    const char *args[] = {"render", path, NULL};
    expect_plain_refusal("render of a missing file", args);
}

static void test_trend_created_at(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/r.json", base);
    write_file(path, "{\"schema_version\": \"1.0\", \"created_at\": \"\\u001b]0;pwned\\u0007\\u001b[2J\\n"
                     "forged\", \"checks\": [], \"summary\": {\"verdict\": \"pass\", \"counts\": {}}}\n");
    const char *args[] = {"trend", path, NULL};
    expect_plain_refusal("trend created_at", args);
}

static void test_config_key(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/c.yaml", base);
    write_file(path, "job: extension\nconfig:\n  process:\n    - type: sd_trainer\n"
                     "      model:\n        \"\\e]0;pwned\\a\\e[2J\\nforged\": 1\n"
                     "        name_or_path: black-forest-labs/FLUX.1-dev\n        is_flux: true\n"
                     "      train: {optimizer: \"\\e[2Jbanana\"}\n      network: {type: lora, linear: 16}\n");
    const char *args[] = {"predict", "--config", path, "--gpu", "4090", NULL};
    expect_plain_refusal("predict --config", args);
}

/* The lines on stdout that say where the reports went name the folder the
 * user gave: its control characters are shown escaped there too, and its
 * newline forges no line of its own ("Report: od<ESC>]0;..." retitled the
 * window). */
static void test_output_folder_named_on_stdout(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/" HOSTILE, base);
    const char *args[] = {"--quick", "--output-dir", dir, NULL};
    cli_result r;
    cli_run(&r, args, NULL);
    const char *o = aitk_str_cstr(&r.out);
    if (r.exit_code != 0 && r.exit_code != 1)
        fail_msg("exit %d, stderr: %s", r.exit_code, aitk_str_cstr(&r.err));
    for (const unsigned char *p = (const unsigned char *)o; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
            fail_msg("raw control byte 0x%02x on stdout", *p);
    for (const char *line = o; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "")
        if (strncmp(line, "forged: line", 12) == 0)
            fail_msg("a line forged by the folder's name on stdout");
    assert_non_null(strstr(o, "Report: "));
    assert_non_null(strstr(o, "\\x1b]0;pwned"));
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
        cmocka_unit_test(test_profile_name),
        cmocka_unit_test(test_report_file_name),
        cmocka_unit_test(test_trend_created_at),
        cmocka_unit_test(test_config_key),
        cmocka_unit_test(test_output_folder_named_on_stdout),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
