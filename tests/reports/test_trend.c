/* trend: runs are put in time order whatever order they come in; the latest
 * run is judged against the median of up to `window` earlier values on the
 * same device; numbers that vanish, units that change, a new device and a
 * cut to the newest runs; created_at that cannot be ordered is refused; the
 * CSV and Markdown outputs escape what reports carry; every allocation
 * failure gives NOMEM or the whole output.
 *
 * Reports here are small trees built by the test with literal values; the
 * expected baselines are medians worked out by hand in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "reports/trend.h"
#include "report_test_util.h"

typedef struct mini {
    const char *when;
    double step;        /* flux1-dev median step time; < 0: no workload */
    const char *device; /* of the workload and the microbenchmark */
    double micro;       /* memcpy.host; < 0: no microbenchmark */
    const char *unit;   /* of memcpy.host; NULL: GB/s */
    double failed;      /* summary.counts.fail */
} mini;

static cJSON *make(const mini *m)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "schema_version", "1.0");
    if (m->when)
        cJSON_AddStringToObject(r, "created_at", m->when);
    cJSON *tool = cJSON_AddObjectToObject(r, "tool");
    cJSON_AddStringToObject(tool, "version", "0.1.0");
    cJSON_AddStringToObject(tool, "git_commit", "abcdef0123456789");
    cJSON_AddArrayToObject(r, "checks");
    cJSON *summary = cJSON_AddObjectToObject(r, "summary");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(summary, "counts"), "fail", m->failed);
    cJSON_AddStringToObject(summary, "verdict", m->failed > 0 ? "fail" : "pass");
    const char *dev = m->device ? m->device : "NVIDIA H200";
    if (m->step >= 0) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "name", "flux1-dev");
        cJSON_AddStringToObject(w, "status", "completed");
        cJSON_AddStringToObject(w, "backend", "cuda");
        cJSON_AddStringToObject(w, "device", dev);
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(w, "step_time_s"), "median", m->step);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "workloads"), w);
    }
    if (m->micro >= 0) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", "memcpy.host");
        cJSON_AddStringToObject(e, "backend", "cuda");
        cJSON_AddStringToObject(e, "device", dev);
        cJSON_AddNumberToObject(e, "value", m->micro);
        cJSON_AddStringToObject(e, "unit", m->unit ? m->unit : "GB/s");
        cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "micro"), e);
    }
    return r;
}

/* Adds each run (labelled run<i>.json) and finishes; asserts success. */
static void build(aitk_trend *t, const mini *runs, size_t n, double threshold, size_t window,
                  size_t last)
{
    assert_int_equal(aitk_trend_init(t, threshold, window), AITK_OK);
    aitk_str err = AITK_STR_INIT;
    for (size_t i = 0; i < n; i++) {
        cJSON *r = make(&runs[i]);
        char label[32];
        snprintf(label, sizeof label, "run%zu.json", i);
        assert_int_equal(aitk_trend_add_report(t, r, label, &err), AITK_OK);
        cJSON_Delete(r);
    }
    assert_int_equal(aitk_trend_finish(t, last), AITK_OK);
    aitk_str_free(&err);
}

static const aitk_trend_series *series(const aitk_trend *t, const char *name, const char *unit)
{
    for (size_t i = 0; i < t->nseries; i++)
        if (strcmp(t->series[i].name, name) == 0 && (!unit || strcmp(t->series[i].unit, unit) == 0))
            return &t->series[i];
    fail_msg("no series '%s'", name);
    return NULL;
}

#define STEP "workload flux1-dev (cuda): median step time"
#define MEMCPY "micro memcpy.host"

/* Six nights given out of order. Earlier step times 2.0 2.2 1.9 2.1 2.05:
 * sorted 1.9 2.0 2.05 2.1 2.2, median 2.05. 2.3 is +12.2% (a regression at
 * 5%), 2.1 is +2.4% (ok). */
static void test_time_order_and_median(void **state)
{
    (void)state;
    static const double latest[] = {2.3, 2.1};
    for (int k = 0; k < 2; k++) {
        mini runs[] = {
            {"2026-11-04T05:00:00Z", 2.1, NULL, 10, NULL, 0},
            {"2026-11-06T05:00:00Z", latest[k], NULL, 10, NULL, 0},
            {"2026-11-01T05:00:00Z", 2.0, NULL, 10, NULL, 0},
            {"2026-11-03T05:00:00Z", 1.9, NULL, 10, NULL, 0},
            {"2026-11-05T05:00:00Z", 2.05, NULL, 10, NULL, 0},
            {"2026-11-02T05:00:00Z", 2.2, NULL, 10, NULL, 0},
        };
        aitk_trend t;
        build(&t, runs, 6, 5, 7, 0);
        assert_int_equal(t.nruns, 6);
        static const char *const labels[] = {"run2.json", "run5.json", "run3.json",
                                             "run0.json", "run4.json", "run1.json"};
        for (size_t i = 0; i < 6; i++)
            assert_string_equal(t.runs[i].label, labels[i]);
        const aitk_trend_series *s = series(&t, STEP, "s");
        assert_int_equal(s->count, 6);
        const double in_order[] = {2.0, 2.2, 1.9, 2.1, 2.05, latest[k]};
        for (size_t i = 0; i < 6; i++) {
            assert_int_equal(s->points[i].run, i);
            assert_true(s->points[i].value == in_order[i]);
        }
        assert_true(fabs(s->baseline - 2.05) < 1e-12);
        assert_int_equal(s->baseline_runs, 5);
        assert_int_equal(s->state, k == 0 ? AITK_TREND_REGRESSION : AITK_TREND_OK);
        assert_int_equal(t.regressions, k == 0 ? 1 : 0);
        /* memcpy did not move: ok, and a rate is better higher. */
        assert_int_equal(series(&t, MEMCPY, "GB/s")->state, AITK_TREND_OK);
        assert_true(series(&t, MEMCPY, "GB/s")->higher_is_better);
        aitk_trend_free(&t);
    }
}

/* Window 2: the two runs before the latest, 2.1 and 2.05: median 2.075.
 * An even count takes the mean of the middle two. */
static void test_window(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-01T05:00:00Z", 9.0, NULL, -1, NULL, 0},
        {"2026-11-02T05:00:00Z", 2.1, NULL, -1, NULL, 0},
        {"2026-11-03T05:00:00Z", 2.05, NULL, -1, NULL, 0},
        {"2026-11-04T05:00:00Z", 2.0, NULL, -1, NULL, 0},
    };
    aitk_trend t;
    build(&t, runs, 4, 5, 2, 0);
    const aitk_trend_series *s = series(&t, STEP, "s");
    assert_true(fabs(s->baseline - 2.075) < 1e-12);
    assert_int_equal(s->baseline_runs, 2);
    assert_int_equal(s->state, AITK_TREND_OK); /* -3.6% */
    aitk_trend_free(&t);
}

/* "05:00:00.5Z" is after "05:00:00Z" and before "05:00:01Z", though as text
 * it sorts first. */
static void test_fractional_seconds(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-01T05:00:01Z", 3, NULL, -1, NULL, 0},
        {"2026-11-01T05:00:00.5Z", 2, NULL, -1, NULL, 0},
        {"2026-11-01T05:00:00Z", 1, NULL, -1, NULL, 0},
    };
    aitk_trend t;
    build(&t, runs, 3, 5, 7, 0);
    assert_string_equal(t.runs[0].created_at, "2026-11-01T05:00:00Z");
    assert_string_equal(t.runs[1].created_at, "2026-11-01T05:00:00.5Z");
    assert_string_equal(t.runs[2].created_at, "2026-11-01T05:00:01Z");
    aitk_trend_free(&t);
}

/* Exactly the threshold is not beyond it: 2.3 -> 2.415 s is +5% (in doubles
 * +5.000000000000004%); 2.4151 is beyond. As compare judges. */
static void test_exact_threshold(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++) {
        mini runs[] = {
            {"2026-11-01T05:00:00Z", 2.3, NULL, -1, NULL, 0},
            {"2026-11-02T05:00:00Z", i ? 2.4151 : 2.415, NULL, -1, NULL, 0},
        };
        aitk_trend t;
        build(&t, runs, 2, 5, 7, 0);
        const aitk_trend_series *s = series(&t, STEP, "s");
        if (i == 0)
            assert_int_equal(s->state, AITK_TREND_OK);
        else
            assert_int_not_equal(s->state, AITK_TREND_OK);
        aitk_trend_free(&t);
    }
}

/* RFC 3339 offsets are converted: 06:30+01:00 is 05:30Z, between 05:00Z
 * and 06:00Z; +00:00 is UTC; a leap day exists in 2028. */
static void test_offsets(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-01T06:00:00+00:00", 3, NULL, -1, NULL, 0},
        {"2026-11-01T06:30:00+01:00", 2, NULL, -1, NULL, 0},
        {"2026-11-01T00:00:00-05:00", 1, NULL, -1, NULL, 0},
        {"2028-02-29T00:00:00Z", 4, NULL, -1, NULL, 0},
    };
    aitk_trend t;
    build(&t, runs, 4, 5, 7, 0);
    assert_string_equal(t.runs[0].created_at, "2026-11-01T00:00:00-05:00"); /* 05:00Z */
    assert_string_equal(t.runs[1].created_at, "2026-11-01T06:30:00+01:00"); /* 05:30Z */
    assert_string_equal(t.runs[2].created_at, "2026-11-01T06:00:00+00:00"); /* 06:00Z */
    assert_string_equal(t.runs[3].created_at, "2028-02-29T00:00:00Z");
    aitk_trend_free(&t);
}

/* A run that cannot be placed in time is refused, naming the report. */
static void test_bad_created_at(void **state)
{
    (void)state;
    static const char *const bad[] = {NULL, "yesterday", "2026-11-01T05:00:00",
                                      "2026-13-01T05:00:00Z", "2026-11-01 05:00:00Z",
                                      "2026-11-01T05:00:00.Z", "2026-02-30T05:00:00Z",
                                      "2025-02-29T05:00:00Z", "2026-11-01T05:00:00+1:00",
                                      "2026-11-01T05:00:00+24:00"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        aitk_trend t;
        assert_int_equal(aitk_trend_init(&t, 5, 7), AITK_OK);
        mini m = {bad[i], 2, NULL, -1, NULL, 0};
        cJSON *r = make(&m);
        aitk_str err = AITK_STR_INIT;
        assert_int_equal(aitk_trend_add_report(&t, r, "nightly/x.json", &err), AITK_E_PARSE);
        assert_non_null(strstr(err.ptr, "nightly/x.json: created_at"));
        assert_int_equal(t.nruns, 0);
        aitk_str_free(&err);
        cJSON_Delete(r);
        aitk_trend_free(&t);
    }
}

/* Three nights on an A100 at 3.0 s, then the runner moves to an H100: 1.0 s
 * is new on that device, not a 3x improvement, and 1.2 s the next night is
 * +20% against the H100's own baseline of 1.0. */
static void test_device_change(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-01T05:00:00Z", 3.0, "NVIDIA A100", -1, NULL, 0},
        {"2026-11-02T05:00:00Z", 3.0, "NVIDIA A100", -1, NULL, 0},
        {"2026-11-03T05:00:00Z", 3.0, "NVIDIA A100", -1, NULL, 0},
        {"2026-11-04T05:00:00Z", 1.0, "NVIDIA H100", -1, NULL, 0},
        {"2026-11-05T05:00:00Z", 1.2, "NVIDIA H100", -1, NULL, 0},
    };
    aitk_trend t;
    build(&t, runs, 4, 5, 7, 0);
    assert_int_equal(series(&t, STEP, "s")->state, AITK_TREND_NEW);
    assert_int_equal(t.regressions, 0);
    aitk_trend_free(&t);
    build(&t, runs, 5, 5, 7, 0);
    const aitk_trend_series *s = series(&t, STEP, "s");
    assert_int_equal(s->state, AITK_TREND_REGRESSION);
    assert_true(s->baseline == 1.0);
    assert_int_equal(s->baseline_runs, 1);
    assert_string_equal(s->points[4].device, "cuda NVIDIA H100");
    aitk_trend_free(&t);
}

/* memcpy measured on nights 1-3: gone on night 4 is MISSING (a regression);
 * gone on nights 4 and 5 it has ended (flagged the night it went). */
static void test_missing_and_ended(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-01T05:00:00Z", 2, NULL, 10, NULL, 0},
        {"2026-11-02T05:00:00Z", 2, NULL, 10, NULL, 0},
        {"2026-11-03T05:00:00Z", 2, NULL, 10, NULL, 0},
        {"2026-11-04T05:00:00Z", 2, NULL, -1, NULL, 0},
        {"2026-11-05T05:00:00Z", 2, NULL, -1, NULL, 0},
    };
    aitk_trend t;
    build(&t, runs, 4, 5, 7, 0);
    assert_int_equal(series(&t, MEMCPY, NULL)->state, AITK_TREND_MISSING);
    assert_int_equal(t.regressions, 1);
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_trend_render(&t, AITK_TREND_TEXT, &out), AITK_OK);
    assert_non_null(strstr(out.ptr, "Result: REGRESSION (1 series)"));
    assert_non_null(strstr(out.ptr, "(absent)"));
    aitk_str_free(&out);
    aitk_trend_free(&t);
    build(&t, runs, 5, 5, 7, 0);
    assert_int_equal(series(&t, MEMCPY, NULL)->state, AITK_TREND_ENDED);
    assert_int_equal(t.regressions, 0);
    aitk_trend_free(&t);
}

/* 11.8 GB/s, then 11800 MB/s: a unit is part of a series' name, so the GB/s
 * series went missing and an MB/s one is new; nothing is compared raw. */
static void test_unit_change(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-01T05:00:00Z", 2, NULL, 11.8, "GB/s", 0},
        {"2026-11-02T05:00:00Z", 2, NULL, 11.8, "GB/s", 0},
        {"2026-11-03T05:00:00Z", 2, NULL, 11800, "MB/s", 0},
    };
    aitk_trend t;
    build(&t, runs, 3, 5, 7, 0);
    assert_int_equal(series(&t, MEMCPY, "GB/s")->state, AITK_TREND_MISSING);
    assert_int_equal(series(&t, MEMCPY, "MB/s")->state, AITK_TREND_NEW);
    assert_int_equal(t.regressions, 1);
    aitk_trend_free(&t);
}

/* --last 3 of six nights keeps nights 4-6: the baseline of night 6 is the
 * median of 2.1 and 2.05 only, and night 1's 9.0 is gone. */
static void test_last(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-01T05:00:00Z", 9.0, NULL, -1, NULL, 0},
        {"2026-11-06T05:00:00Z", 2.0, NULL, -1, NULL, 0},
        {"2026-11-02T05:00:00Z", 9.0, NULL, -1, NULL, 0},
        {"2026-11-03T05:00:00Z", 9.0, NULL, 5, NULL, 0}, /* memcpy only before the cut */
        {"2026-11-04T05:00:00Z", 2.1, NULL, -1, NULL, 0},
        {"2026-11-05T05:00:00Z", 2.05, NULL, -1, NULL, 0},
    };
    aitk_trend t;
    build(&t, runs, 6, 5, 7, 3);
    assert_int_equal(t.nruns, 3);
    assert_string_equal(t.runs[0].created_at, "2026-11-04T05:00:00Z");
    const aitk_trend_series *s = series(&t, STEP, "s");
    assert_int_equal(s->count, 3);
    assert_true(fabs(s->baseline - 2.075) < 1e-12);
    for (size_t i = 0; i < t.nseries; i++)
        assert_string_not_equal(t.series[i].name, MEMCPY);
    aitk_trend_free(&t);
}

/* A report that lists a benchmark twice gives it its first value. */
/* A microbenchmark named twice in one report is refused, as compare and
 * render refuse it (it was read as its first value). */
static void test_duplicate_entry(void **state)
{
    (void)state;
    mini m = {"2026-11-01T05:00:00Z", 2, NULL, 5, NULL, 0};
    cJSON *r = make(&m);
    cJSON *again = cJSON_Duplicate(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "micro"), 0), 1);
    cJSON_ReplaceItemInObject(again, "value", cJSON_CreateNumber(50));
    cJSON_AddItemToArray(cJSON_GetObjectItem(r, "micro"), again);
    aitk_trend t;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_trend_init(&t, 5, 7), AITK_OK);
    assert_int_equal(aitk_trend_add_report(&t, r, "a.json", &err), AITK_E_PARSE);
    assert_non_null(strstr(aitk_str_cstr(&err), "a.json: "));
    assert_non_null(strstr(aitk_str_cstr(&err), "memcpy.host"));
    aitk_trend_free(&t);
    aitk_str_free(&err);
    cJSON_Delete(r);
}

/* A latest median of -2.3 s, a string, or infinity is refused with the file
 * and the field named: read leniently, -2.3 passed --fail-on-regression as
 * a 4536.9% improvement. */
static void test_malformed_medians(void **state)
{
    (void)state;
    cJSON *bad[3];
    mini m = {"2026-11-02T05:00:00Z", 1, NULL, -1, NULL, 0};
    for (int i = 0; i < 3; i++)
        bad[i] = make(&m);
    cJSON *med = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(bad[0], "workloads"), 0),
                            "step_time_s"), "median");
    cJSON_SetNumberValue(med, -2.3);
    cJSON_ReplaceItemInObject(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(bad[1], "workloads"), 0),
                            "step_time_s"), "median", cJSON_CreateString("fast"));
    cJSON_ReplaceItemInObject(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(bad[2], "workloads"), 0),
                            "step_time_s"), "median", cJSON_CreateNumber(INFINITY));
    for (int i = 0; i < 3; i++) {
        aitk_trend t;
        aitk_str err = AITK_STR_INIT;
        assert_int_equal(aitk_trend_init(&t, 5, 7), AITK_OK);
        assert_int_equal(aitk_trend_add_report(&t, bad[i], "nightly/latest.json", &err),
                         AITK_E_PARSE);
        if (!strstr(aitk_str_cstr(&err),
                    "nightly/latest.json: workloads[0].step_time_s.median is not a non-negative"))
            fail_msg("case %d: %s", i, aitk_str_cstr(&err));
        aitk_trend_free(&t);
        aitk_str_free(&err);
        cJSON_Delete(bad[i]);
    }
}

/* No check failed for three nights, one fails now: from 0 there is no
 * percentage, and it is a regression whatever the threshold. */
static void test_checks_failed_from_zero(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-01T05:00:00Z", 2, NULL, -1, NULL, 0},
        {"2026-11-02T05:00:00Z", 2, NULL, -1, NULL, 0},
        {"2026-11-03T05:00:00Z", 2, NULL, -1, NULL, 0},
        {"2026-11-04T05:00:00Z", 2, NULL, -1, NULL, 1},
    };
    aitk_trend t;
    build(&t, runs, 4, 1000, 7, 0);
    const aitk_trend_series *s = series(&t, "checks failed", "checks");
    assert_int_equal(s->state, AITK_TREND_REGRESSION);
    assert_false(s->change.has_delta);
    assert_string_equal(s->change.text, "from 0");
    aitk_trend_free(&t);
}

/* CSV: a label with a comma and a quote is quoted with the quote doubled; a
 * label a spreadsheet would run as a formula is prefixed with '; a value
 * reads back as the very double that was stored. */
static void test_csv(void **state)
{
    (void)state;
    mini m = {"2026-11-01T05:00:00Z", 0.1 + 0.2, "=HYPERLINK(\"x\")", -1, NULL, 0};
    cJSON *r = make(&m);
    aitk_trend t;
    aitk_str err = AITK_STR_INIT, out = AITK_STR_INIT;
    assert_int_equal(aitk_trend_init(&t, 5, 7), AITK_OK);
    assert_int_equal(aitk_trend_add_report(&t, r, "a,b\"c.json", &err), AITK_OK);
    assert_int_equal(aitk_trend_finish(&t, 0), AITK_OK);
    assert_int_equal(aitk_trend_render(&t, AITK_TREND_CSV, &out), AITK_OK);
    assert_true(strncmp(out.ptr, "created_at,git_commit,report,series,unit,device,value\n", 54) ==
                0);
    const char *row = strstr(out.ptr, STEP);
    assert_non_null(row);
    while (row > out.ptr && row[-1] != '\n')
        row--;
    char want[256];
    /* The device reads "cuda =HYPERLINK(...)": quoted for its quotes, not
     * prefixed, since it does not start like a formula. */
    snprintf(want, sizeof want,
             "2026-11-01T05:00:00Z,abcdef0123456789,\"a,b\"\"c.json\",%s,s,"
             "\"cuda =HYPERLINK(\"\"x\"\")\",",
             STEP);
    assert_true(strncmp(row, want, strlen(want)) == 0);
    const char *value = row + strlen(want);
    assert_true(strtod(value, NULL) == 0.1 + 0.2);
    aitk_str_free(&out);
    aitk_trend_free(&t);
    cJSON_Delete(r);

    /* A label that starts like a formula is prefixed. */
    r = make(&m);
    assert_int_equal(aitk_trend_init(&t, 5, 7), AITK_OK);
    assert_int_equal(aitk_trend_add_report(&t, r, "=cmd|'/c calc'!A1", &err), AITK_OK);
    assert_int_equal(aitk_trend_finish(&t, 0), AITK_OK);
    assert_int_equal(aitk_trend_render(&t, AITK_TREND_CSV, &out), AITK_OK);
    assert_non_null(strstr(out.ptr, ",\"'=cmd|'/c calc'!A1\","));
    assert_null(strstr(out.ptr, ",=cmd"));
    aitk_str_free(&out);
    aitk_str_free(&err);
    aitk_trend_free(&t);
    cJSON_Delete(r);
}

/* Markdown: names come from reports; no markup and no cell-splitting pipe
 * gets through, and a label's ill-formed byte becomes U+FFFD. */
static void test_markdown_escapes(void **state)
{
    (void)state;
    mini m = {"2026-11-01T05:00:00Z", 2, NULL, 5, NULL, 0};
    cJSON *r = make(&m);
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "workloads"), 0);
    cJSON_ReplaceItemInObject(w, "name", cJSON_CreateString("<script>alert(1)</script>|x"));
    aitk_trend t;
    aitk_str err = AITK_STR_INIT, out = AITK_STR_INIT;
    assert_int_equal(aitk_trend_init(&t, 5, 7), AITK_OK);
    /* A path may hold any bytes: the output is UTF-8 all the same. */
    assert_int_equal(aitk_trend_add_report(&t, r, "<b>\xff.json", &err), AITK_OK);
    assert_int_equal(aitk_trend_finish(&t, 0), AITK_OK);
    assert_int_equal(aitk_trend_render(&t, AITK_TREND_MARKDOWN, &out), AITK_OK);
    /* The label is a code span, where '<' is only a character; elsewhere
     * no '<' is left to open a tag. */
    assert_non_null(strstr(out.ptr, "latest `<b>\xef\xbf\xbd.json`."));
    assert_int_equal(rt_count(out.ptr, "<"), 1);
    assert_null(strchr(out.ptr, '\xff'));
    assert_non_null(strstr(out.ptr, "\xef\xbf\xbd.json"));
    size_t rows = 0;
    for (const char *line = strstr(out.ptr, "\n| "); line; line = strstr(line + 1, "\n| ")) {
        int pipes = 0;
        for (const char *p = line + 1; *p && *p != '\n'; p++)
            pipes += *p == '|' && p[-1] != '\\';
        assert_int_equal(pipes, 7);
        rows++;
    }
    assert_int_equal(rows, 1 + 3); /* header + checks failed, step time, memcpy */
    aitk_str_free(&out);
    aitk_str_free(&err);
    aitk_trend_free(&t);
    cJSON_Delete(r);
}

/* A tiny step time and a huge one keep short, readable forms in the text
 * table and the chart labels alike (as compare shows them): not "0.000 s",
 * not hundreds of digits. */
static void test_value_widths(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-01T05:00:00Z", 0.0002, NULL, -1, NULL, 0},
        {"2026-11-02T05:00:00Z", 1.7e300, NULL, -1, NULL, 0},
    };
    aitk_trend t;
    build(&t, runs, 2, 5, 7, 0);
    static const aitk_trend_format fmts[] = {AITK_TREND_TEXT, AITK_TREND_MARKDOWN,
                                             AITK_TREND_HTML};
    for (size_t f = 0; f < 3; f++) {
        aitk_str out = AITK_STR_INIT;
        assert_int_equal(aitk_trend_render(&t, fmts[f], &out), AITK_OK);
        if (strstr(out.ptr, "0.000 s") || !strstr(out.ptr, "0.0002 s") ||
            !strstr(out.ptr, "1.7e+300 s"))
            fail_msg("format %zu:\n%s", f, out.ptr);
        for (const char *p = out.ptr; *p; p++) /* no run of 20 digits */
            if (strspn(p, "0123456789") >= 20)
                fail_msg("format %zu: a number of %zu digits", f, strspn(p, "0123456789"));
        aitk_str_free(&out);
    }
    aitk_trend_free(&t);
}

/* Each allocation fails in turn, through add, finish and every renderer:
 * NOMEM, or exactly the output of a run without failures. */
static void test_allocation_failures(void **state)
{
    (void)state;
    mini runs[] = {
        {"2026-11-02T05:00:00Z", 2.0, NULL, 10, NULL, 0},
        {"2026-11-01T05:00:00Z", 2.1, NULL, 10, NULL, 1},
        {"2026-11-03T05:00:00Z", 2.5, NULL, -1, NULL, 0},
    };
    cJSON *reports[3];
    for (int i = 0; i < 3; i++)
        reports[i] = make(&runs[i]);
    static const aitk_trend_format formats[] = {AITK_TREND_TEXT, AITK_TREND_MARKDOWN,
                                                AITK_TREND_CSV, AITK_TREND_HTML};
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        aitk_str want = AITK_STR_INIT;
        int failures = 0, ok_in_a_row = 0;
        for (long n = -1; n < 20000 && ok_in_a_row < 20; n++) {
            aitk_trend t;
            aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
            aitk_alloc_fail_after(n);
            aitk_status st = aitk_trend_init(&t, 5, 7);
            for (int i = 0; !st && i < 3; i++)
                st = aitk_trend_add_report(&t, reports[i], "r.json", &err);
            if (!st)
                st = aitk_trend_finish(&t, 0);
            if (!st)
                st = aitk_trend_render(&t, formats[f], &out);
            aitk_alloc_fail_after(-1);
            assert_true(st == AITK_OK || st == AITK_E_NOMEM);
            if (n < 0) {
                assert_int_equal(st, AITK_OK);
                assert_int_equal(aitk_str_append(&want, out.ptr), AITK_OK);
            } else if (st == AITK_OK) {
                ok_in_a_row++;
                assert_string_equal(out.ptr, want.ptr);
            } else {
                ok_in_a_row = 0;
                failures++;
            }
            aitk_trend_free(&t);
            aitk_str_free(&out);
            aitk_str_free(&err);
        }
        assert_true(failures > 0);
        assert_int_equal(ok_in_a_row, 20);
        aitk_str_free(&want);
    }
    for (int i = 0; i < 3; i++)
        cJSON_Delete(reports[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_order_and_median),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_fractional_seconds),
        cmocka_unit_test(test_bad_created_at), cmocka_unit_test(test_offsets), cmocka_unit_test(test_exact_threshold),
        cmocka_unit_test(test_device_change),
        cmocka_unit_test(test_missing_and_ended),
        cmocka_unit_test(test_unit_change),
        cmocka_unit_test(test_last),
        cmocka_unit_test(test_duplicate_entry),
        cmocka_unit_test(test_malformed_medians),
        cmocka_unit_test(test_checks_failed_from_zero),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_markdown_escapes),
        cmocka_unit_test(test_value_widths),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
