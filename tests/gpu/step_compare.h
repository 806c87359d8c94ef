/* Comparing a training step that stores its tensors in bf16 with the
 * float64 golden files of the tiny models (tests/golden/gen_step_golden.py).
 *
 * The CPU golden test (tests/step/test_step_golden.c) compares element by
 * element at fp32 tolerances. A bf16-storage step cannot meet those: bf16
 * keeps 8 significant bits, so every stored activation is off by up to
 * 2^-9 relative, and elements that cancel (a gradient summed from terms of
 * both signs) can be off by far more than their own size. What a correct
 * bf16 step does keep is the direction and the size of each gradient
 * tensor as a whole, and a loss averaged over thousands of elements, whose
 * independent rounding errors mostly cancel. So vectors are judged by
 *   cosine similarity  dot(got, ref) / (|got| |ref|)   (direction), and
 *   norm error         | |got| - |ref| | / |ref|       (size),
 * and losses by their relative error. The thresholds are the callers'.
 * Nothing here needs a GPU: gpu.compare_helpers checks these functions on
 * the CPU step. */
#ifndef AITK_TESTS_GPU_STEP_COMPARE_H
#define AITK_TESTS_GPU_STEP_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/str.h"
#include "models/step.h"
#include "tests/golden/golden.h"

/* Running sums of two vectors, so several tensors can be judged as one. */
typedef struct gpu_vec_sums {
    double dot, got2, ref2, diff2;
    size_t n;
    bool nonfinite; /* a NaN or infinity in `got`: never close */
} gpu_vec_sums;

void gpu_sums_add(gpu_vec_sums *s, const float *got, const float *ref, size_t n);
void gpu_sums_merge(gpu_vec_sums *into, const gpu_vec_sums *from);
/* 1 when both vectors are zero, 0 when only one is, NaN when got was not finite. */
double gpu_sums_cosine(const gpu_vec_sums *s);
/* | |got| - |ref| | / |ref|; 0 when both are zero, infinity when only ref is. */
double gpu_sums_norm_err(const gpu_vec_sums *s);
/* |got - ref| / |ref|: printed beside the other two, not judged. */
double gpu_sums_diff_err(const gpu_vec_sums *s);

typedef struct gpu_vec_tol {
    double min_cosine;
    double max_norm_err;
} gpu_vec_tol;

bool gpu_sums_close(const gpu_vec_sums *s, const gpu_vec_tol *tol);

/* |got - ref| / |ref| <= tol, false for a non-finite got. */
bool gpu_loss_close(double got, double ref, double tol);

/* The initial LoRA weights of a model, by name, to turn "weights after 3
 * steps" into "the change 3 steps made" (the part AdamW computed). */
typedef struct gpu_lora_snapshot {
    size_t n;
    char **names;
    float **values;
    size_t *counts;
} gpu_lora_snapshot;

aitk_status gpu_lora_snapshot_take(const aitk_step_model *m, gpu_lora_snapshot *out);
const float *gpu_lora_snapshot_find(const gpu_lora_snapshot *s, const char *name, size_t count);
void gpu_lora_snapshot_free(gpu_lora_snapshot *s);

/* Every LoRA tensor of a model against the golden "<prefix><name>". */
typedef struct gpu_tensor_cmp {
    char name[96];
    gpu_vec_sums sums;
} gpu_tensor_cmp;

typedef struct gpu_lora_cmp {
    gpu_tensor_cmp *t;
    size_t n;
    gpu_vec_sums all; /* every tensor as one vector */
} gpu_lora_cmp;

/* grads: the gradients of the last backward, else the weights. base: when
 * not NULL, base values are subtracted from both sides (weights -> their
 * change). Errors: a tensor missing from the golden file or from `base`, or
 * of another size (AITK_E_NOTFOUND / AITK_E_INVAL, named in err). */
aitk_status gpu_lora_compare(const aitk_step_model *m, const aitk_golden *g, const char *prefix,
                             bool grads, const gpu_lora_snapshot *base, gpu_lora_cmp *out,
                             aitk_str *err);
void gpu_lora_cmp_free(gpu_lora_cmp *c);

/* How a comparison is judged: `all` on the whole vector, `each` on every
 * tensor whose reference RMS is at least small_rms_frac of the whole
 * vector's (smaller ones are printed, not judged: their few, nearly
 * cancelling terms are dominated by rounding). */
typedef struct gpu_lora_rule {
    gpu_vec_tol all, each;
    double small_rms_frac;
} gpu_lora_rule;

/* Number of failures (the whole vector counts as one), each named on `log`. */
size_t gpu_lora_failures(const gpu_lora_cmp *c, const gpu_lora_rule *rule, FILE *log);

/* One line per tensor: the CPU's and the GPU's cosine and norm error
 * against the golden values, side by side; gpu may be NULL. */
void gpu_lora_print_side_by_side(FILE *out, const char *title, const gpu_lora_cmp *cpu,
                                 const gpu_lora_cmp *gpu);

/* The golden configuration (the "config" tensor) as a step setup, as
 * tests/step/test_step_golden.c reads it: fp32 base values, fp32 AdamW. */
aitk_status gpu_golden_setup(const aitk_golden *g, const aitk_model_spec *spec, bool ckpt,
                             aitk_step_setup *s, aitk_str *err);
/* Loads tests/golden/data/step_<id with '_' for '-'>.bin. */
aitk_status gpu_golden_load_step(const char *model, aitk_golden *g, aitk_str *err);

#endif
