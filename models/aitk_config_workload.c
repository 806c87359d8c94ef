/* An ai-toolkit config as the cost model's workload: what predict --config
 * predicts (validate/cmd_predict.c) and what the config tests check. */
#include <string.h>

#include "models/aitk_config.h"

void aitk_config_workload(const aitk_train_config *cfg, const aitk_model_spec *spec,
                          aitk_workload *w)
{
    aitk_workload_defaults(w, spec);
    memcpy(w->resolutions, cfg->resolutions, sizeof w->resolutions);
    w->n_resolutions = cfg->n_resolutions;
    w->batch = cfg->batch;
    /* Micro-batches inside one step; gradient_accumulation_steps only
     * spaces the optimizer's steps, whose time is in the step overhead. */
    w->accumulation = cfg->accumulation;
    w->rank = cfg->rank;
    w->alpha = cfg->alpha;
    w->steps = cfg->steps;
    w->checkpointing = cfg->checkpointing;
    w->optimizer = cfg->optimizer;
    w->lora_bytes = cfg->lora_bytes;
    w->cache_latents = cfg->cache_latents;
    w->cache_text = cfg->cache_text;
    w->base_dtype = aitk_config_base_storage(cfg);
    w->te_dtype = aitk_config_te_storage(cfg);
    w->preservation = cfg->preservation;
    w->ema = cfg->ema;
    w->sample_every = cfg->sample_every;
    w->sample_steps = cfg->sample_steps;
    w->sample_prompts = cfg->sample_prompts;
    w->sample_passes = cfg->sample_passes;
    w->sample_resolution = aitk_sample_resolution(cfg->sample_width, cfg->sample_height);
    w->lora_only = cfg->lora_only;
    w->lora_ignore = cfg->lora_ignore;
}
