/* reports/name_index: the entries of a report list by name, as compare
 * matches them: the first of equal names in array order, "" for an entry
 * without the field, nothing for a name no entry has or a list that is not
 * one. The lists are written here; each answer is an array position the
 * test knows from the text it wrote. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "reports/name_index.h"

static void test_lookups(void **state)
{
    (void)state;
    cJSON *list = cJSON_Parse("[{\"name\": \"b\"}, {\"name\": \"a\"}, {\"name\": \"c\"},"
                              " {\"name\": \"a\"}, {\"other\": 1}, {\"name\": 7},"
                              " {\"name\": \"b\"}, {\"name\": \"a\"}]");
    assert_non_null(list);
    aitk_name_index ix;
    assert_int_equal(aitk_name_index_build(&ix, list, "name"), AITK_OK);
    assert_int_equal(ix.count, 8);
    static const struct {
        const char *name;
        int first; /* array position, -1: none */
    } want[] = {{"a", 1}, {"b", 0}, {"c", 2}, {"", 4}, {"d", -1}, {"A", -1}, {"7", -1}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const aitk_named_entry *e = aitk_name_index_first(&ix, want[i].name);
        if (want[i].first < 0) {
            assert_null(e);
            assert_null(aitk_name_index_find(&ix, want[i].name));
            continue;
        }
        if (!e || (int)e->order != want[i].first)
            fail_msg("'%s': want position %d, got %d", want[i].name, want[i].first,
                     e ? (int)e->order : -1);
        assert_ptr_equal(e->node, cJSON_GetArrayItem(list, want[i].first));
        assert_ptr_equal(aitk_name_index_find(&ix, want[i].name), e->node);
    }
    aitk_name_index_free(&ix);
    assert_null(ix.entries);

    /* Not a list, or an empty one: no entries, no lookups. */
    cJSON *obj = cJSON_Parse("{\"name\": \"a\"}"), *empty = cJSON_CreateArray();
    assert_int_equal(aitk_name_index_build(&ix, obj, "name"), AITK_OK);
    assert_int_equal(ix.count, 0);
    assert_null(aitk_name_index_find(&ix, "a"));
    assert_int_equal(aitk_name_index_build(&ix, empty, "name"), AITK_OK);
    assert_null(aitk_name_index_find(&ix, ""));
    assert_int_equal(aitk_name_index_build(&ix, NULL, "name"), AITK_OK);
    assert_null(aitk_name_index_find(&ix, "a"));
    aitk_name_index_free(&ix);
    cJSON_Delete(obj);
    cJSON_Delete(empty);
    cJSON_Delete(list);
}

/* A workload is its name and, off the CPU, its backend: a GPU run's
 * flux1-dev on the GPU and on the CPU are two entries, each found. */
static void test_workload_key(void **state)
{
    (void)state;
    cJSON *a = cJSON_Parse("[{\"name\": \"flux1-dev\", \"backend\": \"cuda\"},"
                           " {\"name\": \"flux1-dev\", \"backend\": \"cpu\"},"
                           " {\"name\": \"chroma\"}]");
    assert_non_null(a);
    aitk_str buf = AITK_STR_INIT;
    assert_string_equal(aitk_entry_key(cJSON_GetArrayItem(a, 0), AITK_WORKLOAD_KEY, &buf),
                        "flux1-dev (cuda)");
    assert_string_equal(aitk_entry_key(cJSON_GetArrayItem(a, 1), AITK_WORKLOAD_KEY, &buf),
                        "flux1-dev");
    assert_string_equal(aitk_entry_key(cJSON_GetArrayItem(a, 2), AITK_WORKLOAD_KEY, &buf),
                        "chroma");
    assert_string_equal(aitk_entry_key(cJSON_GetArrayItem(a, 0), "name", &buf), "flux1-dev");
    aitk_name_index ix;
    assert_int_equal(aitk_name_index_build(&ix, a, AITK_WORKLOAD_KEY), AITK_OK);
    assert_ptr_equal(aitk_name_index_find(&ix, "flux1-dev (cuda)"), cJSON_GetArrayItem(a, 0));
    assert_ptr_equal(aitk_name_index_find(&ix, "flux1-dev"), cJSON_GetArrayItem(a, 1));
    assert_ptr_equal(aitk_name_index_find(&ix, "chroma"), cJSON_GetArrayItem(a, 2));
    assert_null(aitk_name_index_find(&ix, "chroma (cuda)"));
    aitk_name_index_free(&ix);
    aitk_str_free(&buf);
    cJSON_Delete(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lookups),
                                       cmocka_unit_test(test_workload_key)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
