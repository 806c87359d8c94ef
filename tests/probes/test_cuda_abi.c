/* Our CUDA driver API declarations (validate/probes/cudadrv_abi.h) against
 * NVIDIA's cuda.h of the installed toolkit: values, sizes and every function
 * type the probe calls through. A difference would silently ask the driver
 * the wrong question. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cuda.h>

#include "abi_table.h"

extern const abi_value cuda_values[];
extern const size_t cuda_value_count;
extern const abi_function cuda_functions[];
extern const size_t cuda_function_count;

static void test_values_and_sizes(void **state)
{
    (void)state;
    print_message("cuda.h of CUDA %d.%d\n", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    abi_check_values(cuda_values, cuda_value_count);
}

static void test_function_types(void **state)
{
    (void)state;
    abi_check_functions(cuda_functions, cuda_function_count);
}

/* The unversioned names in cuda.h resolve to the versions the probe asks
 * for first. */
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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_sizes),
        cmocka_unit_test(test_function_types),
        cmocka_unit_test(test_versioned_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
