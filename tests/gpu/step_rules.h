/* The tolerances a bf16-storage step is held to against the float64 golden
 * files of the tiny models, shared by gpu.step_golden (the CUDA step) and
 * gpu.compare_helpers (which checks, without a GPU, that they accept the
 * CPU step, in fp32 and with bf16 storage emulated, and reject wrong
 * numbers).
 *
 * Where the errors come from. The CUDA backend stores every activation, and
 * the base weights, in bf16: 8 significant bits, so each store is off by up
 * to 2^-9 = 0.2% relative (round to nearest even, unbiased). Compute and
 * accumulation are fp32, the LoRA masters, gradients and AdamW state fp32.
 * A value at the end of the tiny models' forward and backward passes (4-6
 * blocks, a few dozen stores on any path) carries the sum of a few dozen
 * such independent errors, about sqrt(40) * 2^-9 ~ 1.2% of its size, more
 * where terms cancel.
 *
 * Loss (relative error, every step): the loss is a mean over
 * B * img_tokens * channels elements (2048 in the tiny FLUX). Independent per-element errors of ~1% move it by about
 * 2 * 1% / sqrt(2048) ~ 5e-4; a fully correlated 0.25% error (more than one
 * bf16 rounding of every element in the same direction) by 5e-3, the limit.
 *
 * Step-1 LoRA gradients (cosine and norm error, see step_compare.h):
 * cosine = 1 - d^2/2 for a difference vector d times the reference's norm.
 * All tensors as one vector: cosine >= 0.998 allows d ~ 6%, norm error 3%.
 * Per tensor: cosine >= 0.98 (d ~ 20%) and norm error 10%, for every tensor
 * whose reference RMS is at least 1% of the whole vector's (exactly zero
 * ones, OmniGen2's unused ref_image_refiner, count as equal). A wrong op
 * (a wrong sign, scale or missing term) moves one or more tensors by their
 * whole size: cosine near 0 or -1, or norm errors of tens of percent.
 *
 * Weights after 3 AdamW steps, as the change from the initial weights:
 * AdamW moves each weight by about lr per step whatever its gradient's
 * size, in the gradient's direction, so an element whose gradient is below
 * the bf16 noise moves the other way (off by 2 lr per step). Judged on the
 * whole vector only, cosine >= 0.95 and norm error <= 10%; per tensor it is
 * printed, not judged (a rank-2 adapter of a few hundred weights can lose
 * a few hundredths of cosine to a handful of such elements). A skipped step
 * changes the norm by a third, a wrong-signed update gives cosine -1.
 *
 * Measured on the CPU with bf16 storage emulated (bf16_emul.h: every
 * activation and base weight rounded as the GPU stores them), the worst
 * of the three tiny models with checkpointing: loss 6.1e-4 (Chroma step 2);
 * gradients as one vector cosine 0.99984, norm error 1.5e-3 (OmniGen2);
 * per tensor cosine 0.9985, norm error 2.0e-2; weight change as one vector
 * cosine 0.9963, norm error 7.8e-4; per tensor cosine down to 0.947. The
 * limits leave 5-25x that room for what the emulation lacks: roundings
 * inside GPU operations (cuDNN's bf16 probabilities, the bf16 copies of the
 * LoRA weights) and another summation order. gpu.compare_helpers checks
 * that these rules accept the emulated step and reject perturbed results. */
#ifndef AITK_TESTS_GPU_STEP_RULES_H
#define AITK_TESTS_GPU_STEP_RULES_H

#include <math.h>

#include "step_compare.h"

#define GPU_STEP_LOSS_TOL 5e-3

static const gpu_lora_rule gpu_step_grad_rule = {
    .all = {.min_cosine = 0.998, .max_norm_err = 3e-2},
    .each = {.min_cosine = 0.98, .max_norm_err = 0.1},
    .small_rms_frac = 0.01,
};

static const gpu_lora_rule gpu_step_update_rule = {
    .all = {.min_cosine = 0.95, .max_norm_err = 0.1},
    .each = {.min_cosine = -1.0, .max_norm_err = INFINITY}, /* printed, not judged */
    .small_rms_frac = 0.0,
};

#endif
