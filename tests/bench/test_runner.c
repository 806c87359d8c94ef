/* The runner on synthetic steps with a fake clock: every duration is
 * scripted, so warm-up length, statistics, throughput and the 1000-step
 * figures are known exactly and worked out by hand below. */
#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bench/runner.h"
#include "common/alloc.h"
#include "common/clock.h"
#include "common/stop.h"
#include "tests/bench/bt.h"

static uint64_t fake_now;
static uint64_t fake_clock(void)
{
    return fake_now;
}

/* Bucket base times 0.1, 0.2, 0.4 s; each bucket's first two steps take 10x
 * (start-up), then steady. Optional: noise, a stop request at a given timed
 * step, a failure at a given step, a steady decline. */
typedef struct script {
    long count[AITK_BENCH_MAX_BUCKETS]; /* steps run per bucket */
    long total;
    long stop_at, fail_at;              /* 1-based overall step; 0: never */
    int stop_sig;                       /* the stop's signal (0: SIGINT) */
    double noise;                       /* relative, uniform +-noise */
    bool decline;                       /* 0.88^k forever: never settles */
    uint32_t rng;
} script;

static const double base[3] = {0.1, 0.2, 0.4};

static double uniform(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (*s >> 8) / 16777216.0;
}

static aitk_status fake_step(void *user, size_t b, aitk_bench_step_info *info, aitk_str *err)
{
    script *s = user;
    long k = s->count[b]++;
    s->total++;
    if (s->fail_at && s->total == s->fail_at) {
        aitk_str_append(err, "boom");
        return AITK_E_IO;
    }
    double t = base[b] * (k < 2 ? 10 : 1);
    if (s->decline)
        t = base[b] * pow(0.88, (double)k); /* 13.6% apart: never within 10% */
    if (s->noise > 0)
        t *= 1 + s->noise * (2 * uniform(&s->rng) - 1);
    fake_now += (uint64_t)llround(t * 1e9);
    info->flops = 1e9 * (double)(1 << b); /* 1, 2, 4 GFLOP */
    if (s->stop_at && s->total == s->stop_at)
        aitk_stop_request(s->stop_sig ? s->stop_sig : SIGINT);
    return AITK_OK;
}

static double peak_of(void *user)
{
    (void)user;
    return 123456789.0;
}

static aitk_bench_plan make_plan(script *s)
{
    aitk_bench_plan p = {
        .name = "synthetic",
        .resolutions = {256, 512, 1024},
        .n_buckets = 3,
        .batch = 2,
        .timed_steps = 30,
        .requested_steps = 1000,
        .warmup = aitk_warmup_default,
        .peak_flops = 1e11,
        .step = fake_step,
        .peak_bytes = peak_of,
        .user = s,
        .clock_ns = fake_clock,
    };
    return p;
}

static int setup(void **state)
{
    (void)state;
    fake_now = 1000000000ull;
    aitk_stop_reset();
    return 0;
}

static void test_standard_run(void **state)
{
    (void)state;
    script s = {0};
    aitk_bench_plan p = make_plan(&s);
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.outcome, AITK_BENCH_COMPLETED);
    /* Per bucket 10 10 1 1 1 (x base): windows settle at the 5th step of
     * each bucket -> 15 warm-up steps, 23 x 0.7 = 16.1 s of warm-up. */
    assert_int_equal(r.warmup_steps, 15);
    assert_true(r.settled);
    assert_near(r.warmup_s, 16.1, 1e-6);
    assert_int_equal(r.timed, 30);
    /* Timed: 10 cycles of 0.1 0.2 0.4: mean 0.7/3, median 0.2. */
    assert_near(r.stats.mean, 0.7 / 3, 1e-9);
    assert_near(r.stats.median, 0.2, 1e-9);
    assert_near(r.bucket[2].mean, 0.4, 1e-9);
    assert_int_equal(r.bucket[1].n, 10);
    /* 30 steps in 7 s: 4.2857 steps/s, 8.571 images/s (batch 2);
     * 70 GFLOP in 7 s = 10 GFLOP/s = MFU 0.1 of 100 GFLOP/s. */
    assert_near(r.steps_per_s, 30 / 7.0, 1e-9);
    assert_near(r.images_per_s, 60 / 7.0, 1e-9);
    assert_near(r.flops_per_s, 1e10, 1e-3);
    assert_near(r.mfu, 0.1, 1e-9);
    /* 1000 steps: the 15 warm-up steps as measured (16.1 s) + 985 more split
     * 329/328/328 -> 32.9 + 65.6 + 131.2 = 229.7 s; total 245.8 s. */
    assert_false(r.measured);
    assert_near(r.time_1000_s, 245.8, 1e-6);
    assert_near(r.error_pct, 0, 1e-9);
    assert_int_equal(r.from_steps, 45);
    assert_near(r.peak_bytes, 123456789.0, 0);
    aitk_bench_result_free(&r);
}

static void test_full_run_measures_1000(void **state)
{
    (void)state;
    script s = {0};
    aitk_bench_plan p = make_plan(&s);
    p.full = true;
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.outcome, AITK_BENCH_COMPLETED);
    assert_int_equal(s.total, 1000); /* warm-up counts toward the 1000 */
    assert_int_equal(r.warmup_steps + r.timed, 1000);
    assert_true(r.measured);
    /* The same 245.8 s as the extrapolation above: on a noiseless series
     * both ways must agree exactly. */
    assert_near(r.time_1000_s, 245.8, 1e-6);
    aitk_bench_result_free(&r);
}

/* --full --steps 10 on a workload that has not settled by then: half the
 * steps are timed, never none (all ten went to warm-up, and the run was
 * "completed" with no figures). With three buckets and --steps 4, each
 * bucket still gets a timed step. */
static void test_full_short_run_times_steps(void **state)
{
    (void)state;
    script s = {.decline = true};
    aitk_bench_plan p = make_plan(&s);
    p.full = true;
    p.requested_steps = 10;
    p.n_buckets = 1;
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.warmup_steps + r.timed, 10);
    /* Never settles: warm-up stops at half, steps 6-10 are timed; their
     * median is the 8th step, 0.1 x 0.88^7 = 0.0408675 s. */
    assert_false(r.settled);
    assert_int_equal(r.warmup_steps, 5);
    assert_int_equal(r.timed, 5);
    assert_true(r.have_stats);
    assert_near(r.stats.median, 0.0408675, 1e-6);
    aitk_bench_result_free(&r);

    script t = {0};
    p = make_plan(&t);
    p.full = true;
    p.requested_steps = 4;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.warmup_steps, 1);
    assert_int_equal(r.timed, 3);
    assert_int_equal(r.bucket[0].n + r.bucket[1].n + r.bucket[2].n, 3);
    aitk_bench_result_free(&r);
}

static void test_noisy_extrapolation_within_2pct(void **state)
{
    (void)state;
    /* +-5% uniform noise around the same means: the expected 1000-step time
     * is the measured warm-up plus 985 steps at the true means (229.7 s). */
    for (uint32_t seed = 1; seed <= 10; seed++) {
        fake_now = 0;
        script s = {.noise = 0.05, .rng = seed};
        aitk_bench_plan p = make_plan(&s);
        aitk_bench_result r;
        assert_int_equal(aitk_bench_run(&p, &r), 0);
        double truth = r.warmup_s + 229.7;
        assert_true(fabs(r.time_1000_s - truth) / truth < 0.02);
        assert_true(isfinite(r.error_pct) && r.error_pct < 2.0);
        aitk_bench_result_free(&r);
    }
}

static void test_interrupt_keeps_figures(void **state)
{
    (void)state;
    script s = {.stop_at = 20}; /* 15 warm-up + the 5th timed step */
    aitk_bench_plan p = make_plan(&s);
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.outcome, AITK_BENCH_INTERRUPTED);
    assert_int_equal(r.timed, 5); /* the step in flight is finished and counted */
    assert_true(r.have_stats);
    assert_non_null(strstr(aitk_str_cstr(&r.message), "interrupted (Ctrl-C) after 15 warm-up"));
    /* Buckets 0 1 2 0 1 timed: every bucket seen, so an estimate exists. */
    assert_true(isfinite(r.time_1000_s));
    cJSON *w = NULL;
    aitk_bench_targets t = {.cpu_figures = true};
    assert_int_equal(aitk_bench_result_json(&p, &r, "Synthetic", "cpu", "test", &t, &w), 0);
    assert_string_equal(cJSON_GetObjectItem(w, "status")->valuestring, "interrupted");
    /* The interval says what it is of: bench/stats.h computes the mean's. */
    const cJSON *st = cJSON_GetObjectItem(w, "step_time_s");
    assert_string_equal(cJSON_GetObjectItem(st, "interval_of")->valuestring, "mean");
    assert_true(cJSON_GetObjectItem(st, "ci95_low")->valuedouble <=
                cJSON_GetObjectItem(st, "mean")->valuedouble);
    cJSON_Delete(w);
    aitk_bench_result_free(&r);
    /* A run started after the stop does not step at all. */
    script s2 = {0};
    p = make_plan(&s2);
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.outcome, AITK_BENCH_INTERRUPTED);
    assert_int_equal(s2.total, 0);
    assert_false(r.have_stats);
    assert_true(isnan(r.time_1000_s));
    aitk_bench_result_free(&r);
}

/* SIGTERM (`timeout`, Kubernetes, Slurm) is not a Ctrl-C: the message
 * names the signal that stopped the run. */
static void test_interrupt_names_sigterm(void **state)
{
    (void)state;
    script s = {.stop_at = 20, .stop_sig = SIGTERM};
    aitk_bench_plan p = make_plan(&s);
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.outcome, AITK_BENCH_INTERRUPTED);
    assert_non_null(strstr(aitk_str_cstr(&r.message), "interrupted (SIGTERM) after 15 warm-up"));
    assert_null(strstr(aitk_str_cstr(&r.message), "Ctrl-C"));
    aitk_bench_result_free(&r);
}

static void test_time_limit(void **state)
{
    (void)state;
    script s = {0};
    aitk_bench_plan p = make_plan(&s);
    p.time_limit_s = 20;
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    /* Warm-up ends at 16.1 s; 5 cycles bring 19.6 s, then 0.1 (19.7),
     * 0.2 (19.9), 0.4 (20.3): the check before the next step stops it. */
    assert_int_equal(r.outcome, AITK_BENCH_TIMED_OUT);
    assert_int_equal(r.timed, 18);
    assert_non_null(strstr(aitk_str_cstr(&r.message), "time limit"));
    aitk_bench_result_free(&r);
}

static void test_failed_step(void **state)
{
    (void)state;
    script s = {.fail_at = 3}; /* bucket 2: 1024 px */
    aitk_bench_plan p = make_plan(&s);
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.outcome, AITK_BENCH_FAILED);
    assert_non_null(strstr(aitk_str_cstr(&r.message), "boom"));
    assert_non_null(strstr(aitk_str_cstr(&r.message), "1024 px"));
    assert_false(r.have_stats);
    aitk_bench_result_free(&r);
}

/* The hook between warm-up and timed steps: called once, after the 15th
 * step (the warm-up of test_standard_run) and before the 16th; never when
 * a step of the warm-up failed. */
static long hook_calls, hook_at_total;
static void note_hook(void *ctx)
{
    hook_calls++;
    hook_at_total = ((script *)ctx)->total;
}

static void test_after_warmup_hook(void **state)
{
    (void)state;
    script s = {0};
    aitk_bench_plan p = make_plan(&s);
    p.after_warmup = note_hook;
    p.after_warmup_ctx = &s;
    hook_calls = hook_at_total = 0;
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(hook_calls, 1);
    assert_int_equal(hook_at_total, 15);
    assert_int_equal(s.total, 45); /* 15 warm-up + 30 timed: the hook ran between */
    aitk_bench_result_free(&r);

    script f = {.fail_at = 3};
    p = make_plan(&f);
    p.after_warmup = note_hook;
    p.after_warmup_ctx = &f;
    hook_calls = 0;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.outcome, AITK_BENCH_FAILED);
    assert_int_equal(hook_calls, 0);
    aitk_bench_result_free(&r);
}

static void test_never_settles(void **state)
{
    (void)state;
    script s = {.decline = true};
    aitk_bench_plan p = make_plan(&s);
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    assert_int_equal(r.outcome, AITK_BENCH_COMPLETED);
    assert_false(r.settled);
    assert_int_equal(r.warmup_steps, 60); /* the cap: 20 per bucket */
    assert_non_null(strstr(aitk_str_cstr(&r.message), "did not settle"));
    aitk_bench_result_free(&r);
}

static void test_bad_plan(void **state)
{
    (void)state;
    script s = {0};
    aitk_bench_plan p = make_plan(&s);
    aitk_bench_result r;
    p.n_buckets = 0;
    assert_int_equal(aitk_bench_run(&p, &r), AITK_E_INVAL);
    p = make_plan(&s);
    p.step = NULL;
    assert_int_equal(aitk_bench_run(&p, &r), AITK_E_INVAL);
    p = make_plan(&s);
    p.n_buckets = AITK_BENCH_MAX_BUCKETS + 1;
    assert_int_equal(aitk_bench_run(&p, &r), AITK_E_INVAL);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    /* Every allocation of a run failing in turn: AITK_E_NOMEM or a complete
     * result, never a crash or a leak (ASan checks the latter). */
    int nomem = 0, ok = 0;
    for (long n = 0; n < 40; n++) {
        fake_now = 0;
        script s = {0};
        aitk_bench_plan p = make_plan(&s);
        aitk_bench_result r;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_bench_run(&p, &r);
        aitk_alloc_fail_after(-1);
        if (st == AITK_E_NOMEM) {
            nomem++;
            assert_null(r.times);
            continue;
        }
        assert_int_equal(st, 0);
        assert_near(r.time_1000_s, 245.8, 1e-6);
        ok++;
        aitk_bench_result_free(&r);
    }
    assert_true(nomem > 0);
    assert_true(ok > 0);
}

static void test_judges(void **state)
{
    (void)state;
    assert_string_equal(aitk_bench_judge_time(100, 100, NAN), "pass");
    assert_string_equal(aitk_bench_judge_time(125, 100, NAN), "warn");
    assert_string_equal(aitk_bench_judge_time(126, 100, NAN), "fail");
    assert_null(aitk_bench_judge_time(100, NAN, NAN));
    /* The lent H200's FLUX step: 1061 s per 1000 steps against a scaled
     * 605 s, and 2700 s documented on the RTX 4090: it beats the documented
     * time, so it passes. */
    assert_string_equal(aitk_bench_judge_time(1061, 605, 2700), "pass");
    assert_string_equal(aitk_bench_judge_time(2700, 605, 2700), "pass");
    assert_string_equal(aitk_bench_judge_time(2701, 605, 2700), "fail");
    assert_string_equal(aitk_bench_judge_time(700, 605, 500), "warn");
    const double G = 1e9;
    assert_string_equal(aitk_bench_judge_memory(30 * G, 24 * G, 24 * G), "fail");
    assert_string_equal(aitk_bench_judge_memory(10 * G, 16 * G, 24 * G), "warn");
    assert_string_equal(aitk_bench_judge_memory(20 * G, 48 * G, 24 * G), "pass");
    assert_string_equal(aitk_bench_judge_memory(20 * G, NAN, 24 * G), "pass");
    assert_string_equal(aitk_bench_judge_memory(30 * G, NAN, 24 * G), "warn");
    assert_null(aitk_bench_judge_memory(NAN, NAN, NAN));
}

static void test_json_shape(void **state)
{
    (void)state;
    script s = {0};
    aitk_bench_plan p = make_plan(&s);
    aitk_bench_result r;
    assert_int_equal(aitk_bench_run(&p, &r), 0);
    aitk_bench_targets t = {.target_s = 190, .target_gpu = "RTX 4090", .time_source = "seed",
                            .vram_bytes = 25.7e9, .documented_min_bytes = 24e9,
                            .memory_source = "seed"};
    cJSON *w = NULL;
    assert_int_equal(aitk_bench_result_json(&p, &r, "Synthetic", "cuda", "GPU", &t, &w), 0);
    const cJSON *tp = cJSON_GetObjectItem(w, "time_per_1000_steps");
    assert_near(cJSON_GetObjectItem(tp, "measured_s")->valuedouble, 245.8, 1e-6);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(tp, "extrapolated")));
    assert_string_equal(cJSON_GetObjectItem(tp, "status")->valuestring, "fail"); /* 245.8 > 1.25 x 190 = 237.5 */
    const cJSON *mem = cJSON_GetObjectItem(w, "memory");
    assert_string_equal(cJSON_GetObjectItem(mem, "status")->valuestring, "pass");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(w, "buckets")), 3);
    /* The scripted step counts its FLOPs itself. */
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(w, "throughput"), "flops_source")->valuestring,
        "counted by the training-step graph");
    assert_near(cJSON_GetObjectItem(cJSON_GetObjectItem(w, "throughput"), "mfu")->valuedouble,
                0.1, 1e-9);
    /* Not --full: the timed steps the plan asked for, not the 1000 projected to. */
    assert_false(p.full);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(w, "steps"), "requested")->valueint,
                     p.timed_steps);
    cJSON_Delete(w);
    /* CPU figures: no target, no status, a note instead. */
    aitk_bench_targets cpu = {.cpu_figures = true, .target_s = NAN, .vram_bytes = NAN,
                              .documented_min_bytes = NAN};
    assert_int_equal(aitk_bench_result_json(&p, &r, "Synthetic", "cpu", "CPU", &cpu, &w), 0);
    tp = cJSON_GetObjectItem(w, "time_per_1000_steps");
    assert_null(cJSON_GetObjectItem(tp, "status"));
    assert_null(cJSON_GetObjectItem(tp, "target_s"));
    assert_non_null(strstr(cJSON_GetObjectItem(tp, "note")->valuestring, "not a GPU prediction"));
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(w, "memory"), "status"));
    cJSON_Delete(w);
    aitk_bench_result_free(&r);
}

/* A step whose work the wall clock hardly sees (the fake clock moves 1 us)
 * but which burns 20 ms of CPU: the test-only slowdown of 5 sleeps 4 times
 * the CPU time, so the real time the run spends outside its steps is at
 * least 4 times the CPU they burned, however busy the machine (a sleep
 * only ever lasts longer). This is what keeps the slowed MPI rank slow on
 * a busy machine, where its wall time alone can be short (bench/runner.c).
 * Each sleep is cut to whole milliseconds: 1 ms a step is allowed. */
typedef struct burner {
    long steps;
    double cpu_s;  /* burned by the steps, as they measured it */
    double real_s; /* real time inside the steps */
} burner;

static aitk_status burn_step(void *user, size_t b, aitk_bench_step_info *info, aitk_str *err)
{
    (void)b, (void)err;
    burner *w = user;
    const uint64_t t0 = aitk_clock_ns(), c0 = aitk_cpu_ns();
    volatile unsigned long spin = 0;
    while (aitk_cpu_ns() - c0 < 20000000u)
        spin++;
    w->cpu_s += (double)(aitk_cpu_ns() - c0) / 1e9;
    w->real_s += (double)(aitk_clock_ns() - t0) / 1e9;
    w->steps++;
    fake_now += 1000;
    info->flops = 1e9;
    return AITK_OK;
}

static void test_slowdown_counts_cpu_time(void **state)
{
    (void)state;
    burner w = {0};
    aitk_bench_plan p = {
        .name = "burn",
        .resolutions = {256},
        .n_buckets = 1,
        .batch = 1,
        .timed_steps = 3,
        .requested_steps = 1000,
        .warmup = aitk_warmup_default,
        .step = burn_step,
        .user = &w,
        .clock_ns = fake_clock,
    };
    aitk_bench_result r;
    aitk_bench_set_test_slowdown(5);
    const uint64_t t0 = aitk_clock_ns();
    aitk_status st = aitk_bench_run(&p, &r);
    const double outside_s = (double)(aitk_clock_ns() - t0) / 1e9 - w.real_s;
    aitk_bench_set_test_slowdown(1);
    assert_int_equal(st, AITK_OK);
    assert_true(w.steps >= 3);
    const double slept_at_least = 4 * w.cpu_s - 1e-3 * (double)w.steps;
    if (!(outside_s >= slept_at_least))
        fail_msg("%ld steps burned %.3f s of CPU; the run spent %.3f s outside them, not the "
                 "%.3f s four times that should have added", w.steps, w.cpu_s, outside_s,
                 slept_at_least);
    assert_non_null(strstr(aitk_str_cstr(&r.message), "TEST ONLY"));
    aitk_bench_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_standard_run, setup),
        cmocka_unit_test_setup(test_full_run_measures_1000, setup),
        cmocka_unit_test_setup(test_full_short_run_times_steps, setup),
        cmocka_unit_test_setup(test_noisy_extrapolation_within_2pct, setup),
        cmocka_unit_test_setup(test_interrupt_keeps_figures, setup),
        cmocka_unit_test_setup(test_interrupt_names_sigterm, setup),
        cmocka_unit_test_setup(test_time_limit, setup),
        cmocka_unit_test_setup(test_failed_step, setup),
        cmocka_unit_test_setup(test_after_warmup_hook, setup),
        cmocka_unit_test_setup(test_never_settles, setup),
        cmocka_unit_test_setup(test_bad_plan, setup),
        cmocka_unit_test_setup(test_allocation_failures, setup),
        cmocka_unit_test(test_judges),
        cmocka_unit_test_setup(test_json_shape, setup),
        cmocka_unit_test_setup(test_slowdown_counts_cpu_time, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
