/* The CUDA driver API (libcuda.so.1 / nvcuda.dll) through dlopen: the driver's
 * CUDA version and each device as CUDA itself sees it. This is the library
 * torch needs; NVML answering while this fails is a finding of its own. */
#ifndef AITK_VALIDATE_PROBES_CUDADRV_H
#define AITK_VALIDATE_PROBES_CUDADRV_H

#include "common/status.h"

typedef struct cJSON cJSON;

/* Fills `out` with: loaded, path | loader_error, missing_symbols, init_error
 * (name and text of the CUresult), driver_api_version (e.g. 12080),
 * devices[] {name, compute_capability, total_bytes, sm_count, pci_bus_id,
 * memory_bus_width_bits, memory_clock_khz}. Only AITK_E_NOMEM is returned. */
aitk_status aitk_cudadrv_probe(cJSON *out);

#endif
