/* Markdown for an issue body: failures first with remedies, then warnings,
 * table cells that cannot break the table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <string.h>

#include "reports/markdown.h"
#include "reports/report.h"
#include "tests/reports/gemm_in_step_fixture.h"

static void test_failures_first_with_remedies(void **state)
{
    (void)state;
    aitk_report_meta m = {"1.2.3", "abc", "standard", "seed-guide", "validate", false};
    cJSON *r = aitk_report_new(&m);
    aitk_check pass = {.id = "a.ok", .category = "a", .title = "Fine thing", .status = AITK_CHECK_PASS,
                       .observed = "x|y"};
    aitk_check warn = {.id = "a.warn", .category = "a", .title = "Warned thing",
                       .status = AITK_CHECK_WARN, .remedy = "REMEDY-W"};
    aitk_check fail = {.id = "gpu.nvml", .category = "gpu", .title = "NVML", .status = AITK_CHECK_FAIL,
                       .observed = "libnvidia-ml.so.1: cannot open", .expected = "loadable",
                       .message = "no driver", .remedy = "REMEDY-F", .source = "SRC"};
    aitk_report_add_check(r, &pass);
    aitk_report_add_check(r, &warn);
    aitk_report_add_check(r, &fail);
    aitk_report_finish(r, NULL);
    aitk_str md = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    const char *t = aitk_str_cstr(&md);
    assert_non_null(strstr(t, "## aitk-validate: FAIL"));
    assert_non_null(strstr(t, "1 failed · 1 warning · 1 passed · 0 skipped"));
    assert_non_null(strstr(t, "profile seed-guide"));
    const char *failed = strstr(t, "### Failed");
    const char *warned = strstr(t, "### Warnings");
    const char *table = strstr(t, "| status | check |");
    assert_non_null(failed);
    assert_non_null(warned);
    assert_non_null(table);
    assert_true(failed < warned && warned < table); /* failures first */
    assert_true(strstr(t, "REMEDY-F") < warned);
    assert_non_null(strstr(t, "**fix:** REMEDY-F"));
    assert_non_null(strstr(t, "source: SRC"));
    assert_non_null(strstr(t, "observed: libnvidia-ml.so.1: cannot open; expected: loadable"));
    assert_non_null(strstr(t, "x\\|y")); /* a pipe cannot split a table cell */
    assert_null(strstr(t, "### Skipped"));
    aitk_str_free(&md);
    cJSON_Delete(r);
}

static void test_clean_report_has_no_failure_section(void **state)
{
    (void)state;
    aitk_report_meta m = {"1.2.3", "abc", "quick", "p", "validate", false};
    cJSON *r = aitk_report_new(&m);
    aitk_check pass = {.id = "a.ok", .category = "a", .status = AITK_CHECK_PASS};
    aitk_report_add_check(r, &pass);
    aitk_report_finish(r, NULL);
    aitk_str md = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    assert_non_null(strstr(md.ptr, "## aitk-validate: PASS\n"));
    assert_null(strstr(md.ptr, "### Failed"));
    assert_null(strstr(md.ptr, "### Warnings"));
    aitk_str_free(&md);
    cJSON_Delete(r);
    /* Not a report at all: refused, not crashed on. */
    cJSON *junk = cJSON_CreateObject();
    assert_int_equal(aitk_render_markdown(junk, &md), AITK_E_INVAL);
    cJSON_Delete(junk);
    aitk_str_free(&md);
}

static void test_workloads_table(void **state)
{
    (void)state;
    aitk_report_meta m = {"1.2.3", "abc", "full", "p", "validate", false};
    cJSON *r = aitk_report_new(&m);
    aitk_report_finish(r, NULL);
    const char *wl = "[{\"name\":\"flux1-dev\",\"status\":\"completed\",\"backend\":\"cpu\","
                     "\"step_time_s\":{\"median\":0.0211},"
                     "\"time_per_1000_steps\":{\"measured_s\":25.47,\"extrapolated\":false},"
                     "\"memory\":{\"peak_bytes\":5368709120}},"
                     "{\"name\":\"chroma\",\"status\":\"completed\",\"backend\":\"cuda\","
                     "\"step_time_s\":{\"median\":8.1,\"mean\":8.12,\"ci95_low\":8.05,"
                     "\"ci95_high\":8.19,\"interval_of\":\"mean\"},"
                     "\"kernels\":[{\"op\":\"attention_forward\",\"kernel\":\"cuDNN 9.14.0 fused "
                     "SDPA\",\"calls\":570},{\"op\":\"gemm\",\"kernel\":\"a|b\",\"calls\":9}],"
                     "\"time_per_1000_steps\":{\"measured_s\":8100,\"extrapolated\":true,"
                     "\"from_steps\":40,\"error_pct\":0.9,\"target_s\":7200},"
                     "\"memory\":{\"peak_bytes\":3145728}}]";
    cJSON_AddItemToObject(r, "workloads", cJSON_Parse(wl));
    aitk_str md = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    const char *t = aitk_str_cstr(&md);
    assert_non_null(strstr(t, "### Workloads"));
    assert_non_null(strstr(t, "| median step | mean step (95% CI of the mean) | 1000 steps |"));
    assert_non_null(strstr(t, "| flux1-dev | completed | cpu (CPU figures, small configuration) | "
                              "0.0211 s |  | 25.5 s | 5.00 GiB |"));
    assert_non_null(strstr(t, "| chroma | completed | cuda | 8.1 s | 8.12 s (8.05–8.19) | 2 h 15 min "
                              "(extrapolated from 40 steps, ±0.9%); target 2 h 00 min | 3.0 MiB |"));
    /* The kernels that ran, per workload that says; table pipes escaped. */
    assert_non_null(strstr(t, "\nKernels that ran:\n\n- chroma: attention_forward → cuDNN 9.14.0 "
                              "fused SDPA (570 calls); gemm → a\\|b (9 calls)\n"));
    assert_null(strstr(t, "- flux1-dev:"));
    aitk_str_free(&md);
    cJSON_Delete(r);
}

/* cuBLASLt's entries of one op, one per GEMM shape, are summed in the
 * Markdown (the H200's FLUX step listed 74 shapes and made the summary for
 * an issue 57 KB); other kernels and a lone shape keep their full text. */
static void test_kernels_grouped(void **state)
{
    (void)state;
    aitk_report_meta m = {"1.2.3", "abc", "full", "p", "validate", false};
    cJSON *r = aitk_report_new(&m);
    aitk_report_finish(r, NULL);
    const char *wl =
        "[{\"name\":\"flux1-dev\",\"status\":\"completed\",\"backend\":\"cuda\","
        "\"kernels\":[{\"op\":\"lora_linear_forward\",\"kernel\":\"cuBLASLt [m=1 n=2] algo 6\","
        "\"calls\":3},{\"op\":\"rope_forward\",\"kernel\":\"pair rotation kernel\",\"calls\":5},"
        "{\"op\":\"lora_linear_forward\",\"kernel\":\"cuBLASLt [m=4 n=8] algo 7\",\"calls\":4},"
        "{\"op\":\"lora_linear_backward\",\"kernel\":\"cuBLASLt [m=4 n=8] algo 7\","
        "\"calls\":2}]}]";
    cJSON_AddItemToObject(r, "workloads", cJSON_Parse(wl));
    aitk_str md = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    const char *t = aitk_str_cstr(&md);
    const char *want = "- flux1-dev: lora_linear_forward → cuBLASLt (2 shapes, 7 calls); "
                       "rope_forward → pair rotation kernel (5 calls); lora_linear_backward → "
                       "cuBLASLt \\[m=4 n=8] algo 7 (2 calls)\n";
    if (!strstr(t, want))
        fail_msg("no '%s' in:\n%s", want, t);
    aitk_str_free(&md);
    cJSON_Delete(r);
}

/* The step's GEMMs against the same GEMMs alone, per workload that has
 * them: the ratio, its verdict and target, then the slowest problems (the
 * one never timed alone says so); a workload that was not measured says
 * how to measure it; one without the field (the CPU's) is not listed. */
static void test_gemm_in_step(void **state)
{
    (void)state;
    aitk_report_meta m = {"1.2.3", "abc", "standard", "p", "validate", false};
    cJSON *r = aitk_report_new(&m);
    aitk_report_finish(r, NULL);
    const char *wl = GEMM_IN_STEP_WORKLOADS;
    cJSON_AddItemToObject(r, "workloads", cJSON_Parse(wl));
    aitk_str md = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    const char *t = aitk_str_cstr(&md);
    assert_non_null(strstr(
        t, "\nGEMMs inside the step against the same GEMMs alone:\n\n"
           "- flux1-dev: warn, 84% of the isolated rate (target 85%); 110 ms of GEMMs at 0.847 "
           "TFLOP/s; problems timed alone cover 97% of the GEMM FLOPs (a &lt;note>)\n"
           "  - m=1000 n=2000 k=500: 40 calls, 80 ms, 1 TFLOP/s in the step, 1.25 alone (80%)\n"
           "  - m=16 n=1000 k=1000: 100 calls, 10 ms, 0.32 TFLOP/s in the step, not timed "
           "alone\n"
           "- chroma: skip (not measured: set AITK_TIME_OPS=1 (op timing adds CUDA events "
           "around every op))\n"));
    assert_null(strstr(t, "- omnigen2:"));
    aitk_str_free(&md);
    cJSON_Delete(r);
}

/* Inline text from a probe: table pipes escaped, control sequences (ESC,
 * BEL, the C1 CSI) shown as text, never raw bytes a terminal would act on. */
static void test_inline_is_inert(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT;
    aitk_markdown_inline(&out, "a|b\x1b]0;T\x07" "c\xc2\x9b" "1m\tend");
    assert_string_equal(aitk_str_cstr(&out), "a\\|b\\x1b]0;T\\x07c\\u009b1m\tend");
    aitk_str_free(&out);
}

/* A code span whatever the text holds: a fence longer than any backtick run
 * inside, a space beside a backtick at either end (CommonMark 0.29, 6.1),
 * and in a table cell the pipe escaped; outside one it is only a pipe. */
static void test_code_span_fences(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool cell;
        const char *want;
    } spans[] = {
        {"gpu.nvml", false, "`gpu.nvml`"}, {"a``b", false, "```a``b```"},
        {"`x", false, "`` `x ``"},         {"a|b", false, "`a|b`"},
        {"a|b", true, "`a\\|b`"},          {"", true, ""},
    };
    aitk_str out = AITK_STR_INIT;
    for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
        aitk_str_clear(&out);
        aitk_markdown_code(&out, spans[i].text, spans[i].cell);
        assert_string_equal(aitk_str_cstr(&out), spans[i].want);
    }
    aitk_str_clear(&out);
    /* Text: a paired run is a code span left as it is, an unpaired backtick
     * is escaped, and so are the characters that would be markup. */
    aitk_markdown_inline(&out, "run `a | <b>` then ` alone; __init__ *.dll [x](y) ~1 &amp; "
                               "C:\\Users\\_C");
    assert_string_equal(aitk_str_cstr(&out), "run `a | <b>` then \\` alone; \\_\\_init\\_\\_ "
                                             "\\*.dll \\[x](y) \\~1 \\&amp; C:\\Users\\\\\\_C");
    aitk_str_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failures_first_with_remedies),
        cmocka_unit_test(test_clean_report_has_no_failure_section),
        cmocka_unit_test(test_workloads_table), cmocka_unit_test(test_inline_is_inert),
        cmocka_unit_test(test_gemm_in_step), cmocka_unit_test(test_kernels_grouped),
        cmocka_unit_test(test_code_span_fences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
