/* The CPU backend's raw memory members: alloc/free (zeroed host memory),
 * byte copies for upload/download, and zero. The accounting around them is
 * kernels/mem.c's, shared with every backend. Host memory goes through
 * common/alloc.h so a test can make an allocation fail. */
#include <string.h>

#include "common/alloc.h"
#include "kernels/cpu/cpu.h"

aitk_status aitk_cpu_alloc(void **out, size_t bytes)
{
    if (!out)
        return AITK_E_INVAL;
    /* Zeroed: gradients start at 0 and a run repeats bit for bit. A zero
     * size still gets a real pointer, as the contract asks of alloc. */
    *out = aitk_calloc(1, bytes ? bytes : 1);
    return *out ? AITK_OK : AITK_E_NOMEM;
}

void aitk_cpu_free(void *ptr)
{
    aitk_free(ptr);
}

aitk_status aitk_cpu_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return AITK_OK;
    if (!dst || !src)
        return AITK_E_INVAL;
    memmove(dst, src, bytes);
    return AITK_OK;
}

aitk_status aitk_cpu_zero(void *dst, size_t bytes)
{
    if (bytes == 0)
        return AITK_OK;
    if (!dst)
        return AITK_E_INVAL;
    memset(dst, 0, bytes);
    return AITK_OK;
}
