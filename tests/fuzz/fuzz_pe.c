/* libFuzzer target: the PE reader over arbitrary bytes, exports and
 * imported function names included. */
#include <stddef.h>
#include <stdint.h>

#include "common/str.h"
#include "validate/libdeps/pe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    aitk_pe_info pe;
    aitk_str err = AITK_STR_INIT;
    if (aitk_pe_read_mem("fuzz.dll", data, size, AITK_PE_READ_EXPORTS | AITK_PE_READ_SYMBOLS, &pe,
                         &err) == AITK_OK)
        aitk_pe_info_free(&pe);
    aitk_str_free(&err);
    return 0;
}
