/* Workload entries turned into checks: a GPU entry judged against its
 * targets gives workload.<id>.time_1000 and workload.<id>.memory with the
 * judged statuses; a CPU entry gives none (CPU figures are never judged
 * against GPU targets). Entries come from the real runner on a scripted
 * step, so the figures are known: 10 steps of 0.5 s -> 1000 steps 500 s. */
#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bench/runner.h"
#include "validate/engine.h"
#include "validate/probes/workloads.h"

static uint64_t now;
static uint64_t clock_fn(void)
{
    return now;
}

static aitk_status step(void *user, size_t b, aitk_bench_step_info *info, aitk_str *err)
{
    (void)user, (void)b, (void)info, (void)err;
    now += 500000000ull;
    return AITK_OK;
}

static double peak(void *user)
{
    (void)user;
    return 30e9;
}

static cJSON *entry(const aitk_bench_targets *t)
{
    aitk_bench_plan p = {.name = "flux1-dev", .resolutions = {1024}, .n_buckets = 1, .batch = 1,
                         .timed_steps = 10, .requested_steps = 1000,
                         .warmup = aitk_warmup_default, .step = step, .peak_bytes = peak,
                         .clock_ns = clock_fn};
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    cJSON *w = NULL;
    assert_int_equal(aitk_bench_result_json(&p, &r, "FLUX", t->cpu_figures ? "cpu" : "cuda",
                                            "dev", t, &w), 0);
    aitk_bench_result_free(&r);
    return w;
}

static const aitk_check *find(const aitk_run_ctx *ctx, const char *id)
{
    for (size_t i = 0; i < ctx->checks.count; i++)
        if (!strcmp(ctx->checks.items[i].id, id))
            return &ctx->checks.items[i];
    return NULL;
}

static void test_gpu_entry_is_judged(void **state)
{
    (void)state;
    /* 3 warm-up + 10 timed steps of 0.5 s: 1000 steps = 500 s. Scaled
     * target 300 s, over by more than 25%, but the documented 2700 s is
     * met: pass. Peak 30 GB on a 24 GiB GPU: fail. */
    aitk_bench_targets t = {.target_s = 300, .documented_s = 2700, .target_gpu = "RTX 4090",
                            .time_source = "seed",
                            .vram_bytes = 25769803776.0, .documented_min_bytes = 24e9,
                            .memory_source = "seed"};
    cJSON *w = entry(&t);
    aitk_run_ctx ctx = {0};
    assert_int_equal(aitk_workload_target_checks(&ctx, "flux1-dev", w), 0);
    assert_int_equal(ctx.checks.count, 2);
    const aitk_check *tc = find(&ctx, "workload.flux1-dev.cuda.time_1000");
    assert_non_null(tc);
    assert_int_equal(tc->status, AITK_CHECK_PASS);
    assert_non_null(strstr(tc->observed, "8.3 min (extrapolated)"));
    assert_non_null(strstr(tc->expected, "5.0 min or less (the RTX 4090 target"));
    assert_non_null(strstr(tc->expected, "or the documented 45.0 min itself"));
    const aitk_check *mc = find(&ctx, "workload.flux1-dev.cuda.memory");
    assert_non_null(mc);
    assert_int_equal(mc->status, AITK_CHECK_FAIL);
    assert_non_null(mc->remedy);
    assert_non_null(strstr(mc->observed, "peak 27.9 GiB of 24.0 GiB"));
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(w);
}

static void test_cpu_entry_is_not_judged(void **state)
{
    (void)state;
    aitk_bench_targets t = {.cpu_figures = true, .target_s = NAN, .vram_bytes = NAN,
                            .documented_min_bytes = NAN};
    cJSON *w = entry(&t);
    aitk_run_ctx ctx = {0};
    assert_int_equal(aitk_workload_target_checks(&ctx, "flux1-dev", w), 0);
    assert_int_equal(ctx.checks.count, 0);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_entry_is_judged),
        cmocka_unit_test(test_cpu_entry_is_not_judged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
