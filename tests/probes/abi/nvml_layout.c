/* NVML ABI, part 1: our declarations (validate/probes/nvml_abi.h, in its
 * normal mode) and nvml.h side by side: enum values, buffer sizes, and the
 * size and every field offset of each struct the probe reads. */
#include <nvml.h>
#include <stddef.h>

#include "abi_table.h"
#include "validate/probes/nvml_abi.h"

#define OFF(ours, theirs) {"offsetof" #theirs, (long long)offsetof ours, (long long)offsetof theirs}
#define SIZE(ours, theirs) {"sizeof(" #theirs ")", (long long)sizeof(ours), (long long)sizeof(theirs)}

const abi_value nvml_values[] = {
    ABI_SAME(AITK_NVML_SUCCESS, NVML_SUCCESS),
    ABI_SAME(AITK_NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_INVALID_ARGUMENT),
    ABI_SAME(AITK_NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NOT_SUPPORTED),
    ABI_SAME(AITK_NVML_TOPOLOGY_INTERNAL, NVML_TOPOLOGY_INTERNAL),
    ABI_SAME(AITK_NVML_TOPOLOGY_SINGLE, NVML_TOPOLOGY_SINGLE),
    ABI_SAME(AITK_NVML_TOPOLOGY_MULTIPLE, NVML_TOPOLOGY_MULTIPLE),
    ABI_SAME(AITK_NVML_TOPOLOGY_HOSTBRIDGE, NVML_TOPOLOGY_HOSTBRIDGE),
    ABI_SAME(AITK_NVML_TOPOLOGY_NODE, NVML_TOPOLOGY_NODE),
    ABI_SAME(AITK_NVML_TOPOLOGY_SYSTEM, NVML_TOPOLOGY_SYSTEM),
    ABI_SAME(AITK_NVML_ERROR_INSUFFICIENT_SIZE, NVML_ERROR_INSUFFICIENT_SIZE),
    ABI_SAME(AITK_NVML_TEMPERATURE_GPU, NVML_TEMPERATURE_GPU),
    ABI_SAME(AITK_NVML_CLOCK_GRAPHICS, NVML_CLOCK_GRAPHICS),
    ABI_SAME(AITK_NVML_CLOCK_SM, NVML_CLOCK_SM),
    ABI_SAME(AITK_NVML_CLOCK_MEM, NVML_CLOCK_MEM),
    ABI_SAME(AITK_NVML_FEATURE_DISABLED, NVML_FEATURE_DISABLED),
    ABI_SAME(AITK_NVML_FEATURE_ENABLED, NVML_FEATURE_ENABLED),
    ABI_SAME(AITK_NVML_RETIRE_SINGLE_BIT, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS),
    ABI_SAME(AITK_NVML_RETIRE_DOUBLE_BIT, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR),
    ABI_SAME(AITK_NVML_DRIVER_WDDM, NVML_DRIVER_WDDM),
    ABI_SAME(AITK_NVML_DRIVER_WDM, NVML_DRIVER_WDM),
#if NVML_API_VERSION >= 12 /* MCDM is named from the 12.x headers on */
    ABI_SAME(AITK_NVML_DRIVER_MCDM, NVML_DRIVER_MCDM),
#endif
    ABI_SAME(AITK_NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE),
    ABI_SAME(AITK_NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE),
    ABI_SAME(AITK_NVML_DEVICE_UUID_V2_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE),
    SIZE(aitk_nvml_return, nvmlReturn_t),
    SIZE(aitk_nvml_enable_state, nvmlEnableState_t),
    SIZE(aitk_nvml_clock_type, nvmlClockType_t),
    SIZE(aitk_nvml_temp_sensor, nvmlTemperatureSensors_t),
    SIZE(aitk_nvml_retire_cause, nvmlPageRetirementCause_t),
    SIZE(aitk_nvml_driver_model, nvmlDriverModel_t),
    SIZE(aitk_nvml_device, nvmlDevice_t),
    SIZE(aitk_nvml_memory, nvmlMemory_t),
    OFF((aitk_nvml_memory, total), (nvmlMemory_t, total)),
    OFF((aitk_nvml_memory, free), (nvmlMemory_t, free)),
    OFF((aitk_nvml_memory, used), (nvmlMemory_t, used)),
    SIZE(aitk_nvml_pci_info, nvmlPciInfo_t),
    OFF((aitk_nvml_pci_info, bus_id_legacy), (nvmlPciInfo_t, busIdLegacy)),
    SIZE(((aitk_nvml_pci_info *)0)->bus_id_legacy, ((nvmlPciInfo_t *)0)->busIdLegacy),
    OFF((aitk_nvml_pci_info, domain), (nvmlPciInfo_t, domain)),
    OFF((aitk_nvml_pci_info, bus), (nvmlPciInfo_t, bus)),
    OFF((aitk_nvml_pci_info, device), (nvmlPciInfo_t, device)),
    OFF((aitk_nvml_pci_info, pci_device_id), (nvmlPciInfo_t, pciDeviceId)),
    OFF((aitk_nvml_pci_info, pci_subsystem_id), (nvmlPciInfo_t, pciSubSystemId)),
    OFF((aitk_nvml_pci_info, bus_id), (nvmlPciInfo_t, busId)),
    SIZE(((aitk_nvml_pci_info *)0)->bus_id, ((nvmlPciInfo_t *)0)->busId),
    /* The bus-id buffer sizes behind those two arrays. */
    ABI_SAME(sizeof(((aitk_nvml_pci_info *)0)->bus_id_legacy), NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE),
    ABI_SAME(sizeof(((aitk_nvml_pci_info *)0)->bus_id), NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE),
};
const size_t nvml_value_count = sizeof nvml_values / sizeof *nvml_values;
