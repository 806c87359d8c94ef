/* The cost model's parameters: models/cost.yaml read and checked (each
 * efficiency a share in its range, each size non-negative), and the
 * optimizer table looked up by name or alias. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/data.h"
#include "models/cost.h"

static aitk_status fig(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                       double *out, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(map, key);
    if (!n) {
        aitk_yaml_errorf(err, doc, map, "missing '%s'", key);
        return AITK_E_PARSE;
    }
    const aitk_yaml_node *v = aitk_yaml_figure(n);
    if (!v) {
        aitk_yaml_errorf(err, doc, n, "'%s' has no value", key);
        return AITK_E_PARSE;
    }
    aitk_status st = aitk_yaml_double(doc, v, out, err);
    if (!st && *out < 0) {
        aitk_yaml_errorf(err, doc, v, "'%s' must not be negative", key);
        return AITK_E_RANGE;
    }
    return st;
}

/* fig() for a share: in (0, hi], the error at the value's place. */
static aitk_status fig_share(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                             double hi, double *out, aitk_str *err)
{
    aitk_status st = fig(doc, map, key, out, err);
    if (!st && !(*out > 0 && *out <= hi)) {
        aitk_yaml_errorf(err, doc, aitk_yaml_figure(aitk_yaml_get(map, key)), "'%s' is %g; it must be in (0, %g]", key, *out, hi);
        st = AITK_E_RANGE;
    }
    return st;
}

static aitk_status load_optimizers(aitk_cost_params *p, const aitk_yaml_node *m, aitk_str *err)
{
    const aitk_yaml_doc *doc = p->doc;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a map of optimizers", err);
    size_t used = 0;
    for (size_t i = 0; !st && i < m->count; i++) {
        if (i >= sizeof p->optimizers / sizeof *p->optimizers) {
            aitk_yaml_errorf(err, doc, m, "too many optimizers (at most %zu)",
                             sizeof p->optimizers / sizeof *p->optimizers);
            return AITK_E_RANGE;
        }
        aitk_optimizer_spec *o = &p->optimizers[i];
        o->name = m->pairs[i].key->text;
        const aitk_yaml_node *v = m->pairs[i].value;
        st = aitk_yaml_expect(doc, v, AITK_YAML_MAP, "{bytes_per_param, factored_bytes, source, aliases}", err);
        if (!st)
            st = fig(doc, v, "bytes_per_param", &o->bytes_per_param, err);
        o->factored_bytes = 0;
        if (!st && aitk_yaml_get(v, "factored_bytes"))
            st = fig(doc, v, "factored_bytes", &o->factored_bytes, err);
        const aitk_yaml_node *a = aitk_yaml_get(v, "aliases");
        o->aliases = &p->alias_store[used];
        for (size_t k = 0; !st && a && a->kind == AITK_YAML_SEQ && k < a->count; k++) {
            if (used + 2 >= sizeof p->alias_store / sizeof *p->alias_store) {
                aitk_yaml_errorf(err, doc, a, "too many optimizer aliases");
                return AITK_E_RANGE;
            }
            st = aitk_yaml_string(doc, a->items[k], &p->alias_store[used++], err);
        }
        p->alias_store[used++] = NULL;
        p->n_optimizers = i + 1;
    }
    return st;
}

/* efficiency.host_seconds_per_kernel: a host's time for one kernel of an
 * eager step. Over a millisecond would be no launch but a typo; zero would
 * make every step GPU-bound by fiat. */
static aitk_status host_figure(const aitk_yaml_doc *doc, const aitk_yaml_node *e,
                               aitk_cost_params *p, aitk_str *err)
{
    aitk_status st = fig(doc, e, "host_seconds_per_kernel", &p->host_s_per_kernel, err);
    if (!st && !(p->host_s_per_kernel > 0 && p->host_s_per_kernel <= 1e-3)) {
        aitk_yaml_errorf(err, doc, aitk_yaml_figure(aitk_yaml_get(e, "host_seconds_per_kernel")),
                         "'host_seconds_per_kernel' is %g; it must be in (0, 0.001]",
                         p->host_s_per_kernel);
        st = AITK_E_RANGE;
    }
    return st;
}

/* A map of compute capabilities to {fwd, bwd, source}, each a share in
 * (0, 1] (efficiency.attention_by_cc and masked_attention_by_cc),
 * optional: into out[cap], its count to *n. */
static aitk_status shares_by_cc(const aitk_yaml_doc *doc, const aitk_yaml_node *e, const char *key,
                                aitk_attention_share *out, size_t cap, size_t *n, aitk_str *err)
{
    *n = 0;
    const aitk_yaml_node *m = aitk_yaml_get(e, key);
    if (!m)
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a map of compute capabilities", err);
    for (size_t i = 0; !st && i < m->count; i++) {
        if (i >= cap) {
            aitk_yaml_errorf(err, doc, m, "too many compute capabilities (at most %zu)", cap);
            return AITK_E_RANGE;
        }
        aitk_attention_share *a = &out[i];
        a->cc = m->pairs[i].key->text;
        /* As models/gpus.yaml writes a capability ("8.6", "12.0"): a key
         * that is not one would match no GPU and be silently unused. */
        unsigned major = 0, minor = 0;
        char tail = 0;
        if (sscanf(a->cc, "%u.%u%c", &major, &minor, &tail) != 2 || major == 0 ||
            strspn(a->cc, "0123456789.") != strlen(a->cc)) {
            aitk_yaml_errorf(err, doc, m->pairs[i].key,
                             "'%s' is not a compute capability (major.minor, as models/gpus.yaml "
                             "writes it)", a->cc);
            return AITK_E_PARSE;
        }
        const aitk_yaml_node *v = m->pairs[i].value;
        st = aitk_yaml_expect(doc, v, AITK_YAML_MAP, "{fwd, bwd, source}", err);
        if (!st)
            st = fig_share(doc, v, "fwd", 1, &a->fwd, err);
        if (!st)
            st = fig_share(doc, v, "bwd", 1, &a->bwd, err);
        if (!st && !aitk_yaml_get(v, "source")) {
            aitk_yaml_errorf(err, doc, v, "compute capability %s has no 'source'", a->cc);
            st = AITK_E_PARSE;
        }
        *n = st ? i : i + 1;
    }
    return st;
}

/* efficiency.masked_attention: the memory-efficient kernel's {fwd, bwd}
 * over flash attention's where masked_attention_by_cc lists no capability. */
static aitk_status masked_attention(const aitk_yaml_doc *doc, const aitk_yaml_node *e,
                                    aitk_cost_params *p, aitk_str *err)
{
    const aitk_yaml_node *m = aitk_yaml_get(e, "masked_attention");
    if (!m) {
        aitk_yaml_errorf(err, doc, e, "missing 'masked_attention'");
        return AITK_E_PARSE;
    }
    aitk_status st = fig_share(doc, m, "fwd", 1, &p->masked_fwd, err);
    if (!st)
        st = fig_share(doc, m, "bwd", 1, &p->masked_bwd, err);
    if (!st)
        st = shares_by_cc(doc, e, "masked_attention_by_cc", p->masked_by_cc,
                          sizeof p->masked_by_cc / sizeof *p->masked_by_cc, &p->n_masked_by_cc,
                          err);
    return st;
}

/* The efficiency section. GEMM and attention are fractions of a measured
 * matmul rate, which a FLUX-sized GEMM does not beat; bandwidth of the
 * datasheet figure. A kernel that reads and writes its tensors once cannot
 * beat a copy by much: 1.2 leaves room for cache hits, not for a misplaced
 * digit. */
static aitk_status load_efficiency(const aitk_yaml_doc *doc, const aitk_yaml_node *e,
                                   aitk_cost_params *p, aitk_str *err)
{
    aitk_status st = fig_share(doc, e, "gemm", 1, &p->eff_gemm, err);
    if (!st)
        st = fig_share(doc, e, "attention_fwd", 1, &p->eff_attn_fwd, err);
    if (!st)
        st = fig_share(doc, e, "attention_bwd", 1, &p->eff_attn_bwd, err);
    if (!st)
        st = shares_by_cc(doc, e, "attention_by_cc", p->attn_by_cc,
                          sizeof p->attn_by_cc / sizeof *p->attn_by_cc, &p->n_attn_by_cc, err);
    if (!st)
        st = masked_attention(doc, e, p, err);
    if (!st)
        st = fig_share(doc, e, "bandwidth", 1, &p->eff_bandwidth, err);
    if (!st)
        st = fig(doc, e, "step_overhead_s", &p->step_overhead_s, err);
    if (!st)
        st = host_figure(doc, e, p, err);
    if (!st)
        st = fig_share(doc, e, "elementwise_chain_vs_copy", 1.2, &p->elt_chain_vs_copy, err);
    if (!st)
        st = fig_share(doc, e, "plain_elementwise_vs_copy", 1.2, &p->elt_plain_vs_copy, err);
    return st;
}

/* base_linear_kernels: per path, the kernels a frozen base Linear adds
 * forward and backward. */
static aitk_status base_linear_kernels(const aitk_yaml_doc *doc, const aitk_yaml_node *f,
                                       aitk_cost_params *p, aitk_str *err)
{
    const aitk_yaml_node *k = aitk_yaml_get(f, "base_linear_kernels");
    if (!k) {
        aitk_yaml_errorf(err, doc, f, "missing 'base_linear_kernels'");
        return AITK_E_PARSE;
    }
    static const struct {
        const char *name;
        int fp8_path; /* -1: NF4 */
    } paths[] = {{"quanto", AITK_FP8_QUANTO},
                 {"cast", AITK_FP8_CAST},
                 {"torchao", AITK_FP8_TORCHAO},
                 {"nf4", -1}};
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < sizeof paths / sizeof *paths; i++) {
        const aitk_yaml_node *n = aitk_yaml_get(k, paths[i].name);
        if (!n) {
            aitk_yaml_errorf(err, doc, k, "missing '%s'", paths[i].name);
            return AITK_E_PARSE;
        }
        double *to = paths[i].fp8_path < 0 ? p->nf4_linear_kernels
                                           : p->fp8_linear_kernels[paths[i].fp8_path];
        st = fig(doc, n, "forward", &to[0], err);
        if (!st)
            st = fig(doc, n, "backward", &to[1], err);
    }
    return st;
}

aitk_status aitk_cost_params_load(aitk_cost_params **out, aitk_str *err)
{
    *out = NULL;
    aitk_cost_params *p = aitk_calloc(1, sizeof *p);
    if (!p)
        return AITK_E_NOMEM;
    aitk_status st = aitk_data_load_yaml("models/cost.yaml", &p->doc, err);
    if (!st)
        st = aitk_data_check_schema(p->doc, 1, err);
    const aitk_yaml_doc *doc = p->doc;
    const aitk_yaml_node *root = st ? NULL : doc->root;
    const aitk_yaml_node *e = aitk_yaml_get(root, "efficiency");
    const aitk_yaml_node *f = aitk_yaml_get(root, "flop_rules");
    const aitk_yaml_node *m = aitk_yaml_get(root, "memory");
    const aitk_yaml_node *o = aitk_yaml_get(root, "optimizers");
    if (!st && (!e || !f || !m || !o)) {
        aitk_yaml_errorf(err, doc, root,
                         "expected the sections efficiency, flop_rules, memory and optimizers");
        st = AITK_E_PARSE;
    }
    if (!st)
        st = load_efficiency(doc, e, p, err);
    if (!st)
        st = fig(doc, f, "attention_bwd_factor", &p->attn_bwd_factor, err);
    if (!st)
        st = fig(doc, f, "elementwise_bwd_factor", &p->elementwise_bwd_factor, err);
    if (!st)
        st = fig(doc, f, "lora_forward_in", &p->lora_fwd_in, err);
    if (!st)
        st = fig(doc, f, "lora_forward_out", &p->lora_fwd_out, err);
    if (!st)
        st = fig(doc, f, "lora_backward_in", &p->lora_bwd_in, err);
    if (!st)
        st = fig(doc, f, "lora_backward_out", &p->lora_bwd_out, err);
    if (!st)
        st = fig(doc, f, "lora_kernels_forward", &p->lora_kernels_fwd, err);
    if (!st)
        st = fig(doc, f, "lora_kernels_backward", &p->lora_kernels_bwd, err);
    const aitk_yaml_node *dq = aitk_yaml_get(f, "dequant_bytes_per_weight");
    if (!st && !dq) {
        aitk_yaml_errorf(err, doc, f, "missing 'dequant_bytes_per_weight'");
        st = AITK_E_PARSE;
    }
    if (!st)
        st = fig(doc, dq, "fp8", &p->dequant_bytes_per_weight[AITK_WEIGHT_FP8], err);
    if (!st)
        st = fig(doc, dq, "nf4", &p->dequant_bytes_per_weight[AITK_WEIGHT_NF4], err);
    if (!st)
        st = fig(doc, dq, "fp8_cast", &p->dequant_fp8_cast, err);
    if (!st)
        st = fig(doc, f, "fp8_compute_cast_bytes", &p->fp8_compute_cast_bytes, err);
    if (!st)
        st = fig(doc, f, "fp8_compute_backward_gemms", &p->fp8_compute_bwd_gemms, err);
    if (!st)
        st = base_linear_kernels(doc, f, p, err);
    const aitk_yaml_node *am = aitk_yaml_get(f, "attention_mask");
    if (!st && !am) {
        aitk_yaml_errorf(err, doc, f, "missing 'attention_mask'");
        st = AITK_E_PARSE;
    }
    if (!st)
        st = fig(doc, am, "convert_bytes", &p->mask_convert_bytes, err);
    if (!st)
        st = fig(doc, am, "mask_bytes", &p->mask_bytes, err);
    if (!st)
        st = fig(doc, am, "bool_bytes", &p->mask_bool_bytes, err);
    const aitk_yaml_node *wb = aitk_yaml_get(m, "weight_bytes");
    if (!st && !wb) {
        aitk_yaml_errorf(err, doc, m, "missing 'weight_bytes'");
        st = AITK_E_PARSE;
    }
    if (!st)
        st = fig(doc, wb, "bf16", &p->weight_bytes[AITK_WEIGHT_BF16], err);
    if (!st)
        st = fig(doc, wb, "fp8", &p->weight_bytes[AITK_WEIGHT_FP8], err);
    if (!st)
        st = fig(doc, wb, "nf4", &p->weight_bytes[AITK_WEIGHT_NF4], err);
    if (!st)
        st = fig(doc, wb, "fp32", &p->weight_bytes[AITK_WEIGHT_FP32], err);
    if (!st)
        st = fig(doc, m, "scale_bytes_per_row", &p->scale_bytes_per_row, err);
    if (!st)
        st = fig(doc, m, "activation_bytes", &p->activation_bytes, err);
    if (!st)
        st = fig(doc, m, "cuda_context_gib", &p->cuda_context_gib, err);
    if (!st)
        st = fig(doc, m, "cublas_workspace_mib", &p->cublas_workspace_mib, err);
    if (!st)
        st = fig(doc, m, "fragmentation", &p->fragmentation, err);
    if (!st)
        st = fig(doc, m, "allocator_reserve_mib", &p->allocator_reserve_mib, err);
    if (!st)
        st = load_optimizers(p, o, err);
    if (st) {
        aitk_cost_params_free(p);
        return st;
    }
    *out = p;
    return AITK_OK;
}

void aitk_cost_params_free(aitk_cost_params *p)
{
    if (!p)
        return;
    aitk_yaml_free(p->doc);
    aitk_free(p);
}

const aitk_attention_share *aitk_cost_attention_entry(const aitk_cost_params *p,
                                                      const aitk_gpu_spec *gpu)
{
    for (size_t i = 0; gpu && gpu->cc && i < p->n_attn_by_cc; i++)
        if (strcmp(p->attn_by_cc[i].cc, gpu->cc) == 0)
            return &p->attn_by_cc[i];
    return NULL;
}

void aitk_cost_attention_shares(const aitk_cost_params *p, const aitk_gpu_spec *gpu, double *fwd,
                                double *bwd)
{
    const aitk_attention_share *a = aitk_cost_attention_entry(p, gpu);
    *fwd = a ? a->fwd : p->eff_attn_fwd;
    *bwd = a ? a->bwd : p->eff_attn_bwd;
}

void aitk_cost_masked_attention_ratios(const aitk_cost_params *p, const aitk_gpu_spec *gpu,
                                       double *fwd, double *bwd)
{
    *fwd = p->masked_fwd;
    *bwd = p->masked_bwd;
    for (size_t i = 0; gpu && gpu->cc && i < p->n_masked_by_cc; i++)
        if (strcmp(p->masked_by_cc[i].cc, gpu->cc) == 0) {
            *fwd = p->masked_by_cc[i].fwd;
            *bwd = p->masked_by_cc[i].bwd;
        }
}

const aitk_optimizer_spec *aitk_cost_find_optimizer(const aitk_cost_params *p, const char *name)
{
    for (size_t i = 0; i < p->n_optimizers; i++) {
        const aitk_optimizer_spec *o = &p->optimizers[i];
        if (strcasecmp(o->name, name) == 0)
            return o;
        for (const char *const *a = o->aliases; a && *a; a++)
            if (strcasecmp(*a, name) == 0)
                return o;
    }
    return NULL;
}

