/* Reporting for the ABI tables (abi_table.h). */
#include "abi_table.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

void abi_check_values(const abi_value *rows, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].ours != rows[i].theirs) {
            print_error("%s: ours %lld, NVIDIA's header %lld\n", rows[i].what, rows[i].ours,
                        rows[i].theirs);
            bad++;
        }
    }
    if (bad)
        fail_msg("%d of %zu values differ from NVIDIA's header", bad, n);
    print_message("%zu values agree with NVIDIA's header\n", n);
}

void abi_check_functions(const abi_function *rows, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].same_type) {
            print_error("%s: our function-pointer type is not the type NVIDIA declares\n",
                        rows[i].name);
            bad++;
        }
    }
    if (bad)
        fail_msg("%d of %zu function types differ from NVIDIA's header", bad, n);
    print_message("%zu function types agree with NVIDIA's header\n", n);
}
