/* One tiny golden configuration run on one backend: three steps, the
 * losses, the step-1 LoRA gradients and the change of the LoRA weights over
 * the three steps, each compared with the golden file (step_compare.h).
 * gpu.step_golden runs it on the CPU and on the CUDA backend side by side;
 * gpu.compare_helpers runs it on the CPU to check the judging itself. */
#ifndef AITK_TESTS_GPU_GOLDEN_RUN_H
#define AITK_TESTS_GPU_GOLDEN_RUN_H

#include <stdio.h>

#include "kernels/backend.h"
#include "step_compare.h"

typedef struct gpu_golden_run {
    double loss[3];
    gpu_lora_snapshot initial; /* this backend's LoRA weights before step 1 */
    gpu_lora_cmp grads;        /* step-1 gradients against "grad.*" */
    gpu_lora_cmp update;       /* after3 - initial against golden "after3.*" - initial */
    size_t peak_bytes;         /* the account's peak */
    size_t left_bytes;         /* still accounted after the model was freed: must be 0 */
} gpu_golden_run;

/* Runs the configuration `s` of `spec` on `ops` (`be` NULL for the CPU, else
 * its synchronize is called after each step). `base`: the initial weights
 * the update is measured from, NULL for this run's own (the CPU's, so that
 * the GPU's change is measured from values it did not produce). */
aitk_status gpu_golden_run_steps(const aitk_model_spec *spec, const aitk_step_setup *s,
                                 const aitk_ops *ops, const aitk_backend *be,
                                 const aitk_golden *g, const gpu_lora_snapshot *base,
                                 gpu_golden_run *out, aitk_str *err);
void gpu_golden_run_free(gpu_golden_run *r);

/* The golden loss of step 1..3. */
double gpu_golden_loss(const aitk_golden *g, int step);

/* Failures of a run against the golden file under the rules of
 * step_rules.h, each named on `log`. */
size_t gpu_golden_judge(const gpu_golden_run *r, const aitk_golden *g, FILE *log);

/* Losses and comparisons of two runs side by side (gpu may be NULL). */
void gpu_golden_print(FILE *out, const aitk_golden *g, const gpu_golden_run *cpu,
                      const gpu_golden_run *gpu);

#endif
