/* Status codes: every code has distinct text and name; out-of-range is safe;
 * docs/checks.md documents every code (the curl habit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/status.h"

static void test_every_code_has_text(void **state)
{
    (void)state;
    for (int i = 0; i < AITK_STATUS_COUNT; i++) {
        assert_non_null(aitk_strerror((aitk_status)i));
        assert_true(strlen(aitk_strerror((aitk_status)i)) > 0);
        for (int j = 0; j < i; j++) {
            assert_string_not_equal(aitk_strerror((aitk_status)i), aitk_strerror((aitk_status)j));
            assert_string_not_equal(aitk_status_name((aitk_status)i),
                                    aitk_status_name((aitk_status)j));
        }
    }
    assert_int_equal(AITK_OK, 0);
    assert_string_equal(aitk_status_name(AITK_E_IO), "AITK_E_IO");
}

static void test_out_of_range(void **state)
{
    (void)state;
    assert_string_equal(aitk_strerror((aitk_status)9999), "unknown status code");
    assert_string_equal(aitk_strerror((aitk_status)-1), "unknown status code");
}

static void test_docs_list_every_code(void **state)
{
    (void)state;
    char *doc = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(AITK_SOURCE_DIR "/docs/checks.md", 1 << 20, &doc, &len, NULL),
                     AITK_OK);
    for (int i = 0; i < AITK_STATUS_COUNT; i++) {
        const char *name = aitk_status_name((aitk_status)i);
        if (!strstr(doc, name))
            fail_msg("docs/checks.md does not document %s", name);
    }
    aitk_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_has_text),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_docs_list_every_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
