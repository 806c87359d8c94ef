/* models/reported_speeds.yaml -> aitk_reported_speeds, and the cost model's
 * prediction for each reported job. */
#include "models/reported.h"

#include <string.h>

#include "common/alloc.h"
#include "common/data.h"

static aitk_status positive(const aitk_yaml_doc *doc, const aitk_yaml_node *n, double *out,
                            aitk_str *err)
{
    aitk_status st = aitk_yaml_double(doc, n, out, err);
    if (!st && !(*out > 0)) {
        aitk_yaml_errorf(err, doc, n, "must be greater than 0");
        return AITK_E_RANGE;
    }
    return st;
}

/* A yes/no a setup may leave out: 1 or 0 where given (its field is -1 until
 * then, for "the default"). */
static aitk_status optional_bool(const aitk_yaml_doc *doc, const aitk_yaml_node *n, int *out,
                                 aitk_str *err)
{
    bool b = false;
    aitk_status st = aitk_yaml_bool(doc, n, &b, err);
    if (!st)
        *out = b;
    return st;
}

static aitk_status positive_long(const aitk_yaml_doc *doc, const aitk_yaml_node *n, long max,
                                 long *out, aitk_str *err)
{
    aitk_status st = aitk_yaml_long(doc, n, out, err);
    if (!st && (*out < 1 || *out > max)) {
        aitk_yaml_errorf(err, doc, n, "expected a whole number from 1 to %ld", max);
        return AITK_E_RANGE;
    }
    return st;
}

static aitk_status load_resolutions(const aitk_yaml_doc *doc, const aitk_yaml_node *n,
                                    aitk_reported_setup *s, aitk_str *err)
{
    aitk_status st = aitk_yaml_expect(doc, n, AITK_YAML_SEQ, "a list of resolutions", err);
    if (!st && (n->count == 0 || n->count > sizeof s->resolutions / sizeof *s->resolutions)) {
        aitk_yaml_errorf(err, doc, n, "expected 1 to %zu resolutions",
                         sizeof s->resolutions / sizeof *s->resolutions);
        return AITK_E_RANGE;
    }
    for (size_t i = 0; !st && i < n->count; i++)
        st = positive_long(doc, n->items[i], 8192, &s->resolutions[i], err);
    if (!st)
        s->n_resolutions = n->count;
    return st;
}

static aitk_status load_text_mode(const aitk_yaml_doc *doc, const aitk_yaml_node *n,
                                  aitk_reported_text *out, aitk_str *err)
{
    const char *t = NULL;
    aitk_status st = aitk_yaml_string(doc, n, &t, err);
    if (st)
        return st;
    static const struct {
        const char *name;
        aitk_reported_text mode;
    } modes[] = {{"cached", AITK_TEXT_CACHED},
                 {"resident", AITK_TEXT_RESIDENT},
                 {"bf16", AITK_TEXT_BF16},
                 {"fp8", AITK_TEXT_FP8}};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        if (strcmp(t, modes[i].name) == 0) {
            *out = modes[i].mode;
            return AITK_OK;
        }
    }
    aitk_yaml_errorf(err, doc, n, "text: expected cached, resident, bf16 or fp8, found '%s'", t);
    return AITK_E_PARSE;
}

/* `lora_layers`: a list of 1 to 16 module names. */
static aitk_status load_lora_layers(const aitk_yaml_doc *doc, const aitk_yaml_node *n,
                                    aitk_reported_setup *s, aitk_str *err)
{
    return aitk_yaml_names(doc, n, "lora_layers", s->lora_layers,
                           sizeof s->lora_layers / sizeof *s->lora_layers - 1, err);
}

/* `validation_text`: bf16, fp32 or none. */
static aitk_status load_validation_text(const aitk_yaml_doc *doc, const aitk_yaml_node *n,
                                        int *out, aitk_str *err)
{
    const char *t = NULL;
    aitk_status st = aitk_yaml_string(doc, n, &t, err);
    if (st)
        return st;
    *out = !strcmp(t, "bf16")   ? AITK_WEIGHT_BF16
           : !strcmp(t, "fp32") ? AITK_WEIGHT_FP32
           : !strcmp(t, "none") ? -2
                                : -1;
    if (*out == -1) {
        aitk_yaml_errorf(err, doc, n, "validation_text: expected bf16, fp32 or none, found '%s'",
                         t);
        return AITK_E_PARSE;
    }
    return AITK_OK;
}

/* "KEY: expected CHOICES, found 'T'" at n: a key's value none of its words. */
static aitk_status refuse(const aitk_yaml_doc *doc, const aitk_yaml_node *n, const char *key,
                          const char *choices, const char *t, aitk_str *err)
{
    aitk_yaml_errorf(err, doc, n, "%s: expected %s, found '%s'", key, choices, t);
    return AITK_E_PARSE;
}

/* A key of two spellings (`first` or `second`): *is_second says which. */
static aitk_status two_choices(const aitk_yaml_doc *doc, const aitk_yaml_node *n,
                               const char *key, const char *first, const char *second,
                               bool *is_second, aitk_str *err)
{
    const char *t = NULL;
    aitk_status st = aitk_yaml_string(doc, n, &t, err);
    if (!st && strcmp(t, first) && strcmp(t, second)) {
        aitk_yaml_errorf(err, doc, n, "%s: expected %s or %s, found '%s'", key, first, second, t);
        return AITK_E_PARSE;
    }
    *is_second = !st && strcmp(t, second) == 0;
    return st;
}

static aitk_status load_setup(const aitk_yaml_doc *doc, const aitk_yaml_node *m,
                              const aitk_cost_params *p, aitk_reported_setup *s, aitk_str *err)
{
    static const char *const keys[] = {"task", "resolutions", "batch", "rank", "base",
                                       "text", "checkpointing", "optimizer", "ema",
                                       "autocast", "text_tokens", "accumulation",
                                       "lora_layers", "lora_dtype", "validation_text",
                                       "precision", "attention_mask", "os", NULL};
    *s = (aitk_reported_setup){.base = -1,
                               .checkpointing = -1,
                               .validation_te = -1,
                               .autocast = -1,
                               .attention_mask = -1};
    if (!m)
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a setup", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, m, keys, "a setup", err);
    const aitk_yaml_node *n;
    if (!st && (n = aitk_yaml_get(m, "task"))) {
        const char *t = NULL;
        st = aitk_yaml_string(doc, n, &t, err);
        if (!st && strcmp(t, "inference") && strcmp(t, "training")) {
            aitk_yaml_errorf(err, doc, n, "task: expected training or inference, found '%s'", t);
            st = AITK_E_PARSE;
        }
        s->inference = !st && strcmp(t, "inference") == 0;
    }
    if (!st && (n = aitk_yaml_get(m, "resolutions")))
        st = load_resolutions(doc, n, s, err);
    if (!st && (n = aitk_yaml_get(m, "batch")))
        st = positive_long(doc, n, 1024, &s->batch, err);
    if (!st && (n = aitk_yaml_get(m, "rank")))
        st = positive_long(doc, n, 4096, &s->rank, err);
    if (!st && (n = aitk_yaml_get(m, "base"))) {
        const char *t = NULL;
        aitk_weight_dtype d = AITK_WEIGHT_BF16;
        st = aitk_yaml_string(doc, n, &t, err);
        if (!st && aitk_weight_dtype_parse(t, &d)) {
            aitk_yaml_errorf(err, doc, n, "base: expected bf16, fp8 or nf4, found '%s'", t);
            st = AITK_E_PARSE;
        }
        s->base = (int)d;
    }
    if (!st && (n = aitk_yaml_get(m, "text")))
        st = load_text_mode(doc, n, &s->text, err);
    if (!st && (n = aitk_yaml_get(m, "checkpointing")))
        st = optional_bool(doc, n, &s->checkpointing, err);
    if (!st && (n = aitk_yaml_get(m, "ema")))
        st = aitk_yaml_bool(doc, n, &s->ema, err);
    if (!st && (n = aitk_yaml_get(m, "autocast")))
        st = optional_bool(doc, n, &s->autocast, err);
    if (!st && (n = aitk_yaml_get(m, "text_tokens")))
        st = positive_long(doc, n, 4096, &s->text_tokens, err);
    if (!st && (n = aitk_yaml_get(m, "accumulation")))
        st = positive_long(doc, n, 1024, &s->accumulation, err);
    if (!st && (n = aitk_yaml_get(m, "lora_layers")))
        st = load_lora_layers(doc, n, s, err);
    bool fp32 = false;
    if (!st && (n = aitk_yaml_get(m, "lora_dtype"))) {
        st = two_choices(doc, n, "lora_dtype", "bf16", "fp32", &fp32, err);
        s->lora_bytes = fp32 ? 4 : 2;
    }
    if (!st && (n = aitk_yaml_get(m, "validation_text")))
        st = load_validation_text(doc, n, &s->validation_te, err);
    if (!st && (n = aitk_yaml_get(m, "attention_mask"))) {
        const char *t = NULL;
        aitk_attention_mask k = AITK_MASK_NONE;
        st = aitk_yaml_string(doc, n, &t, err);
        if (!st && aitk_attention_mask_parse(t, &k))
            st = refuse(doc, n, "attention_mask", AITK_ATTENTION_MASK_CHOICES, t, err);
        s->attention_mask = (int)k;
    }
    if (!st && (n = aitk_yaml_get(m, "os"))) {
        const char *t = NULL;
        st = aitk_yaml_string(doc, n, &t, err);
        if (!st && aitk_host_os_parse(t, &s->os))
            st = refuse(doc, n, "os", AITK_HOST_OS_CHOICES, t, err);
    }
    if (!st && (n = aitk_yaml_get(m, "precision")))
        st = two_choices(doc, n, "precision", "bf16", "fp16", &s->fp16, err);
    if (!st && (n = aitk_yaml_get(m, "optimizer"))) {
        st = aitk_yaml_string(doc, n, &s->optimizer, err);
        if (!st && !aitk_cost_find_optimizer(p, s->optimizer)) {
            aitk_yaml_errorf(err, doc, n, "optimizer '%s' is not in models/cost.yaml's list",
                             s->optimizer);
            st = AITK_E_PARSE;
        }
    }
    return st;
}

static aitk_status load_outcome(const aitk_yaml_doc *doc, const aitk_yaml_node *m,
                                aitk_reported_speed *r, aitk_str *err)
{
    const aitk_yaml_node *n = NULL;
    const char *t = NULL;
    aitk_status st = aitk_yaml_need(doc, m, "outcome", &n, err);
    if (!st)
        st = aitk_yaml_string(doc, n, &t, err);
    if (st)
        return st;
    static const struct {
        const char *name;
        aitk_reported_outcome outcome;
    } outcomes[] = {{"oom", AITK_OUTCOME_OOM}, {"ran", AITK_OUTCOME_RAN},
                    {"unstated", AITK_OUTCOME_UNSTATED}};
    for (size_t i = 0; i < sizeof outcomes / sizeof *outcomes; i++) {
        if (strcmp(t, outcomes[i].name) == 0) {
            r->outcome = outcomes[i].outcome;
            return AITK_OK;
        }
    }
    aitk_yaml_errorf(err, doc, n, "outcome: expected oom, ran or unstated, found '%s'", t);
    return AITK_E_PARSE;
}

/* `setup_unknown`: a reason, and only where there is a verdict to hold
 * back (an outcome of oom or ran). */
static aitk_status load_setup_unknown(const aitk_yaml_doc *doc, const aitk_yaml_node *m,
                                      aitk_reported_speed *r, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(m, "setup_unknown");
    if (!n)
        return AITK_OK;
    aitk_status st = aitk_yaml_string(doc, n, &r->setup_unknown, err);
    if (!st && (r->outcome == AITK_OUTCOME_UNSTATED || !r->setup_unknown[0])) {
        aitk_yaml_errorf(err, doc, n, "setup_unknown: give the reason, on a row whose outcome "
                                      "is oom or ran");
        st = AITK_E_PARSE;
    }
    return st;
}

/* The GPU by name; a memory report whose outcome is unstated may name none
 * (a documentation figure), every other row must. */
static aitk_status load_gpu(const aitk_yaml_doc *doc, const aitk_yaml_node *m,
                            const aitk_gpudb *db, aitk_reported_speed *r, aitk_str *err)
{
    const char *gpu = NULL;
    r->gpu = NULL;
    if (r->outcome == AITK_OUTCOME_UNSTATED && !aitk_yaml_get(m, "gpu"))
        return AITK_OK;
    aitk_status st = aitk_yaml_need_string(doc, m, "gpu", &gpu, err);
    if (!st) {
        aitk_str why = AITK_STR_INIT;
        if (aitk_gpudb_find(db, gpu, &r->gpu, &why)) {
            aitk_yaml_errorf(err, doc, aitk_yaml_get(m, "gpu"), "%s", aitk_str_cstr(&why));
            st = AITK_E_PARSE;
        }
        aitk_str_free(&why);
    }
    return st;
}

/* One row of `reports` or, with `memory`, of `memory_reports`. */
/* The trainer a row is predicted with: `modelled_as` by id where given (a
 * trainer models/trainers.yaml does not have, run as one it has), else the
 * one its `trainer` text names. */
static aitk_status load_trainer(const aitk_yaml_doc *doc, const aitk_yaml_node *m,
                                const aitk_trainers *t, aitk_reported_speed *r, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(m, "modelled_as");
    const char *id = NULL;
    aitk_status st = n ? aitk_yaml_string(doc, n, &id, err) : AITK_OK;
    if (st)
        return st;
    r->trainer_spec = n ? aitk_trainers_find(t, id) : aitk_trainers_match(t, r->trainer);
    if (r->trainer_spec)
        return AITK_OK;
    aitk_str names = AITK_STR_INIT;
    st = aitk_trainers_names(t, &names);
    if (!st && n)
        aitk_yaml_errorf(err, doc, n, "modelled_as: no trainer '%s' (known: %s)", id,
                         aitk_str_cstr(&names));
    else if (!st)
        aitk_yaml_errorf(err, doc, aitk_yaml_get(m, "trainer"),
                         "trainer '%s' names none of models/trainers.yaml's (%s): give "
                         "modelled_as",
                         r->trainer, aitk_str_cstr(&names));
    aitk_str_free(&names);
    return st ? st : AITK_E_PARSE;
}

static aitk_status load_report(const aitk_yaml_doc *doc, const aitk_yaml_node *m,
                               const aitk_gpudb *db, const aitk_cost_params *p,
                               const aitk_trainers *t, bool memory, aitk_reported_speed *r,
                               aitk_str *err)
{
    static const char *const keys[] = {"id", "source", "trainer", "modelled_as", "gpu",
                                       "model", "setup", "assumed", "seconds_per_step",
                                       "peak_gb", NULL};
    static const char *const memory_keys[] = {"id", "source", "trainer", "modelled_as", "gpu",
                                              "model", "setup", "assumed", "seconds_per_step",
                                              "peak_gb", "outcome", "setup_unknown", NULL};
    const char *what = memory ? "a memory report" : "a report";
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, what, err);
    if (!st)
        st = aitk_yaml_check_keys(doc, m, memory ? memory_keys : keys, what, err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "id", &r->id, err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "source", &r->source, err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "trainer", &r->trainer, err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "model", &r->model_id, err);
    r->outcome = AITK_OUTCOME_RAN;
    if (!st && memory)
        st = load_outcome(doc, m, r, err);
    r->setup_unknown = NULL;
    if (!st && memory)
        st = load_setup_unknown(doc, m, r, err);
    if (!st)
        st = load_gpu(doc, m, db, r, err);
    const aitk_yaml_node *n = aitk_yaml_get(m, "assumed");
    r->assumed = "";
    if (!st && n)
        st = aitk_yaml_string(doc, n, &r->assumed, err);
    r->seconds_per_step = 0;
    if (!st && !memory)
        st = aitk_yaml_need(doc, m, "seconds_per_step", &n, err);
    else if (!st)
        n = aitk_yaml_get(m, "seconds_per_step");
    if (!st && n)
        st = positive(doc, n, &r->seconds_per_step, err);
    r->peak_gb = -1;
    if (!st && (n = aitk_yaml_get(m, "peak_gb")))
        st = positive(doc, n, &r->peak_gb, err);
    if (!st)
        st = load_setup(doc, aitk_yaml_get(m, "setup"), p, &r->setup, err);
    if (!st)
        st = load_trainer(doc, m, t, r, err);
    return st;
}

/* A model id is checked by loading its spec once (ids repeat across rows). */
static aitk_status check_model(const aitk_yaml_doc *doc, const aitk_reported_speed *items, size_t i,
                               const aitk_yaml_node *m, aitk_str *err)
{
    for (size_t k = 0; k < i; k++)
        if (strcmp(items[k].model_id, items[i].model_id) == 0)
            return AITK_OK;
    aitk_model_spec *spec = NULL;
    aitk_str why = AITK_STR_INIT;
    aitk_status st = aitk_model_spec_load(items[i].model_id, false, &spec, &why);
    aitk_model_spec_free(spec);
    if (st && st != AITK_E_NOMEM) {
        aitk_yaml_errorf(err, doc, aitk_yaml_get(m, "model"), "%s", aitk_str_cstr(&why));
        st = AITK_E_PARSE;
    }
    aitk_str_free(&why);
    return st;
}

/* Every row of the list `key` (required unless `optional`) into *items. */
static aitk_status load_list(aitk_yaml_doc *doc, const char *key, bool optional, bool memory,
                             const aitk_gpudb *db, const aitk_cost_params *p,
                             const aitk_trainers *t, aitk_reported_speed **items, size_t *count,
                             aitk_str *err)
{
    const aitk_yaml_node *list = aitk_yaml_get(doc->root, key);
    if (!list && optional)
        return AITK_OK;
    if (!list) {
        aitk_yaml_errorf(err, doc, doc->root, "missing '%s'", key);
        return AITK_E_PARSE;
    }
    aitk_status st = aitk_yaml_expect(doc, list, AITK_YAML_SEQ, memory ? "a list of memory "
                                                                         "reports"
                                                                       : "a list of reports",
                                      err);
    if (!st && list->count) {
        *items = aitk_calloc(list->count, sizeof **items);
        st = *items ? AITK_OK : AITK_E_NOMEM;
    }
    for (size_t i = 0; !st && i < list->count; i++) {
        st = load_report(doc, list->items[i], db, p, t, memory, &(*items)[i], err);
        if (!st)
            st = check_model(doc, *items, i, list->items[i], err);
        *count = i + 1;
    }
    return st;
}

aitk_status aitk_reported_speeds_from_doc(aitk_yaml_doc *doc, const aitk_gpudb *db,
                                          const aitk_cost_params *p, aitk_reported_speeds **out,
                                          aitk_str *err)
{
    *out = NULL;
    aitk_reported_speeds *s = aitk_calloc(1, sizeof *s);
    if (!s) {
        aitk_yaml_free(doc);
        return AITK_E_NOMEM;
    }
    s->doc = doc;
    aitk_status st = aitk_data_check_schema(doc, 1, err);
    if (!st)
        st = aitk_trainers_load(&s->trainers, err);
    if (!st)
        st = load_list(doc, "reports", false, false, db, p, s->trainers, &s->items, &s->count,
                       err);
    if (!st)
        st = load_list(doc, "memory_reports", true, true, db, p, s->trainers, &s->memory,
                       &s->n_memory, err);
    if (st) {
        aitk_reported_speeds_free(s);
        return st;
    }
    *out = s;
    return AITK_OK;
}

aitk_status aitk_reported_speeds_load(const aitk_gpudb *db, const aitk_cost_params *p,
                                      aitk_reported_speeds **out, aitk_str *err)
{
    aitk_yaml_doc *doc = NULL;
    *out = NULL;
    aitk_status st = aitk_data_load_yaml("models/reported_speeds.yaml", &doc, err);
    return st ? st : aitk_reported_speeds_from_doc(doc, db, p, out, err);
}

void aitk_reported_speeds_free(aitk_reported_speeds *s)
{
    if (!s)
        return;
    aitk_free(s->items);
    aitk_free(s->memory);
    aitk_trainers_free(s->trainers);
    aitk_yaml_free(s->doc);
    aitk_free(s);
}

void aitk_reported_workload(const aitk_reported_speed *r, const aitk_model_spec *spec,
                            aitk_workload *w)
{
    const aitk_reported_setup *s = &r->setup;
    aitk_workload_defaults(w, spec);
    /* The trainer first: the setup's own keys win over its defaults. */
    if (r->trainer_spec)
        aitk_workload_set_trainer(w, r->trainer_spec);
    if (s->text_tokens)
        w->text_tokens = s->text_tokens;
    /* A trainer that counts optimizer steps times all the micro-batches. */
    if (s->accumulation && (!r->trainer_spec || r->trainer_spec->optimizer_steps))
        w->accumulation = s->accumulation;
    if (s->n_resolutions) {
        memcpy(w->resolutions, s->resolutions, sizeof w->resolutions);
        w->n_resolutions = s->n_resolutions;
    }
    if (s->batch)
        w->batch = s->batch;
    if (s->rank) {
        w->rank = s->rank;
        w->alpha = (double)s->rank;
    }
    if (s->base >= 0)
        w->base_dtype = (aitk_weight_dtype)s->base;
    switch (s->text) {
    case AITK_TEXT_DEFAULT: break;
    case AITK_TEXT_CACHED: w->cache_text = true; w->te_resident = false; break;
    case AITK_TEXT_RESIDENT:
        w->cache_text = true;
        w->te_resident = true;
        w->te_dtype = AITK_WEIGHT_BF16;
        break;
    case AITK_TEXT_BF16: w->cache_text = false; w->te_dtype = AITK_WEIGHT_BF16; break;
    case AITK_TEXT_FP8: w->cache_text = false; w->te_dtype = AITK_WEIGHT_FP8; break;
    }
    if (s->checkpointing >= 0)
        w->checkpointing = s->checkpointing != 0;
    if (s->optimizer)
        w->optimizer = s->optimizer;
    w->ema = s->ema;
    if (s->autocast >= 0)
        w->autocast = s->autocast != 0;
    w->fp16 = s->fp16;
    if (s->lora_layers[0])
        w->lora_only = s->lora_layers;
    if (s->lora_bytes > 0)
        w->lora_bytes = s->lora_bytes;
    if (s->attention_mask >= 0)
        w->attention_mask = (aitk_attention_mask)s->attention_mask;
    w->os = s->os;
    if (s->validation_te == -2)
        w->validation_resolution = 0;
    else if (s->validation_te >= 0)
        w->validation_te_dtype = (aitk_weight_dtype)s->validation_te;
    if (s->inference) {
        /* Generation: the base model alone, its prompt encoded once. */
        w->forward_only = true;
        w->rank = 0;
        w->checkpointing = false;
        w->cache_text = true;
    }
}

aitk_status aitk_reported_evaluate(const aitk_reported_speeds *s, const aitk_cost_params *p,
                                   const aitk_calibration *cal, aitk_reported_row *rows,
                                   aitk_str *err)
{
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < s->count; i++) {
        const aitk_reported_speed *r = &s->items[i];
        aitk_model_spec *spec = NULL;
        st = aitk_model_spec_load(r->model_id, false, &spec, err);
        if (!st) {
            rows[i] = (aitk_reported_row){.report = r};
            aitk_reported_workload(r, spec, &rows[i].workload);
            st = aitk_cost_predict(&rows[i].workload, p, r->gpu, &rows[i].pred, err);
            if (!st)
                rows[i].floor_s = aitk_cost_floor_seconds(&rows[i].workload, p, r->gpu);
            /* The row outlives the spec: keep no pointer into it. The
             * optimizer's name is cost.yaml's (p lives as long as rows). */
            const aitk_optimizer_spec *opt = aitk_cost_find_optimizer(p, rows[i].workload.optimizer);
            rows[i].workload.optimizer = opt ? opt->name : NULL;
            rows[i].workload.spec = NULL;
        }
        const aitk_step_scale *scale = aitk_calibration_step_scale(cal, r->model_id);
        if (!st && scale)
            aitk_prediction_scale_time(&rows[i].pred, scale->scale);
        if (!st)
            rows[i].ratio = rows[i].pred.step_s / r->seconds_per_step;
        aitk_model_spec_free(spec);
    }
    return st;
}
