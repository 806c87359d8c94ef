/* The report's first section: per reference model, does it fit, how many
 * minutes per 1000 steps, and the documented target beside it (see
 * reports/buyer.h for the wording). */
#ifndef AITK_VALIDATE_BUYER_H
#define AITK_VALIDATE_BUYER_H

#include "common/status.h"

typedef struct cJSON cJSON;
struct aitk_cost_params;

/* Builds the "buyer" array from the run's workloads (NULL: none ran) and
 * environment record. Per model, the first of: a GPU workload that ran
 * (source "measured"); the cost model's prediction for the first detected
 * GPU (source "predicted"); nothing (source "none", with the reason). A CPU
 * workload's time is kept apart as cpu_minutes_per_1000. `params` may be
 * NULL (models/cost.yaml is then read here). A model whose description
 * cannot be read gets source "none" with the error as reason. */
aitk_status aitk_buyer_build(const cJSON *workloads, const cJSON *env,
                             const struct aitk_cost_params *params, cJSON **out);

#endif
