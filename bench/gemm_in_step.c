/* GEMMs inside a step against the same GEMMs alone (gemm_in_step.h). */
#include "bench/gemm_in_step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SEEN_M = 1, SEEN_N = 2, SEEN_K = 4, SEEN_BATCH = 8, SEEN_TA = 16, SEEN_TB = 32,
       SEEN_BETA = 64, SEEN_A = 128, SEEN_B = 256, SEEN_C = 512, SEEN_COMPUTE = 1024,
       SEEN_EPILOGUE = 2048, SEEN_ALL = 4095 };

static bool parse_long(const char *v, size_t len, long lo, long *out)
{
    if (!len || len > 18)
        return false;
    long x = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return false;
        x = x * 10 + (v[i] - '0');
    }
    *out = x;
    return x >= lo;
}

static bool parse_flag(const char *v, size_t len, int *out)
{
    long x = 0;
    if (!parse_long(v, len, 0, &x) || x > 1)
        return false;
    *out = (int)x;
    return true;
}

static bool parse_name(const char *v, size_t len, char out[8])
{
    if (!len || len >= 8)
        return false;
    memcpy(out, v, len);
    out[len] = '\0';
    return true;
}

/* One "key=value" token into *s; *seen gets the key's bit. Unknown keys
 * are skipped, so the form can grow. */
static bool parse_token(const char *t, size_t len, aitk_gemm_shape *s, int *seen)
{
    const char *eq = memchr(t, '=', len);
    if (!eq)
        return false;
    size_t klen = (size_t)(eq - t), vlen = len - klen - 1;
    const char *v = eq + 1;
#define KEY(name) (klen == sizeof(name) - 1 && !memcmp(t, name, klen))
    bool ok = true;
    if (KEY("m"))
        ok = parse_long(v, vlen, 1, &s->m), *seen |= SEEN_M;
    else if (KEY("n"))
        ok = parse_long(v, vlen, 1, &s->n), *seen |= SEEN_N;
    else if (KEY("k"))
        ok = parse_long(v, vlen, 1, &s->k), *seen |= SEEN_K;
    else if (KEY("batch"))
        ok = parse_long(v, vlen, 1, &s->batch), *seen |= SEEN_BATCH;
    else if (KEY("ta"))
        ok = parse_flag(v, vlen, &s->trans_a), *seen |= SEEN_TA;
    else if (KEY("tb"))
        ok = parse_flag(v, vlen, &s->trans_b), *seen |= SEEN_TB;
    else if (KEY("beta"))
        ok = parse_flag(v, vlen, &s->beta), *seen |= SEEN_BETA;
    else if (KEY("a"))
        ok = parse_name(v, vlen, s->a), *seen |= SEEN_A;
    else if (KEY("b"))
        ok = parse_name(v, vlen, s->b), *seen |= SEEN_B;
    else if (KEY("c"))
        ok = parse_name(v, vlen, s->c), *seen |= SEEN_C;
    else if (KEY("compute"))
        ok = parse_name(v, vlen, s->compute), *seen |= SEEN_COMPUTE;
    else if (KEY("epilogue"))
        ok = parse_name(v, vlen, s->epilogue), *seen |= SEEN_EPILOGUE;
#undef KEY
    return ok;
}

bool aitk_gemm_shape_parse(const char *kernel, aitk_gemm_shape *out)
{
    if (!kernel || !out)
        return false;
    const char *open = strchr(kernel, '[');
    const char *close = open ? strchr(open, ']') : NULL;
    if (!close)
        return false;
    aitk_gemm_shape s;
    memset(&s, 0, sizeof s);
    int seen = 0;
    for (const char *p = open + 1; p < close;) {
        while (p < close && *p == ' ')
            p++;
        const char *end = p;
        while (end < close && *end != ' ')
            end++;
        if (end > p && !parse_token(p, (size_t)(end - p), &s, &seen))
            return false;
        p = end;
    }
    if (seen != SEEN_ALL)
        return false;
    *out = s;
    return true;
}

bool aitk_gemm_shape_format(const aitk_gemm_shape *s, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "[m=%ld n=%ld k=%ld batch=%ld ta=%d tb=%d beta=%d a=%s b=%s c=%s "
                     "compute=%s epilogue=%s]",
                     s->m, s->n, s->k, s->batch, s->trans_a, s->trans_b, s->beta, s->a, s->b,
                     s->c, s->compute, s->epilogue);
    return n >= 0 && (size_t)n < len;
}

bool aitk_gemm_shape_equal(const aitk_gemm_shape *x, const aitk_gemm_shape *y)
{
    return x->m == y->m && x->n == y->n && x->k == y->k && x->batch == y->batch &&
           x->trans_a == y->trans_a && x->trans_b == y->trans_b && x->beta == y->beta &&
           !strcmp(x->a, y->a) && !strcmp(x->b, y->b) && !strcmp(x->c, y->c) &&
           !strcmp(x->compute, y->compute) && !strcmp(x->epilogue, y->epilogue);
}

double aitk_gemm_shape_flops(const aitk_gemm_shape *s)
{
    return 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)s->batch;
}

/* The isolated rate of shape s; 0 when none is given. */
static double isolated_rate(const aitk_gemm_rate *iso, size_t n, const aitk_gemm_shape *s)
{
    for (size_t i = 0; i < n; i++)
        if (aitk_gemm_shape_equal(&iso[i].shape, s))
            return iso[i].flops_per_s;
    return 0.0;
}

/* Adds one timed path to its row; a problem no earlier path had gets a new
 * row while there is room, and is counted either way. */
static void add_to_rows(aitk_gemm_in_step_row *rows, size_t cap, aitk_gemm_in_step *sum,
                        const aitk_gemm_shape *s, const aitk_backend_path *p, double iso,
                        bool new_problem)
{
    for (size_t r = 0; r < sum->n_rows && r < cap; r++)
        if (aitk_gemm_shape_equal(&rows[r].shape, s)) {
            rows[r].calls += p->calls;
            rows[r].ms += p->ms;
            rows[r].flops += (double)p->calls * aitk_gemm_shape_flops(s);
            return;
        }
    if (!new_problem)
        return; /* its row is past cap */
    if (sum->n_rows < cap) {
        aitk_gemm_in_step_row *row = &rows[sum->n_rows];
        memset(row, 0, sizeof *row);
        row->shape = *s;
        row->calls = p->calls;
        row->ms = p->ms;
        row->flops = (double)p->calls * aitk_gemm_shape_flops(s);
        row->isolated_flops_per_s = iso;
    }
    sum->n_rows++;
}

/* Whether an earlier timed GEMM path has shape s (rows past cap are
 * counted without being kept). */
static bool seen_before(const aitk_backend_path *paths, size_t upto, const aitk_gemm_shape *s)
{
    aitk_gemm_shape o;
    for (size_t i = 0; i < upto; i++)
        if (paths[i].calls > 0 && paths[i].ms >= 0.0 &&
            aitk_gemm_shape_parse(paths[i].kernel, &o) && aitk_gemm_shape_equal(&o, s))
            return true;
    return false;
}

static void finish_rows(aitk_gemm_in_step_row *rows, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        aitk_gemm_in_step_row *row = &rows[r];
        row->flops_per_s = row->ms > 0.0 ? row->flops / (row->ms * 1e-3) : 0.0;
        row->ratio = row->isolated_flops_per_s > 0.0
                         ? row->flops_per_s / row->isolated_flops_per_s
                         : -1.0;
    }
}

aitk_status aitk_gemm_in_step_compute(const aitk_backend_path *paths, size_t n_paths,
                                      const aitk_gemm_rate *isolated, size_t n_isolated,
                                      aitk_gemm_in_step_row *rows, size_t cap,
                                      aitk_gemm_in_step *sum)
{
    if (!sum || (n_paths && !paths) || (n_isolated && !isolated) || (cap && !rows))
        return AITK_E_INVAL;
    memset(sum, 0, sizeof *sum);
    for (size_t i = 0; i < n_isolated; i++)
        if (!(isolated[i].flops_per_s > 0.0) || !isfinite(isolated[i].flops_per_s))
            return AITK_E_INVAL;
    for (size_t i = 0; i < n_paths; i++) {
        const aitk_backend_path *p = &paths[i];
        aitk_gemm_shape s;
        if (p->calls <= 0 || !aitk_gemm_shape_parse(p->kernel, &s))
            continue;
        if (p->ms < 0.0) {
            sum->untimed_paths++;
            continue;
        }
        if (!isfinite(p->ms))
            return AITK_E_INVAL;
        const double flops = (double)p->calls * aitk_gemm_shape_flops(&s);
        const double iso = isolated_rate(isolated, n_isolated, &s);
        sum->calls += p->calls;
        sum->ms += p->ms;
        sum->flops += flops;
        if (iso > 0.0) {
            sum->matched_ms += p->ms;
            sum->matched_flops += flops;
            sum->isolated_ms += flops / iso * 1e3;
        }
        add_to_rows(rows, cap, sum, &s, p, iso, !seen_before(paths, i, &s));
    }
    finish_rows(rows, sum->n_rows < cap ? sum->n_rows : cap);
    sum->flops_per_s = sum->ms > 0.0 ? sum->flops / (sum->ms * 1e-3) : 0.0;
    sum->matched_share = sum->flops > 0.0 ? sum->matched_flops / sum->flops : 0.0;
    sum->ratio = sum->matched_ms > 0.0 ? sum->isolated_ms / sum->matched_ms : -1.0;
    return sum->n_rows > cap ? AITK_E_RANGE : AITK_OK;
}
