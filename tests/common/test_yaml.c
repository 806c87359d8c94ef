/* YAML tree: positions, typed getters, and every error naming file:line:col. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/yaml.h"

static aitk_yaml_doc *parse_ok(const char *text)
{
    aitk_yaml_doc *doc = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_yaml_parse("t.yaml", text, strlen(text), &doc, &err);
    if (st)
        fail_msg("parse failed: %s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    return doc;
}

static void expect_parse_error(const char *text, const char *needle)
{
    aitk_yaml_doc *doc = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_yaml_parse("t.yaml", text, strlen(text), &doc, &err), AITK_E_PARSE);
    assert_null(doc);
    if (!strstr(aitk_str_cstr(&err), needle))
        fail_msg("error '%s' lacks '%s'", aitk_str_cstr(&err), needle);
    aitk_str_free(&err);
}

static void test_tree_and_positions(void **state)
{
    (void)state;
    aitk_yaml_doc *doc = parse_ok("config:\n"
                                  "  network: {type: lora, linear: 16}\n"
                                  "  resolution: [512, 768, 1024]\n"
                                  "  name: \"16\"\n");
    aitk_yaml_node *cfg = aitk_yaml_get(doc->root, "config");
    assert_non_null(cfg);
    assert_int_equal(cfg->kind, AITK_YAML_MAP);
    aitk_yaml_node *lin = aitk_yaml_get(aitk_yaml_get(cfg, "network"), "linear");
    assert_int_equal(lin->line, 2);
    assert_int_equal(lin->col, 33); /* "  network: {type: lora, linear: 16}" */
    long v = 0;
    assert_int_equal(aitk_yaml_long(doc, lin, &v, NULL), AITK_OK);
    assert_int_equal(v, 16);
    aitk_yaml_node *res = aitk_yaml_get(cfg, "resolution");
    assert_int_equal(res->kind, AITK_YAML_SEQ);
    assert_int_equal(res->count, 3);
    assert_string_equal(res->items[2]->text, "1024");
    aitk_yaml_node *name = aitk_yaml_get(cfg, "name");
    assert_true(name->quoted);
    assert_null(aitk_yaml_get(cfg, "missing"));
    assert_null(aitk_yaml_get(res, "anything")); /* not a map */
    aitk_yaml_free(doc);
}

static void test_typed_getter_errors_name_the_place(void **state)
{
    (void)state;
    aitk_yaml_doc *doc = parse_ok("a: abc\nb: [1]\nc: maybe\nd: 1e-4\ne: Yes\nf: 1e999\n");
    aitk_str err = AITK_STR_INIT;
    double d;
    long l;
    bool b;
    assert_int_equal(aitk_yaml_double(doc, aitk_yaml_get(doc->root, "a"), &d, &err), AITK_E_PARSE);
    assert_string_equal(aitk_str_cstr(&err), "t.yaml:1:4: expected a number, found 'abc'");
    aitk_str_clear(&err);
    assert_int_equal(aitk_yaml_long(doc, aitk_yaml_get(doc->root, "b"), &l, &err), AITK_E_PARSE);
    assert_string_equal(aitk_str_cstr(&err), "t.yaml:2:4: expected an integer, found a list");
    aitk_str_clear(&err);
    assert_int_equal(aitk_yaml_bool(doc, aitk_yaml_get(doc->root, "c"), &b, &err), AITK_E_PARSE);
    assert_string_equal(aitk_str_cstr(&err), "t.yaml:3:4: expected true or false, found 'maybe'");
    aitk_str_clear(&err);
    assert_int_equal(aitk_yaml_double(doc, aitk_yaml_get(doc->root, "d"), &d, &err), AITK_OK);
    assert_true(d > 0.99e-4 && d < 1.01e-4);
    assert_int_equal(aitk_yaml_bool(doc, aitk_yaml_get(doc->root, "e"), &b, &err), AITK_OK);
    assert_true(b);
    assert_int_equal(aitk_yaml_double(doc, aitk_yaml_get(doc->root, "f"), &d, &err), AITK_E_PARSE);
    aitk_str_clear(&err);
    assert_int_equal(aitk_yaml_long(doc, aitk_yaml_get(doc->root, "zz"), &l, &err), AITK_E_PARSE);
    assert_string_equal(aitk_str_cstr(&err), "t.yaml: missing an integer");
    aitk_str_free(&err);
    aitk_yaml_free(doc);
}

/* Quoted scalars are strings, as PyYAML reads them: `quantize: "false"` is
 * true in Python, so it must not read as false here; neither is "4" a number. */
static void test_quoted_scalars_are_strings(void **state)
{
    (void)state;
    aitk_yaml_doc *doc = parse_ok("q: \"false\"\nb: '4'\nr: \"0.5\"\n");
    aitk_str err = AITK_STR_INIT;
    bool b;
    long l;
    double d;
    assert_int_equal(aitk_yaml_bool(doc, aitk_yaml_get(doc->root, "q"), &b, &err), AITK_E_PARSE);
    assert_non_null(strstr(aitk_str_cstr(&err), "t.yaml:1:4: expected true or false, found the "
                                                "quoted string \"false\""));
    aitk_str_clear(&err);
    assert_int_equal(aitk_yaml_long(doc, aitk_yaml_get(doc->root, "b"), &l, &err), AITK_E_PARSE);
    assert_non_null(strstr(aitk_str_cstr(&err), "t.yaml:2:4:"));
    aitk_str_clear(&err);
    assert_int_equal(aitk_yaml_double(doc, aitk_yaml_get(doc->root, "r"), &d, &err), AITK_E_PARSE);
    const char *text = NULL;
    assert_int_equal(aitk_yaml_string(doc, aitk_yaml_get(doc->root, "q"), &text, &err), AITK_OK);
    assert_string_equal(text, "false");
    aitk_str_free(&err);
    aitk_yaml_free(doc);
}

static void test_nulls(void **state)
{
    (void)state;
    aitk_yaml_doc *doc = parse_ok("a: null\nb: ~\nc:\nd: \"null\"\ne: nil\nf: {x: 1}\ng: NULL\n");
    const aitk_yaml_node *root = doc->root;
    assert_true(aitk_yaml_is_null(aitk_yaml_get(root, "a")));
    assert_true(aitk_yaml_is_null(aitk_yaml_get(root, "b")));
    assert_true(aitk_yaml_is_null(aitk_yaml_get(root, "c")));
    assert_false(aitk_yaml_is_null(aitk_yaml_get(root, "d"))); /* the string "null" */
    assert_false(aitk_yaml_is_null(aitk_yaml_get(root, "e")));
    assert_false(aitk_yaml_is_null(aitk_yaml_get(root, "f")));
    assert_true(aitk_yaml_is_null(aitk_yaml_get(root, "g")));
    assert_false(aitk_yaml_is_null(NULL));
    aitk_yaml_free(doc);
}

static void test_unterminated_quote_is_positioned(void **state)
{
    (void)state;
    /* The defect of the upstream OmniGen2 example config. */
    expect_parse_error("model:\n  name_or_path: \"OmniGen2/OmniGen2\n  arch: omnigen2\n",
                       "while scanning a quoted scalar at line 2, column 17");
    expect_parse_error("a: [1, 2\n", "t.yaml:");
}

/* Errors of libyaml's reader (encoding, control characters) come with a
 * byte offset, not a mark; they must still point at the line and column. */
static void test_reader_errors_are_positioned(void **state)
{
    (void)state;
    expect_parse_error("a: 1\nb: 2\nc: caf\xe9 x\n", "t.yaml:3:7: invalid trailing UTF-8 octet");
    expect_parse_error("a: 1\nb: \x07\n", "t.yaml:2:4: control characters are not allowed");
    expect_parse_error("a: \xc3\xa9t\xc3\xa9\n\x01\n", "t.yaml:2:1:");
}

static void test_refusals(void **state)
{
    (void)state;
    expect_parse_error("a: 1\nb: 2\na: 3\n", "t.yaml:3:1: duplicate key 'a' (first at line 1)");
    expect_parse_error("a: &x 1\nb: *x\n", "t.yaml:2:4: YAML aliases");
    expect_parse_error("? [1, 2]\n: v\n", "a mapping key must be a plain value");
    aitk_str deep = AITK_STR_INIT;
    for (int i = 0; i < 100; i++)
        aitk_str_append(&deep, "[");
    expect_parse_error(aitk_str_cstr(&deep), "nested deeper than 64 levels");
    aitk_str_free(&deep);
}

/* A mapping of 100k keys (the 4 MB config limit allows about as many): every
 * key is found, in file order with its line, and a duplicate at the end is
 * still reported with both lines. The duplicate check once scanned every
 * earlier key; how fast this is now is a benchmark's business, not a test's. */
#define BIG_KEYS 100000

static void big_mapping(aitk_str *text)
{
    aitk_str_append(text, "big:\n");
    for (int i = 0; i < BIG_KEYS; i++)
        aitk_str_appendf(text, "  key%d: %d\n", i, i * 3);
}

static void test_big_mapping(void **state)
{
    (void)state;
    aitk_str text = AITK_STR_INIT;
    big_mapping(&text);
    aitk_yaml_doc *doc = parse_ok(aitk_str_cstr(&text));
    const aitk_yaml_node *big = aitk_yaml_get(doc->root, "big");
    assert_non_null(big);
    assert_int_equal(big->kind, AITK_YAML_MAP);
    assert_int_equal(big->count, BIG_KEYS);
    static const int probes[] = {0, 1, 15, 16, 17, BIG_KEYS / 2, BIG_KEYS - 1};
    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
        int k = probes[i];
        char name[32], want[32];
        snprintf(name, sizeof name, "key%d", k);
        snprintf(want, sizeof want, "%d", k * 3);
        assert_string_equal(big->pairs[k].key->text, name);
        assert_int_equal(big->pairs[k].key->line, k + 2);
        assert_int_equal(big->pairs[k].key->col, 3);
        const aitk_yaml_node *v = aitk_yaml_get(big, name);
        assert_non_null(v);
        assert_string_equal(v->text, want);
    }
    assert_null(aitk_yaml_get(big, "key100000"));
    aitk_yaml_free(doc);

    /* A duplicate of a middle key, after all of them. */
    aitk_str_appendf(&text, "  key%d: again\n", BIG_KEYS / 2);
    char want[96];
    snprintf(want, sizeof want, "t.yaml:%d:3: duplicate key 'key%d' (first at line %d)",
             BIG_KEYS + 2, BIG_KEYS / 2, BIG_KEYS / 2 + 2);
    expect_parse_error(aitk_str_cstr(&text), want);
    aitk_str_free(&text);
}

/* Mappings of every size around the point where the duplicate check changes
 * from a scan to a table, and where the table grows: any earlier key,
 * repeated, is found, and a new key is not mistaken for one. */
static void test_duplicates_at_every_size(void **state)
{
    (void)state;
    for (int n = 1; n <= 80; n++) {
        aitk_str text = AITK_STR_INIT;
        for (int i = 0; i < n; i++)
            aitk_str_appendf(&text, "k%d: %d\n", i, i);
        aitk_str ok = AITK_STR_INIT;
        aitk_str_appendf(&ok, "%sk%d: new\n", aitk_str_cstr(&text), n);
        aitk_yaml_doc *doc = parse_ok(aitk_str_cstr(&ok));
        assert_int_equal(doc->root->count, (size_t)n + 1);
        aitk_yaml_free(doc);
        aitk_str_free(&ok);
        for (int d = 0; d < n; d++) {
            aitk_str dup = AITK_STR_INIT;
            aitk_str_appendf(&dup, "%sk%d: again\n", aitk_str_cstr(&text), d);
            char want[80];
            snprintf(want, sizeof want, "t.yaml:%d:1: duplicate key 'k%d' (first at line %d)",
                     n + 1, d, d + 1);
            expect_parse_error(aitk_str_cstr(&dup), want);
            aitk_str_free(&dup);
        }
        aitk_str_free(&text);
    }
}

static void test_empty_and_multi_document(void **state)
{
    (void)state;
    aitk_yaml_doc *doc = parse_ok("");
    assert_null(doc->root);
    aitk_yaml_free(doc);
    doc = parse_ok("--- 1\n--- 2\n"); /* first document only */
    assert_string_equal(doc->root->text, "1");
    aitk_yaml_free(doc);
}

static void test_check_keys(void **state)
{
    (void)state;
    aitk_yaml_doc *doc = parse_ok("value: 1\nsoruce: x\n");
    static const char *const known[] = {"value", "source", NULL};
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_yaml_check_keys(doc, doc->root, known, "a rule", &err), AITK_E_PARSE);
    assert_string_equal(aitk_str_cstr(&err),
                        "t.yaml:2:1: unknown key 'soruce' in a rule (known: value, source)");
    aitk_str_free(&err);
    /* Without an error string only the status comes back (it crashed). */
    assert_int_equal(aitk_yaml_check_keys(doc, doc->root, known, "a rule", NULL), AITK_E_PARSE);
    aitk_yaml_free(doc);
}

/* Every allocation in the parser may fail: the result is AITK_E_NOMEM or
 * success, never a crash or a leak (ASan checks the latter). */
static void test_allocation_failures(void **state)
{
    (void)state;
    const char *text = "a: {b: [1, 2, {c: d}], e: 'f'}\ng: [h, i]\n";
    int failures = 0;
    for (long n = 0; n < 200; n++) {
        aitk_yaml_doc *doc = NULL;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_yaml_parse("t.yaml", text, strlen(text), &doc, NULL);
        aitk_alloc_fail_after(-1);
        if (st == AITK_OK) {
            assert_non_null(aitk_yaml_get(doc->root, "g"));
            aitk_yaml_free(doc);
            break;
        }
        assert_int_equal(st, AITK_E_NOMEM);
        assert_null(doc);
        failures++;
    }
    assert_true(failures > 10); /* the seam was really exercised */

    /* A mapping with enough keys for the duplicate check's table, which is
     * allocated (and grown) too. */
    aitk_str big = AITK_STR_INIT;
    for (int i = 0; i < 40; i++)
        aitk_str_appendf(&big, "k%d: {v: %d}\n", i, i);
    bool done = false;
    for (long n = 0; n < 2000 && !done; n++) {
        aitk_yaml_doc *doc = NULL;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_yaml_parse("t.yaml", aitk_str_cstr(&big), big.len, &doc, NULL);
        aitk_alloc_fail_after(-1);
        if (st == AITK_OK) {
            assert_int_equal(doc->root->count, 40);
            aitk_yaml_free(doc);
            done = true;
        } else {
            assert_int_equal(st, AITK_E_NOMEM);
            assert_null(doc);
        }
    }
    assert_true(done);
    aitk_str_free(&big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_and_positions),
        cmocka_unit_test(test_typed_getter_errors_name_the_place),
        cmocka_unit_test(test_unterminated_quote_is_positioned),
        cmocka_unit_test(test_reader_errors_are_positioned),
        cmocka_unit_test(test_quoted_scalars_are_strings),
        cmocka_unit_test(test_nulls),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_big_mapping),
        cmocka_unit_test(test_duplicates_at_every_size),
        cmocka_unit_test(test_empty_and_multi_document),
        cmocka_unit_test(test_check_keys),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
