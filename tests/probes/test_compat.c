/* The compatibility matrix: malformed compat.yaml files are refused with
 * file:line:column (exit 2), and the table helpers the rules use answer as
 * their public sources say. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proc.h"
#include "common/str.h"
#include "tests/proc_start.h"
#include "probe_test.h"
#include "validate/compat.h"
#include "validate/probes/cuda_stack.h"
#include "validate/probes/rules.h"
#include "tests/test_time.h"

/* Runs the binary on a compat.yaml written by the test; returns stderr. */
static char *run_with_matrix(const char *yaml, const char *profile, int *exit_code)
{
    char *dir = pt_tempdir("matrix");
    pt_write(dir, "validate/compat.yaml", yaml);
    char data[700];
    snprintf(data, sizeof data, "AITK_DATA_DIR=%s", dir);
    const char *env[] = {data, "PATH=/usr/bin:/bin", NULL};
    const char *argv[] = {AITK_EXE, "--quick", "--profile", profile, NULL};
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(30000), .env = env};
    aitk_proc_result r;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    assert_int_equal(aitk_test_proc_run(argv, &o, &r, &out, &err, NULL), AITK_OK);
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

/* Loads a compat.yaml written by the test in this process; returns the
 * status and the message in *err. */
static aitk_status load_matrix(const char *yaml, aitk_str *err)
{
    char *dir = pt_tempdir("matrix");
    pt_write(dir, "validate/compat.yaml", yaml);
    setenv("AITK_DATA_DIR", dir, 1);
    aitk_compat *c = NULL;
    aitk_status st = aitk_compat_load(NULL, &c, err);
    unsetenv("AITK_DATA_DIR");
    aitk_compat_free(c);
    free(dir);
    return st;
}

/* A profile p with one rule, on line 6. */
#define PROFILE(section, rule) \
    "schema: 1\ndefault_profile: p\nprofiles:\n  p:\n    " section ":\n      " rule "\n"
/* A table with one row, on line 5. */
#define TABLE(name, row) \
    "schema: 1\ndefault_profile: p\ntables:\n  " name ":\n    " row "\nprofiles:\n  p: {title: t}\n"

/* Each rule's value is checked by what the probe that reads it needs, when
 * the file loads: a value it cannot read would otherwise become a PASS
 * (min_glibc: banana compared as version 0; min_version: "3" was skipped as
 * a bound) or a false SKIP ("the profile states no model-cache size"). */
static void test_rule_values(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *expect;
    } cases[] = {
        {PROFILE("host", "min_glibc: {value: banana, source: s}"),
         "validate/compat.yaml:6:26: min_glibc must be a version like 2.17 (numbers and dots), "
         "found 'banana'"},
        {PROFILE("host", "min_glibc: {value: \"2\", source: s}"),
         "validate/compat.yaml:6:26: min_glibc must be a version like 2.17 (numbers and dots), "
         "found '2'"},
        {PROFILE("host", "min_glibc: {value: 2.17abc, source: s}"),
         "validate/compat.yaml:6:26: min_glibc must be a version like 2.17 (numbers and dots), "
         "found '2.17abc'"},
        {PROFILE("host", "min_glibc: {value: 2.99999999999, source: s}"),
         "found '2.99999999999'"},
        {PROFILE("host", "model_cache_free_gb: {value: abc, source: s}"),
         "validate/compat.yaml:6:36: model_cache_free_gb must be a number of GB like 34, above 0 "
         "and at most 100000, found 'abc'"},
        {PROFILE("host", "model_cache_free_gb: {value: -34, source: s}"),
         "validate/compat.yaml:6:36: model_cache_free_gb must be a number of GB like 34, above 0 "
         "and at most 100000, found '-34'"},
        {PROFILE("host", "model_cache_free_gb: {value: 0, source: s}"), "found '0'"},
        /* Quoted, the probe's aitk_yaml_double would refuse it and SKIP the check. */
        {PROFILE("host", "model_cache_free_gb: {value: \"34\", source: s}"),
         "validate/compat.yaml:6:36: model_cache_free_gb must be a number without quotes, "
         "found \"34\""},
        {PROFILE("host", "model_cache_free_gb: {value: 1e309, source: s}"), "found '1e309'"},
        {PROFILE("host", "model_cache_free_gb: {value: 200000, source: s}"), "found '200000'"},
        {PROFILE("host", "model_cache_free_gb: {value: [1, 2], source: s}"),
         "validate/compat.yaml:6:36: model_cache_free_gb must be a number of GB like 34, above 0 "
         "and at most 100000, found a list"},
        {PROFILE("host", "min_windows_build: {value: 10.5, source: s}"),
         "validate/compat.yaml:6:34: min_windows_build must be a Windows build number like "
         "19042 (1 to 99999), found '10.5'"},
        {PROFILE("python", "min_version: {value: \"3\", source: s}"),
         "validate/compat.yaml:6:28: min_version must be a major.minor version like 3.10, "
         "found '3'"},
        {PROFILE("python", "max_version: {value: 3.x, source: s}"),
         "validate/compat.yaml:6:28: max_version must be a major.minor version like 3.12, "
         "found '3.x'"},
        {PROFILE("python", "max_version: {value: 3.10.1, source: s}"), "found '3.10.1'"},
        {PROFILE("cuda", "torch_pin: {value: latest, source: s}"),
         "validate/compat.yaml:6:26: torch_pin must be a torch version like 2.13.0+cu130, found "
         "'latest'"},
        {PROFILE("cuda", "torch_pin: {value: 2.13.0+, source: s}"), "found '2.13.0+'"},
        {PROFILE("cuda", "min_torch_cuda: {value: eleven, source: s}"),
         "validate/compat.yaml:6:31: min_torch_cuda must be a major.minor version like 11.8, "
         "found 'eleven'"},
        {PROFILE("workload_vram_gb", "flux1-dev: {value: 24GB, source: s}"),
         "validate/compat.yaml:6:26: flux1-dev must be a number of GB like 24, above 0 and at "
         "most 100000, found '24GB'"},
        /* A rule no probe reads is a typo: its check would be a silent SKIP. */
        {PROFILE("host", "min_glibcc: {value: \"2.17\", source: s}"),
         "validate/compat.yaml:6:7: unknown rule 'min_glibcc' in section 'host' (known: "
         "min_glibc, min_windows_build, model_cache_free_gb)"},
        {PROFILE("hots", "min_glibc: {value: \"2.17\", source: s}"),
         "validate/compat.yaml:5:5: unknown section 'hots' in a profile (known: host, python, "
         "cuda, workload_vram_gb, title, source)"},
        {PROFILE("host", "min_glibc: {value: \"2.17\", source: [a, b]}"),
         "validate/compat.yaml:6:42: source must be a value, found a list"},
        /* Tables. */
        {TABLE("driver_min_linux", "\"12.8\": {value: new, source: s}"),
         "validate/compat.yaml:5:21: 12.8 must be a version like 570.26 (numbers and dots), "
         "found 'new'"},
        {TABLE("driver_min_linux", "\"12.08\": {value: \"570.26\", source: s}"),
         "validate/compat.yaml:5:5: a row of driver_min_linux must be keyed by a major.minor "
         "version like 12.8, found '12.08'"},
        {TABLE("driver_min_windows", "\"12\": {value: \"570.65\", source: s}"),
         "validate/compat.yaml:5:5: a row of driver_min_windows must be keyed by a major.minor "
         "version like 12.8, found '12'"},
        {TABLE("torch_python", "\"2.7\": {value: \"3.13-3.9\", source: s}"),
         "validate/compat.yaml:5:20: 2.7 must be a Python range like 3.9-3.13 (lowest first), "
         "found '3.13-3.9'"},
        {TABLE("torch_python", "\"2.7\": {value: \"3.9\", source: s}"), "found '3.9'"},
        {TABLE("torch_arch", "\"2.7/cu128\": {value: \"75 80 sm_90\", source: s}"),
         "validate/compat.yaml:5:26: 2.7/cu128 must be compute capabilities x 10 like '75 80 86 "
         "90 +PTX', separated by spaces, found '75 80 sm_90'"},
        {TABLE("torch_arch", "\"2.7/cu128\": {value: \"+PTX 75\", source: s}"),
         "found '+PTX 75'"},
        {TABLE("torch_arch", "\"2.7/cu128\": {value: \"\", source: s}"), "found ''"},
        {TABLE("torch_arch", "\"2.7\": {value: \"75 80\", source: s}"),
         "validate/compat.yaml:5:5: a row of torch_arch must be keyed by torch versions and a "
         "variant like 2.1-2.5/cu121 or 2.7/cu128, found '2.7'"},
        {TABLE("torch_arch", "\"2.5-2.1/cu121\": {value: \"75 80\", source: s}"),
         "found '2.5-2.1/cu121'"},
        {TABLE("torch_arch", "\"2.7/CU128\": {value: \"75 80\", source: s}"),
         "found '2.7/CU128'"},
        {TABLE("torch_companions", "\"2.7.0\": {value: {torchvision: latest}, source: s}"),
         "validate/compat.yaml:5:36: torchvision must be a version like 0.22.0 (numbers and "
         "dots), found 'latest'"},
        {TABLE("torch_companions", "\"2.7.0\": {value: \"0.22.0\", source: s}"),
         "validate/compat.yaml:5:22: 2.7.0 must be a map like {torchvision: \"0.22.0\", "
         "torchaudio: \"2.7.0\"}, found '0.22.0'"},
        {TABLE("torch_companions", "\"2.7.0\": {value: {torchvison: \"0.22.0\"}, source: s}"),
         "validate/compat.yaml:5:23: unknown key 'torchvison' in torch companions"},
        {TABLE("env_flags", "FOO: {value: \"\", source: s}"),
         "validate/compat.yaml:5:18: FOO must be text like set, found ''"},
        {TABLE("torch_pythn", "\"2.7\": {value: \"3.9-3.13\", source: s}"),
         "validate/compat.yaml:4:3: unknown table 'torch_pythn' (known: driver_min_linux, "
         "driver_min_windows, torch_arch, torch_python, torch_companions, env_flags)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aitk_str err = AITK_STR_INIT;
        aitk_status st = load_matrix(cases[i].yaml, &err);
        if (st != AITK_E_PARSE || !strstr(aitk_str_cstr(&err), cases[i].expect))
            fail_msg("case %zu: status %d, '%s' lacks '%s'", i, (int)st, aitk_str_cstr(&err),
                     cases[i].expect);
        aitk_str_free(&err);
    }
    /* The spellings the kinds allow, each at its edge. */
    static const char *const good[] = {
        PROFILE("host", "min_glibc: {value: \"2.17\", source: s}"),
        PROFILE("host", "min_glibc: {value: 2.17.1.2, source: s}"),
        PROFILE("host", "model_cache_free_gb: {value: 0.5, source: s}"),
        PROFILE("host", "model_cache_free_gb: {value: 100000, source: s}"),
        PROFILE("host", "min_windows_build: {value: 99999, source: s}"),
        PROFILE("cuda", "torch_pin: {value: \"2.13.0\", source: s}"),
        PROFILE("cuda", "torch_pin: {value: \"2.13.0+cu130.post1\", source: s}"),
        PROFILE("workload_vram_gb", "any-model: {value: 80, source: s, severity: warn}"),
        TABLE("torch_python", "\"2.7\": {value: \"3.9-3.9\", source: s}"),
        TABLE("torch_arch", "\"2.7/cu128\": {value: \" 75  120 +PTX \", source: s}"),
        TABLE("torch_arch", "\"2.1-2.5/cu121\": {value: \"50 60\", source: s}"),
        TABLE("driver_min_linux", "\"13.0\": {value: \"580.65.06\", source: s}"),
        TABLE("torch_companions", "\"2.7.0\": {value: {torchaudio: \"2.7.0\"}, source: s}"),
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        aitk_str err = AITK_STR_INIT;
        if (load_matrix(good[i], &err))
            fail_msg("good %zu refused: %s", i, aitk_str_cstr(&err));
        aitk_str_free(&err);
    }
}
#undef PROFILE
#undef TABLE

/* The reviewer's case end to end: min_glibc: banana stops --quick (exit 2)
 * instead of passing host.libc. */
static void test_bad_rule_value_exits_2(void **state)
{
    (void)state;
    int rc = 0;
    char *err = run_with_matrix("schema: 1\ndefault_profile: p\nprofiles:\n  p:\n    host:\n"
                                "      min_glibc: {value: banana, source: s}\n",
                                "p", &rc);
    assert_int_equal(rc, 2);
    pt_assert_contains(err, "validate/compat.yaml:6:26: min_glibc must be a version like 2.17");
    free(err);
}

/* The shipped matrix loads in every profile and its tables say what
 * the CUDA Toolkit Release Notes (Table 3), PyTorch's build_cuda.sh scripts
 * and RELEASE.md compatibility matrix say. */
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
        /* Read off PyPI's torch 2.15.0 wheels (their cp3XY tags; cuobjdump of
         * libtorch_cuda.so), not from this code. */
        assert_string_equal(aitk_compat_rule_text(aitk_compat_table_row(c, "torch_python", "2.15")),
                            "3.11-3.15");
        assert_string_equal(
            aitk_compat_rule_text(aitk_compat_table_row(c, "torch_arch", "2.15/cu132")),
            "75 80 86 90 100 120");
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
        cmocka_unit_test(test_rule_values),
        cmocka_unit_test(test_bad_rule_value_exits_2),
        cmocka_unit_test(test_shipped_matrix_rows),
        cmocka_unit_test(test_arch_support),
        cmocka_unit_test(test_header_define),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
