/* A fake libcuda.so.1 for tests: the real driver API symbol names, answering
 * from AITK_STUB_GPU (see stub_spec.h). Every function can be told to refuse
 * with a chosen CUresult ("refuse=NAME:CODE").
 *
 * With STUB_WITH_CUDA_H (set when the toolkit's cuda.h is installed) it
 * includes NVIDIA's header in the mode that also declares the older function
 * versions, so the compiler holds every definition below to NVIDIA's
 * prototype. Variants, each built into a folder of its own:
 *   STUB_WITHOUT_TOTALMEM  no cuDeviceTotalMem_v2 (a required symbol missing)
 *   STUB_OLD_DRIVER        cuDeviceGetUuid without its _v2 (before CUDA 11.4)
 *   STUB_REQUIRED_ONLY     no UUID and no error-text functions (all optional) */
#include <stdio.h>
#include <string.h>

#include "stub_spec.h"

#ifdef STUB_WITH_CUDA_H
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#else
typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef struct CUuuid_st { char bytes[16]; } CUuuid;
#endif

static stub_spec spec;
static int ready;

#define REFUSE(fn) do { int c_ = stub_refused(&spec, #fn); if (c_) return (CUresult)c_; } while (0)
#define REFUSE_DEV(fn, d) do { int c_ = stub_refused_dev(&spec, #fn, (int)(d)); if (c_) return (CUresult)c_; } while (0)

#ifndef STUB_REQUIRED_ONLY
CUresult cuGetErrorName(CUresult r, const char **s)
{
    REFUSE(cuGetErrorName);
    switch ((int)r) {
    case 0: *s = "CUDA_SUCCESS"; return (CUresult)0;
    case 3: *s = "CUDA_ERROR_NOT_INITIALIZED"; return (CUresult)0;
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; return (CUresult)0;
    case 101: *s = "CUDA_ERROR_INVALID_DEVICE"; return (CUresult)0;
    case 803: *s = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"; return (CUresult)0;
    case 999: *s = "CUDA_ERROR_UNKNOWN"; return (CUresult)0;
    default: *s = NULL; return (CUresult)1;
    }
}
CUresult cuGetErrorString(CUresult r, const char **s)
{
    REFUSE(cuGetErrorString);
    switch ((int)r) {
    case 100: *s = "no CUDA-capable device is detected"; return (CUresult)0;
    case 803: *s = "system has unsupported display driver / cuda driver combination"; return (CUresult)0;
    case 999: *s = "unknown error"; return (CUresult)0;
    default: *s = NULL; return (CUresult)1;
    }
}
#endif /* STUB_REQUIRED_ONLY */
CUresult cuDriverGetVersion(int *v)
{
    stub_spec_read(&spec);
    REFUSE(cuDriverGetVersion);
    *v = spec.cuda;
    return (CUresult)0;
}
CUresult cuInit(unsigned int flags)
{
    (void)flags;
    stub_spec_read(&spec);
    REFUSE(cuInit);
    if (spec.cu_init)
        return (CUresult)spec.cu_init;
    ready = 1;
    return (CUresult)0;
}
CUresult cuDeviceGetCount(int *n)
{
    if (!ready) return (CUresult)3;
    REFUSE(cuDeviceGetCount);
    int visible = 0;
    for (int i = 0; i < spec.count; i++)
        visible += !spec.gpus[i].mig; /* a MIG-enabled GPU shows no plain device */
    *n = visible;
    return (CUresult)0;
}
static stub_gpu *nth(int ordinal)
{
    for (int i = 0; i < spec.count; i++)
        if (!spec.gpus[i].mig && ordinal-- == 0)
            return &spec.gpus[i];
    return NULL;
}
#define DEVICE(g, d)                                \
    stub_gpu *g = ready ? nth(d) : NULL;            \
    if (!g) return (CUresult)101

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!ready) return (CUresult)3;
    REFUSE_DEV(cuDeviceGet, ordinal);
    if (!nth(ordinal)) return (CUresult)101;
    *d = ordinal;
    return (CUresult)0;
}
CUresult cuDeviceGetName(char *buf, int len, CUdevice d)
{
    DEVICE(g, d);
    REFUSE_DEV(cuDeviceGetName, d);
    snprintf(buf, (size_t)len, "%s", g->name);
    return (CUresult)0;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice d)
{
    DEVICE(g, d);
    REFUSE_DEV(cuDeviceGetAttribute, d);
    switch ((int)attr) {
    case 75: *v = g->major; return (CUresult)0;
    case 76: *v = g->minor; return (CUresult)0;
    case 16: *v = 128; return (CUresult)0;
    case 33: *v = d + 1; return (CUresult)0;
    case 34: case 50: *v = 0; return (CUresult)0;
    case 37: *v = 384; return (CUresult)0;
    case 36: *v = 10501000; return (CUresult)0;
    default: return (CUresult)1;
    }
}
#ifndef STUB_WITHOUT_TOTALMEM
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    DEVICE(g, d);
    REFUSE_DEV(cuDeviceTotalMem_v2, d);
    *bytes = (size_t)(g->mem_mib << 20);
    return (CUresult)0;
}
#endif

#ifndef STUB_REQUIRED_ONLY
/* The GPU's UUID ends in its ordinal; a MIG instance's own UUID starts with
 * 0x4d ('M') so the two differ. */
static void fill_uuid(CUuuid *u, CUdevice d, int instance)
{
    memset(u->bytes, 0, sizeof u->bytes);
    u->bytes[0] = (char)(instance ? 0x4d : 0x11);
    u->bytes[15] = (char)d;
}
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
    DEVICE(g, d);
    REFUSE_DEV(cuDeviceGetUuid, d);
    (void)g;
    fill_uuid(u, d, 0);
    return (CUresult)0;
}
#ifndef STUB_OLD_DRIVER
CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d)
{
    DEVICE(g, d);
    REFUSE_DEV(cuDeviceGetUuid_v2, d);
    fill_uuid(u, d, g->mig_instance);
    return (CUresult)0;
}
#endif
#endif /* STUB_REQUIRED_ONLY */
