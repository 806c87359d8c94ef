/* WSL probe: under the Windows Subsystem for Linux the GPU comes from the
 * Windows driver, whose libcuda WSL 2 mounts at /usr/lib/wsl/lib. The
 * common ways it breaks: a WSL 1 distribution (no GPU at all), a Windows
 * driver that does not reach WSL, a Linux NVIDIA driver installed inside WSL
 * whose libcuda shadows Windows' one, and a loader path without
 * /usr/lib/wsl/lib. gpu.wsl names which, with the fix; elsewhere it is
 * silent (skip). Linux only. */
#ifndef AITK_VALIDATE_PROBES_WSL_H
#define AITK_VALIDATE_PROBES_WSL_H

#include "validate/engine.h"

/* The provider at `root` ("" for the real machine, a scratch folder in the
 * tests): reads <root>/proc/sys/kernel/osrelease and <root>/usr/lib/wsl,
 * records "wsl" in ctx->env and adds gpu.wsl, judged against the CUDA
 * driver record the gpu provider left (it runs after it). */
aitk_status aitk_wsl_checks_at(aitk_run_ctx *ctx, const char *root);

/* The registered provider: aitk_wsl_checks_at(ctx, ""). */
aitk_status aitk_wsl_checks(aitk_run_ctx *ctx);

#endif
