/* CUDA driver ABI, part 2: cudadrv_abi.h compiled with NVIDIA's own types
 * for its base names (AITK_CUDA_ABI_REAL_TYPES), so each of our
 * function-pointer types must be exactly the type cuda.h declares. cuda.h
 * declares the original cuDeviceGetUuid (which the probe compares with _v2)
 * only in the mode the driver's own build uses, __CUDA_API_VERSION_INTERNAL;
 * every other name keeps its public prototype there. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#define AITK_CUDA_ABI_REAL_TYPES
typedef CUresult aitk_cu_result;
typedef CUdevice aitk_cu_device;
typedef CUdevice_attribute aitk_cu_device_attribute;
typedef CUuuid aitk_cu_uuid;
#include "validate/probes/cudadrv_abi.h"

#include "abi_table.h"

#define FN(name) ABI_FN(aitk_##name##_fn, name)
const abi_function cuda_functions[] = {
    FN(cuInit),
    FN(cuDriverGetVersion),
    FN(cuDeviceGetCount),
    FN(cuDeviceGet),
    FN(cuDeviceGetName),
    FN(cuDeviceGetAttribute),
    FN(cuDeviceTotalMem_v2),
    FN(cuDeviceGetUuid_v2),
    FN(cuDeviceGetUuid),
    FN(cuGetErrorName),
    FN(cuGetErrorString),
};
const size_t cuda_function_count = sizeof cuda_functions / sizeof *cuda_functions;
