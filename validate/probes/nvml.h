/* NVML (libnvidia-ml.so.1 / nvml.dll) through dlopen, with our own minimal
 * declarations: driver version and, per GPU, the facts a trainer's owner
 * needs (memory, PCIe link, NVLink, power, clocks, ECC, row remaps, MIG,
 * display), and the PCIe topology between GPUs. */
#ifndef AITK_VALIDATE_PROBES_NVML_H
#define AITK_VALIDATE_PROBES_NVML_H

#include "common/status.h"

typedef struct cJSON cJSON;

/* Fills `out` (an object) with: loaded, path | loader_error, missing_symbols,
 * init_error, driver_version, cuda_driver_version, devices[] (each with
 * nvlink {active_links, version} where NVML answers), topology[] (pairs'
 * common PCIe ancestor). Every failure of
 * the library is recorded there as a fact; only AITK_E_NOMEM is returned. */
aitk_status aitk_nvml_probe(cJSON *out);

#endif
