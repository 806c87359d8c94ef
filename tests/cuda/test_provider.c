/* The gpu.plugin check when the plugin cannot be used, without running the
 * whole binary. Built twice:
 * - cuda.provider_env: AITK_CUDA_PLUGIN names a file that does not exist, so
 *   the check fails and quotes the dynamic loader;
 * - cuda.provider_no_toolkit: the loader and provider compiled as in a build
 *   without a CUDA toolkit (no AITK_HAVE_CUDA_PLUGIN), so the check skips. */
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

static void test_gpu_plugin_check(void **state)
{
    (void)state;
#ifndef PROVIDER_NO_TOOLKIT
    setenv("AITK_CUDA_PLUGIN", "/nonexistent/dir/libaitk_cuda.so", 1);
#endif
    aitk_run_ctx ctx = {.level = AITK_LEVEL_STANDARD, .env = cJSON_CreateObject()};
    assert_non_null(ctx.env);
    assert_int_equal(aitk_gpu_plugin_checks(&ctx), AITK_OK);
    assert_int_equal(ctx.checks.count, 1);
    const aitk_check *c = &ctx.checks.items[0];
    print_message("%s: %s: %s | %s\n", c->id, aitk_check_status_name(c->status), c->message,
                  c->remedy ? c->remedy : "");
    assert_string_equal(c->id, "gpu.plugin");
    assert_string_equal(c->category, "gpu");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(ctx.env, "cuda_plugin");
    assert_non_null(rec);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(rec, "loaded")));
#ifdef PROVIDER_NO_TOOLKIT
    assert_int_equal(c->status, AITK_CHECK_SKIP);
    assert_string_equal(c->message,
                        "this build has no CUDA plugin (no CUDA toolkit at build time)");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(rec, "built")));
#else
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    assert_non_null(strstr(c->message, "could not be loaded"));
    assert_non_null(strstr(c->message, "/nonexistent/dir/libaitk_cuda.so"));
    assert_non_null(strstr(c->message, "cannot open shared object file"));
    assert_non_null(strstr(c->remedy, "AITK_CUDA_PLUGIN"));
    const cJSON *le = cJSON_GetObjectItemCaseSensitive(rec, "loader_error");
    assert_true(cJSON_IsString(le));
    assert_non_null(strstr(le->valuestring, "cannot open shared object file"));
    unsetenv("AITK_CUDA_PLUGIN");
#endif
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_plugin_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
