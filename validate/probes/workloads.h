/* Reference training workloads: placeholder checks until the workload
 * runner lands, so a standard/full report says plainly what was not run. */
#ifndef AITK_VALIDATE_PROBES_WORKLOADS_H
#define AITK_VALIDATE_PROBES_WORKLOADS_H

#include "validate/engine.h"

/* Adds one workload.<model> check per selected model. */
aitk_status aitk_workload_checks(aitk_run_ctx *ctx);

/* The reference models, in report order; NULL-terminated. */
extern const char *const aitk_reference_models[];

#endif
