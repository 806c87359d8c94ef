/* A fake libnvidia-ml.so.1 for tests: exports the real NVML symbol names with
 * the real signatures and answers from AITK_STUB_GPU (stub_spec.h), so the
 * probe's dlopen/dlsym path runs in CI. Every function can be told to refuse
 * with a chosen NVML error ("refuse=NAME:CODE").
 *
 * Its declarations are written here, independently of the probe's. With
 * STUB_WITH_NVML_H it includes NVIDIA's nvml.h instead (the ABI test compiles
 * it so against the real headers), and the compiler then holds every
 * definition below to NVIDIA's prototype.
 *
 * Variants, each built into a folder of its own:
 *   STUB_WITHOUT_MEMINFO  no nvmlDeviceGetMemoryInfo (a required symbol missing)
 *   STUB_OLD_DRIVER       only the oldest name of every versioned function, as a
 *                         driver from before those versions; its
 *                         nvmlDeviceGetPciInfo_v2 writes the old struct layout
 *   STUB_NO_V3_PROCESSES  the _v2 process lists without _v3 (R450-R470 era)
 *   STUB_REQUIRED_ONLY    only the functions the probe cannot work without: every
 *                         optional one is absent */
#include <stdio.h>
#include <string.h>

#include "stub_spec.h"

#ifdef STUB_WITH_NVML_H
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>
#else
typedef int nvmlReturn_t;
typedef unsigned int nvmlEnableState_t;
typedef unsigned int nvmlClockType_t;
typedef unsigned int nvmlTemperatureSensors_t;
typedef unsigned int nvmlPageRetirementCause_t;
typedef unsigned int nvmlDriverModel_t;
typedef unsigned int nvmlGpuTopologyLevel_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlProcessInfo_v1_st nvmlProcessInfo_v1_t;
typedef struct nvmlProcessInfo_v2_st nvmlProcessInfo_v2_t;
typedef struct nvmlProcessInfo_v2_st nvmlProcessInfo_t;
#endif

/* The struct nvmlDeviceGetPciInfo_v2 filled before NVML grew the 32-byte
 * busId: the bus id in the first 16 bytes, then the same numbers, then four
 * reserved words. */
typedef struct {
    char busId[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    unsigned int reserved[4];
} stub_old_pci_info;

/* NVML's codes, typed as nvmlReturn_t so the real header's enum takes them. */
#define OK ((nvmlReturn_t)0)
#define UNINIT ((nvmlReturn_t)1)
#define INVALID ((nvmlReturn_t)2)
#define NOT_SUPPORTED ((nvmlReturn_t)3)
#define INSUFFICIENT_SIZE ((nvmlReturn_t)7)

static stub_spec spec;
static int ready;

/* Handles are pointers into spec.gpus, cast to NVML's opaque type. */
#define GPU(d) ((stub_gpu *)(void *)(d))
#define REFUSE(fn) do { int c_ = stub_refused(&spec, #fn); if (c_) return (nvmlReturn_t)c_; } while (0)
#define DEV_CHECK(fn, d)                                                                    \
    do {                                                                                    \
        if (!ready) return (nvmlReturn_t)UNINIT;                                            \
        if (!(d)) return (nvmlReturn_t)INVALID;                                             \
        int c_ = stub_refused_dev(&spec, #fn, index_of(d));                                 \
        if (c_) return (nvmlReturn_t)c_;                                                    \
    } while (0)

static int index_of(nvmlDevice_t d) { return (int)(GPU(d) - spec.gpus); }

static nvmlReturn_t init_any(const char *fn)
{
    stub_spec_read(&spec);
    int c = stub_refused(&spec, fn);
    if (c)
        return (nvmlReturn_t)c;
    if (spec.nvml_init)
        return (nvmlReturn_t)spec.nvml_init;
    ready = 1;
    return OK;
}
#ifndef STUB_OLD_DRIVER
nvmlReturn_t nvmlInit_v2(void) { return init_any("nvmlInit_v2"); }
#endif
nvmlReturn_t nvmlInit(void) { return init_any("nvmlInit"); }
nvmlReturn_t nvmlShutdown(void) { REFUSE(nvmlShutdown); ready = 0; return OK; }

#ifndef STUB_REQUIRED_ONLY
const char *nvmlErrorString(nvmlReturn_t r)
{
    switch ((int)r) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    case 18: return "LIB_RM_VERSION_MISMATCH";
    default: return "Unknown Error";
    }
}

#endif /* STUB_REQUIRED_ONLY */
nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
    if (!ready) return UNINIT;
    REFUSE(nvmlSystemGetDriverVersion);
    if (strlen(spec.driver) + 1 > len) return INSUFFICIENT_SIZE;
    strcpy(buf, spec.driver);
    return OK;
}
#ifndef STUB_REQUIRED_ONLY
static nvmlReturn_t cuda_version(const char *fn, int *v)
{
    if (!ready) return UNINIT;
    int c = stub_refused(&spec, fn);
    if (c) return (nvmlReturn_t)c;
    *v = spec.cuda;
    return OK;
}
#ifndef STUB_OLD_DRIVER
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return cuda_version("nvmlSystemGetCudaDriverVersion_v2", v); }
#endif
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { return cuda_version("nvmlSystemGetCudaDriverVersion", v); }
#endif /* STUB_REQUIRED_ONLY */

static nvmlReturn_t count_any(const char *fn, unsigned int *n)
{
    if (!ready) return UNINIT;
    int c = stub_refused(&spec, fn);
    if (c) return (nvmlReturn_t)c;
    *n = (unsigned)spec.count;
    return OK;
}
#ifndef STUB_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { return count_any("nvmlDeviceGetCount_v2", n); }
#endif
nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return count_any("nvmlDeviceGetCount", n); }

static nvmlReturn_t handle_any(const char *fn, unsigned int i, nvmlDevice_t *d)
{
    if (!ready) return UNINIT;
    int c = stub_refused(&spec, fn);
    if (c) return (nvmlReturn_t)c;
    if (i >= (unsigned)spec.count) return INVALID;
    *d = (nvmlDevice_t)(void *)&spec.gpus[i];
    return OK;
}
#ifndef STUB_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { return handle_any("nvmlDeviceGetHandleByIndex_v2", i, d); }
#endif
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { return handle_any("nvmlDeviceGetHandleByIndex", i, d); }

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned int len)
{
    DEV_CHECK(nvmlDeviceGetName, d);
    if (strlen(GPU(d)->name) + 1 > len) return INSUFFICIENT_SIZE;
    strcpy(buf, GPU(d)->name);
    return OK;
}
#ifndef STUB_REQUIRED_ONLY
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned int len)
{
    DEV_CHECK(nvmlDeviceGetUUID, d);
    snprintf(buf, len, "GPU-00000000-0000-0000-0000-00000000000%d", index_of(d));
    return OK;
}
#ifndef STUB_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
    DEV_CHECK(nvmlDeviceGetPciInfo_v3, d);
    memset(p, 0, sizeof *p);
    p->bus = (unsigned)(1 + index_of(d));
    snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
    return OK;
}
#endif
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p)
{
    DEV_CHECK(nvmlDeviceGetPciInfo_v2, d);
#ifdef STUB_OLD_DRIVER
    stub_old_pci_info *old = (stub_old_pci_info *)(void *)p;
    memset(old, 0, sizeof *old);
    old->bus = (unsigned)(1 + index_of(d));
    snprintf(old->busId, sizeof old->busId, "0000:%02X:00.0", old->bus);
#else
    memset(p, 0, sizeof *p);
    p->bus = (unsigned)(1 + index_of(d));
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
#endif
    return OK;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
    DEV_CHECK(nvmlDeviceGetCudaComputeCapability, d);
    *major = GPU(d)->major;
    *minor = GPU(d)->minor;
    return OK;
}
#endif /* STUB_REQUIRED_ONLY */
#ifndef STUB_WITHOUT_MEMINFO
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    DEV_CHECK(nvmlDeviceGetMemoryInfo, d);
    m->total = GPU(d)->mem_mib << 20;
    m->used = GPU(d)->display ? 512ULL << 20 : 0;
    m->free = m->total - m->used;
    return OK;
}
#endif
#ifndef STUB_REQUIRED_ONLY
nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(nvmlDeviceGetMemoryBusWidth, d); *v = 384; return OK; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(nvmlDeviceGetCurrPcieLinkGeneration, d); *v = 1; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(nvmlDeviceGetMaxPcieLinkGeneration, d); *v = 4; return OK; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(nvmlDeviceGetCurrPcieLinkWidth, d); *v = 16; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { DEV_CHECK(nvmlDeviceGetMaxPcieLinkWidth, d); *v = 16; return OK; }
/* NVLink: the GPU's nvlink= links are active, up to 18 exist (NVML 11-12's
 * NVML_NVLINK_MAX_LINKS); without nvlink= none is supported. */
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, nvmlEnableState_t *on)
{
    DEV_CHECK(nvmlDeviceGetNvLinkState, d);
    if (!GPU(d)->nvlinks)
        return NOT_SUPPORTED;
    if (link >= 18)
        return INVALID;
    *on = (nvmlEnableState_t)(link < (unsigned)GPU(d)->nvlinks);
    return OK;
}
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int link, unsigned int *v)
{
    DEV_CHECK(nvmlDeviceGetNvLinkVersion, d);
    if (!GPU(d)->nvlinks)
        return NOT_SUPPORTED;
    if (link >= 18)
        return INVALID;
    *v = (unsigned)GPU(d)->nvlink_version;
    return OK;
}
/* Every pair across the CPU interconnect, as on a two-socket server. */
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuTopologyLevel_t *level)
{
    DEV_CHECK(nvmlDeviceGetTopologyCommonAncestor, a);
    if (!b)
        return INVALID;
    *level = (nvmlGpuTopologyLevel_t)50;
    return OK;
}
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *mw) { DEV_CHECK(nvmlDeviceGetPowerManagementLimit, d); *mw = 450000; return OK; }
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t sensor, unsigned int *v)
{
    DEV_CHECK(nvmlDeviceGetTemperature, d);
    *v = 41;
    return sensor == 0 ? OK : INVALID;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *v) { DEV_CHECK(nvmlDeviceGetClockInfo, d); *v = type == 2 ? 10501 : 210; return OK; }
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *v) { DEV_CHECK(nvmlDeviceGetMaxClockInfo, d); *v = type == 2 ? 10501 : 3120; return OK; }
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, nvmlEnableState_t *cur, nvmlEnableState_t *pend)
{
    DEV_CHECK(nvmlDeviceGetEccMode, d);
    *cur = *pend = (nvmlEnableState_t)1;
    return OK;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *c, unsigned int *u, unsigned int *p, unsigned int *f)
{
    DEV_CHECK(nvmlDeviceGetRemappedRows, d);
    *c = 0;
    *u = GPU(d)->remap_pending ? 1 : 0;
    *p = (unsigned)GPU(d)->remap_pending;
    *f = 0;
    return OK;
}
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, nvmlPageRetirementCause_t cause, unsigned int *n, unsigned long long *a)
{
    DEV_CHECK(nvmlDeviceGetRetiredPages, d);
    (void)a;
    *n = cause == 0 ? 2 : 1;
    return OK;
}
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t *v) { DEV_CHECK(nvmlDeviceGetPersistenceMode, d); *v = (nvmlEnableState_t)1; return OK; }
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pend)
{
    DEV_CHECK(nvmlDeviceGetMigMode, d);
    *cur = *pend = (unsigned)GPU(d)->mig;
    return OK;
}

/* Counts only: the probe never passes a buffer. A GPU that drives a display
 * runs one graphics process; compute lists are empty. */
static nvmlReturn_t processes(const char *fn, nvmlDevice_t d, unsigned int *n, int graphics)
{
    if (!ready) return UNINIT;
    if (!d) return INVALID;
    int c = stub_refused_dev(&spec, fn, index_of(d));
    if (c) return (nvmlReturn_t)c;
    unsigned int have = graphics && GPU(d)->display ? 1 : 0;
    if (*n < have) { *n = have; return INSUFFICIENT_SIZE; }
    *n = have;
    return OK;
}
#if !defined(STUB_OLD_DRIVER) && !defined(STUB_NO_V3_PROCESSES)
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *infos) { (void)infos; return processes("nvmlDeviceGetComputeRunningProcesses_v3", d, n, 0); }
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *infos) { (void)infos; return processes("nvmlDeviceGetGraphicsRunningProcesses_v3", d, n, 1); }
#endif
#ifndef STUB_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v2_t *infos) { (void)infos; return processes("nvmlDeviceGetComputeRunningProcesses_v2", d, n, 0); }
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v2_t *infos) { (void)infos; return processes("nvmlDeviceGetGraphicsRunningProcesses_v2", d, n, 1); }
#endif
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *infos) { (void)infos; return processes("nvmlDeviceGetComputeRunningProcesses", d, n, 0); }
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *infos) { (void)infos; return processes("nvmlDeviceGetGraphicsRunningProcesses", d, n, 1); }
nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t d, nvmlEnableState_t *v) { DEV_CHECK(nvmlDeviceGetDisplayActive, d); *v = (nvmlEnableState_t)GPU(d)->display; return OK; }
/* The Windows driver model. Linux drivers answer NOT_SUPPORTED (the probe
 * asks on Windows only); this stub answers on both. */
#ifndef STUB_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetDriverModel_v2(nvmlDevice_t d, nvmlDriverModel_t *cur, nvmlDriverModel_t *pend)
{
    DEV_CHECK(nvmlDeviceGetDriverModel_v2, d);
    *cur = *pend = (nvmlDriverModel_t)GPU(d)->driver_model;
    return OK;
}
#endif
nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t d, nvmlDriverModel_t *cur, nvmlDriverModel_t *pend)
{
    DEV_CHECK(nvmlDeviceGetDriverModel, d);
    *cur = *pend = (nvmlDriverModel_t)(GPU(d)->driver_model == 2 ? 0 : GPU(d)->driver_model);
    return OK;
}
#endif /* STUB_REQUIRED_ONLY */
