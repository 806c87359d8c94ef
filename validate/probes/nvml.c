/* NVML probe. The declarations below are ours (no NVIDIA header is needed to
 * build): the handful of types and enum values the queries use, taken from the
 * NVML API reference. Only the calls that a missing driver feature can refuse
 * are optional; each refusal is recorded as "not supported", not guessed. */
#include "validate/probes/nvml.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/dynload.h"
#include "common/str.h"
#include "validate/probes/dlsyms.h"

typedef int nvml_ret;          /* nvmlReturn_t; 0 is NVML_SUCCESS */
typedef struct nvml_dev_st *nvml_dev;
enum { NVML_SUCCESS = 0, NVML_ERROR_INSUFFICIENT_SIZE = 7 };
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

typedef struct nvml_memory { unsigned long long total, free, used; } nvml_memory;
typedef struct nvml_pci_info {
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci_info;

typedef struct nvml_api {
    void *init, *shutdown, *error_string, *driver_version, *cuda_version, *count, *handle;
    void *name, *uuid, *pci, *cc, *memory, *bus_width, *pcie_gen, *pcie_gen_max, *pcie_width,
        *pcie_width_max, *power_limit, *temperature, *clock, *clock_max, *ecc, *remapped,
        *retired, *persistence, *mig, *compute_procs, *graphics_procs, *display_active;
} nvml_api;

typedef nvml_ret (*fn_void)(void);
typedef const char *(*fn_errstr)(nvml_ret);
typedef nvml_ret (*fn_text)(char *, unsigned int);
typedef nvml_ret (*fn_int_out)(int *);
typedef nvml_ret (*fn_uint_out)(unsigned int *);
typedef nvml_ret (*fn_handle)(unsigned int, nvml_dev *);
typedef nvml_ret (*fn_dev_text)(nvml_dev, char *, unsigned int);
typedef nvml_ret (*fn_dev_pci)(nvml_dev, nvml_pci_info *);
typedef nvml_ret (*fn_dev_2int)(nvml_dev, int *, int *);
typedef nvml_ret (*fn_dev_mem)(nvml_dev, nvml_memory *);
typedef nvml_ret (*fn_dev_uint)(nvml_dev, unsigned int *);
typedef nvml_ret (*fn_dev_2uint)(nvml_dev, unsigned int *, unsigned int *);
typedef nvml_ret (*fn_dev_kind_uint)(nvml_dev, int, unsigned int *);
typedef nvml_ret (*fn_dev_4uint)(nvml_dev, unsigned int *, unsigned int *, unsigned int *,
                                 unsigned int *);
typedef nvml_ret (*fn_dev_retired)(nvml_dev, int, unsigned int *, unsigned long long *);
typedef nvml_ret (*fn_dev_procs)(nvml_dev, unsigned int *, void *);

#ifdef _WIN32
static const char *const nvml_names[] = {"nvml.dll", NULL};
#else
static const char *const nvml_names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};
#endif

static void error_text(const nvml_api *api, nvml_ret r, aitk_str *out)
{
    const char *s = api->error_string ? ((fn_errstr)api->error_string)(r) : NULL;
    aitk_str_appendf(out, "NVML error %d%s%s", r, s ? ": " : "", s ? s : "");
}

/* Takes the value by address: it is read after the call that filled it
 * (argument evaluation order would not guarantee that for a plain value). */
static void add_uint(cJSON *o, const char *key, nvml_ret r, const unsigned int *v)
{
    if (r == NVML_SUCCESS)
        cJSON_AddNumberToObject(o, key, *v);
}

static const char *enable_state(unsigned int v) { return v ? "enabled" : "disabled"; }

static void probe_clocks(const nvml_api *api, nvml_dev d, cJSON *dev)
{
    static const struct { int kind; const char *cur, *max; } clocks[] = {
        {NVML_CLOCK_GRAPHICS, "graphics_mhz", "graphics_max_mhz"},
        {NVML_CLOCK_SM, "sm_mhz", "sm_max_mhz"},
        {NVML_CLOCK_MEM, "memory_mhz", "memory_max_mhz"},
    };
    cJSON *c = cJSON_AddObjectToObject(dev, "clocks");
    for (size_t i = 0; c && i < sizeof clocks / sizeof *clocks; i++) {
        unsigned int v = 0;
        if (api->clock)
            add_uint(c, clocks[i].cur, ((fn_dev_kind_uint)api->clock)(d, clocks[i].kind, &v), &v);
        if (api->clock_max)
            add_uint(c, clocks[i].max,
                     ((fn_dev_kind_uint)api->clock_max)(d, clocks[i].kind, &v), &v);
    }
}

static void probe_health(const nvml_api *api, nvml_dev d, cJSON *dev)
{
    unsigned int a = 0, b = 0, e = 0, f = 0;
    if (api->ecc && ((fn_dev_2uint)api->ecc)(d, &a, &b) == NVML_SUCCESS) {
        cJSON *ecc = cJSON_AddObjectToObject(dev, "ecc");
        cJSON_AddStringToObject(ecc, "current", enable_state(a));
        cJSON_AddStringToObject(ecc, "pending", enable_state(b));
    }
    if (api->remapped && ((fn_dev_4uint)api->remapped)(d, &a, &b, &e, &f) == NVML_SUCCESS) {
        cJSON *rr = cJSON_AddObjectToObject(dev, "remapped_rows");
        cJSON_AddNumberToObject(rr, "correctable", a);
        cJSON_AddNumberToObject(rr, "uncorrectable", b);
        cJSON_AddBoolToObject(rr, "pending", e != 0);
        cJSON_AddBoolToObject(rr, "failure", f != 0);
    }
    /* Retired pages predate row remapping (pre-Ampere); the count query with no
     * buffer answers the number without needing the address layout. */
    unsigned int n = 0;
    if (api->retired) {
        nvml_ret r1 = ((fn_dev_retired)api->retired)(d, 0, &n, NULL);
        unsigned int n2 = 0;
        nvml_ret r2 = ((fn_dev_retired)api->retired)(d, 1, &n2, NULL);
        if ((r1 == NVML_SUCCESS || r1 == NVML_ERROR_INSUFFICIENT_SIZE) &&
            (r2 == NVML_SUCCESS || r2 == NVML_ERROR_INSUFFICIENT_SIZE)) {
            cJSON *rp = cJSON_AddObjectToObject(dev, "retired_pages");
            cJSON_AddNumberToObject(rp, "single_bit_ecc", n);
            cJSON_AddNumberToObject(rp, "double_bit_ecc", n2);
        }
    }
    if (api->persistence && ((fn_dev_uint)api->persistence)(d, &a) == NVML_SUCCESS)
        cJSON_AddStringToObject(dev, "persistence_mode", enable_state(a));
    if (api->mig && ((fn_dev_2uint)api->mig)(d, &a, &b) == NVML_SUCCESS) {
        cJSON *mig = cJSON_AddObjectToObject(dev, "mig_mode");
        cJSON_AddStringToObject(mig, "current", enable_state(a));
        cJSON_AddStringToObject(mig, "pending", enable_state(b));
    }
    if (api->display_active && ((fn_dev_uint)api->display_active)(d, &a) == NVML_SUCCESS)
        cJSON_AddBoolToObject(dev, "display_active", a != 0);
    /* Process counts only: asking with an empty buffer returns the count and
     * does not depend on the process-info struct, which changed across versions. */
    void *procs[2] = {api->compute_procs, api->graphics_procs};
    const char *keys[2] = {"compute_processes", "graphics_processes"};
    for (int i = 0; i < 2; i++) {
        n = 0;
        nvml_ret r = procs[i] ? ((fn_dev_procs)procs[i])(d, &n, NULL) : -1;
        if (r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE)
            cJSON_AddNumberToObject(dev, keys[i], n);
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
    nvml_dev d = NULL;
    nvml_ret r = ((fn_handle)api->handle)(index, &d);
    if (r != NVML_SUCCESS) {
        aitk_str e = AITK_STR_INIT;
        error_text(api, r, &e);
        cJSON_AddStringToObject(dev, "error", aitk_str_cstr(&e));
        aitk_str_free(&e);
        return;
    }
    char text[256];
    memset(text, 0, sizeof text);
    /* NVML's documented maximum name and UUID lengths are 96 and 80 bytes. */
    if (((fn_dev_text)api->name)(d, text, sizeof text - 1) == NVML_SUCCESS)
        cJSON_AddStringToObject(dev, "name", text);
    memset(text, 0, sizeof text);
    if (api->uuid && ((fn_dev_text)api->uuid)(d, text, sizeof text - 1) == NVML_SUCCESS)
        cJSON_AddStringToObject(dev, "uuid", text);
    nvml_pci_info pci;
    memset(&pci, 0, sizeof pci);
    if (api->pci && ((fn_dev_pci)api->pci)(d, &pci) == NVML_SUCCESS) {
        pci.bus_id[sizeof pci.bus_id - 1] = '\0';
        cJSON_AddStringToObject(dev, "pci_bus_id", pci.bus_id);
    }
    int major = 0, minor = 0;
    if (api->cc && ((fn_dev_2int)api->cc)(d, &major, &minor) == NVML_SUCCESS) {
        aitk_str cc = AITK_STR_INIT;
        aitk_str_appendf(&cc, "%d.%d", major, minor);
        cJSON_AddStringToObject(dev, "compute_capability", aitk_str_cstr(&cc));
        aitk_str_free(&cc);
    }
    nvml_memory mem = {0, 0, 0};
    if (((fn_dev_mem)api->memory)(d, &mem) == NVML_SUCCESS) {
        cJSON *m = cJSON_AddObjectToObject(dev, "memory");
        cJSON_AddNumberToObject(m, "total_bytes", (double)mem.total);
        cJSON_AddNumberToObject(m, "free_bytes", (double)mem.free);
        cJSON_AddNumberToObject(m, "used_bytes", (double)mem.used);
    }
    unsigned int v = 0;
    if (api->bus_width)
        add_uint(dev, "memory_bus_width_bits", ((fn_dev_uint)api->bus_width)(d, &v), &v);
    cJSON *pcie = cJSON_AddObjectToObject(dev, "pcie");
    if (api->pcie_gen)
        add_uint(pcie, "generation", ((fn_dev_uint)api->pcie_gen)(d, &v), &v);
    if (api->pcie_gen_max)
        add_uint(pcie, "generation_max", ((fn_dev_uint)api->pcie_gen_max)(d, &v), &v);
    if (api->pcie_width)
        add_uint(pcie, "width", ((fn_dev_uint)api->pcie_width)(d, &v), &v);
    if (api->pcie_width_max)
        add_uint(pcie, "width_max", ((fn_dev_uint)api->pcie_width_max)(d, &v), &v);
    if (api->power_limit && ((fn_dev_uint)api->power_limit)(d, &v) == NVML_SUCCESS)
        cJSON_AddNumberToObject(dev, "power_limit_w", v / 1000.0);
    if (api->temperature)
        add_uint(dev, "temperature_c",
                 ((fn_dev_kind_uint)api->temperature)(d, NVML_TEMPERATURE_GPU, &v), &v);
    probe_clocks(api, d, dev);
    probe_health(api, d, dev);
}

aitk_status aitk_nvml_probe(cJSON *out)
{
    nvml_api api;
    memset(&api, 0, sizeof api);
    const aitk_dlsym_spec specs[] = {
        {{"nvmlInit_v2", "nvmlInit"}, true, &api.init},
        {{"nvmlShutdown"}, true, &api.shutdown},
        {{"nvmlErrorString"}, false, &api.error_string},
        {{"nvmlSystemGetDriverVersion"}, true, &api.driver_version},
        {{"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"}, false,
         &api.cuda_version},
        {{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, true, &api.count},
        {{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, true, &api.handle},
        {{"nvmlDeviceGetName"}, true, &api.name},
        {{"nvmlDeviceGetUUID"}, false, &api.uuid},
        {{"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"}, false, &api.pci},
        {{"nvmlDeviceGetCudaComputeCapability"}, false, &api.cc},
        {{"nvmlDeviceGetMemoryInfo"}, true, &api.memory},
        {{"nvmlDeviceGetMemoryBusWidth"}, false, &api.bus_width},
        {{"nvmlDeviceGetCurrPcieLinkGeneration"}, false, &api.pcie_gen},
        {{"nvmlDeviceGetMaxPcieLinkGeneration"}, false, &api.pcie_gen_max},
        {{"nvmlDeviceGetCurrPcieLinkWidth"}, false, &api.pcie_width},
        {{"nvmlDeviceGetMaxPcieLinkWidth"}, false, &api.pcie_width_max},
        {{"nvmlDeviceGetPowerManagementLimit"}, false, &api.power_limit},
        {{"nvmlDeviceGetTemperature"}, false, &api.temperature},
        {{"nvmlDeviceGetClockInfo"}, false, &api.clock},
        {{"nvmlDeviceGetMaxClockInfo"}, false, &api.clock_max},
        {{"nvmlDeviceGetEccMode"}, false, &api.ecc},
        {{"nvmlDeviceGetRemappedRows"}, false, &api.remapped},
        {{"nvmlDeviceGetRetiredPages"}, false, &api.retired},
        {{"nvmlDeviceGetPersistenceMode"}, false, &api.persistence},
        {{"nvmlDeviceGetMigMode"}, false, &api.mig},
        {{"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
          "nvmlDeviceGetComputeRunningProcesses"}, false, &api.compute_procs},
        {{"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2",
          "nvmlDeviceGetGraphicsRunningProcesses"}, false, &api.graphics_procs},
        {{"nvmlDeviceGetDisplayActive"}, false, &api.display_active},
    };
    aitk_dl *dl = NULL;
    aitk_status st = aitk_dlsyms_open(nvml_names, specs, sizeof specs / sizeof *specs, out, &dl);
    if (st) /* not loadable or incomplete: recorded in `out`, a finding */
        return st == AITK_E_NOMEM ? st : AITK_OK;
    aitk_str err = AITK_STR_INIT;
    nvml_ret r = ((fn_void)api.init)();
    if (r != NVML_SUCCESS) {
        error_text(&api, r, &err);
        cJSON_AddStringToObject(out, "init_error", aitk_str_cstr(&err));
        goto done;
    }
    char text[96];
    memset(text, 0, sizeof text);
    if (((fn_text)api.driver_version)(text, sizeof text - 1) == NVML_SUCCESS)
        cJSON_AddStringToObject(out, "driver_version", text);
    int cuda = 0;
    if (api.cuda_version && ((fn_int_out)api.cuda_version)(&cuda) == NVML_SUCCESS)
        cJSON_AddNumberToObject(out, "cuda_driver_version", cuda);
    unsigned int count = 0;
    r = ((fn_uint_out)api.count)(&count);
    cJSON *devices = cJSON_AddArrayToObject(out, "devices");
    if (r != NVML_SUCCESS) {
        error_text(&api, r, &err);
        cJSON_AddStringToObject(out, "count_error", aitk_str_cstr(&err));
    }
    for (unsigned int i = 0; r == NVML_SUCCESS && devices && i < count && i < 64; i++)
        probe_device(&api, i, devices);
    ((fn_void)api.shutdown)();
done:
    aitk_dl_close(dl);
    aitk_str_free(&err);
    return st;
}
