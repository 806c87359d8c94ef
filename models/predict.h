/* `predict` results for one workload across GPUs, and their renderings: the
 * text table (with --explain, the memory plan and the work of one step) and
 * the JSON document written by --json. Shared by validate/cmd_predict.c and
 * models/predict_render.c. */
#ifndef AITK_MODELS_PREDICT_H
#define AITK_MODELS_PREDICT_H

#include <stdbool.h>
#include <stdio.h>

#include "models/cost.h"
#include "models/predict_fit.h"
#include "models/predict_calibrate.h"
#include "models/reported_range.h"

typedef struct cJSON cJSON;

typedef struct aitk_predict_row {
    const aitk_gpu_spec *gpu;
    aitk_prediction pred;
    double price_per_hour; /* USD; < 0 when not given */
    aitk_fit_hint hint;    /* when the job does not fit: what would (predict_fit.h) */
    /* A bf16 job on a GPU whose fp16 matmul is faster (gpus.yaml
     * matmul_fp16_tflops): the same job computed in fp16. */
    bool has_fp16;
    aitk_prediction fp16;
} aitk_predict_row;

typedef struct aitk_predict_result {
    const aitk_model_spec *spec;
    aitk_workload workload;
    const char *config_path; /* --config FILE, or NULL */
    const char *title;       /* the config's model, when not the spec's title; or NULL */
    aitk_predict_row *rows;
    size_t n_rows;
    const aitk_calibration *calibration; /* --calibrate, or NULL */
    const aitk_step_scale *step_scale;   /* applied to every row's times, or NULL */
    /* reported / predicted over the reported training jobs: each row's
     * step time is given with this range; NULL or n == 0: none. */
    const aitk_time_range *range;
    /* reported / predicted peak over the runs that measured one on a named
     * GPU (models/reported_fit.h): a fit whose need times its high end
     * would not fit is "tight"; NULL or n == 0: no mark. */
    const aitk_time_range *peak_error;
} aitk_predict_result;

/* Whether q fits and its GPU work is shorter than eager PyTorch's time to
 * launch it: the GPU waits for the host, and the step is the host's. */
bool aitk_predict_host_bound(const aitk_prediction *q);

/* Whether a fitting prediction is within the model's own error of missing:
 * its need, raised by the most the model has been low on measured peaks,
 * is more than the usable memory. */
bool aitk_predict_tight(const aitk_prediction *q, const aitk_time_range *peak_error);

/* Minutes per 1000 steps, sampling included. */
double aitk_predict_minutes_per_1000(const aitk_prediction *p);

void aitk_predict_print_text(FILE *out, const aitk_predict_result *r, const aitk_cost_params *p,
                             bool explain);
/* Appends one object for `r` to the array `arr`. */
aitk_status aitk_predict_add_json(cJSON *arr, const aitk_predict_result *r);
/* Above the tables with --calibrate: one line per efficiency (measured or
 * default, from what), the step scales, what was ignored, the assumption. */
void aitk_calibration_print_text(FILE *out, const aitk_calibration *c);
/* The efficiencies the predictions used, each with its source, for the JSON
 * document; with a calibration (may be NULL) also a "calibration" object. */
aitk_status aitk_predict_add_params_json(cJSON *doc, const aitk_cost_params *p,
                                         const aitk_calibration *c);

#endif
