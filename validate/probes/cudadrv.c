/* CUDA driver API probe with our own declarations (the enum values are those
 * of cuda.h; tests/probes/test_cuda_abi.c compares them with the real header
 * where one is installed). No context is created: attribute queries do not
 * need one, and creating one would reserve GPU memory on the user's card. */
#include "validate/probes/cudadrv.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "common/dynload.h"
#include "common/str.h"
#include "validate/probes/cudadrv_abi.h"
#include "validate/probes/dlsyms.h"

typedef struct cu_api {
    void *init, *driver_version, *count, *get, *name, *attr, *total_mem, *uuid, *err_name,
        *err_string;
} cu_api;

typedef aitk_cu_result (*fn_init)(unsigned int);
typedef aitk_cu_result (*fn_int_out)(int *);
typedef aitk_cu_result (*fn_get)(int *, int);
typedef aitk_cu_result (*fn_name)(char *, int, int);
typedef aitk_cu_result (*fn_attr)(int *, int, int);
typedef aitk_cu_result (*fn_mem)(size_t *, int);
typedef aitk_cu_result (*fn_uuid)(unsigned char *, int);
typedef aitk_cu_result (*fn_errtext)(aitk_cu_result, const char **);

#ifdef _WIN32
static const char *const cuda_names[] = {"nvcuda.dll", NULL};
#else
static const char *const cuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};
#endif

static void result_text(const cu_api *api, aitk_cu_result r, aitk_str *out)
{
    const char *name = NULL, *text = NULL;
    if (api->err_name)
        ((fn_errtext)api->err_name)(r, &name);
    if (api->err_string)
        ((fn_errtext)api->err_string)(r, &text);
    aitk_str_appendf(out, "%s (%d)%s%s", name ? name : "CUDA error", (int)r, text ? ": " : "",
                     text ? text : "");
}

static void add_attr(const cu_api *api, int dev, cJSON *o, const char *key, int attr)
{
    int v = 0;
    if (((fn_attr)api->attr)(&v, attr, dev) == AITK_CU_SUCCESS)
        cJSON_AddNumberToObject(o, key, v);
}

static void probe_device(const cu_api *api, int ordinal, cJSON *devices)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(devices, o)) {
        cJSON_Delete(o);
        return;
    }
    cJSON_AddNumberToObject(o, "index", ordinal);
    int dev = 0;
    aitk_cu_result r = ((fn_get)api->get)(&dev, ordinal);
    if (r != AITK_CU_SUCCESS) {
        aitk_str e = AITK_STR_INIT;
        result_text(api, r, &e);
        cJSON_AddStringToObject(o, "error", aitk_str_cstr(&e));
        aitk_str_free(&e);
        return;
    }
    char name[257];
    memset(name, 0, sizeof name);
    if (((fn_name)api->name)(name, (int)sizeof name - 1, dev) == AITK_CU_SUCCESS)
        cJSON_AddStringToObject(o, "name", name);
    int major = -1, minor = -1;
    ((fn_attr)api->attr)(&major, AITK_CU_ATTR_CC_MAJOR, dev);
    ((fn_attr)api->attr)(&minor, AITK_CU_ATTR_CC_MINOR, dev);
    if (major >= 0 && minor >= 0) {
        aitk_str cc = AITK_STR_INIT;
        aitk_str_appendf(&cc, "%d.%d", major, minor);
        cJSON_AddStringToObject(o, "compute_capability", aitk_str_cstr(&cc));
        aitk_str_free(&cc);
    }
    size_t total = 0;
    if (((fn_mem)api->total_mem)(&total, dev) == AITK_CU_SUCCESS)
        cJSON_AddNumberToObject(o, "total_bytes", (double)total);
    add_attr(api, dev, o, "sm_count", AITK_CU_ATTR_SM_COUNT);
    add_attr(api, dev, o, "memory_bus_width_bits", AITK_CU_ATTR_BUS_WIDTH);
    add_attr(api, dev, o, "memory_clock_khz", AITK_CU_ATTR_MEMORY_CLOCK);
    int dom = -1, bus = -1, slot = -1;
    ((fn_attr)api->attr)(&dom, AITK_CU_ATTR_PCI_DOMAIN, dev);
    ((fn_attr)api->attr)(&bus, AITK_CU_ATTR_PCI_BUS, dev);
    ((fn_attr)api->attr)(&slot, AITK_CU_ATTR_PCI_DEVICE, dev);
    if (dom >= 0 && bus >= 0 && slot >= 0) {
        aitk_str id = AITK_STR_INIT;
        aitk_str_appendf(&id, "%08X:%02X:%02X.0", (unsigned)dom, (unsigned)bus, (unsigned)slot);
        cJSON_AddStringToObject(o, "pci_bus_id", aitk_str_cstr(&id));
        aitk_str_free(&id);
    }
    unsigned char u[16];
    if (api->uuid && ((fn_uuid)api->uuid)(u, dev) == AITK_CU_SUCCESS) {
        aitk_str id = AITK_STR_INIT;
        aitk_str_append(&id, "GPU-");
        for (int i = 0; i < 16; i++)
            aitk_str_appendf(&id, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
        cJSON_AddStringToObject(o, "uuid", aitk_str_cstr(&id));
        aitk_str_free(&id);
    }
}

aitk_status aitk_cudadrv_probe(cJSON *out)
{
    cu_api api;
    memset(&api, 0, sizeof api);
    const aitk_dlsym_spec specs[] = {
        {{"cuInit"}, true, &api.init},
        {{"cuDriverGetVersion"}, true, &api.driver_version},
        {{"cuDeviceGetCount"}, true, &api.count},
        {{"cuDeviceGet"}, true, &api.get},
        {{"cuDeviceGetName"}, true, &api.name},
        {{"cuDeviceGetAttribute"}, true, &api.attr},
        {{"cuDeviceTotalMem_v2", "cuDeviceTotalMem"}, true, &api.total_mem},
        {{"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, false, &api.uuid},
        {{"cuGetErrorName"}, false, &api.err_name},
        {{"cuGetErrorString"}, false, &api.err_string},
    };
    aitk_dl *dl = NULL;
    aitk_status st = aitk_dlsyms_open(cuda_names, specs, sizeof specs / sizeof *specs, out, &dl);
    if (st) /* not loadable or incomplete: recorded in `out`, a finding */
        return st == AITK_E_NOMEM ? st : AITK_OK;
    aitk_str err = AITK_STR_INIT;
    /* cuDriverGetVersion works before cuInit and even when cuInit fails, so a
     * broken setup still tells which CUDA the driver supports. */
    int version = 0;
    if (((fn_int_out)api.driver_version)(&version) == AITK_CU_SUCCESS) {
        char text[32];
        snprintf(text, sizeof text, "%d.%d", version / 1000, (version % 1000) / 10);
        cJSON_AddNumberToObject(out, "driver_api_version", version);
        cJSON_AddStringToObject(out, "cuda_version", text);
    }
    aitk_cu_result r = ((fn_init)api.init)(0);
    if (r != AITK_CU_SUCCESS) {
        result_text(&api, r, &err);
        cJSON_AddStringToObject(out, "init_error", aitk_str_cstr(&err));
        goto done;
    }
    int count = 0;
    r = ((fn_int_out)api.count)(&count);
    cJSON *devices = cJSON_AddArrayToObject(out, "devices");
    if (r != AITK_CU_SUCCESS) {
        result_text(&api, r, &err);
        cJSON_AddStringToObject(out, "count_error", aitk_str_cstr(&err));
    }
    for (int i = 0; r == AITK_CU_SUCCESS && devices && i < count && i < 64; i++)
        probe_device(&api, i, devices);
done:
    aitk_dl_close(dl);
    aitk_str_free(&err);
    return st;
}
