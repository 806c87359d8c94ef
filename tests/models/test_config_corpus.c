/* The config corpus (tests/models/fixtures/corpus/, written for this project
 * in the shapes ai-toolkit's examples and web UI use): each file's expected
 * reading, written by hand from ai-toolkit's code at commit 27a03a9
 * (toolkit/config_modules.py, jobs/process/BaseSDTrainProcess.py,
 * extensions_built_in/sd_trainer/SDTrainer.py, toolkit/optimizer.py), not
 * from this reader's output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "models/aitk_config.h"
#include "models/cost.h"
#include "models/gpudb.h"
#include "models/spec.h"

#define CORPUS(name) AITK_SOURCE_DIR "/tests/models/fixtures/corpus/" name

typedef struct sample_expect {
    long every, prompts, steps, width, height;
    int passes;
} sample_expect;

typedef struct expect {
    const char *file;
    aitk_status st;           /* of aitk_config_read */
    const char *says;         /* in the error, or in the title */
    const char *model_id;
    const char *job;          /* NULL: "LoRA" */
    long accumulation, optimizer_every, rank; /* 0: as the base job (1, 1, 16) */
    double alpha;             /* 0: 16 */
    int base, te;             /* aitk_weight_dtype + 1; 0: fp8 (quantize: true) */
    const char *optimizer;    /* NULL: adamw8bit */
    bool preservation, ema;
    bool text_cached;         /* true: the text encoders leave the GPU */
    bool latents_uncached;    /* true: the VAE stays on the GPU */
    const sample_expect *sample; /* NULL: no sampling (no prompts) */
    const char *not_modelled;    /* NULL: nothing warned */
    const char *not_modelled2;
} expect;

#define DT(d) ((d) + 1)

static const sample_expect flux_sample = {200, 3, 30, 1024, 768, 1};
/* Chroma samples with CFG: ChromaPipeline gets negative embeds, 2 passes. */
static const sample_expect chroma_sample = {200, 3, 30, 1024, 768, 2};
/* SampleConfig defaults: every 100, 20 steps, 512 x 512. */
static const sample_expect default_sample = {100, 2, 20, 512, 512, 1};
static const sample_expect disabled_sample = {0, 3, 30, 1024, 768, 1};
/* model.use_flux_cfg: FluxWithCFGPipeline, two passes at guidance 4. */
static const sample_expect flux_cfg_sample = {200, 3, 30, 1024, 768, 2};
static const sample_expect ui_sample = {250, 2, 25, 1024, 1024, 1};
/* The web UI's defaults (defaultSampleConfig): every 250 steps, its 10
 * prompts, 30 steps, 1024 x 1024; Chroma's and OmniGen2's pipelines get
 * negative embeds with guidance 4: two passes. */
static const sample_expect ui_generated = {250, 10, 30, 1024, 1024, 1};
static const sample_expect ui_generated_cfg = {250, 10, 30, 1024, 1024, 2};

static const expect cases[] = {
    {.file = "flux_dev_lora.yaml", .says = "FLUX.1-dev", .model_id = "flux1-dev"},
    /* is_flux with another model's name_or_path is that model. */
    {.file = "flex1_is_flux.yaml", .st = AITK_E_INVAL, .says = "trains Flex.1-alpha"},
    {.file = "flux2_is_flux.yaml", .st = AITK_E_INVAL, .says = "trains FLUX.2-dev"},
    {.file = "kontext.yaml", .st = AITK_E_INVAL, .says = "trains FLUX.1-Kontext-dev"},
    {.file = "schnell.yaml", .says = "FLUX.1-schnell", .model_id = "flux1-dev",
     .not_modelled = "model.assistant_lora_path"},
    /* No network section: BaseSDTrainProcess trains the transformer itself. */
    {.file = "full_fine_tune.yaml", .says = "FLUX.1-dev", .model_id = "flux1-dev",
     .job = "full fine-tune", .rank = 4, .alpha = 1},
    {.file = "redux_adapter.yaml", .st = AITK_E_INVAL, .says = "adapter training"},
    {.file = "grpo.yaml", .st = AITK_E_INVAL, .says = "GRPO"},
    {.file = "concept_slider.yaml", .st = AITK_E_INVAL, .says = "concept slider"},
    {.file = "textual_inversion.yaml", .st = AITK_E_INVAL, .says = "textual inversion"},
    {.file = "lokr.yaml", .st = AITK_E_INVAL, .says = "network type 'lokr'"},
    {.file = "job_extract.yaml", .st = AITK_E_INVAL, .says = "job: extract is not a training"},
    /* One micro-batch a step, the optimizer every 4 (BaseSDTrainProcess.run). */
    {.file = "accumulation_steps.yaml", .says = "FLUX.1-dev", .accumulation = 1,
     .optimizer_every = 4},
    /* for b in range(gradient_accumulation): 4 micro-batches a step. */
    {.file = "accumulation_in_step.yaml", .says = "FLUX.1-dev", .accumulation = 4},
    /* NetworkConfig: rank wins over linear; linear_alpha defaults to alpha. */
    {.file = "network_rank.yaml", .says = "FLUX.1-dev", .rank = 32, .alpha = 8},
    /* Loaded in train.dtype: TrainConfig's default fp32, text encoders too. */
    {.file = "unquantized_default_dtype.yaml", .says = "FLUX.1-dev",
     .base = DT(AITK_WEIGHT_FP32), .te = DT(AITK_WEIGHT_FP32), .not_modelled = "train.dtype"},
    {.file = "unquantized_bf16.yaml", .says = "FLUX.1-dev", .base = DT(AITK_WEIGHT_BF16),
     .te = DT(AITK_WEIGHT_BF16)},
    /* ai-toolkit's uint6 packs the base and T5 alike (the transformer's
     * qtype quantizes FLUX.1's text encoder too); uint8 quantizes nothing. */
    {.file = "flux_uint6.yaml", .says = "FLUX.1-dev", .base = DT(AITK_WEIGHT_NF4),
     .te = DT(AITK_WEIGHT_NF4)},
    {.file = "flux_uint8.yaml", .says = "FLUX.1-dev", .base = DT(AITK_WEIGHT_BF16),
     .te = DT(AITK_WEIGHT_BF16)},
    /* nvfp4 (weights only) takes the packed path too. */
    {.file = "flux_nvfp4.yaml", .says = "FLUX.1-dev", .base = DT(AITK_WEIGHT_NF4),
     .te = DT(AITK_WEIGHT_NF4)},
    {.file = "layer_offloading.yaml", .says = "FLUX.1-dev", .not_modelled = "model.layer_offloading",
     .not_modelled2 = "model.layer_offloading_transformer_percent"},
    {.file = "only_if_contains.yaml", .says = "FLUX.1-dev", .rank = 128, .alpha = 128},
    {.file = "chroma_only_if_contains.yaml", .says = "Chroma", .model_id = "chroma", .rank = 128,
     .alpha = 128},
    {.file = "ignore_if_contains_empty.yaml", .says = "FLUX.1-dev"},
    {.file = "diff_output_preservation.yaml", .says = "FLUX.1-dev", .preservation = true},
    {.file = "train_text_encoder.yaml", .says = "FLUX.1-dev",
     .not_modelled = "train.train_text_encoder"},
    {.file = "ema_on.yaml", .says = "FLUX.1-dev", .ema = true},
    {.file = "ema_off.yaml", .says = "FLUX.1-dev"},
    {.file = "sample_flux.yaml", .says = "FLUX.1-dev", .sample = &flux_sample},
    {.file = "sample_chroma.yaml", .says = "Chroma", .model_id = "chroma",
     .sample = &chroma_sample},
    {.file = "sample_defaults.yaml", .says = "FLUX.1-dev", .sample = &default_sample},
    {.file = "sample_disabled.yaml", .says = "FLUX.1-dev", .sample = &disabled_sample},
    {.file = "split_model.yaml", .says = "FLUX.1-dev",
     .not_modelled = "model.split_model_over_gpus"},
    /* qtype_te is its own: a 4-bit text encoder under a bf16 base. */
    {.file = "omnigen2_qtype_te.yaml", .says = "OmniGen2", .model_id = "omnigen2",
     .base = DT(AITK_WEIGHT_BF16), .te = DT(AITK_WEIGHT_NF4)},
    /* FLUX.1's and Chroma's loaders quantize T5 with the transformer's
     * qtype (stable_diffusion_model.py load_model, chroma_model.py):
     * qtype_te plays no part, with quantize on or off. */
    {.file = "flux_te_takes_qtype.yaml", .says = "FLUX.1-dev", .base = DT(AITK_WEIGHT_NF4),
     .te = DT(AITK_WEIGHT_NF4)},
    {.file = "flux_te_only_qtype.yaml", .says = "FLUX.1-dev", .base = DT(AITK_WEIGHT_BF16),
     .te = DT(AITK_WEIGHT_NF4)},
    {.file = "chroma_te_takes_qtype.yaml", .says = "Chroma", .model_id = "chroma",
     .base = DT(AITK_WEIGHT_FP8), .te = DT(AITK_WEIGHT_FP8)},
    /* One dataset's cache_text_embeddings unloads the encoders
     * (BaseSDTrainProcess.__init__ is_caching_text_embeddings); ai-toolkit
     * refuses a job where another dataset leaves it off (validate_configs). */
    {.file = "dataset_text_cache.yaml", .says = "FLUX.1-dev", .text_cached = true},
    {.file = "dataset_text_cache_partial.yaml", .st = AITK_E_INVAL,
     .says = "does not set cache_text_embeddings"},
    /* DatasetConfig.__init__: augments turn latent caching off. */
    {.file = "dataset_augments.yaml", .says = "FLUX.1-dev", .latents_uncached = true},
    {.file = "sample_flux_cfg.yaml", .says = "FLUX.1-dev", .sample = &flux_cfg_sample},
    /* TrainConfig.__init__: ema_config None is no EMA. */
    {.file = "ema_null.yaml", .says = "FLUX.1-dev"},
    /* get_optimizer: any name starting with "prodigy" is Prodigy. */
    {.file = "prodigyopt.yaml", .says = "FLUX.1-dev", .optimizer = "prodigy"},
    /* ai-toolkit's own optimizers (toolkit/optimizer.py), which the web UI
     * offers; prodigy8bit is matched before prodigy. */
    {.file = "optimizer_prodigy8bit.yaml", .says = "FLUX.1-dev", .optimizer = "prodigy8bit"},
    {.file = "optimizer_automagic.yaml", .says = "FLUX.1-dev", .optimizer = "automagic"},
    {.file = "optimizer_automagic2.yaml", .says = "FLUX.1-dev", .optimizer = "automagic2"},
    {.file = "optimizer_automagic3.yaml", .says = "FLUX.1-dev", .optimizer = "automagic3"},
    /* The model is refused before its qtype is judged. */
    {.file = "qwen_image_uint4.yaml", .st = AITK_E_INVAL, .says = "trains Qwen-Image"},
    {.file = "wan22_uint4.yaml", .st = AITK_E_INVAL, .says = "trains Wan 2.2"},
    {.file = "lumina2.yaml", .st = AITK_E_INVAL, .says = "trains Lumina-Image 2.0"},
    {.file = "sd15_no_arch.yaml", .st = AITK_E_INVAL, .says = "trains Stable Diffusion 1.x"},
    {.file = "ui_job_flux.yaml", .says = "FLUX.1-dev", .rank = 32, .alpha = 32,
     .sample = &ui_sample},
    {.file = "ui_job_flex1_default.yaml", .st = AITK_E_INVAL, .says = "trains Flex.1-alpha"},
    /* .job_config.json as the web UI writes it for a new job left at its
     * defaults once the model is picked (tests/models/aitk_ui_jobs.sh runs
     * the UI's own code, commit 27a03a9): rank and alpha 32, adamw8bit,
     * each model's quantize and quantize_te (options.tsx): qfloat8, but
     * OmniGen2's transformer unquantized, in train.dtype bf16. */
    {.file = "ui_generated_flux.json", .says = "FLUX.1-dev", .model_id = "flux1-dev", .rank = 32,
     .alpha = 32, .sample = &ui_generated},
    {.file = "ui_generated_chroma.json", .says = "Chroma", .model_id = "chroma", .rank = 32,
     .alpha = 32, .sample = &ui_generated_cfg},
    {.file = "ui_generated_omnigen2.json", .says = "OmniGen2", .model_id = "omnigen2", .rank = 32,
     .alpha = 32, .base = DT(AITK_WEIGHT_BF16), .sample = &ui_generated_cfg},
};

static void check_sample(const expect *e, const aitk_train_config *c)
{
    const sample_expect none = {0};
    const sample_expect *s = e->sample ? e->sample : &none;
    if (!e->sample && c->sample_prompts == 0)
        return;
    if (c->sample_every != s->every || c->sample_prompts != s->prompts ||
        (s->prompts && (c->sample_steps != s->steps || c->sample_width != s->width ||
                        c->sample_height != s->height || c->sample_passes != s->passes)))
        fail_msg("%s: sampling every %ld, %ld prompts, %ld steps, %ldx%ld, %d passes", e->file,
                 c->sample_every, c->sample_prompts, c->sample_steps, c->sample_width,
                 c->sample_height, c->sample_passes);
}

static void check_warnings(const expect *e, const aitk_train_config *c)
{
    const char *nm = aitk_str_cstr(&c->not_modelled);
    if (!e->not_modelled && c->n_not_modelled)
        fail_msg("%s: warned as not modelled: %s", e->file, nm);
    if (e->not_modelled && !strstr(nm, e->not_modelled))
        fail_msg("%s: '%s' not warned about: %s", e->file, e->not_modelled, nm);
    if (e->not_modelled2 && !strstr(nm, e->not_modelled2))
        fail_msg("%s: '%s' not warned about: %s", e->file, e->not_modelled2, nm);
    /* The corpus writes only keys ai-toolkit reads. */
    if (c->n_unknown)
        fail_msg("%s: unknown keys: %s", e->file, aitk_str_cstr(&c->unknown));
}

static void check_reading(const expect *e, const aitk_train_config *c)
{
    if (!strstr(c->title, e->says))
        fail_msg("%s: title '%s' lacks '%s'", e->file, c->title, e->says);
    if (e->model_id)
        assert_string_equal(c->model_id, e->model_id);
    assert_string_equal(c->job, e->job ? e->job : "LoRA");
    if (c->accumulation != (e->accumulation ? e->accumulation : 1) ||
        c->optimizer_every != (e->optimizer_every ? e->optimizer_every : 1))
        fail_msg("%s: accumulation %ld, optimizer every %ld", e->file, c->accumulation,
                 c->optimizer_every);
    if (c->rank != (e->rank ? e->rank : 16) || c->alpha != (e->alpha ? e->alpha : 16))
        fail_msg("%s: rank %ld alpha %g", e->file, c->rank, c->alpha);
    const aitk_weight_dtype base = e->base ? e->base - 1 : AITK_WEIGHT_FP8;
    const aitk_weight_dtype te = e->te ? e->te - 1 : AITK_WEIGHT_FP8;
    if (aitk_config_base_storage(c) != base || aitk_config_te_storage(c) != te)
        fail_msg("%s: base %s, text encoders %s", e->file,
                 aitk_weight_dtype_name(aitk_config_base_storage(c)),
                 aitk_weight_dtype_name(aitk_config_te_storage(c)));
    assert_string_equal(c->optimizer, e->optimizer ? e->optimizer : "adamw8bit");
    if (c->ema != e->ema)
        fail_msg("%s: use_ema read as %d", e->file, c->ema);
    if (c->preservation != e->preservation)
        fail_msg("%s: diff_output_preservation read as %d", e->file, c->preservation);
    if (e->text_cached && !c->cache_text)
        fail_msg("%s: text embeddings not read as cached", e->file);
    if (e->latents_uncached && c->cache_latents)
        fail_msg("%s: latents read as cached", e->file);
    check_sample(e, c);
    check_warnings(e, c);
}

static void test_corpus(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const expect *e = &cases[i];
        char path[512];
        snprintf(path, sizeof path, "%s", CORPUS("") );
        strncat(path, e->file, sizeof path - strlen(path) - 1);
        aitk_train_config c;
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_config_read(path, &c, &err);
        if (st != e->st)
            fail_msg("%s: status %s, expected %s (%s)", e->file, aitk_status_name(st),
                     aitk_status_name(e->st), aitk_str_cstr(&err));
        if (st) {
            /* Refused by name, at a file:line:col of the config. */
            if (!strstr(aitk_str_cstr(&err), e->says) || !strstr(aitk_str_cstr(&err), e->file))
                fail_msg("%s: '%s' lacks '%s' or the file", e->file, aitk_str_cstr(&err),
                         e->says);
        } else {
            check_reading(e, &c);
            aitk_config_free(&c);
        }
        aitk_str_free(&err);
    }
}

/* A full fine-tune is read (its keys are said), then refused by name. */
static void test_full_fine_tune_refused(void **state)
{
    (void)state;
    aitk_train_config c;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_config_read(CORPUS("full_fine_tune.yaml"), &c, &err), AITK_OK);
    assert_int_equal(aitk_config_check_job(&c, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "full fine-tune of FLUX.1-dev"));
    assert_non_null(strstr(aitk_str_cstr(&err), "full_fine_tune.yaml:7:7"));
    aitk_config_free(&c);
    aitk_str_free(&err);
}

/* Every arch ai-toolkit's web UI offers (ui/src/app/jobs/new/options.tsx at
 * commit 27a03a9, copied by hand) is named: predicted (flux, chroma,
 * omnigen2) or refused by its model's name, never "not a model known". */
static void test_ui_arches_named(void **state)
{
    (void)state;
    static const char *const arches[] = {
        "ace_step_15", "ace_step_15_xl", "anima", "boogu_image", "boogu_image_edit", "chroma",
        "ernie_image", "flex1", "flex2", "flux", "flux2", "flux2_klein_4b", "flux2_klein_9b",
        "flux_kontext", "hidream", "hidream_e1", "hidream_o1", "ideogram4", "krea2",
        "krea2:o_edit", "krea2:o_edit_turbo", "krea2:turbo", "ltx2", "ltx2.3", "ltx2.5",
        "lumina2", "mageflow", "mageflow_edit", "minimax_h3", "minimax_h3_ref2va",
        "nucleus_image", "omnigen2", "prx_pixel", "qwen_image", "qwen_image:2512",
        "qwen_image_edit", "qwen_image_edit_plus", "qwen_image_edit_plus:2511", "sd15", "sdxl",
        "wan21:14b", "wan21:1b", "wan21_i2v:14b", "wan21_i2v:14b480p", "wan22_14b:t2v",
        "wan22_14b_i2v", "wan22_5b", "zeta_chroma", "zimage", "zimage:deturbo", "zimage:turbo",
        "zimage_l2p"};
    for (size_t i = 0; i < sizeof arches / sizeof *arches; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "config: {process: [{network: {type: lora}, model: {arch: \"%s\"}}]}\n",
                 arches[i]);
        aitk_train_config c;
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_config_parse("ui.yaml", text, strlen(text), &c, &err);
        const bool modelled = !strcmp(arches[i], "flux") || !strcmp(arches[i], "chroma") ||
                              !strcmp(arches[i], "omnigen2");
        if (modelled ? st != AITK_OK
                     : st != AITK_E_INVAL || !strstr(aitk_str_cstr(&err), "this config trains "))
            fail_msg("arch %s: %s %s", arches[i], aitk_status_name(st), aitk_str_cstr(&err));
        if (!st)
            aitk_config_free(&c);
        aitk_str_free(&err);
    }
}

/* Config text in messages is shown with its control characters escaped:
 * an ESC in arch or in a key reaches no terminal raw. */
static void test_control_characters(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "config: {process: [{model: {arch: \"x\\e[2Jy\"}, network: {type: lora}}]}\n",
        "job: \"ex\\etension\"\nconfig: {process: [{model: {is_flux: true}}]}\n",
    };
    for (size_t i = 0; i < 2; i++) {
        aitk_train_config c;
        aitk_str err = AITK_STR_INIT;
        assert_int_equal(aitk_config_parse("cc.yaml", texts[i], strlen(texts[i]), &c, &err),
                         AITK_E_INVAL);
        if (strchr(aitk_str_cstr(&err), 0x1b) || !strstr(aitk_str_cstr(&err), "\\x1b"))
            fail_msg("case %zu: '%s'", i, aitk_str_cstr(&err));
        aitk_str_free(&err);
    }
}

/* A corpus file predicted on one GPU, as predict --config does it. */
typedef struct predicted {
    aitk_workload w;
    aitk_prediction p;
    aitk_model_spec *spec;
    aitk_train_config cfg; /* w points into it */
} predicted;

static void predicted_free(predicted *p)
{
    aitk_config_free(&p->cfg);
    aitk_model_spec_free(p->spec);
}

/* A workload predicted on one GPU, with the project's cost and GPU data. */
static void predict_workload(const aitk_workload *w, const char *gpu, aitk_prediction *out,
                             const char *what)
{
    aitk_cost_params *params = NULL;
    aitk_gpudb *db = NULL;
    const aitk_gpu_spec *g = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_cost_params_load(&params, &err) || aitk_gpudb_load(&db, &err) ||
        aitk_gpudb_find(db, gpu, &g, &err) || aitk_cost_predict(w, params, g, out, &err))
        fail_msg("%s: %s", what, aitk_str_cstr(&err));
    aitk_cost_params_free(params);
    aitk_gpudb_free(db);
    aitk_str_free(&err);
}

static void predict_file(const char *file, const char *gpu, predicted *out)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", CORPUS(""), file);
    aitk_train_config *c = &out->cfg;
    aitk_str err = AITK_STR_INIT;
    if (aitk_config_read(path, c, &err) ||
        aitk_model_spec_load(c->model_id, false, &out->spec, &err))
        fail_msg("%s: %s", file, aitk_str_cstr(&err));
    aitk_str_free(&err);
    aitk_config_workload(c, out->spec, &out->w);
    predict_workload(&out->w, gpu, &out->p, file);
}

static void near(double got, double want, double tol, const char *what)
{
    if (!(got >= want * (1 - tol) && got <= want * (1 + tol)))
        fail_msg("%s: %g, expected %g", what, got, want);
}

/* gradient_accumulation_steps: 4 is one micro-batch a step, the same step
 * as without it; gradient_accumulation: 4 is four micro-batches, each with
 * its passes and its share of per-micro-batch overhead: 4x the step. */
static void test_accumulation_time(void **state)
{
    (void)state;
    predicted one, steps, in_step;
    predict_file("flux_dev_lora.yaml", "RTX 4090", &one);
    predict_file("accumulation_steps.yaml", "RTX 4090", &steps);
    predict_file("accumulation_in_step.yaml", "RTX 4090", &in_step);
    near(steps.p.step_s, one.p.step_s, 1e-9, "gradient_accumulation_steps: 4, s/step");
    near(in_step.p.step_s, 4 * one.p.step_s, 1e-9, "gradient_accumulation: 4, s/step");
    predicted_free(&one);
    predicted_free(&steps);
    predicted_free(&in_step);
}

/* quantize: false loads the transformer and encoders in train.dtype:
 * fp32 by default is twice the bf16 bytes (the Linears' weights; norms
 * and biases, a few MB, stay counted at 2 bytes). */
static void test_unquantized_dtype_memory(void **state)
{
    (void)state;
    predicted fp32, bf16;
    predict_file("unquantized_default_dtype.yaml", "H200 SXM", &fp32);
    predict_file("unquantized_bf16.yaml", "H200 SXM", &bf16);
    near(fp32.p.memory.bytes[AITK_PLAN_BASE_WEIGHTS],
         2 * bf16.p.memory.bytes[AITK_PLAN_BASE_WEIGHTS], 0.002, "fp32 base bytes");
    near(fp32.p.memory.bytes[AITK_PLAN_TEXT_ENCODERS],
         2 * bf16.p.memory.bytes[AITK_PLAN_TEXT_ENCODERS], 1e-9, "fp32 text encoders");
    /* FLUX.1-dev's 11.9 B weights at 4 bytes (flux1-dev.yaml published_params). */
    near(fp32.p.memory.bytes[AITK_PLAN_BASE_WEIGHTS], 11.9e9 * 4, 0.01, "fp32 base, bytes");
    predicted_free(&fp32);
    predicted_free(&bf16);
}

/* ai-toolkit's uint2 to uint7 store k bits a weight and, for each 64, a
 * bf16 scale and a uint8 zero point (toolkit/util/uintx_quant.py @27a03a9):
 * uint6 is 6.375 bits, so FLUX.1-dev's 11.9 B weights take 11.9e9 x
 * 6.375 / 8 bytes, and its T5 0.797 of the bf16 run's bytes. uint8 leaves
 * the base unquantized: the bf16 run's bytes. Before, uint6 was refused and
 * uint8 counted as one byte a weight. */
static void test_uint_qtype_memory(void **state)
{
    (void)state;
    predicted u6, u8, bf16;
    predict_file("flux_uint6.yaml", "H200 SXM", &u6);
    predict_file("flux_uint8.yaml", "H200 SXM", &u8);
    predict_file("unquantized_bf16.yaml", "H200 SXM", &bf16);
    near(u6.p.memory.bytes[AITK_PLAN_BASE_WEIGHTS], 11.9e9 * 6.375 / 8, 0.01, "uint6 base");
    near(u6.p.memory.bytes[AITK_PLAN_TEXT_ENCODERS],
         bf16.p.memory.bytes[AITK_PLAN_TEXT_ENCODERS] * 6.375 / 16, 1e-9, "uint6 T5 and CLIP");
    near(u8.p.memory.bytes[AITK_PLAN_BASE_WEIGHTS], bf16.p.memory.bytes[AITK_PLAN_BASE_WEIGHTS],
         1e-12, "uint8 base");
    /* Suggesting an NF4 base instead (predict's "fits with --quantize nf4")
     * counts bitsandbytes' 0.515625 bytes a weight (cost.yaml), not uint6's. */
    aitk_workload x = u6.w;
    aitk_workload_set_base(&x, AITK_WEIGHT_NF4);
    aitk_prediction nf4;
    predict_workload(&x, "H200 SXM", &nf4, "flux_uint6.yaml with an NF4 base");
    near(nf4.memory.bytes[AITK_PLAN_BASE_WEIGHTS], 11.9e9 * 0.515625, 0.01, "NF4 instead");
    /* A uint Linear runs F.linear on a dequantized bf16 copy, which autograd
     * keeps for its input's gradient (bitsandbytes keeps the packed weight).
     * Without checkpointing every block keeps them all: FLUX.1-dev's 19
     * double blocks hold 2 x (4 x 3072^2 + 2 x 3072 x 12288) weights outside
     * the modulation, its 38 single blocks 3072 x 21504 + 15360 x 3072,
     * and the final proj_out 3072 x 64: 8,606,908,416, 2 bytes each. With
     * checkpointing, one block at a time: at most a double block's
     * 226,492,416. */
    aitk_workload no_ckpt = u6.w, no_ckpt_bnb;
    no_ckpt.checkpointing = false;
    no_ckpt_bnb = no_ckpt;
    no_ckpt_bnb.base_packed_bits = 0;
    aitk_prediction kept, bnb_kept;
    predict_workload(&no_ckpt, "H200 SXM", &kept, "flux_uint6.yaml without checkpointing");
    predict_workload(&no_ckpt_bnb, "H200 SXM", &bnb_kept, "the same with bitsandbytes' NF4");
    near(kept.memory.bytes[AITK_PLAN_CHECKPOINTS] - bnb_kept.memory.bytes[AITK_PLAN_CHECKPOINTS],
         8606908416.0 * 2, 1e-9, "dequantized weights kept without checkpointing");
    /* nvfp4: a 4-bit code a weight and an e4m3 scale for each 16
     * (toolkit/util/convrot_quant.py quantize_nvfp4): 4.5 bits. */
    predicted fp4;
    predict_file("flux_nvfp4.yaml", "H200 SXM", &fp4);
    near(fp4.p.memory.bytes[AITK_PLAN_BASE_WEIGHTS], 11.9e9 * 4.5 / 8, 0.01, "nvfp4 base");
    predicted_free(&fp4);
    aitk_workload ckpt_bnb = u6.w;
    ckpt_bnb.base_packed_bits = 0;
    aitk_prediction bnb;
    predict_workload(&ckpt_bnb, "H200 SXM", &bnb, "flux_uint6.yaml with bitsandbytes' NF4");
    const double grew =
        u6.p.memory.bytes[AITK_PLAN_LIVE_BLOCK] - bnb.memory.bytes[AITK_PLAN_LIVE_BLOCK];
    if (!(grew > 113246208.0 * 2 * 0.999 && grew <= 226492416.0 * 2 * 1.001))
        fail_msg("checkpointed, the live block grew by %g bytes", grew);
    predicted_free(&u6);
    predicted_free(&u8);
    predicted_free(&bf16);
}

/* EMA (toolkit/ema.py): a clone of each trained parameter, in its dtype
 * (bf16 here, 2 bytes), beside the optimizer's own state. */
static void test_ema_memory(void **state)
{
    (void)state;
    predicted on, off;
    predict_file("ema_on.yaml", "RTX 4090", &on);
    predict_file("ema_off.yaml", "RTX 4090", &off);
    near(on.p.memory.bytes[AITK_PLAN_OPTIMIZER] - off.p.memory.bytes[AITK_PLAN_OPTIMIZER],
         on.p.work.lora_params * 2, 1e-9, "EMA copy bytes");
    near(on.p.step_s, off.p.step_s, 1e-9, "EMA step time");
    predicted_free(&on);
    predicted_free(&off);
}

/* ai-toolkit's optimizers' state per LoRA parameter, from their code:
 * Prodigy8bit four int8 tensors (s, p0, exp_avg, exp_avg_sq); Automagic an
 * int8 lr mask and a bool polarity, Automagic2 the bool polarity alone,
 * Automagic3 8 one-bit sign planes (one byte), each of the three with the
 * same factored second moment. */
static void test_aitk_optimizer_memory(void **state)
{
    (void)state;
    predicted p8, a1, a2, a3;
    predict_file("optimizer_prodigy8bit.yaml", "RTX 4090", &p8);
    predict_file("optimizer_automagic.yaml", "RTX 4090", &a1);
    predict_file("optimizer_automagic2.yaml", "RTX 4090", &a2);
    predict_file("optimizer_automagic3.yaml", "RTX 4090", &a3);
    const double n = p8.p.work.lora_params;
    near(p8.p.memory.bytes[AITK_PLAN_OPTIMIZER], 4 * n, 1e-9, "Prodigy8bit state");
    near(a1.p.memory.bytes[AITK_PLAN_OPTIMIZER] - a2.p.memory.bytes[AITK_PLAN_OPTIMIZER], n,
         1e-9, "Automagic's int8 lr mask");
    near(a3.p.memory.bytes[AITK_PLAN_OPTIMIZER], a2.p.memory.bytes[AITK_PLAN_OPTIMIZER], 1e-12,
         "Automagic3 against Automagic2");
    if (!(a2.p.memory.bytes[AITK_PLAN_OPTIMIZER] > n))
        fail_msg("Automagic2: the factored moment missing (%g bytes for %g parameters)",
                 a2.p.memory.bytes[AITK_PLAN_OPTIMIZER], n);
    predicted_free(&p8);
    predicted_free(&a1);
    predicted_free(&a2);
    predicted_free(&a3);
}

/* diff_output_preservation: the preservation prediction keeps its graph for
 * the one backward (loss = loss + preservation_loss), like a doubled batch,
 * and the prior prediction adds a forward without grad. */
static void test_preservation(void **state)
{
    (void)state;
    predicted dop, plain;
    predict_file("diff_output_preservation.yaml", "H200 SXM", &dop);
    predict_file("flux_dev_lora.yaml", "H200 SXM", &plain);
    plain.w.batch = 2;
    aitk_cost_params *params = NULL;
    aitk_gpudb *db = NULL;
    const aitk_gpu_spec *g = NULL;
    aitk_prediction doubled;
    assert_int_equal(aitk_cost_params_load(&params, NULL), AITK_OK);
    assert_int_equal(aitk_gpudb_load(&db, NULL), AITK_OK);
    assert_int_equal(aitk_gpudb_find(db, "H200 SXM", &g, NULL), AITK_OK);
    assert_int_equal(aitk_cost_predict(&plain.w, params, g, &doubled, NULL), AITK_OK);
    near(dop.p.memory.total, doubled.memory.total, 1e-9, "preservation peak");
    /* A forward of one sample is about an eighth of a checkpointed step of
     * two (forward, recompute, backward at twice the forward's work). */
    if (!(dop.p.step_s > doubled.step_s * 1.05 && dop.p.step_s < doubled.step_s * 1.25))
        fail_msg("preservation step %g s; a doubled batch %g s plus a forward", dop.p.step_s,
                 doubled.step_s);
    aitk_cost_params_free(params);
    aitk_gpudb_free(db);
    predicted_free(&dop);
    predicted_free(&plain);
}

/* One forward pass of w's model on g at `resolution`, batch `batch`. */
static double forward_s(const aitk_workload *w, const char *gpu, long resolution, long batch)
{
    aitk_cost_params *params = NULL;
    aitk_gpudb *db = NULL;
    const aitk_gpu_spec *g = NULL;
    aitk_prediction fwd;
    assert_int_equal(aitk_cost_params_load(&params, NULL), AITK_OK);
    assert_int_equal(aitk_gpudb_load(&db, NULL), AITK_OK);
    assert_int_equal(aitk_gpudb_find(db, gpu, &g, NULL), AITK_OK);
    aitk_workload f = *w;
    f.forward_only = true;
    f.cache_text = true;
    f.batch = batch;
    aitk_workload_set_resolution(&f, resolution);
    assert_int_equal(aitk_cost_predict(&f, params, g, &fwd, NULL), AITK_OK);
    aitk_cost_params_free(params);
    aitk_gpudb_free(db);
    return fwd.step_s;
}

/* Sampling per 1000 steps: 1000 / sample_every rounds of images x steps x
 * passes, each a forward at the sample's area; Chroma's CFG doubles it. */
static void test_sampling_time(void **state)
{
    (void)state;
    predicted flux, chroma, off, none;
    predict_file("sample_flux.yaml", "RTX 4090", &flux);
    predict_file("sample_chroma.yaml", "RTX 4090", &chroma);
    predict_file("sample_disabled.yaml", "RTX 4090", &off);
    predict_file("flux_dev_lora.yaml", "RTX 4090", &none);
    assert_true(off.p.sample_s_per_1000 == 0 && none.p.sample_s_per_1000 == 0);
    /* 1024 x 768 is 3072 patches of 16 px: the square of that area is 880 px
     * (55 patches a side, 3025) to the nearest 16. */
    assert_int_equal(flux.w.n_sample_groups, 1);
    assert_int_equal(flux.w.sample_groups[0].resolution, 880);
    near(flux.p.sample_s_per_1000, 1000.0 / 200 * 3 * 30 * forward_s(&flux.w, "RTX 4090", 880, 1),
         1e-9, "FLUX sampling");
    /* Sampling is not in the step, and it is in the minutes per 1000. */
    near(flux.p.step_s, none.p.step_s, 1e-9, "the step without sampling");
    if (!(chroma.p.sample_s_per_1000 > flux.p.sample_s_per_1000))
        fail_msg("Chroma's two passes a step should cost more than FLUX's one");
    predicted_free(&flux);
    predicted_free(&chroma);
    predicted_free(&off);
    predicted_free(&none);
}

/* A sample's own width, height and sample_steps replace the block's
 * (SampleItem.__init__): of four images, two 512 px squares of the block's
 * 30 steps, one of 10 steps, and one at the block's 1024 x 768 (880 px). */
static void test_sample_own_sizes(void **state)
{
    (void)state;
    predicted own;
    predict_file("sample_own_sizes.yaml", "RTX 4090", &own);
    assert_int_equal(own.w.n_sample_groups, 3);
    const aitk_sample_group want[] = {{2, 30, 512}, {1, 30, 880}, {1, 10, 512}};
    for (size_t i = 0; i < 3; i++)
        if (own.w.sample_groups[i].images != want[i].images ||
            own.w.sample_groups[i].steps != want[i].steps ||
            own.w.sample_groups[i].resolution != want[i].resolution)
            fail_msg("group %zu: %ld image(s) of %ld steps at %ld px", i,
                     own.w.sample_groups[i].images, own.w.sample_groups[i].steps,
                     own.w.sample_groups[i].resolution);
    const double f512 = forward_s(&own.w, "RTX 4090", 512, 1);
    const double f880 = forward_s(&own.w, "RTX 4090", 880, 1);
    near(own.p.sample_s_per_1000, 1000.0 / 200 * (2 * 30 * f512 + 30 * f880 + 10 * f512), 1e-9,
         "sampling by size");
    predicted_free(&own);
}

/* train.validation_config: one of two items has an image (the other is
 * skipped, as setup_validation skips it), predicted as one batch of its 3
 * sigmas at 1024 px every 2 steps: half such a pass joins each step. The
 * web UI's card as it opens (one item, no image) validates nothing. */
static void test_validation_loss_time(void **state)
{
    (void)state;
    predicted val, empty, none;
    predict_file("validation_loss.yaml", "RTX 4090", &val);
    predict_file("validation_ui_empty.yaml", "RTX 4090", &empty);
    predict_file("flux_dev_lora.yaml", "RTX 4090", &none);
    assert_int_equal(val.cfg.val_loss_items, 1);
    assert_int_equal(val.cfg.val_loss_sigmas, 3);
    assert_int_equal(val.cfg.val_loss_every, 2);
    assert_int_equal(val.cfg.val_loss_resolution, 1024);
    const double pass = forward_s(&val.w, "RTX 4090", 1024, 3);
    near(val.p.val_loss_s, pass / 2, 1e-9, "the validation loss a step");
    near(val.p.step_s, none.p.step_s + pass / 2, 1e-9, "the step with the validation loss");
    near(empty.p.step_s, none.p.step_s, 1e-12, "no item with an image");
    assert_true(empty.p.val_loss_s == 0);
    predicted_free(&val);
    predicted_free(&empty);
    predicted_free(&none);
}

/* ai-toolkit README's two-layer snippet ("Training Specific Layers"):
 * rank 128 on the two single blocks' proj_out only (in: hidden + mlp =
 * 3072 + 12288, out: 3072), so 128 x (15360 + 3072) x 2 = 4,718,592 LoRA
 * parameters. The two layers fit an RTX 4090; every layer at rank 160
 * does not (at rank 128 every layer comes within 0.1 GiB of the card's
 * usable memory, too close to test a verdict on). */
static void test_only_if_contains(void **state)
{
    (void)state;
    predicted two;
    predict_file("only_if_contains.yaml", "RTX 4090", &two);
    assert_true(two.p.work.lora_params == 4718592.0);
    assert_true(two.p.fits);
    assert_true(aitk_workload_filter_applies(&two.w));
    predicted all = two;
    aitk_cost_params *params = NULL;
    aitk_gpudb *db = NULL;
    const aitk_gpu_spec *g = NULL;
    assert_int_equal(aitk_cost_params_load(&params, NULL), AITK_OK);
    assert_int_equal(aitk_gpudb_load(&db, NULL), AITK_OK);
    assert_int_equal(aitk_gpudb_find(db, "RTX 4090", &g, NULL), AITK_OK);
    all.w.lora_only = NULL;
    all.w.rank = 160;
    assert_int_equal(aitk_cost_predict(&all.w, params, g, &all.p, NULL), AITK_OK);
    assert_false(all.p.fits);
    /* ignore_if_contains: every single block's Linears left out. */
    static const char *const no_single[] = {"transformer.single_transformer_blocks.", NULL};
    predicted dbl = two;
    dbl.w.lora_only = NULL;
    dbl.w.lora_ignore = no_single;
    dbl.w.rank = 16;
    assert_int_equal(aitk_cost_predict(&dbl.w, params, g, &dbl.p, NULL), AITK_OK);
    /* Double blocks: 2 x 6h x (h + 6h)... counted by hand per Linear:
     * mod 2 x (3072 + 18432), qkv 6 x 6144, out 2 x 6144, mlp 4 x 15360,
     * times 19 blocks, times rank 16. */
    const double per_block = 2 * (3072 + 18432) + 6 * 6144 + 2 * 6144 + 4 * 15360;
    assert_true(dbl.p.work.lora_params == 16 * 19 * per_block);
    aitk_cost_params_free(params);
    aitk_gpudb_free(db);
    predicted_free(&two);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_full_fine_tune_refused),
        cmocka_unit_test(test_control_characters),
        cmocka_unit_test(test_ui_arches_named),
        cmocka_unit_test(test_accumulation_time),
        cmocka_unit_test(test_unquantized_dtype_memory),
        cmocka_unit_test(test_uint_qtype_memory),
        cmocka_unit_test(test_ema_memory),
        cmocka_unit_test(test_aitk_optimizer_memory),
        cmocka_unit_test(test_preservation),
        cmocka_unit_test(test_sampling_time),
        cmocka_unit_test(test_sample_own_sizes),
        cmocka_unit_test(test_validation_loss_time),
        cmocka_unit_test(test_only_if_contains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
