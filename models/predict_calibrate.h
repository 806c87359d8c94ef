/* `predict --calibrate report.json`: efficiencies measured on a GPU, read from
 * a saved aitk-validate report, in place of the documented defaults of
 * models/cost.yaml; and a whole-step "step scale" per model from a measured
 * reference workload, for what the analytic model does not capture.
 *
 * Every efficiency is relative to the figure of the measured GPU in
 * models/gpus.yaml that models/cost.c multiplies by (its bf16 matmul rate for
 * GEMM and attention, its datasheet bandwidth for copies), so a value measured
 * on one GPU can be applied to the others. That it carries over to
 * GPUs of another class is an assumption, and the output says so. */
#ifndef AITK_MODELS_PREDICT_CALIBRATE_H
#define AITK_MODELS_PREDICT_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "models/cost.h"

typedef enum aitk_eff_id {
    AITK_EFF_GEMM,
    AITK_EFF_ATTN_FWD,
    AITK_EFF_ATTN_BWD,
    AITK_EFF_BANDWIDTH,
    AITK_EFF_COUNT,
} aitk_eff_id;

/* cost.yaml's key of each efficiency: "gemm", "attention_fwd", ... */
extern const char *const aitk_eff_names[AITK_EFF_COUNT];

/* ... and one below this fraction of the datasheet did not measure the GPU's
 * tensor cores or copy engines at all (a CPU fallback, a broken entry). */
#define AITK_EFF_MIN_OF_DATASHEET 0.01
/* A step scale outside [1/x, x] says the report's workload is not the job the
 * model predicts (another configuration, offloading, a stalled run). */
#define AITK_STEP_SCALE_MAX 50.0

/* Said wherever calibrated predictions are shown. */
#define AITK_CALIBRATION_ASSUMPTION                                                        \
    "efficiencies measured on one GPU carry over to other GPUs of similar "                \
    "class (each relative to its own matmul rate and bandwidth); for GPUs of another "     \
    "class, or "                                                                           \
    "another generation, the predictions are less certain"

typedef struct aitk_eff_calibration {
    bool measured;
    double value;         /* what the predictions use */
    double default_value; /* models/cost.yaml's */
    size_t n_entries;     /* micro[] entries behind a measured value */
    aitk_str entries;     /* their names, as a pattern: "gemm.cuda.bf16.*" */
} aitk_eff_calibration;

typedef struct aitk_step_scale {
    char *model;          /* model id: the workload's name */
    double measured_s;    /* step_time_s.median of the report */
    double predicted_s;   /* same configuration, measured GPU, calibrated efficiencies */
    double scale;         /* measured_s / predicted_s */
    aitk_str configuration; /* which settings came from the report, which are defaults */
} aitk_step_scale;

typedef struct aitk_calibration {
    char *report_path;
    char *device_name;       /* the GPU as the report names it */
    const aitk_gpu_spec *gpu; /* its row in models/gpus.yaml */
    aitk_str device_choice;  /* where device_name came from */
    aitk_eff_calibration eff[AITK_EFF_COUNT];
    aitk_step_scale *scales;
    size_t n_scales;
    aitk_str ignored;        /* GPU entries not used, and why ("; "-separated) */
} aitk_calibration;

/* Reads the report at `path`, sets p's efficiencies to the measured ones
 * (the others keep their defaults) and computes the step scales. Every
 * problem with the report is one line in `err` naming the file, and a status
 * other than AITK_E_NOMEM (bad input: exit 2); `p` is then unchanged. */
aitk_status aitk_calibration_load(const char *path, const aitk_gpudb *db, aitk_cost_params *p,
                                  aitk_calibration **out, aitk_str *err);
void aitk_calibration_free(aitk_calibration *c);

/* The step scale measured for `model_id`, or NULL (also when c is NULL). */
const aitk_step_scale *aitk_calibration_step_scale(const aitk_calibration *c,
                                                   const char *model_id);
/* Multiplies every time of a prediction by the scale. */
void aitk_prediction_scale_time(aitk_prediction *pred, double scale);

#endif
