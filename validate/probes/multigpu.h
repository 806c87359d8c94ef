/* Multi-GPU on one machine: the peer-access matrix (the CUDA plugin's
 * cudaDeviceCanAccessPeer for every pair), the link kind and its nominal
 * rate (NVML, links.h), and NCCL all-reduce, all-gather and reduce-scatter
 * bandwidth over message sizes (bench/micro/collectives.h), as the checks
 * multigpu.peer_access, multigpu.link and multigpu.nccl. With fewer than
 * two GPUs, no plugin, or a plugin without NCCL, each is skipped with the
 * reason. The collectives' figures go to micro[] (category "collective"),
 * the matrix and link to the environment record under "multigpu". */
#ifndef AITK_VALIDATE_PROBES_MULTIGPU_H
#define AITK_VALIDATE_PROBES_MULTIGPU_H

#include "validate/engine.h"

aitk_status aitk_multigpu_checks(aitk_run_ctx *ctx);

#endif
