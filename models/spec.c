/* Model spec loader: models/<id>.yaml -> aitk_model_spec.
 *
 * Shapes are dimension expressions (models/spec_expr.c) so that the full-size
 * and the tiny CPU configuration share one description. Every field is checked
 * with its position: a typo in a data file must be an error, never a silently
 * wrong parameter count. */
#include "models/spec.h"

#include <string.h>

#include "common/alloc.h"
#include "common/data.h"

const char *const aitk_model_ids[] = {"flux1-dev", "chroma", "omnigen2", NULL};

/* ---- small readers ---- */

static aitk_status need(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                        const aitk_yaml_node **out, aitk_str *err)
{
    *out = aitk_yaml_figure(aitk_yaml_get(map, key));
    if (!*out) {
        aitk_yaml_errorf(err, doc, map, "missing '%s'", key);
        return AITK_E_PARSE;
    }
    return AITK_OK;
}

/* A section (a map or list) as it is, never unwrapped as a {value:} figure. */
static aitk_status need_section(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                const char *key, const aitk_yaml_node **out, aitk_str *err)
{
    *out = aitk_yaml_get(map, key);
    if (!*out) {
        aitk_yaml_errorf(err, doc, map, "missing '%s'", key);
        return AITK_E_PARSE;
    }
    return AITK_OK;
}

static aitk_status read_string(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                               const char **out, aitk_str *err)
{
    const aitk_yaml_node *n = NULL;
    aitk_status st = need(doc, map, key, &n, err);
    return st ? st : aitk_yaml_string(doc, n, out, err);
}

static aitk_status read_double(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                               const char *key, double *out, aitk_str *err)
{
    const aitk_yaml_node *n = NULL;
    aitk_status st = need(doc, map, key, &n, err);
    return st ? st : aitk_yaml_double(doc, n, out, err);
}

/* An optional count of saved activations: absent 0, else above 0. */
static aitk_status read_saved(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                              const char *key, double *out, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(map, key);
    *out = 0;
    if (!n)
        return AITK_OK;
    aitk_status st = aitk_yaml_double(doc, n, out, err);
    if (!st && !(*out > 0)) {
        aitk_yaml_errorf(err, doc, n, "%s must be greater than 0", key);
        st = AITK_E_RANGE;
    }
    return st;
}

static aitk_status read_long(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                             long *out, aitk_str *err)
{
    const aitk_yaml_node *n = NULL;
    aitk_status st = need(doc, map, key, &n, err);
    return st ? st : aitk_yaml_long(doc, n, out, err);
}

static aitk_status read_bool(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                             bool *out, aitk_str *err)
{
    const aitk_yaml_node *n = NULL;
    aitk_status st = need(doc, map, key, &n, err);
    return st ? st : aitk_yaml_bool(doc, n, out, err);
}

/* Optional boolean: absent keeps *out. */
static aitk_status opt_bool(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                            bool *out, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(map, key);
    return n ? aitk_yaml_bool(doc, n, out, err) : AITK_OK;
}

static aitk_status read_dim(const aitk_yaml_doc *doc, const aitk_yaml_node *dims,
                            const aitk_yaml_node *map, const char *key, long *out, aitk_str *err)
{
    const aitk_yaml_node *n = NULL;
    aitk_status st = need(doc, map, key, &n, err);
    return st ? st : aitk_model_dim_eval(doc, dims, n, out, err);
}

/* A width that cannot be 0: the model would have no work, and the prediction
 * would be a number with no meaning. */
static aitk_status read_size(const aitk_yaml_doc *doc, const aitk_yaml_node *dims,
                             const aitk_yaml_node *map, const char *key, long *out, aitk_str *err)
{
    aitk_status st = read_dim(doc, dims, map, key, out, err);
    if (!st && *out < 1) {
        aitk_yaml_errorf(err, doc, aitk_yaml_get(map, key), "%s must be at least 1", key);
        st = AITK_E_RANGE;
    }
    return st;
}

/* `tokens:` is a stream name or a dimension expression (a fixed count). */
static aitk_status read_stream(const aitk_yaml_doc *doc, const aitk_yaml_node *dims,
                               const aitk_yaml_node *n, aitk_stream *out, long *fixed,
                               aitk_str *err)
{
    static const char *const names[] = {"img", "txt", "all", "cond", "ref"};
    aitk_status st = aitk_yaml_expect(doc, n, AITK_YAML_SCALAR, "a token stream", err);
    if (st)
        return st;
    for (int i = 0; i < 5; i++) {
        if (strcmp(n->text, names[i]) == 0) {
            *out = (aitk_stream)i;
            return AITK_OK;
        }
    }
    *out = AITK_STREAM_FIXED;
    st = aitk_model_dim_eval(doc, dims, n, fixed, err);
    if (st)
        aitk_str_append(err, " (a token stream is img, txt, all, cond, ref or a count)");
    return st;
}

/* ---- blocks ---- */

/* `modules`: one path per repeat, so a layer filter can name each. */
static aitk_status load_modules(const aitk_yaml_doc *doc, const aitk_yaml_node *n,
                                aitk_linear_spec *l, aitk_str *err)
{
    const aitk_yaml_node *m = aitk_yaml_get(n, "modules");
    if (!m)
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_SEQ, "a list of module paths", err);
    if (!st && (m->count != (size_t)l->repeat || m->count > AITK_SPEC_MAX_REPEAT)) {
        aitk_yaml_errorf(err, doc, m, "modules lists %zu paths for repeat %ld", m->count,
                         l->repeat);
        return AITK_E_PARSE;
    }
    for (size_t i = 0; !st && i < m->count; i++)
        st = aitk_yaml_string(doc, m->items[i], &l->modules[i], err);
    l->n_modules = st ? 0 : m->count;
    return st;
}

static aitk_status load_linear(const aitk_yaml_doc *doc, const aitk_yaml_node *dims,
                               const aitk_yaml_node *n, aitk_linear_spec *l, aitk_str *err)
{
    static const char *const keys[] = {"name",    "repeat",     "in",
                                       "out",     "bias",       "tokens",
                                       "lora",    "modules",    "lora_saves",
                                       "lora_saves_autocast",   "modulates", NULL};
    aitk_status st = aitk_yaml_expect(doc, n, AITK_YAML_MAP, "a Linear {name, in, out, ...}", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, n, keys, "a Linear", err);
    if (!st)
        st = read_string(doc, n, "name", &l->name, err);
    l->repeat = 1;
    if (!st && aitk_yaml_get(n, "repeat"))
        st = read_dim(doc, dims, n, "repeat", &l->repeat, err);
    if (!st)
        st = read_size(doc, dims, n, "in", &l->in, err);
    if (!st)
        st = read_size(doc, dims, n, "out", &l->out, err);
    if (!st)
        st = opt_bool(doc, n, "bias", &l->bias, err);
    if (!st)
        st = opt_bool(doc, n, "lora", &l->lora, err);
    const aitk_yaml_node *t = NULL;
    if (!st)
        st = need(doc, n, "tokens", &t, err);
    if (!st)
        st = read_stream(doc, dims, t, &l->stream, &l->fixed_tokens, err);
    l->saves_stream = l->stream;
    l->saves_fixed_tokens = l->fixed_tokens;
    const aitk_yaml_node *modulated = aitk_yaml_get(n, "modulates");
    if (!st && modulated)
        st = read_stream(doc, dims, modulated, &l->saves_stream, &l->saves_fixed_tokens, err);
    if (!st)
        st = load_modules(doc, n, l, err);
    if (!st)
        st = read_saved(doc, n, "lora_saves", &l->lora_saves, err);
    if (!st)
        st = read_saved(doc, n, "lora_saves_autocast", &l->lora_saves_autocast, err);
    return st;
}

/* The four kernel counts of a block: all or none, so that a plain job and
 * one under autocast are never counted from different data. */
static aitk_status read_kernels(const aitk_yaml_doc *doc, const aitk_yaml_node *n,
                                aitk_block_spec *b, aitk_str *err)
{
    static const char *const keys[] = {"kernels_forward", "kernels_backward",
                                       "kernels_forward_autocast", "kernels_backward_autocast"};
    double *const into[] = {&b->kernels_forward, &b->kernels_backward,
                            &b->kernels_forward_autocast, &b->kernels_backward_autocast};
    size_t given = 0;
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < 4; i++) {
        st = read_saved(doc, n, keys[i], into[i], err);
        given += aitk_yaml_get(n, keys[i]) != NULL;
    }
    if (!st && given != 0 && given != 4) {
        aitk_yaml_errorf(err, doc, n, "a block gives all four kernel counts (%s, %s, %s, %s) or "
                                      "none", keys[0], keys[1], keys[2], keys[3]);
        st = AITK_E_PARSE;
    }
    return st;
}

static aitk_status load_block(const aitk_yaml_doc *doc, const aitk_yaml_node *dims,
                              const aitk_yaml_node *n, aitk_block_spec *b, aitk_str *err)
{
    static const char *const keys[] = {"name", "count", "checkpointed", "backward", "input",
                                       "norm_params", "attention", "elementwise_per_token",
                                       "saved_per_token", "saved_per_token_autocast",
                                       "backward_extra_per_token", "kernels_forward",
                                       "kernels_backward", "kernels_forward_autocast",
                                       "kernels_backward_autocast", "linears",
                                       "module_prefix", NULL};
    long unused = 0;
    aitk_status st = aitk_yaml_expect(doc, n, AITK_YAML_MAP, "a block group", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, n, keys, "a block group", err);
    if (!st)
        st = read_string(doc, n, "name", &b->name, err);
    if (!st)
        st = read_dim(doc, dims, n, "count", &b->count, err);
    if (!st)
        st = read_bool(doc, n, "checkpointed", &b->checkpointed, err);
    if (!st)
        st = read_bool(doc, n, "backward", &b->backward, err);
    if (!st)
        st = read_stream(doc, dims, aitk_yaml_get(n, "input") ? aitk_yaml_get(n, "input") : n,
                         &b->input, &unused, err);
    if (!st && aitk_yaml_get(n, "norm_params"))
        st = read_dim(doc, dims, n, "norm_params", &b->norm_params, err);
    if (!st)
        st = read_double(doc, n, "elementwise_per_token", &b->elementwise_per_token, err);
    if (!st)
        st = read_saved(doc, n, "saved_per_token", &b->saved_per_token, err);
    if (!st)
        st = read_saved(doc, n, "saved_per_token_autocast", &b->saved_per_token_autocast, err);
    if (!st)
        st = read_saved(doc, n, "backward_extra_per_token", &b->backward_extra_per_token, err);
    if (!st)
        st = read_kernels(doc, n, b, err);
    if (!st && aitk_yaml_get(n, "module_prefix"))
        st = read_string(doc, n, "module_prefix", &b->module_prefix, err);
    const aitk_yaml_node *a = aitk_yaml_get(n, "attention");
    if (!st && a) {
        static const char *const akeys[] = {"heads", "kv_heads", "head_dim", "tokens", NULL};
        st = aitk_yaml_expect(doc, a, AITK_YAML_MAP, "attention {heads, kv_heads, ...}", err);
        if (!st)
            st = aitk_yaml_check_keys(doc, a, akeys, "attention", err);
        if (!st)
            st = read_size(doc, dims, a, "heads", &b->heads, err);
        if (!st)
            st = read_dim(doc, dims, a, "kv_heads", &b->kv_heads, err);
        if (!st)
            st = read_size(doc, dims, a, "head_dim", &b->head_dim, err);
        if (!st)
            st = read_stream(doc, dims, aitk_yaml_get(a, "tokens") ? aitk_yaml_get(a, "tokens") : a,
                             &b->attn_stream, &unused, err);
    }
    const aitk_yaml_node *ls = aitk_yaml_get(n, "linears");
    if (!st && ls) {
        st = aitk_yaml_expect(doc, ls, AITK_YAML_SEQ, "a list of Linears", err);
        if (!st && ls->count) {
            b->linears = aitk_calloc(ls->count, sizeof *b->linears);
            if (!b->linears)
                return AITK_E_NOMEM;
            b->n_linears = ls->count;
        }
        for (size_t i = 0; !st && i < ls->count; i++)
            st = load_linear(doc, dims, ls->items[i], &b->linears[i], err);
    }
    return st;
}

/* ---- the rest of the file ---- */

static aitk_status load_frozen(const aitk_yaml_doc *doc, const aitk_model_spec *spec,
                               const aitk_yaml_node *n, aitk_frozen_spec *f, aitk_str *err)
{
    static const char *const keys[] = {"name", "role", "params", "tokens", NULL};
    aitk_status st = aitk_yaml_expect(doc, n, AITK_YAML_MAP, "a frozen model", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, n, keys, "a frozen model", err);
    const char *role = NULL;
    if (!st)
        st = read_string(doc, n, "name", &f->name, err);
    if (!st)
        st = read_string(doc, n, "role", &role, err);
    if (!st) {
        if (strcmp(role, "text_encoder") == 0) {
            f->role = AITK_FROZEN_TEXT_ENCODER;
        } else if (strcmp(role, "vae") == 0) {
            f->role = AITK_FROZEN_VAE;
        } else {
            aitk_yaml_errorf(err, doc, aitk_yaml_figure(aitk_yaml_get(n, "role")),
                             "role must be text_encoder or vae, found '%s'", role);
            return AITK_E_PARSE;
        }
    }
    if (!st)
        st = read_double(doc, n, "params", &f->params, err);
    const aitk_yaml_node *t = aitk_yaml_get(n, "tokens");
    if (!st && t) {
        if (t->kind == AITK_YAML_SCALAR && strcmp(t->text, "text") == 0)
            f->tokens = spec->text_tokens;
        else
            st = aitk_yaml_long(doc, t, &f->tokens, err);
    }
    return st;
}

/* ---- defaults: the ai-toolkit example's training setup ----
 *
 * Checked here, at their place, with the bounds predict's command line puts
 * on the same settings (--rank 1..4096, --batch 1..1024, --resolution
 * 64..8192): later readers take them as they are, and an unknown quantize
 * or optimizer must not quietly become bf16 or 8-bit AdamW there. */
#define DEFAULT_MAX_RANK 4096
#define DEFAULT_MAX_BATCH 1024
#define DEFAULT_MIN_RESOLUTION 64
#define DEFAULT_MAX_RESOLUTION 8192

/* A whole number in lo..hi, at its value's place. */
static aitk_status read_ranged(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                               const char *key, long lo, long hi, long *out, aitk_str *err)
{
    const aitk_yaml_node *n = NULL;
    aitk_status st = need(doc, map, key, &n, err);
    if (!st)
        st = aitk_yaml_long(doc, n, out, err);
    if (!st && (*out < lo || *out > hi)) {
        aitk_yaml_errorf(err, doc, n, "%s must be from %ld to %ld, found %ld", key, lo, hi,
                         *out);
        return AITK_E_RANGE;
    }
    return st;
}

/* One of `allowed` (NULL-terminated), at its value's place. */
static aitk_status read_choice(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                               const char *key, const char *const *allowed, const char *why,
                               const char **out, aitk_str *err)
{
    aitk_status st = read_string(doc, map, key, out, err);
    if (st)
        return st;
    for (const char *const *a = allowed; *a; a++)
        if (strcmp(*a, *out) == 0)
            return AITK_OK;
    aitk_yaml_errorf(err, doc, aitk_yaml_figure(aitk_yaml_get(map, key)),
                     "%s must be one of", key);
    for (const char *const *a = allowed; err && *a; a++)
        aitk_str_appendf(err, "%s %s", a == allowed ? "" : ",", *a);
    if (err)
        aitk_str_appendf(err, " (%s), found '%s'", why, *out);
    return AITK_E_PARSE;
}

static aitk_status load_defaults(const aitk_yaml_doc *doc, const aitk_yaml_node *d,
                                 aitk_model_defaults *o, aitk_str *err)
{
    static const char *const keys[] = {"rank", "alpha", "resolution", "resolutions", "batch",
                                       "quantize", "optimizer", "checkpointing",
                                       "cache_latents", "cache_text", NULL};
    /* The spellings predict's --quantize documents; the step and the cost
     * model read these three and no other. */
    static const char *const quantize[] = {"fp8", "nf4", "none", NULL};
    /* What the training step implements (models/step_api.c); the cost model
     * knows both (models/cost.yaml). */
    static const char *const optimizer[] = {"adamw", "adamw8bit", NULL};
    aitk_status st = aitk_yaml_expect(doc, d, AITK_YAML_MAP, "a defaults map", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, d, keys, "defaults", err);
    if (!st)
        st = read_ranged(doc, d, "rank", 1, DEFAULT_MAX_RANK, &o->rank, err);
    /* alpha scales the adapter (alpha / rank): 0 would train nothing. */
    if (!st)
        st = read_ranged(doc, d, "alpha", 1, DEFAULT_MAX_RANK, &o->alpha, err);
    if (!st)
        st = read_ranged(doc, d, "resolution", DEFAULT_MIN_RESOLUTION, DEFAULT_MAX_RESOLUTION,
                         &o->resolution, err);
    if (!st)
        st = read_ranged(doc, d, "batch", 1, DEFAULT_MAX_BATCH, &o->batch, err);
    if (!st)
        st = read_choice(doc, d, "quantize", quantize, "base weights as predict --quantize "
                         "names them", &o->quantize, err);
    if (!st)
        st = read_choice(doc, d, "optimizer", optimizer, "the optimizers the training step "
                         "implements", &o->optimizer, err);
    if (!st)
        st = read_bool(doc, d, "checkpointing", &o->checkpointing, err);
    if (!st)
        st = read_bool(doc, d, "cache_latents", &o->cache_latents, err);
    if (!st)
        st = read_bool(doc, d, "cache_text", &o->cache_text, err);
    const aitk_yaml_node *r = NULL;
    if (!st)
        st = need(doc, d, "resolutions", &r, err); /* {value: [..]} */
    if (!st)
        st = aitk_yaml_expect(doc, r, AITK_YAML_SEQ, "a list of resolutions", err);
    if (!st && r->count == 0) {
        aitk_yaml_errorf(err, doc, r, "resolutions is empty: list the example's buckets");
        return AITK_E_PARSE;
    }
    for (size_t i = 0; !st && i < r->count; i++) {
        if (i >= sizeof o->resolutions / sizeof *o->resolutions) {
            aitk_yaml_errorf(err, doc, r, "more than %zu resolutions",
                             sizeof o->resolutions / sizeof *o->resolutions);
            return AITK_E_RANGE;
        }
        long v = 0;
        st = aitk_yaml_long(doc, r->items[i], &v, err);
        if (!st && (v < DEFAULT_MIN_RESOLUTION || v > DEFAULT_MAX_RESOLUTION)) {
            aitk_yaml_errorf(err, doc, r->items[i], "a resolution must be from %d to %d, "
                                                    "found %ld",
                             DEFAULT_MIN_RESOLUTION, DEFAULT_MAX_RESOLUTION, v);
            return AITK_E_RANGE;
        }
        /* A bucket listed twice would weigh twice in the mean step over buckets. */
        for (size_t k = 0; !st && k < i; k++)
            if (o->resolutions[k] == v) {
                aitk_yaml_errorf(err, doc, r->items[i], "resolution %ld is listed twice", v);
                return AITK_E_PARSE;
            }
        o->resolutions[i] = v;
        o->n_resolutions = i + 1;
    }
    return st;
}

static aitk_status load_spec(aitk_model_spec *s, aitk_str *err)
{
    const aitk_yaml_doc *doc = s->doc;
    const aitk_yaml_node *root = doc->root;
    aitk_status st = aitk_yaml_expect(doc, root, AITK_YAML_MAP, "a model spec", err);
    if (st)
        return st;
    st = aitk_data_check_schema(doc, 1, err);
    if (!st)
        st = read_string(doc, root, "id", &s->id, err);
    if (!st)
        st = read_string(doc, root, "title", &s->title, err);
    if (!st)
        st = read_string(doc, root, "source", &s->source, err);
    if (!st)
        st = read_double(doc, root, "published_params", &s->published_params, err);
    if (!st)
        st = read_string(doc, aitk_yaml_get(root, "published_params"), "source",
                         &s->published_source, err);
    const aitk_yaml_node *dims = NULL, *tok = NULL;
    if (!st)
        st = need_section(doc, root, s->tiny ? "tiny_dims" : "dims", &dims, err);
    if (!st)
        st = aitk_yaml_expect(doc, dims, AITK_YAML_MAP, "a map of dimensions", err);
    if (!st)
        st = read_size(doc, dims, dims, "hidden", &s->hidden, err);
    if (!st)
        st = need_section(doc, root, "tokens", &tok, err);
    if (!st)
        st = read_long(doc, tok, "vae_downsample", &s->vae_downsample, err);
    if (!st)
        st = read_long(doc, tok, "patch", &s->patch, err);
    if (!st)
        st = read_long(doc, tok, s->tiny ? "tiny_text" : "text", &s->text_tokens, err);
    if (!st && (s->vae_downsample <= 0 || s->patch <= 0 || s->text_tokens < 0)) {
        aitk_yaml_errorf(err, doc, tok, "vae_downsample and patch must be positive");
        return AITK_E_RANGE;
    }
    const aitk_yaml_node *blocks = NULL, *frozen = NULL, *n = NULL;
    if (!st)
        st = need_section(doc, root, "blocks", &blocks, err);
    if (!st)
        st = aitk_yaml_expect(doc, blocks, AITK_YAML_SEQ, "a list of block groups", err);
    if (!st && blocks->count) {
        s->blocks = aitk_calloc(blocks->count, sizeof *s->blocks);
        if (!s->blocks)
            return AITK_E_NOMEM;
        s->n_blocks = blocks->count;
    }
    for (size_t i = 0; !st && i < s->n_blocks; i++)
        st = load_block(doc, dims, blocks->items[i], &s->blocks[i], err);
    if (!st)
        st = need_section(doc, root, "frozen", &frozen, err);
    if (!st)
        st = aitk_yaml_expect(doc, frozen, AITK_YAML_SEQ, "a list of frozen models", err);
    if (!st && frozen->count) {
        s->frozen = aitk_calloc(frozen->count, sizeof *s->frozen);
        if (!s->frozen)
            return AITK_E_NOMEM;
        s->n_frozen = frozen->count;
    }
    for (size_t i = 0; !st && i < s->n_frozen; i++)
        st = load_frozen(doc, s, frozen->items[i], &s->frozen[i], err);
    if (!st)
        st = need_section(doc, root, "defaults", &n, err);
    if (!st)
        st = load_defaults(doc, n, &s->defaults, err);
    if (!st)
        st = need_section(doc, root, "targets", &n, err);
    if (!st)
        st = read_double(doc, n, "min_vram_gb", &s->targets.min_vram_gb, err);
    if (!st)
        st = read_double(doc, n, "minutes_per_1000_steps", &s->targets.minutes_per_1000, err);
    if (!st)
        st = read_string(doc, n, "recommended_gpu", &s->targets.recommended_gpu, err);
    if (!st)
        st = read_string(doc, n, "source", &s->targets.source, err);
    return st;
}

static aitk_status from_doc(aitk_yaml_doc *doc, bool tiny, aitk_model_spec **out,
                            aitk_str *err)
{
    *out = NULL;
    aitk_model_spec *s = aitk_calloc(1, sizeof *s);
    if (!s) {
        aitk_yaml_free(doc);
        return AITK_E_NOMEM;
    }
    s->doc = doc;
    s->tiny = tiny;
    aitk_status st = load_spec(s, err);
    if (st) {
        aitk_model_spec_free(s);
        return st;
    }
    *out = s;
    return AITK_OK;
}

static aitk_status load_by_id(const char *id, bool tiny, aitk_model_spec **out, aitk_str *err)
{
    *out = NULL;
    bool known = false;
    for (const char *const *m = aitk_model_ids; *m; m++)
        known = known || strcmp(*m, id) == 0;
    if (!known) {
        aitk_str_appendf(err, "unknown model '%s' (known:", id);
        for (const char *const *m = aitk_model_ids; *m; m++)
            aitk_str_appendf(err, " %s", *m);
        aitk_str_append(err, ")");
        return AITK_E_NOTFOUND;
    }
    aitk_str name = AITK_STR_INIT;
    aitk_str_appendf(&name, "models/%s.yaml", id);
    aitk_yaml_doc *doc = NULL;
    aitk_status st = aitk_str_status(&name);
    if (!st)
        st = aitk_data_load_yaml(aitk_str_cstr(&name), &doc, err);
    aitk_str_free(&name);
    if (st)
        return st;
    return aitk_model_spec_from_doc(doc, tiny, out, err);
}

void aitk_model_spec_free(aitk_model_spec *spec)
{
    if (!spec)
        return;
    for (size_t i = 0; i < spec->n_blocks; i++)
        aitk_free(spec->blocks[i].linears);
    aitk_free(spec->blocks);
    aitk_free(spec->frozen);
    aitk_yaml_free(spec->doc);
    aitk_free(spec);
}

double aitk_block_spec_params(const aitk_block_spec *b)
{
    double p = (double)b->norm_params;
    for (size_t i = 0; i < b->n_linears; i++) {
        const aitk_linear_spec *l = &b->linears[i];
        p += (double)l->repeat * ((double)l->in * (double)l->out + (l->bias ? (double)l->out : 0));
    }
    return p;
}

double aitk_model_spec_params(const aitk_model_spec *spec)
{
    double p = 0;
    for (size_t i = 0; i < spec->n_blocks; i++)
        p += (double)spec->blocks[i].count * aitk_block_spec_params(&spec->blocks[i]);
    return p;
}

long aitk_model_spec_tokens(const aitk_model_spec *spec, aitk_stream stream, long resolution,
                            long fixed_tokens)
{
    long side = resolution / (spec->vae_downsample * spec->patch);
    long img = side * side;
    switch (stream) {
    case AITK_STREAM_IMG:
        return img;
    case AITK_STREAM_TXT:
        return spec->text_tokens;
    case AITK_STREAM_ALL:
        return img + spec->text_tokens;
    case AITK_STREAM_COND:
        return 1;
    case AITK_STREAM_REF:
        return 0;
    case AITK_STREAM_FIXED:
        return fixed_tokens;
    }
    return 0;
}

aitk_status aitk_model_spec_load(const char *id, bool tiny, aitk_model_spec **out, aitk_str *err)
{
    /* err may be NULL: messages then go to a scratch string. */
    aitk_str scratch = AITK_STR_INIT;
    aitk_status st = load_by_id(id, tiny, out, err ? err : &scratch);
    aitk_str_free(&scratch);
    return st;
}

aitk_status aitk_model_spec_from_doc(aitk_yaml_doc *doc, bool tiny, aitk_model_spec **out,
                                     aitk_str *err)
{
    /* err may be NULL: messages then go to a scratch string. */
    aitk_str scratch = AITK_STR_INIT;
    aitk_status st = from_doc(doc, tiny, out, err ? err : &scratch);
    aitk_str_free(&scratch);
    return st;
}
