/* Reader of bench/workloads.yaml. Every figure may be written bare or as
 * {value, source}; unknown keys are errors, so a typo cannot silently fall
 * back to a default. */
#include "bench/config.h"

#include <string.h>

#include "common/alloc.h"
#include "common/data.h"

static aitk_status get_long(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                            long min, long *out, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(map, key);
    if (!n) {
        aitk_yaml_errorf(err, doc, map, "missing '%s'", key);
        return AITK_E_PARSE;
    }
    aitk_status st = aitk_yaml_long(doc, aitk_yaml_figure(n), out, err);
    if (!st && *out < min) {
        aitk_yaml_errorf(err, doc, aitk_yaml_figure(n), "'%s' must be at least %ld", key, min);
        return AITK_E_RANGE;
    }
    return st;
}

static aitk_status get_double(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                              const char *key, double *out, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(map, key);
    if (!n) {
        aitk_yaml_errorf(err, doc, map, "missing '%s'", key);
        return AITK_E_PARSE;
    }
    aitk_status st = aitk_yaml_double(doc, aitk_yaml_figure(n), out, err);
    if (!st && !(*out > 0)) {
        aitk_yaml_errorf(err, doc, aitk_yaml_figure(n), "'%s' must be positive", key);
        return AITK_E_RANGE;
    }
    return st;
}

static aitk_status load_backend(const aitk_yaml_doc *doc, const aitk_yaml_node *root,
                                const char *name, aitk_bench_backend_cfg *b, aitk_str *err)
{
    static const char *const keys[] = {"size", "resolutions", "standard_steps", "full_steps",
                                       "time_limit_s", NULL};
    const aitk_yaml_node *m = aitk_yaml_get(aitk_yaml_get(root, "backends"), name);
    if (!m) {
        aitk_yaml_errorf(err, doc, root, "missing backends.%s", name);
        return AITK_E_PARSE;
    }
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a map", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, m, keys, name, err);
    const char *size = NULL;
    if (!st)
        st = aitk_yaml_string(doc, aitk_yaml_get(m, "size"), &size, err);
    if (!st) {
        b->tiny = strcmp(size, "tiny") == 0;
        if (!b->tiny && strcmp(size, "full") != 0) {
            aitk_yaml_errorf(err, doc, aitk_yaml_get(m, "size"), "size must be tiny or full");
            return AITK_E_PARSE;
        }
    }
    const aitk_yaml_node *r = st ? NULL : aitk_yaml_figure(aitk_yaml_get(m, "resolutions"));
    if (!st)
        st = aitk_yaml_expect(doc, r, AITK_YAML_SEQ, "a list of resolutions", err);
    if (!st && r->count > AITK_BENCH_MAX_BUCKETS) {
        aitk_yaml_errorf(err, doc, r, "at most %d resolutions", AITK_BENCH_MAX_BUCKETS);
        return AITK_E_RANGE;
    }
    for (size_t i = 0; !st && i < r->count; i++) {
        st = aitk_yaml_long(doc, r->items[i], &b->resolutions[i], err);
        if (!st && (b->resolutions[i] < 16 || b->resolutions[i] % 16)) {
            aitk_yaml_errorf(err, doc, r->items[i], "a resolution must be a multiple of 16 "
                             "(8x VAE downsampling, 2x2 patches)");
            return AITK_E_RANGE;
        }
        b->n_resolutions = i + 1;
    }
    if (!st)
        st = get_long(doc, m, "standard_steps", 1, &b->standard_steps, err);
    if (!st)
        st = get_long(doc, m, "full_steps", 1, &b->full_steps, err);
    if (!st)
        st = get_double(doc, m, "time_limit_s", &b->time_limit_s, err);
    return st;
}

static aitk_status load_micro(aitk_bench_config *c, const aitk_yaml_node *root, aitk_str *err)
{
    static const char *const keys[] = {"memcpy_mib", "gemm_resolution", "gemm",
                                       "attention_resolution", "attention", "min_time_s", NULL};
    const aitk_yaml_doc *doc = c->doc;
    const aitk_yaml_node *m = aitk_yaml_get(root, "micro");
    aitk_status st = aitk_yaml_expect(doc, m ? m : root, AITK_YAML_MAP, "a map 'micro'", err);
    if (!st && !m) {
        aitk_yaml_errorf(err, doc, root, "missing 'micro'");
        return AITK_E_PARSE;
    }
    if (!st)
        st = aitk_yaml_check_keys(doc, m, keys, "micro", err);
    if (!st)
        st = get_long(doc, m, "memcpy_mib", 1, &c->memcpy_mib, err);
    if (!st)
        st = get_long(doc, m, "gemm_resolution", 16, &c->gemm_resolution, err);
    if (!st)
        st = get_long(doc, m, "attention_resolution", 16, &c->attention_resolution, err);
    if (!st)
        st = get_double(doc, m, "min_time_s", &c->min_time_s, err);
    const aitk_yaml_node *g = st ? NULL : aitk_yaml_get(m, "gemm");
    if (!st)
        st = aitk_yaml_expect(doc, g ? g : m, AITK_YAML_SEQ, "a list 'gemm'", err);
    for (size_t i = 0; !st && i < g->count; i++) {
        static const char *const gk[] = {"model", "block", "linear", NULL};
        const aitk_yaml_node *e = g->items[i];
        if (i >= sizeof c->gemm / sizeof *c->gemm) {
            aitk_yaml_errorf(err, doc, e, "too many gemm entries");
            return AITK_E_RANGE;
        }
        aitk_bench_gemm_cfg *gc = &c->gemm[i];
        st = aitk_yaml_expect(doc, e, AITK_YAML_MAP, "{model, block, linear}", err);
        if (!st)
            st = aitk_yaml_check_keys(doc, e, gk, "a gemm entry", err);
        if (!st)
            st = aitk_yaml_string(doc, aitk_yaml_get(e, "model"), &gc->model, err);
        if (!st)
            st = aitk_yaml_string(doc, aitk_yaml_get(e, "block"), &gc->block, err);
        if (!st)
            st = aitk_yaml_string(doc, aitk_yaml_get(e, "linear"), &gc->linear, err);
        c->n_gemm = i + 1;
    }
    const aitk_yaml_node *a = st ? NULL : aitk_yaml_get(m, "attention");
    if (!st)
        st = aitk_yaml_expect(doc, a ? a : m, AITK_YAML_SEQ, "a list 'attention'", err);
    for (size_t i = 0; !st && i < a->count; i++) {
        if (i >= sizeof c->attention / sizeof *c->attention) {
            aitk_yaml_errorf(err, doc, a->items[i], "too many attention entries");
            return AITK_E_RANGE;
        }
        st = aitk_yaml_string(doc, a->items[i], &c->attention[i], err);
        c->n_attention = i + 1;
    }
    return st;
}

/* collectives: the multi-GPU NCCL sizes (nccl-tests' -b, -e and -f) and
 * iterations (-w, -n). */
static aitk_status load_collectives(aitk_bench_config *c, const aitk_yaml_node *root,
                                    aitk_str *err)
{
    static const char *const keys[] = {"min_mib", "max_mib", "factor", "warmup", "iters",
                                       NULL};
    const aitk_yaml_doc *doc = c->doc;
    const aitk_yaml_node *m = aitk_yaml_get(root, "collectives");
    if (!m) {
        aitk_yaml_errorf(err, doc, root, "missing 'collectives'");
        return AITK_E_PARSE;
    }
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a map 'collectives'", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, m, keys, "collectives", err);
    if (!st)
        st = get_long(doc, m, "min_mib", 1, &c->coll_min_mib, err);
    if (!st)
        st = get_long(doc, m, "max_mib", c->coll_min_mib, &c->coll_max_mib, err);
    if (!st)
        st = get_long(doc, m, "factor", 2, &c->coll_factor, err);
    if (!st)
        st = get_long(doc, m, "warmup", 0, &c->coll_warmup, err);
    if (!st)
        st = get_long(doc, m, "iters", 1, &c->coll_iters, err);
    return st;
}

aitk_status aitk_bench_config_load(aitk_bench_config **out, aitk_str *err)
{
    *out = NULL;
    aitk_bench_config *c = aitk_calloc(1, sizeof *c);
    if (!c)
        return AITK_E_NOMEM;
    aitk_status st = aitk_data_load_yaml("bench/workloads.yaml", &c->doc, err);
    const aitk_yaml_node *root = st ? NULL : c->doc->root;
    if (!st)
        st = aitk_yaml_expect(c->doc, root, AITK_YAML_MAP, "a map", err);
    if (!st)
        st = aitk_data_check_schema(c->doc, 1, err);
    if (!st) {
        static const char *const keys[] = {"schema", "backends", "micro", "collectives", NULL};
        st = aitk_yaml_check_keys(c->doc, root, keys, "bench/workloads.yaml", err);
    }
    if (!st)
        st = load_backend(c->doc, root, "cpu", &c->cpu, err);
    if (!st)
        st = load_backend(c->doc, root, "cuda", &c->cuda, err);
    if (!st)
        st = load_micro(c, root, err);
    if (!st)
        st = load_collectives(c, root, err);
    if (st) {
        aitk_bench_config_free(c);
        return st;
    }
    *out = c;
    return AITK_OK;
}

void aitk_bench_config_free(aitk_bench_config *c)
{
    if (!c)
        return;
    aitk_yaml_free(c->doc);
    aitk_free(c);
}
