/* Model specs: the architecture of a reference workload, read from
 * models/<id>.yaml (see flux1-dev.yaml for the format).
 *
 * A spec is a list of block groups, each a list of Linears whose shapes are
 * written over named dimensions, plus the frozen conditioning models and the
 * VAE, the ai-toolkit defaults and the documented targets. Parameter counts,
 * FLOPs and the memory plan (models/cost.h) are all derived from this one
 * description, so the published parameter count checks the whole of it. */
#ifndef AITK_MODELS_SPEC_H
#define AITK_MODELS_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"
#include "common/yaml.h"

/* Which tokens a layer runs over. */
typedef enum aitk_stream {
    AITK_STREAM_IMG,   /* latent patches */
    AITK_STREAM_TXT,   /* text-encoder tokens */
    AITK_STREAM_ALL,   /* img + txt (joint attention) */
    AITK_STREAM_COND,  /* one conditioning vector per sample */
    AITK_STREAM_REF,   /* reference-image tokens (0 for text-to-image) */
    AITK_STREAM_FIXED, /* a fixed count per sample (`fixed_tokens`) */
} aitk_stream;

#define AITK_SPEC_MAX_REPEAT 4

typedef struct aitk_linear_spec {
    const char *name;
    long repeat;       /* identical Linears (q, k, v) */
    long in, out;
    bool bias;
    bool lora;         /* adapted by the default LoRA */
    aitk_stream stream;
    long fixed_tokens; /* AITK_STREAM_FIXED only */
    /* The module path of each repeat inside its block as ai-toolkit names
     * it (diffusers: "attn.to_q"); n_modules 0 when the spec gives none. */
    const char *modules[AITK_SPEC_MAX_REPEAT];
    size_t n_modules;
    /* Hidden-sized activations a token of its stream keeps only because
     * this Linear has a LoRA (the input its down projection's gradient
     * reads, when nothing else keeps it), plain and under autocast; 0 when
     * not measured. The block's saved_per_token counts a LoRA on every
     * Linear; a job that adapts fewer keeps these less. */
    double lora_saves, lora_saves_autocast;
    /* The tokens lora_saves is counted by: the Linear's own (stream), or,
     * for a modulation Linear (`modulates` in the spec), the stream its
     * output scales and gates, whose products keep their per-token operand
     * only when the modulation takes a gradient. */
    aitk_stream saves_stream;
    long saves_fixed_tokens;
} aitk_linear_spec;

typedef struct aitk_block_spec {
    const char *name;
    long count;
    bool checkpointed;  /* wrapped in gradient checkpointing when it is on */
    bool backward;      /* gradients flow through it */
    aitk_stream input;  /* tokens whose hidden state enters the block */
    long norm_params;   /* per block, outside the Linears */
    long heads, kv_heads, head_dim; /* heads == 0: no attention */
    aitk_stream attn_stream;
    double elementwise_per_token;   /* hidden-sized tensors read+written, forward */
    /* Hidden-sized activations autograd keeps per token of `input` for the
     * backward, counted op by op (attention's log-sum-exp and LoRA's
     * low-rank outputs apart); 0: estimated from the Linears instead. */
    double saved_per_token;
    /* The same under torch.autocast (0: as saved_per_token). */
    double saved_per_token_autocast;
    /* What the block's own backward holds at its peak beyond what it saved
     * (the incoming gradient and the gradients in flight), in the same
     * units; 0 where nobody measured it. */
    double backward_extra_per_token;
    /* Kernels the block launches in an eager PyTorch step with a LoRA on
     * every Linear: its forward, its backward (without the recompute of
     * checkpointing, which runs the forward again), plain and under
     * autocast; 0 where nobody counted them. An eager step's host time goes
     * with them (models/cost.yaml host_seconds_per_kernel). */
    double kernels_forward, kernels_backward;
    double kernels_forward_autocast, kernels_backward_autocast;
    aitk_linear_spec *linears;
    size_t n_linears;
    /* Block i's module path is "<module_prefix>.<i>" ("transformer.
     * transformer_blocks.7"); NULL when the spec gives none. */
    const char *module_prefix;
} aitk_block_spec;

typedef enum aitk_frozen_role { AITK_FROZEN_TEXT_ENCODER, AITK_FROZEN_VAE } aitk_frozen_role;

typedef struct aitk_frozen_spec {
    const char *name;
    aitk_frozen_role role;
    double params;
    long tokens; /* per sample, for the forward FLOPs of a text encoder */
} aitk_frozen_spec;

typedef struct aitk_model_defaults {
    long rank, alpha, resolution, batch;
    long resolutions[8];
    size_t n_resolutions;
    const char *quantize;  /* "fp8" | "none" | "nf4" */
    const char *optimizer; /* ai-toolkit spelling: "adamw8bit", "adamw" */
    bool checkpointing, cache_latents, cache_text;
} aitk_model_defaults;

typedef struct aitk_model_targets {
    double min_vram_gb, minutes_per_1000;
    const char *recommended_gpu, *source;
} aitk_model_targets;

typedef struct aitk_model_spec {
    aitk_yaml_doc *doc; /* owns every string below */
    const char *id, *title, *source;
    bool tiny;
    double published_params;
    const char *published_source;
    long hidden;        /* the "hidden" dimension: unit of elementwise and activation sizes */
    long vae_downsample, patch, text_tokens;
    aitk_block_spec *blocks;
    size_t n_blocks;
    aitk_frozen_spec *frozen;
    size_t n_frozen;
    aitk_model_defaults defaults;
    aitk_model_targets targets;
} aitk_model_spec;

/* The reference models, NULL-terminated: "flux1-dev", "chroma", "omnigen2". */
extern const char *const aitk_model_ids[];

/* Loads models/<id>.yaml (embedded, or from AITK_DATA_DIR). `tiny` selects the
 * file's tiny_dims: the same architecture at CPU-test size. Unknown id:
 * AITK_E_NOTFOUND naming the known ones; malformed file: AITK_E_PARSE with
 * file:line:col. */
aitk_status aitk_model_spec_load(const char *id, bool tiny, aitk_model_spec **out, aitk_str *err);
/* Parses an already-loaded document (takes ownership of `doc`, also on error). */
aitk_status aitk_model_spec_from_doc(aitk_yaml_doc *doc, bool tiny, aitk_model_spec **out,
                                     aitk_str *err);
void aitk_model_spec_free(aitk_model_spec *spec);

/* Parameters of the transformer (every Linear's weight and bias, norms). */
double aitk_model_spec_params(const aitk_model_spec *spec);
/* Parameters of one group's single block. */
double aitk_block_spec_params(const aitk_block_spec *b);

/* Tokens per sample of a stream at `resolution` pixels (square). */
long aitk_model_spec_tokens(const aitk_model_spec *spec, aitk_stream stream, long resolution,
                            long fixed_tokens);

/* The largest value a dimension may have (2^24). */
#define AITK_MODEL_DIM_MAX 16777216L

/* Evaluates a dimension expression (integers, names from `dims`, + - * and
 * parentheses) against the map `dims` (name -> integer): in [0,
 * AITK_MODEL_DIM_MAX], else AITK_E_RANGE at the expression. Exposed for
 * tests. */
aitk_status aitk_model_dim_eval(const aitk_yaml_doc *doc, const aitk_yaml_node *dims,
                                const aitk_yaml_node *expr, long *out, aitk_str *err);

#endif
