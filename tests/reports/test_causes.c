/* Which failure to fix first (reports/causes.h), through the report model:
 * checks with "follows" links are added, the report is finished, and the
 * links kept and summary.fix_first are compared with what is written here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <string.h>

#include "reports/causes.h"
#include "reports/console.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/markdown.h"
#include "reports/redact.h"
#include "reports/report.h"

typedef struct row {
    const char *id;
    aitk_check_status status;
    const char *follows;
} row;

static cJSON *finished(const row *rows, size_t n)
{
    aitk_report_meta m = {"1.2.3", "abc", "standard", "p", "validate", false};
    cJSON *r = aitk_report_new(&m);
    assert_non_null(r);
    for (size_t i = 0; i < n; i++) {
        aitk_check c = {.id = rows[i].id, .category = "t", .title = rows[i].id,
                        .status = rows[i].status, .remedy = "do x",
                        .follows = rows[i].follows};
        assert_int_equal(aitk_report_add_check(r, &c), AITK_OK);
    }
    assert_int_equal(aitk_report_finish(r, NULL), AITK_OK);
    return r;
}

/* The "follows" the finished report keeps for check `id` ("" when none). */
static const char *kept(const cJSON *r, const char *id)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "checks"))
    {
        if (strcmp(cJSON_GetObjectItem(c, "id")->valuestring, id) == 0) {
            const cJSON *f = cJSON_GetObjectItem(c, "follows");
            return cJSON_IsString(f) ? f->valuestring : "";
        }
    }
    fail_msg("no check %s", id);
    return "";
}

/* summary.fix_first as "head: a b; head2: ; ..." */
static void fix_first_text(const cJSON *r, char *out, size_t cap)
{
    out[0] = '\0';
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(cJSON_GetObjectItem(r, "summary"), "fix_first"))
    {
        strncat(out, cJSON_GetObjectItem(e, "id")->valuestring, cap - strlen(out) - 1);
        strncat(out, ":", cap - strlen(out) - 1);
        const cJSON *x;
        cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "explains"))
        {
            strncat(out, " ", cap - strlen(out) - 1);
            strncat(out, x->valuestring, cap - strlen(out) - 1);
        }
        strncat(out, "; ", cap - strlen(out) - 1);
    }
}

/* No driver: one head, every other failure under it through a chain. */
static void test_chain_under_one_head(void **state)
{
    (void)state;
    const row rows[] = {
        {"gpu.nvml", AITK_CHECK_FAIL, NULL},
        {"gpu.cuda_driver", AITK_CHECK_FAIL, "gpu.nvml"},
        {"python.import_torch", AITK_CHECK_FAIL, "gpu.cuda_driver,gpu.driver_for_torch"},
        {"python.aitk_startup", AITK_CHECK_FAIL, "python.import_torch"},
        {"gpu.plugin", AITK_CHECK_FAIL, "gpu.cuda_driver"},
        {"hub.access", AITK_CHECK_WARN, NULL},
        {"deps.torch", AITK_CHECK_FAIL, "gpu.cuda_driver"},
    };
    cJSON *r = finished(rows, sizeof rows / sizeof *rows);
    char text[512];
    fix_first_text(r, text, sizeof text);
    assert_string_equal(text, "gpu.nvml: gpu.cuda_driver python.import_torch "
                              "python.aitk_startup gpu.plugin deps.torch; ");
    /* Of the two it names, the one that failed. */
    assert_string_equal(kept(r, "python.import_torch"), "gpu.cuda_driver");
    cJSON_Delete(r);
}

/* Links to a check that passed, warned, is absent or is the check itself
 * are dropped, and so are links of checks that passed or were skipped:
 * each such failure stands as a head of its own. */
static void test_loose_links_dropped(void **state)
{
    (void)state;
    const row rows[] = {
        {"gpu.nvml", AITK_CHECK_PASS, NULL},
        {"gpu.cuda_driver", AITK_CHECK_PASS, "gpu.nvml"},
        {"gpu.driver_for_torch", AITK_CHECK_FAIL, NULL},
        {"python.import_torch", AITK_CHECK_FAIL, "gpu.cuda_driver,gpu.driver_for_torch"},
        {"python.aitk_startup", AITK_CHECK_FAIL, "hub.access"},
        {"hub.access", AITK_CHECK_WARN, NULL},
        {"deps.torch", AITK_CHECK_FAIL, "no.such_check"},
        {"deps.cuda", AITK_CHECK_FAIL, "deps.cuda"},
        {"gpu.count", AITK_CHECK_PASS, "deps.cuda"},
        {"gpu.plugin", AITK_CHECK_SKIP, "deps.cuda"},
    };
    cJSON *r = finished(rows, sizeof rows / sizeof *rows);
    assert_string_equal(kept(r, "gpu.cuda_driver"), "");
    assert_string_equal(kept(r, "python.import_torch"), "gpu.driver_for_torch");
    assert_string_equal(kept(r, "python.aitk_startup"), "");
    assert_string_equal(kept(r, "deps.torch"), "");
    assert_string_equal(kept(r, "deps.cuda"), "");
    /* Only a failure or a warning follows anything. */
    assert_string_equal(kept(r, "gpu.count"), "");
    assert_string_equal(kept(r, "gpu.plugin"), "");
    char text[512];
    fix_first_text(r, text, sizeof text);
    assert_string_equal(text, "gpu.driver_for_torch: python.import_torch; "
                              "python.aitk_startup:; deps.torch:; deps.cuda:; ");
    cJSON_Delete(r);
}

/* A loop is broken at its first check in report order that is on it; a
 * warning can follow a failure and is named under it. */
static void test_loop_and_warning(void **state)
{
    (void)state;
    const row rows[] = {
        {"d.tail", AITK_CHECK_FAIL, "a.one"},
        {"a.one", AITK_CHECK_FAIL, "a.three"},
        {"a.two", AITK_CHECK_FAIL, "a.one"},
        {"a.three", AITK_CHECK_FAIL, "a.two"},
        {"b.warned", AITK_CHECK_WARN, "a.two"},
    };
    cJSON *r = finished(rows, sizeof rows / sizeof *rows);
    assert_string_equal(kept(r, "a.one"), "");
    /* A check that leads into the loop, before it in report order, keeps
     * its link. */
    assert_string_equal(kept(r, "d.tail"), "a.one");
    char text[256];
    fix_first_text(r, text, sizeof text);
    assert_string_equal(text, "a.one: d.tail a.two a.three b.warned; ");
    cJSON_Delete(r);
}

/* A report read back with a "follows" that is not a string. */
static void test_follows_not_a_string(void **state)
{
    (void)state;
    cJSON *checks = cJSON_Parse("[{\"id\":\"a.one\",\"status\":\"fail\",\"title\":\"A\"},"
                                "{\"id\":\"a.two\",\"status\":\"fail\",\"follows\":7}]");
    cJSON *first = aitk_report_link_causes(checks);
    assert_non_null(first);
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 1), "follows"));
    assert_int_equal(cJSON_GetArraySize(first), 2);
    cJSON_Delete(first);
    cJSON_Delete(checks);
}

static void test_sentence(void **state)
{
    (void)state;
    cJSON *e = cJSON_Parse("{\"id\":\"gpu.nvml\",\"title\":\"NVML\","
                           "\"explains\":[\"gpu.cuda_driver\",\"gpu.plugin\"]}");
    aitk_str s = AITK_STR_INIT;
    assert_true(aitk_fix_first_sentence(e, &s));
    assert_string_equal(aitk_str_cstr(&s),
                        "gpu.nvml (NVML): 2 other checks follow from it: gpu.cuda_driver, "
                        "gpu.plugin");
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(e, "explains"), 1);
    aitk_str_clear(&s);
    assert_true(aitk_fix_first_sentence(e, &s));
    assert_string_equal(aitk_str_cstr(&s),
                        "gpu.nvml (NVML): 1 other check follows from it: gpu.cuda_driver");
    /* A head that explains nothing is not repeated. */
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(e, "explains"), 0);
    aitk_str_clear(&s);
    assert_false(aitk_fix_first_sentence(e, &s));
    assert_string_equal(aitk_str_cstr(&s), "");
    aitk_str_free(&s);
    cJSON_Delete(e);
}

/* Each view names the head first and the link under the check it explains;
 * a report whose failures stand alone gets no "Fix first" line. */
static void test_rendered(void **state)
{
    (void)state;
    const row rows[] = {
        {"gpu.nvml", AITK_CHECK_FAIL, NULL},
        {"gpu.cuda_driver", AITK_CHECK_FAIL, "gpu.nvml"},
        {"deps.torch", AITK_CHECK_FAIL, NULL},
    };
    cJSON *r = finished(rows, sizeof rows / sizeof *rows);
    const char *head = "gpu.nvml (gpu.nvml): 1 other check follows from it: gpu.cuda_driver";
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_render_console(r, "1.2.3", 0, false, &out), AITK_OK);
    const char *t = aitk_str_cstr(&out);
    const char *verdict = strstr(t, "Verdict: FAIL");
    assert_non_null(verdict);
    assert_non_null(strstr(verdict, "\nFix first: gpu.nvml (gpu.nvml): 1 other check"));
    assert_null(strstr(t, "Fix first: deps.torch"));
    const char *link = strstr(t, "        follows from gpu.nvml: fixing that may clear this\n");
    assert_non_null(link);
    assert_true(link > strstr(t, "gpu.cuda_driver") && link < strstr(t, "deps.torch"));
    aitk_str_clear(&out);
    assert_int_equal(aitk_render_markdown(r, &out), AITK_OK);
    t = aitk_str_cstr(&out);
    assert_non_null(strstr(t, "**Fix first:** "));
    assert_non_null(strstr(t, head));
    assert_true(strstr(t, "**Fix first:**") < strstr(t, "### Failed"));
    assert_non_null(strstr(t, "  - follows from `gpu.nvml`: fixing that may clear this\n"));
    aitk_str_clear(&out);
    assert_int_equal(aitk_render_html(r, &out), AITK_OK);
    t = aitk_str_cstr(&out);
    assert_non_null(strstr(t, "<strong>Fix first:</strong> "));
    assert_non_null(strstr(t, head));
    assert_non_null(strstr(t, "follows from <code>gpu.nvml</code>"));
    aitk_str_clear(&out);
    assert_int_equal(aitk_render_junit(r, &out), AITK_OK);
    t = strstr(aitk_str_cstr(&out), "name=\"gpu.cuda_driver\"");
    assert_non_null(t);
    assert_non_null(strstr(t, "follows from gpu.nvml: fixing that may clear this"));
    cJSON_Delete(r);

    const row alone[] = {{"gpu.nvml", AITK_CHECK_FAIL, NULL},
                         {"deps.torch", AITK_CHECK_FAIL, NULL}};
    r = finished(alone, 2);
    aitk_str_clear(&out);
    assert_int_equal(aitk_render_console(r, "1.2.3", 0, false, &out), AITK_OK);
    assert_null(strstr(aitk_str_cstr(&out), "Fix first"));
    assert_null(strstr(aitk_str_cstr(&out), "follows from"));
    aitk_str_clear(&out);
    assert_int_equal(aitk_render_markdown(r, &out), AITK_OK);
    assert_null(strstr(aitk_str_cstr(&out), "Fix first"));
    aitk_str_free(&out);
    cJSON_Delete(r);
}

/* Redaction leaves check ids alone, in links as in ids: a host named
 * "deps" does not turn deps.torch into "[host-1].torch". */
static void test_redacted_links(void **state)
{
    (void)state;
    const row rows[] = {
        {"deps.torch", AITK_CHECK_FAIL, NULL},
        {"python.import_torch", AITK_CHECK_FAIL, "deps.torch"},
    };
    cJSON *r = finished(rows, sizeof rows / sizeof *rows);
    assert_int_equal(aitk_redact_report(r, "alice", "deps"), AITK_OK);
    assert_string_equal(kept(r, "python.import_torch"), "deps.torch");
    char text[256];
    fix_first_text(r, text, sizeof text);
    assert_string_equal(text, "deps.torch: python.import_torch; ");
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_under_one_head),
        cmocka_unit_test(test_loose_links_dropped),
        cmocka_unit_test(test_loop_and_warning),
        cmocka_unit_test(test_follows_not_a_string),
        cmocka_unit_test(test_sentence),
        cmocka_unit_test(test_rendered),
        cmocka_unit_test(test_redacted_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
