/* The multigpu checks (validate/probes/multigpu.c) with the fake backend
 * (fake_plugin.c through AITK_CUDA_PLUGIN): FAKE_MODE 0 has two pretend GPUs
 * whose collectives each take exactly 1 ms, and the NVML record is written
 * here (two GPUs with 4 active NVLink 3.0 links each), so every figure of
 * the checks and of the micro[] entries is known in advance and worked by
 * hand below. FAKE_MODE 1 has no collectives entry: all three checks skip
 * and say so. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "validate/engine.h"
#include "validate/probes/multigpu.h"

#if FAKE_MODE == 0
static const aitk_check *find(const aitk_run_ctx *ctx, const char *id)
{
    for (size_t i = 0; i < ctx->checks.count; i++)
        if (!strcmp(ctx->checks.items[i].id, id))
            return &ctx->checks.items[i];
    fail_msg("no check %s", id);
    return NULL;
}

static double num(const cJSON *e, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, key);
    if (!cJSON_IsNumber(x))
        fail_msg("%s is not a number", key);
    return x->valuedouble;
}

static void near(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want)))
        fail_msg("%.12g, expected %.12g", got, want);
}
#endif

static void test_multigpu_fake(void **state)
{
    (void)state;
    setenv("AITK_CUDA_PLUGIN", FAKE_PLUGIN, 1);
    aitk_run_ctx ctx = {.level = AITK_LEVEL_STANDARD,
                        .env = cJSON_Parse(
                            "{\"gpu\":{\"nvml\":{\"devices\":["
                            "{\"nvlink\":{\"active_links\":4,\"version\":4},"
                            "\"pcie\":{\"generation\":4,\"width\":16}},"
                            "{\"nvlink\":{\"active_links\":4,\"version\":4},"
                            "\"pcie\":{\"generation\":4,\"width\":16}}],"
                            "\"topology\":[{\"gpus\":[0,1],\"common_ancestor\":\"NODE\"}]}}}")};
    assert_non_null(ctx.env);
    assert_int_equal(aitk_multigpu_checks(&ctx), AITK_OK);
    assert_int_equal(ctx.checks.count, 3);
#if FAKE_MODE == 0
    const aitk_check *p = find(&ctx, "multigpu.peer_access");
    assert_int_equal(p->status, AITK_CHECK_WARN);
    assert_string_equal(p->observed, "GPU0->GPU1 yes, GPU1->GPU0 no");
    assert_true(p->remedy && *p->remedy);
    /* NVLink 3.0 is NVML's 4: 4 links x 25 GB/s = 100 GB/s per direction. */
    const aitk_check *l = find(&ctx, "multigpu.link");
    assert_int_equal(l->status, AITK_CHECK_PASS);
    assert_non_null(strstr(l->observed, "NVLink 3.0: 4 links x 25 GB/s = 100 GB/s per "
                                        "direction; PCIe common ancestor of GPU0 and GPU1: "
                                        "NODE"));
    const aitk_check *n = find(&ctx, "multigpu.nccl");
    print_message("%s | %s\n", n->observed, n->message);
    assert_int_equal(n->status, AITK_CHECK_PASS);
    /* Largest size, 1 GiB in 1 ms: algbw 1073741824 / 1e9 / 1e-3 = 1073.741824
     * GB/s; all-reduce busbw x 2(1)/2 = 1073.7 (1074% of 100 GB/s). */
    assert_non_null(strstr(n->observed, "all_reduce busbw 1073.7 GB/s at 1024 MiB (1074% of "
                                        "NVLink 100.0 GB/s)"));
    const cJSON *micro = cJSON_GetObjectItemCaseSensitive(ctx.env, "micro");
    /* 3 collectives x 1, 4, 16, 64, 256, 1024 MiB (bench/workloads.yaml). */
    assert_int_equal(cJSON_GetArraySize(micro), 18);
    /* all_reduce 1 MiB: 1048576 / 1e9 / 1e-3 = 1.048576 GB/s, busbw x 1;
     * of 100 GB/s: 0.01048576. */
    const cJSON *ar = cJSON_GetArrayItem(micro, 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ar, "name")->valuestring,
                        "nccl.all_reduce.bf16.1MiB");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ar, "category")->valuestring,
                        "collective");
    near(num(ar, "value"), 1.048576);
    near(num(ar, "algbw_gbs"), 1.048576);
    near(num(ar, "link_gbs"), 100.0);
    near(num(ar, "busbw_of_link"), 0.01048576);
    near(num(ar, "time_ms"), 1.0);
    /* all_gather 1 MiB bf16 over 2: 262144 elements each (a multiple of 8),
     * gathered 1048576 bytes: algbw 1.048576, busbw x 1/2 = 0.524288. */
    const cJSON *ag = cJSON_GetArrayItem(micro, 6);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ag, "name")->valuestring,
                        "nccl.all_gather.bf16.1MiB");
    near(num(ag, "algbw_gbs"), 1.048576);
    near(num(ag, "busbw_gbs"), 0.524288);
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(ctx.env, "multigpu");
    near(num(rec, "nccl_version"), 22809);
#else
    for (size_t i = 0; i < ctx.checks.count; i++) {
        assert_int_equal(ctx.checks.items[i].status, AITK_CHECK_SKIP);
        assert_non_null(strstr(ctx.checks.items[i].message, "built without NCCL"));
    }
#endif
    unsetenv("AITK_CUDA_PLUGIN");
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multigpu_fake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
