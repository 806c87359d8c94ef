/* aitk_str: growth, formatting, sticky allocation failure, steal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "common/alloc.h"
#include "common/str.h"

static void test_append_and_format(void **state)
{
    (void)state;
    aitk_str s = AITK_STR_INIT;
    assert_string_equal(aitk_str_cstr(&s), "");
    assert_int_equal(aitk_str_append(&s, "abc"), AITK_OK);
    assert_int_equal(aitk_str_appendf(&s, "-%d-%s", 42, "x"), AITK_OK);
    assert_int_equal(aitk_str_appendc(&s, '!'), AITK_OK);
    assert_string_equal(aitk_str_cstr(&s), "abc-42-x!");
    assert_int_equal(s.len, 9);
    aitk_str_clear(&s);
    assert_string_equal(aitk_str_cstr(&s), "");
    aitk_str_free(&s);
}

static void test_grows_past_initial_capacity(void **state)
{
    (void)state;
    aitk_str s = AITK_STR_INIT;
    for (int i = 0; i < 10000; i++)
        assert_int_equal(aitk_str_appendf(&s, "%04d", i % 10000), AITK_OK);
    assert_int_equal(s.len, 40000);
    assert_memory_equal(s.ptr + 4 * 9999, "9999", 4);
    assert_int_equal(strlen(s.ptr), 40000);
    aitk_str_free(&s);
}

static void test_allocation_failure_is_sticky(void **state)
{
    (void)state;
    aitk_str s = AITK_STR_INIT;
    assert_int_equal(aitk_str_append(&s, "kept"), AITK_OK);
    /* Force the next growth to fail: the text so far survives, later appends are refused. */
    char big[200];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    aitk_alloc_fail_after(0);
    assert_int_equal(aitk_str_append(&s, big), AITK_E_NOMEM);
    assert_int_equal(aitk_str_status(&s), AITK_E_NOMEM);
    assert_string_equal(aitk_str_cstr(&s), "kept");
    assert_int_equal(aitk_str_append(&s, "y"), AITK_E_NOMEM);
    assert_null(aitk_str_steal(&s)); /* a failed string cannot be handed on as complete */
    assert_null(s.ptr);
}

static void test_steal_hands_over_buffer(void **state)
{
    (void)state;
    aitk_str s = AITK_STR_INIT;
    aitk_str_append(&s, "owned");
    char *p = aitk_str_steal(&s);
    assert_string_equal(p, "owned");
    assert_null(s.ptr);
    assert_int_equal(s.len, 0);
    aitk_free(p);
    aitk_str empty = AITK_STR_INIT;
    p = aitk_str_steal(&empty);
    assert_string_equal(p, "");
    aitk_free(p);
}

/* Ill-formed UTF-8 per the Unicode standard (Table 3-7): each bad byte
 * becomes U+FFFD; well-formed text is left alone (NULL). */
static void test_utf8_repair(void **state)
{
    (void)state;
#define FFFD "\xEF\xBF\xBD"
    static const struct {
        const char *in, *out; /* out NULL: already well-formed */
    } cases[] = {
        {"plain ascii", NULL},
        {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", NULL}, /* é, €, an emoji */
        {"caf\xE9", "caf" FFFD},                                /* Latin-1 é */
        {"caf\xE9 x", "caf" FFFD " x"},
        {"\xC0\xAF", FFFD FFFD},                                /* overlong '/' */
        {"\xE0\x80\xAF", FFFD FFFD FFFD},                        /* overlong, 3 bytes */
        {"\xED\xA0\x80", FFFD FFFD FFFD},                        /* a UTF-16 surrogate */
        {"\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD},                /* beyond U+10FFFF */
        {"ok\xE2\x82", "ok" FFFD FFFD},                         /* cut short at the end */
        {"\x80x", FFFD "x"},                                    /* stray continuation */
    };
#undef FFFD
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bool nomem = true;
        char *got = aitk_utf8_repaired(cases[i].in, &nomem);
        assert_false(nomem);
        if (!cases[i].out) {
            if (got)
                fail_msg("case %zu: well-formed input was changed", i);
        } else {
            if (!got || strcmp(got, cases[i].out) != 0)
                fail_msg("case %zu: wrong repair", i);
        }
        aitk_free(got);
    }
}

/* Terminal-safe text: every control sequence is visible, never acted on;
 * newline, tab and ordinary UTF-8 (é, U+00A0 and above) pass unchanged. */
static void test_printable(void **state)
{
    (void)state;
    aitk_str s = AITK_STR_INIT;
    assert_int_equal(aitk_str_append_printable(
                         &s, "a\x1b]0;T\x07" "b\x1b[2J\tc\n\x7f \xc2\x9b" "1m caf\xc3\xa9 \xc2\xa0.", true),
                     AITK_OK);
    assert_string_equal(aitk_str_cstr(&s),
                        "a\\x1b]0;T\\x07b\\x1b[2J\tc\n\\u007f \\u009b1m caf\xc3\xa9 \xc2\xa0.");
    for (size_t i = 0; i < s.len; i++)
        assert_true((unsigned char)s.ptr[i] >= 0x20 || s.ptr[i] == '\n' || s.ptr[i] == '\t');
    /* One line: newline and tab are escaped too. */
    aitk_str_clear(&s);
    assert_int_equal(aitk_str_append_printable(&s, "lib\nx\t.so", false), AITK_OK);
    assert_string_equal(aitk_str_cstr(&s), "lib\\x0ax\\x09.so");
    /* JSON printed to a terminal stays JSON: cJSON leaves DEL and C1 raw in
     * strings, and their escapes here are JSON's own \u form. */
    aitk_str_clear(&s);
    assert_int_equal(aitk_str_append_printable(&s, "{\n\t\"m\": \"a\x7f\xc2\x9b\"\n}", true),
                     AITK_OK);
    assert_string_equal(aitk_str_cstr(&s), "{\n\t\"m\": \"a\\u007f\\u009b\"\n}");
    aitk_str_free(&s);
}

static void test_text_helpers(void **state)
{
    (void)state;
    assert_true(aitk_text_ends_with("model.safetensors", ".safetensors"));
    assert_true(aitk_text_ends_with("x", ""));
    assert_false(aitk_text_ends_with("json", ".json"));
    assert_false(aitk_text_ends_with("a.JSON", ".json"));
    assert_true(aitk_text_blank(NULL));
    assert_true(aitk_text_blank(""));
    assert_true(aitk_text_blank(" \t\r\n"));
    assert_false(aitk_text_blank("  hf_x "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_and_format), cmocka_unit_test(test_printable),
        cmocka_unit_test(test_grows_past_initial_capacity),
        cmocka_unit_test(test_allocation_failure_is_sticky),
        cmocka_unit_test(test_steal_hands_over_buffer),
        cmocka_unit_test(test_utf8_repair),
        cmocka_unit_test(test_text_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
