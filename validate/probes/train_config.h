/* --config: the ai-toolkit training config the user means to run, as a
 * check that says what was read and which keys play no part. */
#ifndef AITK_VALIDATE_PROBES_TRAIN_CONFIG_H
#define AITK_VALIDATE_PROBES_TRAIN_CONFIG_H

#include "validate/engine.h"

/* Adds config.file and records environment.config when --config was given;
 * adds nothing otherwise. */
aitk_status aitk_train_config_checks(aitk_run_ctx *ctx);

#endif
