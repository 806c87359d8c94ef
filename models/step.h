/* One LoRA training step of a reference workload, built from its model spec
 * and run on any backend's operation table (kernels/ops.h).
 *
 * A step is what ai-toolkit does with cached latents: draw t per sample and
 * fresh noise, x_t = (1-t) x0 + t noise, run the transformer with frozen base
 * weights and LoRA adapters on every Linear inside the blocks, MSE against
 * (noise - x0), backward through the activations (gradients for the LoRA
 * weights only), recomputing each block from its saved input when gradient
 * checkpointing is on, then the optimizer update. FLUX.1-dev and Chroma are
 * MMDiT transformers (step_flux.c), OmniGen2 a single-stream GQA transformer
 * with refiner layers (step_omnigen2.c).
 *
 * Every tensor -- base weights, LoRA weights, cached inputs, the noise and t of
 * each step -- comes from a counter-based PRNG keyed by (seed, tensor name,
 * element index) (aitk_step_draw, kernels/math/draw.h), so a run repeats
 * exactly and the PyTorch golden generator (tests/golden/gen_step_golden.py)
 * rebuilds the same model without the weights being shipped. Weights are
 * drawn on the backend itself (draw_act/draw_f32): nothing is uploaded, and
 * every backend holds the same values. Tensors are named ("double.0.img_q.lora_a")
 * and reachable through the tensor table below, for tests and for tools.
 *
 * Memory: every buffer is allocated through aitk_buf_alloc with a purpose tag, so
 * aitk_mem_account's peak can be set against the cost model's memory plan
 * (aitk_step_memory_plan). */
#ifndef AITK_MODELS_STEP_H
#define AITK_MODELS_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/str.h"
#include "kernels/ops.h"
#include "models/spec.h"

/* How the frozen base weights are stored. Compute is fp32 on every path. */
typedef enum aitk_step_base {
    AITK_STEP_BASE_FP32, /* the backend's activation storage, values as drawn */
    AITK_STEP_BASE_BF16, /* activation storage holding bf16-rounded values (on the CPU:
                            fp32 buffers emulating the GPU's bf16 storage) */
    AITK_STEP_BASE_FP8,  /* e4m3 bytes + one fp32 scale per tensor, dequantized per GEMM
                            (ai-toolkit's qfloat8 path) */
    AITK_STEP_BASE_NF4,  /* NF4 nibbles + one fp32 absmax per 64 weights (ops.h),
                            dequantized per GEMM (QLoRA's bitsandbytes path) */
} aitk_step_base;

typedef enum aitk_step_optim {
    AITK_STEP_ADAMW,     /* fp32 moments (torch.optim.AdamW) */
    AITK_STEP_ADAMW8BIT, /* block-wise 8-bit moments (ops.h) */
} aitk_step_optim;

typedef struct aitk_step_setup {
    long rank;          /* LoRA rank, >= 1 */
    double alpha;       /* LoRA alpha; scale = alpha / rank */
    long batch;         /* samples per step, >= 1 */
    long resolution;    /* square image in pixels; 0: use img_tokens */
    long img_tokens;    /* latent patches per sample when resolution == 0 */
    long txt_tokens;    /* text tokens per sample; 0: the spec's text_tokens */
    bool checkpointing; /* per-block gradient checkpointing */
    aitk_step_base base;
    aitk_step_optim optimizer;
    aitk_adamw_hparams adamw;
    uint64_t seed;
    /* Every step draws the t and noise of the first step, so the data is
     * fixed and only the LoRA changes between steps: a step that computes
     * what it should then makes the loss fall. ai-toolkit draws fresh ones
     * each step; the work of a step is the same either way. */
    bool fixed_noise;
} aitk_step_setup;

/* The spec's ai-toolkit defaults (rank, alpha, batch, largest resolution,
 * checkpointing, optimizer, fp8 base when the spec quantizes to fp8; a spec
 * quantizing to nf4 keeps the fp32 base, so its default step repeats the
 * numbers it always had: AITK_STEP_BASE_NF4 is asked for explicitly), AdamW
 * at lr 1e-4, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 (ai-toolkit's
 * defaults), seed 42. */
void aitk_step_setup_defaults(aitk_step_setup *setup, const aitk_model_spec *spec);

typedef struct aitk_step_model aitk_step_model;

typedef struct aitk_step_result {
    double loss;        /* MSE of this step's forward pass (before the update) */
    double flops;       /* hardware FLOPs of the step: forward, recompute, backward, LoRA */
    double model_flops; /* the same without recomputation (MFU convention) */
    long step;          /* 1 after the first call */
} aitk_step_result;

/* Builds the model of `spec` (full size or tiny) for `setup` on `ops`,
 * allocating everything it will ever use (so the peak is known as soon as it
 * is built), and fills every tensor from the PRNG. `spec` and `acct` must
 * outlive the model (it keeps pointers to both). Errors: AITK_E_INVAL (setup
 * out of range, spec not one of the three architectures or inconsistent,
 * ops table incomplete), AITK_E_RANGE (more tokens than one GEMM call
 * takes), AITK_E_NOMEM (acct->limit or the backend), each with a sentence in
 * `err`; *out is then NULL and nothing stays allocated.
 *
 * Speed on the CPU backend: run with OMP_WAIT_POLICY=PASSIVE (read by libgomp
 * at start-up): spinning OpenMP workers starve OpenBLAS's threads, 2-3x
 * slower steps on 2 busy cores. */
aitk_status aitk_step_model_create(const aitk_model_spec *spec, const aitk_step_setup *setup,
                                   const aitk_ops *ops, aitk_mem_account *acct,
                                   aitk_step_model **out, aitk_str *err);
/* One optimizer step: draws t (per sample) and noise for the next step
 * number (res->step, counted from 1), forward, loss, backward, update. */
aitk_status aitk_step_run(aitk_step_model *m, aitk_step_result *res);
/* Forward, loss and backward only: the LoRA gradients are left in place and
 * the weights untouched (tests compare the gradients). */
aitk_status aitk_step_forward_backward(aitk_step_model *m, aitk_step_result *res);
void aitk_step_model_free(aitk_step_model *m);

/* Switches the model to another resolution bucket: the next steps run
 * `resolution` px (a square image; aitk_step_set_img_tokens: that many
 * image tokens per sample), as ai-toolkit runs each batch at its own
 * bucket (ai-toolkit toolkit/dataloader_mixins.py, BucketsMixin: each
 * batch from one bucket). Allowed up to the image tokens the model was
 * built for: its buffers keep the size of that largest bucket, as PyTorch's
 * caching allocator keeps freed blocks for reuse (torch.cuda.empty_cache,
 * https://pytorch.org/docs/stable/generated/torch.cuda.empty_cache.html),
 * so the peak is the largest bucket's. The cached inputs are redrawn for
 * the new size and the RoPE tables rebuilt for the new grid, so a model
 * switched to a bucket computes exactly what a model built at that bucket
 * computes; LoRA weights, optimizer state and the step count carry over.
 * Errors: AITK_E_RANGE above the built size, AITK_E_INVAL below one patch,
 * each with a sentence in `err`; the model is then unchanged. */
aitk_status aitk_step_set_resolution(aitk_step_model *m, long resolution, aitk_str *err);
aitk_status aitk_step_set_img_tokens(aitk_step_model *m, long img_tokens, aitk_str *err);

/* Token counts the model runs with (per sample). */
long aitk_step_img_tokens(const aitk_step_model *m);
long aitk_step_txt_tokens(const aitk_step_model *m);
/* Number of trainable (LoRA) parameters. */
size_t aitk_step_lora_params(const aitk_step_model *m);
/* The setup the model was built with (rank, base, optimizer,
 * checkpointing...): what a report says ran. */
const aitk_step_setup *aitk_step_setup_of(const aitk_step_model *m);

/* ---- tensor table ---- */
typedef enum aitk_step_kind {
    AITK_STEP_T_BASE,  /* frozen base weight, bias or norm weight */
    AITK_STEP_T_LORA,  /* LoRA A (r,in) or B (out,r): trainable, has a gradient */
    AITK_STEP_T_INPUT, /* cached latents x0 and text features */
} aitk_step_kind;

typedef struct aitk_step_tensor {
    const char *name;  /* owned by the model */
    aitk_step_kind kind;
    int ndim;
    long dims[3];
    size_t count;
} aitk_step_tensor;

size_t aitk_step_tensor_count(const aitk_step_model *m);
/* Info of tensor `i`; AITK_E_RANGE past the end. */
aitk_status aitk_step_tensor_info(const aitk_step_model *m, size_t i, aitk_step_tensor *out);
/* Index of the tensor called `name`; AITK_E_NOTFOUND if none. */
aitk_status aitk_step_tensor_find(const aitk_step_model *m, const char *name, size_t *index);
/* Copies tensor i (dequantized for a quantized base) into host memory of
 * `count` floats; AITK_E_INVAL when count differs from the tensor's. */
aitk_status aitk_step_tensor_get(const aitk_step_model *m, size_t i, float *host, size_t count);
/* The gradient of LoRA tensor i from the last backward; AITK_E_INVAL for a
 * tensor that is not LoRA. */
aitk_status aitk_step_grad_get(const aitk_step_model *m, size_t i, float *host, size_t count);

/* ---- the PRNG every tensor comes from ----
 * Value j of the stream `name`: aitk_draw(aitk_draw_key(seed, name), j, scale)
 * of kernels/math/draw.h, i.e. splitmix64 of (seed XOR fnv1a64(name)) +
 * (j+1) * 0x9E3779B97F4A7C15, top 24 bits -> u in [0,1), returned as
 * (2u - 1) * scale in fp32. The host's copy of what the backends draw;
 * gen_step_golden.py implements the same function. */
float aitk_step_draw(uint64_t seed, const char *name, uint64_t j, float scale);

/* ---- memory plan ----
 * The cost model's plan (models/cost.h, cost.yaml) for the configuration
 * `m` was built for (its largest bucket, whatever bucket it runs now),
 * with the storage of the backend `m` runs on: activations and an
 * unquantized base in its act_dtype (fp32 on the CPU, bf16 on the GPU),
 * fp32 LoRA masters and optimizer state (an fp8 base stays one byte per
 * weight, without per-row scales; an NF4 base half a byte plus one fp32
 * absmax per 64 weights); no CUDA context, no library workspace (the
 * backend reports those apart), no caching-allocator fragmentation. The
 * cost model's own GPU figures are untouched (the loaded parameters are
 * adjusted in a copy). One term is added that the GPU plan lacks: `block_grads`, the
 * activation gradients of the block being backpropagated, taken as large as
 * the block's saved activations (live_block: every saved tensor gets a
 * gradient of its own shape while the block's backward runs). Terms in
 * bytes, as aitk_memory_plan's. */
typedef struct aitk_step_plan {
    double base_weights, lora_params, lora_grads, optimizer, checkpoints, live_block,
        workspaces, block_grads, total;
} aitk_step_plan;

aitk_status aitk_step_memory_plan(const aitk_step_model *m, aitk_step_plan *out, aitk_str *err);

/* The cost model's hardware FLOPs (aitk_cost_work: GEMMs, recomputation,
 * LoRA, attention) for the configuration of `m` at its current bucket, the
 * figure aitk_step_result.flops counts as the graph runs. Square images only, as
 * aitk_step_memory_plan. */
aitk_status aitk_step_predicted_flops(const aitk_step_model *m, double *flops, aitk_str *err);

#endif
