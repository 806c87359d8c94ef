/* The analytic cost model: one LoRA training step of a workload, in FLOPs,
 * bytes moved, seconds on a given GPU and a memory plan.
 *
 * A step is what ai-toolkit does with cached latents: a forward pass through
 * the transformer with frozen base weights and LoRA adapters, a backward pass
 * for activation gradients only (no base-weight gradients), recomputing each
 * checkpointed block first, then the LoRA update. The accounting follows
 * PaLM's appendix B (Chowdhery et al. 2022, arXiv:2204.02311), the LoRA paper
 * (Hu et al. 2021, arXiv:2106.09685) and Korthikanti et al. 2022
 * (arXiv:2205.05198) for activations; every constant it needs is in
 * models/cost.yaml. */
#ifndef AITK_MODELS_COST_H
#define AITK_MODELS_COST_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"
#include "models/gpudb.h"
#include "models/spec.h"

typedef enum aitk_weight_dtype {
    AITK_WEIGHT_BF16,
    AITK_WEIGHT_FP8,
    AITK_WEIGHT_NF4,
    /* An unquantized base in ai-toolkit's default train dtype (fp32). */
    AITK_WEIGHT_FP32,
    AITK_WEIGHT_COUNT,
} aitk_weight_dtype;

/* "bf16"/"none" -> BF16, "fp8"/"qfloat8" -> FP8, "nf4" -> NF4, "fp32" -> FP32. */
aitk_status aitk_weight_dtype_parse(const char *text, aitk_weight_dtype *out);
const char *aitk_weight_dtype_name(aitk_weight_dtype d);

/* What a base quantized to 8 bits is, by trainer (models/trainers.yaml fp8). */
typedef enum aitk_fp8_path {
    AITK_FP8_QUANTO,  /* optimum-quanto qfloat8: 1 B and row scales, expanded each pass */
    AITK_FP8_CAST,    /* float8_e4m3fn weights, cast to bf16 by autocast each pass */
    AITK_FP8_TORCHAO, /* torchao float8 training: bf16 weights, fp8 GEMMs */
    AITK_FP8_PATH_COUNT,
} aitk_fp8_path;

/* The boolean mask a trainer's code passes to every attention call of a
 * model (models/trainers.yaml attention_mask), by the shape PyTorch turns
 * into an additive bf16 mask before its memory-efficient kernel (flash
 * attention takes none), for batch B, heads H and L tokens:
 *   KEY_PADDING     (B, 1, 1, L): B*L elements, a row broadcast in the kernel
 *   PAIRWISE        (B, 1, L, L), made in each block: B*L^2
 *   PER_HEAD        (B, H, L, L), a broadcast view of a padding row that the
 *                   conversion writes out whole (kohya's apply_t5_attn_mask)
 *   PER_HEAD_KEPT   (B, H, L, L) booleans made once a step and kept for it,
 *                   then converted by every call (ai-toolkit's Chroma) */
typedef enum aitk_attention_mask {
    AITK_MASK_NONE,
    AITK_MASK_KEY_PADDING,
    AITK_MASK_PAIRWISE,
    AITK_MASK_PER_HEAD,
    AITK_MASK_PER_HEAD_KEPT,
    AITK_MASK_COUNT,
} aitk_attention_mask;

/* The names aitk_attention_mask_parse takes, for an error to list. */
#define AITK_ATTENTION_MASK_CHOICES "none, key_padding, pairwise, per_head or per_head_kept"
aitk_status aitk_attention_mask_parse(const char *text, aitk_attention_mask *out);
const char *aitk_attention_mask_name(aitk_attention_mask m);

/* The operating system the trainer's PyTorch runs on, where it changes the
 * step: PyTorch's Windows wheels are built without flash attention (since
 * 2.2.0; pytorch/pytorch issue #125070), so there every attention call runs
 * the memory-efficient kernel, masked or not (models/cost.yaml
 * masked_attention holds that kernel's rates). */
typedef enum aitk_host_os {
    AITK_OS_LINUX,
    AITK_OS_WINDOWS,
    AITK_OS_COUNT,
} aitk_host_os;

#define AITK_HOST_OS_CHOICES "linux or windows"
aitk_status aitk_host_os_parse(const char *text, aitk_host_os *out);
const char *aitk_host_os_name(aitk_host_os os);

/* Block groups a trainer can give its own saved counts for. */
#define AITK_WORKLOAD_MAX_GROUPS 16

/* Sample images of one size and step count (a sample block's default, or
 * one sample's own width, height and sample_steps). */
typedef struct aitk_sample_group {
    long images, steps;
    long resolution; /* square, the sample's area */
} aitk_sample_group;

/* Distinct (size, steps) groups a sampling round keeps apart; a config
 * with more is counted with its last group's size (said where read). */
#define AITK_MAX_SAMPLE_GROUPS 8

typedef struct aitk_workload {
    const aitk_model_spec *spec;
    long resolutions[8];     /* buckets; time is their mean, memory their max */
    size_t n_resolutions;
    long batch, accumulation, rank, steps;
    double alpha;
    aitk_weight_dtype base_dtype, te_dtype;
    /* A base (text encoders) in NF4's place stored in another packed
     * format, dequantized before each GEMM as NF4 is: its bits per weight,
     * scales included, and its qtype for the output (ai-toolkit's uint2 to
     * uint7). 0 and NULL: cost.yaml's NF4 figures. */
    double base_packed_bits, te_packed_bits;
    const char *base_qtype, *te_qtype;
    const char *optimizer;   /* ai-toolkit spelling; looked up in cost.yaml */
    bool checkpointing, cache_latents, cache_text;
    /* Inference: one forward pass, no LoRA, no backward and no optimizer
     * (for checking the forward accounting against measured generation). */
    bool forward_only;
    double lora_bytes;       /* per LoRA parameter: 2 (bf16) or 4 (fp32) */
    /* diff_output_preservation: each step also predicts the class prompt with
     * the LoRA (its graph kept for the one backward: the step's activations
     * and passes doubled) and once without it, no grad (SDTrainer). */
    bool preservation;
    /* train.ema_config.use_ema: a shadow copy of every trained parameter, in
     * its dtype, kept on the GPU (toolkit/ema.py ExponentialMovingAverage,
     * made by BaseSDTrainProcess.setup_ema from the optimizer's params). Its
     * update per step reads and writes the LoRA a few times: time not
     * counted (milliseconds). */
    bool ema;
    /* The forward runs under torch.autocast (accelerate's mixed_precision, as
     * diffusers' training scripts run): LayerNorm in fp32 and each adapted
     * Linear's input cast apart, so blocks keep saved_per_token_autocast. */
    bool autocast;
    /* The step computes in fp16 rather than bf16 (ai-toolkit's train.dtype
     * fp16, accelerate's mixed_precision fp16): its matmuls run at the GPU's
     * fp16 rate, which differs from bf16's only where gpus.yaml lists a
     * matmul_fp16_tflops (cards without bf16 tensor cores). */
    bool fp16;
    /* With cache_text: the prompts were encoded once, but the encoders stay
     * on the GPU (in te_dtype) for the whole run, as diffusers'
     * train_dreambooth_lora_flux.py leaves them (models/trainers.yaml
     * cached_text; a report's text: resident): their weights count, their
     * work does not. Without cache_text it changes nothing. */
    bool te_resident;
    /* The plan is for this project's own step graph (models/step.h), not a
     * PyTorch trainer: its hand-written backward keeps fewer tensors than
     * autograd's op-by-op count (saved_per_token), so a block's live
     * activations are counted as the graph allocates them. */
    bool step_graph;
    /* Sampling during training: every sample_every steps (0: never), the
     * images of each group of sample_groups, each denoising step of them
     * sample_passes forward passes. Its time per 1000 steps is given apart. */
    long sample_every;
    aitk_sample_group sample_groups[AITK_MAX_SAMPLE_GROUPS];
    size_t n_sample_groups;
    int sample_passes;
    /* ai-toolkit's validation loss (train.validation_config): every
     * val_loss_every steps (0: never), val_loss_items no-grad forward
     * passes, each a batch of val_loss_sigmas at val_loss_resolution
     * (BaseSDTrainProcess.validate). It runs inside the training loop, so
     * its time per step joins step_s. */
    long val_loss_every, val_loss_items, val_loss_sigmas, val_loss_resolution;
    /* network_kwargs only_if_contains / ignore_if_contains (NULL-terminated,
     * or NULL): the LoRA adapts a layer whose module path contains one of
     * lora_only (when given) and none of lora_ignore. */
    const char *const *lora_only, *const *lora_ignore;
    /* The trainer's (models/trainers.h): T5 tokens a prompt is padded to
     * (0: the spec's `text`) and what an fp8 base is. */
    long text_tokens;
    aitk_fp8_path fp8_path;
    const char *trainer; /* its id, for the output; NULL: the default */
    /* Validation the trainer runs between steps, outside the training step
     * (models/trainers.yaml validation): 0, none; else a generation at this
     * square resolution, batch 1, with the text encoders loaded again in
     * validation_te_dtype beside whatever stays from training (diffusers'
     * train_dreambooth_lora_flux.py). A second peak: the plan's peak is the
     * larger of the two. */
    long validation_resolution;
    aitk_weight_dtype validation_te_dtype;
    /* How many times its forward bytes a block's elementwise backward moves
     * in the trainer's block code (models/trainers.yaml
     * elementwise_bwd_factor); 0: cost.yaml's. */
    double elementwise_bwd_factor;
    /* What a block group (by its index in spec->blocks) saves for its
     * backward in the trainer's block code, plain and under autocast
     * (models/trainers.yaml saved_per_token); 0: the spec's count. */
    double saved_per_token[AITK_WORKLOAD_MAX_GROUPS];
    double saved_per_token_autocast[AITK_WORKLOAD_MAX_GROUPS];
    /* The kernels a block group launches in the trainer's code with its own
     * LoRA: forward, backward, forward and backward under autocast, and the
     * Linear modules of that code's block (models/trainers.yaml kernels);
     * 0: the spec's, less the Linears the job leaves unadapted (and the
     * spec's Linears). */
    double kernels[AITK_WORKLOAD_MAX_GROUPS][5];
    /* What the trainer's code does to this model that the figures above
     * leave out, in words (models/trainers.yaml not_modelled); NULL: none
     * known. The prediction prints it beside its figures. */
    const char *not_modelled;
    /* The mask the trainer's code gives every attention call (models/
     * trainers.yaml attention_mask, or a report's setup): its kernel runs
     * at the memory-efficient kernel's rate and each call converts and
     * reads the mask. NONE for this project's own step graph. */
    aitk_attention_mask attention_mask;
    /* Where the trainer's PyTorch runs (aitk_host_os); Linux unless a job
     * or a report says otherwise. */
    aitk_host_os os;
} aitk_workload;

/* How the output names the base's (text encoders') storage: the packed
 * qtype where the workload has one, else aitk_weight_dtype_name. */
const char *aitk_workload_base_storage_name(const aitk_workload *w);
const char *aitk_workload_te_storage_name(const aitk_workload *w);
/* Whether the job names a qtype that leaves its base unquantized (uint8:
 * ai-toolkit's uint backend refuses 8 bits), so the output can say why a
 * quantized job is counted at its unquantized bytes. */
bool aitk_workload_base_qtype_inert(const aitk_workload *w);

/* False when w picks layers by name and its spec names none (the LoRA is
 * then counted on every layer: an upper bound). */
bool aitk_workload_filter_applies(const aitk_workload *w);
/* "quanto", "cast" or "torchao" (models/trainers.yaml's names). */
const char *aitk_fp8_path_name(aitk_fp8_path p);
/* T5 tokens a prompt is padded to: the trainer's, else the spec's. */
long aitk_workload_text_tokens(const aitk_workload *w);
/* True when the base's GEMMs run in fp8 (an fp8 base on torchao's path). */
bool aitk_workload_fp8_compute(const aitk_workload *w);
/* The mask w's attention calls get: its trainer's or its own, but none in
 * this project's own step graph, which passes none. */
aitk_attention_mask aitk_workload_attention_mask(const aitk_workload *w);
/* True when w's attention calls run flash attention: unmasked, and not on
 * Windows' PyTorch. This project's own step graph counts as flash (its
 * fused SDPA is neither PyTorch kernel). */
bool aitk_workload_flash_attention(const aitk_workload *w);

/* The model's ai-toolkit defaults (its example config), one resolution. */
void aitk_workload_defaults(aitk_workload *w, const aitk_model_spec *spec);
/* The base weights' storage, and the text encoders' as ai-toolkit quantizes
 * them (qtype_te: qfloat8 unless set, whatever the transformer's qtype; a
 * bf16 base leaves them bf16); set after the trainer: torchao's fp8 path and
 * a trainer that keeps its encoders resident leave them bf16. */
void aitk_workload_set_base(aitk_workload *w, aitk_weight_dtype d);
/* The side of the square of a width x height sample's area, to 16 px (the
 * cost model's resolutions are square; tokens follow the area). */
long aitk_sample_resolution(long width, long height);
/* One square resolution in place of the buckets. */
void aitk_workload_set_resolution(aitk_workload *w, long resolution);

typedef struct aitk_optimizer_spec {
    const char *name;
    double bytes_per_param;
    /* Bytes per element of a factored second moment (Adafactor): one
     * statistic per row and one per column of each LoRA matrix, in place of
     * one per parameter; 0 for an optimizer that keeps none. */
    double factored_bytes;
    const char *const *aliases;
} aitk_optimizer_spec;

/* Attention's forward and backward shares of the matmul rate on GPUs of one
 * compute capability (cost.yaml efficiency.attention_by_cc). */
typedef struct aitk_attention_share {
    const char *cc; /* "8.6", as models/gpus.yaml writes it */
    double fwd, bwd;
} aitk_attention_share;

typedef struct aitk_cost_params {
    aitk_yaml_doc *doc; /* owns the strings */
    /* eff_attn_*: the defaults, for GPUs attn_by_cc does not list. */
    double eff_gemm, eff_attn_fwd, eff_attn_bwd, eff_bandwidth, step_overhead_s;
    aitk_attention_share attn_by_cc[8];
    size_t n_attn_by_cc;
    /* A masked attention call runs PyTorch's memory-efficient kernel: its
     * rate over flash attention's, forward and backward, by compute
     * capability (cost.yaml masked_attention_by_cc) and for the others
     * (masked_attention). */
    aitk_attention_share masked_by_cc[8];
    size_t n_masked_by_cc;
    double masked_fwd, masked_bwd;
    /* Per element of the converted mask (cost.yaml flop_rules.attention_mask):
     * the bytes its conversion from booleans moves; its own size, which the
     * kernel reads in each forward and each backward and autograd keeps for
     * the backward; and a boolean's, for a mask kept for the step. */
    double mask_convert_bytes, mask_bytes, mask_bool_bytes;
    /* The host's time for one kernel of an eager PyTorch step (cost.yaml
     * host_seconds_per_kernel): a step takes at least its kernels' count
     * times this. */
    double host_s_per_kernel;
    /* What memory-bound kernels reach over a device copy (eff_bandwidth):
     * eager chains of normalization/RoPE ops, and plain one-op elementwise
     * work (LoRA scaling and sums, dequantization). By kind, not by GPU. */
    double elt_chain_vs_copy, elt_plain_vs_copy;
    double attn_bwd_factor, elementwise_bwd_factor;
    /* Bytes moved to expand one quantized weight to bf16 for one pass, by
     * aitk_weight_dtype (bf16: 0); cost.yaml flop_rules. */
    double dequant_bytes_per_weight[AITK_WEIGHT_COUNT];
    /* The same for a plain fp8 cast (kohya's fp8_base), and what torchao's
     * float8 training moves per bf16 element it scales and casts to fp8. */
    double dequant_fp8_cast, fp8_compute_cast_bytes;
    /* GEMMs torchao's float8 training runs in one frozen Linear's backward
     * (it computes the weight's gradient too). */
    double fp8_compute_bwd_gemms;
    /* Kernels a frozen base Linear adds to a bf16 Linear's, forward [0] and
     * backward [1], by fp8 path and for NF4 (cost.yaml base_linear_kernels). */
    double fp8_linear_kernels[AITK_FP8_PATH_COUNT][2], nf4_linear_kernels[2];
    /* LoRA traffic per adapted Linear and token, in input-/output-width
     * activations: forward and backward (cost.yaml flop_rules). */
    double lora_fwd_in, lora_fwd_out, lora_bwd_in, lora_bwd_out;
    /* Kernels a LoRA adds to one Linear, forward and backward (cost.yaml
     * lora_kernels_*): what a job that adapts fewer Linears launches less. */
    double lora_kernels_fwd, lora_kernels_bwd;
    double weight_bytes[AITK_WEIGHT_COUNT]; /* by aitk_weight_dtype */
    double scale_bytes_per_row, activation_bytes;
    double cuda_context_gib, cublas_workspace_mib, fragmentation;
    /* What PyTorch's caching allocator cannot hand out of a card's memory,
     * besides the CUDA context (cost.yaml allocator_reserve_mib). */
    double allocator_reserve_mib;
    aitk_optimizer_spec optimizers[16];
    size_t n_optimizers;
    const char *alias_store[64];
} aitk_cost_params;

/* Loads models/cost.yaml. */
aitk_status aitk_cost_params_load(aitk_cost_params **out, aitk_str *err);
void aitk_cost_params_free(aitk_cost_params *p);
/* The attention_by_cc entry of `gpu`'s compute capability, or NULL when
 * cost.yaml lists none (the defaults then apply). */
const aitk_attention_share *aitk_cost_attention_entry(const aitk_cost_params *p,
                                                      const aitk_gpu_spec *gpu);
/* Attention's forward and backward shares of `gpu`'s matmul rate: its
 * compute capability's, else the defaults. */
void aitk_cost_attention_shares(const aitk_cost_params *p, const aitk_gpu_spec *gpu, double *fwd,
                                double *bwd);
/* A masked call's memory-efficient kernel over flash attention on `gpu`,
 * forward and backward: its compute capability's, else the defaults. */
void aitk_cost_masked_attention_ratios(const aitk_cost_params *p, const aitk_gpu_spec *gpu,
                                       double *fwd, double *bwd);
/* NULL when the optimizer is not in cost.yaml. */
const aitk_optimizer_spec *aitk_cost_find_optimizer(const aitk_cost_params *p, const char *name);

/* Work of one optimizer step at one resolution (all micro-batches). */
enum {
    AITK_WORK_GEMM_FWD,      /* base-weight GEMMs, forward */
    AITK_WORK_GEMM_RECOMPUTE,/* forward again inside checkpointed blocks */
    AITK_WORK_GEMM_BWD,      /* activation-gradient GEMMs (dX = dY W^T) */
    AITK_WORK_LORA,          /* adapter GEMMs: forward, recompute, dA, dB, dX */
    AITK_WORK_ATTN_FWD,
    AITK_WORK_ATTN_RECOMPUTE,
    AITK_WORK_ATTN_BWD,
    AITK_WORK_CONDITIONING,  /* frozen text encoders, when not cached */
    AITK_WORK_FLOP_TERMS,
};
enum {
    AITK_BYTES_ELEMENTWISE,  /* norms, modulation, activations, RoPE, residuals */
    AITK_BYTES_DEQUANT,      /* quantized weights expanded to bf16 per pass */
    AITK_BYTES_LORA,         /* thin adapter GEMMs are bandwidth-bound */
    AITK_BYTES_MASK,         /* attention masks converted and read per call */
    AITK_BYTES_TERMS,
};
enum {
    AITK_PLAN_BASE_WEIGHTS,
    AITK_PLAN_LORA_PARAMS,
    AITK_PLAN_LORA_GRADS,
    AITK_PLAN_OPTIMIZER,
    AITK_PLAN_CHECKPOINTS,
    AITK_PLAN_LIVE_BLOCK,
    AITK_PLAN_WORKSPACES,
    AITK_PLAN_TEXT_ENCODERS,
    AITK_PLAN_VAE,
    AITK_PLAN_FRAGMENTATION,
    AITK_PLAN_CUDA_CONTEXT,
    AITK_PLAN_TERMS,
};
extern const char *const aitk_work_flop_names[AITK_WORK_FLOP_TERMS];
extern const char *const aitk_work_byte_names[AITK_BYTES_TERMS];
extern const char *const aitk_plan_term_names[AITK_PLAN_TERMS];

typedef struct aitk_step_work {
    double flops[AITK_WORK_FLOP_TERMS];
    double bytes[AITK_BYTES_TERMS];
    double lora_params;
} aitk_step_work;

typedef struct aitk_memory_plan {
    double bytes[AITK_PLAN_TERMS];
    double total; /* the training step's peak: the terms' sum */
    /* The validation stage's peak (aitk_workload.validation_resolution; 0
     * without one): the weights, the LoRA and its optimizer state (its
     * gradients were set to None by zero_grad), what stays on the GPU from
     * training (resident encoders, the VAE), the encoders loaded again for
     * it, and one block's forward at the validation resolution. */
    double validation_kept, validation_text, validation_forward, validation_total;
} aitk_memory_plan;
/* The larger of the training step's and the validation stage's peaks: what
 * must fit. */
double aitk_memory_plan_peak(const aitk_memory_plan *m);

aitk_status aitk_cost_work(const aitk_workload *w, const aitk_cost_params *p, long resolution,
                           aitk_step_work *out);
aitk_status aitk_cost_memory(const aitk_workload *w, const aitk_cost_params *p, long resolution,
                             aitk_memory_plan *out, aitk_str *err);

typedef struct aitk_prediction {
    aitk_step_work work;     /* at the largest resolution */
    aitk_memory_plan memory; /* at the largest resolution */
    double t_gemm, t_attention, t_memory, t_overhead; /* largest resolution, seconds */
    /* The host's time to launch the largest resolution's step (the same at
     * every resolution), and its kernels; 0 where the model's blocks have no
     * kernel counts. The step takes the larger of it and the GPU's terms. */
    double t_host, kernels;
    /* Attention's shares of the GPU's matmul rate that t_attention used
     * (aitk_cost_attention_shares: its compute capability's, or the defaults;
     * times aitk_cost_masked_attention_ratios where the calls are masked). */
    double attn_fwd_share, attn_bwd_share;
    double step_s;           /* mean over the resolution buckets, x accumulation */
    double sample_s_per_1000; /* sampling's seconds per 1000 steps; 0 without */
    double val_loss_s;       /* the validation loss's seconds a step, in step_s */
    double vram_bytes;       /* the card's nominal size, read as GiB */
    /* The fit: what the process sees (the GPU's total_memory_gib), less the
     * CUDA context and the allocator's reserve, is usable; the job needs its
     * peak less the context (which the usable figure already left out). The
     * margin is usable - needed: >= 0 fits, < 0 misses by that much. */
    double total_memory_bytes, usable_bytes, needed_bytes, margin_bytes;
    bool fits;
} aitk_prediction;

/* The margin as a share of the usable memory, in percent (signed). */
double aitk_prediction_margin_percent(const aitk_prediction *p);
/* "fits with 3.1 GiB to spare (7.0% of usable)" or "misses by 2.4 GiB (5.2% of usable)". */
aitk_status aitk_prediction_fit_text(const aitk_prediction *p, aitk_str *out);

aitk_status aitk_cost_predict(const aitk_workload *w, const aitk_cost_params *p,
                              const aitk_gpu_spec *gpu, aitk_prediction *out, aitk_str *err);

/* Kernels one step of w launches in eager PyTorch, from its blocks' counts
 * (the model's kernels_forward and kernels_backward, or the trainer's own
 * in models/trainers.yaml); 0 when none of its blocks has one. */
double aitk_cost_kernels(const aitk_workload *w, const aitk_cost_params *p);

/* The least time one step of `w` can take on `gpu` (seconds; 0 when the
 * card lacks the figures): its tensor-core FLOPs at the card's full matmul
 * rate and its quantized weights' expansion at the datasheet bandwidth, with
 * no efficiency, no elementwise work and no host time. A reported step
 * shorter than this can hardly have run the setup `w` describes (a card may
 * boost a few percent past the median rate). Not scaled by any
 * calibration: it is the hardware's bound, not the model's estimate. */
double aitk_cost_floor_seconds(const aitk_workload *w, const aitk_cost_params *p,
                               const aitk_gpu_spec *gpu);

#endif
