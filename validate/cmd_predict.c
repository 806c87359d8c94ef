/* `aitk-validate predict`: time and memory of a LoRA training job on GPUs the
 * person may not have — "before purchasing hardware". Models come from
 * models/<id>.yaml or from a real ai-toolkit config (--config), GPUs from
 * models/gpus.yaml, the rules and default efficiencies from models/cost.yaml,
 * or efficiencies measured on a GPU from a saved report (--calibrate). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/cliopt.h"
#include "common/fileio.h"
#include "common/log.h"
#include "models/aitk_config.h"
#include "models/predict.h"
#include "models/reported.h"
#include "models/reported_fit.h"
#include "models/trainers.h"
#include "reports/report.h"
#include "validate/cli.h"
#include "validate/commands.h"

typedef struct price {
    const aitk_gpu_spec *gpu;
    double usd;
} price;

typedef struct predict_opts {
    const char *models, *config, *gpus, *json_path, *quantize, *calibrate, *trainer, *optimizer,
        *dtype, *attention_mask, *os;
    bool all_gpus, explain, reported, cache_text, no_validation, no_checkpointing, verbose;
    long resolution, batch, rank, accumulation;
    price prices[32];
    size_t n_prices;
    char **price_args;
    size_t n_price_args;
} predict_opts;

static void predict_help(void)
{
    fputs("Usage: aitk-validate predict [--model M[,M...] | --config FILE]\n"
          "                             [--gpu NAME[,NAME...] | --all-gpus] [options]\n"
          "\n"
          "Predicts, per GPU, whether a LoRA training job fits in memory (and if not,\n"
          "the largest terms of its memory plan), seconds per step, minutes per 1000\n"
          "steps and, with a price, USD per 1000 steps. No GPU is needed.\n"
          "  --model M[,M]         flux1-dev, chroma, omnigen2 (default: all three)\n"
          "  --config FILE         an ai-toolkit training config (its model and settings;\n"
          "                        jobs other than FLUX.1-dev/schnell, Chroma and\n"
          "                        OmniGen2 LoRAs are refused by name, exit 2); its\n"
          "                        sample: block's time is in min/1000, shown apart\n"
          "  --verbose             with --config, also list the keys that play no part\n"
          "                        in time or memory\n"
          "  --gpu NAME[,NAME]     GPUs from `aitk-validate gpus` (default: all)\n"
          "  --all-gpus            every GPU in the database\n"
          "  --resolution R        square resolution in pixels (replaces the buckets)\n"
          "  --batch B             batch size\n"
          "  --rank R              LoRA rank (alpha follows it)\n"
          "  --quantize fp8|nf4|none   base weights in the trainer's fp8, 4-bit\n"
          "                        (bitsandbytes NF4) or bf16; text encoders in fp8, or\n"
          "                        bf16 with none\n"
          "  --trainer T           ai-toolkit (default), kohya, diffusers or simpletuner:\n"
          "                        the trainer's T5 text tokens, what its fp8 base is\n"
          "                        (quanto, a plain cast, torchao fp8 compute), its\n"
          "                        default optimizer and whether its forward runs under\n"
          "                        autocast (models/trainers.yaml); a --config is\n"
          "                        ai-toolkit's\n"
          "  --cache-text-embeddings   text embeddings computed once and the encoders\n"
          "                        unloaded (ai-toolkit train: cache_text_embeddings: true)\n"
          "  --no-validation       the job validates not between steps: leave out the\n"
          "                        trainer's validation stage (diffusers' script loads the\n"
          "                        text encoders again for it, a peak of its own)\n"
          "  --attention-mask M    the boolean mask every attention call gets, where the\n"
          "                        job differs from its trainer's code: none,\n"
          "                        key_padding, pairwise, per_head or per_head_kept\n"
          "                        (models/trainers.yaml attention_mask); kohya's\n"
          "                        --apply_t5_attn_mask is per_head. A masked call runs\n"
          "                        PyTorch's memory-efficient kernel, not flash\n"
          "  --os linux|windows    where the trainer's PyTorch runs (default linux):\n"
          "                        PyTorch's Windows wheels have no flash attention, so\n"
          "                        there every attention call runs the memory-efficient\n"
          "                        kernel (pytorch/pytorch issue #125070)\n"
          "  --dtype bf16|fp16     what the step computes in (ai-toolkit train.dtype;\n"
          "                        accelerate's mixed_precision): the same speed on\n"
          "                        most GPUs; a card without bf16 tensor cores (T4)\n"
          "                        runs bf16 far slower, and its row says what fp16 gives\n"
          "  --optimizer NAME      adamw, adamw8bit, prodigy, adafactor, lion, lion8bit, or\n"
          "                        ai-toolkit's prodigy8bit, automagic, automagic2 and\n"
          "                        automagic3 (models/cost.yaml; their state is part\n"
          "                        of the peak)\n"
          "  --accumulation N      micro-batches a step gathers (gradient accumulation):\n"
          "                        the step is N passes, the peak that of one\n"
          "  --no-checkpointing    every block keeps its activations for the backward\n"
          "                        (faster, far more memory)\n"
          "  --price-per-hour GPU=USD   rental price, for cost per 1000 steps (repeatable)\n"
          "  --json FILE           write the predictions as JSON (atomically); FILE -:\n"
          "                        standard output, the tables then go to stderr\n"
          "  --explain             print the memory plan and the work of one step\n"
          "  --calibrate REPORT    efficiencies measured on a GPU, from a report.json of\n"
          "                        `aitk-validate --full --output-dir`/`--json` run there\n"
          "  --reported            instead: predict the jobs people reported speeds for\n"
          "                        (models/reported_speeds.yaml: GPU, setup, s/step, peak)\n"
          "                        and set each prediction beside the reported figure;\n"
          "                        takes only --calibrate and --json\n"
          "Defaults are each model's ai-toolkit example config at 1024 px; efficiencies\n"
          "are the documented defaults of models/cost.yaml.\n"
          "\n"
          "--calibrate reads the report's GPU measurements (backend \"cuda\"): GEMM,\n"
          "attention forward/backward and device-copy rates (micro[]) become efficiencies,\n"
          "each the median rate over the measured GPU's figure in models/gpus.yaml (its\n"
          "bf16 matmul rate; its bandwidth for copies); one not measured keeps its\n"
          "default. A completed workload gives its model a step scale (measured /\n"
          "predicted step on that GPU) that multiplies the model's step times on every\n"
          "GPU. The output says which values were measured. Assumed: efficiencies carry\n"
          "over to GPUs of similar class. A report without GPU measurements, or of a GPU\n"
          "not in the database, is exit 2.\n"
          "\n"
          "Exit codes: 0 predicted, 2 bad usage or bad input (file:line:col given),\n"
          "3 internal error or an output that could not be written.\n",
          stdout);
}

/* Calls fn for each comma-separated item of list (owned copies). An empty
 * list or an empty item is refused: `--model ''` predicting nothing with
 * exit 0 reads as success. */
static aitk_status each_item(const char *opt, const char *list,
                             aitk_status (*fn)(const char *, void *), void *ctx, aitk_str *err)
{
    const char *p = list;
    do {
        size_t n = strcspn(p, ",");
        if (n == 0) {
            aitk_str_appendf(err, "%s: empty name in the list '%s'", opt, list);
            return AITK_E_INVAL;
        }
        char *item = aitk_strndup(p, n);
        if (!item)
            return AITK_E_NOMEM;
        aitk_status st = fn(item, ctx);
        aitk_free(item);
        if (st)
            return st;
        p += n;
    } while (*p++ == ',');
    return AITK_OK;
}

typedef struct run {
    predict_opts *o;
    FILE *text; /* the tables: stdout, or stderr when the JSON goes there (--json -) */
    aitk_gpudb *db;
    aitk_cost_params *params;
    aitk_trainers *trainers;
    const aitk_trainer *trainer; /* --trainer, else the file's default */
    const aitk_gpu_spec **gpus;
    size_t n_gpus;
    cJSON *json;
    aitk_calibration *cal;
    aitk_str *err;
    aitk_str models_done; /* "|id|id|": a model named twice is predicted once */
    /* The reported jobs, read and predicted once before the first
     * prediction (after its spec): the time range given with each
     * prediction, the peak error that marks tight fits, the summary under
     * them and the --reported tables. */
    aitk_reported_eval reported;
    bool reported_loaded;
} run;

static aitk_status add_gpu(const char *name, void *ctx)
{
    run *r = ctx;
    const aitk_gpu_spec *g = NULL;
    aitk_status st = aitk_gpudb_find(r->db, name, &g, r->err);
    if (st)
        return st;
    for (size_t i = 0; i < r->n_gpus; i++)
        if (r->gpus[i] == g)
            return AITK_OK;
    r->gpus[r->n_gpus++] = g; /* gpus has room for the whole database */
    return AITK_OK;
}

static aitk_status parse_prices(run *r)
{
    predict_opts *o = r->o;
    for (size_t i = 0; i < o->n_price_args; i++) {
        const char *arg = o->price_args[i];
        const char *eq = strrchr(arg, '=');
        char *end = NULL;
        double usd = eq ? strtod(eq + 1, &end) : -1;
        if (!eq || eq == arg || end == eq + 1 || *end != '\0' || !(usd >= 0) || usd > 1e6) {
            aitk_str_appendf(r->err, "--price-per-hour: expected GPU=USD (e.g. \"RTX 4090=0.69\"), "
                                     "found '%s'", arg);
            return AITK_E_INVAL;
        }
        if (o->n_prices == sizeof o->prices / sizeof *o->prices) {
            aitk_str_appendf(r->err, "--price-per-hour: at most %zu prices",
                             sizeof o->prices / sizeof *o->prices);
            return AITK_E_INVAL;
        }
        char *name = aitk_strndup(arg, (size_t)(eq - arg));
        if (!name)
            return AITK_E_NOMEM;
        aitk_str_append(r->err, "--price-per-hour: ");
        aitk_status st = aitk_gpudb_find(r->db, name, &o->prices[o->n_prices].gpu, r->err);
        if (!st)
            aitk_str_clear(r->err);
        aitk_free(name);
        if (st)
            return st;
        for (size_t k = 0; k < o->n_prices; k++)
            if (o->prices[k].gpu == o->prices[o->n_prices].gpu) {
                aitk_str_appendf(r->err, "--price-per-hour: %s has two prices; give one",
                                 o->prices[k].gpu->name);
                return AITK_E_INVAL;
            }
        o->prices[o->n_prices++].usd = usd;
    }
    return AITK_OK;
}

static aitk_status load_reported(run *r)
{
    if (r->reported_loaded)
        return AITK_OK;
    aitk_status st = aitk_reported_eval_load(r->db, r->params, r->cal, &r->reported, r->err);
    r->reported_loaded = !st;
    return st;
}

/* The options that change the job: over the model's or the config's. */
/* "--OPTION: expected CHOICES, found 'VALUE'", the value made printable:
 * every job option that takes one of a few words refuses others so. */
static aitk_status bad_choice(aitk_str *err, const char *option, const char *choices,
                              const char *found)
{
    aitk_str_appendf(err, "--%s: expected %s, found '", option, choices);
    aitk_str_append_printable(err, found, false);
    aitk_str_append(err, "'");
    return AITK_E_INVAL;
}

static aitk_status apply_job_options(run *r, aitk_workload *w)
{
    const predict_opts *o = r->o;
    if (o->resolution)
        aitk_workload_set_resolution(w, o->resolution);
    if (o->batch)
        w->batch = o->batch;
    if (o->rank) {
        w->rank = o->rank;
        w->alpha = (double)o->rank;
    }
    if (o->cache_text)
        w->cache_text = true;
    if (o->no_validation)
        w->validation_resolution = 0;
    if (o->attention_mask && aitk_attention_mask_parse(o->attention_mask, &w->attention_mask))
        return bad_choice(r->err, "attention-mask", AITK_ATTENTION_MASK_CHOICES,
                          o->attention_mask);
    if (o->os && aitk_host_os_parse(o->os, &w->os))
        return bad_choice(r->err, "os", AITK_HOST_OS_CHOICES, o->os);
    if (o->dtype) {
        if (strcmp(o->dtype, "bf16") && strcmp(o->dtype, "fp16"))
            return bad_choice(r->err, "dtype", "bf16 or fp16", o->dtype);
        w->fp16 = strcmp(o->dtype, "fp16") == 0;
    }
    if (o->quantize) {
        aitk_weight_dtype d = AITK_WEIGHT_BF16;
        if (aitk_weight_dtype_parse(o->quantize, &d))
            return bad_choice(r->err, "quantize", "fp8, nf4 or none", o->quantize);
        aitk_workload_set_base(w, d);
    }
    if (o->optimizer) {
        const aitk_optimizer_spec *opt = aitk_cost_find_optimizer(r->params, o->optimizer);
        if (!opt) {
            aitk_str_append(r->err, "--optimizer: expected ");
            for (size_t i = 0; i < r->params->n_optimizers; i++)
                aitk_str_appendf(r->err, "%s%s", i ? ", " : "", r->params->optimizers[i].name);
            aitk_str_append(r->err, ", found '");
            aitk_str_append_printable(r->err, o->optimizer, false);
            aitk_str_append(r->err, "'");
            return aitk_str_status(r->err) ? AITK_E_NOMEM : AITK_E_INVAL;
        }
        w->optimizer = opt->name;
    }
    if (o->accumulation)
        w->accumulation = o->accumulation;
    if (o->no_checkpointing)
        w->checkpointing = false;
    return AITK_OK;
}

static aitk_status predict_workload(run *r, const aitk_model_spec *spec, aitk_workload *w,
                                    const aitk_train_config *cfg)
{
    predict_opts *o = r->o;
    aitk_status loaded = load_reported(r);
    if (loaded)
        return loaded;
    aitk_status applied = apply_job_options(r, w);
    if (applied)
        return applied;
    aitk_predict_result res = {.spec = spec, .workload = *w,
                               .config_path = cfg ? r->o->config : NULL,
                               .title = cfg ? cfg->title : NULL,
                               .n_rows = r->n_gpus, .calibration = r->cal,
                               .step_scale = aitk_calibration_step_scale(r->cal, spec->id),
                               .range = &r->reported.time_range,
                               .peak_error = &r->reported.peak_error};
    res.rows = aitk_calloc(r->n_gpus ? r->n_gpus : 1, sizeof *res.rows);
    if (!res.rows)
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < r->n_gpus; i++) {
        res.rows[i].gpu = r->gpus[i];
        res.rows[i].price_per_hour = -1;
        for (size_t k = 0; k < o->n_prices; k++)
            if (o->prices[k].gpu == r->gpus[i])
                res.rows[i].price_per_hour = o->prices[k].usd;
        st = aitk_cost_predict(w, r->params, r->gpus[i], &res.rows[i].pred, r->err);
        if (!st && !res.rows[i].pred.fits)
            st = aitk_predict_fit_hint(w, r->params, r->gpus[i], &res.rows[i].hint, r->err);
        /* A bf16 job on a card whose fp16 matmul is faster: the same job in
         * fp16 beside it, since that is the setting to change there. */
        bool fp16_faster = r->gpus[i]->matmul_fp16_tflops > r->gpus[i]->matmul_bf16_tflops;
        if (!st && !w->fp16 && fp16_faster) {
            aitk_workload in_fp16 = *w;
            in_fp16.fp16 = true;
            st = aitk_cost_predict(&in_fp16, r->params, r->gpus[i], &res.rows[i].fp16, r->err);
            res.rows[i].has_fp16 = !st;
        }
        if (!st && res.step_scale) {
            aitk_prediction_scale_time(&res.rows[i].pred, res.step_scale->scale);
            aitk_prediction_scale_time(&res.rows[i].hint.pred, res.step_scale->scale);
            aitk_prediction_scale_time(&res.rows[i].fp16, res.step_scale->scale);
        }
    }
    if (!st)
        aitk_predict_print_text(r->text, &res, r->params, o->explain);
    if (!st && r->json)
        st = aitk_predict_add_json(cJSON_GetObjectItemCaseSensitive(r->json, "predictions"), &res);
    aitk_free(res.rows);
    return st;
}

/* --trainer by id, else models/trainers.yaml's default; an unknown name is
 * bad usage, told with the names there are. */
static aitk_status pick_trainer(run *r)
{
    const char *name = r->o->trainer;
    r->trainer = name ? aitk_trainers_find(r->trainers, name) : r->trainers->fallback;
    if (r->trainer)
        return AITK_OK;
    aitk_str_append(r->err, "--trainer: expected ");
    aitk_trainers_names(r->trainers, r->err);
    aitk_str_append(r->err, ", found '");
    aitk_str_append_printable(r->err, name, false);
    aitk_str_append(r->err, "'");
    return aitk_str_status(r->err) ? AITK_E_NOMEM : AITK_E_INVAL;
}

static aitk_status predict_model(const char *id, void *ctx)
{
    run *r = ctx;
    aitk_str key = AITK_STR_INIT;
    aitk_str_appendf(&key, "|%s|", id);
    bool seen = r->models_done.len && strstr(aitk_str_cstr(&r->models_done), aitk_str_cstr(&key));
    aitk_status st = aitk_str_status(&key);
    if (!st && !seen)
        st = aitk_str_appendf(&r->models_done, "%s%s|", r->models_done.len ? "" : "|", id);
    aitk_str_free(&key);
    if (st || seen)
        return st;
    aitk_model_spec *spec = NULL;
    st = aitk_model_spec_load(id, false, &spec, r->err);
    if (st)
        return st;
    aitk_workload w;
    aitk_workload_defaults(&w, spec);
    aitk_workload_set_trainer(&w, r->trainer);
    /* The model descriptions are ai-toolkit's: only a trainer asked for by
     * name can lack one. */
    if (r->o->trainer && !aitk_trainer_has_model(r->trainer, id))
        aitk_log(AITK_LOG_WARN, "--trainer %s: models/trainers.yaml has no %s entry for it: "
                                "its text tokens are the model's own (%ld)",
                 r->trainer->id, id, spec->text_tokens);
    st = predict_workload(r, spec, &w, NULL);
    aitk_model_spec_free(spec);
    return st;
}

static aitk_status predict_config(run *r)
{
    aitk_train_config cfg;
    aitk_status st = aitk_config_read(r->o->config, &cfg, r->err);
    if (st)
        return st;
    aitk_config_warn_ignored(&cfg, r->o->config);
    if (r->o->verbose)
        aitk_config_list_no_effect(&cfg, r->o->config);
    aitk_model_spec *spec = NULL;
    st = aitk_model_spec_load(cfg.model_id, false, &spec, r->err);
    if (!st) {
        aitk_workload w;
        aitk_config_workload(&cfg, spec, &w);
        /* Every job the reader admits is one of ai-toolkit's process types
         * (sd_trainer, ui_trainer, diffusion_trainer): the config names its
         * trainer, ai-toolkit, whatever the default. */
        aitk_workload_set_trainer(&w, aitk_trainers_find(r->trainers, "ai-toolkit"));
        if (!aitk_workload_filter_applies(&w))
            aitk_log(AITK_LOG_WARN, "%s: network.network_kwargs picks layers by name, which the "
                                    "%s description does not give: the LoRA is counted on every "
                                    "layer (an upper bound on its memory and time)",
                     r->o->config, spec->title);
        st = aitk_config_check_optimizer(&cfg, r->params, r->o->config, r->err);
        if (!st)
            st = aitk_config_check_job(&cfg, r->err);
        if (!st)
            st = predict_workload(r, spec, &w, &cfg);
    }
    aitk_model_spec_free(spec);
    aitk_config_free(&cfg);
    return st;
}

/* The memory reports' fit verdicts against what their sources say, with
 * the peak error and the peaks within 15% over every row that gives one. */
static aitk_status predict_fits(run *r)
{
    const aitk_reported_eval *e = &r->reported;
    const size_t n = e->speeds->n_memory;
    aitk_peak_tally peaks = {0};
    aitk_reported_peak_tally(e->timed, e->speeds->count, e->fits, n, &peaks);
    aitk_status st = aitk_reported_fit_print_text(r->text, e->fits, n, &e->peak_error, &peaks);
    if (!st && r->json)
        st = aitk_reported_fit_add_json(r->json, e->fits, n, &e->peak_error, &peaks);
    return st;
}

/* Under the predictions: how far measured peaks fell from the model's, the
 * basis of the tight mark (models/predict.h), in the text and the JSON. */
static aitk_status print_peak_error(run *r)
{
    const aitk_time_range *e = &r->reported.peak_error;
    if (e->n == 0)
        return AITK_OK;
    fprintf(r->text,
            "How far to trust the fits: measured peaks came to %.2f-%.2fx the model's (10-90th "
            "percentile of\nreported / predicted over %zu runs that measured one on a named "
            "GPU); a fit within that is marked tight.\n",
            e->lo, e->hi, e->n);
    if (!r->json)
        return AITK_OK;
    cJSON *against = cJSON_GetObjectItemCaseSensitive(r->json, "against_reports");
    cJSON *o = against ? cJSON_AddObjectToObject(against, "peak_error") : NULL;
    if (!o || !cJSON_AddStringToObject(o, "of", "reported / predicted peak") ||
        !cJSON_AddNumberToObject(o, "low", e->lo) || !cJSON_AddNumberToObject(o, "high", e->hi) ||
        !cJSON_AddNumberToObject(o, "runs", (double)e->n))
        return AITK_E_NOMEM;
    return AITK_OK;
}

/* The reported jobs, each predicted on its own GPU: the table for
 * --reported, else the range of ratios under the predictions. */
static aitk_status predict_reported(run *r, bool table)
{
    aitk_status st = load_reported(r);
    if (st)
        return st;
    const aitk_reported_row *rows = r->reported.timed;
    const size_t n = r->reported.speeds->count;
    if (table)
        st = aitk_reported_print_text(r->text, rows, n);
    else
        st = aitk_reported_print_summary(r->text, rows, n, r->cal != NULL);
    if (!st && r->json)
        st = table ? aitk_reported_add_json(r->json, rows, n)
                   : aitk_reported_add_summary_json(r->json, rows, n);
    if (!st)
        st = table ? predict_fits(r) : print_peak_error(r);
    return st;
}

static int finish(run *r, aitk_status st)
{
    int rc = AITK_EXIT_OK;
    if (!st && r->json)
        st = aitk_json_repair_utf8(r->json); /* a --config path may be any bytes */
    /* --json was checked before any prediction: a failure here is the
     * write itself (a full disk), exit 3 as for the main run's reports. */
    bool write_failed = false;
    if (!st && r->json) {
        char *text = cJSON_Print(r->json);
        if (!text) {
            st = AITK_E_NOMEM;
        } else if (aitk_output_is_stdout(r->o->json_path)) {
            /* main.c checks that it reached standard output. */
            st = aitk_fputs_printable(text, stdout);
            if (!st)
                fputc('\n', stdout);
            cJSON_free(text);
        } else {
            st = aitk_file_write_atomic(r->o->json_path, text, strlen(text), r->err);
            write_failed = st != AITK_OK;
            cJSON_free(text);
        }
    }
    if (st) {
        if (st == AITK_E_NOMEM || st == AITK_E_INTERNAL)
            aitk_log(AITK_LOG_ERROR, "predict: %s", aitk_strerror(st));
        else
            aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(r->err));
        rc = st == AITK_E_NOMEM || st == AITK_E_INTERNAL || write_failed ? AITK_EXIT_INTERNAL
                                                                         : AITK_EXIT_USAGE;
    }
    cJSON_Delete(r->json);
    aitk_str_free(&r->models_done);
    aitk_reported_eval_free(&r->reported); /* its rows point into the database */
    aitk_calibration_free(r->cal);
    aitk_free(r->gpus);
    aitk_gpudb_free(r->db);
    aitk_cost_params_free(r->params);
    aitk_trainers_free(r->trainers);
    aitk_free(r->o->price_args);
    return rc;
}

static int parse_args(int argc, char **argv, predict_opts *o, aitk_str *err)
{
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},     {"config", required_argument, NULL, 'c'},
        {"gpu", required_argument, NULL, 'g'},       {"all-gpus", no_argument, NULL, 'A'},
        {"resolution", required_argument, NULL, 'r'}, {"batch", required_argument, NULL, 'b'},
        {"rank", required_argument, NULL, 'k'},      {"quantize", required_argument, NULL, 'q'},
        {"price-per-hour", required_argument, NULL, 'p'},
        {"calibrate", required_argument, NULL, 'C'}, {"json", required_argument, NULL, 'j'},
        {"explain", no_argument, NULL, 'e'},         {"help", no_argument, NULL, 'h'},
        {"reported", no_argument, NULL, 'R'},
        {"cache-text-embeddings", no_argument, NULL, 'T'},
        {"no-validation", no_argument, NULL, 'V'},
        {"dtype", required_argument, NULL, 'D'},     {"os", required_argument, NULL, 'S'},
        {"attention-mask", required_argument, NULL, 'M'},
        {"optimizer", required_argument, NULL, 'O'},
        {"accumulation", required_argument, NULL, 'a'},
        {"no-checkpointing", no_argument, NULL, 'N'},
        {"trainer", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    o->price_args = aitk_calloc((size_t)argc, sizeof *o->price_args);
    if (!o->price_args) {
        aitk_log(AITK_LOG_ERROR, "predict: %s", aitk_strerror(AITK_E_NOMEM));
        return AITK_EXIT_INTERNAL;
    }
    int c;
    aitk_status st = AITK_OK;
    /* A value option given twice would lose the first silently. */
    bool given[sizeof opts / sizeof *opts] = {false};
    static const int repeatable[] = {'p', 0}, lists[] = {'m', 'g', 0};
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (aitk_opt_once(c, opts, given, repeatable, lists, err))
            return aitk_opt_usage_error("predict", err);
        switch (c) {
        case 'm': o->models = optarg; break;
        case 'c': o->config = optarg; break;
        case 'g': o->gpus = optarg; break;
        case 'A': o->all_gpus = true; break;
        case 'r': st = aitk_opt_long("--resolution", optarg, 64, 8192, &o->resolution, err); break;
        case 'b': st = aitk_opt_long("--batch", optarg, 1, 1024, &o->batch, err); break;
        case 'k': st = aitk_opt_long("--rank", optarg, 1, 4096, &o->rank, err); break;
        case 'q': o->quantize = optarg; break;
        case 't': o->trainer = optarg; break;
        case 'p': o->price_args[o->n_price_args++] = optarg; break;
        case 'j': o->json_path = optarg; break;
        case 'e': o->explain = true; break;
        case 'R': o->reported = true; break;
        case 'T': o->cache_text = true; break;
        case 'V': o->no_validation = true; break;
        case 'D': o->dtype = optarg; break;
        case 'M': o->attention_mask = optarg; break;
        case 'S': o->os = optarg; break;
        case 'O': o->optimizer = optarg; break;
        case 'a':
            st = aitk_opt_long("--accumulation", optarg, 1, 1024, &o->accumulation, err);
            break;
        case 'N': o->no_checkpointing = true; break;
        case 'v': o->verbose = true; break;
        case 'C': o->calibrate = optarg; break;
        case 'h': predict_help(); return -1;
        default:
            aitk_opt_error("predict", c, argv[optind - 1], optopt, opts, err);
            return aitk_opt_usage_error("predict", err);
        }
        if (st)
            return aitk_opt_usage_error("predict", err);
    }
    if (optind != argc) {
        aitk_str_appendf(err, "unexpected argument '%s' (see predict --help)",
                         argv[optind]);
        st = AITK_E_INVAL;
    }
    if (!st && o->models && o->config) {
        aitk_str_append(err, "give --model or --config, not both");
        st = AITK_E_INVAL;
    }
    if (!st && o->reported &&
        (o->models || o->config || o->gpus || o->all_gpus || o->resolution || o->batch ||
         o->rank || o->quantize || o->n_price_args || o->explain || o->cache_text ||
         o->no_validation || o->trainer || o->optimizer || o->accumulation ||
         o->no_checkpointing || o->dtype || o->attention_mask || o->os)) {
        aitk_str_append(err, "--reported predicts the reported setups as they are; "
                             "it takes only --calibrate and --json");
        st = AITK_E_INVAL;
    }
    if (!st && o->config && o->trainer && strcasecmp(o->trainer, "ai-toolkit") != 0) {
        aitk_str_appendf(err, "--trainer %s: --config reads an ai-toolkit config, which "
                              "ai-toolkit runs", o->trainer);
        st = AITK_E_INVAL;
    }
    if (!st && o->gpus && o->all_gpus) {
        aitk_str_append(err, "give --gpu or --all-gpus, not both");
        st = AITK_E_INVAL;
    }
    return st ? aitk_opt_usage_error("predict", err) : AITK_EXIT_OK;
}

int aitk_cmd_predict(int argc, char **argv)
{
    predict_opts o = {0};
    aitk_str err = AITK_STR_INIT;
    int rc = parse_args(argc, argv, &o, &err); /* it says its own mistakes */
    if (rc) {
        aitk_free(o.price_args);
        aitk_str_free(&err);
        return rc < 0 ? AITK_EXIT_OK : rc;
    }
    run r = {.o = &o, .err = &err,
             .text = aitk_output_is_stdout(o.json_path) ? stderr : stdout};
    aitk_status st = aitk_gpudb_load(&r.db, &err);
    if (!st)
        st = aitk_cost_params_load(&r.params, &err);
    if (!st)
        st = aitk_trainers_load(&r.trainers, &err);
    if (!st)
        st = pick_trainer(&r);
    if (!st) {
        r.gpus = aitk_calloc(r.db->count ? r.db->count : 1, sizeof *r.gpus);
        st = r.gpus ? AITK_OK : AITK_E_NOMEM;
    }
    if (!st && o.gpus) {
        st = each_item("--gpu", o.gpus, add_gpu, &r, &err);
    } else if (!st) {
        for (size_t i = 0; i < r.db->count; i++)
            r.gpus[r.n_gpus++] = &r.db->gpus[i];
    }
    if (!st)
        st = parse_prices(&r);
    /* An unusable --json is refused before the table is printed, and it may
     * not replace the config or report the prediction reads. */
    if (!st && o.json_path && !aitk_output_is_stdout(o.json_path))
        st = aitk_output_file_ready(o.json_path, &err);
    if (!st && o.json_path) {
        const aitk_named_path out = {"--json", o.json_path};
        const aitk_named_path ins[] = {{"--config", o.config}, {"--calibrate", o.calibrate}};
        st = aitk_outputs_distinct(&out, 1, ins, 2, &err);
    }
    /* Before anything is printed: a report it cannot use leaves stdout empty. */
    if (!st && o.calibrate)
        st = aitk_calibration_load(o.calibrate, r.db, r.params, &r.cal, &err);
    if (!st && r.cal)
        aitk_calibration_print_text(r.text, r.cal);
    if (!st && o.json_path) {
        r.json = cJSON_CreateObject();
        if (!r.json || !cJSON_AddNumberToObject(r.json, "schema", 1) ||
            !cJSON_AddArrayToObject(r.json, "predictions") ||
            aitk_predict_add_params_json(r.json, r.params, r.cal))
            st = AITK_E_NOMEM;
    }
    if (!st && o.reported)
        st = predict_reported(&r, true);
    else if (!st && o.config)
        st = predict_config(&r);
    else if (!st)
        st = each_item("--model", o.models ? o.models : "flux1-dev,chroma,omnigen2",
                       predict_model, &r, &err);
    if (!st && !o.reported)
        st = predict_reported(&r, false);
    rc = finish(&r, st);
    aitk_str_free(&err);
    return rc;
}
