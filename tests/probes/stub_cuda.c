/* A fake libcuda.so.1 for tests: the real driver API symbol names, answering
 * from AITK_STUB_GPU (see stub_spec.h). Built twice: once whole, once without
 * cuDeviceTotalMem_v2/cuDeviceTotalMem (STUB_WITHOUT_TOTALMEM) for the
 * "required symbol missing" path. */
#include <stdio.h>
#include <string.h>

#include "stub_spec.h"

typedef int CUresult;
typedef int CUdevice;

static stub_spec spec;
static int ready;

CUresult cuGetErrorName(CUresult r, const char **s)
{
    switch (r) {
    case 0: *s = "CUDA_SUCCESS"; return 0;
    case 3: *s = "CUDA_ERROR_NOT_INITIALIZED"; return 0;
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 803: *s = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"; return 0;
    case 999: *s = "CUDA_ERROR_UNKNOWN"; return 0;
    default: *s = NULL; return 1;
    }
}
CUresult cuGetErrorString(CUresult r, const char **s)
{
    switch (r) {
    case 100: *s = "no CUDA-capable device is detected"; return 0;
    case 803: *s = "system has unsupported display driver / cuda driver combination"; return 0;
    case 999: *s = "unknown error"; return 0;
    default: *s = NULL; return 1;
    }
}
CUresult cuDriverGetVersion(int *v)
{
    stub_spec_read(&spec);
    *v = spec.cuda;
    return 0;
}
CUresult cuInit(unsigned int flags)
{
    (void)flags;
    stub_spec_read(&spec);
    if (spec.cu_init)
        return spec.cu_init;
    ready = 1;
    return 0;
}
CUresult cuDeviceGetCount(int *n)
{
    if (!ready) return 3;
    int visible = 0;
    for (int i = 0; i < spec.count; i++)
        visible += !spec.gpus[i].mig; /* a MIG-enabled GPU shows no plain device */
    *n = visible;
    return 0;
}
static stub_gpu *nth(int ordinal)
{
    for (int i = 0; i < spec.count; i++)
        if (!spec.gpus[i].mig && ordinal-- == 0)
            return &spec.gpus[i];
    return NULL;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!ready) return 3;
    if (!nth(ordinal)) return 101;
    *d = ordinal;
    return 0;
}
CUresult cuDeviceGetName(char *buf, int len, CUdevice d)
{
    stub_gpu *g = ready ? nth(d) : NULL;
    if (!g) return 101;
    snprintf(buf, (size_t)len, "%s", g->name);
    return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    stub_gpu *g = ready ? nth(d) : NULL;
    if (!g) return 101;
    switch (attr) {
    case 75: *v = g->major; return 0;
    case 76: *v = g->minor; return 0;
    case 16: *v = 128; return 0;
    case 33: *v = d + 1; return 0;
    case 34: case 50: *v = 0; return 0;
    case 37: *v = 384; return 0;
    case 36: *v = 10501000; return 0;
    default: return 1;
    }
}
#ifndef STUB_WITHOUT_TOTALMEM
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    stub_gpu *g = ready ? nth(d) : NULL;
    if (!g) return 101;
    *bytes = (size_t)(g->mem_mib << 20);
    return 0;
}
#endif
