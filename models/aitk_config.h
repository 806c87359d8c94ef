/* Reader for real ai-toolkit training configs (the YAML people pass to
 * `python run.py config.yaml`), reduced to what sets compute and memory.
 *
 * The model (models/aitk_models.yaml: arch, is_* flags and name_or_path
 * together) and the job (root job:, process type, its sections) are told
 * first; a config for anything not modelled is refused by name before any
 * other key is judged. Missing keys take ai-toolkit's code defaults
 * (toolkit/config_modules.py), not the example configs' values, because that
 * is what the trainer would do with the same file. Keys the prediction does
 * not use are sorted by models/aitk_config_keys.yaml into "changes cost, not
 * modelled", "no effect" and unknown, each kept with its position. */
#ifndef AITK_MODELS_AITK_CONFIG_H
#define AITK_MODELS_AITK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"
#include "common/yaml.h"
#include "models/cost.h"

#define AITK_CONFIG_MAX_FILTERS 64

typedef struct aitk_train_config {
    aitk_yaml_doc *doc;        /* owns the strings */
    aitk_yaml_doc *ids, *keys; /* own title, model_id (models/aitk_*.yaml) */
    const char *model_id;      /* "flux1-dev" | "chroma" | "omnigen2" */
    const char *title;         /* the identity's title: "FLUX.1-schnell (...)" */
    const char *job;           /* what is trained: "LoRA" or "full fine-tune" */
    const aitk_yaml_node *job_at; /* where a job not modelled is told */
    const char *name_or_path;  /* NULL when absent */
    long rank;                 /* network.rank, else network.linear */
    double alpha;              /* network.linear_alpha, else network.alpha */
    /* batch: samples per micro-batch; accumulation: micro-batches in one
     * step (train.gradient_accumulation); optimizer_every: steps between
     * optimizer steps (train.gradient_accumulation_steps, -1: an epoch). */
    long batch, accumulation, optimizer_every, steps;
    long resolutions[8];
    size_t n_resolutions;
    bool checkpointing;
    const char *dtype;         /* train.dtype as written ("bf16", "fp32", ...) */
    double lora_bytes;         /* 2 for 16-bit dtypes, 4 for fp32 */
    bool fp16;                 /* train.dtype is fp16 (float16, half), not bf16 */
    const char *optimizer;     /* as ai-toolkit resolves it ("prodigyopt" -> "prodigy") */
    const aitk_yaml_node *optimizer_at; /* where it is written; NULL: the default */
    bool quantize, quantize_te, low_vram;
    const char *qtype, *qtype_te;
    /* Bits per weight the qtypes mean, scales included (8, 4, or a uint
     * type's packed k + 0.375; 0: uint8, which quantizes nothing); packed:
     * a uint type's own figure, not cost.yaml's NF4 one. */
    double qbits, te_qbits;
    bool packed, te_packed;
    /* The qtypes without an accuracy recovery adapter's '|path', for the
     * output ("uint3"). */
    char qtype_name[16], qtype_te_name[16];
    bool cache_latents, cache_text;
    /* train.diff_output_preservation: a second prediction with grad and a
     * prior prediction without, each step (SDTrainer). */
    bool preservation;
    bool ema;                  /* train.ema_config.use_ema */
    /* The sample block: every sample_every steps, sample_prompts images,
     * each step sample_passes transformer passes; sample_steps, sample_width
     * and sample_height are the block's, which a sample's own keys replace
     * (SampleItem): the images by size and steps in sample_groups.
     * sample_every 0: no sampling. */
    long sample_every, sample_steps, sample_prompts, sample_width, sample_height;
    int sample_passes;
    aitk_sample_group sample_groups[AITK_MAX_SAMPLE_GROUPS];
    size_t n_sample_groups;
    /* train.validation_config (ValidationConfig): every val_loss_every steps,
     * val_loss_items images (those with an image_path) each predicted as one
     * batch of val_loss_sigmas at val_loss_resolution; 0 items: none. */
    long val_loss_every, val_loss_items, val_loss_sigmas, val_loss_resolution;
    /* network_kwargs.only_if_contains / ignore_if_contains, NULL-terminated;
     * lora_only[0] NULL when not given. */
    const char *lora_only[AITK_CONFIG_MAX_FILTERS + 1], *lora_ignore[AITK_CONFIG_MAX_FILTERS + 1];
    aitk_str ignored;          /* unknown and not-modelled keys: "path (file:line:col)..." */
    size_t n_ignored;
    aitk_str unknown, not_modelled, no_effect; /* the same, by kind, one per line */
    size_t n_unknown, n_not_modelled, n_no_effect;
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

/* AITK_E_INVAL naming the job when it is not a LoRA (a full fine-tune: no
 * network section). Other jobs and models not modelled are refused by the
 * reader itself; a full fine-tune is read whole first so that its keys are
 * said, then refused here. */
aitk_status aitk_config_check_job(const aitk_train_config *cfg, aitk_str *err);

/* AITK_E_PARSE, positioned at the config's optimizer key and listing the
 * known names, when the memory model (models/cost.yaml) lacks that
 * optimizer: `predict --config` and `--config` give one verdict. `path`
 * names the file when the optimizer is ai-toolkit's default. */
aitk_status aitk_config_check_optimizer(const aitk_train_config *cfg,
                                        const aitk_cost_params *params, const char *path,
                                        aitk_str *err);

/* Warns on stderr, once per kind: the keys that change time or memory but
 * are not in the prediction (each with its reason), and the keys the reader
 * does not know (a typo such as train.batchsize is seen without -v), each
 * with file:line:col; nothing when every key was understood. */
void aitk_config_warn_ignored(const aitk_train_config *cfg, const char *path);
/* With --verbose: the keys read and known to play no part in time or memory. */
void aitk_config_list_no_effect(const aitk_train_config *cfg, const char *path);

/* The base weights' storage as the cost model counts it: unquantized, the
 * train dtype ai-toolkit loads the model in (fp32 or 16-bit); fp8 for an
 * 8-bit qtype, nf4 for a 4-bit one. */
aitk_weight_dtype aitk_config_base_storage(const aitk_train_config *cfg);
/* The text encoders' storage, the same way (quantize_te, qtype_te). */
aitk_weight_dtype aitk_config_te_storage(const aitk_train_config *cfg);
/* Bits a weight of the base (text encoders) takes in a packed uint format,
 * scales included; 0 where the storage's cost.yaml figure holds. */
double aitk_config_base_packed_bits(const aitk_train_config *cfg);
double aitk_config_te_packed_bits(const aitk_train_config *cfg);

/* The workload `cfg` describes, on the model spec it names. */
void aitk_config_workload(const aitk_train_config *cfg, const aitk_model_spec *spec,
                          aitk_workload *w);

#endif
