/* compare: a planted 10% regression is caught and a 2% drift passes, at the
 * default 5% threshold, for workload step times, throughput, peak memory and
 * microbenchmarks; check status changes; metrics that vanished, changed unit
 * or moved off 0 fail the gate; report text is escaped in Markdown; the
 * threshold parser; and the real `aitk-validate compare` exit codes (0, 1,
 * 2). Malformed reports and repeated names are refused (exit 2); a check
 * that vanished fails the gate; a change of exactly the threshold passes;
 * extreme values keep a bounded width; control characters never reach the
 * terminal. The variants are made here by setting literal values on copies
 * of the fixture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "reports/compare.h"
#include "report_test_util.h"

static cJSON *base_report(void)
{
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    return r;
}

static cJSON *obj_path(cJSON *r, const char *array, int index, const char *section)
{
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, array), index);
    assert_non_null(e);
    return section ? cJSON_GetObjectItemCaseSensitive(e, section) : e;
}

static void set_num(cJSON *obj, const char *key, double v)
{
    assert_non_null(obj);
    assert_non_null(cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateNumber(v)) ? obj
                                                                                            : NULL);
}

static const aitk_compare_row *row(const aitk_compare *c, const char *metric)
{
    for (size_t i = 0; i < c->count; i++)
        if (strcmp(c->rows[i].metric, metric) == 0)
            return &c->rows[i];
    fail_msg("no row '%s'", metric);
    return NULL;
}

static void test_identical(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
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
        assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
        const aitk_compare_row *r = row(&c, "workload flux1-dev: median step time");
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
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
    assert_true(row(&c, "workload flux1-dev: steps/s")->change.regression);
    assert_false(row(&c, "workload chroma: peak memory")->change.regression);
    assert_true(row(&c, "micro gemm.bf16.flux_qkv")->change.regression);
    assert_false(row(&c, "micro attention.flux_joint")->change.regression);
    assert_true(row(&c, "micro attention.flux_joint")->change.improvement);
    assert_int_equal(c.regressions, 2);
    aitk_compare_free(&c);
    /* With a 15% threshold the same changes pass. */
    assert_int_equal(aitk_compare_reports(a, b, 15, &c), AITK_OK);
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
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
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
    assert_int_equal(aitk_compare_reports(a, b, 5, &ref), AITK_OK);
    assert_int_equal(aitk_compare_render(&ref, AITK_COMPARE_HTML, &want), AITK_OK);
    aitk_compare_free(&ref);
    int failures = 0, ok_in_a_row = 0;
    for (long n = 0; n < 20000 && ok_in_a_row < 20; n++) {
        aitk_compare c = {0};
        aitk_str out = AITK_STR_INIT;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_compare_reports(a, b, 5, &c);
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

static aitk_str render(const aitk_compare *c, aitk_compare_format fmt)
{
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_compare_render(c, fmt, &out), AITK_OK);
    return out;
}

/* A benchmark that silently stopped producing numbers must not pass: every
 * microbenchmark BASE had and NEW lacks is shown and is a regression. */
static void test_vanished_micro(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    cJSON_ReplaceItemInObjectCaseSensitive(b, "micro", cJSON_CreateArray());
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
    assert_true(row(&c, "micro memcpy.host")->change.regression);
    assert_true(row(&c, "micro gemm.bf16.flux_qkv")->change.regression);
    assert_true(row(&c, "micro attention.flux_joint")->change.regression);
    assert_int_equal(c.regressions, 3);
    aitk_str out = render(&c, AITK_COMPARE_TEXT);
    assert_non_null(strstr(out.ptr, "Result: REGRESSION"));
    aitk_str_free(&out);
    aitk_compare_free(&c);
    /* The other way round, a microbenchmark only NEW has is shown and passes. */
    assert_int_equal(aitk_compare_reports(b, a, 5, &c), AITK_OK);
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
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
    assert_true(row(&c, "workload chroma")->change.regression);
    assert_true(row(&c, "workload flux1-dev: p95 step time")->change.regression);
    assert_false(row(&c, "workload flux1-dev: median step time")->change.regression);
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
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
    const aitk_compare_row *mem = row(&c, "workload flux1-dev: peak memory");
    assert_true(mem->change.regression);
    assert_false(mem->change.has_delta);
    const aitk_compare_row *rate = row(&c, "workload flux1-dev: steps/s");
    assert_false(rate->change.regression);
    assert_true(rate->change.improvement);
    assert_false(row(&c, "workload chroma: TFLOP/s")->change.regression);
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
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
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
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
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
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
    assert_true(row(&c, "workload flux1-dev: peak memory")->change.regression); /* +10% */
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
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
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

static int run_compare(const char *base, const char *now, const char *threshold, aitk_str *out)
{
    const char *argv[] = {AITK_EXE, "compare", base, now, threshold ? "--threshold" : NULL,
                          threshold, NULL};
    return rt_run(argv, NULL, out, NULL);
}

static void test_cli(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, p10 = AITK_STR_INIT, p2 = AITK_STR_INIT, bad = AITK_STR_INIT,
             out = AITK_STR_INIT, nomicro = AITK_STR_INIT;
    rt_dir(&dir, "compare");
    aitk_str_appendf(&p10, "%s/regress10.json", dir.ptr);
    aitk_str_appendf(&p2, "%s/drift2.json", dir.ptr);
    aitk_str_appendf(&bad, "%s/not-a-report.txt", dir.ptr);
    cJSON *b = base_report();
    set_num(obj_path(b, "workloads", 1, "time_per_1000_steps"), "measured_s", 8910); /* +10% */
    assert_int_equal(rt_write_json(p10.ptr, b), 0);
    set_num(obj_path(b, "workloads", 1, "time_per_1000_steps"), "measured_s", 8262); /* +2% */
    assert_int_equal(rt_write_json(p2.ptr, b), 0);
    cJSON_Delete(b);
    assert_int_equal(aitk_file_write_atomic(bad.ptr, "{\"x\": 1}", 8, NULL), AITK_OK);
    aitk_str_appendf(&nomicro, "%s/no-micro.json", dir.ptr);
    b = base_report();
    cJSON_ReplaceItemInObjectCaseSensitive(b, "micro", cJSON_CreateArray());
    assert_int_equal(rt_write_json(nomicro.ptr, b), 0);
    cJSON_Delete(b);

    assert_int_equal(run_compare(FIXTURE, p10.ptr, NULL, &out), 1);
    assert_non_null(strstr(out.ptr, "workload chroma: time per 1000 steps"));
    assert_non_null(strstr(out.ptr, "+10.0%  REGRESSION"));
    aitk_str_clear(&out);
    assert_int_equal(run_compare(FIXTURE, p2.ptr, NULL, &out), 0);
    assert_non_null(strstr(out.ptr, "Result: no regression"));
    assert_int_equal(run_compare(FIXTURE, p10.ptr, "12%", NULL), 0);
    /* The nightly run whose benchmarks produced nothing fails the gate. */
    assert_int_equal(run_compare(FIXTURE, nomicro.ptr, NULL, NULL), 1);
    assert_int_equal(run_compare(FIXTURE, p2.ptr, "1%", NULL), 1);
    assert_int_equal(run_compare(FIXTURE, p2.ptr, "lots", NULL), 2);
    assert_int_equal(run_compare(FIXTURE, bad.ptr, NULL, NULL), 2);
    assert_int_equal(run_compare(FIXTURE, "/nonexistent/x.json", NULL, NULL), 2);
    const char *one[] = {AITK_EXE, "compare", FIXTURE, NULL};
    assert_int_equal(rt_run(one, NULL, NULL, NULL), 2);
    const char *md[] = {AITK_EXE, "compare", FIXTURE, p10.ptr, "--format", "markdown", NULL};
    aitk_str_clear(&out);
    assert_int_equal(rt_run(md, NULL, &out, NULL), 1);
    assert_non_null(strstr(out.ptr, "## aitk-validate compare: REGRESSION"));
    aitk_str_free(&dir);
    aitk_str_free(&p10);
    aitk_str_free(&p2);
    aitk_str_free(&bad);
    aitk_str_free(&out);
    aitk_str_free(&nomicro);
}

/* Writes `r` to <test reports>/compare/<file> (a .broken name keeps a
 * malformed report away from schema.all_reports) and runs compare; the exit
 * code, stdout and stderr. */
static int cli_with(cJSON *r, const char *file, bool as_base, aitk_str *out, aitk_str *err)
{
    aitk_str path = AITK_STR_INIT;
    rt_dir(&path, "compare");
    aitk_str_appendf(&path, "/%s", file);
    assert_int_equal(rt_write_json(path.ptr, r), 0);
    const char *argv[] = {AITK_EXE, "compare", as_base ? path.ptr : FIXTURE,
                          as_base ? FIXTURE : path.ptr, NULL};
    int rc = rt_run(argv, NULL, out, err);
    aitk_str_free(&path);
    return rc;
}

static void replace(cJSON *obj, const char *key, cJSON *v)
{
    assert_non_null(obj);
    assert_true(cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v));
}

/* A number compare reads that is not a number >= 0, or a list that is not a
 * list, is bad input: exit 2 naming the file and the place, whichever side
 * it is on, never a pass on a value read as missing or negative. */
static void test_malformed_refused(void **state)
{
    (void)state;
    static const struct {
        const char *list, *section, *key, *json, *place;
    } bad[] = {
        {"workloads", "step_time_s", "median", "\"fast\"", "workloads[0].step_time_s.median"},
        {"workloads", "step_time_s", "median", "-2.3", "workloads[0].step_time_s.median"},
        {"workloads", "memory", "peak_bytes", "null", "workloads[0].memory.peak_bytes"},
        {"workloads", NULL, "throughput", "[1]", "workloads[0].throughput is not an object"},
        {"micro", NULL, "value", "null", "micro[0].value"},
        {"micro", NULL, "higher_is_better", "1", "micro[0].higher_is_better"},
        {NULL, NULL, "workloads", "null", "workloads is not a list"},
        {NULL, NULL, "workloads", "{}", "workloads is not a list"},
        {NULL, NULL, "micro", "\"x\"", "micro is not a list"},
    };
    cJSON *good = base_report();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cJSON *r = base_report();
        cJSON *obj = bad[i].list ? obj_path(r, bad[i].list, 0, bad[i].section) : r;
        replace(obj, bad[i].key, cJSON_Parse(bad[i].json));
        aitk_str err = AITK_STR_INIT, out = AITK_STR_INIT;
        assert_int_equal(aitk_compare_check_report(r, "new.json", &err), AITK_E_PARSE);
        if (!strstr(err.ptr, bad[i].place) || strncmp(err.ptr, "new.json: ", 10) != 0)
            fail_msg("case %zu: '%s'", i, err.ptr);
        aitk_compare c = {0};
        assert_int_equal(aitk_compare_reports(good, r, 5, &c), AITK_E_PARSE);
        assert_int_equal(aitk_compare_reports(r, good, 5, &c), AITK_E_PARSE);
        aitk_compare_free(&c);
        /* The real binary, the bad report as BASE and then as NEW. */
        for (int as_base = 0; as_base < 2 && i < 3; as_base++) {
            aitk_str_clear(&err);
            assert_int_equal(cli_with(r, "malformed.broken", as_base, &out, &err), 2);
            assert_non_null(strstr(err.ptr, "malformed.broken: "));
            assert_non_null(strstr(err.ptr, bad[i].place));
            assert_int_equal(rt_count(err.ptr, "\n"), 1);
        }
        aitk_str_free(&err);
        aitk_str_free(&out);
        cJSON_Delete(r);
    }
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_compare_check_report(good, "base.json", &err), AITK_OK);
    assert_int_equal(err.len, 0);
    aitk_str_free(&err);
    cJSON_Delete(good);
}

/* A check BASE ran and NEW lacks is a regression, whatever its status was:
 * a check that stopped running proves nothing. */
static void test_vanished_check(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(b, "checks");
    cJSON_DeleteItemFromArray(checks, 2); /* gpu.driver, fail */
    cJSON_DeleteItemFromArray(checks, 0); /* host.os, pass */
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
    assert_true(row(&c, "check host.os")->change.regression);
    assert_true(row(&c, "check gpu.driver")->change.regression);
    assert_int_equal(c.regressions, 2);
    aitk_str out = render(&c, AITK_COMPARE_MARKDOWN);
    assert_non_null(
        strstr(out.ptr, "| check host.os | pass | (absent) | missing | **REGRESSION** |"));
    aitk_str_clear(&out);
    assert_int_equal(cli_with(b, "checks-gone.json", false, &out, NULL), 1);
    assert_non_null(strstr(out.ptr, "Result: REGRESSION (2 beyond 5.0%)"));
    aitk_str_free(&out);
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* "More than the threshold": 2.3 -> 2.415 s is exactly +5% (+5.000000000000004
 * in doubles) and passes at 5%; 2.4151 s does not. 10% likewise. */
static void test_exact_threshold(void **state)
{
    (void)state;
    static const struct {
        double now, threshold;
        bool regression;
    } cases[] = {{2.415, 5, false}, {2.4151, 5, true}, {2.53, 10, false}, {2.5301, 10, true}};
    cJSON *a = base_report(), *b = base_report();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        set_num(obj_path(b, "workloads", 0, "step_time_s"), "median", cases[i].now);
        aitk_compare c = {0};
        assert_int_equal(aitk_compare_reports(a, b, cases[i].threshold, &c), AITK_OK);
        if (row(&c, "workload flux1-dev: median step time")->change.regression !=
            cases[i].regression)
            fail_msg("%.4f s at %.0f%%", cases[i].now, cases[i].threshold);
        aitk_compare_free(&c);
    }
    set_num(obj_path(b, "workloads", 0, "step_time_s"), "median", 2.415);
    assert_int_equal(cli_with(b, "exact-threshold.json", false, NULL, NULL), 0);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* Two workloads (or microbenchmarks) of one name: the gate cannot know
 * which to compare, so the report is refused, naming the name. */
static void test_duplicate_names(void **state)
{
    (void)state;
    static const char *const lists[] = {"workloads", "micro"};
    for (int k = 0; k < 2; k++) {
        cJSON *r = base_report();
        cJSON *list = cJSON_GetObjectItemCaseSensitive(r, lists[k]);
        cJSON_AddItemToArray(list, cJSON_Duplicate(cJSON_GetArrayItem(list, 0), 1));
        aitk_str err = AITK_STR_INIT, want = AITK_STR_INIT;
        aitk_str_appendf(&want, "%s[0] and %s[%d] are both named '%s'", lists[k], lists[k],
                         cJSON_GetArraySize(list) - 1, k ? "memcpy.host" : "flux1-dev");
        assert_int_equal(aitk_compare_check_report(r, "r.json", &err), AITK_E_PARSE);
        assert_non_null(strstr(err.ptr, want.ptr));
        aitk_str_clear(&err);
        assert_int_equal(cli_with(r, "duplicate.broken", k == 0, NULL, &err), 2);
        assert_non_null(strstr(err.ptr, want.ptr));
        aitk_str_free(&err);
        aitk_str_free(&want);
        cJSON_Delete(r);
    }
}

/* The longest run of digits in s. */
static size_t digit_run(const char *s)
{
    size_t best = 0, n = 0;
    for (; *s; s++) {
        n = *s >= '0' && *s <= '9' ? n + 1 : 0;
        best = n > best ? n : best;
    }
    return best;
}

/* 1.7e308 s, 1e300 bytes and 1e-320 GB/s stay short in every format; the
 * text table keeps its columns. */
static void test_extreme_values_bounded(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    set_num(obj_path(b, "workloads", 0, "step_time_s"), "median", 1.7e308);
    set_num(obj_path(b, "workloads", 0, "memory"), "peak_bytes", 1e300);
    set_num(obj_path(b, "workloads", 1, "step_time_s"), "median", 1e-7);
    set_num(obj_path(b, "micro", 0, NULL), "value", 1e-320);
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
    for (int f = AITK_COMPARE_TEXT; f <= AITK_COMPARE_HTML; f++) {
        aitk_str out = render(&c, (aitk_compare_format)f);
        assert_true(digit_run(out.ptr) < 12);
        assert_non_null(strstr(out.ptr, "1.7e+308 s"));
        assert_non_null(strstr(out.ptr, "1e-07 s")); /* not "0.000 s" */
        if (f == AITK_COMPARE_TEXT)
            for (const char *l = out.ptr; *l; l = strchr(l, '\n') + 1)
                assert_true(strchr(l, '\n') - l <= 110);
        aitk_str_free(&out);
    }
    aitk_compare_free(&c);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* A control character other than a line end (CRLF: the real binary's
 * standard output is in text mode on Windows). */
static bool has_control(const char *s)
{
    for (; *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\n' && !(*s == '\r' && s[1] == '\n')) ||
            *s == 0x7f)
            return true;
    return false;
}

/* An ESC sequence in a name, or a newline in a unit, reaches no output
 * raw: it is shown as \xNN, one table row per metric. */
static void test_control_chars_escaped(void **state)
{
    (void)state;
    cJSON *a = base_report(), *b = base_report();
    const char *evil = "flux\x1b]0;PWN\x07\x1b[2J\x7f\xc2\x9b";
    replace(obj_path(a, "workloads", 0, NULL), "name", cJSON_CreateString(evil));
    replace(obj_path(b, "workloads", 0, NULL), "name", cJSON_CreateString(evil));
    replace(obj_path(b, "micro", 0, NULL), "unit", cJSON_CreateString("GB/s\nx\ty"));
    replace(obj_path(b, "checks", 0, NULL), "status", cJSON_CreateString("fail"));
    aitk_compare c = {0};
    assert_int_equal(aitk_compare_reports(a, b, 5, &c), AITK_OK);
    for (int f = AITK_COMPARE_TEXT; f <= AITK_COMPARE_HTML; f++) {
        aitk_str out = render(&c, (aitk_compare_format)f);
        assert_false(has_control(out.ptr));
        assert_null(strstr(out.ptr, "\xc2\x9b"));
        assert_non_null(strstr(out.ptr, "flux\\x1b]0;PWN\\x07\\x1b[2J\\x7f\\u009b"));
        assert_non_null(strstr(out.ptr, "GB/s\\x0ax\\x09y"));
        if (f == AITK_COMPARE_TEXT) /* title, header, rows, result */
            assert_int_equal(rt_count(out.ptr, "\n"), c.count + 3);
        aitk_str_free(&out);
    }
    aitk_compare_free(&c);
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(cli_with(b, "control-chars.broken", false, &out, NULL), 1);
    assert_false(has_control(out.ptr));
    assert_non_null(strstr(out.ptr, "GB/s\\x0ax\\x09y"));
    aitk_str_free(&out);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical),      cmocka_unit_test(test_step_time),
        cmocka_unit_test(test_higher_is_better), cmocka_unit_test(test_check_status),
        cmocka_unit_test(test_threshold_parse), cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_vanished_micro),  cmocka_unit_test(test_vanished_workload_and_metric),
        cmocka_unit_test(test_from_zero),       cmocka_unit_test(test_unit_change),
        cmocka_unit_test(test_small_memory_readable),
        cmocka_unit_test(test_markdown_escapes_report_text),
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_malformed_refused), cmocka_unit_test(test_vanished_check),
        cmocka_unit_test(test_exact_threshold), cmocka_unit_test(test_duplicate_names),
        cmocka_unit_test(test_extreme_values_bounded),
        cmocka_unit_test(test_control_chars_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
