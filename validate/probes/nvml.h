/* NVML (libnvidia-ml.so.1 / nvml.dll) through dlopen, with our own minimal
 * declarations: driver version and, per GPU, the facts a trainer's owner
 * needs (memory, PCIe link, power, clocks, ECC, row remaps, MIG, display). */
#ifndef AITK_VALIDATE_PROBES_NVML_H
#define AITK_VALIDATE_PROBES_NVML_H

#include "common/status.h"

typedef struct cJSON cJSON;

/* Fills `out` (an object) with: loaded, path | loader_error, missing_symbols,
 * init_error, driver_version, cuda_driver_version, devices[]. Every failure of
 * the library is recorded there as a fact; only AITK_E_NOMEM is returned. */
aitk_status aitk_nvml_probe(cJSON *out);

#endif
