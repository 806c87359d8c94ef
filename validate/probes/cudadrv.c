/* CUDA driver API probe with our own declarations (validate/probes/
 * cudadrv_abi.h; tests/probes/test_cuda_abi.c compares them with the real
 * cuda.h where one is installed). No context is created: attribute queries do
 * not need one, and creating one would reserve GPU memory on the user's card.
 * A refused per-device call is recorded under the device's "refused" object
 * and its value left out. */
#include "validate/probes/cudadrv.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dynload.h"
#include "common/str.h"
#include "validate/probes/cudadrv_abi.h"
#include "validate/probes/dlsyms.h"

/* X(member, required, names newest first). The two UUID calls answer
 * different questions on a MIG instance, so each has its own member. */
#define CU_FUNCTIONS(X)                                                                        \
    X(cuInit, true, "cuInit")                                                                  \
    X(cuDriverGetVersion, true, "cuDriverGetVersion")                                          \
    X(cuDeviceGetCount, true, "cuDeviceGetCount")                                              \
    X(cuDeviceGet, true, "cuDeviceGet")                                                        \
    X(cuDeviceGetName, true, "cuDeviceGetName")                                                \
    X(cuDeviceGetAttribute, true, "cuDeviceGetAttribute")                                      \
    X(cuDeviceTotalMem_v2, true, "cuDeviceTotalMem_v2")                                        \
    X(cuDeviceGetUuid_v2, false, "cuDeviceGetUuid_v2")                                         \
    X(cuDeviceGetUuid, false, "cuDeviceGetUuid")                                               \
    X(cuGetErrorName, false, "cuGetErrorName")                                                 \
    X(cuGetErrorString, false, "cuGetErrorString")

typedef struct cu_api {
#define CU_MEMBER(fn, required, ...) aitk_##fn##_fn fn;
    CU_FUNCTIONS(CU_MEMBER)
#undef CU_MEMBER
} cu_api;

typedef struct cu_raw {
#define CU_RAW(fn, required, ...) void *fn;
    CU_FUNCTIONS(CU_RAW)
#undef CU_RAW
} cu_raw;

typedef struct cu_device_ctx {
    const cu_api *api;
    aitk_cu_device dev;
    cJSON *o;
    cJSON *refused;
} cu_device_ctx;

#ifdef _WIN32
/* nvcuda.dll is always in System32; the full path keeps the current folder
 * and PATH out of the search. */
static const char *library_name(aitk_str *buf)
{
    const char *root = getenv("SystemRoot");
    aitk_str_appendf(buf, "%s\\System32\\nvcuda.dll", root && *root ? root : "C:\\Windows");
    return aitk_str_status(buf) ? NULL : aitk_str_cstr(buf);
}
#endif

static void result_text(const cu_api *api, aitk_cu_result r, aitk_str *out)
{
    const char *name = NULL, *text = NULL;
    if (api->cuGetErrorName && api->cuGetErrorName(r, &name) != AITK_CU_SUCCESS)
        name = NULL;
    if (api->cuGetErrorString && api->cuGetErrorString(r, &text) != AITK_CU_SUCCESS)
        text = NULL;
    aitk_str_appendf(out, "%s (%d)%s%s", name ? name : "CUDA error", (int)r, text ? ": " : "",
                     text ? text : "");
}

static bool answered(cu_device_ctx *d, const char *fn, aitk_cu_result r)
{
    if (r == AITK_CU_SUCCESS)
        return true;
    if (!d->refused)
        d->refused = cJSON_AddObjectToObject(d->o, "refused");
    aitk_str e = AITK_STR_INIT;
    result_text(d->api, r, &e);
    if (d->refused && !cJSON_GetObjectItemCaseSensitive(d->refused, fn))
        cJSON_AddStringToObject(d->refused, fn, aitk_str_cstr(&e));
    aitk_str_free(&e);
    return false;
}

/* One attribute, or -1 (recorded as refused) when the driver does not answer. */
static int attribute(cu_device_ctx *d, aitk_cu_device_attribute attr)
{
    int v = -1;
    if (!answered(d, "cuDeviceGetAttribute", d->api->cuDeviceGetAttribute(&v, attr, d->dev)))
        return -1;
    return v;
}

static void add_attr(cu_device_ctx *d, const char *key, aitk_cu_device_attribute attr)
{
    int v = attribute(d, attr);
    if (v >= 0)
        cJSON_AddNumberToObject(d->o, key, v);
}

static void format_uuid(const char *prefix, const aitk_cu_uuid *u, char out[48])
{
    int n = snprintf(out, 48, "%s", prefix);
    for (int i = 0; i < 16 && n < 44; i++)
        n += snprintf(out + n, (size_t)(48 - n), "%s%02x",
                      i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
                      (unsigned char)u->bytes[i]);
}

/* A MIG compute instance answers its own UUID through _v2 and its GPU's
 * through the original call; nvidia-smi -L prints the former as "MIG-...".
 * Where the two agree, or only one call exists, the device is a whole GPU. */
static void probe_uuid(cu_device_ctx *d)
{
    const cu_api *api = d->api;
    aitk_cu_uuid v2, v1;
    bool has_v2 = api->cuDeviceGetUuid_v2 &&
                  answered(d, "cuDeviceGetUuid_v2", api->cuDeviceGetUuid_v2(&v2, d->dev));
    bool has_v1 = api->cuDeviceGetUuid &&
                  answered(d, "cuDeviceGetUuid", api->cuDeviceGetUuid(&v1, d->dev));
    char text[48];
    if (has_v2 && has_v1 && memcmp(v2.bytes, v1.bytes, sizeof v1.bytes) != 0) {
        format_uuid("MIG-", &v2, text);
        cJSON_AddStringToObject(d->o, "uuid", text);
        format_uuid("GPU-", &v1, text);
        cJSON_AddStringToObject(d->o, "gpu_uuid", text);
        cJSON_AddBoolToObject(d->o, "mig_instance", true);
    } else if (has_v2 || has_v1) {
        format_uuid("GPU-", has_v2 ? &v2 : &v1, text);
        cJSON_AddStringToObject(d->o, "uuid", text);
    }
}

static void probe_pci(cu_device_ctx *d)
{
    int dom = attribute(d, AITK_CU_ATTR_PCI_DOMAIN);
    int bus = attribute(d, AITK_CU_ATTR_PCI_BUS);
    int slot = attribute(d, AITK_CU_ATTR_PCI_DEVICE);
    if (dom >= 0 && bus >= 0 && slot >= 0) {
        char id[32];
        snprintf(id, sizeof id, "%08X:%02X:%02X.0", (unsigned)dom, (unsigned)bus & 0xffu,
                 (unsigned)slot & 0xffu);
        cJSON_AddStringToObject(d->o, "pci_bus_id", id);
    }
}

static void probe_device(const cu_api *api, int ordinal, cJSON *devices)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(devices, o)) {
        cJSON_Delete(o);
        return;
    }
    cJSON_AddNumberToObject(o, "index", ordinal);
    cu_device_ctx d = {.api = api, .o = o};
    aitk_cu_result r = api->cuDeviceGet(&d.dev, ordinal);
    if (r != AITK_CU_SUCCESS) {
        aitk_str e = AITK_STR_INIT;
        result_text(api, r, &e);
        cJSON_AddStringToObject(o, "error", aitk_str_cstr(&e));
        aitk_str_free(&e);
        return;
    }
    char name[257];
    memset(name, 0, sizeof name);
    if (answered(&d, "cuDeviceGetName", api->cuDeviceGetName(name, (int)sizeof name - 1, d.dev)))
        cJSON_AddStringToObject(o, "name", name);
    int major = attribute(&d, AITK_CU_ATTR_CC_MAJOR);
    int minor = attribute(&d, AITK_CU_ATTR_CC_MINOR);
    if (major >= 0 && minor >= 0) {
        char cc[32];
        snprintf(cc, sizeof cc, "%d.%d", major, minor);
        cJSON_AddStringToObject(o, "compute_capability", cc);
    }
    size_t total = 0;
    if (answered(&d, "cuDeviceTotalMem_v2", api->cuDeviceTotalMem_v2(&total, d.dev)))
        cJSON_AddNumberToObject(o, "total_bytes", (double)total);
    add_attr(&d, "sm_count", AITK_CU_ATTR_SM_COUNT);
    add_attr(&d, "memory_bus_width_bits", AITK_CU_ATTR_BUS_WIDTH);
    add_attr(&d, "memory_clock_khz", AITK_CU_ATTR_MEMORY_CLOCK);
    probe_pci(&d);
    probe_uuid(&d);
}

static aitk_status resolve(cJSON *out, cu_api *api, aitk_dl **dl)
{
    cu_raw raw;
    const aitk_dlsym_spec specs[] = {
#define CU_SPEC(fn, required, ...) {{__VA_ARGS__}, required, &raw.fn},
        CU_FUNCTIONS(CU_SPEC)
#undef CU_SPEC
    };
#ifdef _WIN32
    aitk_str buf = AITK_STR_INIT;
    const char *names[] = {library_name(&buf), NULL};
    aitk_status st = names[0] ? aitk_dlsyms_open(names, specs, sizeof specs / sizeof *specs, out, dl)
                              : AITK_E_NOMEM;
    aitk_str_free(&buf);
#else
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    aitk_status st = aitk_dlsyms_open(names, specs, sizeof specs / sizeof *specs, out, dl);
#endif
    if (st)
        return st;
    /* dlsym and GetProcAddress hand back function addresses as data pointers;
     * each is given its declared type once, here. */
#define CU_TYPE(fn, required, ...) api->fn = (aitk_##fn##_fn)raw.fn;
    CU_FUNCTIONS(CU_TYPE)
#undef CU_TYPE
    return AITK_OK;
}

aitk_status aitk_cudadrv_probe(cJSON *out)
{
    cu_api api;
    aitk_dl *dl = NULL;
    aitk_status st = resolve(out, &api, &dl);
    if (st) /* not loadable or incomplete: recorded in `out`, a finding */
        return st == AITK_E_NOMEM ? st : AITK_OK;
    aitk_str err = AITK_STR_INIT;
    /* cuDriverGetVersion works before cuInit and even when cuInit fails, so a
     * broken setup still tells which CUDA the driver supports. */
    int version = 0;
    aitk_cu_result r = api.cuDriverGetVersion(&version);
    if (r == AITK_CU_SUCCESS) {
        char text[32];
        snprintf(text, sizeof text, "%d.%d", version / 1000, (version % 1000) / 10);
        cJSON_AddNumberToObject(out, "driver_api_version", version);
        cJSON_AddStringToObject(out, "cuda_version", text);
    } else {
        result_text(&api, r, &err);
        cJSON_AddStringToObject(out, "version_error", aitk_str_cstr(&err));
        aitk_str_clear(&err);
    }
    r = api.cuInit(0);
    if (r != AITK_CU_SUCCESS) {
        result_text(&api, r, &err);
        cJSON_AddStringToObject(out, "init_error", aitk_str_cstr(&err));
        goto done;
    }
    int count = 0;
    r = api.cuDeviceGetCount(&count);
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
    return AITK_OK;
}
