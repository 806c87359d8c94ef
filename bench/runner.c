/* The step loop of one workload (see runner.h).
 *
 * Phases: warm-up, cycling the buckets, until every bucket's own step times
 * have settled (aitk_warmup_default: why those numbers is written there);
 * then the timed steps, starting again at bucket 0, so whole cycles are
 * measured. At the standard level the time for 1000 steps is the measured
 * warm-up plus the timed steps extrapolated to the rest (stats.h), which is
 * what 1000 real steps cost, first slow steps included; at the full level
 * the 1000 steps are run (warm-up counts toward them, as ai-toolkit runs no
 * extra steps) and their sum is the figure.
 *
 * Stopping: before each step the runner looks at the stop flag (common/stop.h:
 * Ctrl-C or SIGTERM) and the time limit; it never abandons a step in flight, so a backend is never
 * left half-way through an update. */
#include "bench/runner.h"

#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/stop.h"

/* 1: off. Only `--mpi` sets it, from a test-only variable (runner.h). */
static double test_slowdown = 1.0;

void aitk_bench_set_test_slowdown(double factor)
{
    test_slowdown = factor > 1.0 ? factor : 1.0;
}

const char *aitk_bench_outcome_name(aitk_bench_outcome o)
{
    switch (o) {
    case AITK_BENCH_COMPLETED: return "completed";
    case AITK_BENCH_INTERRUPTED: return "interrupted";
    case AITK_BENCH_TIMED_OUT: return "timed_out";
    case AITK_BENCH_FAILED: return "failed";
    default: return "skipped";
    }
}

const char *aitk_bench_judge_time(double measured_s, double target_s, double documented_s)
{
    if (!isfinite(measured_s) || !isfinite(target_s) || target_s <= 0)
        return NULL;
    if (isfinite(documented_s) && documented_s > 0 && measured_s <= documented_s)
        return "pass";
    return measured_s <= target_s ? "pass" : measured_s <= 1.25 * target_s ? "warn" : "fail";
}

const char *aitk_bench_judge_memory(double peak, double vram, double documented_min)
{
    bool have_peak = isfinite(peak) && peak >= 0;
    bool have_vram = isfinite(vram) && vram > 0;
    bool have_min = isfinite(documented_min) && documented_min > 0;
    if (have_peak && have_vram && peak > vram)
        return "fail";
    if (have_vram && have_min)
        return vram < documented_min ? "warn" : "pass";
    if (have_peak && have_min)
        return peak <= documented_min ? "pass" : "warn";
    if (have_peak && have_vram)
        return "pass";
    return NULL;
}

typedef struct run_state {
    const aitk_bench_plan *plan;
    aitk_bench_result *r;
    uint64_t (*clock)(void);
    uint64_t start_ns;
    double flops_sum, model_flops_sum; /* over the timed steps */
    long counted;                      /* timed steps that counted their own FLOPs */
} run_state;

/* AITK_OK to go on; AITK_E_INTERRUPTED / AITK_E_TIMEOUT to stop, with the
 * outcome set. */
static aitk_status may_continue(run_state *s)
{
    if (aitk_stop_requested()) {
        s->r->outcome = AITK_BENCH_INTERRUPTED;
        return AITK_E_INTERRUPTED;
    }
    double limit = s->plan->time_limit_s;
    if (limit > 0 && (double)(s->clock() - s->start_ns) / 1e9 >= limit) {
        s->r->outcome = AITK_BENCH_TIMED_OUT;
        return AITK_E_TIMEOUT;
    }
    return AITK_OK;
}

/* One step of bucket b; its duration in *secs. A failed step sets the
 * outcome and the message. */
static aitk_status one_step(run_state *s, size_t b, double *secs, aitk_bench_step_info *info)
{
    aitk_str err = AITK_STR_INIT;
    memset(info, 0, sizeof *info);
    uint64_t t0 = s->clock();
    const uint64_t cpu0 = test_slowdown > 1.0 ? aitk_cpu_ns() : 0;
    aitk_status st = s->plan->step(s->plan->user, b, info, &err);
    /* The test-only slowdown sleeps inside the step's timing, so every
     * figure derived from it (mean, throughput, 1000 steps) is slowed alike.
     * It sleeps in proportion to the step's CPU time as well as its wall
     * time, whichever is more: on a busy machine the slowed rank may run
     * its steps while the other ranks wait idle, and a sleep in proportion
     * to that short wall time alone could leave it barely slower than them;
     * the work it did is the same as theirs whatever the load. */
    if (test_slowdown > 1.0 && !st) {
        const double wall_ns = (double)(s->clock() - t0);
        const double cpu_ns = (double)(aitk_cpu_ns() - cpu0);
        const double cost_ns = cpu_ns > wall_ns ? cpu_ns : wall_ns;
        aitk_sleep_ms((long)((test_slowdown - 1.0) * cost_ns / 1e6));
    }
    *secs = (double)(s->clock() - t0) / 1e9;
    if (st) {
        s->r->outcome = AITK_BENCH_FAILED;
        aitk_str_appendf(&s->r->message, "step failed at %ld px: %s%s%s",
                         s->plan->resolutions[b], aitk_strerror(st), err.len ? ": " : "",
                         aitk_str_cstr(&err));
    }
    aitk_str_free(&err);
    return st;
}

/* The next step of bucket b, unless a stop or the time limit comes first. */
static aitk_status next_step(run_state *s, size_t b, double *secs, aitk_bench_step_info *info)
{
    aitk_status st = may_continue(s);
    return st ? st : one_step(s, b, secs, info);
}

/* With --full the requested steps are the whole run, warm-up included (as
 * ai-toolkit's 1000 steps include its first, slow ones). Warm-up may take at
 * most half of them, and always leaves one step per bucket to time: `--full
 * --steps 10` once spent all ten on warm-up and reported "completed, 0
 * steps" with no throughput. */
static long full_warmup_limit(const aitk_bench_plan *p)
{
    long keep = p->requested_steps - p->requested_steps / 2;
    if (keep < (long)p->n_buckets)
        keep = (long)p->n_buckets;
    long limit = p->requested_steps - keep;
    return limit > 0 ? limit : 0;
}

static aitk_status warm_up(run_state *s, double *wu, size_t cap)
{
    const aitk_bench_plan *p = s->plan;
    size_t nb = p->n_buckets;
    aitk_progress *pg = p->progress;
    aitk_str label = AITK_STR_INIT;
    aitk_str_appendf(&label, "%s warm-up", p->name);
    if (pg)
        aitk_progress_begin(pg, aitk_str_cstr(&label), 0);
    aitk_str_free(&label);
    aitk_status st = AITK_OK;
    for (size_t k = 0; !st; k++) {
        size_t b = k % nb, per = k / nb;
        if (per >= cap)
            break; /* the cap: time it anyway, and say it did not settle */
        if (p->full && (long)k >= full_warmup_limit(p))
            break;
        double secs;
        aitk_bench_step_info info;
        if ((st = next_step(s, b, &secs, &info)))
            break;
        wu[b * cap + per] = secs;
        s->r->warmup_steps++;
        s->r->warmup_s += secs;
        if (pg)
            aitk_progress_update(pg, (long)k + 1, secs);
        if (b + 1 == nb) {
            bool all = true;
            for (size_t j = 0; j < nb && all; j++)
                all = aitk_stats_settled(wu + j * cap, per + 1, &p->warmup);
            if (all) {
                s->r->settled = true;
                break;
            }
        }
    }
    if (pg)
        aitk_progress_end(pg, st ? aitk_bench_outcome_name(s->r->outcome)
                              : s->r->settled ? "settled" : "did not settle");
    return st;
}

static aitk_status timed(run_state *s, long n)
{
    const aitk_bench_plan *p = s->plan;
    aitk_bench_result *r = s->r;
    aitk_progress *pg = p->progress;
    if (pg) {
        /* Said with the warm-up before it, so the terminal's count and the
         * report's (warm-up + timed = the requested steps) agree. */
        aitk_str label = AITK_STR_INIT;
        if (r->warmup_steps > 0)
            aitk_str_appendf(&label, "%s timed (after %ld warm-up steps)", p->name,
                             r->warmup_steps);
        else
            aitk_str_appendf(&label, "%s timed", p->name);
        aitk_progress_begin(pg, aitk_str_status(&label) ? p->name : aitk_str_cstr(&label), n);
        aitk_str_free(&label);
    }
    aitk_status st = AITK_OK;
    for (long k = 0; k < n; k++) {
        size_t b = (size_t)k % p->n_buckets;
        double secs;
        aitk_bench_step_info info;
        if ((st = next_step(s, b, &secs, &info)))
            break;
        r->times[r->timed] = secs;
        r->bucket_of[r->timed] = b;
        r->timed++;
        double f = info.flops > 0 ? info.flops : p->flops_per_step[b];
        s->counted += info.flops > 0;
        s->flops_sum += f;
        s->model_flops_sum += info.model_flops > 0 ? info.model_flops : f;
        if (pg)
            aitk_progress_update(pg, k + 1, secs);
    }
    if (pg)
        aitk_progress_end(pg, aitk_bench_outcome_name(st ? r->outcome : AITK_BENCH_COMPLETED));
    return st;
}

/* Figures from whatever was measured, also after a stop. */
static aitk_status summarize(run_state *s)
{
    const aitk_bench_plan *p = s->plan;
    aitk_bench_result *r = s->r;
    if (p->peak_bytes)
        r->peak_bytes = p->peak_bytes(p->user);
    if (r->timed == 0)
        return AITK_OK;
    aitk_status st = aitk_stats_compute(r->times, (size_t)r->timed, &r->stats);
    if (st)
        return st;
    r->have_stats = true;
    r->flops_counted = s->counted == r->timed;
    double sum = r->stats.mean * (double)r->timed;
    if (sum > 0) {
        r->steps_per_s = (double)r->timed / sum;
        r->images_per_s = r->steps_per_s * (double)p->batch;
        if (s->flops_sum > 0)
            r->flops_per_s = s->flops_sum / sum;
        if (s->model_flops_sum > 0 && p->peak_flops > 0)
            r->mfu = fmin(1.0, s->model_flops_sum / sum / p->peak_flops);
    }
    size_t seen = 0;
    for (size_t b = 0; b < p->n_buckets; b++) {
        double *x = aitk_malloc((size_t)r->timed * sizeof *x);
        if (!x)
            return AITK_E_NOMEM;
        size_t n = 0;
        for (long i = 0; i < r->timed; i++)
            if (r->bucket_of[i] == b)
                x[n++] = r->times[i];
        if (n)
            st = aitk_stats_compute(x, n, &r->bucket[b]);
        aitk_free(x);
        if (st)
            return st;
        seen += n > 0;
    }
    long total = r->warmup_steps + r->timed;
    if (p->full && r->outcome == AITK_BENCH_COMPLETED && total >= p->requested_steps &&
        p->requested_steps == 1000) {
        r->measured = true;
        r->time_1000_s = r->warmup_s + sum;
        r->from_steps = total;
        return AITK_OK;
    }
    if (seen < p->n_buckets)
        return AITK_OK; /* a bucket never timed: an estimate would leave it out */
    long rest = 1000 - r->warmup_steps;
    aitk_extrapolation e;
    if (rest <= 0 || (st = aitk_stats_extrapolate(r->times, r->bucket_of, (size_t)r->timed,
                                                  p->n_buckets, rest, &e)))
        return st == AITK_E_NOMEM ? st : AITK_OK;
    r->time_1000_s = r->warmup_s + e.total_s;
    r->error_pct = isfinite(e.half_width_s) ? 100.0 * e.half_width_s / r->time_1000_s : NAN;
    r->from_steps = total;
    return AITK_OK;
}

aitk_status aitk_bench_run(const aitk_bench_plan *p, aitk_bench_result *r)
{
    memset(r, 0, sizeof *r);
    r->time_1000_s = r->error_pct = r->steps_per_s = r->images_per_s = NAN;
    r->flops_per_s = r->mfu = r->peak_bytes = NAN;
    if (!p || !p->step || p->n_buckets == 0 || p->n_buckets > AITK_BENCH_MAX_BUCKETS ||
        p->batch < 1 || p->timed_steps < 1 || (p->full && p->requested_steps < 1))
        return AITK_E_INVAL;
    size_t nb = p->n_buckets;
    long n = p->full ? p->requested_steps
                     : (p->timed_steps + (long)nb - 1) / (long)nb * (long)nb;
    size_t cap = p->warmup.max_steps ? p->warmup.max_steps : 1;
    double *wu = aitk_calloc(nb * cap, sizeof *wu);
    r->times = aitk_calloc((size_t)n, sizeof *r->times);
    r->bucket_of = aitk_calloc((size_t)n, sizeof *r->bucket_of);
    if (!wu || !r->times || !r->bucket_of) {
        aitk_free(wu);
        aitk_bench_result_free(r);
        return AITK_E_NOMEM;
    }
    run_state s = {.plan = p, .r = r, .clock = p->clock_ns ? p->clock_ns : aitk_clock_ns};
    s.start_ns = s.clock();
    r->outcome = AITK_BENCH_COMPLETED;
    aitk_status st = warm_up(&s, wu, cap);
    aitk_free(wu);
    if (!st && p->after_warmup)
        p->after_warmup(p->after_warmup_ctx);
    if (!st)
        st = timed(&s, p->full ? p->requested_steps - r->warmup_steps : n);
    if (!st && !r->settled)
        aitk_str_appendf(&r->message, "the step time did not settle within %zu warm-up steps "
                         "per bucket; figures may include start-up effects",
                         p->warmup.max_steps);
    if (r->outcome == AITK_BENCH_INTERRUPTED)
        aitk_str_appendf(&r->message, "%s after %ld warm-up and %ld timed steps; figures are "
                         "from those steps", aitk_stop_words(), r->warmup_steps, r->timed);
    else if (r->outcome == AITK_BENCH_TIMED_OUT)
        aitk_str_appendf(&r->message, "stopped at the time limit of %.0f s after %ld warm-up "
                         "and %ld timed steps; figures are from those steps", p->time_limit_s,
                         r->warmup_steps, r->timed);
    if (test_slowdown > 1.0)
        aitk_str_appendf(&r->message, "%sTEST ONLY: every step was made %.3g times slower on "
                         "purpose (AITK_TEST_SLOW_RANK); these figures are not this machine's",
                         r->message.len ? "; " : "", test_slowdown);
    st = summarize(&s);
    if (!st && aitk_str_status(&r->message))
        st = AITK_E_NOMEM;
    if (st)
        aitk_bench_result_free(r);
    return st;
}

void aitk_bench_result_free(aitk_bench_result *r)
{
    aitk_free(r->times);
    aitk_free(r->bucket_of);
    r->times = NULL;
    r->bucket_of = NULL;
    aitk_str_free(&r->message);
}
