/* NVML probe. The declarations are ours (validate/probes/nvml_abi.h, checked
 * against NVIDIA's nvml.h by the ABI test). Only the calls that a missing
 * driver feature can refuse are optional. Every refusal is recorded under the
 * device's "refused" object with NVML's own words, and the value is left out:
 * a figure that was not read is never guessed. */
#include "validate/probes/nvml.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dynload.h"
#include "common/str.h"
#include "validate/probes/dlsyms.h"
#include "validate/probes/nvml_abi.h"

/* X(member, required, names newest first): the functions the probe calls.
 * Calls whose versions differ in meaning (the PCI struct, the process-info
 * struct) get one member per version. */
#define NVML_FUNCTIONS(X)                                                                      \
    X(nvmlInit_v2, true, "nvmlInit_v2", "nvmlInit")                                            \
    X(nvmlShutdown, true, "nvmlShutdown")                                                      \
    X(nvmlErrorString, false, "nvmlErrorString")                                               \
    X(nvmlSystemGetDriverVersion, true, "nvmlSystemGetDriverVersion")                          \
    X(nvmlSystemGetCudaDriverVersion_v2, false, "nvmlSystemGetCudaDriverVersion_v2",           \
      "nvmlSystemGetCudaDriverVersion")                                                        \
    X(nvmlDeviceGetCount_v2, true, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")              \
    X(nvmlDeviceGetHandleByIndex_v2, true, "nvmlDeviceGetHandleByIndex_v2",                    \
      "nvmlDeviceGetHandleByIndex")                                                            \
    X(nvmlDeviceGetName, true, "nvmlDeviceGetName")                                            \
    X(nvmlDeviceGetUUID, false, "nvmlDeviceGetUUID")                                           \
    X(nvmlDeviceGetPciInfo_v3, false, "nvmlDeviceGetPciInfo_v3")                               \
    X(nvmlDeviceGetPciInfo_v2, false, "nvmlDeviceGetPciInfo_v2")                               \
    X(nvmlDeviceGetCudaComputeCapability, false, "nvmlDeviceGetCudaComputeCapability")         \
    X(nvmlDeviceGetMemoryInfo, true, "nvmlDeviceGetMemoryInfo")                                \
    X(nvmlDeviceGetMemoryBusWidth, false, "nvmlDeviceGetMemoryBusWidth")                       \
    X(nvmlDeviceGetCurrPcieLinkGeneration, false, "nvmlDeviceGetCurrPcieLinkGeneration")       \
    X(nvmlDeviceGetMaxPcieLinkGeneration, false, "nvmlDeviceGetMaxPcieLinkGeneration")         \
    X(nvmlDeviceGetCurrPcieLinkWidth, false, "nvmlDeviceGetCurrPcieLinkWidth")                 \
    X(nvmlDeviceGetMaxPcieLinkWidth, false, "nvmlDeviceGetMaxPcieLinkWidth")                   \
    X(nvmlDeviceGetNvLinkState, false, "nvmlDeviceGetNvLinkState")                             \
    X(nvmlDeviceGetNvLinkVersion, false, "nvmlDeviceGetNvLinkVersion")                         \
    X(nvmlDeviceGetTopologyCommonAncestor, false, "nvmlDeviceGetTopologyCommonAncestor")       \
    X(nvmlDeviceGetPowerManagementLimit, false, "nvmlDeviceGetPowerManagementLimit")           \
    X(nvmlDeviceGetTemperature, false, "nvmlDeviceGetTemperature")                             \
    X(nvmlDeviceGetClockInfo, false, "nvmlDeviceGetClockInfo")                                 \
    X(nvmlDeviceGetMaxClockInfo, false, "nvmlDeviceGetMaxClockInfo")                           \
    X(nvmlDeviceGetEccMode, false, "nvmlDeviceGetEccMode")                                     \
    X(nvmlDeviceGetRemappedRows, false, "nvmlDeviceGetRemappedRows")                           \
    X(nvmlDeviceGetRetiredPages, false, "nvmlDeviceGetRetiredPages")                           \
    X(nvmlDeviceGetPersistenceMode, false, "nvmlDeviceGetPersistenceMode")                     \
    X(nvmlDeviceGetMigMode, false, "nvmlDeviceGetMigMode")                                     \
    X(nvmlDeviceGetDisplayActive, false, "nvmlDeviceGetDisplayActive")                         \
    X(nvmlDeviceGetDriverModel_v2, false, "nvmlDeviceGetDriverModel_v2",                       \
      "nvmlDeviceGetDriverModel")                                                              \
    X(nvmlDeviceGetComputeRunningProcesses_v3, false, "nvmlDeviceGetComputeRunningProcesses_v3") \
    X(nvmlDeviceGetComputeRunningProcesses_v2, false, "nvmlDeviceGetComputeRunningProcesses_v2") \
    X(nvmlDeviceGetComputeRunningProcesses, false, "nvmlDeviceGetComputeRunningProcesses")     \
    X(nvmlDeviceGetGraphicsRunningProcesses_v3, false,                                         \
      "nvmlDeviceGetGraphicsRunningProcesses_v3")                                              \
    X(nvmlDeviceGetGraphicsRunningProcesses_v2, false,                                         \
      "nvmlDeviceGetGraphicsRunningProcesses_v2")                                              \
    X(nvmlDeviceGetGraphicsRunningProcesses, false, "nvmlDeviceGetGraphicsRunningProcesses")

typedef struct nvml_api {
#define NVML_MEMBER(fn, required, ...) aitk_##fn##_fn fn;
    NVML_FUNCTIONS(NVML_MEMBER)
#undef NVML_MEMBER
} nvml_api;

/* What dlsym returned, before each address takes its function's type. */
typedef struct nvml_raw {
#define NVML_RAW(fn, required, ...) void *fn;
    NVML_FUNCTIONS(NVML_RAW)
#undef NVML_RAW
} nvml_raw;

typedef struct nvml_device_ctx {
    const nvml_api *api;
    aitk_nvml_device handle;
    cJSON *dev;
    cJSON *refused; /* "function name": "NVML error N: text", created on first use */
} nvml_device_ctx;

static void error_text(const nvml_api *api, aitk_nvml_return r, aitk_str *out)
{
    const char *s = api->nvmlErrorString ? api->nvmlErrorString(r) : NULL;
    aitk_str_appendf(out, "NVML error %d%s%s", r, s ? ": " : "", s ? s : "");
}

/* True on success; otherwise records the refusal under dev.refused and
 * returns false, so the caller leaves the value out. */
static bool answered(nvml_device_ctx *d, const char *fn, aitk_nvml_return r)
{
    if (r == AITK_NVML_SUCCESS)
        return true;
    if (!d->refused)
        d->refused = cJSON_AddObjectToObject(d->dev, "refused");
    aitk_str e = AITK_STR_INIT;
    error_text(d->api, r, &e);
    if (d->refused)
        cJSON_AddStringToObject(d->refused, fn, aitk_str_cstr(&e));
    aitk_str_free(&e);
    return false;
}

static const char *enable_state(unsigned int v) { return v ? "enabled" : "disabled"; }

static void probe_clocks(nvml_device_ctx *d)
{
    static const struct { aitk_nvml_clock_type kind; const char *cur, *max; } clocks[] = {
        {AITK_NVML_CLOCK_GRAPHICS, "graphics_mhz", "graphics_max_mhz"},
        {AITK_NVML_CLOCK_SM, "sm_mhz", "sm_max_mhz"},
        {AITK_NVML_CLOCK_MEM, "memory_mhz", "memory_max_mhz"},
    };
    const nvml_api *api = d->api;
    cJSON *c = cJSON_AddObjectToObject(d->dev, "clocks");
    for (size_t i = 0; c && i < sizeof clocks / sizeof *clocks; i++) {
        unsigned int v = 0;
        if (api->nvmlDeviceGetClockInfo &&
            answered(d, "nvmlDeviceGetClockInfo",
                     api->nvmlDeviceGetClockInfo(d->handle, clocks[i].kind, &v)))
            cJSON_AddNumberToObject(c, clocks[i].cur, v);
        if (api->nvmlDeviceGetMaxClockInfo &&
            answered(d, "nvmlDeviceGetMaxClockInfo",
                     api->nvmlDeviceGetMaxClockInfo(d->handle, clocks[i].kind, &v)))
            cJSON_AddNumberToObject(c, clocks[i].max, v);
    }
}

static void probe_memory_health(nvml_device_ctx *d)
{
    const nvml_api *api = d->api;
    aitk_nvml_enable_state cur = 0, pend = 0;
    if (api->nvmlDeviceGetEccMode &&
        answered(d, "nvmlDeviceGetEccMode", api->nvmlDeviceGetEccMode(d->handle, &cur, &pend))) {
        cJSON *ecc = cJSON_AddObjectToObject(d->dev, "ecc");
        cJSON_AddStringToObject(ecc, "current", enable_state(cur));
        cJSON_AddStringToObject(ecc, "pending", enable_state(pend));
    }
    unsigned int a = 0, b = 0, e = 0, f = 0;
    if (api->nvmlDeviceGetRemappedRows &&
        answered(d, "nvmlDeviceGetRemappedRows",
                 api->nvmlDeviceGetRemappedRows(d->handle, &a, &b, &e, &f))) {
        cJSON *rr = cJSON_AddObjectToObject(d->dev, "remapped_rows");
        cJSON_AddNumberToObject(rr, "correctable", a);
        cJSON_AddNumberToObject(rr, "uncorrectable", b);
        cJSON_AddBoolToObject(rr, "pending", e != 0);
        cJSON_AddBoolToObject(rr, "failure", f != 0);
    }
    /* Retired pages predate row remapping (pre-Ampere); the count query with no
     * buffer answers the number without needing the address layout. Ampere and
     * later answer NOT_SUPPORTED, which is recorded like any refusal. */
    if (!api->nvmlDeviceGetRetiredPages)
        return;
    unsigned int single = 0, dbl = 0;
    aitk_nvml_return r1 = api->nvmlDeviceGetRetiredPages(d->handle, AITK_NVML_RETIRE_SINGLE_BIT,
                                                         &single, NULL);
    aitk_nvml_return r2 = api->nvmlDeviceGetRetiredPages(d->handle, AITK_NVML_RETIRE_DOUBLE_BIT,
                                                         &dbl, NULL);
    if (r1 == AITK_NVML_ERROR_INSUFFICIENT_SIZE)
        r1 = AITK_NVML_SUCCESS;
    if (r2 == AITK_NVML_ERROR_INSUFFICIENT_SIZE)
        r2 = AITK_NVML_SUCCESS;
    if (answered(d, "nvmlDeviceGetRetiredPages", r1 ? r1 : r2)) {
        cJSON *rp = cJSON_AddObjectToObject(d->dev, "retired_pages");
        cJSON_AddNumberToObject(rp, "single_bit_ecc", single);
        cJSON_AddNumberToObject(rp, "double_bit_ecc", dbl);
    }
}

#ifdef _WIN32
/* nvmlDriverModel_t as nvidia-smi names it ("WDDM", "TCC", "MCDM"). */
static const char *driver_model_name(aitk_nvml_driver_model m)
{
    switch (m) {
    case AITK_NVML_DRIVER_WDDM: return "WDDM";
    case AITK_NVML_DRIVER_WDM: return "TCC";
    case AITK_NVML_DRIVER_MCDM: return "MCDM";
    }
    return "unknown";
}
#endif

static void probe_modes(nvml_device_ctx *d)
{
    const nvml_api *api = d->api;
    aitk_nvml_enable_state s = 0;
    if (api->nvmlDeviceGetPersistenceMode &&
        answered(d, "nvmlDeviceGetPersistenceMode",
                 api->nvmlDeviceGetPersistenceMode(d->handle, &s)))
        cJSON_AddStringToObject(d->dev, "persistence_mode", enable_state(s));
    unsigned int cur = 0, pend = 0;
    if (api->nvmlDeviceGetMigMode &&
        answered(d, "nvmlDeviceGetMigMode", api->nvmlDeviceGetMigMode(d->handle, &cur, &pend))) {
        cJSON *mig = cJSON_AddObjectToObject(d->dev, "mig_mode");
        cJSON_AddStringToObject(mig, "current", enable_state(cur));
        cJSON_AddStringToObject(mig, "pending", enable_state(pend));
    }
    if (api->nvmlDeviceGetDisplayActive &&
        answered(d, "nvmlDeviceGetDisplayActive",
                 api->nvmlDeviceGetDisplayActive(d->handle, &s)))
        cJSON_AddBoolToObject(d->dev, "display_active", s != 0);
#ifdef _WIN32
    /* The driver model exists on Windows only (NVML API reference,
     * nvmlDeviceGetDriverModel: "For windows only"); Linux drivers answer
     * NOT_SUPPORTED for every GPU, so it is not asked there. */
    aitk_nvml_driver_model cur_model = 0, pend_model = 0;
    if (api->nvmlDeviceGetDriverModel_v2 &&
        answered(d, "nvmlDeviceGetDriverModel",
                 api->nvmlDeviceGetDriverModel_v2(d->handle, &cur_model, &pend_model))) {
        cJSON *dm = cJSON_AddObjectToObject(d->dev, "driver_model");
        cJSON_AddStringToObject(dm, "current", driver_model_name(cur_model));
        cJSON_AddStringToObject(dm, "pending", driver_model_name(pend_model));
    }
#endif
}

/* Process counts only: asking with no buffer returns the count and does not
 * depend on the process-info struct, which changed across versions. The
 * count is taken by address: it is read after the call that filled it (the
 * order in which arguments are evaluated would not guarantee that). */
static void add_process_count(nvml_device_ctx *d, const char *key, const char *fn,
                              aitk_nvml_return r, const unsigned int *n)
{
    if (r == AITK_NVML_ERROR_INSUFFICIENT_SIZE)
        r = AITK_NVML_SUCCESS;
    if (answered(d, fn, r))
        cJSON_AddNumberToObject(d->dev, key, *n);
}

static void probe_processes(nvml_device_ctx *d)
{
    const nvml_api *api = d->api;
    unsigned int n = 0;
    if (api->nvmlDeviceGetComputeRunningProcesses_v3)
        add_process_count(d, "compute_processes", "nvmlDeviceGetComputeRunningProcesses_v3",
                          api->nvmlDeviceGetComputeRunningProcesses_v3(d->handle, &n, NULL), &n);
    else if (api->nvmlDeviceGetComputeRunningProcesses_v2)
        add_process_count(d, "compute_processes", "nvmlDeviceGetComputeRunningProcesses_v2",
                          api->nvmlDeviceGetComputeRunningProcesses_v2(d->handle, &n, NULL), &n);
    else if (api->nvmlDeviceGetComputeRunningProcesses)
        add_process_count(d, "compute_processes", "nvmlDeviceGetComputeRunningProcesses",
                          api->nvmlDeviceGetComputeRunningProcesses(d->handle, &n, NULL), &n);
    n = 0;
    if (api->nvmlDeviceGetGraphicsRunningProcesses_v3)
        add_process_count(d, "graphics_processes", "nvmlDeviceGetGraphicsRunningProcesses_v3",
                          api->nvmlDeviceGetGraphicsRunningProcesses_v3(d->handle, &n, NULL), &n);
    else if (api->nvmlDeviceGetGraphicsRunningProcesses_v2)
        add_process_count(d, "graphics_processes", "nvmlDeviceGetGraphicsRunningProcesses_v2",
                          api->nvmlDeviceGetGraphicsRunningProcesses_v2(d->handle, &n, NULL), &n);
    else if (api->nvmlDeviceGetGraphicsRunningProcesses)
        add_process_count(d, "graphics_processes", "nvmlDeviceGetGraphicsRunningProcesses",
                          api->nvmlDeviceGetGraphicsRunningProcesses(d->handle, &n, NULL), &n);
}

/* "00000000:01:00.0", the form nvmlDeviceGetPciInfo_v3 writes in busId and
 * the CUDA driver probe builds, so the two lists can be matched. */
static void probe_pci(nvml_device_ctx *d)
{
    const nvml_api *api = d->api;
    aitk_nvml_pci_info pci;
    memset(&pci, 0, sizeof pci);
    if (api->nvmlDeviceGetPciInfo_v3) {
        if (answered(d, "nvmlDeviceGetPciInfo_v3", api->nvmlDeviceGetPciInfo_v3(d->handle, &pci))) {
            pci.bus_id[sizeof pci.bus_id - 1] = '\0';
            cJSON_AddStringToObject(d->dev, "pci_bus_id", pci.bus_id);
        }
    } else if (api->nvmlDeviceGetPciInfo_v2 &&
               answered(d, "nvmlDeviceGetPciInfo_v2",
                        api->nvmlDeviceGetPciInfo_v2(d->handle, &pci))) {
        char id[32];
        snprintf(id, sizeof id, "%08X:%02X:%02X.0", pci.domain, pci.bus & 0xffu,
                 pci.device & 0xffu);
        cJSON_AddStringToObject(d->dev, "pci_bus_id", id);
    }
}

static void probe_identity(nvml_device_ctx *d)
{
    const nvml_api *api = d->api;
    char text[AITK_NVML_DEVICE_NAME_V2_BUFFER_SIZE + 1];
    memset(text, 0, sizeof text);
    if (answered(d, "nvmlDeviceGetName",
                 api->nvmlDeviceGetName(d->handle, text, sizeof text - 1)))
        cJSON_AddStringToObject(d->dev, "name", text);
    memset(text, 0, sizeof text);
    if (api->nvmlDeviceGetUUID &&
        answered(d, "nvmlDeviceGetUUID", api->nvmlDeviceGetUUID(d->handle, text, sizeof text - 1)))
        cJSON_AddStringToObject(d->dev, "uuid", text);
    probe_pci(d);
    int major = 0, minor = 0;
    if (api->nvmlDeviceGetCudaComputeCapability &&
        answered(d, "nvmlDeviceGetCudaComputeCapability",
                 api->nvmlDeviceGetCudaComputeCapability(d->handle, &major, &minor))) {
        char cc[32];
        snprintf(cc, sizeof cc, "%d.%d", major, minor);
        cJSON_AddStringToObject(d->dev, "compute_capability", cc);
    }
    aitk_nvml_memory mem = {0, 0, 0};
    if (answered(d, "nvmlDeviceGetMemoryInfo", api->nvmlDeviceGetMemoryInfo(d->handle, &mem))) {
        cJSON *m = cJSON_AddObjectToObject(d->dev, "memory");
        cJSON_AddNumberToObject(m, "total_bytes", (double)mem.total);
        cJSON_AddNumberToObject(m, "free_bytes", (double)mem.free);
        cJSON_AddNumberToObject(m, "used_bytes", (double)mem.used);
        cJSON_AddStringToObject(m, "source", "nvmlDeviceGetMemoryInfo");
    }
}

/* One unsigned figure per call: the value goes in only when NVML answered. */
static void probe_uint(nvml_device_ctx *d, cJSON *into, const char *key, const char *fn,
                       aitk_nvml_return (*call)(aitk_nvml_device, unsigned int *))
{
    unsigned int v = 0;
    if (call && answered(d, fn, call(d->handle, &v)))
        cJSON_AddNumberToObject(into, key, v);
}

static void probe_link_power(nvml_device_ctx *d)
{
    const nvml_api *api = d->api;
    probe_uint(d, d->dev, "memory_bus_width_bits", "nvmlDeviceGetMemoryBusWidth",
               api->nvmlDeviceGetMemoryBusWidth);
    cJSON *pcie = cJSON_AddObjectToObject(d->dev, "pcie");
    probe_uint(d, pcie, "generation", "nvmlDeviceGetCurrPcieLinkGeneration",
               api->nvmlDeviceGetCurrPcieLinkGeneration);
    probe_uint(d, pcie, "generation_max", "nvmlDeviceGetMaxPcieLinkGeneration",
               api->nvmlDeviceGetMaxPcieLinkGeneration);
    probe_uint(d, pcie, "width", "nvmlDeviceGetCurrPcieLinkWidth",
               api->nvmlDeviceGetCurrPcieLinkWidth);
    probe_uint(d, pcie, "width_max", "nvmlDeviceGetMaxPcieLinkWidth",
               api->nvmlDeviceGetMaxPcieLinkWidth);
    unsigned int v = 0;
    if (api->nvmlDeviceGetPowerManagementLimit &&
        answered(d, "nvmlDeviceGetPowerManagementLimit",
                 api->nvmlDeviceGetPowerManagementLimit(d->handle, &v)))
        cJSON_AddNumberToObject(d->dev, "power_limit_w", v / 1000.0);
    if (api->nvmlDeviceGetTemperature &&
        answered(d, "nvmlDeviceGetTemperature",
                 api->nvmlDeviceGetTemperature(d->handle, AITK_NVML_TEMPERATURE_GPU, &v)))
        cJSON_AddNumberToObject(d->dev, "temperature_c", v);
}

/* Links 0, 1, ... until NVML says there are no more (NVML_NVLINK_MAX_LINKS
 * is 18 in NVML 11-12 and 36 in 13; a link past the device's last answers
 * INVALID_ARGUMENT). A GPU without NVLink answers NOT_SUPPORTED for link 0:
 * that is an answer, "active_links": 0. Any other refusal of link 0 is
 * recorded and the nvlink object left out. The version is the first active
 * link's (nvmlNvlinkVersion_t). */
static void probe_nvlink(nvml_device_ctx *d)
{
    const nvml_api *api = d->api;
    if (!api->nvmlDeviceGetNvLinkState)
        return;
    enum { MAX_LINKS = 36 };
    unsigned int active = 0, version = 0;
    for (unsigned int link = 0; link < MAX_LINKS; link++) {
        aitk_nvml_enable_state on = AITK_NVML_FEATURE_DISABLED;
        aitk_nvml_return r = api->nvmlDeviceGetNvLinkState(d->handle, link, &on);
        if (r != AITK_NVML_SUCCESS) {
            if (link == 0 && r != AITK_NVML_ERROR_NOT_SUPPORTED &&
                !answered(d, "nvmlDeviceGetNvLinkState", r))
                return;
            break;
        }
        if (on != AITK_NVML_FEATURE_ENABLED)
            continue;
        active++;
        if (!version && api->nvmlDeviceGetNvLinkVersion)
            (void)answered(d, "nvmlDeviceGetNvLinkVersion",
                           api->nvmlDeviceGetNvLinkVersion(d->handle, link, &version));
    }
    cJSON *nv = cJSON_AddObjectToObject(d->dev, "nvlink");
    cJSON_AddNumberToObject(nv, "active_links", active);
    if (version)
        cJSON_AddNumberToObject(nv, "version", version);
}

static const char *topology_name(aitk_nvml_topology_level level)
{
    switch (level) {
    case AITK_NVML_TOPOLOGY_INTERNAL: return "INTERNAL";
    case AITK_NVML_TOPOLOGY_SINGLE: return "SINGLE";
    case AITK_NVML_TOPOLOGY_MULTIPLE: return "MULTIPLE";
    case AITK_NVML_TOPOLOGY_HOSTBRIDGE: return "HOSTBRIDGE";
    case AITK_NVML_TOPOLOGY_NODE: return "NODE";
    case AITK_NVML_TOPOLOGY_SYSTEM: return "SYSTEM";
    }
    return "unknown";
}

/* The closest common ancestor of each pair's PCIe paths, as nvidia-smi topo
 * -m shows it (SINGLE: one PCIe switch ... SYSTEM: across CPU sockets):
 * topology[] = {"gpus": [i, j], "common_ancestor": "NODE"}. Pairs of the
 * first 16 GPUs; a refused pair is left out. */
static void probe_topology(const nvml_api *api, unsigned int count, cJSON *out)
{
    if (!api->nvmlDeviceGetTopologyCommonAncestor || count < 2)
        return;
    enum { MAX_PAIRED = 16 };
    aitk_nvml_device h[MAX_PAIRED];
    unsigned int n = count < MAX_PAIRED ? count : MAX_PAIRED;
    for (unsigned int i = 0; i < n; i++)
        if (api->nvmlDeviceGetHandleByIndex_v2(i, &h[i]) != AITK_NVML_SUCCESS)
            return;
    cJSON *topo = cJSON_AddArrayToObject(out, "topology");
    for (unsigned int i = 0; topo && i < n; i++)
        for (unsigned int j = i + 1; j < n; j++) {
            aitk_nvml_topology_level level = 0;
            if (api->nvmlDeviceGetTopologyCommonAncestor(h[i], h[j], &level) !=
                AITK_NVML_SUCCESS)
                continue;
            cJSON *pair = cJSON_CreateObject();
            cJSON *gpus = cJSON_AddArrayToObject(pair, "gpus");
            cJSON_AddItemToArray(gpus, cJSON_CreateNumber(i));
            cJSON_AddItemToArray(gpus, cJSON_CreateNumber(j));
            cJSON_AddStringToObject(pair, "common_ancestor", topology_name(level));
            if (!cJSON_AddItemToArray(topo, pair))
                cJSON_Delete(pair);
        }
}

static void probe_device(const nvml_api *api, unsigned int index, cJSON *devices)
{
    cJSON *dev = cJSON_CreateObject();
    if (!dev || !cJSON_AddItemToArray(devices, dev)) {
        cJSON_Delete(dev);
        return;
    }
    cJSON_AddNumberToObject(dev, "index", index);
    nvml_device_ctx d = {.api = api, .dev = dev};
    aitk_nvml_return r = api->nvmlDeviceGetHandleByIndex_v2(index, &d.handle);
    if (r != AITK_NVML_SUCCESS) {
        aitk_str e = AITK_STR_INIT;
        error_text(api, r, &e);
        cJSON_AddStringToObject(dev, "error", aitk_str_cstr(&e));
        aitk_str_free(&e);
        return;
    }
    probe_identity(&d);
    probe_link_power(&d);
    probe_nvlink(&d);
    probe_clocks(&d);
    probe_memory_health(&d);
    probe_modes(&d);
    probe_processes(&d);
}

static aitk_status resolve(cJSON *out, nvml_api *api, aitk_dl **dl);

aitk_status aitk_nvml_probe(cJSON *out)
{
    nvml_api api;
    aitk_dl *dl = NULL;
    aitk_status st = resolve(out, &api, &dl);
    if (st) /* not loadable or incomplete: recorded in `out`, a finding */
        return st == AITK_E_NOMEM ? st : AITK_OK;
    aitk_str err = AITK_STR_INIT;
    aitk_nvml_return r = api.nvmlInit_v2();
    if (r != AITK_NVML_SUCCESS) {
        error_text(&api, r, &err);
        cJSON_AddStringToObject(out, "init_error", aitk_str_cstr(&err));
        goto done;
    }
    char text[AITK_NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE + 1];
    memset(text, 0, sizeof text);
    r = api.nvmlSystemGetDriverVersion(text, sizeof text - 1);
    if (r == AITK_NVML_SUCCESS) {
        cJSON_AddStringToObject(out, "driver_version", text);
    } else {
        error_text(&api, r, &err);
        cJSON_AddStringToObject(out, "driver_version_error", aitk_str_cstr(&err));
        aitk_str_clear(&err);
    }
    int cuda = 0;
    if (api.nvmlSystemGetCudaDriverVersion_v2 &&
        api.nvmlSystemGetCudaDriverVersion_v2(&cuda) == AITK_NVML_SUCCESS)
        cJSON_AddNumberToObject(out, "cuda_driver_version", cuda);
    unsigned int count = 0;
    r = api.nvmlDeviceGetCount_v2(&count);
    cJSON *devices = cJSON_AddArrayToObject(out, "devices");
    if (r != AITK_NVML_SUCCESS) {
        error_text(&api, r, &err);
        cJSON_AddStringToObject(out, "count_error", aitk_str_cstr(&err));
    }
    for (unsigned int i = 0; r == AITK_NVML_SUCCESS && devices && i < count && i < 64; i++)
        probe_device(&api, i, devices);
    if (r == AITK_NVML_SUCCESS)
        probe_topology(&api, count, out);
    api.nvmlShutdown();
done:
    aitk_dl_close(dl);
    aitk_str_free(&err);
    return AITK_OK;
}

/* The driver's copy of the library. On Linux the loader's search finds it.
 * On Windows only full paths are tried, never the current folder: DCH
 * drivers put nvml.dll in System32; older (standard) drivers in
 * %ProgramFiles%\NVIDIA Corporation\NVSMI, where NVIDIA's own Python
 * bindings (nvidia-ml-py, pynvml.py _LoadNvmlLibrary) also look. */
#ifdef _WIN32
static aitk_status library_names(aitk_str *sys32, aitk_str *nvsmi, const char *names[3])
{
    const char *root = getenv("SystemRoot");
    const char *pf = getenv("ProgramFiles");
    aitk_str_appendf(sys32, "%s\\System32\\nvml.dll", root && *root ? root : "C:\\Windows");
    aitk_str_appendf(nvsmi, "%s\\NVIDIA Corporation\\NVSMI\\nvml.dll",
                     pf && *pf ? pf : "C:\\Program Files");
    if (aitk_str_status(sys32) || aitk_str_status(nvsmi))
        return AITK_E_NOMEM;
    names[0] = aitk_str_cstr(sys32);
    names[1] = aitk_str_cstr(nvsmi);
    names[2] = NULL;
    return AITK_OK;
}
#else
static aitk_status library_names(aitk_str *sys32, aitk_str *nvsmi, const char *names[3])
{
    (void)sys32;
    (void)nvsmi;
    names[0] = "libnvidia-ml.so.1";
    names[1] = "libnvidia-ml.so";
    names[2] = NULL;
    return AITK_OK;
}
#endif

static aitk_status resolve(cJSON *out, nvml_api *api, aitk_dl **dl)
{
    nvml_raw raw;
    const aitk_dlsym_spec specs[] = {
#define NVML_SPEC(fn, required, ...) {{__VA_ARGS__}, required, &raw.fn},
        NVML_FUNCTIONS(NVML_SPEC)
#undef NVML_SPEC
    };
    aitk_str a = AITK_STR_INIT, b = AITK_STR_INIT;
    const char *names[3];
    aitk_status st = library_names(&a, &b, names);
    if (!st)
        st = aitk_dlsyms_open(names, specs, sizeof specs / sizeof *specs, out, dl);
    aitk_str_free(&a);
    aitk_str_free(&b);
    if (st)
        return st;
    /* POSIX dlsym and GetProcAddress hand back function addresses as data
     * pointers; each is given its declared type once, here. */
#define NVML_TYPE(fn, required, ...) api->fn = (aitk_##fn##_fn)raw.fn;
    NVML_FUNCTIONS(NVML_TYPE)
#undef NVML_TYPE
    return AITK_OK;
}
