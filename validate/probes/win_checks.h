/* The Windows checks, one module each (win_build.c, win_vcredist.c,
 * win_longpaths.c, win_gpu_mode.c, win_profile.c), called by windows.c in
 * this order. Each observes, records its facts under `rec` (the report's
 * environment.windows) and adds one check. Windows only. */
#ifndef AITK_VALIDATE_PROBES_WIN_CHECKS_H
#define AITK_VALIDATE_PROBES_WIN_CHECKS_H

#include <cjson/cJSON.h>

#include "common/yaml.h"
#include "validate/engine.h"

aitk_status aitk_win_build_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec);
aitk_status aitk_win_vcredist_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec);
aitk_status aitk_win_long_paths_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec);
aitk_status aitk_win_gpu_mode_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec);
aitk_status aitk_win_user_profile_check(aitk_run_ctx *ctx, const aitk_yaml_doc *data, cJSON *rec);

#endif
