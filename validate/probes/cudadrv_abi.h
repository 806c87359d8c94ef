/* The few CUDA driver API values the probe uses, declared by us so the build
 * needs no CUDA header. Values are those of cuda.h (CUresult,
 * CUdevice_attribute); tests/probes/test_cuda_abi.c checks them against the
 * real header when one is installed. */
#ifndef AITK_VALIDATE_PROBES_CUDADRV_ABI_H
#define AITK_VALIDATE_PROBES_CUDADRV_ABI_H

typedef int aitk_cu_result; /* CUresult */

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

#endif
