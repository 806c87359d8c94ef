/* Container probe: is the validator running in a container, and can that
 * container reach a GPU? A container started without the NVIDIA runtime
 * has no /dev/nvidia* nodes and no driver libraries, and every GPU check
 * fails with "cannot open shared object file": this check names the cause
 * and the fix (the run flags, the Compose reservation, the Kubernetes
 * resource). Outside a container, or in one that sees its GPUs, it is
 * silent (skip or pass). Linux only. */
#ifndef AITK_VALIDATE_PROBES_CONTAINER_H
#define AITK_VALIDATE_PROBES_CONTAINER_H

#include <stdbool.h>

#include "common/yaml.h"
#include "validate/engine.h"

/* What the probe saw under one root folder. */
typedef struct aitk_container_facts {
    bool in_container;
    aitk_str engine;    /* "Docker", "Podman", "Kubernetes", ""; comma list when several */
    aitk_str evidence;  /* "/.dockerenv; /proc/self/cgroup: /docker/..." for the report */
    int gpu_nodes;      /* /dev/nvidia<N> device nodes */
    bool wsl_gpu;       /* /dev/dxg: WSL 2's GPU device, which stands for every GPU there */
} aitk_container_facts;

void aitk_container_facts_free(aitk_container_facts *f);

/* Reads the marker files, <root>/proc/self/cgroup, <root>/proc/self/mountinfo
 * and <root>/dev with the signals of `data` (container.yaml). `root` is ""
 * for the real machine, a scratch folder in the tests. Missing or unreadable
 * files are no evidence, never an error; AITK_E_NOMEM is the only failure. */
aitk_status aitk_container_detect(const char *root, const aitk_yaml_doc *data,
                                  aitk_container_facts *out);

/* The provider at `root`: records "container" in ctx->env and adds
 * gpu.container, judged against the GPUs the gpu provider found (it runs
 * after it). */
aitk_status aitk_container_checks_at(aitk_run_ctx *ctx, const char *root);

/* The registered provider: aitk_container_checks_at(ctx, ""). */
aitk_status aitk_container_checks(aitk_run_ctx *ctx);

#endif
