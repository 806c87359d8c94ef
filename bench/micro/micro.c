/* The microbenchmark suite (see micro.h). Every benchmark times one op of
 * the backend's table (kernels/ops.h) at a reference workload's real shape:
 * the CPU reference and the GPU backend run the same code here, each
 * iteration the op and then the backend's synchronize, so a GPU figure is
 * the op's whole time, not a launch's. Buffers are allocated inside each
 * benchmark function, before its timed loop, and freed after it, so only
 * one benchmark's memory is live at a time. Inputs come from the backend's
 * own generator (uniform, non-zero): zeros or denormals would let some
 * kernels take fast paths real activations never take. */
#include "bench/micro/micro.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "bench/gpu_backend.h"
#include "bench/runner.h"
#include "common/alloc.h"
#include "common/clock.h"
#include "common/stop.h"
#include "kernels/backend.h"
#include "kernels/ops.h"
#include "models/spec.h"

typedef enum kind { K_COPY, K_GEMM, K_ATTENTION_FORWARD, K_ATTENTION_BACKWARD } kind;

typedef struct bench_def {
    aitk_micro_meta meta;
    aitk_str name, shape;
    kind kind;
    const aitk_backend *be;
    const char *device_name; /* the GPU's name; NULL on the CPU */
    long m, n, k;            /* GEMM: C (m,n) = A (m,k) W^T, W (n,k) */
    long t, hq, hkv, d;      /* attention */
    size_t elems;            /* copy: activation elements */
} bench_def;

/* The op a benchmark times, by its name in the backend's paths. */
static const char *op_name(kind k)
{
    switch (k) {
    case K_COPY: return "copy2d";
    case K_GEMM: return "gemm";
    case K_ATTENTION_FORWARD: return "attention_forward";
    case K_ATTENTION_BACKWARD: return "attention_backward";
    }
    return "";
}

static bool interrupted(aitk_mb_state *s)
{
    if (!aitk_stop_requested())
        return false;
    aitk_mb_skip_with_error(s, aitk_stop_words());
    return true;
}

/* A failed op: the backend's own words when it has them. */
static void op_failed(aitk_mb_state *s, const bench_def *b, aitk_status st)
{
    char why[AITK_BACKEND_ERROR_LEN] = "";
    if (b->be->last_error)
        b->be->last_error(why, sizeof why);
    aitk_mb_skip_with_error(s, why[0] ? why : aitk_strerror(st));
}

/* Buffers of one benchmark, in backend memory, freed together. */
typedef struct bench_bufs {
    aitk_mem_account acct;
    aitk_buf b[12]; /* attention backward takes the most: nine */
    size_t n;
} bench_bufs;

static void *buf_get(bench_bufs *bb, const bench_def *d, size_t bytes, aitk_status *st)
{
    if (*st)
        return NULL;
    if (bb->n == sizeof bb->b / sizeof *bb->b) {
        *st = AITK_E_INTERNAL; /* a benchmark wanting more buffers: a bug here, said, not a crash */
        return NULL;
    }
    aitk_buf *b = &bb->b[bb->n++];
    *st = aitk_buf_alloc(d->be->ops, &bb->acct, b, bytes, AITK_MEM_WORKSPACE, d->meta.name);
    return *st ? NULL : b->ptr;
}

static void bufs_free(bench_bufs *bb, const bench_def *d)
{
    for (size_t i = 0; i < bb->n; i++)
        aitk_buf_free(d->be->ops, &bb->acct, &bb->b[i]);
}

static aitk_act *act_get(bench_bufs *bb, const bench_def *d, size_t elems, aitk_status *st)
{
    return buf_get(bb, d, aitk_dtype_bytes(d->be->ops->act_dtype, elems), st);
}

static aitk_status fill(const bench_def *d, aitk_act *x, size_t n, uint64_t key, float scale)
{
    return d->be->ops->draw_act(x, n, key, 0, scale, 0.0f);
}

/* Runs `call` once untimed -- the first touch of fresh pages, and on a GPU
 * the library's plan search, are not what the benchmark measures -- then
 * until Google Benchmark has enough time, synchronizing after each call. A
 * failure skips the benchmark with the backend's words. */
#define TIMED_LOOP(s, d, call)                                            \
    do {                                                                  \
        aitk_status first_ = (call);                                      \
        if (!first_)                                                      \
            first_ = (d)->be->synchronize();                              \
        if (first_) {                                                     \
            op_failed(s, d, first_);                                      \
            break;                                                        \
        }                                                                 \
        while (aitk_mb_keep_running(s)) {                                 \
            if (interrupted(s))                                           \
                break;                                                    \
            aitk_status st_ = (call);                                     \
            if (!st_)                                                     \
                st_ = (d)->be->synchronize();                             \
            if (st_) {                                                    \
                op_failed(s, d, st_);                                     \
                break;                                                    \
            }                                                             \
        }                                                                 \
    } while (0)

static void run_copy(aitk_mb_state *s, void *user)
{
    const bench_def *b = user;
    const aitk_ops *o = b->be->ops;
    bench_bufs bb = {0};
    aitk_status st = AITK_OK;
    aitk_act *src = act_get(&bb, b, b->elems, &st), *dst = act_get(&bb, b, b->elems, &st);
    if (!st)
        st = fill(b, src, b->elems, 1, 1.0f);
    /* Rows of 4096 elements: long enough that a copy kernel runs at full width. */
    const int cols = 4096, rows = (int)(b->elems / (size_t)cols);
    if (st)
        op_failed(s, b, st);
    else
        TIMED_LOOP(s, b, o->copy2d(dst, cols, src, cols, rows, cols));
    double bytes = 2.0 * (double)aitk_dtype_bytes(o->act_dtype, (size_t)rows * (size_t)cols);
    aitk_mb_set_counter(s, "bytes", bytes * (double)aitk_mb_iterations(s), AITK_MB_COUNTER_RATE);
    bufs_free(&bb, b);
}

static void run_gemm(aitk_mb_state *s, void *user)
{
    const bench_def *b = user;
    const aitk_ops *o = b->be->ops;
    size_t na = (size_t)(b->m * b->k), nw = (size_t)(b->n * b->k), nc = (size_t)(b->m * b->n);
    bench_bufs bb = {0};
    aitk_status st = AITK_OK;
    aitk_act *a = act_get(&bb, b, na, &st), *w = act_get(&bb, b, nw, &st),
             *c = act_get(&bb, b, nc, &st);
    if (!st)
        st = fill(b, a, na, 2, 1.0f);
    if (!st)
        st = fill(b, w, nw, 3, 0.02f);
    if (st)
        op_failed(s, b, st);
    else /* A Linear: y (m,n) = x (m,k) W^T, W stored (n,k) as in PyTorch. */
        TIMED_LOOP(s, b, o->gemm(c, a, w, (int)b->m, (int)b->n, (int)b->k, false, true, 1.0f,
                                 0.0f, 1, 0, 0, 0));
    double flops = 2.0 * (double)b->m * (double)b->n * (double)b->k;
    aitk_mb_set_counter(s, "FLOPS", flops * (double)aitk_mb_iterations(s), AITK_MB_COUNTER_RATE);
    bufs_free(&bb, b);
}

static void run_attention(aitk_mb_state *s, void *user)
{
    const bench_def *b = user;
    const aitk_ops *o = b->be->ops;
    size_t nq = (size_t)(b->t * b->hq * b->d), nkv = (size_t)(b->t * b->hkv * b->d);
    bench_bufs bb = {0};
    aitk_status st = AITK_OK;
    aitk_act *q = act_get(&bb, b, nq, &st), *k = act_get(&bb, b, nkv, &st),
             *v = act_get(&bb, b, nkv, &st), *out = act_get(&bb, b, nq, &st);
    float *lse = buf_get(&bb, b, (size_t)(b->hq * b->t) * sizeof(float), &st);
    const bool backward = b->kind == K_ATTENTION_BACKWARD;
    aitk_act *dout = backward ? act_get(&bb, b, nq, &st) : NULL;
    aitk_act *dq = backward ? act_get(&bb, b, nq, &st) : NULL;
    aitk_act *dk = backward ? act_get(&bb, b, nkv, &st) : NULL;
    aitk_act *dv = backward ? act_get(&bb, b, nkv, &st) : NULL;
    const float scale = 1.0f / sqrtf((float)b->d);
    const int t = (int)b->t, hq = (int)b->hq, hkv = (int)b->hkv, d = (int)b->d;
    if (!st)
        st = fill(b, q, nq, 4, 1.0f);
    if (!st)
        st = fill(b, k, nkv, 5, 1.0f);
    if (!st)
        st = fill(b, v, nkv, 6, 1.0f);
    if (!st && backward)
        st = fill(b, dout, nq, 7, 1.0f);
    /* The backward reads the forward's output and log-sum-exp. */
    if (!st && backward)
        st = o->attention_forward(out, lse, q, k, v, 1, t, hq, hkv, d, scale);
    if (st)
        op_failed(s, b, st);
    else if (backward)
        TIMED_LOOP(s, b, o->attention_backward(dq, dk, dv, dout, q, k, v, out, lse, 1, t, hq,
                                               hkv, d, scale));
    else
        TIMED_LOOP(s, b, o->attention_forward(out, lse, q, k, v, 1, t, hq, hkv, d, scale));
    /* QK^T and PV: 2 GEMMs of 2*T*T*D per head forward; the backward
     * recomputes QK^T and adds four more of the same size (dV, dP, dQ, dK). */
    double flops = (backward ? 10.0 : 4.0) * (double)b->t * (double)b->t * (double)b->d *
                   (double)b->hq;
    aitk_mb_set_counter(s, "FLOPS", flops * (double)aitk_mb_iterations(s), AITK_MB_COUNTER_RATE);
    bufs_free(&bb, b);
}

/* ---- reading Google Benchmark's JSON back ---- */

static double to_ms(double t, const char *unit)
{
    if (!unit || !strcmp(unit, "ns"))
        return t / 1e6;
    if (!strcmp(unit, "us"))
        return t / 1e3;
    if (!strcmp(unit, "s"))
        return t * 1e3;
    return t;
}

aitk_status aitk_micro_entry_from_json(const char *json, const aitk_micro_meta *meta,
                                       cJSON **entry, aitk_str *err)
{
    *entry = NULL;
    cJSON *doc = cJSON_Parse(json);
    if (!doc) {
        aitk_str_append(err, "Google Benchmark's JSON report could not be parsed");
        return AITK_E_PARSE;
    }
    const cJSON *b, *found = NULL;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(doc, "benchmarks"))
    {
        /* Google Benchmark appends its settings: "name/min_time:0.200". */
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(b, "name");
        size_t len = strlen(meta->name);
        if (cJSON_IsString(n) && !strncmp(n->valuestring, meta->name, len) &&
            (n->valuestring[len] == '\0' || n->valuestring[len] == '/'))
            found = b;
    }
    aitk_status st = AITK_OK;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(found, "error_occurred");
    const cJSON *val = cJSON_GetObjectItemCaseSensitive(found, meta->counter);
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(found, "real_time");
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(found, "iterations");
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(found, "time_unit");
    if (!found) {
        aitk_str_appendf(err, "%s: missing from Google Benchmark's report", meta->name);
        st = AITK_E_NOTFOUND;
    } else if (cJSON_IsTrue(e)) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(found, "error_message");
        aitk_str_appendf(err, "%s: %s", meta->name,
                         cJSON_IsString(m) ? m->valuestring : "failed");
        st = AITK_E_IO;
    } else if (!cJSON_IsNumber(val) || !cJSON_IsNumber(rt) || !cJSON_IsNumber(it)) {
        aitk_str_appendf(err, "%s: the report lacks %s, real_time or iterations", meta->name,
                         meta->counter);
        st = AITK_E_PARSE;
    }
    cJSON *o = st ? NULL : cJSON_CreateObject();
    if (!st && (!o || !cJSON_AddStringToObject(o, "name", meta->name) ||
                !cJSON_AddStringToObject(o, "category", meta->category) ||
                !cJSON_AddStringToObject(o, "backend", meta->backend) ||
                !cJSON_AddStringToObject(o, "shape", meta->shape) ||
                !cJSON_AddNumberToObject(o, "value", val->valuedouble * meta->scale) ||
                !cJSON_AddStringToObject(o, "unit", meta->unit) ||
                !cJSON_AddBoolToObject(o, "higher_is_better", meta->higher_is_better) ||
                !cJSON_AddNumberToObject(
                    o, "time_ms",
                    to_ms(rt->valuedouble, cJSON_IsString(unit) ? unit->valuestring : NULL)) ||
                !cJSON_AddNumberToObject(o, "iterations", it->valuedouble))) {
        cJSON_Delete(o);
        o = NULL;
        st = AITK_E_NOMEM;
    }
    cJSON_Delete(doc);
    *entry = o;
    return st;
}

/* ---- the suite ---- */

static aitk_status find_linear(const aitk_model_spec *spec, const char *block, const char *lin,
                               const aitk_linear_spec **out)
{
    for (size_t i = 0; i < spec->n_blocks; i++) {
        if (strcmp(spec->blocks[i].name, block) != 0)
            continue;
        for (size_t j = 0; j < spec->blocks[i].n_linears; j++)
            if (!strcmp(spec->blocks[i].linears[j].name, lin)) {
                *out = &spec->blocks[i].linears[j];
                return AITK_OK;
            }
    }
    return AITK_E_NOTFOUND;
}

/* The implementation that served the benchmark's op most often since the
 * backend was opened ("cuDNN 9.14.0 fused SDPA", "OpenBLAS sgemm (fp32)"):
 * the report says which kernel a figure belongs to. */
static aitk_status add_kernel(cJSON *e, const bench_def *d)
{
    /* GEMM paths are per shape (kernels/backend.h): room for every one. */
    static aitk_backend_path paths[1024];
    size_t n = 0;
    if (!d->be->paths || d->be->paths(paths, sizeof paths / sizeof *paths, &n))
        return AITK_OK;
    const aitk_backend_path *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(paths[i].op, op_name(d->kind)) && (!best || paths[i].calls > best->calls))
            best = &paths[i];
    if (best && !cJSON_AddStringToObject(e, "kernel", best->kernel))
        return AITK_E_NOMEM;
    return AITK_OK;
}

static aitk_status run_one(bench_def *d, double min_time, cJSON *micro, aitk_str *notes)
{
    d->meta.name = aitk_str_cstr(&d->name);
    d->meta.shape = aitk_str_cstr(&d->shape);
    d->meta.backend = d->be->name;
    d->meta.higher_is_better = true;
    aitk_mb_fn fn = d->kind == K_COPY ? run_copy : d->kind == K_GEMM ? run_gemm : run_attention;
    aitk_mb_options opt = {.min_time_s = min_time};
    aitk_str json = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_mb_clear();
    aitk_status st = aitk_mb_register(d->meta.name, fn, d, &opt);
    /* One benchmark registered at a time, so no name filter is needed. */
    if (!st)
        st = aitk_mb_run(NULL, &json, &err);
    cJSON *e = NULL;
    if (!st)
        st = aitk_micro_entry_from_json(aitk_str_cstr(&json), &d->meta, &e, &err);
    aitk_mb_clear();
    if (!st && d->device_name && !cJSON_AddStringToObject(e, "device", d->device_name))
        st = AITK_E_NOMEM;
    if (!st)
        st = add_kernel(e, d);
    if (!st && !cJSON_AddItemToArray(micro, e))
        st = AITK_E_NOMEM;
    if (st)
        cJSON_Delete(e);
    if (st && st != AITK_E_NOMEM) {
        /* The report reader's messages already start with the name. */
        const char *why = err.len ? aitk_str_cstr(&err) : aitk_strerror(st);
        const size_t n = strlen(d->meta.name);
        if (strncmp(why, d->meta.name, n) == 0 && why[n] == ':')
            aitk_str_appendf(notes, "%s; ", why);
        else
            aitk_str_appendf(notes, "%s: %s; ", d->meta.name, why);
    }
    aitk_str_free(&json);
    aitk_str_free(&err);
    return st == AITK_E_NOMEM ? st : AITK_OK;
}

/* Where a benchmark runs: the backend, the device's name (GPU), the
 * resolution its shapes are taken at, and the names' backend.dtype part. */
typedef struct bench_target {
    const aitk_backend *be;
    const char *device_name;
    bool gpu;
    long gemm_resolution, attention_resolution;
} bench_target;

/* "cpu.fp32", "cuda.bf16": the backend and the storage it computes from. */
static void name_prefix(aitk_str *name, const char *what, const bench_target *tg)
{
    aitk_str_appendf(name, "%s.%s.%s", what, tg->be->name,
                     tg->be->ops->act_dtype == AITK_DTYPE_BF16 ? "bf16" : "fp32");
}

static void set_meta(bench_def *d, const char *category, const bench_target *tg,
                     const char *cpu_unit, double cpu_scale, const char *gpu_unit,
                     double gpu_scale, const char *counter)
{
    d->be = tg->be;
    d->device_name = tg->device_name;
    d->meta = (aitk_micro_meta){.category = category, .counter = counter,
                                .unit = tg->gpu ? gpu_unit : cpu_unit,
                                .scale = tg->gpu ? gpu_scale : cpu_scale};
}

/* A GEMM at one Linear's real shape on the target. */
static aitk_status add_gemm(bench_def *d, const aitk_bench_gemm_cfg *g, const bench_target *tg,
                            aitk_str *notes)
{
    aitk_model_spec *spec = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_model_spec_load(g->model, false, &spec, &err);
    const aitk_linear_spec *l = NULL;
    if (!st && (st = find_linear(spec, g->block, g->linear, &l)))
        aitk_str_appendf(&err, "no Linear %s in block %s", g->linear, g->block);
    if (st) {
        aitk_str_appendf(notes, "gemm %s.%s.%s not run: %s; ", g->model, g->block, g->linear,
                         aitk_str_cstr(&err));
    } else {
        long res = tg->gemm_resolution;
        d->kind = K_GEMM;
        d->m = aitk_model_spec_tokens(spec, l->stream, res, l->fixed_tokens);
        d->n = l->out;
        d->k = l->in;
        name_prefix(&d->name, "gemm", tg);
        aitk_str_appendf(&d->name, ".%s.%s", g->model, g->linear);
        aitk_str_appendf(&d->shape, "M=%ld N=%ld K=%ld (%s %s.%s at %ld px)", d->m, d->n, d->k,
                         g->model, g->block, g->linear, res);
        set_meta(d, "gemm", tg, "GFLOP/s", 1e-9, "TFLOP/s", 1e-12, "FLOPS");
    }
    aitk_model_spec_free(spec);
    aitk_str_free(&err);
    return st == AITK_E_NOMEM ? st : st ? AITK_E_NOTFOUND : AITK_OK;
}

/* Attention forward or backward at a model's real heads and head_dim. */
static aitk_status add_attention(bench_def *d, const char *model, bool backward,
                                 const bench_target *tg, aitk_str *notes)
{
    aitk_model_spec *spec = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_model_spec_load(model, false, &spec, &err);
    const aitk_block_spec *blk = NULL;
    for (size_t i = 0; !st && i < spec->n_blocks && !blk; i++)
        if (spec->blocks[i].heads > 0 && spec->blocks[i].attn_stream == AITK_STREAM_ALL)
            blk = &spec->blocks[i];
    if (!st && !blk) {
        aitk_str_append(&err, "no joint-attention block");
        st = AITK_E_NOTFOUND;
    }
    if (st) {
        aitk_str_appendf(notes, "attention %s not run: %s; ", model, aitk_str_cstr(&err));
    } else {
        long res = tg->attention_resolution;
        d->kind = backward ? K_ATTENTION_BACKWARD : K_ATTENTION_FORWARD;
        d->t = aitk_model_spec_tokens(spec, AITK_STREAM_ALL, res, 0);
        d->hq = blk->heads;
        d->hkv = blk->kv_heads > 0 ? blk->kv_heads : blk->heads;
        d->d = blk->head_dim;
        name_prefix(&d->name, backward ? "attention_backward" : "attention", tg);
        aitk_str_appendf(&d->name, ".%s", model);
        aitk_str_appendf(&d->shape, "B=1 T=%ld Hq=%ld Hkv=%ld D=%ld (%s %s at %ld px)", d->t,
                         d->hq, d->hkv, d->d, model, blk->name, res);
        set_meta(d, "attention", tg, "GFLOP/s", 1e-9, "TFLOP/s", 1e-12, "FLOPS");
    }
    aitk_model_spec_free(spec);
    aitk_str_free(&err);
    return st == AITK_E_NOMEM ? st : st ? AITK_E_NOTFOUND : AITK_OK;
}

/* A copy far beyond any cache: memory bandwidth, bytes read plus written
 * (bandwidthTest's and nvbandwidth's device-to-device convention). */
static aitk_status add_copy(bench_def *d, long mib, const bench_target *tg)
{
    d->kind = K_COPY;
    size_t per = aitk_dtype_bytes(tg->be->ops->act_dtype, 1);
    d->elems = ((size_t)mib << 20) / per / 4096 * 4096;
    aitk_str_append(&d->name, tg->gpu ? "memcpy.device" : "memcpy.host");
    aitk_str_appendf(&d->shape, "%ld MiB, copy2d of the %s backend (bytes read + written)", mib,
                     tg->be->name);
    set_meta(d, "memcpy", tg, "GB/s", 1e-9, "GB/s", 1e-9, "bytes");
    return aitk_str_status(&d->name) || aitk_str_status(&d->shape) ? AITK_E_NOMEM : AITK_OK;
}

/* The GPU entries run at the largest bucket the GPU backend trains at
 * (bench/workloads.yaml backends.cuda.resolutions, else the model's own
 * defaults: ai-toolkit's [512, 768, 1024]); the CPU ones at the small
 * resolutions of micro: in the same file. */
static long largest_gpu_bucket(const aitk_bench_config *cfg)
{
    long r = 0;
    for (size_t i = 0; i < cfg->cuda.n_resolutions; i++)
        r = cfg->cuda.resolutions[i] > r ? cfg->cuda.resolutions[i] : r;
    return r > 0 ? r : 1024;
}

/* Adds one target's benchmarks: copy, the GEMMs, attention forward and
 * backward. */
static aitk_status add_target(bench_def *defs, size_t *n, size_t cap,
                              const aitk_bench_config *cfg, const bench_target *tg,
                              aitk_str *notes)
{
    aitk_status st = AITK_OK;
    if (*n < cap && !(st = add_copy(&defs[*n], cfg->memcpy_mib, tg)))
        (*n)++;
    for (size_t i = 0; i < cfg->n_gemm && *n < cap && st != AITK_E_NOMEM; i++)
        if (!(st = add_gemm(&defs[*n], &cfg->gemm[i], tg, notes)))
            (*n)++;
    for (int bwd = 0; bwd < 2; bwd++)
        for (size_t i = 0; i < cfg->n_attention && *n < cap && st != AITK_E_NOMEM; i++)
            if (!(st = add_attention(&defs[*n], cfg->attention[i], bwd, tg, notes)))
                (*n)++;
    return st == AITK_E_NOMEM ? st : AITK_OK;
}

aitk_status aitk_micro_run_suite(const aitk_bench_config *cfg, const char *filter,
                                 aitk_progress *pg, cJSON *micro, aitk_str *notes)
{
    if (!cfg || !micro)
        return AITK_E_INVAL;
    enum { MAX_DEFS = 2 * (1 + 16 + 2 * 8) };
    bench_def *defs = aitk_calloc(MAX_DEFS, sizeof *defs);
    if (!defs)
        return AITK_E_NOMEM;
    size_t n = 0;
    const bench_target cpu = {.be = aitk_backend_cpu(),
                              .gemm_resolution = cfg->gemm_resolution,
                              .attention_resolution = cfg->attention_resolution};
    aitk_status st = add_target(defs, &n, MAX_DEFS, cfg, &cpu, notes);
    /* A build or machine without a usable GPU adds nothing: the gpu.plugin
     * check says why. */
    const aitk_bench_gpu *gpu = cfg->cpu_only ? NULL : aitk_bench_gpu_open();
    if (!st && gpu && gpu->backend) {
        const long res = largest_gpu_bucket(cfg);
        const bench_target g = {.be = gpu->backend, .device_name = gpu->device.name,
                                .gpu = true, .gemm_resolution = res,
                                .attention_resolution = res};
        st = add_target(defs, &n, MAX_DEFS, cfg, &g, notes);
    }
    size_t selected = 0;
    for (size_t i = 0; i < n; i++)
        selected += !filter || strstr(aitk_str_cstr(&defs[i].name), filter);
    const char *unit = pg ? pg->unit : NULL;
    if (pg) {
        pg->unit = "benchmarks";
        aitk_progress_begin(pg, "microbenchmarks", (long)selected);
    }
    long done = 0;
    for (size_t i = 0; i < n && !st; i++) {
        if (filter && !strstr(aitk_str_cstr(&defs[i].name), filter))
            continue;
        if (aitk_stop_requested()) {
            aitk_str_appendf(notes, "%s: the remaining microbenchmarks were not run; ",
                             aitk_stop_words());
            break;
        }
        double t0 = aitk_clock_ms();
        st = run_one(&defs[i], cfg->min_time_s, micro, notes);
        if (pg)
            aitk_progress_update(pg, ++done, (aitk_clock_ms() - t0) / 1e3);
    }
    if (pg) {
        aitk_progress_end(pg, aitk_stop_requested() ? "interrupted" : "completed");
        pg->unit = unit;
    }
    for (size_t i = 0; i < MAX_DEFS; i++) {
        aitk_str_free(&defs[i].name);
        aitk_str_free(&defs[i].shape);
    }
    aitk_free(defs);
    return st;
}
