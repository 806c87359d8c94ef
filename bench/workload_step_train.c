/* Reads the step's choices out of an ai-toolkit config (see
 * workload_step_train.h for why this is a file of its own). */
#include "bench/workload_step_train.h"

#include <ctype.h>
#include <string.h>

#include "models/aitk_config.h"

/* ai-toolkit's optimizer factory lower-cases the name before matching, so
 * "AdamW8Bit" and "adamw8bit" are the same optimizer. */
static bool is_8bit_optimizer(const char *name)
{
    for (const char *p = name; p && *p; p++)
        if (p[0] == '8' && tolower((unsigned char)p[1]) == 'b' &&
            tolower((unsigned char)p[2]) == 'i' && tolower((unsigned char)p[3]) == 't')
            return true;
    return false;
}

void aitk_bench_step_train_read(const aitk_train_config *t, aitk_bench_step_train *out)
{
    out->rank = t->rank;
    out->alpha = t->alpha;
    out->batch = t->batch;
    out->checkpointing = t->checkpointing;
    out->optimizer_8bit = is_8bit_optimizer(t->optimizer);
    out->quantize = t->quantize;
    out->bf16 = t->dtype && (strcmp(t->dtype, "bf16") == 0 || strcmp(t->dtype, "bfloat16") == 0);
}
