/* Training speeds people reported (models/reported_speeds.yaml) and the cost
 * model's prediction for each reported setup: `predict --reported`.
 *
 * This is how the model is held to the world: each row is a real job with its
 * source, the setup it ran (what the source left open is marked as assumed),
 * the reported seconds per step (and peak memory, where given) and what the
 * model predicts for the same job on the same GPU. */
#ifndef AITK_MODELS_REPORTED_H
#define AITK_MODELS_REPORTED_H

#include <stdbool.h>
#include <stdio.h>

#include "models/cost.h"
#include "models/predict_calibrate.h"
#include "models/trainers.h"

typedef struct cJSON cJSON;

/* How the text conditioning of a reported job was run. */
typedef enum aitk_reported_text {
    AITK_TEXT_DEFAULT, /* the model's ai-toolkit default */
    AITK_TEXT_CACHED,  /* encoder outputs cached: the encoders are not on the GPU */
    AITK_TEXT_RESIDENT, /* prompts encoded once, the bf16 encoders left on the GPU */
    AITK_TEXT_BF16,
    AITK_TEXT_FP8,
} aitk_reported_text;

typedef struct aitk_reported_setup {
    long resolutions[8];
    size_t n_resolutions; /* 0: the model's default */
    long batch, rank;     /* 0: the model's default */
    int base;             /* aitk_weight_dtype, or -1 for the model's default */
    aitk_reported_text text;
    int checkpointing;    /* 0 / 1, or -1 for the model's default */
    bool inference;       /* task: inference: seconds per denoising step of
                             generation, one forward pass (no LoRA, no backward) */
    const char *optimizer; /* NULL: the model's default */
    bool ema;             /* ai-toolkit train.ema_config.use_ema */
    int autocast;         /* forward under torch.autocast (accelerate's
                             mixed_precision), aitk_workload.autocast: 0 / 1,
                             or -1 for the trainer's (models/trainers.yaml) */
    bool fp16;            /* precision: fp16, aitk_workload.fp16 */
    long text_tokens;     /* 0: the trainer's (models/trainers.yaml) */
    long accumulation;    /* micro-batches a reported step holds; 0: 1 */
    /* `lora_layers`: the modules the trainer adapts, by name (a module is
     * adapted when its path holds one of them, as aitk_workload.lora_only);
     * NULL-terminated, empty: every Linear the model marks lora. */
    const char *lora_layers[17];
    double lora_bytes;    /* `lora_dtype` bf16 2 / fp32 4; 0: the trainer's */
    /* `validation_text`: the dtype the job's script loads the text encoders
     * in again for validation (aitk_weight_dtype), where it differs from its
     * trainer's (models/trainers.yaml); -2 `none`: the job validates not;
     * -1: the trainer's. */
    int validation_te;
    /* `attention_mask`: the mask the job's attention calls got
     * (aitk_attention_mask), where its settings differ from its trainer's
     * (kohya's --apply_t5_attn_mask: per_head); -1: the trainer's. */
    int attention_mask;
    /* `os`: where the job's PyTorch ran (aitk_host_os), linux unless the
     * source shows Windows (its paths, its .bat, its warnings). */
    aitk_host_os os;
} aitk_reported_setup;

/* What a memory report's source says became of the job (`outcome`). */
typedef enum aitk_reported_outcome {
    AITK_OUTCOME_RAN,      /* training ran; every timed report did */
    AITK_OUTCOME_OOM,      /* the source shows CUDA out of memory */
    AITK_OUTCOME_UNSTATED, /* a memory figure with no run on a named GPU */
} aitk_reported_outcome;

typedef struct aitk_reported_speed {
    const char *id, *source, *trainer, *model_id, *assumed;
    const aitk_gpu_spec *gpu; /* NULL only for an unstated memory report */
    /* The trainer the row is predicted with: the one its `trainer` text
     * names (models/trainers.h), or its `modelled_as` where it names none. */
    const aitk_trainer *trainer_spec;
    aitk_reported_setup setup;
    double seconds_per_step; /* 0 for a memory report that gives none */
    double peak_gb; /* decimal GB as reported; < 0 when the source gives none */
    aitk_reported_outcome outcome;
    /* `setup_unknown` of a memory report: why the settings that decide its
     * verdict cannot be known from its source (a command cut off, a config
     * not shown, an option the reporter says was missing). Its verdict is
     * shown but not counted; NULL where the setup is known. */
    const char *setup_unknown;
} aitk_reported_speed;

typedef struct aitk_reported_speeds {
    aitk_yaml_doc *doc; /* owns the strings */
    aitk_trainers *trainers; /* what each row's trainer_spec points into */
    aitk_reported_speed *items;
    size_t count;
    /* `memory_reports`: outcomes (ran, out of memory) with no step time
     * needed, judged by predict_fit's verdict (models/reported_fit.h). */
    aitk_reported_speed *memory;
    size_t n_memory;
} aitk_reported_speeds;

/* Loads models/reported_speeds.yaml; every GPU must be in `db`, every model a
 * models/<id>.yaml, every optimizer in `p` (errors name file:line:column).
 * `memory_reports` is optional; there `outcome` is oom, ran or unstated,
 * seconds_per_step optional, gpu optional for unstated rows alone, and
 * `setup_unknown` (a reason) optional for oom and ran rows. */
aitk_status aitk_reported_speeds_load(const aitk_gpudb *db, const aitk_cost_params *p,
                                      aitk_reported_speeds **out, aitk_str *err);
/* Same, from a parsed document (takes ownership of `doc`, also on error). */
aitk_status aitk_reported_speeds_from_doc(aitk_yaml_doc *doc, const aitk_gpudb *db,
                                          const aitk_cost_params *p, aitk_reported_speeds **out,
                                          aitk_str *err);
void aitk_reported_speeds_free(aitk_reported_speeds *s);

/* The workload a report describes: the model's defaults, then the setup. */
void aitk_reported_workload(const aitk_reported_speed *r, const aitk_model_spec *spec,
                            aitk_workload *w);

typedef struct aitk_reported_row {
    const aitk_reported_speed *report;
    aitk_workload workload; /* as predicted; spec NULL, optimizer cost.yaml's name */
    aitk_prediction pred; /* with the calibration's step scale applied, if any */
    double ratio;         /* predicted / reported seconds per step */
    /* The hardware's floor for the setup (aitk_cost_floor_seconds), with no
     * calibration: a reported step below it did not run this setup. */
    double floor_s;
} aitk_reported_row;

/* One row per report, in file order (rows: s->count entries). */
aitk_status aitk_reported_evaluate(const aitk_reported_speeds *s, const aitk_cost_params *p,
                                   const aitk_calibration *cal, aitk_reported_row *rows,
                                   aitk_str *err);

/* The table (with whether the time range held for each row), the count
 * within a factor 1.5, the time range's coverage in and out of sample, the
 * leave-one-source-out checks (models/reported_range.h) and each row's
 * source. AITK_E_NOMEM before anything is printed. */
aitk_status aitk_reported_print_text(FILE *out, const aitk_reported_row *rows, size_t n);
/* One paragraph under ordinary predictions: the time range that comes with
 * them (reported / predicted over the reported training jobs) and how often
 * it held, so nobody reads an uncalibrated figure as a measurement. */
aitk_status aitk_reported_print_summary(FILE *out, const aitk_reported_row *rows, size_t n,
                                        bool calibrated);
/* The same as "against_reports": {reports, min_ratio, max_ratio,
 * time_range} in `doc`. */
aitk_status aitk_reported_add_summary_json(cJSON *doc, const aitk_reported_row *rows, size_t n);
/* Adds "reported": [...] (each training row with in_time_range and
 * in_time_range_without_source), "time_range", "by_source" and
 * "fitted_settings" to `doc`. */
aitk_status aitk_reported_add_json(cJSON *doc, const aitk_reported_row *rows, size_t n);

/* "512/768/1024 px b1 r16 fp8, text cached, ckpt": the setup a row predicts
 * (appended to `o`), and the same as a JSON object (NULL on allocation). */
void aitk_reported_describe_setup(aitk_str *o, const aitk_workload *w);
cJSON *aitk_reported_setup_json(const aitk_workload *w);
/* The text listing's closing section, one report at a time: where the
 * figure comes from and what its setup assumes where the source is silent.
 * Call aitk_reported_print_sources_heading once, then _source per report. */
void aitk_reported_print_sources_heading(FILE *out);
void aitk_reported_print_source(FILE *out, const aitk_reported_speed *r);
/* The fields every row about a report starts with, speed or memory: id,
 * source, trainer, gpu (null when the report names none), model, assumed
 * and the setup `w` predicted; NULL on allocation. */
cJSON *aitk_reported_entry_json(const aitk_reported_speed *r, const aitk_workload *w);

/* The sanity bound of the cost model (issue #5): a prediction within this
 * factor of a reported speed, either way. */
#define AITK_REPORTED_SANITY_FACTOR 1.5

#endif
