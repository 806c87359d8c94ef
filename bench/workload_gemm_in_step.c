/* The workload entry's "gemm_in_step" (workload_gemm_in_step.h). */
#include "bench/workload_gemm_in_step.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/gemm_isolated.h"
#include "bench/paths_since.h"
#include "bench/runner.h"
#include "common/alloc.h"
#include "common/stop.h"
#include "common/str.h"

/* Each problem alone for at least this long (the last batch of back-to-back
 * calls, bench/gemm_isolated.h): with CUDA events timing each call, a
 * tenth of a second is thousands of calls of a FLUX projection, and 24
 * problems stay under ~10 s after the run. */
#define ISOLATED_MIN_S 0.1

static const char *const SOURCE =
    "the backend's device time per op (CUDA events, AITK_TIME_OPS=1) of every cuBLASLt GEMM "
    "in the timed steps (the warm-up left out), merged per problem; the slowest problems, "
    "up to 95% of the GEMM time and at most 24, then timed alone through the same op at the "
    "same shape; ratio = sum(flops_i / isolated_rate_i) / sum(ms_i) over the problems with "
    "an isolated rate (weighted by time, not a mean of per-problem ratios); matched_share "
    "is their share of the step's GEMM FLOPs";

/* Distinct problems by time in the step, most first; ties by FLOPs, then
 * by shape, so the order does not depend on qsort. */
static int by_time_desc(const void *x, const void *y)
{
    const aitk_gemm_in_step_row *a = x, *b = y;
    if (a->ms != b->ms)
        return a->ms > b->ms ? -1 : 1;
    if (a->flops != b->flops)
        return a->flops > b->flops ? -1 : 1;
    if (a->shape.m != b->shape.m)
        return a->shape.m < b->shape.m ? -1 : 1;
    if (a->shape.n != b->shape.n)
        return a->shape.n < b->shape.n ? -1 : 1;
    return a->shape.k < b->shape.k ? -1 : a->shape.k > b->shape.k;
}

/* The step's problems (rows owned by the caller, sorted slowest first) and
 * the totals. */
static aitk_status step_rows(const aitk_backend_path *paths, size_t n_paths,
                             const aitk_gemm_rate *iso, size_t n_iso,
                             aitk_gemm_in_step_row **rows, aitk_gemm_in_step *sum)
{
    /* no more distinct problems than paths */
    *rows = aitk_calloc(n_paths ? n_paths : 1, sizeof **rows);
    if (!*rows)
        return AITK_E_NOMEM;
    aitk_status st = aitk_gemm_in_step_compute(paths, n_paths, iso, n_iso, *rows, n_paths, sum);
    if (st) {
        aitk_free(*rows);
        *rows = NULL;
        return st;
    }
    qsort(*rows, sum->n_rows, sizeof **rows, by_time_desc);
    return AITK_OK;
}

aitk_status aitk_bench_gemm_pick(const aitk_backend_path *paths, size_t n_paths,
                                 aitk_gemm_shape *out, size_t cap, size_t *n)
{
    if (!n || (n_paths && !paths) || (cap && !out))
        return AITK_E_INVAL;
    *n = 0;
    aitk_gemm_in_step_row *rows = NULL;
    aitk_gemm_in_step sum;
    aitk_status st = step_rows(paths, n_paths, NULL, 0, &rows, &sum);
    if (st)
        return st;
    double covered = 0.0;
    for (size_t i = 0; i < sum.n_rows && *n < cap; i++) {
        /* the share is reached: the rest is the tail */
        if (covered >= AITK_BENCH_GEMM_SHARE * sum.ms && covered > 0.0)
            break;
        out[(*n)++] = rows[i].shape;
        covered += rows[i].ms;
    }
    aitk_free(rows);
    return AITK_OK;
}

/* Counts the paths that name a GEMM problem and ran: timed and untimed. */
static void count_gemm_paths(const aitk_backend_path *paths, size_t n, size_t *timed,
                             size_t *untimed)
{
    *timed = *untimed = 0;
    for (size_t i = 0; i < n; i++) {
        aitk_gemm_shape s;
        if (paths[i].calls <= 0 || !aitk_gemm_shape_parse(paths[i].kernel, &s))
            continue;
        if (paths[i].ms >= 0.0)
            (*timed)++;
        else
            (*untimed)++;
    }
}

/* "m=... epilogue=..." without the path's brackets. */
static bool shape_text(const aitk_gemm_shape *s, char *buf, size_t len)
{
    if (!aitk_gemm_shape_format(s, buf, len))
        return false;
    size_t l = strlen(buf);
    memmove(buf, buf + 1, l - 2);
    buf[l - 2] = '\0';
    return true;
}

static bool add_row(cJSON *arr, const aitk_gemm_in_step_row *r)
{
    char shape[200];
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o))
        return cJSON_Delete(o), false;
    if (!shape_text(&r->shape, shape, sizeof shape) ||
        !cJSON_AddStringToObject(o, "shape", shape) ||
        !cJSON_AddNumberToObject(o, "calls", (double)r->calls) ||
        !cJSON_AddNumberToObject(o, "ms_in_step", r->ms) ||
        !cJSON_AddNumberToObject(o, "tflops_in_step", r->flops_per_s * 1e-12))
        return false;
    if (r->isolated_flops_per_s > 0.0 &&
        (!cJSON_AddNumberToObject(o, "tflops_isolated", r->isolated_flops_per_s * 1e-12) ||
         !cJSON_AddNumberToObject(o, "ratio", r->ratio)))
        return false;
    return true;
}

/* The measured object: totals, verdict, rows. */
static bool fill_measured(cJSON *o, const aitk_gemm_in_step *sum,
                          const aitk_gemm_in_step_row *rows, const char *note)
{
    const bool matched = sum->ratio >= 0.0;
    const char *status = !matched ? "skip" : sum->ratio >= AITK_BENCH_GEMM_TARGET ? "pass"
                                                                                   : "warn";
    if (!cJSON_AddStringToObject(o, "status", status) ||
        (matched && !cJSON_AddNumberToObject(o, "ratio", sum->ratio)) ||
        !cJSON_AddNumberToObject(o, "target", AITK_BENCH_GEMM_TARGET) ||
        !cJSON_AddNumberToObject(o, "calls", (double)sum->calls) ||
        !cJSON_AddNumberToObject(o, "ms_in_step", sum->ms) ||
        !cJSON_AddNumberToObject(o, "tflops_in_step", sum->flops_per_s * 1e-12) ||
        !cJSON_AddNumberToObject(o, "matched_share", sum->matched_share) ||
        !cJSON_AddNumberToObject(o, "problems_total", (double)sum->n_rows))
        return false;
    cJSON *arr = cJSON_AddArrayToObject(o, "problems");
    if (!arr)
        return false;
    for (size_t i = 0; i < sum->n_rows && i < AITK_BENCH_GEMM_MAX_ROWS; i++)
        if (!add_row(arr, &rows[i]))
            return false;
    aitk_str msg = AITK_STR_INIT;
    if (!matched)
        aitk_str_append(&msg, "no GEMM problem of the step could be timed alone");
    if (note && *note)
        aitk_str_appendf(&msg, "%s%s", msg.len ? "; " : "", note);
    bool ok = !aitk_str_status(&msg) &&
              (!msg.len || cJSON_AddStringToObject(o, "message", aitk_str_cstr(&msg))) &&
              cJSON_AddStringToObject(o, "source", SOURCE);
    aitk_str_free(&msg);
    return ok;
}

aitk_status aitk_bench_gemm_in_step_json(cJSON *entry, const aitk_backend_path *paths,
                                         size_t n_paths, const aitk_gemm_rate *isolated,
                                         size_t n_isolated, const char *note)
{
    if (!entry || (n_paths && !paths) || (n_isolated && !isolated))
        return AITK_E_INVAL;
    size_t timed, untimed;
    count_gemm_paths(paths, n_paths, &timed, &untimed);
    if (!timed && !untimed)
        return AITK_OK;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    if (!timed) {
        if (!cJSON_AddStringToObject(o, "status", "skip") ||
            !cJSON_AddNumberToObject(o, "target", AITK_BENCH_GEMM_TARGET) ||
            !cJSON_AddStringToObject(o, "message", AITK_BENCH_GEMM_NOT_TIMED))
            st = AITK_E_NOMEM;
    } else {
        aitk_gemm_in_step_row *rows = NULL;
        aitk_gemm_in_step sum;
        st = step_rows(paths, n_paths, isolated, n_isolated, &rows, &sum);
        if (!st && !fill_measured(o, &sum, rows, note))
            st = AITK_E_NOMEM;
        aitk_free(rows);
    }
    if (!st && !cJSON_AddItemToObject(entry, "gemm_in_step", o))
        st = AITK_E_NOMEM;
    if (st)
        cJSON_Delete(o);
    return st;
}

/* What the isolated timings left out, in words; "" when nothing. */
static void isolated_note(aitk_str *note, size_t unsupported, size_t failed,
                          const char *first_error, bool interrupted)
{
    if (unsupported)
        aitk_str_appendf(note, "%zu of the problems picked have no op that runs them alone "
                               "(an fp32 C: the LoRA gradients accumulated inside "
                               "lora_linear_backward) and are left out", unsupported);
    if (failed)
        aitk_str_appendf(note, "%s%zu could not be timed alone: %s", note->len ? "; " : "",
                         failed, first_error);
    if (interrupted)
        aitk_str_appendf(note, "%s%s before every problem picked was timed alone",
                         note->len ? "; " : "", aitk_stop_words());
}

/* Times the picked problems alone on be; rates[] gets those that ran. */
static void time_alone(const aitk_backend *be, const aitk_gemm_shape *picked, size_t n_picked,
                       aitk_gemm_rate *rates, size_t *n_rates, aitk_str *note)
{
    size_t unsupported = 0, failed = 0;
    char first_error[AITK_BACKEND_ERROR_LEN] = "";
    bool interrupted = false;
    *n_rates = 0;
    for (size_t i = 0; i < n_picked; i++) {
        if (aitk_stop_requested()) {
            interrupted = true;
            break;
        }
        aitk_gemm_isolated iso;
        aitk_status st = aitk_gemm_isolated_time(be, &picked[i], ISOLATED_MIN_S, &iso);
        if (!st) {
            rates[(*n_rates)++] = iso.rate;
        } else if (st == AITK_E_UNSUPPORTED) {
            unsupported++;
        } else if (failed++ == 0) {
            char why[AITK_BACKEND_ERROR_LEN] = "";
            if (be->last_error)
                be->last_error(why, sizeof why);
            snprintf(first_error, sizeof first_error, "%s%s%s", aitk_strerror(st),
                     *why ? ": " : "", why);
        }
    }
    isolated_note(note, unsupported, failed, first_error, interrupted);
}

aitk_status aitk_bench_gemm_in_step_add(cJSON *entry, const aitk_backend *be,
                                        const aitk_bench_paths *warm,
                                        const aitk_bench_paths *after)
{
    if (!entry || !be || !warm || !after || !warm->ok || !after->ok)
        return AITK_OK;
    aitk_backend_path *step = aitk_calloc(after->n ? after->n : 1, sizeof *step);
    if (!step)
        return AITK_E_NOMEM;
    size_t n = 0;
    /* AITK_E_INVAL: the backend was reopened in between; no figure */
    aitk_status st = aitk_paths_since(after->items, after->n, warm->items, warm->n, step,
                                      after->n, &n);
    if (st) {
        aitk_free(step);
        return AITK_OK;
    }
    aitk_gemm_shape picked[AITK_BENCH_GEMM_MAX_TIMED];
    aitk_gemm_rate rates[AITK_BENCH_GEMM_MAX_TIMED];
    size_t n_picked = 0, n_rates = 0;
    aitk_str note = AITK_STR_INIT;
    st = aitk_bench_gemm_pick(step, n, picked, AITK_BENCH_GEMM_MAX_TIMED, &n_picked);
    if (!st)
        time_alone(be, picked, n_picked, rates, &n_rates, &note);
    if (!st)
        st = aitk_str_status(&note);
    if (!st)
        st = aitk_bench_gemm_in_step_json(entry, step, n, rates, n_rates, aitk_str_cstr(&note));
    aitk_str_free(&note);
    aitk_free(step);
    return st == AITK_E_NOMEM ? st : AITK_OK;
}
