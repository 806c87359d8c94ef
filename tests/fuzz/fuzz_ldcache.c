/* libFuzzer target: the ld.so.cache parser, then a lookup in what it built. */
#include <stddef.h>
#include <stdint.h>

#include "common/str.h"
#include "validate/libdeps/ldcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    aitk_ldcache c;
    aitk_str err = AITK_STR_INIT;
    if (aitk_ldcache_parse("fuzz.cache", data, size, &c, &err) == AITK_OK) {
        (void)aitk_ldcache_lookup(&c, "libc.so.6", 0x0303);
        aitk_ldcache_free(&c);
    }
    aitk_str_free(&err);
    return 0;
}
