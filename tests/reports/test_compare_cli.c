/* compare through the real `aitk-validate compare`: exit codes (0, 1, 2);
 * malformed reports and repeated names refused (exit 2); a check that
 * vanished fails the gate; a change of exactly the threshold passes; extreme
 * values keep a bounded width; control characters never reach the terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "compare_test_util.h"

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
    assert_non_null(strstr(out.ptr, "workload chroma (cuda): time per 1000 steps"));
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
        /* compare itself refuses it, as BASE or as NEW, in the same words
         * (the CLI leaves the check to it). */
        aitk_compare c = {0};
        for (int as_base = 0; as_base < 2; as_base++) {
            aitk_str_clear(&err);
            assert_int_equal(as_base ? aitk_compare_reports(r, "bad.json", good, "good.json", 5,
                                                            &c, &err)
                                     : aitk_compare_reports(good, "good.json", r, "bad.json", 5,
                                                            &c, &err),
                             AITK_E_PARSE);
            if (!strstr(err.ptr, bad[i].place) || strncmp(err.ptr, "bad.json: ", 10) != 0)
                fail_msg("case %zu as %s: '%s'", i, as_base ? "BASE" : "NEW", err.ptr);
            assert_int_equal(c.count, 0);
        }
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
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
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
        assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, cases[i].threshold, &c, NULL),
                         AITK_OK);
        if (row(&c, "workload flux1-dev (cuda): median step time")->change.regression !=
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
                         cJSON_GetArraySize(list) - 1, k ? "memcpy.host" : "flux1-dev (cuda)");
        assert_int_equal(aitk_compare_check_report(r, "r.json", &err), AITK_E_PARSE);
        assert_non_null(strstr(err.ptr, want.ptr));
        aitk_str_clear(&err);
        assert_int_equal(cli_with(r, "duplicate.broken", k == 0, NULL, &err), 2);
        assert_non_null(strstr(err.ptr, want.ptr));
        aitk_str_free(&err);
        aitk_str_free(&want);
        cJSON_Delete(r);
    }
    /* One name on two backends (a GPU run's full-size step and the CPU's
     * small configuration) is two workloads, not a repeat. */
    cJSON *r = base_report();
    cJSON *ws = cJSON_GetObjectItemCaseSensitive(r, "workloads");
    cJSON *cpu = cJSON_Duplicate(cJSON_GetArrayItem(ws, 0), 1);
    cJSON_ReplaceItemInObjectCaseSensitive(cpu, "backend", cJSON_CreateString("cpu"));
    cJSON_AddItemToArray(ws, cpu);
    aitk_str none = AITK_STR_INIT;
    if (aitk_compare_check_report(r, "r.json", &none) != AITK_OK)
        fail_msg("a workload on two backends refused: %s", aitk_str_cstr(&none));
    aitk_str_free(&none);
    cJSON_Delete(r);
    /* Two checks with one id: the same refusal. */
    r = base_report();
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(r, "checks");
    cJSON_AddItemToArray(checks, cJSON_Duplicate(cJSON_GetArrayItem(checks, 1), 1));
    aitk_str err = AITK_STR_INIT, want = AITK_STR_INIT;
    aitk_str_appendf(&want, "checks[1] and checks[%d] have the same id '%s'",
                     cJSON_GetArraySize(checks) - 1,
                     cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 1), "id")->valuestring);
    assert_int_equal(cli_with(r, "duplicate-check.broken", true, NULL, &err), 2);
    if (!strstr(err.ptr, want.ptr))
        fail_msg("expected '%s' in: %s", want.ptr, err.ptr);
    aitk_str_free(&err);
    aitk_str_free(&want);
    cJSON_Delete(r);
}

/* The lent H200's own --full report (bench/reference-runs, redacted) has
 * each model twice, on the GPU at full size and on the CPU in the small
 * configuration. compare refused it ("both named 'flux1-dev'"); workloads
 * are now told apart by backend, so the report compares with itself and
 * with the next call's report, GPU with GPU. */
#define H200_RUNS AITK_SOURCE_DIR "/bench/reference-runs/2026-12-04-h200-second-gpu-check"
static void test_real_gpu_report(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(run_compare(H200_RUNS "/call1-report.json", H200_RUNS "/call1-report.json",
                                 NULL, &out),
                     0);
    static const char *const rows[] = {"workload flux1-dev (cuda): median step time",
                                       "workload flux1-dev: median step time",
                                       "workload omnigen2 (cuda): peak memory",
                                       "Result: no regression"};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (!strstr(out.ptr, rows[i]))
            fail_msg("no '%s' in:\n%s", rows[i], out.ptr);
    aitk_str_clear(&out);
    /* Against the third call: the GPU's step time is within 1% (1.061 s and
     * 1.059 s, as both reports' figures say). */
    assert_int_equal(run_compare(H200_RUNS "/call1-report.json", H200_RUNS "/call3-report.json",
                                 "50%", &out),
                     1);
    if (!strstr(out.ptr, "workload flux1-dev (cuda): median step time                 1.061 s"
                         "        1.059 s     -0.2%  ok"))
        fail_msg("GPU row not compared GPU with GPU:\n%s", out.ptr);
    aitk_str_free(&out);
}

/* The same report's Markdown, the summary a person pastes into an issue
 * (GitHub takes 65,536 characters): each op's GEMM shapes summed, so it
 * stays short. It was 57 KB, most of it one line per shape. */
static void test_real_gpu_report_markdown(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT;
    const char *argv[] = {AITK_EXE, "render", H200_RUNS "/call3-report.json", NULL};
    assert_int_equal(rt_run(argv, NULL, &out, NULL), 0);
    if (out.len > 30000 || !strstr(out.ptr, "lora_linear_forward → cuBLASLt (") ||
        strstr(out.ptr, "algo 66"))
        fail_msg("%zu bytes of Markdown:\n%.3000s", out.len, out.ptr);
    aitk_str_free(&out);
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
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
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
    assert_int_equal(aitk_compare_reports(a, NULL, b, NULL, 5, &c, NULL), AITK_OK);
    for (int f = AITK_COMPARE_TEXT; f <= AITK_COMPARE_HTML; f++) {
        aitk_str out = render(&c, (aitk_compare_format)f);
        assert_false(has_control(out.ptr));
        assert_null(strstr(out.ptr, "\xc2\x9b"));
        /* Markdown escapes the '[' that could open a link. */
        assert_non_null(strstr(out.ptr, f == AITK_COMPARE_MARKDOWN
                                            ? "flux\\x1b]0;PWN\\x07\\x1b\\[2J\\u007f\\u009b"
                                            : "flux\\x1b]0;PWN\\x07\\x1b[2J\\u007f\\u009b"));
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
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_malformed_refused),
        cmocka_unit_test(test_vanished_check),
        cmocka_unit_test(test_exact_threshold),
        cmocka_unit_test(test_duplicate_names),
        cmocka_unit_test(test_real_gpu_report),
        cmocka_unit_test(test_real_gpu_report_markdown),
        cmocka_unit_test(test_extreme_values_bounded),
        cmocka_unit_test(test_control_chars_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
