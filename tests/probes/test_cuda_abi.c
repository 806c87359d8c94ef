/* Our own CUDA driver API declarations (validate/probes/cudadrv_abi.h)
 * against NVIDIA's cuda.h, where one is installed: the values are fixed by
 * the ABI, so a typo here would silently ask the driver the wrong question. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cuda.h>

#include "validate/probes/cudadrv_abi.h"

_Static_assert((int)AITK_CU_SUCCESS == (int)CUDA_SUCCESS, "CUDA_SUCCESS");
_Static_assert((int)AITK_CU_ERROR_NOT_INITIALIZED == (int)CUDA_ERROR_NOT_INITIALIZED, "NOT_INITIALIZED");
_Static_assert((int)AITK_CU_ERROR_NO_DEVICE == (int)CUDA_ERROR_NO_DEVICE, "NO_DEVICE");
_Static_assert((int)AITK_CU_ATTR_CLOCK_RATE == (int)CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "CLOCK_RATE");
_Static_assert((int)AITK_CU_ATTR_SM_COUNT == (int)CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM_COUNT");
_Static_assert((int)AITK_CU_ATTR_PCI_BUS == (int)CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, "PCI_BUS");
_Static_assert((int)AITK_CU_ATTR_PCI_DEVICE == (int)CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, "PCI_DEVICE");
_Static_assert((int)AITK_CU_ATTR_MEMORY_CLOCK == (int)CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "MEMORY_CLOCK");
_Static_assert((int)AITK_CU_ATTR_BUS_WIDTH == (int)CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "BUS_WIDTH");
_Static_assert((int)AITK_CU_ATTR_PCI_DOMAIN == (int)CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, "PCI_DOMAIN");
_Static_assert((int)AITK_CU_ATTR_CC_MAJOR == (int)CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "CC_MAJOR");
_Static_assert((int)AITK_CU_ATTR_CC_MINOR == (int)CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "CC_MINOR");
/* The probe passes CUdevice as int and CUresult as int. */
_Static_assert(sizeof(CUdevice) == sizeof(int), "CUdevice is an int");
_Static_assert(sizeof(CUresult) == sizeof(aitk_cu_result), "CUresult is an int-sized enum");
_Static_assert(sizeof(CUuuid) == 16, "CUuuid is 16 bytes");

/* The versioned names the probe asks for first are the ones cuda.h maps to. */
static void test_versioned_names(void **state)
{
    (void)state;
#define STR2(x) #x
#define STR(x) STR2(x)
    assert_string_equal(STR(cuDeviceTotalMem), "cuDeviceTotalMem_v2");
    assert_string_equal(STR(cuDeviceGetUuid), "cuDeviceGetUuid_v2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_versioned_names)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
