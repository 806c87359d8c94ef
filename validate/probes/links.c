/* Link kind and nominal rate from the NVML record (see links.h). */
#include "validate/probes/links.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "validate/probes/gpu_util.h"

double aitk_link_pcie_lane_gbs(unsigned gen)
{
    switch (gen) {
    case 1: return 2.5 * 8.0 / 10.0 / 8.0;
    case 2: return 5.0 * 8.0 / 10.0 / 8.0;
    case 3: return 8.0 * 128.0 / 130.0 / 8.0;
    case 4: return 16.0 * 128.0 / 130.0 / 8.0;
    case 5: return 32.0 * 128.0 / 130.0 / 8.0;
    default: return 0.0;
    }
}

double aitk_link_nvlink_gbs(unsigned v)
{
    switch (v) {
    case 1: return 20.0;
    case 2: case 3: case 4: case 5: case 6: return 25.0;
    case 7: return 50.0;
    default: return 0.0;
    }
}

const char *aitk_link_nvlink_name(unsigned v)
{
    static const char *const names[] = {"unknown", "1.0", "2.0", "2.2", "3.0", "3.1", "4.0",
                                        "5.0"};
    return v < sizeof names / sizeof *names ? names[v] : "unknown";
}

static double number(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    return aitk_json_number(x, b, NAN);
}

/* NVLink: every GPU has active links; the one with the fewest sets the rate. */
static bool nvlink_of(const cJSON *devices, int n, aitk_link *out, aitk_str *text)
{
    double fewest = INFINITY, version = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *d = cJSON_GetArrayItem(devices, i);
        double links = number(d, "nvlink", "active_links");
        double v = number(d, "nvlink", "version");
        if (!isfinite(links) || links < 1 || !isfinite(v) || aitk_link_nvlink_gbs((unsigned)v) <= 0)
            return false;
        if (links < fewest) {
            fewest = links;
            version = v;
        }
    }
    double per = aitk_link_nvlink_gbs((unsigned)version);
    out->kind = "NVLink";
    out->gbs = fewest * per;
    aitk_str_appendf(text, "NVLink %s: %.0f links x %.0f GB/s = %.0f GB/s per direction",
                     aitk_link_nvlink_name((unsigned)version), fewest, per, out->gbs);
    return true;
}

/* PCIe: the slowest GPU's current generation x width. */
static bool pcie_of(const cJSON *devices, int n, aitk_link *out, aitk_str *text)
{
    double slowest = INFINITY, gen = 0, width = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *d = cJSON_GetArrayItem(devices, i);
        double g = number(d, "pcie", "generation"), w = number(d, "pcie", "width");
        if (!isfinite(g) || !isfinite(w) || g < 1 || w < 1)
            return false;
        double lane = aitk_link_pcie_lane_gbs((unsigned)g);
        double r = lane > 0 ? lane * w : 0;
        if (r < slowest) {
            slowest = r;
            gen = g;
            width = w;
        }
    }
    out->kind = "PCIe";
    out->gbs = slowest;
    if (slowest > 0)
        aitk_str_appendf(text, "PCIe gen %.0f x%.0f: %.0f lanes x %.3f GB/s = %.1f GB/s per "
                               "direction", gen, width, width,
                         aitk_link_pcie_lane_gbs((unsigned)gen), slowest);
    else
        aitk_str_appendf(text, "PCIe gen %.0f x%.0f (no nominal rate known for this "
                               "generation)", gen, width);
    return true;
}

aitk_status aitk_link_from_nvml(const cJSON *devices, int n, aitk_link *out, aitk_str *text)
{
    if (!out || !text)
        return AITK_E_INVAL;
    *out = (aitk_link){.kind = "unknown", .gbs = 0};
    if (n < 1 || !cJSON_IsArray(devices) || cJSON_GetArraySize(devices) < n) {
        aitk_str_appendf(text, "NVML lists %d of the %d GPUs",
                         cJSON_IsArray(devices) ? cJSON_GetArraySize(devices) : 0, n);
        return aitk_str_status(text) ? AITK_E_NOMEM : AITK_E_NOTFOUND;
    }
    if (!nvlink_of(devices, n, out, text) && !pcie_of(devices, n, out, text)) {
        aitk_str_append(text, "NVML answered neither the NVLink state nor the PCIe link of "
                              "every GPU");
        return aitk_str_status(text) ? AITK_E_NOMEM : AITK_E_NOTFOUND;
    }
    return aitk_str_status(text) ? AITK_E_NOMEM : AITK_OK;
}
