/* When a job does not fit a GPU: the smallest change `predict` can express
 * that makes it fit, with the peak and step it would have. The changes are
 * tried in order of what they cost the training: none, cached text
 * embeddings, a 4-bit base, both, a lower resolution, all three; each with
 * the largest batch up to the job's that then fits. */
#ifndef AITK_MODELS_PREDICT_FIT_H
#define AITK_MODELS_PREDICT_FIT_H

#include <stdbool.h>

#include "common/status.h"
#include "models/cost.h"

typedef struct aitk_fit_hint {
    bool found;
    char change[96];  /* the flags, as typed: "--batch 2 --quantize nf4" */
    aitk_prediction pred;
} aitk_fit_hint;

/* What is tried, as the output names it when nothing fits; kept beside the
 * list it describes (predict_fit.c). */
extern const char aitk_fit_tries_text[];

/* Fills `out` for a workload that does not fit `gpu`; out->found is false
 * when no change tried fits. Errors only from the cost model. */
aitk_status aitk_predict_fit_hint(const aitk_workload *w, const aitk_cost_params *p,
                                  const aitk_gpu_spec *gpu, aitk_fit_hint *out, aitk_str *err);

#endif
