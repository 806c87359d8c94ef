/* The stop request (common/stop.h): the signal it keeps and the one
 * wording every message takes from it. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/stop.h"

static void test_no_request(void **state)
{
    (void)state;
    aitk_stop_reset();
    assert_false(aitk_stop_requested());
    assert_int_equal(aitk_stop_signal(), 0);
}

static void test_words_name_the_signal(void **state)
{
    (void)state;
    aitk_stop_reset();
    aitk_stop_request(SIGINT);
    assert_true(aitk_stop_requested());
    assert_int_equal(aitk_stop_signal(), SIGINT);
    assert_string_equal(aitk_stop_words(), "interrupted (Ctrl-C)");
    aitk_stop_reset();
    aitk_stop_request(SIGTERM);
    assert_string_equal(aitk_stop_words(), "interrupted (SIGTERM)");
    aitk_stop_reset();
    aitk_stop_request(0); /* a request without a signal: no cause named */
    assert_true(aitk_stop_requested());
    assert_int_equal(aitk_stop_signal(), 0);
    assert_string_equal(aitk_stop_words(), "interrupted");
    aitk_stop_reset();
}

/* `timeout` sends SIGTERM and then perhaps SIGINT: the first signal is the
 * one that stopped the run. */
static void test_first_signal_is_kept(void **state)
{
    (void)state;
    aitk_stop_reset();
    aitk_stop_request(SIGTERM);
    aitk_stop_request(SIGINT);
    assert_int_equal(aitk_stop_signal(), SIGTERM);
    assert_string_equal(aitk_stop_words(), "interrupted (SIGTERM)");
    aitk_stop_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_request),
        cmocka_unit_test(test_words_name_the_signal),
        cmocka_unit_test(test_first_signal_is_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
