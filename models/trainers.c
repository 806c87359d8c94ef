/* models/trainers.yaml read and checked, and a trainer's settings applied to
 * a workload (models/trainers.h). */
#include "models/trainers.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/data.h"

/* The value of {value: X, source: "..."} at `key`, which must have a source:
 * a trainer's setting without one is not admitted. */
static aitk_status sourced(const aitk_yaml_doc *doc, const aitk_yaml_node *map, const char *key,
                           const aitk_yaml_node **out, aitk_str *err)
{
    const aitk_yaml_node *n = NULL;
    aitk_status st = aitk_yaml_need(doc, map, key, &n, err);
    if (!st)
        st = aitk_yaml_expect(doc, n, AITK_YAML_MAP, "{value, source}", err);
    const char *src = NULL;
    if (!st)
        st = aitk_yaml_need_string(doc, n, "source", &src, err);
    if (!st && !*src) {
        aitk_yaml_errorf(err, doc, n, "'%s' has an empty source", key);
        st = AITK_E_PARSE;
    }
    if (!st)
        st = aitk_yaml_need(doc, n, "value", out, err);
    return st;
}

static aitk_status sourced_string(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                  const char *key, const char *const *choices, int *index,
                                  const char **text, aitk_str *err)
{
    const aitk_yaml_node *v = NULL;
    aitk_status st = sourced(doc, map, key, &v, err);
    if (!st)
        st = aitk_yaml_string(doc, v, text, err);
    for (int i = 0; !st && choices && choices[i]; i++)
        if (strcmp(*text, choices[i]) == 0) {
            *index = i;
            return AITK_OK;
        }
    if (!st && choices) {
        aitk_yaml_errorf(err, doc, v, "'%s': '%s' is not one of the known values", key, *text);
        st = AITK_E_PARSE;
    }
    return st;
}

/* A map of model ids to sourced figures at `key` (`required`, or absent
 * for none), each from lo to hi and, with `whole`, a whole number; an error
 * calls a figure `what`. */
static aitk_status load_model_figures(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                      const char *key, const char *what, bool required,
                                      double lo, double hi,
                                      bool whole, aitk_trainer_figure *out, size_t cap,
                                      size_t *n, aitk_str *err)
{
    const aitk_yaml_node *m = aitk_yaml_get(map, key);
    if (!m && !required)
        return AITK_OK;
    aitk_status st = aitk_yaml_need(doc, map, key, &m, err);
    if (!st)
        st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a map of model ids to figures", err);
    for (size_t i = 0; !st && i < m->count; i++) {
        if (i >= cap) {
            aitk_yaml_errorf(err, doc, m, "too many models");
            return AITK_E_RANGE;
        }
        aitk_trainer_figure *f = &out[i];
        f->model_id = m->pairs[i].key->text;
        const aitk_yaml_node *v = NULL;
        st = sourced(doc, m, f->model_id, &v, err);
        if (!st)
            st = aitk_yaml_double(doc, v, &f->value, err);
        const bool in_range = f->value >= lo && f->value <= hi;
        if (!st && (!in_range || (whole && f->value != floor(f->value)))) {
            aitk_yaml_errorf(err, doc, v, "%s %g out of range (%g..%g%s)", what, f->value, lo,
                             hi, whole ? ", whole" : "");
            st = AITK_E_RANGE;
        }
        *n = i + 1;
    }
    return st;
}

/* The figure `f` gives model_id; 0 where it gives none. */
static double figure_for(const aitk_trainer_figure *f, size_t n, const char *model_id)
{
    for (size_t i = 0; model_id && i < n; i++)
        if (strcmp(f[i].model_id, model_id) == 0)
            return f[i].value;
    return 0;
}

static aitk_status load_aliases(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                aitk_trainer *t, aitk_str *err)
{
    const aitk_yaml_node *a = NULL;
    aitk_status st = aitk_yaml_need(doc, map, "aliases", &a, err);
    if (!st)
        st = aitk_yaml_expect(doc, a, AITK_YAML_SEQ, "a list of names", err);
    for (size_t i = 0; !st && i < a->count; i++) {
        if (i + 1 >= sizeof t->aliases / sizeof *t->aliases) {
            aitk_yaml_errorf(err, doc, a, "too many aliases");
            return AITK_E_RANGE;
        }
        st = aitk_yaml_string(doc, a->items[i], &t->aliases[i], err);
    }
    return st;
}

/* `lora_layers: {value: [module names], source}`: 1 to 16 names. */
static aitk_status load_lora_layers(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                    aitk_trainer *t, aitk_str *err)
{
    const aitk_yaml_node *v = NULL;
    aitk_status st = sourced(doc, map, "lora_layers", &v, err);
    return st ? st
              : aitk_yaml_names(doc, v, "lora_layers", t->lora_layers,
                                sizeof t->lora_layers / sizeof *t->lora_layers - 1, err);
}

/* One `saved_per_token` entry: {value: plain, autocast: N, source}. */
static aitk_status load_saved_group(const aitk_yaml_doc *doc, const aitk_yaml_node *groups,
                                    size_t k, const char *model_id, aitk_trainer *t,
                                    aitk_str *err)
{
    if (t->n_saved >= sizeof t->saved / sizeof *t->saved) {
        aitk_yaml_errorf(err, doc, groups, "too many block groups");
        return AITK_E_RANGE;
    }
    const char *group = groups->pairs[k].key->text;
    const aitk_yaml_node *v = NULL, *a = NULL;
    double plain = 0, cast = 0;
    aitk_status st = sourced(doc, groups, group, &v, err);
    if (!st)
        st = aitk_yaml_double(doc, v, &plain, err);
    if (!st)
        st = aitk_yaml_need(doc, groups->pairs[k].value, "autocast", &a, err);
    if (!st)
        st = aitk_yaml_double(doc, a, &cast, err);
    if (!st && !(plain >= 1 && plain <= 200 && cast >= 1 && cast <= 200)) {
        aitk_yaml_errorf(err, doc, v, "saved_per_token %g / %g out of range (1..200)", plain,
                         cast);
        st = AITK_E_RANGE;
    }
    if (!st) {
        t->saved[t->n_saved].model_id = model_id;
        t->saved[t->n_saved].group = group;
        t->saved[t->n_saved].plain = plain;
        t->saved[t->n_saved].autocast = cast;
        t->n_saved++;
    }
    return st;
}

/* A block group's entry of a by-model, by-group map (saved_per_token,
 * kernels): groups->pairs[k] for model_id. */
typedef aitk_status (*group_loader)(const aitk_yaml_doc *doc, const aitk_yaml_node *groups,
                                    size_t k, const char *model_id, aitk_trainer *t,
                                    aitk_str *err);

/* `key` (optional): model id -> block group -> entry, each entry given to
 * load. */
static aitk_status load_by_group(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                 const char *key, group_loader load, aitk_trainer *t,
                                 aitk_str *err)
{
    const aitk_yaml_node *m = aitk_yaml_get(map, key);
    if (!m)
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a map of model ids", err);
    for (size_t i = 0; !st && i < m->count; i++) {
        const aitk_yaml_node *groups = m->pairs[i].value;
        st = aitk_yaml_expect(doc, groups, AITK_YAML_MAP, "a map of block groups", err);
        for (size_t k = 0; !st && k < groups->count; k++)
            st = load(doc, groups, k, m->pairs[i].key->text, t, err);
    }
    return st;
}

/* One `kernels` entry: {forward, backward, forward_autocast,
 * backward_autocast, source}, each count in 1..100000, and optionally
 * `linears`, the block's Linear modules in the trainer's code (1..1000),
 * where they differ from the model's spec (kohya's fused qkv). */
static aitk_status load_kernels_group(const aitk_yaml_doc *doc, const aitk_yaml_node *groups,
                                      size_t k, const char *model_id, aitk_trainer *t,
                                      aitk_str *err)
{
    static const char *const keys[] = {"forward", "backward", "forward_autocast",
                                       "backward_autocast", "source", "linears", NULL};
    if (t->n_kernels >= sizeof t->kernels / sizeof *t->kernels) {
        aitk_yaml_errorf(err, doc, groups, "too many block groups");
        return AITK_E_RANGE;
    }
    const aitk_yaml_node *e = groups->pairs[k].value;
    aitk_status st = aitk_yaml_expect(doc, e, AITK_YAML_MAP,
                                      "{forward, backward, forward_autocast, "
                                      "backward_autocast, source}", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, e, keys, "a block group's kernels", err);
    if (!st)
        st = aitk_yaml_need_string(doc, e, "source", &(const char *){NULL}, err);
    double *counts = t->kernels[t->n_kernels].counts;
    for (size_t i = 0; !st && i < 4; i++) {
        const aitk_yaml_node *v = NULL;
        st = aitk_yaml_need(doc, e, keys[i], &v, err);
        if (!st)
            st = aitk_yaml_double(doc, v, &counts[i], err);
        if (!st && !(counts[i] >= 1 && counts[i] <= 100000)) {
            aitk_yaml_errorf(err, doc, v, "%s %g out of range (1..100000)", keys[i], counts[i]);
            st = AITK_E_RANGE;
        }
    }
    counts[4] = 0;
    const aitk_yaml_node *linears = aitk_yaml_get(e, "linears");
    if (!st && linears) {
        st = aitk_yaml_double(doc, linears, &counts[4], err);
        if (!st && !(counts[4] >= 1 && counts[4] <= 1000 && counts[4] == (long)counts[4])) {
            aitk_yaml_errorf(err, doc, linears, "linears %g is not a whole number in 1..1000",
                             counts[4]);
            st = AITK_E_RANGE;
        }
    }
    if (!st) {
        t->kernels[t->n_kernels].model_id = model_id;
        t->kernels[t->n_kernels].group = groups->pairs[k].key->text;
        t->n_kernels++;
    }
    return st;
}

/* `validation_resolution` and `validation_text`: both or neither. */
static aitk_status load_validation(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                   aitk_trainer *t, aitk_str *err)
{
    static const char *const dtypes[] = {"bf16", "fp32", NULL};
    const bool res = aitk_yaml_get(map, "validation_resolution") != NULL;
    if (!res && !aitk_yaml_get(map, "validation_text"))
        return AITK_OK;
    const aitk_yaml_node *v = NULL;
    aitk_status st = sourced(doc, map, "validation_resolution", &v, err);
    if (!st)
        st = aitk_yaml_long(doc, v, &t->validation_resolution, err);
    if (!st && (t->validation_resolution < 64 || t->validation_resolution > 8192)) {
        aitk_yaml_errorf(err, doc, v, "validation_resolution %ld out of range (64..8192)",
                         t->validation_resolution);
        st = AITK_E_RANGE;
    }
    int i = 0;
    const char *text = NULL;
    if (!st)
        st = sourced_string(doc, map, "validation_text", dtypes, &i, &text, err);
    t->validation_te_dtype = i == 0 ? AITK_WEIGHT_BF16 : AITK_WEIGHT_FP32;
    return st;
}

/* `not_modelled`: model ids to sourced sentences (absent: none). */
static aitk_status load_not_modelled(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                                     aitk_trainer *t, aitk_str *err)
{
    const aitk_yaml_node *m = aitk_yaml_get(map, "not_modelled");
    if (!m)
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a map of model ids to sentences",
                                      err);
    const size_t cap = sizeof t->not_modelled / sizeof *t->not_modelled;
    for (size_t i = 0; !st && i < m->count; i++) {
        if (i >= cap) {
            aitk_yaml_errorf(err, doc, m, "too many models");
            return AITK_E_RANGE;
        }
        int unused = 0;
        t->not_modelled[i].model_id = m->pairs[i].key->text;
        st = sourced_string(doc, m, t->not_modelled[i].model_id, NULL, &unused,
                            &t->not_modelled[i].text, err);
        if (!st && !*t->not_modelled[i].text) {
            aitk_yaml_errorf(err, doc, m->pairs[i].value, "'%s' says nothing",
                             t->not_modelled[i].model_id);
            st = AITK_E_PARSE;
        }
        t->n_not_modelled = i + 1;
    }
    return st;
}

/* `attention_mask`: model ids to sourced mask shapes (absent: none). */
static aitk_status load_masks(const aitk_yaml_doc *doc, const aitk_yaml_node *map,
                              aitk_trainer *t, aitk_str *err)
{
    const aitk_yaml_node *m = aitk_yaml_get(map, "attention_mask");
    if (!m)
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a map of model ids to mask shapes",
                                      err);
    const size_t cap = sizeof t->masks / sizeof *t->masks;
    for (size_t i = 0; !st && i < m->count; i++) {
        if (i >= cap) {
            aitk_yaml_errorf(err, doc, m, "too many models");
            return AITK_E_RANGE;
        }
        int unused = 0;
        const char *text = NULL;
        t->masks[i].model_id = m->pairs[i].key->text;
        st = sourced_string(doc, m, t->masks[i].model_id, NULL, &unused, &text, err);
        if (!st && aitk_attention_mask_parse(text, &t->masks[i].kind)) {
            aitk_yaml_errorf(err, doc, aitk_yaml_figure(m->pairs[i].value),
                             "'%s': '%s' is not a mask shape (" AITK_ATTENTION_MASK_CHOICES ")",
                             t->masks[i].model_id, text);
            st = AITK_E_PARSE;
        }
        t->n_masks = st ? i : i + 1;
    }
    return st;
}

static aitk_status load_trainer(const aitk_yaml_doc *doc, const aitk_yaml_pair *pair,
                                aitk_trainer *t, aitk_str *err)
{
    static const char *const keys[] = {"title", "aliases",    "text_tokens", "fp8",
                                       "optimizer", "step", "lora_dtype", "lora_layers",
                                       "validation_resolution", "validation_text",
                                       "elementwise_bwd_factor", "cached_text",
                                       "saved_per_token", "kernels", "not_modelled",
                                       "autocast", "attention_mask", NULL};
    static const char *const lora_dtype[] = {"bf16", "fp32", NULL};
    static const char *const fp8[] = {"quanto", "cast", "torchao", NULL};
    static const char *const step[] = {"optimizer", "micro-batch", NULL};
    _Static_assert(AITK_FP8_QUANTO == 0 && AITK_FP8_CAST == 1 && AITK_FP8_TORCHAO == 2,
                   "fp8 names in aitk_fp8_path order");
    const aitk_yaml_node *m = pair->value;
    t->id = pair->key->text;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a trainer", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, m, keys, "a trainer", err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "title", &t->title, err);
    if (!st)
        st = load_aliases(doc, m, t, err);
    if (!st)
        st = load_model_figures(doc, m, "text_tokens", "text tokens", true, 1, 4096, true,
                                t->text, sizeof t->text / sizeof *t->text, &t->n_text, err);
    int i = 0;
    const char *text = NULL;
    if (!st)
        st = sourced_string(doc, m, "fp8", fp8, &i, &text, err);
    t->fp8 = (aitk_fp8_path)i;
    if (!st)
        st = sourced_string(doc, m, "step", step, &i, &text, err);
    t->optimizer_steps = i == 0;
    if (!st)
        st = sourced_string(doc, m, "optimizer", NULL, &i, &t->optimizer, err);
    if (!st && strcmp(t->optimizer, "none") == 0)
        t->optimizer = NULL;
    t->lora_bytes = 0;
    if (!st && aitk_yaml_get(m, "lora_dtype")) {
        st = sourced_string(doc, m, "lora_dtype", lora_dtype, &i, &text, err);
        t->lora_bytes = i == 0 ? 2 : 4;
    }
    if (!st && aitk_yaml_get(m, "lora_layers"))
        st = load_lora_layers(doc, m, t, err);
    if (!st)
        st = load_validation(doc, m, t, err);
    if (!st)
        st = load_model_figures(doc, m, "elementwise_bwd_factor", "elementwise_bwd_factor",
                                false, 0.5, 4, false, t->bwd_factor,
                                sizeof t->bwd_factor / sizeof *t->bwd_factor, &t->n_bwd_factor,
                                err);
    if (!st)
        st = load_by_group(doc, m, "saved_per_token", load_saved_group, t, err);
    if (!st)
        st = load_by_group(doc, m, "kernels", load_kernels_group, t, err);
    if (!st)
        st = load_not_modelled(doc, m, t, err);
    if (!st)
        st = load_masks(doc, m, t, err);
    t->autocast = false;
    const aitk_yaml_node *v = NULL;
    if (!st && aitk_yaml_get(m, "autocast"))
        st = sourced(doc, m, "autocast", &v, err);
    if (!st && v)
        st = aitk_yaml_bool(doc, v, &t->autocast, err);
    static const char *const cached[] = {"unloaded", "resident", NULL};
    if (!st && aitk_yaml_get(m, "cached_text")) {
        st = sourced_string(doc, m, "cached_text", cached, &i, &text, err);
        t->text_resident = i == 1;
    }
    return st;
}

aitk_status aitk_trainers_from_doc(aitk_yaml_doc *doc, aitk_trainers **out, aitk_str *err)
{
    *out = NULL;
    aitk_trainers *t = aitk_calloc(1, sizeof *t);
    if (!t) {
        aitk_yaml_free(doc);
        return AITK_E_NOMEM;
    }
    t->doc = doc;
    aitk_status st = aitk_data_check_schema(doc, 1, err);
    const aitk_yaml_node *root = st ? NULL : doc->root, *list = NULL;
    if (!st)
        st = aitk_yaml_need(doc, root, "trainers", &list, err);
    if (!st)
        st = aitk_yaml_expect(doc, list, AITK_YAML_MAP, "a map of trainers", err);
    if (!st && (list->count == 0 || list->count > sizeof t->items / sizeof *t->items)) {
        aitk_yaml_errorf(err, doc, list, "expected 1 to %zu trainers",
                         sizeof t->items / sizeof *t->items);
        st = AITK_E_RANGE;
    }
    for (size_t i = 0; !st && i < list->count; i++) {
        st = load_trainer(doc, &list->pairs[i], &t->items[i], err);
        t->count = i + 1;
    }
    const char *def = NULL;
    if (!st)
        st = aitk_yaml_need_string(doc, root, "default", &def, err);
    if (!st && !(t->fallback = aitk_trainers_find(t, def))) {
        aitk_yaml_errorf(err, doc, aitk_yaml_get(root, "default"), "default: no trainer '%s'",
                         def);
        st = AITK_E_PARSE;
    }
    if (st) {
        aitk_trainers_free(t);
        return st;
    }
    *out = t;
    return AITK_OK;
}

aitk_status aitk_trainers_load(aitk_trainers **out, aitk_str *err)
{
    aitk_yaml_doc *doc = NULL;
    *out = NULL;
    aitk_status st = aitk_data_load_yaml("models/trainers.yaml", &doc, err);
    return st ? st : aitk_trainers_from_doc(doc, out, err);
}

void aitk_trainers_free(aitk_trainers *t)
{
    if (!t)
        return;
    aitk_yaml_free(t->doc);
    aitk_free(t);
}

const aitk_trainer *aitk_trainers_find(const aitk_trainers *t, const char *id)
{
    for (size_t i = 0; id && i < t->count; i++)
        if (strcasecmp(t->items[i].id, id) == 0)
            return &t->items[i];
    return NULL;
}

/* Whether `word` occurs in `text`, ignoring ASCII case. */
static bool contains_nocase(const char *text, const char *word)
{
    const size_t n = strlen(word);
    for (; n && *text; text++)
        if (strncasecmp(text, word, n) == 0)
            return true;
    return false;
}

const aitk_trainer *aitk_trainers_match(const aitk_trainers *t, const char *text)
{
    for (size_t i = 0; text && i < t->count; i++)
        for (const char *const *a = t->items[i].aliases; *a; a++)
            if (contains_nocase(text, *a))
                return &t->items[i];
    return NULL;
}

aitk_status aitk_trainers_names(const aitk_trainers *t, aitk_str *o)
{
    for (size_t i = 0; i < t->count; i++)
        aitk_str_appendf(o, "%s%s", i ? "|" : "", t->items[i].id);
    return aitk_str_status(o);
}

bool aitk_trainer_has_model(const aitk_trainer *t, const char *model_id)
{
    return figure_for(t->text, t->n_text, model_id) > 0;
}

void aitk_workload_set_trainer(aitk_workload *w, const aitk_trainer *t)
{
    w->trainer = t->id;
    w->fp8_path = t->fp8;
    w->autocast = t->autocast;
    const char *model = w->spec ? w->spec->id : NULL;
    w->text_tokens = (long)figure_for(t->text, t->n_text, model);
    /* torchao converts the transformer alone: the text encoders keep bf16. */
    if (aitk_workload_fp8_compute(w))
        w->te_dtype = AITK_WEIGHT_BF16;
    if (t->optimizer)
        w->optimizer = t->optimizer;
    if (t->lora_bytes > 0)
        w->lora_bytes = t->lora_bytes;
    w->validation_resolution = t->validation_resolution;
    w->validation_te_dtype = t->validation_te_dtype;
    /* Counted only where the prompts are cached: encoders that run each
     * step are on the GPU anyway. */
    w->te_resident = t->text_resident;
    if (t->text_resident)
        w->te_dtype = AITK_WEIGHT_BF16;
    w->elementwise_bwd_factor = figure_for(t->bwd_factor, t->n_bwd_factor, model);
    w->attention_mask = AITK_MASK_NONE;
    for (size_t i = 0; model && i < t->n_masks; i++)
        if (strcmp(t->masks[i].model_id, model) == 0)
            w->attention_mask = t->masks[i].kind;
    w->not_modelled = NULL;
    for (size_t i = 0; model && i < t->n_not_modelled; i++)
        if (strcmp(t->not_modelled[i].model_id, model) == 0)
            w->not_modelled = t->not_modelled[i].text;
    memset(w->saved_per_token, 0, sizeof w->saved_per_token);
    memset(w->saved_per_token_autocast, 0, sizeof w->saved_per_token_autocast);
    for (size_t i = 0; w->spec && i < t->n_saved; i++)
        for (size_t g = 0; g < w->spec->n_blocks && g < AITK_WORKLOAD_MAX_GROUPS; g++)
            if (strcmp(t->saved[i].model_id, w->spec->id) == 0 &&
                strcmp(t->saved[i].group, w->spec->blocks[g].name) == 0) {
                w->saved_per_token[g] = t->saved[i].plain;
                w->saved_per_token_autocast[g] = t->saved[i].autocast;
            }
    memset(w->kernels, 0, sizeof w->kernels);
    for (size_t i = 0; w->spec && i < t->n_kernels; i++)
        for (size_t g = 0; g < w->spec->n_blocks && g < AITK_WORKLOAD_MAX_GROUPS; g++)
            if (strcmp(t->kernels[i].model_id, w->spec->id) == 0 &&
                strcmp(t->kernels[i].group, w->spec->blocks[g].name) == 0)
                memcpy(w->kernels[g], t->kernels[i].counts, sizeof w->kernels[g]);
    /* The trainer's own choice of layers, unless the job made one. */
    if (t->lora_layers[0] && w->spec && aitk_trainer_has_model(t, w->spec->id) &&
        !(w->lora_only && *w->lora_only) && !(w->lora_ignore && *w->lora_ignore))
        w->lora_only = t->lora_layers;
}
