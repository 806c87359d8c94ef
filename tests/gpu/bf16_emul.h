/* The CPU reference with bf16 activation storage emulated: the CPU table
 * whose every operation rounds the activations it writes to bf16 (round to
 * nearest even, the CPU's bf16_round), as the CUDA backend stores them.
 * Compute stays fp32, LoRA masters, gradients and optimizer state fp32, as
 * on the GPU. What it does not reproduce: roundings inside a GPU operation
 * (cuDNN's bf16 probabilities, the bf16 copies of the LoRA weights in the
 * LoRA GEMMs) and the GPU's summation order. It lets gpu.compare_helpers
 * check, without a GPU, that the tolerances of step_rules.h hold for a
 * step with bf16 storage. */
#ifndef AITK_TESTS_GPU_BF16_EMUL_H
#define AITK_TESTS_GPU_BF16_EMUL_H

#include "kernels/ops.h"

/* The table ("cpu-bf16", act_dtype F32 holding bf16 values); static. */
const aitk_ops *gpu_ops_cpu_bf16_storage(void);

#endif
