/* An ai-toolkit config as the cost model's workload: what predict --config
 * predicts (validate/cmd_predict.c) and what the config tests check. */
#include <string.h>

#include "models/aitk_config.h"

/* The settings a config and a workload both name the same, copied as they
 * are. gradient_accumulation_steps (accumulation) counts micro-batches
 * inside one step; it only spaces the optimizer's steps, whose time is in
 * the step overhead. */
#define AITK_CONFIG_WORKLOAD_SAME(X)                                                          \
    X(n_resolutions) X(batch) X(accumulation) X(rank) X(alpha) X(steps) X(checkpointing)   \
    X(optimizer) X(lora_bytes) X(cache_latents) X(cache_text) X(preservation) X(ema)        \
    X(sample_every) X(n_sample_groups) X(sample_passes) X(lora_only) X(lora_ignore) X(fp16)  \
    X(val_loss_every) X(val_loss_items) X(val_loss_sigmas) X(val_loss_resolution)

void aitk_config_workload(const aitk_train_config *cfg, const aitk_model_spec *spec,
                          aitk_workload *w)
{
    aitk_workload_defaults(w, spec);
#define AITK_X_COPY(field) w->field = cfg->field;
    AITK_CONFIG_WORKLOAD_SAME(AITK_X_COPY)
#undef AITK_X_COPY
    memcpy(w->resolutions, cfg->resolutions, sizeof w->resolutions);
    memcpy(w->sample_groups, cfg->sample_groups, sizeof w->sample_groups);
    /* The rest are stored differently on each side. */
    w->base_dtype = aitk_config_base_storage(cfg);
    w->te_dtype = aitk_config_te_storage(cfg);
    w->base_packed_bits = aitk_config_base_packed_bits(cfg);
    w->te_packed_bits = aitk_config_te_packed_bits(cfg);
    w->base_qtype = cfg->quantize ? cfg->qtype_name : NULL;
    w->te_qtype = cfg->quantize_te ? cfg->qtype_te_name : NULL;
}
