/* Reader for real ai-toolkit training configs (the YAML people pass to
 * `python run.py config.yaml`), reduced to what sets compute and memory.
 *
 * Missing keys take ai-toolkit's code defaults (toolkit/config_modules.py, see
 * FACTS.md section 4), not the example configs' values, because that is what
 * the trainer would do with the same file. Keys the prediction does not use
 * are kept and listed as ignored with their positions. */
#ifndef AITK_MODELS_AITK_CONFIG_H
#define AITK_MODELS_AITK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"
#include "common/yaml.h"
#include "models/cost.h"

typedef struct aitk_train_config {
    aitk_yaml_doc *doc;        /* owns the strings */
    const char *model_id;      /* "flux1-dev" | "chroma" | "omnigen2" */
    const char *name_or_path;  /* NULL when absent */
    long rank;                 /* network.linear */
    double alpha;              /* network.linear_alpha */
    long batch, accumulation, steps;
    long resolutions[8];
    size_t n_resolutions;
    bool checkpointing;
    const char *dtype;         /* train.dtype as written ("bf16", "fp32", ...) */
    double lora_bytes;         /* 2 for 16-bit dtypes, 4 for fp32 */
    const char *optimizer;
    const aitk_yaml_node *optimizer_at; /* where it is written; NULL: the default */
    bool quantize, quantize_te, low_vram;
    const char *qtype;
    int qbits;                 /* bits per weight qtype means: 8 or 4 */
    bool cache_latents, cache_text;
    aitk_str ignored;          /* "path (file:line:col)" per line */
    size_t n_ignored;
} aitk_train_config;

/* Reads `path`. Errors are positioned ("file:line:col: ...") in err:
 * AITK_E_PARSE for YAML syntax or wrong types, AITK_E_INVAL for contradictions
 * ai-toolkit itself refuses (both accumulation spellings) or an unknown
 * model, AITK_E_IO when unreadable. */
aitk_status aitk_config_read(const char *path, aitk_train_config *out, aitk_str *err);
/* Same, from text in memory; `name` is used in messages. */
aitk_status aitk_config_parse(const char *name, const char *text, size_t len,
                              aitk_train_config *out, aitk_str *err);
void aitk_config_free(aitk_train_config *cfg);

/* AITK_E_PARSE, positioned at the config's optimizer key and listing the
 * known names, when the memory model (models/cost.yaml) lacks that
 * optimizer: `predict --config` and `--config` give one verdict. `path`
 * names the file when the optimizer is ai-toolkit's default. */
aitk_status aitk_config_check_optimizer(const aitk_train_config *cfg,
                                        const aitk_cost_params *params, const char *path,
                                        aitk_str *err);

/* Warns once on stderr, naming each key of the config that plays no part in
 * time or memory (with its file:line:col), so a typo (train.batchsize) is
 * seen without -v; nothing when every key was understood. */
void aitk_config_warn_ignored(const aitk_train_config *cfg, const char *path);

/* The base weights' storage as the cost model counts it: bf16 unquantized,
 * fp8 for an 8-bit qtype, nf4 for a 4-bit one. */
aitk_weight_dtype aitk_config_base_storage(const aitk_train_config *cfg);

#endif
