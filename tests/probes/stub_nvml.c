/* A fake libnvidia-ml.so.1 for tests: exports the real NVML symbol names with
 * the real signatures (declared here, independently of the probe) and answers
 * from AITK_STUB_GPU, so the probe's dlopen/dlsym path runs in CI. Built a
 * second time without nvmlDeviceGetMemoryInfo (STUB_WITHOUT_MEMINFO). */
#include <stdio.h>
#include <string.h>

#include "stub_spec.h"

typedef int nvmlReturn_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef stub_gpu *nvmlDevice_t;

enum { OK = 0, UNINIT = 1, INVALID = 2, NOT_SUPPORTED = 3, INSUFFICIENT_SIZE = 7 };

static stub_spec spec;
static int ready;

#define DEV_CHECK(d) do { if (!ready) return UNINIT; if (!(d)) return INVALID; } while (0)

nvmlReturn_t nvmlInit_v2(void)
{
    stub_spec_read(&spec);
    if (spec.nvml_init)
        return spec.nvml_init;
    ready = 1;
    return OK;
}
nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
nvmlReturn_t nvmlShutdown(void) { ready = 0; return OK; }

const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case OK: return "Success";
    case UNINIT: return "Uninitialized";
    case 9: return "Driver Not Loaded";
    case 18: return "LIB_RM_VERSION_MISMATCH";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
    if (!ready) return UNINIT;
    if (strlen(spec.driver) + 1 > len) return INSUFFICIENT_SIZE;
    strcpy(buf, spec.driver);
    return OK;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { if (!ready) return UNINIT; *v = spec.cuda; return OK; }
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { return nvmlSystemGetCudaDriverVersion_v2(v); }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { if (!ready) return UNINIT; *n = (unsigned)spec.count; return OK; }
nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return nvmlDeviceGetCount_v2(n); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    if (!ready) return UNINIT;
    if (i >= (unsigned)spec.count) return INVALID;
    *d = &spec.gpus[i];
    return OK;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { return nvmlDeviceGetHandleByIndex_v2(i, d); }

static int index_of(nvmlDevice_t d) { return (int)(d - spec.gpus); }

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned int len)
{
    DEV_CHECK(d);
    if (strlen(d->name) + 1 > len) return INSUFFICIENT_SIZE;
    strcpy(buf, d->name);
    return OK;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned int len)
{
    DEV_CHECK(d);
    snprintf(buf, len, "GPU-00000000-0000-0000-0000-00000000000%d", index_of(d));
    return OK;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
    DEV_CHECK(d);
    memset(p, 0, sizeof *p);
    p->bus = (unsigned)(1 + index_of(d));
    snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
    return OK;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
    DEV_CHECK(d);
    *major = d->major;
    *minor = d->minor;
    return OK;
}
#ifndef STUB_WITHOUT_MEMINFO
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    DEV_CHECK(d);
    m->total = d->mem_mib << 20;
    m->used = d->display ? 512ULL << 20 : 0;
    m->free = m->total - m->used;
    return OK;
}
#endif
nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(d); *v = 384; return OK; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(d); *v = 1; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(d); *v = 4; return OK; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(d); *v = 16; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(d); *v = 16; return OK; }
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *mw) { DEV_CHECK(d); *mw = 450000; return OK; }
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *v) { DEV_CHECK(d); *v = 41; return sensor == 0 ? OK : INVALID; }
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *v) { DEV_CHECK(d); *v = type == 2 ? 10501 : 210; return OK; }
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int *v) { DEV_CHECK(d); *v = type == 2 ? 10501 : 3120; return OK; }
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int *cur, int *pend) { DEV_CHECK(d); (void)cur; (void)pend; return NOT_SUPPORTED; }
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *c, unsigned int *u, unsigned int *p, unsigned int *f)
{
    DEV_CHECK(d);
    *c = 0;
    *u = d->remap_pending ? 1 : 0;
    *p = (unsigned)d->remap_pending;
    *f = 0;
    return OK;
}
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned int *n, unsigned long long *a)
{
    DEV_CHECK(d);
    (void)cause; (void)a;
    *n = 0;
    return OK;
}
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *v) { DEV_CHECK(d); *v = 1; return OK; }
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pend)
{
    DEV_CHECK(d);
    *cur = *pend = (unsigned)d->mig;
    return OK;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, void *infos)
{
    DEV_CHECK(d);
    (void)infos;
    *n = 0;
    return OK;
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, void *infos)
{
    DEV_CHECK(d);
    unsigned int have = d->display ? 1 : 0;
    if (*n < have) { *n = have; return INSUFFICIENT_SIZE; }
    (void)infos;
    *n = have;
    return OK;
}
nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t d, int *v) { DEV_CHECK(d); *v = d->display; return OK; }
