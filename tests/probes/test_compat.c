/* The compatibility matrix: malformed compat.yaml files are refused with
 * file:line:column (exit 2), and the table helpers the rules use answer as
 * FACTS.md says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proc.h"
#include "common/str.h"
#include "probe_test.h"
#include "validate/compat.h"
#include "validate/probes/cuda_stack.h"
#include "validate/probes/rules.h"

/* Runs the binary on a compat.yaml written by the test; returns stderr. */
static char *run_with_matrix(const char *yaml, const char *profile, int *exit_code)
{
    char *dir = pt_tempdir("matrix");
    pt_write(dir, "validate/compat.yaml", yaml);
    char data[700];
    snprintf(data, sizeof data, "AITK_DATA_DIR=%s", dir);
    const char *env[] = {data, "PATH=/usr/bin:/bin", NULL};
    const char *argv[] = {AITK_EXE, "--quick", "--profile", profile, NULL};
    aitk_proc_opts o = {.timeout_ms = 30000, .env = env};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    assert_int_equal(aitk_proc_run(argv, &o, &r, &out, &err, NULL), AITK_OK);
    *exit_code = r.exit_code;
    aitk_str_free(&out);
    free(dir);
    return aitk_str_steal(&err);
}

static const char head[] = "schema: 1\n"
                           "default_profile: p\n"
                           "tables:\n"
                           "  torch_python:\n";

static void test_unknown_key_in_table_row(void **state)
{
    (void)state;
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%s"
             "    \"2.7\": {value: \"3.9-3.13\", source: \"x\", sevrity: warn}\n"
             "profiles:\n  p: {title: t}\n", head);
    int rc = 0;
    char *err = run_with_matrix(yaml, "p", &rc);
    assert_int_equal(rc, 2);
    pt_assert_contains(err, "validate/compat.yaml:5:45: unknown key 'sevrity'");
    free(err);
}

static void test_bad_severity(void **state)
{
    (void)state;
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%s"
             "    \"2.7\": {value: \"3.9-3.13\", source: \"x\"}\n"
             "profiles:\n"
             "  p:\n"
             "    python:\n"
             "      min_version: {value: \"3.10\", source: \"y\", severity: maybe}\n", head);
    int rc = 0;
    char *err = run_with_matrix(yaml, "p", &rc);
    assert_int_equal(rc, 2);
    pt_assert_contains(err, "validate/compat.yaml:9:");
    pt_assert_contains(err, "severity must be 'warn' or 'fail', found 'maybe'");
    free(err);
}

static void test_row_without_source(void **state)
{
    (void)state;
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%s"
             "    \"2.7\": {value: \"3.9-3.13\"}\n"
             "profiles:\n  p: {title: t}\n", head);
    int rc = 0;
    char *err = run_with_matrix(yaml, "p", &rc);
    assert_int_equal(rc, 2);
    pt_assert_contains(err, "validate/compat.yaml:5:");
    pt_assert_contains(err, "rule '2.7' has no source");
    free(err);
}

static void test_row_not_a_map(void **state)
{
    (void)state;
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%s"
             "    \"2.7\": \"3.9-3.13\"\n"
             "profiles:\n  p: {title: t}\n", head);
    int rc = 0;
    char *err = run_with_matrix(yaml, "p", &rc);
    assert_int_equal(rc, 2);
    pt_assert_contains(err, "validate/compat.yaml:5:12:");
    free(err);
}

/* Another format version, a word, or none: refused at the key (exit 2), not
 * read as if it were version 1. */
static void test_schema_version(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *expect;
    } cases[] = {
        {"schema: 2\ndefault_profile: p\nprofiles:\n  p: {title: t}\n",
         "validate/compat.yaml:1:9: schema 2 is not supported (this build reads schema 1)"},
        {"schema: one\ndefault_profile: p\nprofiles:\n  p: {title: t}\n",
         "validate/compat.yaml:1:9: schema one is not supported (this build reads schema 1)"},
        {"default_profile: p\nprofiles:\n  p: {title: t}\n",
         "validate/compat.yaml:1:1: no 'schema' (this build reads schema 1)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = 0;
        char *err = run_with_matrix(cases[i].yaml, "p", &rc);
        assert_int_equal(rc, 2);
        pt_assert_contains(err, cases[i].expect);
        free(err);
    }
}

/* The shipped matrix loads in every profile and its tables say what
 * FACTS.md sections 1-3 say. */
static void test_shipped_matrix_rows(void **state)
{
    (void)state;
    const char *profiles[] = {"ai-toolkit-current", "seed-guide"};
    for (int i = 0; i < 2; i++) {
        aitk_compat *c = NULL;
        aitk_str err = AITK_STR_INIT;
        if (aitk_compat_load(profiles[i], &c, &err))
            fail_msg("%s", aitk_str_cstr(&err));
        assert_string_equal(aitk_compat_rule_text(aitk_compat_table_row(c, "driver_min_linux", "12.8")),
                            "570.26");
        assert_string_equal(aitk_compat_rule_text(aitk_compat_table_row(c, "driver_min_windows", "12.8")),
                            "570.65");
        assert_string_equal(aitk_compat_rule_text(aitk_compat_table_row(c, "torch_python", "2.9")),
                            "3.10-3.14");
        assert_int_equal(aitk_compat_rule_severity(aitk_compat_rule(c, "python", "min_version")),
                         i == 0 ? AITK_CHECK_FAIL : AITK_CHECK_WARN);
        aitk_compat_free(c);
        aitk_str_free(&err);
    }
}

static void test_arch_support(void **state)
{
    (void)state;
    const char *cu126 = "50 60 70 75 80 86 90";
    assert_int_equal(aitk_rules_arch_supports(cu126, 89), 2);  /* sm_86 cubins run on 8.9 */
    assert_int_equal(aitk_rules_arch_supports(cu126, 120), 0); /* RTX 50: no kernel image */
    assert_int_equal(aitk_rules_arch_supports(cu126, 37), 0);
    const char *cu128 = "75 80 86 90 100 120 +PTX";
    assert_int_equal(aitk_rules_arch_supports(cu128, 120), 2);
    assert_int_equal(aitk_rules_arch_supports(cu128, 121), 2);
    assert_int_equal(aitk_rules_arch_supports(cu128, 130), 1); /* PTX JIT only */
    assert_int_equal(aitk_rules_arch_supports(cu128, 70), 0);
    assert_int_equal(aitk_rules_arch_supports("sm_80 sm_90 compute_90", 100), 1);
    assert_int_equal(aitk_rules_arch_supports("sm_80 sm_90a", 90), 2);
    assert_int_equal(aitk_rules_arch_supports("", 80), 0);
    assert_int_equal(aitk_rules_arch_supports("garbage words", 80), 0);
}

static void test_header_define(void **state)
{
    (void)state;
    const char *h = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR   19\n"
                    "#define CUDNN_MAJOR_X 7\n#  define CUDART_VERSION (13000)\n";
    assert_int_equal(aitk_header_define(h, "CUDNN_MAJOR"), 9);
    assert_int_equal(aitk_header_define(h, "CUDNN_MINOR"), 19);
    assert_int_equal(aitk_header_define(h, "CUDNN_PATCHLEVEL"), -1);
    assert_int_equal(aitk_header_define(h, "CUDART_VERSION"), -1); /* "#  define" is not matched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_key_in_table_row),
        cmocka_unit_test(test_bad_severity),
        cmocka_unit_test(test_row_without_source),
        cmocka_unit_test(test_row_not_a_map),
        cmocka_unit_test(test_schema_version),
        cmocka_unit_test(test_shipped_matrix_rows),
        cmocka_unit_test(test_arch_support),
        cmocka_unit_test(test_header_define),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
