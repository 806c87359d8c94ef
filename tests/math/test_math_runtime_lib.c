/* kernels/cuda/runtime_lib.c: how the plugin opens cuDNN and NCCL, tried on
 * libm, which every Linux machine has: a table filled by name, a missing
 * symbol and a missing library each refused with the text the report shows,
 * and no half-filled table left behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <string.h>

#include "kernels/cuda/runtime_lib.h"

typedef struct {
    double (*cos)(double);
    double (*sqrt)(double);
} math_api;

static const char *const libm[] = {"libm.so.6", "libm.so"};

static void test_fills_the_table(void **state)
{
    (void)state;
    math_api m = {0};
    char error[128] = "";
    const aitk_lib_symbol symbols[] = {{"cos", &m.cos}, {"sqrt", &m.sqrt}};
    void *lib = aitk_lib_open(libm, 2, symbols, 2, error, sizeof error);
    assert_non_null(lib);
    assert_string_equal(error, "");
    assert_true(m.cos(0.0) == 1.0);
    assert_true(m.sqrt(16.0) == 4.0);
    dlclose(lib);
}

static void test_missing_symbol_clears_the_table(void **state)
{
    (void)state;
    math_api m = {0};
    double (*absent)(double) = NULL;
    char error[128] = "";
    const aitk_lib_symbol symbols[] = {
        {"cos", &m.cos}, {"aitk_no_such_function", &absent}, {"sqrt", &m.sqrt}};
    assert_null(aitk_lib_open(libm, 2, symbols, 3, error, sizeof error));
    assert_string_equal(error, "dlsym aitk_no_such_function: missing");
    assert_null(m.cos); /* resolved before the missing one, then cleared */
    assert_null(m.sqrt);
    assert_null(absent);
}

/* The second name is a fallback: it loads when the first does not. */
static void test_falls_back_to_the_next_name(void **state)
{
    (void)state;
    math_api m = {0};
    char error[128] = "";
    const char *const names[] = {"libaitk-absent.so.9", "libm.so.6"};
    const aitk_lib_symbol symbols[] = {{"cos", &m.cos}};
    void *lib = aitk_lib_open(names, 2, symbols, 1, error, sizeof error);
    assert_non_null(lib);
    assert_true(m.cos(0.0) == 1.0);
    dlclose(lib);
}

/* When no name loads, the text is the loader's for the first name, not for
 * the fallback tried last. */
static void test_missing_library_names_the_first(void **state)
{
    (void)state;
    math_api m = {0};
    char error[256] = "";
    const char *const names[] = {"libaitk-absent.so.9", "libaitk-fallback.so"};
    const aitk_lib_symbol symbols[] = {{"cos", &m.cos}};
    assert_null(aitk_lib_open(names, 2, symbols, 1, error, sizeof error));
    assert_non_null(strstr(error, "dlopen libaitk-absent.so.9: libaitk-absent.so.9: "));
    assert_non_null(strstr(error, "cannot open shared object file"));
    assert_null(strstr(error, "libaitk-fallback"));
    assert_null(m.cos);
}

/* A text too long for the buffer ends in "...", not mid-word. */
static void test_cut_text_is_marked(void **state)
{
    (void)state;
    math_api m = {0};
    char error[24] = "";
    const char *const names[] = {"libaitk-absent.so.9"};
    const aitk_lib_symbol symbols[] = {{"cos", &m.cos}};
    assert_null(aitk_lib_open(names, 1, symbols, 1, error, sizeof error));
    assert_int_equal(strlen(error), sizeof error - 1);
    assert_string_equal(error + sizeof error - 4, "...");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fills_the_table),
        cmocka_unit_test(test_missing_symbol_clears_the_table),
        cmocka_unit_test(test_falls_back_to_the_next_name),
        cmocka_unit_test(test_missing_library_names_the_first),
        cmocka_unit_test(test_cut_text_is_marked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
