/* The dependency doctor inside the main report: deps.cuda (the CUDA
 * libraries of the toolkit in /usr/local/cuda*) and deps.torch (torch's own
 * libraries in the active Python environment). At --quick the reading is
 * static (fast, runs no library code); deeper levels also dlopen each
 * library and report the loader's own error text. */
#ifndef AITK_PROBES_DEPS_H
#define AITK_PROBES_DEPS_H

#include "validate/engine.h"

aitk_status aitk_deps_checks(aitk_run_ctx *ctx);

/* One check `id` over the lib*.so.N files of `dir`; facts go under
 * env_section (exposed for tests). */
aitk_status aitk_deps_check_dir(aitk_run_ctx *ctx, const char *id, const char *title,
                                const char *dir, cJSON *env_section);

#endif
