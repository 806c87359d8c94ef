/* What `predict` says about how far to trust it, run as a person runs it:
 * the margin of each fit and the time range that comes with every step time
 * (issue #23), in the text and in the JSON, and `predict --reported`'s
 * checks of that range in and out of sample. Figures that depend on
 * models/reported_speeds.yaml are read from its own rows, so rows added
 * there keep these tests true. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/cost.h"

#include "common/alloc.h"
#include "common/fileio.h"

#include "tests/exe_run.h"
#include "tests/report_json.h"

#define GIB 1073741824.0

/* Runs `args` with --json into a fresh file and returns the document. */
static cJSON *run_json(const char **args, size_t n, ran *r)
{
    char path[] = "/tmp/aitk-trust-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    args[n] = "--json";
    args[n + 1] = path;
    args[n + 2] = NULL;
    *r = run(args);
    assert_int_equal(r->rc, 0);
    cJSON *j = load_json(path);
    unlink(path);
    return j;
}

/* The L40S's fit, from figures written out: 44.53 GiB (PyTorch's total
 * memory for it, models/gpus.yaml) less 0.5 GiB of context and 22 MiB of
 * reserve is 44.03 GiB - 22 MiB usable; the margin is that less the peak
 * plus the context the peak holds; the text says it in words. The step
 * time comes with the range of the reported runs. */
static void test_fit_and_range_json(void **state)
{
    (void)state;
    const char *args[16] = {"predict", "--model", "flux1-dev", "--gpu", "L40S"};
    ran r;
    cJSON *j = run_json(args, 5, &r);
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0);
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "gpus"), 0);
    const cJSON *fit = cJSON_GetObjectItemCaseSensitive(g, "fit");
    const double usable = 44.03 * GIB - 22 * 1048576.0;
    assert_true(fabs(json_num(fit, "total_memory_bytes") - 44.53 * GIB) < 1);
    assert_true(fabs(json_num(fit, "usable_bytes") - usable) < 1);
    const double context = json_num(cJSON_GetObjectItemCaseSensitive(p, "memory_plan_bytes"),
                                    "CUDA context");
    assert_true(fabs(context - 0.5 * GIB) < 1);
    const double margin = usable - (json_num(g, "peak_bytes") - context);
    assert_true(fabs(json_num(fit, "margin_bytes") - margin) < 1);
    assert_true(fabs(json_num(fit, "margin_percent") - 100 * margin / usable) < 1e-9);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(fit, "total_memory_kind")),
                        "reported");
    char words[64];
    snprintf(words, sizeof words, "fits with %.1f GiB to spare", margin / GIB);
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(fit, "text")), words));
    /* The range: the step time times the ends the summary gives. */
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "against_reports"), "time_range");
    const double lo = json_num(tr, "low"), hi = json_num(tr, "high");
    const double s = json_num(g, "step_seconds");
    assert_true(lo > 0 && lo <= hi);
    const cJSON *sr = cJSON_GetObjectItemCaseSensitive(g, "step_seconds_range");
    assert_true(fabs(json_num(sr, "low") - s * lo) < 1e-12);
    assert_true(fabs(json_num(sr, "high") - s * hi) < 1e-12);
    assert_int_equal((int)json_num(sr, "reported_runs"), (int)json_num(tr, "runs"));
    /* The text says where the range comes from and what it did. */
    char said[96];
    snprintf(said, sizeof said, "from %d reported training runs", (int)json_num(tr, "runs"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), said));
    snprintf(said, sizeof said, "took %.2fx-%.2fx of the model's predicted time", lo, hi);
    assert_non_null(strstr(aitk_str_cstr(&r.out), said));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "s/step range"));
    assert_null(strstr(aitk_str_cstr(&r.out), "may take up to"));
    cJSON_Delete(j);
    ran_free(&r);
}

/* A miss says by how much, in the table and under it: FLUX with a bf16 base
 * on an RTX 4090 (PyTorch sees 23.64 GiB there). */
static void test_miss_words(void **state)
{
    (void)state;
    const char *args[16] = {"predict", "--model", "flux1-dev", "--gpu", "4090", "--quantize",
                            "none"};
    ran r;
    cJSON *j = run_json(args, 7, &r);
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0);
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "gpus"), 0);
    const cJSON *fit = cJSON_GetObjectItemCaseSensitive(g, "fit");
    const double margin = json_num(fit, "margin_bytes");
    assert_true(margin < 0 && cJSON_IsFalse(cJSON_GetObjectItem(g, "fits")));
    assert_true(fabs(json_num(fit, "total_memory_bytes") - 23.64 * GIB) < 1);
    char words[64];
    snprintf(words, sizeof words, "misses by %.1f GiB", -margin / GIB);
    assert_non_null(strstr(aitk_str_cstr(&r.out), words));
    cJSON_Delete(j);
    ran_free(&r);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* predict --reported: each training row says whether the range held for it,
 * in sample and from the other sources' rows; the counts agree with the
 * flags; every training row belongs to one source; and the JSON says that
 * the cost model fits nothing to these rows. */
static void test_reported_checks(void **state)
{
    (void)state;
    const char *args[8] = {"predict", "--reported"};
    ran r;
    cJSON *j = run_json(args, 2, &r);
    const cJSON *row, *src;
    int training = 0, in = 0, in_loso = 0, by_source = 0, held = 0;
    double misses[64]; /* reported / predicted of each training row */
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(j, "reported"))
    {
        const cJSON *flag = cJSON_GetObjectItem(row, "in_time_range");
        const bool generation = strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
                                           cJSON_GetObjectItem(row, "setup"), "task")),
                                       "inference") == 0;
        assert_true(generation ? flag == NULL : cJSON_IsBool(flag));
        if (generation)
            continue;
        assert_true(training < 64);
        misses[training++] = 1 / json_num(row, "ratio");
        in += cJSON_IsTrue(flag);
        in_loso += cJSON_IsTrue(cJSON_GetObjectItem(row, "in_time_range_without_source"));
    }
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(j, "time_range");
    assert_int_equal((int)json_num(tr, "runs"), training);
    assert_int_equal((int)json_num(tr, "held"), in);
    assert_int_equal((int)json_num(tr, "held_leaving_source_out"), in_loso);
    /* The median miss, worked out here from the rows: the middle of the
     * sorted values, the mean of the two middle ones for an even count. */
    qsort(misses, (size_t)training, sizeof *misses, cmp_double);
    const double median = training % 2 ? misses[training / 2]
                                       : (misses[training / 2 - 1] + misses[training / 2]) / 2;
    assert_true(fabs(json_num(tr, "median") - median) < 1e-9 * median);
    cJSON_ArrayForEach(src, cJSON_GetObjectItemCaseSensitive(j, "by_source"))
    {
        by_source += (int)json_num(src, "runs");
        held += (int)json_num(src, "held_without_source");
        assert_true(json_num(src, "error_factor_in_sample") >= 1);
    }
    assert_int_equal(by_source, training);
    assert_int_equal(held, in_loso);
    assert_int_equal(strncmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "fitted_settings")),
                             "none:", 5), 0);
    char said[96];
    snprintf(said, sizeof said, "It held for %d of %d", in, training);
    assert_non_null(strstr(aitk_str_cstr(&r.out), said));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "Leave one source out"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "fits none of its settings to these runs"));
    cJSON_Delete(j);
    ran_free(&r);
}

/* predict --reported: every memory report comes back with its outcome; a
 * verdict agrees when it says fits for a job that ran or misses for one that
 * ran out of memory, and is not judged without a GPU or an outcome; a row
 * whose source leaves the deciding settings open (setup_unknown) is judged
 * but counted apart; the counts, in the JSON and in the text's summary
 * line, are those of the rows. */
static void test_reported_fits(void **state)
{
    (void)state;
    const char *args[8] = {"predict", "--reported"};
    ran r;
    cJSON *j = run_json(args, 2, &r);
    const cJSON *row;
    int rows = 0, judged = 0, right = 0, oom = 0, oom_right = 0, unknown_rows = 0, unknown_right = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(j, "memory_reports"))
    {
        rows++;
        const char *outcome = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(row, "reported"), "outcome"));
        const cJSON *pred = cJSON_GetObjectItem(row, "predicted");
        const char *verdict = cJSON_GetStringValue(cJSON_GetObjectItem(pred, "verdict"));
        const cJSON *agrees = cJSON_GetObjectItem(row, "agrees");
        assert_non_null(outcome);
        assert_true(json_num(pred, "peak_gb") > 0);
        /* The plan's terms add up to the peak. */
        double sum = 0;
        int terms = 0;
        const cJSON *term;
        cJSON_ArrayForEach(term, cJSON_GetObjectItem(pred, "memory_plan"))
        {
            assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItem(term, "term")));
            sum += json_num(term, "gb");
            terms++;
        }
        assert_int_equal(terms, AITK_PLAN_TERMS);
        assert_float_equal(sum, json_num(pred, "step_peak_gb"), 1e-9);
        /* The peak is the step's, or a validation stage's where larger. */
        const cJSON *val = cJSON_GetObjectItem(pred, "validation");
        const double val_peak = val ? json_num(val, "peak_gb") : 0;
        assert_float_equal(json_num(pred, "peak_gb"), sum > val_peak ? sum : val_peak, 1e-9);
        if (cJSON_IsNull(cJSON_GetObjectItem(row, "gpu")) || strcmp(outcome, "unstated") == 0) {
            assert_true(cJSON_IsNull(agrees));
            continue;
        }
        assert_non_null(verdict);
        const bool fits = strcmp(verdict, "fits") == 0;
        assert_true(fits == (json_num(pred, "usable_gb") >= json_num(pred, "needed_gb")));
        const bool went = strcmp(outcome, "ran") == 0;
        assert_true(went || strcmp(outcome, "oom") == 0);
        assert_true(cJSON_IsBool(agrees) && cJSON_IsTrue(agrees) == (fits == went));
        const char *why = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(row, "reported"), "setup_unknown"));
        if (why) {
            assert_true(*why);
            assert_non_null(strstr(aitk_str_cstr(&r.out), why));
            unknown_rows++;
            unknown_right += cJSON_IsTrue(agrees);
            continue;
        }
        judged++;
        right += cJSON_IsTrue(agrees);
        oom += !went;
        oom_right += !went && cJSON_IsTrue(agrees);
    }
    assert_true(rows > 0 && judged > 0);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "fit_verdicts");
    assert_int_equal((int)json_num(v, "rows"), judged);
    assert_int_equal((int)json_num(v, "right"), right);
    assert_int_equal((int)json_num(v, "oom_rows"), oom);
    assert_int_equal((int)json_num(v, "oom_right"), oom_right);
    assert_int_equal((int)json_num(v, "setup_unknown_rows"), unknown_rows);
    assert_int_equal((int)json_num(v, "setup_unknown_right"), unknown_right);
    char said[160];
    snprintf(said, sizeof said, "fit verdict right on %d of %d rows whose source says it ran or "
                                "ran out of memory", right, judged);
    assert_non_null(strstr(aitk_str_cstr(&r.out), said));
    if (unknown_rows) {
        snprintf(said, sizeof said, "not counted, in parentheses: %d rows", unknown_rows);
        assert_non_null(strstr(aitk_str_cstr(&r.out), said));
    }
    cJSON_Delete(j);
    ran_free(&r);
}

/* One list's rows that report a peak, counted into *rows and *within
 * (predicted within 15% of the figure), and of them those with a GPU. */
static void count_peaks(const cJSON *list, int *rows, int *within, int *measured,
                        int *measured_within)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, list)
    {
        const cJSON *rep = cJSON_GetObjectItem(row, "reported");
        const cJSON *got = cJSON_GetObjectItem(rep, "peak_gb");
        if (!got)
            continue;
        const double reported = cJSON_GetNumberValue(got);
        const double predicted = json_num(cJSON_GetObjectItem(row, "predicted"), "peak_gb");
        const int in = predicted >= 0.85 * reported && predicted <= 1.15 * reported;
        const int card = !cJSON_IsNull(cJSON_GetObjectItem(row, "gpu"));
        *rows += 1;
        *within += in;
        *measured += card;
        *measured_within += card && in;
    }
}

/* predict --reported: the peaks within 15% of the single figure a row
 * reports, counted over the timed and the memory rows, are what the JSON's
 * peak_agreement and the text say. */
static void test_peak_agreement(void **state)
{
    (void)state;
    const char *args[8] = {"predict", "--reported"};
    ran r;
    cJSON *j = run_json(args, 2, &r);
    int rows = 0, within = 0, measured = 0, measured_within = 0;
    count_peaks(cJSON_GetObjectItemCaseSensitive(j, "reported"), &rows, &within, &measured,
                &measured_within);
    count_peaks(cJSON_GetObjectItemCaseSensitive(j, "memory_reports"), &rows, &within, &measured,
                &measured_within);
    assert_true(rows > measured && measured > 0);
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(j, "peak_agreement");
    assert_float_equal(json_num(pk, "tolerance"), 0.15, 0);
    assert_int_equal((int)json_num(pk, "rows"), rows);
    assert_int_equal((int)json_num(pk, "within"), within);
    assert_int_equal((int)json_num(pk, "measured_rows"), measured);
    assert_int_equal((int)json_num(pk, "measured_within"), measured_within);
    char said[160];
    snprintf(said, sizeof said, "peak within 15%% of the single figure reported: %d of %d rows",
             within, rows);
    assert_non_null(strstr(aitk_str_cstr(&r.out), said));
    cJSON_Delete(j);
    ran_free(&r);
}

int main(void)
{
    unsetenv("AITK_DATA_DIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_and_range_json),
        cmocka_unit_test(test_miss_words),
        cmocka_unit_test(test_reported_checks),
        cmocka_unit_test(test_reported_fits),
        cmocka_unit_test(test_peak_agreement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
