/* The Windows machine: the causes of a failed ai-toolkit install that are
 * Windows' own (windows.build, windows.vcredist, windows.long_paths,
 * windows.gpu_mode, windows.user_profile). On other systems each is
 * reported as skipped, "Windows only", as host.libc is skipped on Windows:
 * the list of checks is the same everywhere, the verdict says where it
 * applies. Runs after the GPU provider, whose NVML record it reads. */
#ifndef AITK_VALIDATE_PROBES_WINDOWS_H
#define AITK_VALIDATE_PROBES_WINDOWS_H

#include "common/str.h"
#include "common/yaml.h"
#include "validate/engine.h"

aitk_status aitk_windows_checks(aitk_run_ctx *ctx);

/* validate/probes/windows.yaml, parsed and checked: every entry the checks
 * read has a value and a source. AITK_E_PARSE with "file:line:col: ..." */
aitk_status aitk_windows_data_load(aitk_yaml_doc **out, aitk_str *err);

/* An entry's value or source ("" when absent; a loaded file has both). */
const char *aitk_windows_data_value(const aitk_yaml_doc *doc, const char *section,
                                    const char *key);
const char *aitk_windows_data_source(const aitk_yaml_doc *doc, const char *section,
                                     const char *key);

/* The title of Windows check `id` ("windows.build" -> "Windows build"). */
const char *aitk_windows_check_title(const char *id);

#endif
