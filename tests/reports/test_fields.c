/* The one reader of a string field (reports/fields.h), which replaced
 * copies that differed on a NULL object, a non-string value and a string
 * item without text; and the console view (reports/console.h) that moved
 * out of main.c and reads through it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "reports/console.h"
#include "reports/fields.h"
#include "reports/markdown.h"
#include "reports/report.h"

/* A string item whose text is NULL: cJSON never parses one, but a tree
 * built or edited by hand can hold it, and a reader must not return it. */
static void drop_text(cJSON *obj, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    assert_true(cJSON_IsString(v));
    cJSON_free(v->valuestring);
    v->valuestring = NULL;
}

static void test_field_str_contract(void **state)
{
    (void)state;
    cJSON *o = cJSON_Parse("{\"name\":\"A100\",\"n\":3,\"empty\":\"\",\"hole\":\"x\"}");
    assert_non_null(o);
    drop_text(o, "hole");
    assert_string_equal(aitk_field_str(o, "name"), "A100");
    assert_string_equal(aitk_field_str(o, "empty"), "");
    assert_string_equal(aitk_field_str(o, "n"), "");       /* not a string */
    assert_string_equal(aitk_field_str(o, "missing"), ""); /* absent */
    assert_string_equal(aitk_field_str(o, "hole"), "");    /* string without text */
    assert_string_equal(aitk_field_str(NULL, "name"), ""); /* no object at all */
    /* The fallback is the caller's: NULL tells "absent" from "". */
    assert_null(aitk_field_str_or(o, "missing", NULL));
    assert_null(aitk_field_str_or(o, "hole", NULL));
    assert_null(aitk_field_str_or(NULL, "name", NULL));
    assert_string_equal(aitk_field_str_or(o, "empty", NULL), "");
    assert_string_equal(aitk_field_str_or(o, "n", "?"), "?");
    cJSON_Delete(o);
}

static cJSON *report_of(const aitk_check *checks, size_t n)
{
    aitk_report_meta m = {"1.2.3", "abc", "standard", "seed-guide", "validate", false};
    cJSON *r = aitk_report_new(&m);
    assert_non_null(r);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(aitk_report_add_check(r, &checks[i]), AITK_OK);
    assert_int_equal(aitk_report_finish(r, NULL), AITK_OK);
    return r;
}

/* Markdown's own copy of the reader returned the NULL text of such an item
 * and the renderer read through it. */
static void test_markdown_survives_string_without_text(void **state)
{
    (void)state;
    aitk_check fail = {.id = "gpu.nvml", .category = "gpu", .title = "NVML",
                       .status = AITK_CHECK_FAIL, .observed = "gone", .remedy = "FIX-IT"};
    cJSON *r = report_of(&fail, 1);
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 0);
    drop_text(c, "title");
    aitk_str md = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&md), "gpu.nvml"));
    assert_non_null(strstr(aitk_str_cstr(&md), "FIX-IT"));
    assert_null(strstr(aitk_str_cstr(&md), "NVML"));
    aitk_str_free(&md);
    cJSON_Delete(r);
}

static void test_console_view(void **state)
{
    (void)state;
    aitk_check checks[] = {
        {.id = "a.ok", .category = "a", .title = "Fine", .status = AITK_CHECK_PASS,
         .observed = "yes", .message = "PASS-MSG", .source = "SRC"},
        {.id = "a.warn", .category = "a", .title = "Warned", .status = AITK_CHECK_WARN,
         .message = "WARN-MSG", .remedy = "WARN-FIX", .expected = "EXP"},
        {.id = "a.skip", .category = "a", .title = "Skipped", .status = AITK_CHECK_SKIP,
         .message = "SKIP-MSG", .remedy = "SKIP-FIX"},
    };
    cJSON *r = report_of(checks, 3);
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_render_console(r, "9.9", 0, false, &out), AITK_OK);
    const char *t = aitk_str_cstr(&out);
    assert_non_null(strstr(t, "aitk-validate 9.9 · level standard · profile seed-guide\n"));
    assert_non_null(strstr(t, "  PASS  a.ok                     Fine: yes\n"));
    assert_null(strstr(t, "PASS-MSG")); /* a pass's reason only with -v */
    assert_non_null(strstr(t, "  WARN  a.warn                   Warned\n        WARN-MSG\n"
                              "        fix: WARN-FIX\n"));
    assert_non_null(strstr(t, "        SKIP-MSG\n"));
    assert_null(strstr(t, "SKIP-FIX")); /* remedies under failures and warnings only */
    assert_null(strstr(t, "expected:"));
    assert_null(strstr(t, "\033[")); /* no colour asked for */
    assert_non_null(strstr(t, "Verdict: PASS with warnings (0 failed, 1 warning, 1 passed, "
                              "1 skipped)\n"));
    aitk_str_clear(&out);
    assert_int_equal(aitk_render_console(r, "9.9", 1, true, &out), AITK_OK);
    t = aitk_str_cstr(&out);
    assert_non_null(strstr(t, "        PASS-MSG\n        source: SRC\n"));
    assert_non_null(strstr(t, "        expected: EXP\n"));
    assert_non_null(strstr(t, "\033[32mPASS\033[0m"));
    aitk_str_free(&out);
    cJSON_Delete(r);

    /* What a check quotes from outside (here a requirements file's line
     * with an escape sequence and a newline) reaches the terminal as
     * visible text, each field on its one line. */
    aitk_check quoting[] = {
        {.id = "a.quote", .category = "a", .title = "Quoted", .status = AITK_CHECK_WARN,
         .observed = "diff\033[31musers", .message = "line one\n  PASS  fake.check",
         .remedy = "pip uninstall -y x\a"},
    };
    r = report_of(quoting, 1);
    assert_int_equal(aitk_render_console(r, "9.9", 1, false, &out), AITK_OK);
    t = aitk_str_cstr(&out);
    assert_null(strchr(t, '\033'));
    assert_null(strchr(t, '\a'));
    assert_non_null(strstr(t, "Quoted: diff\\x1b[31musers\n"));
    assert_non_null(strstr(t, "        line one\\x0a  PASS  fake.check\n"));
    assert_non_null(strstr(t, "        fix: pip uninstall -y x\\x07\n"));
    aitk_str_free(&out);
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_str_contract),
        cmocka_unit_test(test_markdown_survives_string_without_text),
        cmocka_unit_test(test_console_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
