/* The gpu.plugin check with a backend that answers: the fake backend
 * (fake_plugin.c, chosen through AITK_CUDA_PLUGIN) with one pretend GPU.
 * Built twice: FAKE_MODE 0 sees cuDNN 9.14.0, FAKE_MODE 1 sees none; either
 * way the check passes, and its message says which attention runs. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "validate/engine.h"
#include "validate/probes/gpu_plugin.h"

static void test_gpu_plugin_check_passes(void **state)
{
    (void)state;
    setenv("AITK_CUDA_PLUGIN", FAKE_PLUGIN, 1);
    aitk_run_ctx ctx = {.level = AITK_LEVEL_STANDARD, .env = cJSON_CreateObject()};
    assert_non_null(ctx.env);
    assert_int_equal(aitk_gpu_plugin_checks(&ctx), AITK_OK);
    assert_int_equal(ctx.checks.count, 1);
    const aitk_check *c = &ctx.checks.items[0];
    print_message("%s: %s: %s | %s\n", c->id, aitk_check_status_name(c->status), c->message,
                  c->observed);
    assert_int_equal(c->status, AITK_CHECK_PASS);
    assert_true(!c->remedy || !*c->remedy); /* nothing to fix */
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(ctx.env, "cuda_plugin");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "loaded")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(rec, "backend")->valuestring, "cuda");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(rec, "cublaslt_version")->valueint, 130000);
#if FAKE_MODE == 0
    assert_string_equal(c->observed, "CUDA runtime 13.0, driver 13.0, cuBLASLt 13.0.0, "
                                     "cuDNN 9.14.0; 1 device: Fake GPU 9000 (cc 9.0, 80.0 GiB, "
                                     "100 SMs, 1500 MHz)");
    assert_non_null(strstr(c->message, "; it sees cuDNN 9.14.0, so attention can use cuDNN's "
                                       "fused kernel"));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(rec, "cudnn_version")->valueint, 91400);
#else
    assert_non_null(strstr(c->observed, ", cuDNN none; 1 device: Fake GPU 9000"));
    assert_non_null(strstr(c->message, "; cuDNN not found: attention will use the plain "
                                       "kernel"));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(rec, "cudnn_version")->valueint, 0);
#endif
    unsetenv("AITK_CUDA_PLUGIN");
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_plugin_check_passes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
