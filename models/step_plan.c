/* The cost model's memory plan and FLOP count for a configuration of the
 * step graph (models/step.h, aitk_step_memory_plan, aitk_step_predicted_flops)
 * with the storage of the backend it runs on: the loaded parameters are
 * copied and given that backend's element sizes, so the plan is the one the
 * step's own memory account can be held to. */
#include <string.h>

#include "models/cost.h"
#include "models/spec.h"
#include "models/step_internal.h"

/* The workload one step of the graph is: a single bucket, the step's own text length,
 * no accumulation. `s` is the spec copy `w` refers to (caller's storage). */
static void step_workload(aitk_workload *w, aitk_model_spec *s, const aitk_model_spec *spec,
                         long resolution, long batch, long txt_tokens, long rank)
{
    *s = *spec;
    s->text_tokens = txt_tokens;
    aitk_workload_defaults(w, s);
    w->resolutions[0] = resolution;
    w->n_resolutions = 1;
    w->batch = batch;
    w->accumulation = 1;
    w->rank = rank;
    w->step_graph = true;
}

aitk_status step_plan_flops(const aitk_model_spec *spec, long resolution, long batch,
                            long txt_tokens, long rank, bool checkpointing, double *hardware,
                            aitk_str *err)
{
    aitk_cost_params *params = NULL;
    aitk_status st = aitk_cost_params_load(&params, err);
    if (st)
        return st;
    aitk_model_spec s;
    aitk_workload w;
    step_workload(&w, &s, spec, resolution, batch, txt_tokens, rank);
    w.checkpointing = checkpointing;
    w.cache_latents = true;
    w.cache_text = true; /* text features come cached: no encoder FLOPs */
    aitk_step_work work;
    st = aitk_cost_work(&w, params, resolution, &work);
    aitk_cost_params_free(params);
    if (st)
        return st;
    *hardware = 0;
    for (int i = 0; i < AITK_WORK_FLOP_TERMS; i++)
        *hardware += work.flops[i];
    return AITK_OK;
}

aitk_status step_plan_storage(const aitk_model_spec *spec, long resolution, long batch,
                          long txt_tokens, long rank, double alpha, bool fp8, bool nf4,
                          bool adamw, bool checkpointing, double act_bytes, double *terms,
                          aitk_str *err)
{
    aitk_cost_params *params = NULL;
    aitk_status st = aitk_cost_params_load(&params, err);
    if (st)
        return st;
    aitk_cost_params p = *params;
    /* The backend's activation storage for activations and an unquantized
     * base (4 bytes on the CPU, 2 where it is bf16); an fp8 base stays one
     * byte, one scale per tensor rather than per row; an NF4 base half a
     * byte plus one fp32 absmax per 64 weights, without the GPU plan's
     * double quantization. What the step's own account cannot see is left
     * out: no CUDA context, no library workspace (the backend reports those
     * apart), and no caching allocator: no fragmentation allowance. */
    p.weight_bytes[AITK_WEIGHT_BF16] = act_bytes;
    p.weight_bytes[AITK_WEIGHT_NF4] = 0.5 + 4.0 / 64.0;
    p.activation_bytes = act_bytes;
    p.scale_bytes_per_row = 0;
    p.cuda_context_gib = 0;
    p.cublas_workspace_mib = 0;
    p.fragmentation = 0;
    p.allocator_reserve_mib = 0;
    aitk_model_spec s;
    aitk_workload w;
    step_workload(&w, &s, spec, resolution, batch, txt_tokens, rank);
    w.alpha = alpha;
    w.base_dtype = fp8 ? AITK_WEIGHT_FP8 : nf4 ? AITK_WEIGHT_NF4 : AITK_WEIGHT_BF16;
    w.optimizer = adamw ? "adamw" : "adamw8bit";
    w.checkpointing = checkpointing;
    w.cache_latents = true; /* the step starts from cached latents and text features */
    w.cache_text = true;
    w.lora_bytes = 4;
    aitk_memory_plan plan;
    st = aitk_cost_memory(&w, &p, resolution, &plan, err);
    aitk_cost_params_free(params);
    if (st)
        return st;
    const int order[] = {AITK_PLAN_BASE_WEIGHTS, AITK_PLAN_LORA_PARAMS, AITK_PLAN_LORA_GRADS,
                         AITK_PLAN_OPTIMIZER,    AITK_PLAN_CHECKPOINTS, AITK_PLAN_LIVE_BLOCK,
                         AITK_PLAN_WORKSPACES};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        terms[i] = plan.bytes[order[i]];
    terms[sizeof order / sizeof *order] = plan.total;
    return AITK_OK;
}
