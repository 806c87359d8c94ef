/* The trainers a job can be run by (models/trainers.yaml): ai-toolkit, kohya
 * sd-scripts, the diffusers examples and SimpleTuner, and what each changes
 * in the cost of the same LoRA job: the T5 tokens a prompt is padded to, what
 * an fp8 base is (quanto, a plain cast, torchao's fp8 compute), the default
 * optimizer and what one step is. `predict --trainer` and the reported rows
 * apply them to a workload. */
#ifndef AITK_MODELS_TRAINERS_H
#define AITK_MODELS_TRAINERS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"
#include "common/yaml.h"
#include "models/cost.h"

/* A figure the trainer's code gives one model: its prompts' T5 tokens, an
 * elementwise backward factor. */
typedef struct aitk_trainer_figure {
    const char *model_id;
    double value;
} aitk_trainer_figure;

typedef struct aitk_trainer {
    const char *id, *title;
    const char *aliases[8]; /* NULL-terminated */
    aitk_trainer_figure text[8]; /* T5 tokens, whole numbers */
    size_t n_text;
    aitk_fp8_path fp8;
    const char *optimizer; /* NULL: the model's example's */
    /* Bytes a LoRA parameter (and its gradient) takes where the trainer
     * fixes its dtype (`lora_dtype`: kohya keeps the network in fp32); 0:
     * the workload's default. */
    double lora_bytes;
    /* A reported step is one optimizer step of `accumulation` micro-batches
     * (true for every trainer in the file; a trainer that counted
     * micro-batches would set it false). */
    bool optimizer_steps;
    /* The Linear layers the trainer adapts when a job names none
     * (`lora_layers`: module-name parts, NULL-terminated), for the models
     * whose text_tokens it lists (the names are those models' modules);
     * empty: every Linear, as ai-toolkit and kohya do. */
    const char *lora_layers[17];
    /* Validation between steps that loads the text encoders again
     * (`validation_resolution` and `validation_text`, given together): the
     * generation's square size and the encoders' dtype; 0: none modelled. */
    long validation_resolution;
    aitk_weight_dtype validation_te_dtype;
    /* `autocast`: the trainer runs the model's forward under torch.autocast
     * (aitk_workload.autocast); false where absent. */
    bool autocast;
    /* `cached_text: resident`: a prompt encoded once leaves the text
     * encoders on the GPU in bf16 for the whole run (aitk_workload
     * te_resident); false (`unloaded`, or absent): they leave the GPU. */
    bool text_resident;
    /* `elementwise_bwd_factor`, by model: the elementwise backward's bytes
     * over the forward's in the block code the trainer runs for it
     * (measured op by op); a model not listed keeps cost.yaml's. */
    aitk_trainer_figure bwd_factor[8];
    size_t n_bwd_factor;
    /* `saved_per_token` (and `saved_per_token_autocast`): by model and block
     * group name, what the trainer's own block code saves for the backward,
     * measured op by op, where it is not the model's spec's code. */
    struct {
        const char *model_id, *group;
        double plain, autocast;
    } saved[8];
    size_t n_saved;
    /* `kernels`: by model and block group name, what a block launches in
     * the trainer's own code with its own LoRA (forward, backward, and the
     * two under autocast), counted op by op, and the Linear modules that
     * code has in the block (0: as many as the model's spec lists). */
    struct {
        const char *model_id, *group;
        double counts[5];
    } kernels[8];
    size_t n_kernels;
    /* `not_modelled`, by model: what the trainer's code does to that model
     * that the cost model does not count, in words, for the prediction to
     * say beside its figures. */
    struct {
        const char *model_id, *text;
    } not_modelled[8];
    size_t n_not_modelled;
    /* `attention_mask`, by model: the boolean mask the trainer's code gives
     * every attention call of that model (aitk_attention_mask); a model not
     * listed gets none. */
    struct {
        const char *model_id;
        aitk_attention_mask kind;
    } masks[8];
    size_t n_masks;
} aitk_trainer;

typedef struct aitk_trainers {
    aitk_yaml_doc *doc; /* owns the strings */
    aitk_trainer items[8];
    size_t count;
    const aitk_trainer *fallback; /* `default:` */
} aitk_trainers;

/* Loads models/trainers.yaml (errors name file:line:column). */
aitk_status aitk_trainers_load(aitk_trainers **out, aitk_str *err);
/* Same, from a parsed document (takes ownership of `doc`, also on error). */
aitk_status aitk_trainers_from_doc(aitk_yaml_doc *doc, aitk_trainers **out, aitk_str *err);
void aitk_trainers_free(aitk_trainers *t);

/* By id, ignoring case; NULL when none. */
const aitk_trainer *aitk_trainers_find(const aitk_trainers *t, const char *id);
/* The trainer whose alias a report's free-text `trainer` contains
 * ("fluxgym (kohya sd-scripts)" is kohya), ignoring case; NULL when none. */
const aitk_trainer *aitk_trainers_match(const aitk_trainers *t, const char *text);
/* Whether the file gives t's text tokens for model_id (a trainer without
 * an entry for a model leaves it the model's own figure). */
bool aitk_trainer_has_model(const aitk_trainer *t, const char *model_id);
/* "ai-toolkit|kohya|diffusers|simpletuner", appended to `o`. */
aitk_status aitk_trainers_names(const aitk_trainers *t, aitk_str *o);

/* The trainer's settings on a workload made for w->spec: text tokens, the
 * fp8 path, its validation stage and, where it has one, its default
 * optimizer. */
void aitk_workload_set_trainer(aitk_workload *w, const aitk_trainer *t);

#endif
