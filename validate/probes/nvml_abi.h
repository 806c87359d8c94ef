/* The part of NVML's interface the probe uses, declared by us so that the
 * build needs no NVIDIA header: types, enum values, buffer sizes and one
 * function-pointer type per NVML function, named after it. Values and
 * layouts are those of nvml.h (NVML API reference, "Device Queries" and
 * "System Queries"; nvml.h of the nvidia-nvml-dev wheels 11.8.86, 12.9.79
 * and 13.4.92 on PyPI). tests/probes/nvml_abi_check.sh compiles this header
 * against those real headers and compares every size, offset, value and
 * function type, so a typo here cannot silently ask the driver the wrong
 * question.
 *
 * The ABI test also compiles it in a second mode, AITK_NVML_ABI_REAL_TYPES,
 * where it supplies NVIDIA's own types for the base names below: the
 * function types must then be the very types nvml.h declares. */
#ifndef AITK_VALIDATE_PROBES_NVML_ABI_H
#define AITK_VALIDATE_PROBES_NVML_ABI_H

#ifndef AITK_NVML_ABI_REAL_TYPES
/* nvmlReturn_t and the enum parameters are C enums: int-sized, and every
 * value the probe uses is small and non-negative. */
typedef int aitk_nvml_return;
typedef unsigned int aitk_nvml_enable_state;    /* nvmlEnableState_t */
typedef unsigned int aitk_nvml_clock_type;      /* nvmlClockType_t */
typedef unsigned int aitk_nvml_temp_sensor;     /* nvmlTemperatureSensors_t */
typedef unsigned int aitk_nvml_retire_cause;    /* nvmlPageRetirementCause_t */
typedef unsigned int aitk_nvml_driver_model;    /* nvmlDriverModel_t */
typedef unsigned int aitk_nvml_topology_level;  /* nvmlGpuTopologyLevel_t */
typedef struct aitk_nvml_device_st *aitk_nvml_device; /* nvmlDevice_t, opaque */

typedef struct aitk_nvml_memory { /* nvmlMemory_t */
    unsigned long long total, free, used;
} aitk_nvml_memory;

/* nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it. The _v2 call of
 * drivers before the v3 call existed wrote an older struct: a 16-byte bus id
 * where busIdLegacy is, then domain, bus, device, pciDeviceId and
 * pciSubSystemId at the same offsets as here, then reserved words where busId
 * is. So a v2 answer is read from the numeric fields only. */
typedef struct aitk_nvml_pci_info {
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} aitk_nvml_pci_info;

/* The process-list calls are asked with no buffer (only the count comes
 * back), so the three versions of the info struct stay opaque. */
typedef struct aitk_nvml_process_info_v1 aitk_nvml_process_info_v1;
typedef struct aitk_nvml_process_info_v2 aitk_nvml_process_info_v2;
typedef struct aitk_nvml_process_info_v3 aitk_nvml_process_info_v3;
#endif

enum {
    AITK_NVML_SUCCESS = 0,
    AITK_NVML_ERROR_INVALID_ARGUMENT = 2,
    AITK_NVML_ERROR_NOT_SUPPORTED = 3,
    AITK_NVML_ERROR_INSUFFICIENT_SIZE = 7,
    AITK_NVML_TEMPERATURE_GPU = 0,
    AITK_NVML_CLOCK_GRAPHICS = 0,
    AITK_NVML_CLOCK_SM = 1,
    AITK_NVML_CLOCK_MEM = 2,
    AITK_NVML_FEATURE_DISABLED = 0,
    AITK_NVML_FEATURE_ENABLED = 1,
    AITK_NVML_RETIRE_SINGLE_BIT = 0, /* NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS */
    AITK_NVML_RETIRE_DOUBLE_BIT = 1, /* NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR */
    /* Windows driver models: WDDM (a display device, shared with the
     * desktop), WDM = TCC (compute only), MCDM (Microsoft's compute driver
     * model, named from NVML 12.x on; older drivers never answer it). */
    AITK_NVML_DRIVER_WDDM = 0,
    AITK_NVML_DRIVER_WDM = 1,
    AITK_NVML_DRIVER_MCDM = 2,
    /* nvmlGpuTopologyLevel_t: the closest common ancestor of two GPUs'
     * PCIe paths (NVML API reference, "Topology Queries"). */
    AITK_NVML_TOPOLOGY_INTERNAL = 0,
    AITK_NVML_TOPOLOGY_SINGLE = 10,
    AITK_NVML_TOPOLOGY_MULTIPLE = 20,
    AITK_NVML_TOPOLOGY_HOSTBRIDGE = 30,
    AITK_NVML_TOPOLOGY_NODE = 40,
    AITK_NVML_TOPOLOGY_SYSTEM = 50,
    /* Buffer sizes nvml.h documents as enough for every answer. */
    AITK_NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80,
    AITK_NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96,
    AITK_NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96,
};

typedef aitk_nvml_return (*aitk_nvmlInit_v2_fn)(void);
typedef aitk_nvml_return (*aitk_nvmlInit_fn)(void);
typedef aitk_nvml_return (*aitk_nvmlShutdown_fn)(void);
typedef const char *(*aitk_nvmlErrorString_fn)(aitk_nvml_return);
typedef aitk_nvml_return (*aitk_nvmlSystemGetDriverVersion_fn)(char *, unsigned int);
typedef aitk_nvml_return (*aitk_nvmlSystemGetCudaDriverVersion_v2_fn)(int *);
typedef aitk_nvml_return (*aitk_nvmlSystemGetCudaDriverVersion_fn)(int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetCount_v2_fn)(unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetCount_fn)(unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int, aitk_nvml_device *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetHandleByIndex_fn)(unsigned int, aitk_nvml_device *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetName_fn)(aitk_nvml_device, char *, unsigned int);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetUUID_fn)(aitk_nvml_device, char *, unsigned int);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetPciInfo_v3_fn)(aitk_nvml_device, aitk_nvml_pci_info *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetPciInfo_v2_fn)(aitk_nvml_device, aitk_nvml_pci_info *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetCudaComputeCapability_fn)(aitk_nvml_device, int *, int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetMemoryInfo_fn)(aitk_nvml_device, aitk_nvml_memory *);
/* Bus width, PCIe generation and width, power limit: one unsigned int out. */
typedef aitk_nvml_return (*aitk_nvmlDeviceGetMemoryBusWidth_fn)(aitk_nvml_device, unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetCurrPcieLinkGeneration_fn)(aitk_nvml_device, unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetMaxPcieLinkGeneration_fn)(aitk_nvml_device, unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetCurrPcieLinkWidth_fn)(aitk_nvml_device, unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetMaxPcieLinkWidth_fn)(aitk_nvml_device, unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetPowerManagementLimit_fn)(aitk_nvml_device, unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetTemperature_fn)(aitk_nvml_device, aitk_nvml_temp_sensor,
                                                             unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetClockInfo_fn)(aitk_nvml_device, aitk_nvml_clock_type,
                                                           unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetMaxClockInfo_fn)(aitk_nvml_device, aitk_nvml_clock_type,
                                                              unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetEccMode_fn)(aitk_nvml_device, aitk_nvml_enable_state *,
                                                         aitk_nvml_enable_state *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetRemappedRows_fn)(aitk_nvml_device, unsigned int *,
                                                              unsigned int *, unsigned int *,
                                                              unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetRetiredPages_fn)(aitk_nvml_device, aitk_nvml_retire_cause,
                                                              unsigned int *, unsigned long long *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetPersistenceMode_fn)(aitk_nvml_device,
                                                                 aitk_nvml_enable_state *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetMigMode_fn)(aitk_nvml_device, unsigned int *,
                                                         unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetDisplayActive_fn)(aitk_nvml_device,
                                                               aitk_nvml_enable_state *);
/* NVLink (NVML API reference, "NvLink Methods"): the state and the
 * version (nvmlNvlinkVersion_t's values as unsigned int) of link `link`. */
typedef aitk_nvml_return (*aitk_nvmlDeviceGetNvLinkState_fn)(aitk_nvml_device, unsigned int,
                                                             aitk_nvml_enable_state *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetNvLinkVersion_fn)(aitk_nvml_device, unsigned int,
                                                               unsigned int *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetTopologyCommonAncestor_fn)(
    aitk_nvml_device, aitk_nvml_device, aitk_nvml_topology_level *);
/* _v2 (NVML 12.x on) can answer MCDM; the older name has the same shape. */
typedef aitk_nvml_return (*aitk_nvmlDeviceGetDriverModel_v2_fn)(aitk_nvml_device,
                                                                aitk_nvml_driver_model *,
                                                                aitk_nvml_driver_model *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetDriverModel_fn)(aitk_nvml_device,
                                                             aitk_nvml_driver_model *,
                                                             aitk_nvml_driver_model *);
/* The three versions differ only in the element type of the buffer, which
 * the probe never passes (NULL asks for the count): one calling shape. */
typedef aitk_nvml_return (*aitk_nvmlDeviceGetComputeRunningProcesses_v3_fn)(
    aitk_nvml_device, unsigned int *, aitk_nvml_process_info_v3 *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetComputeRunningProcesses_v2_fn)(
    aitk_nvml_device, unsigned int *, aitk_nvml_process_info_v2 *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetComputeRunningProcesses_fn)(
    aitk_nvml_device, unsigned int *, aitk_nvml_process_info_v1 *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetGraphicsRunningProcesses_v3_fn)(
    aitk_nvml_device, unsigned int *, aitk_nvml_process_info_v3 *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetGraphicsRunningProcesses_v2_fn)(
    aitk_nvml_device, unsigned int *, aitk_nvml_process_info_v2 *);
typedef aitk_nvml_return (*aitk_nvmlDeviceGetGraphicsRunningProcesses_fn)(
    aitk_nvml_device, unsigned int *, aitk_nvml_process_info_v1 *);

#endif
