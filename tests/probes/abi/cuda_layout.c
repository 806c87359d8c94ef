/* CUDA driver ABI, part 1: our declarations (validate/probes/cudadrv_abi.h,
 * in its normal mode) and cuda.h side by side: result and attribute values,
 * and the sizes of the types the probe passes. */
#include <cuda.h>
#include <stddef.h>

#include "abi_table.h"
#include "validate/probes/cudadrv_abi.h"

#define SIZE(ours, theirs) {"sizeof(" #theirs ")", (long long)sizeof(ours), (long long)sizeof(theirs)}

const abi_value cuda_values[] = {
    ABI_SAME(AITK_CU_SUCCESS, CUDA_SUCCESS),
    ABI_SAME(AITK_CU_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED),
    ABI_SAME(AITK_CU_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE),
    ABI_SAME(AITK_CU_ATTR_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
    ABI_SAME(AITK_CU_ATTR_SM_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
    ABI_SAME(AITK_CU_ATTR_PCI_BUS, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
    ABI_SAME(AITK_CU_ATTR_PCI_DEVICE, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
    ABI_SAME(AITK_CU_ATTR_MEMORY_CLOCK, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
    ABI_SAME(AITK_CU_ATTR_BUS_WIDTH, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
    ABI_SAME(AITK_CU_ATTR_PCI_DOMAIN, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
    ABI_SAME(AITK_CU_ATTR_CC_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
    ABI_SAME(AITK_CU_ATTR_CC_MINOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
    SIZE(aitk_cu_result, CUresult),
    SIZE(aitk_cu_device, CUdevice),
    SIZE(aitk_cu_device_attribute, CUdevice_attribute),
    SIZE(aitk_cu_uuid, CUuuid),
    {"offsetof(CUuuid, bytes)", (long long)offsetof(aitk_cu_uuid, bytes),
     (long long)offsetof(CUuuid, bytes)},
    SIZE(((aitk_cu_uuid *)0)->bytes, ((CUuuid *)0)->bytes),
};
const size_t cuda_value_count = sizeof cuda_values / sizeof *cuda_values;
