/* Host probe and its rules: version comparison, the Hugging Face cache
 * resolution order, and verdicts driven by a test-written compat matrix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "common/fileio.h"
#include "validate/probes/host_sys.h"
#include "validate/compat.h"
#include "validate/probes/host.h"
#include "tests/temp_tree.h"

static char tmp[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/aitk-host-XXXXXX");
    return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unsetenv("AITK_DATA_DIR");
    return aitk_test_remove_tree(tmp);
}

static void test_version_compare(void **state)
{
    (void)state;
    assert_int_equal(aitk_version_compare("2.36", "2.17"), 1);
    assert_int_equal(aitk_version_compare("2.17", "2.17"), 0);
    assert_int_equal(aitk_version_compare("2.9", "2.17"), -1); /* numeric, not lexical */
    assert_int_equal(aitk_version_compare("2.17.1", "2.17"), 1);
    assert_int_equal(aitk_version_compare("2.17", "2.17.0"), 0);
    assert_int_equal(aitk_version_compare("570.26", "535.104.05"), 1);
    assert_int_equal(aitk_version_compare("535.104.05", "570.26"), -1);
}

static void test_model_cache_order(void **state)
{
    (void)state;
    const char *vars[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"};
    for (int i = 0; i < 4; i++)
        unsetenv(vars[i]);
    aitk_str dir = AITK_STR_INIT;
    const char *why = NULL;
    setenv("HOME", "/home/u", 1);
    aitk_host_model_cache_dir(&dir, &why);
    assert_string_equal(dir.ptr, "/home/u/.cache/huggingface/hub");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    aitk_host_model_cache_dir(&dir, &why);
    assert_string_equal(dir.ptr, "/xdg/huggingface/hub");
    setenv("HF_HOME", "/hf", 1);
    aitk_host_model_cache_dir(&dir, &why);
    assert_string_equal(dir.ptr, "/hf/hub");
    assert_string_equal(why, "HF_HOME");
    setenv("HUGGINGFACE_HUB_CACHE", "/legacy", 1);
    aitk_host_model_cache_dir(&dir, &why);
    assert_string_equal(dir.ptr, "/legacy");
    setenv("HF_HUB_CACHE", "/new", 1); /* huggingface_hub: HF_HUB_CACHE wins */
    aitk_host_model_cache_dir(&dir, &why);
    assert_string_equal(dir.ptr, "/new");
    for (int i = 0; i < 4; i++)
        unsetenv(vars[i]);
    aitk_str_free(&dir);
}

/* With HOME unset, huggingface_hub's cache is where Python's expanduser
 * puts "~" (the password database's home): Python itself is the oracle. */
static void test_model_cache_without_home(void **state)
{
    (void)state;
    const char *vars[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"};
    for (int i = 0; i < 4; i++)
        unsetenv(vars[i]);
    char *saved = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    unsetenv("HOME");
    FILE *py = popen("python3 -c 'import os; print(os.path.expanduser(\"~/.cache/huggingface/hub\"))'", "r");
    assert_non_null(py);
    char expected[1024] = "";
    assert_non_null(fgets(expected, sizeof expected, py));
    pclose(py);
    expected[strcspn(expected, "\n")] = '\0';
    aitk_str dir = AITK_STR_INIT;
    const char *why = NULL;
    aitk_status st = aitk_host_model_cache_dir(&dir, &why);
    if (saved) {
        setenv("HOME", saved, 1);
        free(saved);
    }
    assert_int_equal(st, AITK_OK);
    assert_string_equal(dir.ptr, expected);
    assert_true(expected[0] == '/'); /* never "." or a path relative to the current folder */
    aitk_str_free(&dir);
}

static void write_compat(const char *text)
{
    aitk_str dir = AITK_STR_INIT, file = AITK_STR_INIT;
    aitk_path_join(&dir, tmp, "validate");
    assert_int_equal(aitk_dir_create(dir.ptr, NULL), AITK_OK);
    aitk_path_join(&file, dir.ptr, "compat.yaml");
    assert_int_equal(aitk_file_write_atomic(file.ptr, text, strlen(text), NULL), AITK_OK);
    setenv("AITK_DATA_DIR", tmp, 1);
    aitk_str_free(&dir);
    aitk_str_free(&file);
}

static const aitk_check *find(const aitk_run_ctx *ctx, const char *id)
{
    for (size_t i = 0; i < ctx->checks.count; i++)
        if (strcmp(ctx->checks.items[i].id, id) == 0)
            return &ctx->checks.items[i];
    fail_msg("no check %s", id);
    return NULL;
}

static void run_host(const char *profile, aitk_run_ctx *ctx, aitk_compat **compat)
{
    aitk_str err = AITK_STR_INIT;
    if (aitk_compat_load(profile, compat, &err))
        fail_msg("compat: %s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    *ctx = (aitk_run_ctx){.level = AITK_LEVEL_QUICK, .compat = *compat, .output_dir = tmp,
                          .env = cJSON_CreateObject()};
    assert_int_equal(aitk_host_checks(ctx), AITK_OK);
}

static void test_rules_drive_verdicts(void **state)
{
    (void)state;
    /* An impossible glibc and a cache size no disk has (99999 GB, under the
     * matrix's 100000 GB ceiling): fail and warn with their sources; a
     * profile without rules: skip. */
    write_compat("schema: 1\ndefault_profile: strictest\nprofiles:\n"
                 "  strictest:\n    host:\n"
                 "      min_glibc: {value: \"99.1\", source: \"test source A\"}\n"
                 "      model_cache_free_gb: {value: 99999, source: \"test source B\"}\n"
                 "  empty:\n    title: nothing\n");
    aitk_run_ctx ctx;
    aitk_compat *compat = NULL;
    run_host(NULL, &ctx, &compat);
    const aitk_check *libc = find(&ctx, "host.libc");
    assert_int_equal(libc->status, AITK_CHECK_FAIL);
    assert_string_equal(libc->expected, ">= 99.1");
    assert_string_equal(libc->source, "test source A");
    assert_true(strlen(libc->remedy) > 0);
    const aitk_check *cache = find(&ctx, "host.disk.model_cache");
    assert_int_equal(cache->status, AITK_CHECK_WARN);
    assert_string_equal(cache->source, "test source B");
    assert_non_null(strstr(cache->remedy, "HF_HOME"));
    /* Facts recorded for the report. */
    const cJSON *host = cJSON_GetObjectItem(ctx.env, "host");
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(host, "cpu"), "logical_cpus")->valuedouble >= 1);
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(host, "memory"), "total_bytes")->valuedouble > 0);
    cJSON_Delete(ctx.env);
    aitk_checklist_free(&ctx.checks);
    aitk_compat_free(compat);

    run_host("empty", &ctx, &compat);
    assert_int_equal(find(&ctx, "host.libc")->status, AITK_CHECK_SKIP);
    assert_int_equal(find(&ctx, "host.disk.model_cache")->status, AITK_CHECK_SKIP);
    assert_int_equal(find(&ctx, "host.os")->status, AITK_CHECK_PASS);
    cJSON_Delete(ctx.env);
    aitk_checklist_free(&ctx.checks);
    aitk_compat_free(compat);
}

static void test_cached_model_needs_no_space(void **state)
{
    (void)state;
    write_compat("schema: 1\ndefault_profile: p\nprofiles:\n  p:\n    host:\n"
                 "      model_cache_free_gb: {value: 99999, source: s}\n");
    aitk_str cache = AITK_STR_INIT;
    aitk_path_join(&cache, tmp, "hub/models--black-forest-labs--FLUX.1-dev");
    assert_int_equal(aitk_dir_create(cache.ptr, NULL), AITK_OK);
    aitk_str_clear(&cache);
    aitk_path_join(&cache, tmp, "hub");
    setenv("HF_HUB_CACHE", cache.ptr, 1);
    aitk_run_ctx ctx;
    aitk_compat *compat = NULL;
    run_host(NULL, &ctx, &compat);
    const aitk_check *c = find(&ctx, "host.disk.model_cache");
    assert_int_equal(c->status, AITK_CHECK_PASS);
    assert_non_null(strstr(c->message, "already"));
    unsetenv("HF_HUB_CACHE");
    cJSON_Delete(ctx.env);
    aitk_checklist_free(&ctx.checks);
    aitk_compat_free(compat);
    aitk_str_free(&cache);
}

/* Free space is measured on the nearest existing folder above the cache:
 * "." for a relative path, never a regular file (nothing can be created
 * under one, so it must not pass). */
static void test_free_bytes_ancestor(void **state)
{
    (void)state;
    aitk_str path = AITK_STR_INIT, probed = AITK_STR_INIT;
    double freeb = -1;
    aitk_path_join(&path, tmp, "not/yet/there");
    assert_int_equal(aitk_host_free_bytes(path.ptr, &freeb, &probed), 0);
    assert_string_equal(aitk_str_cstr(&probed), tmp);
    assert_true(freeb >= 0);
    aitk_str_clear(&probed);
    assert_int_equal(aitk_host_free_bytes("no-such-relative-folder/x", &freeb, &probed), 0);
    assert_string_equal(aitk_str_cstr(&probed), ".");
    aitk_str_clear(&path);
    aitk_path_join(&path, tmp, "plain-file");
    assert_int_equal(aitk_file_write_atomic(path.ptr, "x", 1, NULL), AITK_OK);
    aitk_str_append(&path, "/hub");
    aitk_str_clear(&probed);
    assert_int_equal(aitk_host_free_bytes(path.ptr, &freeb, &probed), -1);
    aitk_str_free(&path);
    aitk_str_free(&probed);
}

static void test_matrix_errors(void **state)
{
    (void)state;
    aitk_compat *compat = NULL;
    aitk_str err = AITK_STR_INIT;
    write_compat("schema: 1\ndefault_profile: p\nprofiles:\n  p:\n    host:\n"
                 "      min_glibc: {value: \"2.17\"}\n");
    assert_int_equal(aitk_compat_load(NULL, &compat, &err), AITK_E_PARSE);
    /* With AITK_DATA_DIR the message names the real file. */
    assert_non_null(strstr(aitk_str_cstr(&err), "/validate/compat.yaml:6:18: rule 'min_glibc' has no source"));
    aitk_str_clear(&err);
    write_compat("schema: 1\ndefault_profile: p\nprofiles:\n  p:\n    host:\n"
                 "      min_glibc: {value: \"2.17\", source: s, sourse: t}\n");
    assert_int_equal(aitk_compat_load(NULL, &compat, &err), AITK_E_PARSE);
    assert_non_null(strstr(aitk_str_cstr(&err), "/validate/compat.yaml:6:45: unknown key 'sourse'"));
    aitk_str_clear(&err);
    write_compat("schema: 1\ndefault_profile: p\nprofiles:\n  p: {}\n  q: {}\n");
    assert_int_equal(aitk_compat_load("zz", &compat, &err), AITK_E_INVAL);
    assert_string_equal(aitk_str_cstr(&err), "unknown profile 'zz' (known: p, q)");
    aitk_str_free(&err);
    assert_null(compat);
}

static void test_shipped_matrix_loads_every_profile(void **state)
{
    (void)state;
    unsetenv("AITK_DATA_DIR"); /* the embedded copy */
    const char *profiles[] = {NULL, "ai-toolkit-current", "seed-guide"};
    for (int i = 0; i < 3; i++) {
        aitk_compat *c = NULL;
        aitk_str err = AITK_STR_INIT;
        if (aitk_compat_load(profiles[i], &c, &err))
            fail_msg("%s", aitk_str_cstr(&err));
        assert_string_equal(c->profile_name, profiles[i] ? profiles[i] : "ai-toolkit-current");
        aitk_compat_free(c);
        aitk_str_free(&err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_free_bytes_ancestor, setup, teardown),
        cmocka_unit_test(test_version_compare),
        cmocka_unit_test(test_model_cache_order),
        cmocka_unit_test(test_model_cache_without_home),
        cmocka_unit_test_setup_teardown(test_rules_drive_verdicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cached_model_needs_no_space, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matrix_errors, setup, teardown),
        cmocka_unit_test(test_shipped_matrix_loads_every_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
