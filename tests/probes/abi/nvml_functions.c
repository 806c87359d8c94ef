/* NVML ABI, part 2: nvml_abi.h compiled with NVIDIA's own types for its base
 * names (AITK_NVML_ABI_REAL_TYPES), so each of our function-pointer types
 * must be exactly the type of the function nvml.h declares: same return,
 * same parameters in the same order. NVML_NO_UNVERSIONED_FUNC_DEFS makes
 * nvml.h declare the older versions the probe falls back to. */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>

#define AITK_NVML_ABI_REAL_TYPES
typedef nvmlReturn_t aitk_nvml_return;
typedef nvmlEnableState_t aitk_nvml_enable_state;
typedef nvmlClockType_t aitk_nvml_clock_type;
typedef nvmlTemperatureSensors_t aitk_nvml_temp_sensor;
typedef nvmlPageRetirementCause_t aitk_nvml_retire_cause;
typedef nvmlDriverModel_t aitk_nvml_driver_model;
typedef nvmlGpuTopologyLevel_t aitk_nvml_topology_level;
typedef nvmlDevice_t aitk_nvml_device;
typedef nvmlMemory_t aitk_nvml_memory;
typedef nvmlPciInfo_t aitk_nvml_pci_info;
typedef nvmlProcessInfo_v1_t aitk_nvml_process_info_v1;
typedef nvmlProcessInfo_v2_t aitk_nvml_process_info_v2;
typedef nvmlProcessInfo_t aitk_nvml_process_info_v3;
#include "validate/probes/nvml_abi.h"

#include "abi_table.h"

/* nvmlDeviceGetTemperature is deprecated in NVML 13 but still exported, and
 * still what drivers before nvmlDeviceGetTemperatureV answer. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define FN(name) ABI_FN(aitk_##name##_fn, name)
const abi_function nvml_functions[] = {
    FN(nvmlInit_v2),
    FN(nvmlInit),
    FN(nvmlShutdown),
    FN(nvmlErrorString),
    FN(nvmlSystemGetDriverVersion),
    FN(nvmlSystemGetCudaDriverVersion_v2),
    FN(nvmlSystemGetCudaDriverVersion),
    FN(nvmlDeviceGetCount_v2),
    FN(nvmlDeviceGetCount),
    FN(nvmlDeviceGetHandleByIndex_v2),
    FN(nvmlDeviceGetHandleByIndex),
    FN(nvmlDeviceGetName),
    FN(nvmlDeviceGetUUID),
    FN(nvmlDeviceGetPciInfo_v3),
    FN(nvmlDeviceGetPciInfo_v2),
    FN(nvmlDeviceGetCudaComputeCapability),
    FN(nvmlDeviceGetMemoryInfo),
    FN(nvmlDeviceGetMemoryBusWidth),
    FN(nvmlDeviceGetCurrPcieLinkGeneration),
    FN(nvmlDeviceGetNvLinkState),
    FN(nvmlDeviceGetNvLinkVersion),
    FN(nvmlDeviceGetTopologyCommonAncestor),
    FN(nvmlDeviceGetMaxPcieLinkGeneration),
    FN(nvmlDeviceGetCurrPcieLinkWidth),
    FN(nvmlDeviceGetMaxPcieLinkWidth),
    FN(nvmlDeviceGetPowerManagementLimit),
    FN(nvmlDeviceGetTemperature),
    FN(nvmlDeviceGetClockInfo),
    FN(nvmlDeviceGetMaxClockInfo),
    FN(nvmlDeviceGetEccMode),
    FN(nvmlDeviceGetRemappedRows),
    FN(nvmlDeviceGetRetiredPages),
    FN(nvmlDeviceGetPersistenceMode),
    FN(nvmlDeviceGetMigMode),
    FN(nvmlDeviceGetDisplayActive),
/* nvmlDeviceGetDriverModel_v2 first appears in the 12.x headers (the pinned
 * 12.9.79 has it, 11.8.86 does not). */
#if NVML_API_VERSION >= 12
    FN(nvmlDeviceGetDriverModel_v2),
#endif
    FN(nvmlDeviceGetDriverModel),
    FN(nvmlDeviceGetComputeRunningProcesses_v3),
    FN(nvmlDeviceGetComputeRunningProcesses_v2),
    FN(nvmlDeviceGetComputeRunningProcesses),
    FN(nvmlDeviceGetGraphicsRunningProcesses_v3),
    FN(nvmlDeviceGetGraphicsRunningProcesses_v2),
    FN(nvmlDeviceGetGraphicsRunningProcesses),
};
const size_t nvml_function_count = sizeof nvml_functions / sizeof *nvml_functions;
