/* When a job does not fit a GPU: the smallest change `predict` can express
 * that makes it fit (the largest smaller batch, cached text embeddings, a
 * 4-bit base, both, a lower resolution, or all three), with the peak and step
 * it would have. Tried in that order, so the first answer costs the least
 * quality. */
#ifndef AITK_MODELS_PREDICT_FIT_H
#define AITK_MODELS_PREDICT_FIT_H

#include <stdbool.h>

#include "common/status.h"
#include "models/cost.h"

typedef struct aitk_fit_hint {
    bool found;
    char change[96];  /* the flags, as typed: "--quantize nf4 --resolution 512" */
    aitk_prediction pred;
} aitk_fit_hint;

/* Fills `out` for a workload that does not fit `gpu`; out->found is false
 * when no change tried fits. Errors only from the cost model. */
aitk_status aitk_predict_fit_hint(const aitk_workload *w, const aitk_cost_params *p,
                                  const aitk_gpu_spec *gpu, aitk_fit_hint *out, aitk_str *err);

#endif
