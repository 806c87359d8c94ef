/* Shared between predict_calibrate.c (report, GPU, efficiencies) and
 * predict_calibrate_steps.c (step scales); not for other modules. */
#ifndef AITK_MODELS_PREDICT_CALIBRATE_INTERNAL_H
#define AITK_MODELS_PREDICT_CALIBRATE_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

#include "models/predict_calibrate.h"
#include "reports/fields.h"

/* NULL when absent: the calibration tells "no device named" from "". */
static inline const char *json_text(const cJSON *o, const char *key)
{
    return aitk_field_str_or(o, key, NULL);
}

static inline bool text_is(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

/* A completed workload with backend "cuda" and a median step time. */
bool aitk_calib_workload_is_used(const cJSON *w);

/* Appends to c->ignored, "; "-separated. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void aitk_calib_note_ignored(aitk_calibration *c, const char *fmt, ...);

/* Fills c->scales from the report's workloads, with p's (calibrated)
 * efficiencies on c->gpu. */
aitk_status aitk_calib_steps(aitk_calibration *c, const cJSON *report, const aitk_gpudb *db,
                             const aitk_cost_params *p, aitk_str *err);

#endif
