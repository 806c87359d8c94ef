/* libFuzzer target: the ELF reader (libelf underneath) over arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "common/str.h"
#include "validate/libdeps/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    aitk_elf_info e;
    aitk_str err = AITK_STR_INIT;
    if (aitk_elf_read_mem("fuzz.so", data, size, &e, &err) == AITK_OK)
        aitk_elf_info_free(&e);
    aitk_str_free(&err);
    return 0;
}
