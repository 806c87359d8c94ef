/* What an ai-toolkit config decides about the training step, in plain
 * values. workload_step.c builds the step (models/step.h, hence
 * kernels/ops.h) and cannot also include models/aitk_config.h: ops.h's
 * storage dtypes and models/cost.h's weight dtypes share enumerator names
 * (AITK_DTYPE_BF16, ...). workload_step_train.c reads the config on the
 * other side of that line. */
#ifndef AITK_BENCH_WORKLOAD_STEP_TRAIN_H
#define AITK_BENCH_WORKLOAD_STEP_TRAIN_H

#include <stdbool.h>

struct aitk_train_config;

typedef struct aitk_bench_step_train {
    long rank;
    double alpha;
    long batch;
    bool checkpointing;
    bool optimizer_8bit; /* the optimizer's name says 8bit (adamw8bit, AdamW8Bit) */
    bool quantize;       /* the qfloat8 base */
    bool bf16;           /* train.dtype bf16 / bfloat16 */
} aitk_bench_step_train;

void aitk_bench_step_train_read(const struct aitk_train_config *t, aitk_bench_step_train *out);

#endif
