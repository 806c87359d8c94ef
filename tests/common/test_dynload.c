/* Dynamic loading through the real loader: a stub library built by the
 * test build, a missing library, a missing symbol. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "common/dynload.h"

static void test_open_path_and_call(void **state)
{
    (void)state;
    aitk_dl *dl = NULL;
    aitk_str err = AITK_STR_INIT, path = AITK_STR_INIT;
    assert_int_equal(aitk_dl_open(AITK_STUB_LIB, AITK_DL_NOW, &dl, &err), AITK_OK);
    void *sym = NULL;
    assert_int_equal(aitk_dl_sym(dl, "aitk_stub_answer", &sym, &err), AITK_OK);
    int (*answer)(void);
    memcpy(&answer, &sym, sizeof answer);
    assert_int_equal(answer(), 42);
    assert_int_equal(aitk_dl_path(dl, &path), AITK_OK);
#ifdef _WIN32
    assert_non_null(strstr(aitk_str_cstr(&path), "aitk_teststub.dll"));
#else
    assert_non_null(strstr(aitk_str_cstr(&path), "libaitk_teststub.so"));
#endif
    aitk_dl_close(dl);
    aitk_str_free(&err);
    aitk_str_free(&path);
}

static void test_missing_symbol_keeps_loader_text(void **state)
{
    (void)state;
    aitk_dl *dl = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_dl_open(AITK_STUB_LIB, 0, &dl, &err), AITK_OK);
    void *sym = (void *)1;
    assert_int_equal(aitk_dl_sym(dl, "nvmlInit_v2", &sym, &err), AITK_E_DLSYM);
    assert_null(sym);
    assert_non_null(strstr(aitk_str_cstr(&err), "nvmlInit_v2"));
    aitk_dl_close(dl);
    aitk_str_free(&err);
}

static void test_missing_library_keeps_loader_text(void **state)
{
    (void)state;
    aitk_dl *dl = (aitk_dl *)1;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_dl_open("libaitk-does-not-exist.so.7", 0, &dl, &err), AITK_E_DLOPEN);
    assert_null(dl);
    /* The loader's own sentence, not a paraphrase: glibc's, or Windows' with
     * the error number Python shows ([WinError 126]). */
#ifdef _WIN32
    assert_non_null(strstr(aitk_str_cstr(&err), "libaitk-does-not-exist.so.7"));
    assert_non_null(strstr(aitk_str_cstr(&err), "[WinError 126]"));
#else
    assert_non_null(strstr(aitk_str_cstr(&err), "libaitk-does-not-exist.so.7: cannot open shared object file"));
#endif
    aitk_str_free(&err);
}

static void test_open_first_falls_through(void **state)
{
    (void)state;
    const char *names[] = {"libaitk-nope-1.so", "libaitk-nope-2.so", AITK_STUB_LIB, NULL};
    aitk_dl *dl = NULL;
    const char *which = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_dl_open_first(names, 0, &dl, &which, &err), AITK_OK);
    assert_string_equal(which, AITK_STUB_LIB);
    assert_non_null(strstr(aitk_str_cstr(&err), "libaitk-nope-1.so"));
    assert_non_null(strstr(aitk_str_cstr(&err), "; libaitk-nope-2.so"));
    aitk_dl_close(dl);
    const char *none[] = {"libaitk-nope-3.so", NULL};
    aitk_str_clear(&err);
    assert_int_equal(aitk_dl_open_first(none, 0, &dl, &which, &err), AITK_E_DLOPEN);
    assert_null(dl);
    aitk_str_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_path_and_call),
        cmocka_unit_test(test_missing_symbol_keeps_loader_text),
        cmocka_unit_test(test_missing_library_keeps_loader_text),
        cmocka_unit_test(test_open_first_falls_through),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
