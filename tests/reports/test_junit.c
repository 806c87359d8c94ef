/* JUnit XML checked by a real XML parser (xmllint, libxml2) against a schema
 * of the elements and attributes JUnit readers require (junit.xsd here), and
 * counted with XPath: one testcase per check and per workload target,
 * failures with messages, skipped checks as <skipped/>. The expected counts
 * are read off the fixture by hand: 8 checks (2 fail, 2 warn, 1 skip) and 2
 * workloads x 2 targets (chroma misses both). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <unistd.h>

#include "reports/junit.h"
#include "report_test_util.h"

#define XSD AITK_SOURCE_DIR "/tests/reports/junit.xsd"

static void write_junit(const cJSON *r, const char *path)
{
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_render_junit(r, &out), AITK_OK);
    assert_int_equal(aitk_file_write_atomic(path, out.ptr, out.len, NULL), AITK_OK);
    aitk_str_free(&out);
}

static int validate(const char *path, aitk_str *err)
{
    const char *argv[] = {"xmllint", "--noout", "--schema", XSD, path, NULL};
    return rt_run(argv, NULL, NULL, err);
}

static double xpath(const char *path, const char *expr)
{
    aitk_str out = AITK_STR_INIT;
    const char *argv[] = {"xmllint", "--xpath", expr, path, NULL};
    int rc = rt_run(argv, NULL, &out, NULL);
    if (rc != 0)
        fail_msg("xmllint --xpath '%s' %s: exit %d", expr, path, rc);
    double v = atof(aitk_str_cstr(&out));
    aitk_str_free(&out);
    return v;
}

static void path_in(aitk_str *p, const char *name)
{
    aitk_str dir = AITK_STR_INIT;
    rt_dir(&dir, "junit");
    aitk_str_clear(p);
    aitk_str_appendf(p, "%s/%s", dir.ptr, name);
    aitk_str_free(&dir);
}

static void test_schema_and_counts(void **state)
{
    (void)state;
    aitk_str p = AITK_STR_INIT, err = AITK_STR_INIT;
    path_in(&p, "junit.xml");
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    write_junit(r, p.ptr);
    if (validate(p.ptr, &err) != 0)
        fail_msg("junit.xml does not validate:\n%s", aitk_str_cstr(&err));
    const char *f = p.ptr;
    assert_int_equal(xpath(f, "count(//testcase)"), 12);
    assert_int_equal(xpath(f, "count(//testcase/failure)"), 4);
    assert_int_equal(xpath(f, "count(//testcase/skipped)"), 1);
    assert_int_equal(xpath(f, "string(/testsuites/@tests)"), 12);
    assert_int_equal(xpath(f, "string(/testsuites/@failures)"), 4);
    /* The skipped total lives on each testsuite only (junit.xsd says why). */
    assert_int_equal(xpath(f, "count(/testsuites/@skipped)"), 0);
    assert_int_equal(xpath(f, "sum(//testsuite/@skipped)"), 1);
    /* Per-suite counts agree with the cases they hold. */
    assert_int_equal(xpath(f, "count(//testsuite[@tests != count(testcase)])"), 0);
    assert_int_equal(xpath(f, "count(//testsuite[@failures != count(testcase/failure)])"), 0);
    assert_int_equal(xpath(f, "count(//testsuite[@skipped != count(testcase/skipped)])"), 0);
    /* Failures carry the check's message, and its remedy in the body. */
    assert_int_equal(
        xpath(f, "count(//testcase[@name='gpu.driver']/failure[@message='The NVIDIA driver "
                 "is not loaded, so no GPU answers.' and contains(., 'fix: Install')])"),
        1);
    assert_int_equal(xpath(f, "count(//testcase[@name='bench.nccl']/skipped)"), 1);
    /* Workload targets: chroma misses both, flux meets both. */
    assert_int_equal(xpath(f, "count(//testsuite[@name='workloads']/testcase)"), 4);
    assert_int_equal(
        xpath(f, "count(//testcase[@name='workload.chroma.time_per_1000_steps']/failure)"), 1);
    assert_int_equal(xpath(f, "count(//testcase[@name='workload.chroma.peak_memory']/failure)"),
                     1);
    assert_int_equal(xpath(f, "count(//testcase[starts-with(@name,'workload.flux1-dev')]/*)"), 0);
    /* A warning passes unless strict, and keeps its text. */
    assert_int_equal(xpath(f, "count(//testcase[@name='python.torch']/system-out)"), 1);

    cJSON_ReplaceItemInObjectCaseSensitive(r, "strict", cJSON_CreateTrue());
    write_junit(r, p.ptr);
    assert_int_equal(validate(p.ptr, &err), 0);
    assert_int_equal(xpath(f, "count(//testcase/failure)"), 6);
    cJSON_Delete(r);
    aitk_str_free(&p);
    aitk_str_free(&err);
}

/* Hostile text stays well-formed: markup, quotes, control bytes, bad UTF-8. */
static void test_hostile_text(void **state)
{
    (void)state;
    aitk_str p = AITK_STR_INIT, err = AITK_STR_INIT;
    path_in(&p, "hostile.xml");
    cJSON *r = rt_load(FIXTURE);
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 2);
    cJSON_ReplaceItemInObjectCaseSensitive(
        c, "message", cJSON_CreateString("]]></failure><x a=\"'\">\x01\x1f \xc3\x28 \xed\xa0\x80"));
    cJSON_ReplaceItemInObjectCaseSensitive(c, "id", cJSON_CreateString("a\"b<c>&d"));
    write_junit(r, p.ptr);
    if (validate(p.ptr, &err) != 0)
        fail_msg("hostile junit.xml does not validate:\n%s", aitk_str_cstr(&err));
    assert_int_equal(xpath(p.ptr, "count(//testcase[@name='a\"b<c>&d']/failure)"), 1);
    cJSON_Delete(r);
    aitk_str_free(&p);
    aitk_str_free(&err);
}

/* The schema check can fail: a testcase without classname is refused. */
static void test_schema_rejects_broken(void **state)
{
    (void)state;
    aitk_str p = AITK_STR_INIT, err = AITK_STR_INIT;
    path_in(&p, "broken.xml");
    const char broken[] = "<?xml version=\"1.0\"?>\n<testsuites tests=\"1\" failures=\"0\" "
                          "errors=\"0\"><testsuite name=\"s\" tests=\"1\" failures=\"0\" "
                          "errors=\"0\" time=\"0\"><testcase name=\"x\" time=\"0\"/>"
                          "</testsuite></testsuites>\n";
    assert_int_equal(aitk_file_write_atomic(p.ptr, broken, sizeof broken - 1, NULL), AITK_OK);
    assert_int_not_equal(validate(p.ptr, &err), 0);
    aitk_str_free(&p);
    aitk_str_free(&err);
}

/* The category a renderer files a check under: "" when it is not a string. */
static const char *category_of(const cJSON *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "category");
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Suites come in the order their category first appears in the report and
 * hold their checks in report order, with interleaved categories, an empty
 * one and a mistyped one ("uncategorised"). The expected sequence is worked
 * out here from the JSON, the slow obvious way, and compared with the order
 * of <testsuite>/<testcase> names in the output. */
static void test_suite_and_case_order(void **state)
{
    (void)state;
    static const char *const cats[] = {"gpu", "host", "gpu", "", "python", "host", NULL, "gpu",
                                       "zeta", "alpha", "", "python"};
    enum { N = sizeof cats / sizeof *cats };
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    cJSON *checks = cJSON_CreateArray();
    for (int i = 0; i < N; i++) {
        cJSON *c = cJSON_CreateObject();
        char id[32];
        snprintf(id, sizeof id, "order.c%02d", i);
        cJSON_AddStringToObject(c, "id", id);
        if (cats[i])
            cJSON_AddStringToObject(c, "category", cats[i]);
        else
            cJSON_AddNumberToObject(c, "category", 7);
        cJSON_AddStringToObject(c, "status", i % 3 == 0 ? "fail" : "pass");
        cJSON_AddNumberToObject(c, "duration_ms", i);
        cJSON_AddItemToArray(checks, c);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(r, "checks", checks);
    cJSON_DeleteItemFromObjectCaseSensitive(r, "workloads");

    aitk_str want = AITK_STR_INIT, got = AITK_STR_INIT, xml = AITK_STR_INIT;
    for (int i = 0; i < N; i++) {
        const char *cat = category_of(cJSON_GetArrayItem(checks, i));
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= strcmp(category_of(cJSON_GetArrayItem(checks, j)), cat) == 0;
        if (seen)
            continue;
        aitk_str_appendf(&want, "suite %s\n", *cat ? cat : "uncategorised");
        for (int j = i; j < N; j++)
            if (strcmp(category_of(cJSON_GetArrayItem(checks, j)), cat) == 0)
                aitk_str_appendf(&want, "case order.c%02d\n", j);
    }
    assert_int_equal(aitk_render_junit(r, &xml), AITK_OK);
    for (const char *p = xml.ptr; (p = strstr(p, " name=\"")) != NULL; p++) {
        const char *tag = p;
        while (tag > xml.ptr && *tag != '<')
            tag--;
        const char *v = p + 7;
        size_t len = strcspn(v, "\"");
        if (strncmp(tag, "<testsuite ", 11) == 0)
            aitk_str_appendf(&got, "suite %.*s\n", (int)len, v);
        else if (strncmp(tag, "<testcase ", 10) == 0)
            aitk_str_appendf(&got, "case %.*s\n", (int)len, v);
    }
    assert_string_equal(got.ptr, want.ptr);
    aitk_str_free(&want);
    aitk_str_free(&got);
    aitk_str_free(&xml);
    cJSON_Delete(r);
}

/* Each allocation fails in turn: NOMEM or the complete document. */
static void test_allocation_failures(void **state)
{
    (void)state;
    cJSON *r = rt_load(FIXTURE);
    aitk_str want = AITK_STR_INIT;
    assert_int_equal(aitk_render_junit(r, &want), AITK_OK);
    int failures = 0, ok_in_a_row = 0;
    for (long n = 0; n < 20000 && ok_in_a_row < 20; n++) {
        aitk_str out = AITK_STR_INIT;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_render_junit(r, &out);
        aitk_alloc_fail_after(-1);
        assert_true(st == AITK_OK || st == AITK_E_NOMEM);
        if (st == AITK_OK) {
            ok_in_a_row++;
            assert_string_equal(aitk_str_cstr(&out), want.ptr);
        } else {
            ok_in_a_row = 0;
            failures++;
        }
        aitk_str_free(&out);
    }
    assert_true(failures > 0);
    assert_int_equal(ok_in_a_row, 20);
    aitk_str_free(&want);
    cJSON_Delete(r);
}

int main(void)
{
    const char *argv[] = {"xmllint", "--version", NULL};
    if (rt_run(argv, NULL, NULL, NULL) < 0) {
        printf("xmllint (libxml2-utils) is not installed: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_and_counts),
        cmocka_unit_test(test_hostile_text),
        cmocka_unit_test(test_schema_rejects_broken),
        cmocka_unit_test(test_suite_and_case_order),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
