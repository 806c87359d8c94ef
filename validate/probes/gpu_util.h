/* Small readers shared by the probes and rules: typed reads from the cJSON
 * environment record (absent -> a default, never NULL), the GPU list, and
 * comma lists. */
#ifndef AITK_VALIDATE_PROBES_GPU_UTIL_H
#define AITK_VALIDATE_PROBES_GPU_UTIL_H

#include <stdbool.h>

#include "common/str.h"

typedef struct cJSON cJSON;

bool aitk_json_true(const cJSON *o, const char *key);
double aitk_json_number(const cJSON *o, const char *key, double fallback);

/* True when the comma-separated `list` holds `item` exactly. */
bool aitk_list_has(const char *list, const char *item);

/* The GPUs as seen by NVML, or by the CUDA driver API when NVML gave none;
 * NULL when neither library answered. */
const cJSON *aitk_gpu_devices(const cJSON *env);

/* Total memory in GB as marketed: rounded to whole GiB, because a "24 GB"
 * RTX 4090 reports 24564 MiB. -1 when unknown. */
double aitk_gpu_vram_gb(const cJSON *dev);
/* Total memory in GiB as reported (unrounded); -1 when unknown. */
double aitk_gpu_vram_gib(const cJSON *dev);

/* "NVIDIA GeForce RTX 4090, sm_89, 24 GB, PCIe 4 x16" into out. */
void aitk_gpu_describe(const cJSON *dev, aitk_str *out);

/* Compute capability "12.0" -> 120; -1 when absent or malformed. */
int aitk_gpu_sm(const cJSON *dev);

#endif
