/* The report model: shape, counts, verdict rules (strict included), and the
 * parser's refusal of files that are not reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/report.h"

static cJSON *make(bool strict, const aitk_check_status *st, int n)
{
    aitk_report_meta m = {"1.2.3", "abc", "quick", "p", "validate", strict};
    cJSON *r = aitk_report_new(&m);
    assert_non_null(r);
    for (int i = 0; i < n; i++) {
        char id[16];
        snprintf(id, sizeof id, "t.c%d", i);
        aitk_check c = {.id = id, .category = "t", .status = st[i], .remedy = "do x"};
        assert_int_equal(aitk_report_add_check(r, &c), AITK_OK);
    }
    return r;
}

static double count(const cJSON *r, const char *k)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "summary"), "counts"), k)
        ->valuedouble;
}

static void test_verdicts(void **state)
{
    (void)state;
    const aitk_check_status pass_skip[] = {AITK_CHECK_PASS, AITK_CHECK_SKIP};
    const aitk_check_status with_warn[] = {AITK_CHECK_PASS, AITK_CHECK_WARN, AITK_CHECK_WARN};
    const aitk_check_status with_fail[] = {AITK_CHECK_WARN, AITK_CHECK_FAIL};
    aitk_verdict v;
    cJSON *r = make(false, pass_skip, 2);
    assert_int_equal(aitk_report_finish(r, &v), AITK_OK);
    assert_int_equal(v, AITK_VERDICT_PASS);
    assert_int_equal(count(r, "skip"), 1);
    assert_int_equal(count(r, "total"), 2);
    cJSON_Delete(r);

    r = make(false, with_warn, 3);
    aitk_report_finish(r, &v);
    assert_int_equal(v, AITK_VERDICT_WARN);
    assert_int_equal(count(r, "warn"), 2);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "summary"), "exit_code")->valueint, 0);
    cJSON_Delete(r);

    r = make(true, with_warn, 3); /* --strict: warnings fail */
    aitk_report_finish(r, &v);
    assert_int_equal(v, AITK_VERDICT_FAIL);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "summary"), "exit_code")->valueint, 1);
    cJSON_Delete(r);

    r = make(false, with_fail, 2);
    aitk_report_finish(r, &v);
    assert_int_equal(v, AITK_VERDICT_FAIL);
    aitk_verdict again;
    assert_int_equal(aitk_report_verdict(r, &again), AITK_OK);
    assert_int_equal(again, AITK_VERDICT_FAIL);
    cJSON_Delete(r);
}

static void test_round_trip(void **state)
{
    (void)state;
    const aitk_check_status st[] = {AITK_CHECK_FAIL};
    cJSON *r = make(false, st, 1);
    aitk_report_set_section(r, "host", cJSON_CreateObject());
    aitk_report_finish(r, NULL);
    aitk_str text = AITK_STR_INIT, err = AITK_STR_INIT;
    assert_int_equal(aitk_report_to_json(r, &text), AITK_OK);
    cJSON *back = NULL;
    assert_int_equal(aitk_report_parse("r.json", text.ptr, text.len, &back, &err), AITK_OK);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(back, "checks"), 0);
    assert_string_equal(cJSON_GetObjectItem(c, "status")->valuestring, "fail");
    assert_string_equal(cJSON_GetObjectItem(c, "remedy")->valuestring, "do x");
    assert_string_equal(cJSON_GetObjectItem(c, "observed")->valuestring, ""); /* always present */
    assert_string_equal(cJSON_GetObjectItem(back, "schema_version")->valuestring,
                        AITK_REPORT_SCHEMA_VERSION);
    cJSON_Delete(back);
    cJSON_Delete(r);
    aitk_str_free(&text);
    aitk_str_free(&err);
}

/* Out of memory at each allocation of parsing a valid report, in turn:
 * every failure is AITK_E_NOMEM with its message, never "not valid JSON"
 * (exit 2, as if the file were bad); and with no failure it parses. */
static void test_parse_out_of_memory(void **state)
{
    (void)state;
    const aitk_check_status st[] = {AITK_CHECK_WARN};
    cJSON *r = make(false, st, 1);
    aitk_report_finish(r, NULL);
    aitk_str text = AITK_STR_INIT;
    assert_int_equal(aitk_report_to_json(r, &text), AITK_OK);
    cJSON_Delete(r);
    int nomem = 0;
    for (long n = 0;; n++) {
        cJSON *back = NULL;
        aitk_str err = AITK_STR_INIT;
        aitk_alloc_fail_after(n);
        unsigned long before = aitk_alloc_failures();
        aitk_status got = aitk_report_parse("r.json", text.ptr, text.len, &back, &err);
        bool injected = aitk_alloc_failures() != before;
        aitk_alloc_fail_after(-1);
        if (!injected) {
            assert_int_equal(got, AITK_OK);
            cJSON_Delete(back);
            aitk_str_free(&err);
            break;
        }
        if (got != AITK_E_NOMEM || !strstr(aitk_str_cstr(&err), "r.json: out of memory"))
            fail_msg("allocation %ld failed: status %d, '%s'", n, (int)got, aitk_str_cstr(&err));
        assert_null(back);
        nomem++;
        aitk_str_free(&err);
    }
    assert_true(nomem > 5); /* the parse allocates, so the loop did test something */
    aitk_str_free(&text);
}

static void expect_refused(const char *text, const char *needle)
{
    cJSON *out = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_report_parse("x.json", text, strlen(text), &out, &err), AITK_E_PARSE);
    assert_null(out);
    if (!strstr(aitk_str_cstr(&err), needle))
        fail_msg("'%s' lacks '%s'", aitk_str_cstr(&err), needle);
    aitk_str_free(&err);
}

static void test_parse_refusals(void **state)
{
    (void)state;
    expect_refused("", "x.json:1:1: not valid JSON");
    expect_refused("{\"a\":\n\n  tru}", "x.json:3:");
    expect_refused("[1]", "top level is not an object");
    expect_refused("{\"checks\":[]}", "no schema_version");
    expect_refused("{\"schema_version\":\"2.0\",\"checks\":[],\"summary\":{}}", "unsupported schema_version");
    expect_refused("{\"schema_version\":\"1.0\",\"checks\":{},\"summary\":{}}", "'checks' is missing");
    expect_refused("{\"schema_version\":\"1.0\",\"checks\":[]}", "'summary' is missing");
    expect_refused("{\"schema_version\":\"1.0\",\"checks\":[],\"summary\":\"x\"}",
                   "'summary' is missing or not an object");
    expect_refused("{\"schema_version\":1,\"checks\":[],\"summary\":{}}",
                   "schema_version is not a string");
    expect_refused("{\"schema_version\":\"1.0\",\"summary\":{},\"checks\":[{\"id\":\"a.b\",\"status\":\"great\"}]}",
                   "checks[0] lacks a valid id or status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_parse_out_of_memory),
        cmocka_unit_test(test_parse_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
