/* The link between a machine's GPUs, from the NVML record (nvml.c): its
 * kind (NVLink or PCIe) and nominal rate per direction, the figure that
 * nccl-tests' busbw is read against (its doc/PERFORMANCE.md: busbw "should
 * be compared to the hardware peak bandwidth").
 *
 * Rates per direction, from the standards' published figures:
 * - PCIe, per lane: 2.5 and 5 GT/s with 8b/10b coding (gen 1-2: 0.25 and
 *   0.5 GB/s), 8, 16 and 32 GT/s with 128b/130b (gen 3-5: 0.985, 1.969,
 *   3.938 GB/s) (PCI-SIG, PCI Express Base Specification 3.0 section 4.2.2
 *   and 5.0 section 4.2; pcisig.com "PCI Express 5.0 ... 32 GT/s"). Later
 *   generations change the coding (FLIT mode) and are reported without a
 *   rate rather than with a guessed one.
 * - NVLink, per link: 20 GB/s for NVLink 1 (P100: 4 links, 160 GB/s both
 *   directions), 25 GB/s for NVLink 2 (V100: 6 links, 300 GB/s), 3 (A100:
 *   12 links, 600 GB/s) and 4 (H100: 18 links, 900 GB/s), 50 GB/s for
 *   NVLink 5 (B200: 18 links, 1.8 TB/s) (NVIDIA's Tesla P100, V100, A100
 *   and H100 architecture whitepapers, "NVLink" sections; the DGX B200
 *   datasheet). NVML's nvmlDeviceGetNvLinkVersion answers the enum
 *   nvmlNvlinkVersion_t (nvml.h: 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0,
 *   5 = 3.1, 6 = 4.0, 7 = 5.0). */
#ifndef AITK_VALIDATE_PROBES_LINKS_H
#define AITK_VALIDATE_PROBES_LINKS_H

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

/* GB/s per lane per direction of PCIe generation `gen`; 0 when unknown. */
double aitk_link_pcie_lane_gbs(unsigned gen);

/* GB/s per link per direction of an NVML NVLink version; 0 when unknown. */
double aitk_link_nvlink_gbs(unsigned nvml_version);

/* "1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0"; "unknown". */
const char *aitk_link_nvlink_name(unsigned nvml_version);

typedef struct aitk_link {
    const char *kind; /* "NVLink", "PCIe", "unknown" */
    double gbs;       /* nominal rate per direction of the slowest GPU's link; 0: unknown */
} aitk_link;

/* The link of the first `n` GPUs of NVML's devices[] (the record nvml.c
 * writes): NVLink when every one of them has an active NVLink, the rate
 * that of the GPU with the fewest active links; else PCIe at the slowest
 * GPU's current generation and width. `text` receives how the rate was
 * worked ("NVLink 4.0: 18 links x 25 GB/s = 450 GB/s per direction").
 * AITK_E_NOTFOUND when the record has not enough devices or says nothing
 * of either link (text says which); AITK_E_NOMEM. */
aitk_status aitk_link_from_nvml(const cJSON *devices, int n, aitk_link *out, aitk_str *text);

#endif
