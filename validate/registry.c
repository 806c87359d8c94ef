/* The order of the report: the machine first, then the GPU stack, then work.
 * A new probe registers here and nowhere else. */
#include "validate/engine.h"
#include "validate/probes/bnb.h"
#include "validate/probes/container.h"
#include "validate/probes/deps.h"
#include "validate/probes/cuda_stack.h"
#include "validate/probes/envlint.h"
#include "validate/probes/gpu.h"
#include "validate/probes/gpu_plugin.h"
#include "validate/probes/host.h"
#include "validate/probes/hub_access.h"
#include "validate/probes/multigpu.h"
#include "validate/probes/python.h"
#include "validate/probes/rules.h"
#include "validate/probes/train_config.h"
#include "validate/probes/uv_remedies.h"
#include "validate/probes/windows.h"
#include "validate/probes/wsl.h"
#include "validate/probes/workloads.h"

const aitk_provider aitk_providers[] = {
    {"host", AITK_LEVEL_QUICK, aitk_host_checks},
    {"gpu", AITK_LEVEL_QUICK, aitk_gpu_checks},
    /* After gpu: gpu.container judges the GPUs the driver answered with. */
    {"gpu", AITK_LEVEL_QUICK, aitk_container_checks},
    /* After gpu: gpu.wsl judges where the CUDA driver library came from. */
    {"gpu", AITK_LEVEL_QUICK, aitk_wsl_checks},
    /* After gpu: windows.gpu_mode reads the NVML record. */
    {"windows", AITK_LEVEL_QUICK, aitk_windows_checks},
    {"python", AITK_LEVEL_QUICK, aitk_python_checks},
    /* After python: python.bitsandbytes reads the environment it selected. */
    {"python", AITK_LEVEL_QUICK, aitk_bnb_checks},
    /* After python: hub.access reads the UI's settings with its interpreter. */
    {"hub", AITK_LEVEL_QUICK, aitk_hub_checks},
    {"cuda", AITK_LEVEL_QUICK, aitk_cuda_stack_checks},
    /* gpu.plugin: loads the CUDA plugin, so not at --quick (loads nothing). */
    {"gpu", AITK_LEVEL_STANDARD, aitk_gpu_plugin_checks},
    {"compat", AITK_LEVEL_QUICK, aitk_rules_checks},
    {"env", AITK_LEVEL_QUICK, aitk_envlint_checks},
    {"deps", AITK_LEVEL_QUICK, aitk_deps_checks},
    {"config", AITK_LEVEL_QUICK, aitk_train_config_checks},
    {"micro", AITK_LEVEL_STANDARD, aitk_micro_checks},
    /* After micro: its GPU context is open; the collectives add to micro[]. */
    {"multigpu", AITK_LEVEL_STANDARD, aitk_multigpu_checks},
    {"workload", AITK_LEVEL_STANDARD, aitk_workload_checks},
    /* Last: says every remedy's pip commands as uv's where uv made the
     * environment without pip. */
    {"python", AITK_LEVEL_QUICK, aitk_uv_remedies},
};
const size_t aitk_provider_count = sizeof aitk_providers / sizeof *aitk_providers;
