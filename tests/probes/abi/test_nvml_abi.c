/* The NVML probe's declarations against one real nvml.h (the include path
 * picks which): built and run by nvml_abi_check.sh for each pinned header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "abi_table.h"

extern const abi_value nvml_values[];
extern const size_t nvml_value_count;
extern const abi_function nvml_functions[];
extern const size_t nvml_function_count;

static void test_values_and_layouts(void **state)
{
    (void)state;
    abi_check_values(nvml_values, nvml_value_count);
}

static void test_function_types(void **state)
{
    (void)state;
    abi_check_functions(nvml_functions, nvml_function_count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_layouts),
        cmocka_unit_test(test_function_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
