/* What an ABI test compares: our value against NVIDIA's, one row each, so a
 * failure names every field that differs rather than stopping at the first.
 * The rows are filled in translation units that include NVIDIA's header. */
#ifndef AITK_TESTS_ABI_TABLE_H
#define AITK_TESTS_ABI_TABLE_H

#include <stddef.h>

typedef struct abi_value {
    const char *what; /* "sizeof(nvmlMemory_t)", "NVML_SUCCESS", ... */
    long long ours, theirs;
} abi_value;

typedef struct abi_function {
    const char *name; /* the NVIDIA function */
    int same_type;    /* our function-pointer type is the type of &name */
} abi_function;

/* Compares every row; fails the cmocka test listing each mismatch. */
void abi_check_values(const abi_value *rows, size_t n);
void abi_check_functions(const abi_function *rows, size_t n);

#define ABI_SAME(a, b) {#b, (long long)(a), (long long)(b)}
#define ABI_FN(ours, name) {#name, __builtin_types_compatible_p(ours, __typeof__(&name))}

#endif
