/* ai-toolkit config reader: walks job/config/process[0] and picks out the keys
 * that set compute and memory (FACTS.md section 4). Every other key at the
 * levels read is either known to have no effect on cost (sampling, saving,
 * learning rate...) or listed as ignored, so a person sees what the
 * prediction did not take into account. */
#include "models/aitk_config.h"

#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/log.h"
#include "models/cost.h"

#define MAX_CONFIG_BYTES (4u << 20)

typedef struct reader {
    aitk_train_config *cfg;
    const aitk_yaml_doc *doc;
    aitk_str *err;
} reader;

static bool in_list(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

/* Lists keys of `map` that are in neither `used` nor `no_effect`. */
static void note_ignored(reader *r, const aitk_yaml_node *map, const char *where,
                         const char *const *used, const char *const *no_effect)
{
    for (size_t i = 0; map && map->kind == AITK_YAML_MAP && i < map->count; i++) {
        const aitk_yaml_node *k = map->pairs[i].key;
        if (in_list(k->text, used) || in_list(k->text, no_effect))
            continue;
        aitk_str_appendf(&r->cfg->ignored, "%s%s (%s:%d:%d)\n", where, k->text, r->doc->name,
                         k->line, k->col);
        r->cfg->n_ignored++;
    }
}

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

/* Bits per weight of an ai-toolkit qtype (optimum-quanto's qfloat8, qint8,
 * qint4; torchao's uint8/uint4; bitsandbytes' nf4): the digits after the
 * type family. 0 for anything else, including 2- and 3-bit types the memory
 * model has no bytes for. (A plain strstr(qtype, "4") took qfloat8_e4m3fn,
 * an 8-bit type, for 4-bit.) */
static int qtype_bits(const char *qtype)
{
    static const char *const families[] = {"qfloat", "qint", "uint", "int", "float", "fp", "nf",
                                           NULL};
    for (const char *const *f = families; *f; f++) {
        size_t n = strlen(*f);
        if (strncmp(qtype, *f, n) != 0)
            continue;
        const char *d = qtype + n;
        int bits = 0;
        while (*d >= '0' && *d <= '9' && bits < 100)
            bits = bits * 10 + (*d++ - '0');
        const bool tail_ok = *d == '\0' || *d == '_';
        return tail_ok && (bits == 8 || bits == 4) ? bits : 0;
    }
    return 0;
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

static aitk_status read_network(reader *r, const aitk_yaml_node *net)
{
    static const char *const used[] = {"type", "linear", "linear_alpha", NULL};
    static const char *const none[] = {NULL};
    aitk_status st = expect_map(r, net, "the network section (a map)");
    if (st || !net)
        return st;
    const char *type = "lora";
    st = opt_string(r, net, "type", &type);
    if (!st && strcmp(type, "lora") != 0) {
        aitk_yaml_errorf(r->err, r->doc, aitk_yaml_get(net, "type"),
                         "network type '%s' is not modelled (only lora)", type);
        return AITK_E_INVAL;
    }
    if (!st)
        st = opt_long(r, net, "linear", 1, CONFIG_MAX_RANK, &r->cfg->rank);
    const aitk_yaml_node *a = aitk_yaml_get(net, "linear_alpha");
    if (!st && a)
        st = aitk_yaml_double(r->doc, a, &r->cfg->alpha, r->err);
    note_ignored(r, net, "network.", used, none);
    return st;
}

static aitk_status read_train(reader *r, const aitk_yaml_node *t)
{
    static const char *const used[] = {"batch_size", "steps", "gradient_accumulation_steps",
                                       "gradient_accumulation", "gradient_checkpointing",
                                       "optimizer", "dtype", "cache_text_embeddings",
                                       "unload_text_encoder", NULL};
    static const char *const none[] = {"train_unet", "train_text_encoder", "noise_scheduler",
                                       "lr", "ema_config", "timestep_type", "content_or_style",
                                       "optimizer_params", "skip_first_sample",
                                       "disable_sampling", "linear_timesteps", "loss_type",
                                       "noise_offset", "max_grad_norm", "lr_scheduler",
                                       "seed", NULL};
    aitk_status st = expect_map(r, t, "the train section (a map)");
    if (st || !t)
        return st;
    aitk_train_config *c = r->cfg;
    const aitk_yaml_node *a1 = aitk_yaml_get(t, "gradient_accumulation_steps");
    const aitk_yaml_node *a2 = aitk_yaml_get(t, "gradient_accumulation");
    if (a1 && a2) {
        /* ai-toolkit's TrainConfig raises on this; so do we, with both places. */
        aitk_yaml_errorf(r->err, r->doc, a2,
                         "gradient_accumulation and gradient_accumulation_steps are mutually "
                         "exclusive (the other is at line %d:%d); ai-toolkit refuses such a "
                         "config: keep one",
                         a1->line, a1->col);
        return AITK_E_INVAL;
    }
    st = opt_long(r, t, "batch_size", 1, CONFIG_MAX_BATCH, &c->batch);
    if (!st)
        st = opt_long(r, t, a1 ? "gradient_accumulation_steps" : "gradient_accumulation", 1,
                      CONFIG_MAX_ACCUMULATION, &c->accumulation);
    if (!st)
        st = opt_long(r, t, "steps", 1, CONFIG_MAX_STEPS, &c->steps);
    if (!st)
        st = opt_bool(r, t, "gradient_checkpointing", &c->checkpointing);
    if (!st)
        st = opt_string(r, t, "optimizer", &c->optimizer);
    c->optimizer_at = aitk_yaml_get(t, "optimizer");
    if (!st)
        st = opt_bool(r, t, "cache_text_embeddings", &c->cache_text);
    bool unload = false;
    if (!st)
        st = opt_bool(r, t, "unload_text_encoder", &unload);
    if (unload)
        c->cache_text = true; /* embeddings are cached, then the encoder leaves the GPU */
    const aitk_yaml_node *d = aitk_yaml_get(t, "dtype");
    if (!st && d) {
        st = aitk_yaml_string(r->doc, d, &c->dtype, r->err);
        static const char *const half[] = {"bf16", "bfloat16", "fp16", "float16", "half", NULL};
        static const char *const full[] = {"fp32", "float32", "float", NULL};
        if (!st && in_list(c->dtype, half)) {
            c->lora_bytes = 2;
        } else if (!st && in_list(c->dtype, full)) {
            c->lora_bytes = 4;
        } else if (!st) {
            aitk_yaml_errorf(r->err, r->doc, d, "unknown dtype '%s' (bf16, fp16 or fp32)",
                             c->dtype);
            return AITK_E_PARSE;
        }
    }
    note_ignored(r, t, "train.", used, none);
    return st;
}

static aitk_status read_model(reader *r, const aitk_yaml_node *m)
{
    static const char *const used[] = {"name_or_path", "is_flux", "arch", "quantize", "qtype",
                                       "quantize_te", "low_vram", NULL};
    static const char *const none[] = {"inference_lora_path", "assistant_lora_path", NULL};
    aitk_train_config *c = r->cfg;
    aitk_status st = expect_map(r, m, "the model section (a map)");
    if (!st && !m) {
        aitk_str_appendf(r->err, "%s: no model section in config.process[0]: cannot tell which "
                                 "model this trains", r->doc->name);
        return AITK_E_INVAL;
    }
    bool is_flux = false, te_set = aitk_yaml_get(m, "quantize_te") != NULL;
    const char *arch = NULL;
    if (!st)
        st = opt_string(r, m, "name_or_path", &c->name_or_path);
    if (!st)
        st = opt_bool(r, m, "is_flux", &is_flux);
    if (!st)
        st = opt_string(r, m, "arch", &arch);
    if (!st)
        st = opt_bool(r, m, "quantize", &c->quantize);
    if (!st)
        st = opt_string(r, m, "qtype", &c->qtype);
    c->qbits = qtype_bits(c->qtype);
    if (!st && c->qbits == 0 && !c->quantize)
        c->qbits = 8; /* not quantizing: ai-toolkit never looks at qtype */
    if (!st && c->qbits == 0) {
        aitk_yaml_errorf(r->err, r->doc, aitk_yaml_get(m, "qtype"),
                         "qtype '%s' is not one the memory model knows (8-bit: qfloat8, "
                         "qfloat8_e4m3fn, qint8, uint8; 4-bit: qint4, uint4, nf4)", c->qtype);
        st = AITK_E_PARSE;
    }
    c->quantize_te = c->quantize; /* ai-toolkit: quantize_te defaults to quantize */
    if (!st && te_set)
        st = opt_bool(r, m, "quantize_te", &c->quantize_te);
    if (!st)
        st = opt_bool(r, m, "low_vram", &c->low_vram);
    if (st)
        return st;
    if (arch) {
        if (strcmp(arch, "chroma") == 0) {
            c->model_id = "chroma";
        } else if (strcmp(arch, "omnigen2") == 0) {
            c->model_id = "omnigen2";
        } else if (strcmp(arch, "flux") == 0) {
            c->model_id = "flux1-dev";
        } else {
            aitk_yaml_errorf(r->err, r->doc, aitk_yaml_get(m, "arch"),
                             "arch '%s' is not one of the modelled workloads (flux, chroma, "
                             "omnigen2)",
                             arch);
            return AITK_E_INVAL;
        }
    } else if (is_flux) {
        c->model_id = "flux1-dev";
    } else {
        aitk_yaml_errorf(r->err, r->doc, m,
                         "the model section sets neither is_flux: true nor arch: chroma|omnigen2; "
                         "ai-toolkit would load a Stable Diffusion model, which is not modelled");
        return AITK_E_INVAL;
    }
    note_ignored(r, m, "model.", used, none);
    return AITK_OK;
}

static aitk_status add_resolution(reader *r, const aitk_yaml_node *n)
{
    aitk_train_config *c = r->cfg;
    long v = 0;
    aitk_status st = aitk_yaml_long(r->doc, n, &v, r->err);
    if (!st && (v < CONFIG_MIN_RESOLUTION || v > CONFIG_MAX_RESOLUTION)) {
        aitk_yaml_errorf(r->err, r->doc, n, "resolution %ld is outside %d..%d", v,
                         CONFIG_MIN_RESOLUTION, CONFIG_MAX_RESOLUTION);
        return AITK_E_RANGE;
    }
    for (size_t i = 0; !st && i < c->n_resolutions; i++)
        if (c->resolutions[i] == v)
            return AITK_OK;
    if (!st && c->n_resolutions == sizeof c->resolutions / sizeof *c->resolutions) {
        aitk_yaml_errorf(r->err, r->doc, n, "more than %zu distinct resolutions",
                         sizeof c->resolutions / sizeof *c->resolutions);
        return AITK_E_RANGE;
    }
    if (!st)
        c->resolutions[c->n_resolutions++] = v;
    return st;
}

static aitk_status read_datasets(reader *r, const aitk_yaml_node *ds)
{
    static const char *const used[] = {"resolution", "cache_latents_to_disk", "cache_latents",
                                       NULL};
    static const char *const none[] = {"folder_path", "caption_ext", "caption_dropout_rate",
                                       "shuffle_tokens", "default_caption", "is_reg",
                                       "network_weight", "num_repeats", "flip_x", "flip_y", NULL};
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
        /* The VAE can leave the GPU only if every dataset is cached. */
        r->cfg->cache_latents = (i == 0 ? cached : r->cfg->cache_latents && cached);
        const aitk_yaml_node *res = aitk_yaml_get(d, "resolution");
        if (!st && res && res->kind == AITK_YAML_SEQ) {
            for (size_t k = 0; !st && k < res->count; k++)
                st = add_resolution(r, res->items[k]);
        } else if (!st && res) {
            st = add_resolution(r, res);
        }
        note_ignored(r, d, "datasets[].", used, none);
    }
    return st;
}

static aitk_status read_root(reader *r)
{
    static const char *const root_used[] = {"job", "config", NULL};
    static const char *const root_none[] = {"meta", NULL};
    static const char *const cfg_used[] = {"process", NULL};
    static const char *const cfg_none[] = {"name", NULL};
    static const char *const proc_used[] = {"network", "train", "model", "datasets", NULL};
    static const char *const proc_none[] = {"type", "training_folder", "device", "save",
                                            "sample", "trigger_word", "performance_log_every",
                                            "logging", "sqlite_db_path", NULL};
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
        st = read_network(r, aitk_yaml_get(p, "network"));
    if (!st)
        st = read_train(r, aitk_yaml_get(p, "train"));
    if (!st)
        st = read_datasets(r, aitk_yaml_get(p, "datasets"));
    if (!st)
        st = read_model(r, aitk_yaml_get(p, "model"));
    if (st)
        return st;
    note_ignored(r, doc->root, "", root_used, root_none);
    note_ignored(r, config, "config.", cfg_used, cfg_none);
    note_ignored(r, p, "config.process[0].", proc_used, proc_none);
    for (size_t i = 1; i < procs->count; i++) {
        aitk_str_appendf(&r->cfg->ignored, "config.process[%zu] (%s:%d:%d): only the first "
                                           "process is predicted\n",
                         i, doc->name, procs->items[i]->line, procs->items[i]->col);
        r->cfg->n_ignored++;
    }
    if (r->cfg->n_resolutions == 0)
        r->cfg->resolutions[r->cfg->n_resolutions++] = 512; /* ai-toolkit's default */
    return aitk_str_status(&r->cfg->ignored);
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
    /* ai-toolkit code defaults (toolkit/config_modules.py, FACTS.md section 4). */
    out->rank = 4;
    out->alpha = 1.0;
    out->batch = 1;
    out->accumulation = 1;
    out->steps = 1000;
    out->checkpointing = true;
    out->dtype = "fp32";
    out->lora_bytes = 4;
    out->optimizer = "adamw";
    out->qtype = "qfloat8";
    out->qbits = 8;
    aitk_status st = aitk_yaml_parse(name, text, len, &out->doc, err);
    if (st == AITK_E_PARSE)
        hint_unclosed_quote(name, text, len, err);
    if (st)
        return st;
    reader r = {.cfg = out, .doc = out->doc, .err = err};
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
    aitk_str_free(&cfg->ignored);
    memset(cfg, 0, sizeof *cfg);
}

aitk_status aitk_config_parse(const char *name, const char *text, size_t len,
                              aitk_train_config *out, aitk_str *err)
{
    /* err may be NULL: messages then go to a scratch string. */
    aitk_str scratch = AITK_STR_INIT;
    aitk_status st = parse_config(name, text, len, out, err ? err : &scratch);
    aitk_str_free(&scratch);
    return st;
}

aitk_status aitk_config_check_optimizer(const aitk_train_config *cfg,
                                        const aitk_cost_params *params, const char *path,
                                        aitk_str *err)
{
    if (aitk_cost_find_optimizer(params, cfg->optimizer))
        return AITK_OK;
    if (cfg->optimizer_at)
        aitk_yaml_errorf(err, cfg->doc, cfg->optimizer_at,
                         "optimizer '%s' is not one the memory model knows (known:",
                         cfg->optimizer);
    else
        aitk_str_appendf(err, "%s: optimizer '%s' is not one the memory model knows (known:",
                         path, cfg->optimizer);
    for (size_t i = 0; i < params->n_optimizers; i++)
        aitk_str_appendf(err, "%s %s", i ? "," : "", params->optimizers[i].name);
    aitk_str_append(err, ")");
    return AITK_E_PARSE;
}

aitk_weight_dtype aitk_config_base_storage(const aitk_train_config *cfg)
{
    return !cfg->quantize ? AITK_DTYPE_BF16 : cfg->qbits == 4 ? AITK_DTYPE_NF4 : AITK_DTYPE_FP8;
}

void aitk_config_warn_ignored(const aitk_train_config *cfg, const char *path)
{
    if (cfg->n_ignored)
        aitk_log(AITK_LOG_WARN, "%s: %zu key(s) play no part in time or memory (ignored):\n%s",
                 path, cfg->n_ignored, aitk_str_cstr(&cfg->ignored));
}
