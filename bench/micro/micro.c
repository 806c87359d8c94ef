/* The microbenchmark suite (see micro.h). Buffers are allocated inside each
 * benchmark function, before its timed loop, and freed after it, so only
 * one benchmark's memory is live at a time. Inputs are filled with small
 * non-zero values: denormals or zeros would make some kernels take fast
 * paths that real activations never take. */
#include "bench/micro/micro.h"

#include <cblas.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "bench/backend_loader.h"
#include "kernels/cuda_plugin.h" /* TEMPORARY: the old run_cuda types, until its rewrite */
#include "bench/runner.h"
#include "common/alloc.h"
#include "common/clock.h"
#include "kernels/ops.h"
#include "models/spec.h"

typedef enum kind { K_MEMCPY, K_GEMM, K_ATTENTION, K_CUDA_GEMM, K_CUDA_MEMCPY } kind;

typedef struct bench_def {
    aitk_micro_meta meta;
    aitk_str name, shape;
    kind kind;
    long m, n, k;          /* GEMM: C (m,n) = A (m,k) W^T, W (n,k) */
    long t, hq, hkv, d;    /* attention */
    size_t bytes;          /* memcpy */
    int device;            /* cuda: the plugin's device index */
    const char *device_name;
} bench_def;

static void fill(float *x, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = scale * (float)((int)(i * 2654435761u % 2001u) - 1000) / 1000.0f;
}

static bool interrupted(aitk_mb_state *s)
{
    if (!aitk_bench_stop_requested())
        return false;
    aitk_mb_skip_with_error(s, "interrupted");
    return true;
}

static void run_memcpy(aitk_mb_state *s, void *user)
{
    const bench_def *b = user;
    unsigned char *src = aitk_malloc(b->bytes), *dst = aitk_malloc(b->bytes);
    if (!src || !dst) {
        aitk_mb_skip_with_error(s, "out of memory");
    } else {
        /* Touch every page first: the first write to a page faults it in. */
        memset(src, 1, b->bytes);
        memset(dst, 2, b->bytes);
        unsigned sink = 0;
        size_t i = 0;
        while (aitk_mb_keep_running(s)) {
            if (interrupted(s))
                break;
            memcpy(dst, src, b->bytes);
            /* Reading the copy back keeps the compiler from dropping it. */
            sink += ((volatile unsigned char *)dst)[i++ % b->bytes];
        }
        aitk_mb_set_bytes_processed(s, aitk_mb_iterations(s) * (int64_t)b->bytes);
        aitk_mb_set_counter(s, "sink", (double)(sink & 1), AITK_MB_COUNTER_DEFAULT);
    }
    aitk_free(src);
    aitk_free(dst);
}

static void run_gemm(aitk_mb_state *s, void *user)
{
    const bench_def *b = user;
    size_t na = (size_t)(b->m * b->k), nw = (size_t)(b->n * b->k), nc = (size_t)(b->m * b->n);
    float *a = aitk_malloc(na * sizeof *a), *w = aitk_malloc(nw * sizeof *w),
          *c = aitk_malloc(nc * sizeof *c);
    if (!a || !w || !c) {
        aitk_mb_skip_with_error(s, "out of memory");
    } else {
        fill(a, na, 1.0f);
        fill(w, nw, 0.02f);
        while (aitk_mb_keep_running(s)) {
            if (interrupted(s))
                break;
            /* A Linear: y (m,n) = x (m,k) W^T, W stored (n,k) as in PyTorch. */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)b->m, (int)b->n,
                        (int)b->k, 1.0f, a, (int)b->k, w, (int)b->k, 0.0f, c, (int)b->n);
        }
        double flops = 2.0 * (double)b->m * (double)b->n * (double)b->k;
        aitk_mb_set_counter(s, "FLOPS", flops * (double)aitk_mb_iterations(s),
                            AITK_MB_COUNTER_RATE);
    }
    aitk_free(a);
    aitk_free(w);
    aitk_free(c);
}

static void run_attention(aitk_mb_state *s, void *user)
{
    const bench_def *b = user;
    const aitk_ops *ops = aitk_ops_cpu();
    size_t nq = (size_t)(b->t * b->hq * b->d), nkv = (size_t)(b->t * b->hkv * b->d);
    float *q = aitk_malloc(nq * sizeof *q), *k = aitk_malloc(nkv * sizeof *k),
          *v = aitk_malloc(nkv * sizeof *v), *o = aitk_malloc(nq * sizeof *o),
          *lse = aitk_malloc((size_t)(b->hq * b->t) * sizeof *lse);
    if (!q || !k || !v || !o || !lse) {
        aitk_mb_skip_with_error(s, "out of memory");
    } else {
        fill(q, nq, 1.0f);
        fill(k, nkv, 1.0f);
        fill(v, nkv, 1.0f);
        float scale = 1.0f / sqrtf((float)b->d);
        while (aitk_mb_keep_running(s)) {
            if (interrupted(s))
                break;
            /* The CPU table's activations are fp32 host memory. */
            aitk_status st = ops->attention_forward((aitk_act *)o, lse, (const aitk_act *)q,
                                                    (const aitk_act *)k, (const aitk_act *)v, 1,
                                                    (int)b->t, (int)b->hq, (int)b->hkv,
                                                    (int)b->d, scale);
            if (st) {
                aitk_mb_skip_with_error(s, aitk_strerror(st));
                break;
            }
        }
        /* QK^T and PV: 2 GEMMs of 2*T*T*D per head. */
        double flops = 4.0 * (double)b->t * (double)b->t * (double)b->d * (double)b->hq;
        aitk_mb_set_counter(s, "FLOPS", flops * (double)aitk_mb_iterations(s),
                            AITK_MB_COUNTER_RATE);
    }
    aitk_free(q);
    aitk_free(k);
    aitk_free(v);
    aitk_free(o);
    aitk_free(lse);
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

/* The GPU entries run at the largest bucket the GPU backend trains at
 * (bench/workloads.yaml backends.cuda.resolutions, else the model's own
 * defaults: ai-toolkit's [512, 768, 1024]), the CPU ones at gemm_resolution. */
static long gpu_resolution(const aitk_bench_config *cfg, const aitk_model_spec *spec)
{
    long r = 0;
    for (size_t i = 0; i < cfg->cuda.n_resolutions; i++)
        r = cfg->cuda.resolutions[i] > r ? cfg->cuda.resolutions[i] : r;
    for (size_t i = 0; !cfg->cuda.n_resolutions && i < spec->defaults.n_resolutions; i++)
        r = spec->defaults.resolutions[i] > r ? spec->defaults.resolutions[i] : r;
    return r > 0 ? r : spec->defaults.resolution;
}

/* A GEMM at one Linear's real shape: on the CPU (fp32 sgemm) when `dev` is
 * NULL, else on that GPU through the plugin (bf16 cuBLASLt). */
static aitk_status add_gemm(bench_def *d, const aitk_bench_config *cfg,
                            const aitk_bench_gemm_cfg *g, const aitk_cuda_device_info *dev,
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
        long res = dev ? gpu_resolution(cfg, spec) : cfg->gemm_resolution;
        d->kind = dev ? K_CUDA_GEMM : K_GEMM;
        d->m = aitk_model_spec_tokens(spec, l->stream, res, l->fixed_tokens);
        d->n = l->out;
        d->k = l->in;
        aitk_str_appendf(&d->name, "gemm.%s.%s.%s", dev ? "cuda.bf16" : "cpu.fp32", g->model,
                         g->linear);
        aitk_str_appendf(&d->shape, "M=%ld N=%ld K=%ld (%s %s.%s at %ld px)", d->m, d->n, d->k,
                         g->model, g->block, g->linear, res);
        d->meta = (aitk_micro_meta){.category = "gemm", .unit = dev ? "TFLOP/s" : "GFLOP/s",
                                    .counter = "FLOPS", .scale = dev ? 1e-12 : 1e-9};
        if (dev) {
            d->device = dev->index;
            d->device_name = dev->name;
        }
    }
    aitk_model_spec_free(spec);
    aitk_str_free(&err);
    return st == AITK_E_NOMEM ? st : st ? AITK_E_NOTFOUND : AITK_OK;
}

static aitk_status add_attention(bench_def *d, const aitk_bench_config *cfg, const char *model,
                                 aitk_str *notes)
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
        d->kind = K_ATTENTION;
        d->t = aitk_model_spec_tokens(spec, AITK_STREAM_ALL, cfg->attention_resolution, 0);
        d->hq = blk->heads;
        d->hkv = blk->kv_heads > 0 ? blk->kv_heads : blk->heads;
        d->d = blk->head_dim;
        aitk_str_appendf(&d->name, "attention.cpu.fp32.%s", model);
        aitk_str_appendf(&d->shape, "B=1 T=%ld Hq=%ld Hkv=%ld D=%ld (%s %s at %ld px)", d->t,
                         d->hq, d->hkv, d->d, model, blk->name, cfg->attention_resolution);
        d->meta = (aitk_micro_meta){.category = "attention", .unit = "GFLOP/s",
                                    .counter = "FLOPS", .scale = 1e-9};
    }
    aitk_model_spec_free(spec);
    aitk_str_free(&err);
    return st == AITK_E_NOMEM ? st : st ? AITK_E_NOTFOUND : AITK_OK;
}

static aitk_status run_one(bench_def *d, double min_time, cJSON *micro, aitk_str *notes)
{
    d->meta.name = aitk_str_cstr(&d->name);
    d->meta.shape = aitk_str_cstr(&d->shape);
    d->meta.backend = "cpu";
    d->meta.higher_is_better = true;
    aitk_mb_fn fn = d->kind == K_MEMCPY ? run_memcpy : d->kind == K_GEMM ? run_gemm
                                                                         : run_attention;
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
    if (!st && !cJSON_AddItemToArray(micro, e)) {
        cJSON_Delete(e);
        st = AITK_E_NOMEM;
    }
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

/* ---- GPU entries (the CUDA plugin) ----
 * The plugin times them itself (CUDA events around back-to-back launches
 * after warm-up, median of the samples: kernels/cuda/gemm.c), so they do not
 * go through Google Benchmark, whose loop would see one opaque call per
 * iteration and add nothing. The entry has the CPU entries' fields plus the
 * device's name; `iterations` counts the operations timed. */

static aitk_status add_entry(cJSON *micro, const bench_def *d, double value, double time_ms,
                             double iterations)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "name", aitk_str_cstr(&d->name)) ||
        !cJSON_AddStringToObject(o, "category", d->meta.category) ||
        !cJSON_AddStringToObject(o, "backend", "cuda") ||
        !cJSON_AddStringToObject(o, "shape", aitk_str_cstr(&d->shape)) ||
        !cJSON_AddNumberToObject(o, "value", value) ||
        !cJSON_AddStringToObject(o, "unit", d->meta.unit) ||
        !cJSON_AddBoolToObject(o, "higher_is_better", true) ||
        !cJSON_AddNumberToObject(o, "time_ms", time_ms) ||
        !cJSON_AddNumberToObject(o, "iterations", iterations) ||
        !cJSON_AddStringToObject(o, "device", d->device_name ? d->device_name : "") ||
        !cJSON_AddItemToArray(micro, o)) {
        cJSON_Delete(o);
        return AITK_E_NOMEM;
    }
    return AITK_OK;
}

static aitk_status run_cuda(const bench_def *d, const aitk_cuda_plugin *gpu, double min_time,
                            cJSON *micro, aitk_str *notes)
{
    /* A device failure (device memory included) becomes a note; only a host
     * allocation failure (`host`) stops the suite. */
    aitk_status dev_st, host = AITK_OK;
    if (d->kind == K_CUDA_GEMM) {
        aitk_cuda_gemm_args a = {.device = d->device, .m = d->m, .n = d->n, .k = d->k,
                                 .dtype = AITK_CUDA_BF16, .min_time_s = min_time};
        aitk_cuda_gemm_result *r = aitk_calloc(1, sizeof *r);
        if (!r)
            return AITK_E_NOMEM;
        if (!(dev_st = gpu->gemm_bench(&a, r)))
            host = add_entry(micro, d, r->tflops, r->median_ms,
                             (double)(r->repetitions * r->matmuls_per_sample));
        else
            host = aitk_str_appendf(notes, "%s: %s; ", aitk_str_cstr(&d->name), r->error);
        aitk_free(r);
    } else {
        aitk_cuda_memcpy_result *r = aitk_calloc(1, sizeof *r);
        if (!r)
            return AITK_E_NOMEM;
        if (!(dev_st = gpu->memcpy_bench(d->device, d->bytes, min_time, r)))
            host = add_entry(micro, d, r->gbs, r->median_ms, (double)r->repetitions);
        else
            host = aitk_str_appendf(notes, "%s: %s; ", aitk_str_cstr(&d->name), r->error);
        aitk_free(r);
    }
    return host;
}

/* Adds the GPU entries when the plugin loads and a device answers. A build
 * or machine without one adds nothing: the gpu.plugin check says why. */
static aitk_status add_cuda(bench_def *defs, size_t *n, const aitk_bench_config *cfg,
                            const aitk_cuda_plugin **gpu, aitk_cuda_probe_result *probe,
                            aitk_str *notes)
{
    /* TEMPORARY: the GPU microbenchmarks are being rewritten to time the
     * backend's ops table (kernels/backend.h); until then a usable backend
     * is named as not run, and nothing is timed through the old ABI. */
    (void)defs, (void)n, (void)cfg, (void)gpu, (void)probe;
    const aitk_backend_load_result *ld = aitk_backend_load();
    aitk_backend_probe *pr = ld->status ? NULL : aitk_calloc(1, sizeof *pr);
    if (!ld->status && !pr)
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    if (pr && !ld->backend->probe(pr) && pr->n_devices > 0)
        st = aitk_str_append(notes, "cuda microbenchmarks not run: the GPU microbenchmarks are "
                                    "being moved onto the backend's ops; ");
    aitk_free(pr);
    return st;
}

aitk_status aitk_micro_run_suite(const aitk_bench_config *cfg, const char *filter,
                                 aitk_progress *pg, cJSON *micro, aitk_str *notes)
{
    if (!cfg || !micro)
        return AITK_E_INVAL;
    enum { MAX_DEFS = 1 + 16 + 8 + 16 + 1 };
    bench_def *defs = aitk_calloc(MAX_DEFS, sizeof *defs);
    aitk_cuda_probe_result *probe = aitk_calloc(1, sizeof *probe);
    const aitk_cuda_plugin *gpu = NULL;
    if (!defs || !probe) {
        aitk_free(defs);
        aitk_free(probe);
        return AITK_E_NOMEM;
    }
    size_t n = 0;
    aitk_status st = AITK_OK;
    defs[n].kind = K_MEMCPY;
    defs[n].bytes = (size_t)cfg->memcpy_mib << 20;
    aitk_str_append(&defs[n].name, "memcpy.host");
    aitk_str_appendf(&defs[n].shape, "%ld MiB", cfg->memcpy_mib);
    defs[n].meta = (aitk_micro_meta){.category = "memcpy", .unit = "GB/s",
                                     .counter = "bytes_per_second", .scale = 1e-9};
    n++;
    for (size_t i = 0; i < cfg->n_gemm && st != AITK_E_NOMEM; i++)
        if (!(st = add_gemm(&defs[n], cfg, &cfg->gemm[i], NULL, notes)))
            n++;
    for (size_t i = 0; i < cfg->n_attention && st != AITK_E_NOMEM; i++)
        if (!(st = add_attention(&defs[n], cfg, cfg->attention[i], notes)))
            n++;
    /* GPU microbenchmarks register here with backend "cuda". */
    if (st != AITK_E_NOMEM && !cfg->cpu_only)
        st = add_cuda(defs, &n, cfg, &gpu, probe, notes);
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
        if (aitk_bench_stop_requested()) {
            aitk_str_append(notes, "interrupted (Ctrl-C): the remaining microbenchmarks were "
                                   "not run; ");
            break;
        }
        double t0 = aitk_clock_ms();
        st = defs[i].kind >= K_CUDA_GEMM
                 ? run_cuda(&defs[i], gpu, cfg->min_time_s, micro, notes)
                 : run_one(&defs[i], cfg->min_time_s, micro, notes);
        if (pg)
            aitk_progress_update(pg, ++done, (aitk_clock_ms() - t0) / 1e3);
    }
    if (pg) {
        aitk_progress_end(pg, aitk_bench_stop_requested() ? "interrupted" : "completed");
        pg->unit = unit;
    }
    for (size_t i = 0; i < MAX_DEFS; i++) {
        aitk_str_free(&defs[i].name);
        aitk_str_free(&defs[i].shape);
    }
    aitk_free(defs);
    aitk_free(probe);
    return st;
}
