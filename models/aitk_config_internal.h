/* Shared by the ai-toolkit config reader's parts: models/aitk_config.c (the
 * sections), aitk_config_id.c (which model and job) and aitk_config_keys.c
 * (what each key not read does to cost). */
#ifndef AITK_MODELS_AITK_CONFIG_INTERNAL_H
#define AITK_MODELS_AITK_CONFIG_INTERNAL_H

#include "models/aitk_config.h"

typedef struct aitk_config_reader {
    aitk_train_config *cfg;
    const aitk_yaml_doc *doc;
    aitk_str *err;
    aitk_yaml_doc *ids;  /* models/aitk_models.yaml */
    aitk_yaml_doc *keys; /* models/aitk_config_keys.yaml */
    bool sample_cfg;     /* the identity samples with classifier-free guidance */
    /* The model key whose qtype quantizes the text encoders: "qtype" or
     * "qtype_te" (models/aitk_models.yaml text_encoder_qtype). */
    const char *te_qtype_key;
} aitk_config_reader;

/* Loads both data files (schema checked) into r. */
aitk_status aitk_config_load_tables(aitk_config_reader *r);
void aitk_config_free_tables(aitk_config_reader *r);

/* Tells the job and the model of process `p` (root: the document's map);
 * anything not modelled is AITK_E_INVAL naming it, at its place. Sets
 * cfg->model_id, title and job. */
aitk_status aitk_config_identify(aitk_config_reader *r, const aitk_yaml_node *root,
                                 const aitk_yaml_node *p);

/* Sorts every key of `map` not in `used` into the config's not-modelled,
 * no-effect or unknown list, by section `section` of the key tables;
 * `where` prefixes the key's path ("train."). */
void aitk_config_note_keys(aitk_config_reader *r, const aitk_yaml_node *map, const char *section,
                           const char *where, const char *const *used);
/* Adds one not-modelled line (a key the code reads, set to a costly value). */
void aitk_config_note_cost(aitk_config_reader *r, const aitk_yaml_node *key, const char *path,
                           const char *why);
/* The optimizer name ai-toolkit would resolve `name` to (optimizer_prefixes). */
const char *aitk_config_resolve_optimizer(const aitk_config_reader *r, const char *name);

/* Escapes control characters of s in place (config text in a message). */
aitk_status aitk_config_printable(aitk_str *s);

bool aitk_config_in_list(const char *key, const char *const *list);

#endif
