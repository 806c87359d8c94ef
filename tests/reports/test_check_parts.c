/* The shared walk over a check's parts: which parts appear, in what order,
 * what stands for a missing observation, and which checks a group takes.
 * Markup of single letters makes the order readable in the expected text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <string.h>

#include "reports/check_parts.h"
#include "reports/report.h"

/* Every part bracketed by its own letter: S status, T title, I id,
 * M message, H head end, O observed, E expected, o observed end, R remedy,
 * C source, Z end. */
static const aitk_check_markup letters[AITK_CHECK_PART_COUNT] = {
    [AITK_CHECK_PART_STATUS] = {"S[", "]"},   [AITK_CHECK_PART_TITLE] = {"T[", "]"},
    [AITK_CHECK_PART_ID] = {"I[", "]"},       [AITK_CHECK_PART_MESSAGE] = {"M[", "]"},
    [AITK_CHECK_PART_HEAD_END] = {"H[", "]"}, [AITK_CHECK_PART_OBSERVED] = {"O[", "]"},
    [AITK_CHECK_PART_EXPECTED] = {"E[", "]"}, [AITK_CHECK_PART_OBSERVED_END] = {"o[", "]"},
    [AITK_CHECK_PART_REMEDY] = {"R[", "]"},   [AITK_CHECK_PART_SOURCE] = {"C[", "]"},
    [AITK_CHECK_PART_END] = {"Z[", "]\n"},
};

/* Upper-cases the text so the test sees that every part went through it. */
static void upper(aitk_str *out, const char *s)
{
    for (; *s; s++)
        aitk_str_appendc(out, *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s);
}

static cJSON *check_json(const aitk_check *c)
{
    aitk_report_meta m = {"1", "", "standard", "p", "validate", false};
    cJSON *r = aitk_report_new(&m);
    aitk_report_add_check(r, c);
    cJSON *one = cJSON_DetachItemFromArray(cJSON_GetObjectItemCaseSensitive(r, "checks"), 0);
    cJSON_Delete(r);
    return one;
}

static void expect_parts(const aitk_check *c, const char *want)
{
    cJSON *j = check_json(c);
    aitk_str out = AITK_STR_INIT;
    aitk_check_parts_append(&out, j, letters, upper);
    assert_string_equal(aitk_str_cstr(&out), want);
    aitk_str_free(&out);
    cJSON_Delete(j);
}

static void test_every_part_in_order(void **state)
{
    (void)state;
    aitk_check c = {.id = "a.b", .category = "a", .title = "t", .status = AITK_CHECK_FAIL,
                    .observed = "obs", .expected = "exp", .message = "msg", .remedy = "rem",
                    .source = "src"};
    expect_parts(&c, "S[FAIL]T[T]I[A.B]M[MSG]H[]O[OBS]E[EXP]o[]R[REM]C[SRC]Z[]\n");
}

static void test_empty_parts_left_out(void **state)
{
    (void)state;
    aitk_check c = {.id = "a.b", .category = "a", .title = "t", .status = AITK_CHECK_PASS};
    expect_parts(&c, "S[PASS]T[T]I[A.B]H[]Z[]\n");
    aitk_check only_observed = {.id = "a.b", .category = "a", .title = "t",
                                .status = AITK_CHECK_PASS, .observed = "obs"};
    expect_parts(&only_observed, "S[PASS]T[T]I[A.B]H[]O[OBS]o[]Z[]\n");
}

static void test_expected_without_observed_says_nothing(void **state)
{
    (void)state;
    aitk_check c = {.id = "a.b", .category = "a", .title = "t", .status = AITK_CHECK_WARN,
                    .expected = "exp", .remedy = "rem"};
    expect_parts(&c, "S[WARN]T[T]I[A.B]H[]O[(NOTHING)]E[EXP]o[]R[REM]Z[]\n");
}

static void test_null_before_leaves_part_out(void **state)
{
    (void)state;
    aitk_check_markup m[AITK_CHECK_PART_COUNT];
    memcpy(m, letters, sizeof m);
    m[AITK_CHECK_PART_STATUS].before = NULL;
    m[AITK_CHECK_PART_SOURCE].before = NULL;
    aitk_check c = {.id = "a.b", .category = "a", .title = "t", .status = AITK_CHECK_FAIL,
                    .source = "src"};
    cJSON *j = check_json(&c);
    aitk_str out = AITK_STR_INIT;
    aitk_check_parts_append(&out, j, m, upper);
    assert_string_equal(aitk_str_cstr(&out), "T[T]I[A.B]H[]Z[]\n");
    aitk_str_free(&out);
    cJSON_Delete(j);
}

static void test_group_takes_one_status_in_report_order(void **state)
{
    (void)state;
    aitk_report_meta m = {"1", "", "standard", "p", "validate", false};
    cJSON *r = aitk_report_new(&m);
    aitk_check a = {.id = "x.1", .category = "x", .title = "one", .status = AITK_CHECK_FAIL};
    aitk_check b = {.id = "x.2", .category = "x", .title = "two", .status = AITK_CHECK_PASS};
    aitk_check c = {.id = "x.3", .category = "x", .title = "three", .status = AITK_CHECK_FAIL};
    aitk_report_add_check(r, &a);
    aitk_report_add_check(r, &b);
    aitk_report_add_check(r, &c);
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(r, "checks");
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_check_parts_group(&out, checks, "fail", "<h>\n", letters, upper), 2);
    assert_string_equal(aitk_str_cstr(&out), "<h>\nS[FAIL]T[ONE]I[X.1]H[]Z[]\n"
                                             "S[FAIL]T[THREE]I[X.3]H[]Z[]\n");
    /* No check of the status: no heading either. */
    aitk_str_clear(&out);
    assert_int_equal(aitk_check_parts_group(&out, checks, "warn", "<h>\n", letters, upper), 0);
    assert_string_equal(aitk_str_cstr(&out), "");
    aitk_str_free(&out);
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_part_in_order),
        cmocka_unit_test(test_empty_parts_left_out),
        cmocka_unit_test(test_expected_without_observed_says_nothing),
        cmocka_unit_test(test_null_before_leaves_part_out),
        cmocka_unit_test(test_group_takes_one_status_in_report_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
