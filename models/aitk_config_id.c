/* Which model and which job an ai-toolkit config trains, told before any
 * other key is read (models/aitk_models.yaml says how): a config for a model
 * or job the cost model does not describe is refused by name, never
 * predicted as the nearest thing it does describe. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "models/aitk_config_internal.h"

#define MODELLED_LIST "FLUX.1-dev, FLUX.1-schnell, Chroma and OmniGen2 LoRA jobs"

static bool seq_has(const aitk_yaml_node *seq, const char *text)
{
    for (size_t i = 0; seq && seq->kind == AITK_YAML_SEQ && i < seq->count; i++)
        if (seq->items[i]->kind == AITK_YAML_SCALAR && strcmp(seq->items[i]->text, text) == 0)
            return true;
    return false;
}

/* A case-insensitive substring search (names are written FLUX.1-schnell,
 * flux.1-schnell ...). */
static bool contains_nocase(const char *hay, const char *needle)
{
    const size_t n = strlen(needle);
    for (; hay && *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return false;
}

static bool names_match(const aitk_yaml_node *names, const char *name_or_path)
{
    for (size_t i = 0; names && names->kind == AITK_YAML_SEQ && i < names->count; i++)
        if (names->items[i]->kind == AITK_YAML_SCALAR &&
            contains_nocase(name_or_path, names->items[i]->text))
            return true;
    return false;
}

/* The key node of `key` in map (errors point at the key, not its value). */
static const aitk_yaml_node *key_at(const aitk_yaml_node *map, const char *key)
{
    for (size_t i = 0; map && map->kind == AITK_YAML_MAP && i < map->count; i++)
        if (strcmp(map->pairs[i].key->text, key) == 0)
            return map->pairs[i].key;
    return map;
}

static const char *text_of(const aitk_yaml_node *map, const char *key)
{
    const aitk_yaml_node *n = aitk_yaml_get(map, key);
    return n && n->kind == AITK_YAML_SCALAR ? n->text : NULL;
}

/* The arch the config names: model.arch without a UI colour tag after ':'
 * (ModelConfig.__init__ drops it too), else the first is_* flag set, else
 * no_arch. `at` is where it was decided. */
static aitk_status config_arch(aitk_config_reader *r, const aitk_yaml_node *m, char *buf,
                               size_t size, const aitk_yaml_node **at)
{
    const aitk_yaml_node *a = aitk_yaml_get(m, "arch");
    const char *arch = NULL;
    *at = m;
    if (a) {
        aitk_status st = aitk_yaml_string(r->doc, a, &arch, r->err);
        if (st)
            return st;
        *at = a;
        const size_t n = strcspn(arch, ":");
        snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), arch);
        return AITK_OK;
    }
    const aitk_yaml_node *flags = aitk_yaml_get(r->ids->root, "flags");
    for (size_t i = 0; flags && flags->kind == AITK_YAML_MAP && i < flags->count; i++) {
        const aitk_yaml_node *f = aitk_yaml_get(m, flags->pairs[i].key->text);
        bool set = false;
        aitk_status st = f ? aitk_yaml_bool(r->doc, f, &set, r->err) : AITK_OK;
        if (st)
            return st;
        if (set && flags->pairs[i].value->kind == AITK_YAML_SCALAR) {
            *at = f;
            snprintf(buf, size, "%s", flags->pairs[i].value->text);
            return AITK_OK;
        }
    }
    snprintf(buf, size, "%s", text_of(r->ids->root, "no_arch") ? text_of(r->ids->root, "no_arch")
                                                               : "sd1");
    return AITK_OK;
}

static aitk_status refuse_model(aitk_config_reader *r, const aitk_yaml_node *at,
                                const char *title, const char *why)
{
    aitk_yaml_errorf(r->err, r->doc, at,
                     "this config trains %s, which predict does not model (%s); it models "
                     MODELLED_LIST,
                     title, why ? why : "no description of its blocks");
    return AITK_E_INVAL;
}

static aitk_status identify_model(aitk_config_reader *r, const aitk_yaml_node *m)
{
    char arch[64];
    const aitk_yaml_node *at = m;
    const char *name = NULL;
    aitk_status st = config_arch(r, m, arch, sizeof arch, &at);
    const aitk_yaml_node *np = aitk_yaml_get(m, "name_or_path");
    if (!st && np)
        st = aitk_yaml_string(r->doc, np, &name, r->err);
    if (st)
        return st;
    r->cfg->name_or_path = name;
    const aitk_yaml_node *ids = aitk_yaml_get(r->ids->root, "identities");
    for (size_t i = 0; ids && ids->kind == AITK_YAML_SEQ && i < ids->count; i++) {
        const aitk_yaml_node *e = ids->items[i];
        const bool by_arch = seq_has(aitk_yaml_get(e, "arch"), arch);
        const bool by_name = name && seq_has(aitk_yaml_get(e, "family"), arch) &&
                             names_match(aitk_yaml_get(e, "names"), name);
        if (!by_arch && !by_name)
            continue;
        const char *title = text_of(e, "title"), *model = text_of(e, "model");
        const aitk_yaml_node *where = by_name && !by_arch && np ? np : at;
        if (!model)
            return refuse_model(r, where, title, text_of(e, "why"));
        r->cfg->model_id = model;
        r->cfg->title = title;
        const char *cfg_flag = text_of(e, "sample_cfg");
        r->sample_cfg = cfg_flag && strcmp(cfg_flag, "true") == 0;
        const char *te_key = text_of(e, "text_encoder_qtype");
        r->te_qtype_key = te_key ? te_key : "qtype_te";
        return AITK_OK;
    }
    aitk_yaml_errorf(r->err, r->doc, at,
                     "arch '%s' is not a model predict knows; it models " MODELLED_LIST, arch);
    return AITK_E_INVAL;
}

static aitk_status refuse_job(aitk_config_reader *r, const aitk_yaml_node *at, const char *what)
{
    aitk_yaml_errorf(r->err, r->doc, at,
                     "this config is %s of %s, which predict does not model; it models "
                     MODELLED_LIST,
                     what, r->cfg->title);
    return AITK_E_INVAL;
}

/* The process's job: its type, then the sections that make a trainer
 * process something else than a LoRA, then the network type. */
static aitk_status identify_job(aitk_config_reader *r, const aitk_yaml_node *p)
{
    const aitk_yaml_node *jobs = aitk_yaml_get(r->ids->root, "jobs");
    const aitk_yaml_node *type = aitk_yaml_get(p, "type");
    const char *t = "sd_trainer";
    aitk_status st = type ? aitk_yaml_string(r->doc, type, &t, r->err) : AITK_OK;
    if (st)
        return st;
    if (!seq_has(aitk_yaml_get(jobs, "trainer_types"), t)) {
        const char *what = text_of(aitk_yaml_get(jobs, "other_types"), t);
        if (!what) {
            aitk_yaml_errorf(r->err, r->doc, type,
                             "process type '%s' is not a training job predict knows (sd_trainer, "
                             "ui_trainer, diffusion_trainer)",
                             t);
            return AITK_E_INVAL;
        }
        return refuse_job(r, type, what);
    }
    const aitk_yaml_node *sections = aitk_yaml_get(jobs, "sections");
    for (size_t i = 0; sections && sections->kind == AITK_YAML_MAP && i < sections->count; i++) {
        const aitk_yaml_node *k = sections->pairs[i].key;
        const aitk_yaml_node *v = aitk_yaml_get(p, k->text);
        if (v && !(v->kind == AITK_YAML_SCALAR && (strcmp(v->text, "~") == 0 ||
                                                    strcmp(v->text, "null") == 0 || !*v->text)))
            return refuse_job(r, key_at(p, k->text), text_of(sections, k->text));
    }
    const aitk_yaml_node *net = aitk_yaml_get(p, "network");
    if (!net) {
        /* Read on, refused by aitk_config_check_job once the keys are
         * said: what a person reads first is the key they mistyped. */
        r->cfg->job = "full fine-tune";
        r->cfg->job_at = p;
        return AITK_OK;
    }
    const aitk_yaml_node *nt = net->kind == AITK_YAML_MAP ? aitk_yaml_get(net, "type") : NULL;
    const char *ntype = "lora";
    st = nt ? aitk_yaml_string(r->doc, nt, &ntype, r->err) : AITK_OK;
    if (!st && !seq_has(aitk_yaml_get(jobs, "lora_types"), ntype)) {
        aitk_yaml_errorf(r->err, r->doc, nt,
                         "network type '%s' is not modelled (only lora and locon%s)", ntype,
                         strcasecmp(ntype, "lokr") == 0 ? "; LoKr's Kronecker factors are not "
                                                          "described"
                                                        : "");
        return AITK_E_INVAL;
    }
    r->cfg->job = "LoRA";
    return st;
}

aitk_status aitk_config_check_job(const aitk_train_config *cfg, aitk_str *err)
{
    if (strcmp(cfg->job, "LoRA") == 0)
        return AITK_OK;
    aitk_yaml_errorf(err, cfg->doc, cfg->job_at,
                     "this config is a full fine-tune of %s (no network section: every weight "
                     "is trained, with its gradients and optimizer state; ai-toolkit's full "
                     "fine-tune examples ask for 48 GB or more), which predict does not model; "
                     "it models " MODELLED_LIST,
                     cfg->title);
    aitk_config_printable(err);
    return AITK_E_INVAL;
}

aitk_status aitk_config_identify(aitk_config_reader *r, const aitk_yaml_node *root,
                                 const aitk_yaml_node *p)
{
    const aitk_yaml_node *jobs = aitk_yaml_get(r->ids->root, "jobs");
    const aitk_yaml_node *job = aitk_yaml_get(root, "job");
    const char *j = NULL;
    aitk_status st = job ? aitk_yaml_string(r->doc, job, &j, r->err) : AITK_OK;
    if (st)
        return st;
    if (j && !seq_has(aitk_yaml_get(jobs, "training_roots"), j)) {
        aitk_yaml_errorf(r->err, r->doc, job,
                         "job: %s is not a training job; predict reads training configs "
                         "(job: extension)",
                         j);
        return AITK_E_INVAL;
    }
    const aitk_yaml_node *m = aitk_yaml_get(p, "model");
    if (!m) {
        aitk_str_appendf(r->err, "%s: no model section in config.process[0]: cannot tell which "
                                 "model this trains", r->doc->name);
        return AITK_E_INVAL;
    }
    st = aitk_yaml_expect(r->doc, m, AITK_YAML_MAP, "the model section (a map)", r->err);
    if (!st)
        st = identify_model(r, m);
    if (!st)
        st = identify_job(r, p);
    return st;
}
