/* Readers over the environment record. */
#include "validate/probes/gpu_util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/fields.h"

bool aitk_json_true(const cJSON *o, const char *key)
{
    return o && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

double aitk_json_number(const cJSON *o, const char *key, double fallback)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

bool aitk_list_has(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, item, n) == 0)
            return true;
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}

const cJSON *aitk_gpu_devices(const cJSON *env)
{
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(env, "gpu");
    const cJSON *nv = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(gpu, "nvml"), "devices");
    const cJSON *cu = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(gpu, "cuda_driver"), "devices");
    if (cJSON_IsArray(nv) && (cJSON_GetArraySize(nv) > 0 || !cJSON_IsArray(cu)))
        return nv;
    return cJSON_IsArray(cu) ? cu : NULL;
}

double aitk_gpu_vram_gib(const cJSON *dev)
{
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(dev, "memory");
    double bytes = aitk_json_number(mem, "total_bytes", aitk_json_number(dev, "total_bytes", -1));
    return bytes < 0 ? -1 : bytes / 1073741824.0;
}

double aitk_gpu_vram_gb(const cJSON *dev)
{
    double gib = aitk_gpu_vram_gib(dev);
    return gib < 0 ? -1 : round(gib);
}

int aitk_gpu_sm(const cJSON *dev)
{
    const char *cc = aitk_field_str(dev, "compute_capability");
    char *end = NULL;
    long major = strtol(cc, &end, 10);
    if (end == cc || *end != '.')
        return -1;
    const char *m = end + 1;
    long minor = strtol(m, &end, 10);
    if (end == m || *end || major < 0 || minor < 0 || minor > 9)
        return -1;
    return (int)(major * 10 + minor);
}

void aitk_gpu_describe(const cJSON *dev, aitk_str *out)
{
    aitk_str_append(out, *aitk_field_str(dev, "name") ? aitk_field_str(dev, "name") : "unnamed GPU");
    int sm = aitk_gpu_sm(dev);
    if (sm >= 0)
        aitk_str_appendf(out, ", sm_%d", sm);
    double gb = aitk_gpu_vram_gb(dev);
    if (gb >= 0)
        aitk_str_appendf(out, ", %.0f GB", gb);
    const cJSON *pcie = cJSON_GetObjectItemCaseSensitive(dev, "pcie");
    if (aitk_json_number(pcie, "generation_max", -1) >= 0)
        aitk_str_appendf(out, ", PCIe %.0f x%.0f", aitk_json_number(pcie, "generation_max", 0),
                         aitk_json_number(pcie, "width_max", 0));
    const char *err = aitk_field_str(dev, "error");
    if (*err)
        aitk_str_appendf(out, " (%s)", err);
}
