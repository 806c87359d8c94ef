/* `aitk-validate render` on malformed reports: every renderer refuses the
 * same file the same way, exit 2 with one line naming the file and the
 * field, and writes nothing. Before, Markdown failed with exit 3 ("could not
 * render") while HTML and JUnit rendered the same file with rc 0, and a
 * numeric verdict rendered as "PASS". The variants are made here by
 * breaking one field of copies of the fixture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <unistd.h>

#include "report_test_util.h"

/* The broken copies are named *.broken, not *.json: they live under the
 * test reports folder, whose *.json files schema.all_reports holds to the
 * schema, and these fail it on purpose. */
typedef struct variant {
    const char *file;  /* written under the test folder */
    const char *field; /* what the message must name */
    void (*breakit)(cJSON *summary);
    void (*break_report)(cJSON *report); /* instead, for fields outside the summary */
} variant;

static void empty_summary(cJSON *s)
{
    while (s->child)
        cJSON_DeleteItemFromArray(s, 0);
}

static void null_counts(cJSON *s)
{
    cJSON_ReplaceItemInObjectCaseSensitive(s, "counts", cJSON_CreateNull());
}

static void number_verdict(cJSON *s)
{
    cJSON_ReplaceItemInObjectCaseSensitive(s, "verdict", cJSON_CreateNumber(1));
}

static void unknown_verdict(cJSON *s)
{
    cJSON_ReplaceItemInObjectCaseSensitive(s, "verdict", cJSON_CreateString("maybe"));
}

static void text_count(cJSON *s)
{
    cJSON *counts = cJSON_GetObjectItemCaseSensitive(s, "counts");
    cJSON_ReplaceItemInObjectCaseSensitive(counts, "fail", cJSON_CreateString("2"));
}

static void negative_count(cJSON *s)
{
    cJSON *counts = cJSON_GetObjectItemCaseSensitive(s, "counts");
    cJSON_ReplaceItemInObjectCaseSensitive(counts, "total", cJSON_CreateNumber(-1));
}

/* The fixture's first workload's median step time. */
static void set_step(cJSON *r, cJSON *value)
{
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "workloads"), 0);
    cJSON *st = cJSON_GetObjectItemCaseSensitive(w, "step_time_s");
    assert_non_null(st);
    cJSON_ReplaceItemInObjectCaseSensitive(st, "median", value);
}

static void negative_step(cJSON *r) { set_step(r, cJSON_CreateNumber(-2.3)); }

static void text_step(cJSON *r) { set_step(r, cJSON_CreateString("2.3")); }

static void twin_workloads(cJSON *r)
{
    cJSON *ws = cJSON_GetObjectItemCaseSensitive(r, "workloads");
    cJSON_AddItemToArray(ws, cJSON_Duplicate(cJSON_GetArrayItem(ws, 0), true));
}

static const variant variants[] = {
    {"negative-step.broken", "workloads[0].step_time_s.median", NULL, negative_step},
    {"text-step.broken", "workloads[0].step_time_s.median", NULL, text_step},
    {"twin-workloads.broken", "are both named", NULL, twin_workloads},
    {"empty-summary.broken", "summary.counts", empty_summary, NULL},
    {"null-counts.broken", "summary.counts", null_counts, NULL},
    {"number-verdict.broken", "summary.verdict", number_verdict, NULL},
    {"unknown-verdict.broken", "summary.verdict", unknown_verdict, NULL},
    {"text-count.broken", "summary.counts.fail", text_count, NULL},
    {"negative-count.broken", "summary.counts.total", negative_count, NULL},
};

static const char *const formats[] = {"--markdown", "--html", "--junit"};

static void write_variant(const variant *v, const char *path)
{
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    if (v->break_report)
        v->break_report(r);
    else
        v->breakit(cJSON_GetObjectItemCaseSensitive(r, "summary"));
    assert_int_equal(rt_write_json(path, r), 0);
    cJSON_Delete(r);
}

static void test_malformed_summary_refused_by_every_renderer(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, in = AITK_STR_INIT, out = AITK_STR_INIT, err = AITK_STR_INIT;
    rt_dir(&dir, "render-input");
    aitk_str_appendf(&out, "%s/out.txt", dir.ptr);
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
        aitk_str_clear(&in);
        aitk_str_appendf(&in, "%s/%s", dir.ptr, variants[i].file);
        write_variant(&variants[i], in.ptr);
        for (size_t k = 0; k < sizeof formats / sizeof *formats; k++) {
            unlink(out.ptr);
            aitk_str_clear(&err);
            const char *argv[] = {AITK_EXE, "render", in.ptr, formats[k], out.ptr, NULL};
            int rc = rt_run(argv, NULL, NULL, &err);
            if (rc != 2)
                fail_msg("render %s %s: exit %d, want 2: %s", variants[i].file, formats[k], rc,
                         aitk_str_cstr(&err));
            if (!strstr(aitk_str_cstr(&err), in.ptr) ||
                !strstr(aitk_str_cstr(&err), variants[i].field))
                fail_msg("render %s %s: the message does not name the file and %s: %s",
                         variants[i].file, formats[k], variants[i].field, aitk_str_cstr(&err));
            assert_int_equal(rt_count(aitk_str_cstr(&err), "\n"), 1); /* one line */
            /* The shared reading of a report is render's here: it said
             * "compare cannot tell which to compare" to a render. */
            if (strstr(aitk_str_cstr(&err), "compare"))
                fail_msg("render %s: the message names another command: %s", variants[i].file,
                         aitk_str_cstr(&err));
            assert_false(rt_exists(out.ptr));
        }
    }
    aitk_str_free(&dir);
    aitk_str_free(&in);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* The check does not refuse good reports: the fixture renders everywhere. */
static void test_fixture_still_renders(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, out = AITK_STR_INIT;
    rt_dir(&dir, "render-input");
    for (size_t k = 0; k < sizeof formats / sizeof *formats; k++) {
        aitk_str_clear(&out);
        aitk_str_appendf(&out, "%s/good%zu.out", dir.ptr, k);
        const char *argv[] = {AITK_EXE, "render", FIXTURE, formats[k], out.ptr, NULL};
        assert_int_equal(rt_run(argv, NULL, NULL, NULL), 0);
        assert_true(rt_exists(out.ptr));
    }
    aitk_str_free(&dir);
    aitk_str_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_summary_refused_by_every_renderer),
        cmocka_unit_test(test_fixture_still_renders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
