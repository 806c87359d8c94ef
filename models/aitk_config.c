/* ai-toolkit config reader: tells the model and the job first
 * (aitk_config_id.c), then walks config.process[0] and picks out the keys
 * that set compute and memory. Every other key at the levels read is sorted
 * by models/aitk_config_keys.yaml (aitk_config_keys.c): changes cost but is
 * not modelled (warned, with why), plays no part (listed with --verbose), or
 * unknown (warned: often a typo). */
#include "models/aitk_config.h"

#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/log.h"
#include "models/aitk_config_internal.h"
#include "models/cost.h"

#define MAX_CONFIG_BYTES (4u << 20)

typedef aitk_config_reader reader;

#define in_list aitk_config_in_list

/* The bounds are predict's command-line bounds (--batch, --rank): a value
 * beyond them is a typo, and would print a peak of 10^19 GiB. */
#define CONFIG_MAX_BATCH 1024
#define CONFIG_MAX_RANK 4096
#define CONFIG_MAX_ACCUMULATION 4096
#define CONFIG_MAX_STEPS 100000000L
#define CONFIG_MIN_RESOLUTION 64
#define CONFIG_MAX_RESOLUTION 8192

static aitk_status opt_long(reader *r, const aitk_yaml_node *map, const char *key, long min,
                            long max, long *out)
{
    const aitk_yaml_node *n = aitk_yaml_get(map, key);
    if (!n)
        return AITK_OK;
    aitk_status st = aitk_yaml_long(r->doc, n, out, r->err);
    if (!st && (*out < min || *out > max)) {
        aitk_yaml_errorf(r->err, r->doc, n, "%s must be from %ld to %ld, found %ld", key, min,
                         max, *out);
        return AITK_E_RANGE;
    }
    return st;
}

/* Bits per weight of an ai-toolkit qtype, its scales included: 8 for the
 * 8-bit types (optimum-quanto's qfloat8 and qint8, torchao's int8 and
 * float8), 4 for quanto's qint4 and bitsandbytes' nf4 (cost.yaml's NF4
 * figure), and for uint2..uint7 (toolkit/util/uintx_quant.py, ai-toolkit
 * 27a03a9: torchao 0.10.0's UIntX layout, asymmetric groups of 64 weights
 * along in_features, each with a scale in the weight's dtype, bf16, and a
 * uint8 zero point) the packed bits plus 24 bits a group: k + 0.375. uint8
 * is 0: that backend refuses 8 bits in can_quantize, as torchao 0.10.0 failed
 * before touching the layer, so a uint8 job trains an unquantized base.
 * nvfp4 (toolkit/util/nvfp4_quant.py) stores a 4-bit code a weight and an
 * e4m3 scale for each 16 (quantize_nvfp4: 4.5 bits) and dequantizes before
 * each GEMM, full-precision activations, as uint does. -1: not a type the
 * memory model knows, including the rotation and codebook backends
 * (convrot*, orbit*), which quantize activations or rotate them per layer.
 * (A plain strstr(qtype, "4") took qfloat8_e4m3fn, an 8-bit type, for
 * 4-bit.) */
static double qtype_bits(const char *qtype, bool *packed)
{
    static const char *const families[] = {"qfloat", "qint", "uint", "int", "float", "fp", "nf",
                                           NULL};
    *packed = strcmp(qtype, "nvfp4") == 0;
    if (*packed)
        return 4.5;
    for (const char *const *f = families; *f; f++) {
        size_t n = strlen(*f);
        if (strncmp(qtype, *f, n) != 0)
            continue;
        const char *d = qtype + n;
        int bits = 0;
        while (*d >= '0' && *d <= '9' && bits < 100)
            bits = bits * 10 + (*d++ - '0');
        if (*d != '\0' && *d != '_' && *d != '|')
            return -1;
        if (strcmp(*f, "uint") == 0 && bits >= 2 && bits <= 8) {
            *packed = bits < 8;
            return bits < 8 ? bits + 24.0 / 64.0 : 0;
        }
        return bits == 8 || bits == 4 ? bits : -1;
    }
    return -1;
}

static aitk_status opt_bool(reader *r, const aitk_yaml_node *map, const char *key, bool *out)
{
    const aitk_yaml_node *n = aitk_yaml_get(map, key);
    return n ? aitk_yaml_bool(r->doc, n, out, r->err) : AITK_OK;
}

static aitk_status opt_string(reader *r, const aitk_yaml_node *map, const char *key,
                              const char **out)
{
    const aitk_yaml_node *n = aitk_yaml_get(map, key);
    return n ? aitk_yaml_string(r->doc, n, out, r->err) : AITK_OK;
}

static aitk_status expect_map(reader *r, const aitk_yaml_node *n, const char *what)
{
    return n ? aitk_yaml_expect(r->doc, n, AITK_YAML_MAP, what, r->err) : AITK_OK;
}

static const aitk_yaml_node *key_of(const aitk_yaml_node *map, const char *key)
{
    for (size_t i = 0; map && map->kind == AITK_YAML_MAP && i < map->count; i++)
        if (strcmp(map->pairs[i].key->text, key) == 0)
            return map->pairs[i].key;
    return map;
}

/* One of network_kwargs' layer lists: strings, into a NULL-terminated array. */
static aitk_status read_filter(reader *r, const aitk_yaml_node *kw, const char *key,
                               const char **out)
{
    const aitk_yaml_node *v = aitk_yaml_get(kw, key);
    if (!v)
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(r->doc, v, AITK_YAML_SEQ, "a list of layer names", r->err);
    if (!st && v->count > AITK_CONFIG_MAX_FILTERS) {
        aitk_yaml_errorf(r->err, r->doc, v, "%s has more than %d entries", key,
                         AITK_CONFIG_MAX_FILTERS);
        return AITK_E_RANGE;
    }
    for (size_t i = 0; !st && i < v->count; i++)
        st = aitk_yaml_string(r->doc, v->items[i], &out[i], r->err);
    return st;
}

/* network_kwargs: only_if_contains / ignore_if_contains pick the layers the
 * LoRA adapts by module name (toolkit/lora_special.py LoRASpecialNetwork.
 * create_modules); the cost model counts the layers they pick where the
 * model's description names its modules (models/flux1-dev.yaml). */
static aitk_status read_network_kwargs(reader *r, const aitk_yaml_node *kw)
{
    aitk_status st = read_filter(r, kw, "only_if_contains", r->cfg->lora_only);
    if (!st)
        st = read_filter(r, kw, "ignore_if_contains", r->cfg->lora_ignore);
    for (size_t i = 0; kw && kw->kind == AITK_YAML_MAP && i < kw->count; i++) {
        const char *k = kw->pairs[i].key->text;
        if (strcmp(k, "only_if_contains") != 0 && strcmp(k, "ignore_if_contains") != 0)
            aitk_config_note_cost(r, kw->pairs[i].key, "network.network_kwargs",
                                  "options of the LoRA network other than its layer lists "
                                  "are not modelled");
    }
    return st;
}

static aitk_status read_network(reader *r, const aitk_yaml_node *net)
{
    static const char *const used[] = {"type", "linear", "linear_alpha", "rank", "alpha",
                                       "network_kwargs", NULL};
    aitk_status st = expect_map(r, net, "the network section (a map)");
    if (st || !net)
        return st;
    /* NetworkConfig.__init__: rank, when given, wins over linear; alpha is
     * linear_alpha's default. */
    st = opt_long(r, net, aitk_yaml_get(net, "rank") ? "rank" : "linear", 1, CONFIG_MAX_RANK,
                  &r->cfg->rank);
    const aitk_yaml_node *a = aitk_yaml_get(net, "linear_alpha");
    if (!a)
        a = aitk_yaml_get(net, "alpha");
    if (!st && a)
        st = aitk_yaml_double(r->doc, a, &r->cfg->alpha, r->err);
    const aitk_yaml_node *kw = aitk_yaml_get(net, "network_kwargs");
    if (!st)
        st = expect_map(r, kw, "network_kwargs (a map)");
    if (!st)
        st = read_network_kwargs(r, kw);
    aitk_config_note_keys(r, net, "network", "network.", used);
    return st;
}

static aitk_status read_dtype(reader *r, const aitk_yaml_node *t)
{
    aitk_train_config *c = r->cfg;
    const aitk_yaml_node *d = aitk_yaml_get(t, "dtype");
    if (!d)
        return AITK_OK;
    aitk_status st = aitk_yaml_string(r->doc, d, &c->dtype, r->err);
    static const char *const half[] = {"bf16", "bfloat16", "fp16", "float16", "half", NULL};
    static const char *const fp16[] = {"fp16", "float16", "half", NULL};
    static const char *const full[] = {"fp32", "float32", "float", "single", NULL};
    if (!st && in_list(c->dtype, half)) {
        c->lora_bytes = 2;
        c->fp16 = in_list(c->dtype, fp16);
    } else if (!st && in_list(c->dtype, full)) {
        c->lora_bytes = 4;
    } else if (!st) {
        aitk_yaml_errorf(r->err, r->doc, d, "unknown dtype '%s' (bf16, fp16 or fp32)", c->dtype);
        return AITK_E_PARSE;
    }
    return st;
}

/* Accumulation, as the loop in jobs/process/BaseSDTrainProcess.py run()
 * does it: gradient_accumulation is the number of micro-batches gathered
 * in one step (for b in range(gradient_accumulation)); with
 * gradient_accumulation_steps each step is one micro-batch and the
 * optimizer steps every N of them (-1: once an epoch). */
static aitk_status read_accumulation(reader *r, const aitk_yaml_node *t)
{
    aitk_train_config *c = r->cfg;
    const aitk_yaml_node *a1 = aitk_yaml_get(t, "gradient_accumulation_steps");
    const aitk_yaml_node *a2 = aitk_yaml_get(t, "gradient_accumulation");
    long a2v = 1;
    aitk_status st = opt_long(r, t, "gradient_accumulation", 1, CONFIG_MAX_ACCUMULATION, &a2v);
    if (!st && a1)
        st = opt_long(r, t, "gradient_accumulation_steps", -1, CONFIG_MAX_ACCUMULATION,
                      &c->optimizer_every);
    if (!st && c->optimizer_every == 0) {
        aitk_yaml_errorf(r->err, r->doc, a1, "gradient_accumulation_steps must be -1 (an epoch) "
                                             "or from 1 to %d, found 0", CONFIG_MAX_ACCUMULATION);
        return AITK_E_RANGE;
    }
    /* TrainConfig.__init__ raises on both; so do we, with both places. */
    if (!st && a2v > 1 && a1 && c->optimizer_every != 1) {
        aitk_yaml_errorf(r->err, r->doc, a2,
                         "gradient_accumulation and gradient_accumulation_steps are mutually "
                         "exclusive (the other is at line %d:%d); ai-toolkit refuses such a "
                         "config: keep one",
                         a1->line, a1->col);
        return AITK_E_INVAL;
    }
    c->accumulation = a2v;
    return st;
}

/* ema_config.use_ema keeps a moving average of the trained weights (toolkit/
 * ema.py ExponentialMovingAverage): one more copy of the LoRA, counted.
 * ema_config: null is no EMA (TrainConfig.__init__). */
static aitk_status read_ema(reader *r, const aitk_yaml_node *t)
{
    const aitk_yaml_node *e = aitk_yaml_get(t, "ema_config");
    if (aitk_yaml_is_null(e))
        return AITK_OK;
    aitk_status st = expect_map(r, e, "ema_config (a map)");
    if (!st && e)
        st = opt_bool(r, e, "use_ema", &r->cfg->ema);
    return st;
}

/* The validation items setup_validation keeps: those with an image_path
 * ("Skipping validation item with no image"; the web UI's Validation card
 * starts with one such empty item). */
static aitk_status count_val_loss_items(reader *r, const aitk_yaml_node *items, long *out)
{
    *out = 0;
    if (!items || aitk_yaml_is_null(items))
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(r->doc, items, AITK_YAML_SEQ,
                                      "validation_items (a list)", r->err);
    for (size_t i = 0; !st && i < items->count; i++) {
        const char *path = "";
        st = expect_map(r, items->items[i], "a validation item (a map)");
        if (!st)
            st = opt_string(r, items->items[i], "image_path", &path);
        *out += !st && path && *path;
    }
    return st;
}

/* train.validation_config (ValidationConfig; BaseSDTrainProcess.validate):
 * at the first step and every validate_every_n_steps (10; 0: the first
 * only), each item is predicted, no grad, as one batch of its
 * validation_sigmas (4 by default) at about `resolution` px (512). */
static aitk_status read_val_loss(reader *r, const aitk_yaml_node *t)
{
    const aitk_yaml_node *v = aitk_yaml_get(t, "validation_config");
    if (!v || aitk_yaml_is_null(v))
        return AITK_OK;
    aitk_train_config *c = r->cfg;
    c->val_loss_every = 10;
    c->val_loss_resolution = 512;
    c->val_loss_sigmas = 4;
    aitk_status st = expect_map(r, v, "validation_config (a map)");
    if (!st)
        st = opt_long(r, v, "validate_every_n_steps", 0, CONFIG_MAX_STEPS, &c->val_loss_every);
    if (!st)
        st = opt_long(r, v, "resolution", CONFIG_MIN_RESOLUTION, CONFIG_MAX_RESOLUTION,
                      &c->val_loss_resolution);
    const aitk_yaml_node *sigmas = aitk_yaml_get(v, "validation_sigmas");
    if (!st && sigmas) {
        st = aitk_yaml_expect(r->doc, sigmas, AITK_YAML_SEQ, "validation_sigmas (a list)",
                              r->err);
        c->val_loss_sigmas = st ? 0 : (long)sigmas->count;
    }
    if (!st)
        st = count_val_loss_items(r, aitk_yaml_get(v, "validation_items"), &c->val_loss_items);
    if (c->val_loss_sigmas == 0)
        c->val_loss_items = 0;
    return st;
}

static aitk_status read_train(reader *r, const aitk_yaml_node *t, bool *no_sampling)
{
    static const char *const used[] = {"batch_size", "steps", "gradient_accumulation_steps",
                                       "gradient_accumulation", "gradient_checkpointing",
                                       "optimizer", "dtype", "cache_text_embeddings",
                                       "unload_text_encoder", "diff_output_preservation",
                                       "disable_sampling", "ema_config", "validation_config",
                                       NULL};
    aitk_status st = expect_map(r, t, "the train section (a map)");
    if (st || !t)
        return st;
    aitk_train_config *c = r->cfg;
    st = read_accumulation(r, t);
    if (!st)
        st = opt_long(r, t, "batch_size", 1, CONFIG_MAX_BATCH, &c->batch);
    if (!st)
        st = opt_long(r, t, "steps", 1, CONFIG_MAX_STEPS, &c->steps);
    if (!st)
        st = opt_bool(r, t, "gradient_checkpointing", &c->checkpointing);
    if (!st)
        st = opt_string(r, t, "optimizer", &c->optimizer);
    if (!st)
        c->optimizer = aitk_config_resolve_optimizer(r, c->optimizer);
    c->optimizer_at = aitk_yaml_get(t, "optimizer");
    if (!st)
        st = opt_bool(r, t, "cache_text_embeddings", &c->cache_text);
    bool unload = false;
    if (!st)
        st = opt_bool(r, t, "unload_text_encoder", &unload);
    if (unload)
        c->cache_text = true; /* embeddings are cached, then the encoder leaves the GPU */
    if (!st)
        st = opt_bool(r, t, "diff_output_preservation", &c->preservation);
    if (!st)
        st = opt_bool(r, t, "disable_sampling", no_sampling);
    if (!st)
        st = read_dtype(r, t);
    if (!st)
        st = read_ema(r, t);
    if (!st)
        st = read_val_loss(r, t);
    aitk_config_note_keys(r, t, "train", "train.", used);
    return st;
}

/* The storage of one quantized part: qtype's bits, the part after '|' (an
 * accuracy recovery adapter, ModelConfig.__init__) said as not counted. */
static aitk_status read_qtype(reader *r, const aitk_yaml_node *m, const char *key,
                              const char **qtype, double *bits, bool *packed)
{
    aitk_status st = opt_string(r, m, key, qtype);
    const aitk_yaml_node *n = aitk_yaml_get(m, key);
    *bits = st ? -1 : qtype_bits(*qtype, packed);
    if (!st && *bits < 0) {
        aitk_yaml_errorf(r->err, r->doc, n,
                         "%s '%s' is not one the memory model knows (8-bit: qfloat8, "
                         "qfloat8_e4m3fn, qint8, int8, float8; 4-bit: qint4, nf4; 2- to 7-bit: "
                         "uint2 to uint7, nvfp4; the rotation and codebook types, convrot and "
                         "orbit, are not counted)", key, *qtype);
        return AITK_E_PARSE;
    }
    if (!st && n && strchr(*qtype, '|'))
        aitk_config_note_cost(r, key_of(m, key), strcmp(key, "qtype") ? "model.qtype_te"
                                                                      : "model.qtype",
                              "an accuracy recovery adapter after '|' is loaded and run with "
                              "the quantized weights; it is not counted");
    return st;
}

static aitk_status read_model(reader *r, const aitk_yaml_node *m)
{
    /* qtype_te is read only by models whose text encoder takes it; for the
     * others it falls to the key table's no_effect list. */
    const bool te_own = strcmp(r->te_qtype_key, "qtype_te") == 0;
    const char *const used[] = {"name_or_path", "is_flux", "arch", "quantize", "qtype",
                                "quantize_te", "is_lumina2", "is_v3", "is_xl", "is_v2",
                                "is_ssd", "is_vega", "is_pixart", "is_pixart_sigma",
                                "is_auraflow", "use_flux_cfg", te_own ? "qtype_te" : NULL,
                                NULL};
    aitk_train_config *c = r->cfg;
    bool te_set = aitk_yaml_get(m, "quantize_te") != NULL;
    aitk_status st = opt_bool(r, m, "quantize", &c->quantize);
    /* ai-toolkit reads qtype only to quantize. */
    if (!st && c->quantize)
        st = read_qtype(r, m, "qtype", &c->qtype, &c->qbits, &c->packed);
    c->quantize_te = c->quantize; /* ai-toolkit: quantize_te defaults to quantize */
    if (!st && te_set)
        st = opt_bool(r, m, "quantize_te", &c->quantize_te);
    /* The text encoders take the key their model's loader reads: FLUX.1's
     * and Chroma's the transformer's qtype, OmniGen2's qtype_te. */
    if (!st && c->quantize_te && !te_own && c->quantize) {
        c->qtype_te = c->qtype;
        c->te_qbits = c->qbits;
        c->te_packed = c->packed;
    } else if (!st && c->quantize_te) {
        st = read_qtype(r, m, r->te_qtype_key, &c->qtype_te, &c->te_qbits, &c->te_packed);
    }
    if (!st && c->qtype && c->qtype_te) {
        snprintf(c->qtype_name, sizeof c->qtype_name, "%.*s", (int)strcspn(c->qtype, "|"),
                 c->qtype);
        snprintf(c->qtype_te_name, sizeof c->qtype_te_name, "%.*s",
                 (int)strcspn(c->qtype_te, "|"), c->qtype_te);
    }
    if (!st)
        st = opt_bool(r, m, "low_vram", &c->low_vram);
    /* use_flux_cfg samples FLUX.1 with FluxWithCFGPipeline: a second,
     * unconditional pass per denoising step when guidance_scale > 1
     * (toolkit/pipelines.py; stable_diffusion_model.py generate_images). */
    bool flux_cfg = false;
    if (!st)
        st = opt_bool(r, m, "use_flux_cfg", &flux_cfg);
    r->sample_cfg = r->sample_cfg || flux_cfg;
    if (!st)
        aitk_config_note_keys(r, m, "model", "model.", used);
    return st;
}

/* Adds bucket v once; `at` is where an error points. */
static aitk_status add_resolution_value(reader *r, const aitk_yaml_node *at, long v)
{
    aitk_train_config *c = r->cfg;
    for (size_t i = 0; i < c->n_resolutions; i++)
        if (c->resolutions[i] == v)
            return AITK_OK;
    if (c->n_resolutions == sizeof c->resolutions / sizeof *c->resolutions) {
        aitk_yaml_errorf(r->err, r->doc, at, "more than %zu distinct resolutions",
                         sizeof c->resolutions / sizeof *c->resolutions);
        return AITK_E_RANGE;
    }
    c->resolutions[c->n_resolutions++] = v;
    return AITK_OK;
}

static aitk_status add_resolution(reader *r, const aitk_yaml_node *n)
{
    long v = 0;
    aitk_status st = aitk_yaml_long(r->doc, n, &v, r->err);
    if (!st && (v < CONFIG_MIN_RESOLUTION || v > CONFIG_MAX_RESOLUTION)) {
        aitk_yaml_errorf(r->err, r->doc, n, "resolution %ld is outside %d..%d", v,
                         CONFIG_MIN_RESOLUTION, CONFIG_MAX_RESOLUTION);
        return AITK_E_RANGE;
    }
    return st ? st : add_resolution_value(r, n, v);
}

/* A non-empty list under `key` (DatasetConfig's augments, augmentations). */
static bool has_items(const aitk_yaml_node *d, const char *key)
{
    const aitk_yaml_node *n = aitk_yaml_get(d, key);
    return n && n->kind == AITK_YAML_SEQ && n->count > 0;
}

/* datasets[].cache_text_embeddings: one dataset caching makes ai-toolkit
 * unload the text encoders after encoding (BaseSDTrainProcess.__init__,
 * is_caching_text_embeddings), and it refuses a job where another dataset
 * does not cache (toolkit/config_modules.py validate_configs: "All datasets
 * must have cache_text_embeddings set to True ..."): so do we, there. */
static aitk_status read_dataset_text_cache(reader *r, const aitk_yaml_node *ds)
{
    const aitk_yaml_node *missing = NULL;
    bool any = false;
    for (size_t i = 0; i < ds->count; i++) {
        bool on = false;
        aitk_status st = opt_bool(r, ds->items[i], "cache_text_embeddings", &on);
        if (st)
            return st;
        any = any || on;
        if (!on && !missing)
            missing = ds->items[i];
    }
    if (any && missing) {
        aitk_yaml_errorf(r->err, r->doc, missing,
                         "this dataset does not set cache_text_embeddings while another does; "
                         "ai-toolkit refuses such a job (all datasets must cache text embeddings)");
        return AITK_E_INVAL;
    }
    if (any)
        r->cfg->cache_text = true;
    return AITK_OK;
}

static aitk_status read_datasets(reader *r, const aitk_yaml_node *ds)
{
    static const char *const used[] = {"resolution", "cache_latents_to_disk", "cache_latents",
                                       "cache_text_embeddings", "augments", "augmentations",
                                       NULL};
    if (!ds)
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(r->doc, ds, AITK_YAML_SEQ, "datasets (a list)", r->err);
    for (size_t i = 0; !st && i < ds->count; i++) {
        const aitk_yaml_node *d = ds->items[i];
        st = aitk_yaml_expect(r->doc, d, AITK_YAML_MAP, "a dataset (a map)", r->err);
        bool cached = false;
        if (!st)
            st = opt_bool(r, d, "cache_latents_to_disk", &cached);
        if (!st && !cached)
            st = opt_bool(r, d, "cache_latents", &cached);
        /* DatasetConfig.__init__ turns latent caching off where augments or
         * augmentations are set: they change the image every time. */
        if (has_items(d, "augments") || has_items(d, "augmentations"))
            cached = false;
        /* The VAE can leave the GPU only if every dataset is cached. */
        r->cfg->cache_latents = (i == 0 ? cached : r->cfg->cache_latents && cached);
        /* ai-toolkit makes one dataset per resolution listed
         * (config_modules.py preprocess_dataset_raw_config, 512 where none
         * is given): `resolution: []` makes none, so it adds no bucket. */
        const aitk_yaml_node *res = aitk_yaml_get(d, "resolution");
        if (!st && res && res->kind == AITK_YAML_SEQ) {
            for (size_t k = 0; !st && k < res->count; k++)
                st = add_resolution(r, res->items[k]);
        } else if (!st && res) {
            st = add_resolution(r, res);
        } else if (!st) {
            st = add_resolution_value(r, d, 512);
        }
        aitk_config_note_keys(r, d, "datasets", "datasets[].", used);
    }
    if (!st && ds->count > 0 && r->cfg->n_resolutions == 0) {
        aitk_yaml_errorf(r->err, r->doc, ds,
                         "no dataset has a resolution: ai-toolkit makes one dataset per "
                         "resolution listed (preprocess_dataset_raw_config), so `resolution: "
                         "[]` leaves this job no images to train on");
        return AITK_E_INVAL;
    }
    if (!st)
        st = read_dataset_text_cache(r, ds);
    return st;
}

/* Counts one image of width x height and `steps` in its group; false when
 * every group is taken by other sizes, and it was counted with the last. */
static bool add_sample_image(aitk_train_config *c, long width, long height, long steps)
{
    const long res = aitk_sample_resolution(width, height);
    size_t i = 0;
    while (i < c->n_sample_groups &&
           (c->sample_groups[i].resolution != res || c->sample_groups[i].steps != steps))
        i++;
    const bool kept = i < AITK_MAX_SAMPLE_GROUPS;
    if (!kept)
        i--;
    else if (i == c->n_sample_groups)
        c->sample_groups[c->n_sample_groups++] = (aitk_sample_group){.steps = steps,
                                                                     .resolution = res};
    c->sample_groups[i].images++;
    return kept;
}

/* The images of one sampling round by size and steps: `samples` (what the
 * web UI writes), each taking the block's width, height and sample_steps
 * unless it gives its own (SampleItem.__init__), else the older `prompts`
 * list at the block's. */
static aitk_status read_sample_images(reader *r, const aitk_yaml_node *smp)
{
    aitk_train_config *c = r->cfg;
    const aitk_yaml_node *list = aitk_yaml_get(smp, "samples");
    const bool items = list != NULL;
    if (!list)
        list = aitk_yaml_get(smp, "prompts");
    if (!list || list->kind != AITK_YAML_SEQ)
        return AITK_OK;
    bool all_kept = true;
    for (size_t i = 0; i < list->count; i++) {
        const aitk_yaml_node *item = items ? list->items[i] : NULL;
        long width = c->sample_width, height = c->sample_height, steps = c->sample_steps;
        aitk_status st = items ? expect_map(r, item, "a sample (a map)") : AITK_OK;
        if (!st)
            st = opt_long(r, item, "width", CONFIG_MIN_RESOLUTION, CONFIG_MAX_RESOLUTION, &width);
        if (!st)
            st = opt_long(r, item, "height", CONFIG_MIN_RESOLUTION, CONFIG_MAX_RESOLUTION,
                          &height);
        if (!st)
            st = opt_long(r, item, "sample_steps", 1, 10000, &steps);
        if (st)
            return st;
        all_kept = add_sample_image(c, width, height, steps) && all_kept;
    }
    c->sample_prompts = (long)list->count;
    if (!all_kept)
        aitk_config_note_cost(r, key_of(smp, "samples"), "sample.samples",
                              "more sizes and step counts than the prediction keeps apart: the "
                              "last ones are counted at the last kept one's");
    return AITK_OK;
}

/* The sample block, with SampleConfig's defaults (toolkit/config_modules.py:
 * sample_every 100, sample_steps 20, 512 x 512, guidance_scale 7). A round
 * runs when step % sample_every == 0 (BaseSDTrainProcess.run), unless
 * train.disable_sampling. */
static aitk_status read_sample(reader *r, const aitk_yaml_node *smp, bool disabled)
{
    static const char *const used[] = {"sample_every", "sample_steps", "width", "height",
                                       "prompts", "samples", "guidance_scale", NULL};
    aitk_train_config *c = r->cfg;
    aitk_status st = expect_map(r, smp, "the sample section (a map)");
    if (st || !smp)
        return st;
    c->sample_every = 100;
    c->sample_steps = 20;
    c->sample_width = c->sample_height = 512;
    double guidance = 7;
    st = opt_long(r, smp, "sample_every", 0, CONFIG_MAX_STEPS, &c->sample_every);
    if (!st)
        st = opt_long(r, smp, "sample_steps", 1, 10000, &c->sample_steps);
    if (!st)
        st = opt_long(r, smp, "width", CONFIG_MIN_RESOLUTION, CONFIG_MAX_RESOLUTION,
                      &c->sample_width);
    if (!st)
        st = opt_long(r, smp, "height", CONFIG_MIN_RESOLUTION, CONFIG_MAX_RESOLUTION,
                      &c->sample_height);
    const aitk_yaml_node *g = aitk_yaml_get(smp, "guidance_scale");
    if (!st && g)
        st = aitk_yaml_double(r->doc, g, &guidance, r->err);
    if (!st)
        st = read_sample_images(r, smp);
    c->sample_passes = r->sample_cfg && guidance > 1 ? 2 : 1;
    if (disabled)
        c->sample_every = 0;
    aitk_config_note_keys(r, smp, "sample", "sample.", used);
    return st;
}

/* train.dtype fp32, written or taken from TrainConfig's default when the key
 * is absent, is what ai-toolkit computes in: the model is made in it
 * (BaseSDTrainProcess.__init__: model_config['dtype'] = train_config.dtype)
 * and the latents cast to it. The cost model counts bf16 activations and
 * the bf16 matmul rate, so the person is told which way it is off. */
static void note_fp32_compute(reader *r, const aitk_yaml_node *p)
{
    if (r->cfg->lora_bytes != 4)
        return;
    const aitk_yaml_node *train = aitk_yaml_get(p, "train");
    const aitk_yaml_node *at = aitk_yaml_get(train, "dtype");
    aitk_config_note_cost(r, at ? at : train ? train : p, "train.dtype",
                          at ? "fp32: the model computes and keeps its activations in fp32, "
                               "counted here as bf16 (slower steps, about twice the "
                               "activation memory)"
                             : "not set, so fp32 (TrainConfig's default): the model computes "
                               "and keeps its activations in fp32, counted here as bf16 "
                               "(slower steps, about twice the activation memory); ai-toolkit's "
                               "examples and web UI set bf16");
}

static aitk_status read_process(reader *r, const aitk_yaml_node *p)
{
    static const char *const used[] = {"network", "train", "model", "datasets", "sample", NULL};
    bool no_sampling = false;
    aitk_status st = aitk_config_identify(r, r->doc->root, p);
    if (!st)
        st = read_model(r, aitk_yaml_get(p, "model"));
    if (!st)
        st = read_network(r, aitk_yaml_get(p, "network"));
    if (!st)
        st = read_train(r, aitk_yaml_get(p, "train"), &no_sampling);
    if (!st)
        note_fp32_compute(r, p);
    if (!st)
        st = read_datasets(r, aitk_yaml_get(p, "datasets"));
    if (!st)
        st = read_sample(r, aitk_yaml_get(p, "sample"), no_sampling);
    if (!st)
        aitk_config_note_keys(r, p, "process", "config.process[0].", used);
    return st;
}

static aitk_status read_root(reader *r)
{
    static const char *const root_used[] = {"job", "config", NULL};
    static const char *const cfg_used[] = {"process", NULL};
    const aitk_yaml_doc *doc = r->doc;
    aitk_status st = aitk_yaml_expect(doc, doc->root, AITK_YAML_MAP,
                                      "an ai-toolkit config (a map with job and config)", r->err);
    const aitk_yaml_node *config = st ? NULL : aitk_yaml_get(doc->root, "config");
    if (!st && !config) {
        aitk_yaml_errorf(r->err, doc, doc->root, "missing 'config' (expected job: extension, "
                                                 "config: {name, process: [...]})");
        return AITK_E_PARSE;
    }
    if (!st)
        st = aitk_yaml_expect(doc, config, AITK_YAML_MAP, "config (a map)", r->err);
    const aitk_yaml_node *procs = st ? NULL : aitk_yaml_get(config, "process");
    if (!st && !procs) {
        aitk_yaml_errorf(r->err, doc, config, "missing 'process' (a list of training processes)");
        return AITK_E_PARSE;
    }
    if (!st)
        st = aitk_yaml_expect(doc, procs, AITK_YAML_SEQ, "process (a list)", r->err);
    if (!st && procs->count == 0) {
        aitk_yaml_errorf(r->err, doc, procs, "process is empty: nothing to train");
        return AITK_E_PARSE;
    }
    const aitk_yaml_node *p = st ? NULL : procs->items[0];
    if (!st)
        st = aitk_yaml_expect(doc, p, AITK_YAML_MAP, "a training process (a map)", r->err);
    if (!st)
        st = read_process(r, p);
    if (st)
        return st;
    aitk_config_note_keys(r, doc->root, "root", "", root_used);
    aitk_config_note_keys(r, config, "config", "config.", cfg_used);
    for (size_t i = 1; i < procs->count; i++)
        aitk_config_note_cost(r, procs->items[i], "config.process[1...]",
                              "only the first process is predicted");
    if (r->cfg->n_resolutions == 0)
        r->cfg->resolutions[r->cfg->n_resolutions++] = 512; /* ai-toolkit's default */
    return aitk_str_status(&r->cfg->ignored) || aitk_str_status(&r->cfg->unknown) ||
                   aitk_str_status(&r->cfg->not_modelled) || aitk_str_status(&r->cfg->no_effect)
               ? AITK_E_NOMEM
               : AITK_OK;
}

/* libyaml reports an unclosed quote where it gives up, often a line later
 * (the upstream OmniGen2 example). Point at the line that opened it too. A
 * quote left open at the end of a line is legal YAML (a folded scalar) but
 * never meant in these configs, so this is worded as a likely cause. */
static void hint_unclosed_quote(const char *name, const char *text, size_t len, aitk_str *err)
{
    int line = 1;
    for (size_t i = 0; i < len;) {
        size_t end = i;
        while (end < len && text[end] != '\n')
            end++;
        char open = 0;
        size_t at = 0;
        for (size_t k = i; k < end; k++) {
            char ch = text[k];
            if (!open && ch == '#' && (k == i || text[k - 1] == ' '))
                break; /* a comment */
            if (!open && (ch == '"' || ch == '\'') &&
                (k == i || strchr(" :[{,-", text[k - 1]))) {
                open = ch;
                at = k;
            } else if (open == '"' && ch == '\\') {
                k++;
            } else if (open && ch == open) {
                open = 0;
            }
        }
        if (open) {
            aitk_str_appendf(err, "; likely cause: the %s-quoted string opened at %s:%d:%zu "
                                  "is not closed on its line",
                             open == '"' ? "double" : "single", name, line, at - i + 1);
            return;
        }
        i = end + 1;
        line++;
    }
}

static aitk_status parse_config(const char *name, const char *text, size_t len,
                                aitk_train_config *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    /* ai-toolkit code defaults (ostris/ai-toolkit toolkit/config_modules.py). */
    out->rank = 4;
    out->alpha = 1.0;
    out->batch = 1;
    out->accumulation = 1;
    out->steps = 1000;
    out->checkpointing = true;
    out->dtype = "fp32";
    out->lora_bytes = 4;
    out->optimizer = "adamw";
    out->qtype = out->qtype_te = "qfloat8";
    out->qbits = out->te_qbits = 8;
    out->optimizer_every = 1;
    out->job = "LoRA";
    aitk_status st = aitk_yaml_parse(name, text, len, &out->doc, err);
    if (st == AITK_E_PARSE)
        hint_unclosed_quote(name, text, len, err);
    if (st)
        return st;
    reader r = {.cfg = out, .doc = out->doc, .err = err};
    st = aitk_config_load_tables(&r);
    out->ids = r.ids;
    out->keys = r.keys;
    if (!st)
        st = read_root(&r);
    if (st)
        aitk_config_free(out);
    return st;
}

aitk_status aitk_config_read(const char *path, aitk_train_config *out, aitk_str *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    aitk_status st = aitk_file_read(path, MAX_CONFIG_BYTES, &text, &len, err);
    if (st)
        return st;
    st = aitk_config_parse(path, text, len, out, err);
    aitk_free(text);
    return st;
}

void aitk_config_free(aitk_train_config *cfg)
{
    if (!cfg)
        return;
    aitk_yaml_free(cfg->doc);
    aitk_yaml_free(cfg->ids);
    aitk_yaml_free(cfg->keys);
    aitk_str_free(&cfg->ignored);
    aitk_str_free(&cfg->unknown);
    aitk_str_free(&cfg->not_modelled);
    aitk_str_free(&cfg->no_effect);
    memset(cfg, 0, sizeof *cfg);
}

aitk_status aitk_config_parse(const char *name, const char *text, size_t len,
                              aitk_train_config *out, aitk_str *err)
{
    /* err may be NULL: messages then go to a scratch string. */
    aitk_str scratch = AITK_STR_INIT;
    aitk_status st = parse_config(name, text, len, out, err ? err : &scratch);
    if (st && err && aitk_config_printable(err))
        st = AITK_E_NOMEM;
    aitk_str_free(&scratch);
    return st;
}

/* A qtype of 0 bits (uint8) leaves the weights as an unquantized base is;
 * 8 bits are the fp8 path, fewer the packed path of NF4 (dequantized before
 * each GEMM). */
static aitk_weight_dtype storage(const aitk_train_config *cfg, bool quantized, double bits)
{
    if (quantized && bits > 0)
        return bits >= 8 ? AITK_WEIGHT_FP8 : AITK_WEIGHT_NF4;
    return cfg->lora_bytes == 4 ? AITK_WEIGHT_FP32 : AITK_WEIGHT_BF16;
}

aitk_weight_dtype aitk_config_base_storage(const aitk_train_config *cfg)
{
    return storage(cfg, cfg->quantize, cfg->qbits);
}

aitk_weight_dtype aitk_config_te_storage(const aitk_train_config *cfg)
{
    return storage(cfg, cfg->quantize_te, cfg->te_qbits);
}

double aitk_config_base_packed_bits(const aitk_train_config *cfg)
{
    return cfg->quantize && cfg->packed ? cfg->qbits : 0;
}

double aitk_config_te_packed_bits(const aitk_train_config *cfg)
{
    return cfg->quantize_te && cfg->te_packed ? cfg->te_qbits : 0;
}
