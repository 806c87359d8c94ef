/* compare: a planted 10% regression is caught and a 2% drift passes, at the
 * default 5% threshold, for workload step times, throughput, peak memory and
 * microbenchmarks; check status changes; metrics that vanished, changed unit
 * or moved off 0 fail the gate; report text is escaped in Markdown; the
 * threshold parser. The real binary's exit codes and the refusals are in
 * test_compare_cli.c. The variants are made here by setting literal values
 * on copies of the fixture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "compare_test_util.h"

static void test_identical(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    assert_int_equal(c.regressions, 0);
    /* 2 workloads x 7 metrics + 3 micro, no status rows. */
    assert_int_equal(c.count, 17);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void test_step_time(void **state)
{
    (void)state;
    cJSON *a = base_report();
    /* flux1-dev median 2.30 s: 2.53 is +10%, 2.346 is +2%. */
    static const double slower[] = {2.53, 2.346};
    for (int k = 0; k < 2; k++) {
        cJSON *b = base_report();
        set_num(obj_path(b, "workloads", 0, "step_time_s"), "median", slower[k]);
        aitk_compare c = {0};
        assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
        const aitk_compare_row *r = row(&c, "workload flux1-dev (cuda): median step time");
        assert_true(fabs(r->change.delta_pct - (k == 0 ? 10.0 : 2.0)) < 1e-9);
        assert_int_equal(r->change.regression, k == 0);
        assert_int_equal(c.regressions, k == 0 ? 1 : 0);
        aitk_compare_free(&c);
        cJSON_Delete(b);
    }
    cJSON_Delete(a);
}

static void test_higher_is_better(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    /* Throughput 0.4348 -> 0.39132 steps/s (-10%); peak memory +2%; GEMM 152.4 -> 137.16
     * TFLOP/s (-10%); attention 3.9 ms -> 3.51 ms (-10%, faster: an improvement). */
    set_num(obj_path(b, "workloads", 0, "throughput"), "steps_per_s", 0.39132);
    set_num(obj_path(b, "workloads", 1, "memory"), "peak_bytes", 37580963840.0 * 1.02);
    set_num(obj_path(b, "micro", 1, NULL), "value", 137.16);
    set_num(obj_path(b, "micro", 2, NULL), "value", 3.51);
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    assert_true(row(&c, "workload flux1-dev (cuda): steps/s")->change.regression);
    assert_false(row(&c, "workload chroma (cuda): peak memory")->change.regression);
    assert_true(row(&c, "micro gemm.bf16.flux_qkv")->change.regression);
    assert_false(row(&c, "micro attention.flux_joint")->change.regression);
    assert_true(row(&c, "micro attention.flux_joint")->change.improvement);
    assert_int_equal(c.regressions, 2);
    aitk_compare_free(&c);
    /* With a 15% threshold the same changes pass. */
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 15, &c, NULL), AITK_OK);
    assert_int_equal(c.regressions, 0);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void test_check_status(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    /* host.os pass -> fail is a regression; gpu.driver fail -> pass an improvement. */
    cJSON_ReplaceItemInObjectCaseSensitive(obj_path(b, "checks", 0, NULL), "status",
                                           cJSON_CreateString("fail"));
    cJSON_ReplaceItemInObjectCaseSensitive(obj_path(b, "checks", 2, NULL), "status",
                                           cJSON_CreateString("pass"));
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    assert_true(row(&c, "check host.os")->change.regression);
    assert_true(row(&c, "check gpu.driver")->change.improvement);
    assert_int_equal(c.regressions, 1);
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_compare_render(&c, AITK_COMPARE_MARKDOWN, &out), AITK_OK);
    assert_non_null(strstr(out.ptr, "| check host.os | pass | fail | changed | **REGRESSION** |"));
    aitk_str_clear(&out);
    assert_int_equal(aitk_compare_render(&c, AITK_COMPARE_HTML, &out), AITK_OK);
    assert_non_null(strstr(out.ptr, "<table id=\"compare\">"));
    aitk_str_clear(&out);
    assert_int_equal(aitk_compare_render(&c, AITK_COMPARE_TEXT, &out), AITK_OK);
    assert_non_null(strstr(out.ptr, "Result: REGRESSION (1 beyond 5.0%)"));
    aitk_str_free(&out);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void test_threshold_parse(void **state)
{
    (void)state;
    double v = -1;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_compare_parse_threshold("5%", &v, &err), AITK_OK);
    assert_true(v == 5);
    assert_int_equal(aitk_compare_parse_threshold("2.5", &v, &err), AITK_OK);
    assert_true(v == 2.5);
    static const char *const bad[] = {"", "%", "five", "5%%", "-1", "1001", "nan", "5 %"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        aitk_str_clear(&err);
        if (aitk_compare_parse_threshold(bad[i], &v, &err) != AITK_E_INVAL)
            fail_msg("'%s' accepted", bad[i]);
        assert_non_null(strstr(err.ptr, "--threshold"));
    }
    aitk_str_free(&err);
}

/* Each allocation fails in turn: NOMEM or the complete table; nothing
 * leaked (ASan). */
static void test_allocation_failures(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    cJSON_ReplaceItemInObjectCaseSensitive(obj_path(b, "checks", 0, NULL), "status",
                                           cJSON_CreateString("fail"));
    aitk_compare ref = {0};
    aitk_str want = AITK_STR_INIT;
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &ref, NULL), AITK_OK);
    assert_int_equal(aitk_compare_render(&ref, AITK_COMPARE_HTML, &want), AITK_OK);
    aitk_compare_free(&ref);
    int failures = 0, ok_in_a_row = 0;
    for (long n = 0; n < 20000 && ok_in_a_row < 20; n++) {
        aitk_compare c = {0};
        aitk_str out = AITK_STR_INIT;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL);
        if (!st)
            st = aitk_compare_render(&c, AITK_COMPARE_HTML, &out);
        aitk_alloc_fail_after(-1);
        assert_true(st == AITK_OK || st == AITK_E_NOMEM);
        if (st == AITK_OK) {
            ok_in_a_row++;
            assert_string_equal(aitk_str_cstr(&out), want.ptr);
        } else {
            ok_in_a_row = 0;
            failures++;
        }
        aitk_compare_free(&c);
        aitk_str_free(&out);
    }
    assert_true(failures > 0);
    assert_int_equal(ok_in_a_row, 20);
    aitk_str_free(&want);
    cJSON_Delete(a);
    cJSON_Delete(b);
}


static void test_vanished_micro(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    cJSON_ReplaceItemInObjectCaseSensitive(b, "micro", cJSON_CreateArray());
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    assert_true(row(&c, "micro memcpy.host")->change.regression);
    assert_true(row(&c, "micro gemm.bf16.flux_qkv")->change.regression);
    assert_true(row(&c, "micro attention.flux_joint")->change.regression);
    assert_int_equal(c.regressions, 3);
    aitk_str out = render(&c, AITK_COMPARE_TEXT);
    assert_non_null(strstr(out.ptr, "Result: REGRESSION"));
    aitk_str_free(&out);
    aitk_compare_free(&c);
    /* The other way round, a microbenchmark only NEW has is shown and passes. */
    assert_int_equal(aitk_compare_reports(b, NULL, a, NULL, 5, &c, NULL), AITK_OK);
    assert_false(row(&c, "micro memcpy.host")->change.regression);
    assert_int_equal(c.regressions, 0);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* A workload gone from NEW, or one of its metrics gone, is a regression. */
static void test_vanished_workload_and_metric(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(b, "workloads"), 1); /* chroma */
    cJSON_DeleteItemFromObjectCaseSensitive(obj_path(b, "workloads", 0, "step_time_s"), "p95");
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    assert_true(row(&c, "workload chroma (cuda)")->change.regression);
    assert_true(row(&c, "workload flux1-dev (cuda): p95 step time")->change.regression);
    assert_false(row(&c, "workload flux1-dev (cuda): median step time")->change.regression);
    assert_int_equal(c.regressions, 2);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* From 0 there is no percentage: the row is shown ("from 0") and growth in
 * the bad direction is a regression, in the good direction an improvement;
 * 0 -> 0 is no change. */
static void test_from_zero(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    set_num(obj_path(a, "workloads", 0, "memory"), "peak_bytes", 0);
    set_num(obj_path(b, "workloads", 0, "memory"), "peak_bytes", 0.93 * 1073741824.0);
    set_num(obj_path(a, "workloads", 0, "throughput"), "steps_per_s", 0);
    set_num(obj_path(a, "workloads", 1, "throughput"), "tflops", 0);
    set_num(obj_path(b, "workloads", 1, "throughput"), "tflops", 0);
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    const aitk_compare_row *mem = row(&c, "workload flux1-dev (cuda): peak memory");
    assert_true(mem->change.regression);
    assert_false(mem->change.has_delta);
    const aitk_compare_row *rate = row(&c, "workload flux1-dev (cuda): steps/s");
    assert_false(rate->change.regression);
    assert_true(rate->change.improvement);
    assert_false(row(&c, "workload chroma (cuda): TFLOP/s")->change.regression);
    assert_int_equal(c.regressions, 1);
    aitk_str out = render(&c, AITK_COMPARE_TEXT);
    assert_non_null(strstr(out.ptr, "from 0"));
    aitk_str_free(&out);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* 11.8 GB/s against 11800 MB/s is the same speed and 11.8 against 11.8 MB/s
 * a 1000x drop: neither may be compared raw. Different units are shown as
 * incomparable and fail the gate. */
static void test_unit_change(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    cJSON *m = obj_path(b, "micro", 0, NULL); /* memcpy.host, 11.8 GB/s */
    cJSON_ReplaceItemInObjectCaseSensitive(m, "unit", cJSON_CreateString("MB/s"));
    set_num(m, "value", 11800);
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    assert_true(row(&c, "micro memcpy.host")->change.regression);
    assert_false(row(&c, "micro memcpy.host")->change.improvement);
    assert_int_equal(c.regressions, 1);
    aitk_str out = render(&c, AITK_COMPARE_TEXT);
    assert_non_null(strstr(out.ptr, "GB/s"));
    assert_non_null(strstr(out.ptr, "MB/s"));
    assert_non_null(strstr(out.ptr, "unit changed"));
    aitk_str_free(&out);
    aitk_compare_free(&c);
    set_num(m, "value", 11.8);
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    assert_true(row(&c, "micro memcpy.host")->change.regression);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* A CPU run peaks at a few MiB: 5 MiB -> 5.5 MiB must read as such, not as
 * "0.00 GiB -> 0.01 GiB". */
static void test_small_memory_readable(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    set_num(obj_path(a, "workloads", 0, "memory"), "peak_bytes", 5 * 1048576.0);
    set_num(obj_path(b, "workloads", 0, "memory"), "peak_bytes", 5.5 * 1048576.0);
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    assert_true(row(&c, "workload flux1-dev (cuda): peak memory")->change.regression); /* +10% */
    aitk_str out = render(&c, AITK_COMPARE_TEXT);
    assert_non_null(strstr(out.ptr, "5.0 MiB"));
    assert_non_null(strstr(out.ptr, "5.5 MiB"));
    assert_null(strstr(out.ptr, "0.00 GiB"));
    assert_non_null(strstr(out.ptr, "35.00 GiB")); /* chroma, 37580963840 bytes */
    aitk_str_free(&out);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* Names and statuses come from the reports: in Markdown no markup gets
 * through and no pipe splits a cell, as in `render --markdown`. */
static void test_markdown_escapes_report_text(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    cJSON *names[] = {obj_path(a, "micro", 0, NULL), obj_path(b, "micro", 0, NULL)};
    for (int i = 0; i < 2; i++)
        cJSON_ReplaceItemInObjectCaseSensitive(names[i], "name",
                                               cJSON_CreateString("<script>alert(1)</script>"));
    cJSON_ReplaceItemInObjectCaseSensitive(obj_path(b, "workloads", 0, NULL), "status",
                                           cJSON_CreateString("<img src=x onerror=y>|z"));
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    aitk_str out = render(&c, AITK_COMPARE_MARKDOWN);
    assert_null(strstr(out.ptr, "<script"));
    assert_null(strstr(out.ptr, "<img"));
    assert_null(strchr(out.ptr, '<'));
    assert_non_null(strstr(out.ptr, "&lt;script>"));
    /* Every table row has its five cells: six unescaped pipes. */
    for (const char *line = strstr(out.ptr, "\n| "); line; line = strstr(line + 1, "\n| ")) {
        int pipes = 0;
        for (const char *p = line + 1; *p && *p != '\n'; p++)
            pipes += *p == '|' && p[-1] != '\\';
        assert_int_equal(pipes, 6);
    }
    aitk_str_free(&out);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical),
        cmocka_unit_test(test_step_time),
        cmocka_unit_test(test_higher_is_better),
        cmocka_unit_test(test_check_status),
        cmocka_unit_test(test_threshold_parse),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_vanished_micro),
        cmocka_unit_test(test_vanished_workload_and_metric),
        cmocka_unit_test(test_from_zero),
        cmocka_unit_test(test_unit_change),
        cmocka_unit_test(test_small_memory_readable),
        cmocka_unit_test(test_markdown_escapes_report_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
