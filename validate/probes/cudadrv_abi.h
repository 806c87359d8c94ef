/* The part of the CUDA driver API the probe uses, declared by us so that the
 * build needs no CUDA header: result and attribute values, the UUID struct,
 * and one function-pointer type per driver function, named after it. Values
 * and prototypes are those of cuda.h (CUDA Driver API reference, "Device
 * Management" and "Error Handling"). tests/probes/test_cuda_abi.c compiles
 * this header against the toolkit's cuda.h where one is installed and compares
 * every value, size, offset and function type.
 *
 * Under AITK_CUDA_ABI_REAL_TYPES the test supplies NVIDIA's own types for
 * the base names, so the function types must be the very types cuda.h
 * declares. */
#ifndef AITK_VALIDATE_PROBES_CUDADRV_ABI_H
#define AITK_VALIDATE_PROBES_CUDADRV_ABI_H

#include <stddef.h>

#ifndef AITK_CUDA_ABI_REAL_TYPES
typedef int aitk_cu_result;           /* CUresult, an int-sized enum */
typedef int aitk_cu_device;           /* CUdevice */
typedef int aitk_cu_device_attribute; /* CUdevice_attribute, an int-sized enum */
typedef struct aitk_cu_uuid {         /* CUuuid */
    char bytes[16];
} aitk_cu_uuid;
#endif

enum {
    AITK_CU_SUCCESS = 0,
    AITK_CU_ERROR_NOT_INITIALIZED = 3,
    AITK_CU_ERROR_NO_DEVICE = 100,
};

enum {
    AITK_CU_ATTR_CLOCK_RATE = 13,
    AITK_CU_ATTR_SM_COUNT = 16,
    AITK_CU_ATTR_PCI_BUS = 33,
    AITK_CU_ATTR_PCI_DEVICE = 34,
    AITK_CU_ATTR_MEMORY_CLOCK = 36,
    AITK_CU_ATTR_BUS_WIDTH = 37,
    AITK_CU_ATTR_PCI_DOMAIN = 50,
    AITK_CU_ATTR_CC_MAJOR = 75,
    AITK_CU_ATTR_CC_MINOR = 76,
};

typedef aitk_cu_result (*aitk_cuInit_fn)(unsigned int);
typedef aitk_cu_result (*aitk_cuDriverGetVersion_fn)(int *);
typedef aitk_cu_result (*aitk_cuDeviceGetCount_fn)(int *);
typedef aitk_cu_result (*aitk_cuDeviceGet_fn)(aitk_cu_device *, int);
typedef aitk_cu_result (*aitk_cuDeviceGetName_fn)(char *, int, aitk_cu_device);
typedef aitk_cu_result (*aitk_cuDeviceGetAttribute_fn)(int *, aitk_cu_device_attribute,
                                                       aitk_cu_device);
/* Only the _v2 total-memory call (CUDA 3.2 and later) is used: the older
 * cuDeviceTotalMem takes an unsigned int, which cannot hold 4 GiB or more. */
typedef aitk_cu_result (*aitk_cuDeviceTotalMem_v2_fn)(size_t *, aitk_cu_device);
/* _v2 answers a MIG compute instance's own UUID; the original answers the
 * UUID of the physical GPU. Same prototype. */
typedef aitk_cu_result (*aitk_cuDeviceGetUuid_v2_fn)(aitk_cu_uuid *, aitk_cu_device);
typedef aitk_cu_result (*aitk_cuDeviceGetUuid_fn)(aitk_cu_uuid *, aitk_cu_device);
typedef aitk_cu_result (*aitk_cuGetErrorName_fn)(aitk_cu_result, const char **);
typedef aitk_cu_result (*aitk_cuGetErrorString_fn)(aitk_cu_result, const char **);

#endif
