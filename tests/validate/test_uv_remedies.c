/* pip commands said as uv's (validate/probes/uv_remedies.c): each form the
 * remedies write, and the words that are not commands left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "validate/probes/uv_remedies.h"

static void expect(const char *remedy, const char *env, const char *want)
{
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_uv_remedy_text(remedy, env, &out), AITK_OK);
    assert_string_equal(aitk_str_cstr(&out), want);
    aitk_str_free(&out);
}

static void test_commands(void **state)
{
    (void)state;
    expect("With this environment's Python: python -m pip install \"diffusers>=0.33\"", "/e",
           "With this environment's Python: uv pip install --python /e \"diffusers>=0.33\"");
    expect("pip uninstall -y torch, then pip install -r requirements.txt", "/e",
           "uv pip uninstall --python /e -y torch, then uv pip install --python /e -r "
           "requirements.txt");
    expect("Upgrade it (`pip install -U bitsandbytes`)", "/e",
           "Upgrade it (`uv pip install --python /e -U bitsandbytes`)");
    /* A folder with a space is quoted. */
    expect("pip install torch", "/home/a b/venv",
           "uv pip install --python \"/home/a b/venv\" torch");
}

static void test_not_commands(void **state)
{
    (void)state;
    /* Nothing changed: the output stays empty. */
    expect("uv pip install --python /x torch", "/e", "");
    expect("pipx install aitk; pip's cache; pip show torch; apip install x", "/e", "");
    expect("run pip installers", "/e", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands),
        cmocka_unit_test(test_not_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
