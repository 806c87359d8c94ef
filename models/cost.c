/* Cost model: FLOPs, bytes, seconds and a memory plan for one training step.
 *
 * Counting rules (PaLM, Chowdhery et al. 2022, appendix B; attention as
 * FlashAttention's benchmarks count it): a Linear costs 2*in*out FLOPs per token
 * forward; with frozen base weights the backward pass computes only dX, one
 * more such GEMM; gradient checkpointing runs each checkpointed block's forward
 * again before its backward. Attention forward is 4*T^2*head_dim*heads per
 * sample; backward 2.5x. LoRA adds 2*r*(in+out) per adapted Linear and token
 * for each forward and twice that in the backward (dA, dB and dX). Time is
 * each group of work over its peak rate times an efficiency (cost.yaml). */
#include "models/cost.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>


const char *const aitk_work_flop_names[AITK_WORK_FLOP_TERMS] = {
    "base GEMMs, forward", "base GEMMs, recompute (checkpointing)",
    "base GEMMs, activation gradients", "LoRA adapters (fwd, recompute, bwd)",
    "attention, forward", "attention, recompute", "attention, backward",
    "text encoders (not cached)",
};
const char *const aitk_work_byte_names[AITK_BYTES_TERMS] = {
    "elementwise (norms, modulation, activations, RoPE)", "dequantizing quantized weights",
    "LoRA adapter traffic", "attention masks (converted, read)",
};
const char *const aitk_plan_term_names[AITK_PLAN_TERMS] = {
    "base weights", "LoRA parameters", "LoRA gradients", "optimizer state (and EMA copy)",
    "checkpointed activations", "one block live (recompute + backward)",
    "workspaces (cuBLAS, dequantized weight)", "text encoders on the GPU",
    "VAE (latents not cached)", "fragmentation allowance", "CUDA context",
};

aitk_status aitk_weight_dtype_parse(const char *text, aitk_weight_dtype *out)
{
    if (!strcmp(text, "bf16") || !strcmp(text, "none") || !strcmp(text, "bfloat16")) {
        *out = AITK_WEIGHT_BF16;
    } else if (!strcmp(text, "fp8") || !strcmp(text, "qfloat8") || !strcmp(text, "float8")) {
        *out = AITK_WEIGHT_FP8;
    } else if (!strcmp(text, "nf4")) {
        *out = AITK_WEIGHT_NF4;
    } else if (!strcmp(text, "fp32")) {
        *out = AITK_WEIGHT_FP32;
    } else {
        return AITK_E_INVAL;
    }
    return AITK_OK;
}

const char *aitk_weight_dtype_name(aitk_weight_dtype d)
{
    return d == AITK_WEIGHT_FP8 ? "fp8" : d == AITK_WEIGHT_NF4 ? "nf4" : d == AITK_WEIGHT_FP32 ? "fp32" : "bf16";
}

static const char *storage_name(aitk_weight_dtype dtype, double packed_bits, const char *qtype)
{
    return dtype == AITK_WEIGHT_NF4 && packed_bits > 0 && qtype ? qtype
                                                               : aitk_weight_dtype_name(dtype);
}

const char *aitk_workload_base_storage_name(const aitk_workload *w)
{
    return storage_name(w->base_dtype, w->base_packed_bits, w->base_qtype);
}

const char *aitk_workload_te_storage_name(const aitk_workload *w)
{
    return storage_name(w->te_dtype, w->te_packed_bits, w->te_qtype);
}

bool aitk_workload_base_qtype_inert(const aitk_workload *w)
{
    return w->base_qtype &&
           (w->base_dtype == AITK_WEIGHT_BF16 || w->base_dtype == AITK_WEIGHT_FP32);
}

/* The index of text among n names, or -1: the parsers of the enums below. */
static int name_index(const char *const *names, int n, const char *text)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(text, names[i]))
            return i;
    return -1;
}

static const char *const mask_names[AITK_MASK_COUNT] = {
    "none", "key_padding", "pairwise", "per_head", "per_head_kept",
};

aitk_status aitk_attention_mask_parse(const char *text, aitk_attention_mask *out)
{
    const int i = name_index(mask_names, AITK_MASK_COUNT, text);
    if (i < 0)
        return AITK_E_INVAL;
    *out = (aitk_attention_mask)i;
    return AITK_OK;
}

const char *aitk_attention_mask_name(aitk_attention_mask m)
{
    return (unsigned)m < AITK_MASK_COUNT ? mask_names[m] : "none";
}

static const char *const os_names[AITK_OS_COUNT] = {"linux", "windows"};

aitk_status aitk_host_os_parse(const char *text, aitk_host_os *out)
{
    const int i = name_index(os_names, AITK_OS_COUNT, text);
    if (i < 0)
        return AITK_E_INVAL;
    *out = (aitk_host_os)i;
    return AITK_OK;
}

const char *aitk_host_os_name(aitk_host_os os)
{
    return (unsigned)os < AITK_OS_COUNT ? os_names[os] : "linux";
}

void aitk_workload_defaults(aitk_workload *w, const aitk_model_spec *spec)
{
    const aitk_model_defaults *d = &spec->defaults;
    memset(w, 0, sizeof *w);
    w->spec = spec;
    w->resolutions[0] = d->resolution;
    w->n_resolutions = 1;
    w->batch = d->batch;
    w->accumulation = 1;
    w->rank = d->rank;
    w->alpha = (double)d->alpha;
    w->steps = 1000;
    /* The spec loader admits fp8, nf4 and none, and refuses anything else
     * at its place in the file: each of the three parses. */
    aitk_weight_dtype base = AITK_WEIGHT_BF16;
    (void)aitk_weight_dtype_parse(d->quantize, &base);
    aitk_workload_set_base(w, base);
    w->optimizer = d->optimizer;
    w->checkpointing = d->checkpointing;
    w->cache_latents = d->cache_latents;
    w->cache_text = d->cache_text;
    w->lora_bytes = 2; /* the examples train in bf16 */
}

void aitk_workload_set_base(aitk_workload *w, aitk_weight_dtype d)
{
    w->base_dtype = d;
    /* A packed qtype of the job is replaced too: NF4 is bitsandbytes'. */
    w->base_packed_bits = w->te_packed_bits = 0;
    w->base_qtype = w->te_qtype = NULL;
    w->te_dtype = d == AITK_WEIGHT_BF16 || d == AITK_WEIGHT_FP32 ? d : AITK_WEIGHT_FP8;
    /* torchao's float8 training converts the transformer alone, and a
     * trainer that keeps its encoders resident (diffusers) keeps them in the
     * weight dtype: neither quantizes the text encoders. */
    if ((d == AITK_WEIGHT_FP8 && w->fp8_path == AITK_FP8_TORCHAO) || w->te_resident)
        w->te_dtype = AITK_WEIGHT_BF16;
}

long aitk_sample_resolution(long width, long height)
{
    return 16 * lround(sqrt((double)width * (double)height) / 16.0);
}

void aitk_workload_set_resolution(aitk_workload *w, long resolution)
{
    w->resolutions[0] = resolution;
    w->n_resolutions = 1;
}

/* ---- which layers the LoRA adapts ---- */

static bool has_words(const char *const *words)
{
    return words && *words;
}

static bool any_in(const char *name, const char *const *words)
{
    for (; words && *words; words++)
        if (strstr(name, *words))
            return true;
    return false;
}

bool aitk_workload_filter_applies(const aitk_workload *w)
{
    if (!has_words(w->lora_only) && !has_words(w->lora_ignore))
        return true;
    for (size_t g = 0; g < w->spec->n_blocks; g++)
        if (w->spec->blocks[g].module_prefix)
            return true;
    return false;
}

/* How many of the count x repeat copies of Linear l in block group b the
 * LoRA adapts: all, unless layers are picked by name (ai-toolkit's
 * create_modules skips a module whose name contains an ignore_if_contains
 * word, or none of the only_if_contains words, when that list is given). */
static double lora_instances_in(const aitk_workload *w, const aitk_block_spec *b,
                                const aitk_linear_spec *l, double *blocks)
{
    const double all = (double)b->count * (double)l->repeat;
    if ((!has_words(w->lora_only) && !has_words(w->lora_ignore)) || !b->module_prefix ||
        l->n_modules == 0) {
        if (blocks)
            *blocks = (double)b->count;
        return all;
    }
    double n = 0, any = 0;
    char name[512];
    for (long i = 0; i < b->count; i++) {
        double here = 0;
        for (size_t j = 0; j < l->n_modules; j++) {
            snprintf(name, sizeof name, "%s.%ld.%s", b->module_prefix, i, l->modules[j]);
            if (!any_in(name, w->lora_ignore) && (!has_words(w->lora_only) ||
                                                  any_in(name, w->lora_only)))
                here++;
        }
        n += here;
        any += here > 0;
    }
    if (blocks)
        *blocks = any;
    return n;
}

static double lora_instances(const aitk_workload *w, const aitk_block_spec *b,
                             const aitk_linear_spec *l)
{
    return lora_instances_in(w, b, l, NULL);
}

/* ---- work ---- */

/* Tokens a sample has in stream s, with the trainer's text length in place
 * of the spec's where it sets one. */
static double sample_tokens(const aitk_workload *w, aitk_stream s, long res, long fixed)
{
    double t = (double)aitk_model_spec_tokens(w->spec, s, res, fixed);
    if (w->text_tokens > 0 && (s == AITK_STREAM_TXT || s == AITK_STREAM_ALL))
        t += (double)(w->text_tokens - w->spec->text_tokens);
    return t;
}

static double tokens(const aitk_workload *w, aitk_stream s, long res, long fixed)
{
    return sample_tokens(w, s, res, fixed) * (double)w->batch;
}

aitk_attention_mask aitk_workload_attention_mask(const aitk_workload *w)
{
    return w->step_graph ? AITK_MASK_NONE : w->attention_mask;
}

bool aitk_workload_flash_attention(const aitk_workload *w)
{
    return w->step_graph || (w->attention_mask == AITK_MASK_NONE && w->os != AITK_OS_WINDOWS);
}

/* Elements of the additive mask one attention call of block b converts and
 * reads (the whole batch's; aitk_attention_mask in models/cost.h). */
static double mask_elements(const aitk_workload *w, const aitk_block_spec *b, long res)
{
    if (b->heads <= 0)
        return 0;
    const double t = sample_tokens(w, b->attn_stream, res, 0), n = (double)w->batch;
    switch (aitk_workload_attention_mask(w)) {
    case AITK_MASK_KEY_PADDING:
        return n * t;
    case AITK_MASK_PAIRWISE:
        return n * t * t;
    case AITK_MASK_PER_HEAD:
    case AITK_MASK_PER_HEAD_KEPT:
        return n * (double)b->heads * t * t;
    default:
        return 0;
    }
}

/* An encoder that reads the prompt at the model's text length (T5) reads
 * it at the trainer's; CLIP keeps its own. */
static double encoder_tokens(const aitk_workload *w, const aitk_frozen_spec *f)
{
    if (w->text_tokens > 0 && f->tokens == w->spec->text_tokens)
        return (double)w->text_tokens;
    return (double)f->tokens;
}

/* Bytes one stored weight of dtype d takes: a packed format's own bits
 * (packed_bits, 0: none) in NF4's place, else cost.yaml's figure. */
static double stored_bytes(const aitk_cost_params *p, aitk_weight_dtype d, double packed_bits)
{
    return d == AITK_WEIGHT_NF4 && packed_bits > 0 ? packed_bits / 8 : p->weight_bytes[d];
}

/* Bytes moved to expand one stored weight to bf16 for one pass: an fp8
 * weight costs what the trainer's path does (torchao keeps bf16 weights;
 * its casts are counted per GEMM); a packed format in NF4's place reads its
 * own bytes where NF4 reads its own, the rest of NF4's kernel the same. */
static double dequant_bytes(const aitk_workload *w, const aitk_cost_params *p,
                            aitk_weight_dtype d, double packed_bits)
{
    if (d == AITK_WEIGHT_NF4)
        return p->dequant_bytes_per_weight[d] - p->weight_bytes[d] +
               stored_bytes(p, d, packed_bits);
    if (d != AITK_WEIGHT_FP8)
        return p->dequant_bytes_per_weight[d];
    if (w->fp8_path == AITK_FP8_CAST)
        return p->dequant_fp8_cast;
    return w->fp8_path == AITK_FP8_TORCHAO ? 0 : p->dequant_bytes_per_weight[d];
}

const char *aitk_fp8_path_name(aitk_fp8_path p)
{
    return p == AITK_FP8_CAST ? "cast" : p == AITK_FP8_TORCHAO ? "torchao" : "quanto";
}

long aitk_workload_text_tokens(const aitk_workload *w)
{
    return w->text_tokens > 0 ? w->text_tokens : w->spec->text_tokens;
}

bool aitk_workload_fp8_compute(const aitk_workload *w)
{
    return w->base_dtype == AITK_WEIGHT_FP8 && w->fp8_path == AITK_FP8_TORCHAO;
}

aitk_status aitk_cost_work(const aitk_workload *w, const aitk_cost_params *p, long resolution,
                           aitk_step_work *out)
{
    memset(out, 0, sizeof *out);
    const aitk_model_spec *s = w->spec;
    const double r = (double)w->rank, act = p->activation_bytes;
    const double dequant = dequant_bytes(w, p, w->base_dtype, w->base_packed_bits);
    const bool f8compute = aitk_workload_fp8_compute(w);
    const double f8cast = f8compute ? p->fp8_compute_cast_bytes : 0;
    for (size_t g = 0; g < s->n_blocks; g++) {
        const aitk_block_spec *b = &s->blocks[g];
        const double n = (double)b->count;
        const bool backward = b->backward && !w->forward_only;
        const bool recompute = backward && w->checkpointing && b->checkpointed;
        const double fwd_passes = recompute ? 2 : 1;
        for (size_t i = 0; i < b->n_linears; i++) {
            const aitk_linear_spec *l = &b->linears[i];
            const double t = tokens(w, l->stream, resolution, l->fixed_tokens);
            const double k = n * (double)l->repeat, in = (double)l->in, o = (double)l->out;
            const double f = 2 * in * o * t * k;
            out->flops[AITK_WORK_GEMM_FWD] += f;
            if (recompute)
                out->flops[AITK_WORK_GEMM_RECOMPUTE] += f;
            /* torchao's backward computes the frozen weight's gradient too. */
            if (backward)
                out->flops[AITK_WORK_GEMM_BWD] += f * (f8compute ? p->fp8_compute_bwd_gemms : 1);
            /* The weight is expanded once per pass that uses it. */
            out->bytes[AITK_BYTES_DEQUANT] += dequant * in * o * n * (double)l->repeat *
                                              (fwd_passes + (backward ? 1 : 0));
            /* torchao scales and casts each fp8 GEMM's operands: the weight
             * and the input forward; dY twice (for dX and dW) and the input
             * backward, where the weight's fp8 copy is the forward's. */
            out->bytes[AITK_BYTES_DEQUANT] +=
                f8cast * k * ((in * o + in * t) * fwd_passes + (backward ? 2 * o * t + in * t : 0));
            const double kl = l->lora ? lora_instances(w, b, l) : 0;
            if (kl > 0 && w->rank > 0 && !w->forward_only) {
                const double lf = 2 * r * (in + o) * t * kl;
                out->flops[AITK_WORK_LORA] += lf * fwd_passes + (backward ? 2 * lf : 0);
                out->lora_params += r * (in + o) * kl;
                /* The module's own elementwise work (cost.yaml flop_rules). */
                out->bytes[AITK_BYTES_LORA] +=
                    act * t * kl *
                    ((p->lora_fwd_in * in + p->lora_fwd_out * o) * fwd_passes +
                     (backward ? p->lora_bwd_in * in + p->lora_bwd_out * o : 0));
            }
        }
        if (b->heads > 0) {
            const double t = sample_tokens(w, b->attn_stream, resolution, 0);
            const double f = 4 * t * t * (double)b->head_dim * (double)b->heads *
                             (double)w->batch * n;
            out->flops[AITK_WORK_ATTN_FWD] += f;
            if (recompute)
                out->flops[AITK_WORK_ATTN_RECOMPUTE] += f;
            if (backward)
                out->flops[AITK_WORK_ATTN_BWD] += p->attn_bwd_factor * f;
            /* Each masked call converts its mask and the kernel reads it;
             * the backward reads it again. */
            const double me = mask_elements(w, b, resolution) * n;
            out->bytes[AITK_BYTES_MASK] +=
                me * ((p->mask_convert_bytes + p->mask_bytes) * fwd_passes +
                      (backward ? p->mask_bytes : 0));
        }
        const double eb = b->elementwise_per_token * (double)s->hidden * act *
                          tokens(w, b->input, resolution, 0) * n;
        const double bwd = w->elementwise_bwd_factor > 0 ? w->elementwise_bwd_factor
                                                          : p->elementwise_bwd_factor;
        out->bytes[AITK_BYTES_ELEMENTWISE] += eb * fwd_passes + (backward ? bwd * eb : 0);
    }
    /* Text encoders run forward once per micro-batch; quantized ones (text
     * "fp8": ai-toolkit quantizes T5 with the transformer) expand each weight
     * for that one pass, whatever the batch. Every encoder is taken at the
     * workload's text dtype, as in the memory plan (CLIP-L, 123 M weights,
     * stays bf16 in ai-toolkit: 0.9 GB a step counted too many). */
    if (!w->cache_text && !w->forward_only)
        for (size_t i = 0; i < s->n_frozen; i++)
            if (s->frozen[i].role == AITK_FROZEN_TEXT_ENCODER) {
                out->flops[AITK_WORK_CONDITIONING] +=
                    2 * s->frozen[i].params * encoder_tokens(w, &s->frozen[i]) * (double)w->batch;
                out->bytes[AITK_BYTES_DEQUANT] +=
                    dequant_bytes(w, p, w->te_dtype, w->te_packed_bits) * s->frozen[i].params;
            }
    for (int i = 0; i < AITK_WORK_FLOP_TERMS; i++)
        out->flops[i] *= (double)w->accumulation;
    /* Every micro-batch runs its own passes, dequantizing included. */
    for (int i = 0; i < AITK_BYTES_TERMS; i++)
        out->bytes[i] *= (double)w->accumulation;
    return AITK_OK;
}

/* ---- memory ---- */

/* Activations one block saves for its backward: every Linear's input and
 * output, and attention's q, k, v, output and log-sum-exp (flash attention:
 * no T^2 term). For a GPT layer this counts about 40*s*b*h bytes where
 * Korthikanti et al. count 34 (a Linear's output that is the next op's input
 * is counted twice here): on the safe side by ~15% for the one live block. */
static double block_live_bytes(const aitk_workload *w, const aitk_cost_params *p,
                               const aitk_block_spec *b, long res)
{
    double bytes = 0;
    for (size_t i = 0; i < b->n_linears; i++) {
        const aitk_linear_spec *l = &b->linears[i];
        bytes += p->activation_bytes * tokens(w, l->stream, res, l->fixed_tokens) *
                 (double)l->repeat * (double)(l->in + l->out);
    }
    if (b->heads > 0) {
        const double t = tokens(w, b->attn_stream, res, 0);
        const double hd = (double)b->head_dim;
        const double heads = (double)b->heads, kv = (double)b->kv_heads;
        bytes += p->activation_bytes * t * hd * (2.0 * heads + 2.0 * kv);
        bytes += 4.0 * t * (double)b->heads; /* fp32 log-sum-exp */
    }
    return bytes;
}

/* The hidden states that enter a block: what a checkpoint keeps of it. */
static double block_input_bytes(const aitk_workload *w, const aitk_cost_params *p,
                                const aitk_block_spec *b, long res)
{
    return p->activation_bytes * (double)w->spec->hidden * tokens(w, b->input, res, 0);
}

/* Whether what a block saves is the estimate above rather than an op-by-op
 * count: it has none, or it is the project's own step graph. */
static bool saved_is_estimated(const aitk_workload *w, const aitk_block_spec *b)
{
    return !(b->saved_per_token > 0) || w->step_graph;
}

/* Activations one block keeps for its backward in training: the block's
 * op-by-op count (saved_per_token, or saved_per_token_autocast under
 * autocast: models/<model>.yaml) when it has one, with
 * attention's fp32 log-sum-exp and each adapted Linear's low-rank output
 * (LoRA's up projection saves it: rank values a token); else, and for the
 * project's own step graph, the estimate above. */
static double block_saved_bytes(const aitk_workload *w, const aitk_cost_params *p,
                                const aitk_block_spec *b, long res)
{
    /* A masked call's converted mask is kept for its backward too. */
    const double mask = p->mask_bytes * mask_elements(w, b, res);
    if (saved_is_estimated(w, b))
        return block_live_bytes(w, p, b, res) + mask;
    const double act = p->activation_bytes;
    double plain = b->saved_per_token, autocast = b->saved_per_token_autocast;
    /* The trainer's own block code, where it keeps another count. */
    const ptrdiff_t g = b - w->spec->blocks;
    if (g >= 0 && g < AITK_WORKLOAD_MAX_GROUPS && w->saved_per_token[g] > 0) {
        plain = w->saved_per_token[g];
        autocast = w->saved_per_token_autocast[g];
    }
    const double saved = w->autocast && autocast > 0 ? autocast : plain;
    double bytes = saved * block_input_bytes(w, p, b, res);
    if (b->heads > 0)
        bytes += 4.0 * tokens(w, b->attn_stream, res, 0) * (double)b->heads;
    /* The adapters a block has on average (a name filter may leave some
     * blocks without). The count above was measured with a LoRA on every
     * Linear: a Linear left unadapted keeps less (lora_saves). Plain, the
     * copies of a repeated Linear (q, k and v) share one kept input, which
     * goes with the last of them: it counts by blocks with none adapted.
     * Under autocast each copy keeps its own cast: it counts by copies. */
    for (size_t i = 0; b->count > 0 && i < b->n_linears; i++) {
        const aitk_linear_spec *l = &b->linears[i];
        double blocks = 0;
        const double n = l->lora && w->rank > 0 ? lora_instances_in(w, b, l, &blocks) : 0.0;
        const double t = tokens(w, l->stream, res, l->fixed_tokens);
        bytes += act * (double)w->rank * n / (double)b->count * t;
        const bool cast = w->autocast && l->lora_saves_autocast > 0;
        const double unadapted = cast ? 1.0 - n / ((double)b->count * (double)l->repeat)
                                      : 1.0 - blocks / (double)b->count;
        bytes -= act * (cast ? l->lora_saves_autocast : l->lora_saves) * unadapted *
                 (double)w->spec->hidden * tokens(w, l->saves_stream, res, l->saves_fixed_tokens);
    }
    return fmax(bytes, 0.0) + mask;
}

/* What a block's own backward holds at its peak beyond its saved
 * activations: the incoming gradient and the gradients in flight
 * (backward_extra_per_token, measured with PyTorch's allocator events;
 * 0 where the spec has no figure). */
static double block_backward_extra_bytes(const aitk_workload *w, const aitk_cost_params *p,
                                         const aitk_block_spec *b, long res)
{
    if (w->step_graph)
        return 0;
    return p->activation_bytes * b->backward_extra_per_token * (double)w->spec->hidden *
           tokens(w, b->input, res, 0);
}

/* Weights a block's backward keeps dequantized: ai-toolkit's packed
 * qtypes (OstrisLinear, toolkit/util/uintx_quant.py @27a03a9) expand the
 * weight outside autograd and call F.linear on the copy, and F.linear keeps
 * its weight for the gradient of its input, so each Linear whose input
 * takes a gradient holds a bf16 copy until the block's backward (PyTorch
 * 2.15: the saved tensor is the dequantized weight itself). A modulation
 * Linear reads the conditioning, which takes none. bitsandbytes' NF4 and
 * quanto keep their packed weight instead: nothing more. */
static double block_kept_weight_bytes(const aitk_workload *w, const aitk_cost_params *p,
                                      const aitk_block_spec *b)
{
    if (!(w->base_dtype == AITK_WEIGHT_NF4 && w->base_packed_bits > 0))
        return 0;
    double params = 0;
    for (size_t i = 0; i < b->n_linears; i++) {
        const aitk_linear_spec *l = &b->linears[i];
        if (l->stream != AITK_STREAM_COND)
            params += (double)l->repeat * (double)l->in * (double)l->out;
    }
    return params * p->weight_bytes[AITK_WEIGHT_BF16];
}

/* The validation stage's peak (aitk_memory_plan): what stays from training,
 * the encoders loaded again, and one block's forward of a batch-1 generation
 * at the validation resolution, with the same fragmentation allowance. The
 * VAE decodes there too: a model whose latents were cached keeps it loaded
 * for that (diffusers deletes it only when no validation prompt is given). */
static void validation_stage(const aitk_workload *w, const aitk_cost_params *p,
                             aitk_memory_plan *out)
{
    const aitk_model_spec *s = w->spec;
    const double *m = out->bytes;
    double vae = 0;
    for (size_t i = 0; i < s->n_frozen; i++) {
        const aitk_frozen_spec *f = &s->frozen[i];
        if (f->role == AITK_FROZEN_TEXT_ENCODER)
            out->validation_text += f->params * p->weight_bytes[w->validation_te_dtype];
        else if (f->role == AITK_FROZEN_VAE && m[AITK_PLAN_VAE] == 0)
            vae += f->params * p->weight_bytes[AITK_WEIGHT_BF16];
    }
    aitk_workload gen = *w;
    gen.batch = 1;
    gen.forward_only = true;
    double live = 0;
    for (size_t g = 0; g < s->n_blocks; g++)
        live = fmax(live, block_live_bytes(&gen, p, &s->blocks[g], w->validation_resolution));
    out->validation_forward = live + vae;
    out->validation_kept = m[AITK_PLAN_BASE_WEIGHTS] + m[AITK_PLAN_LORA_PARAMS] +
                           m[AITK_PLAN_OPTIMIZER] + m[AITK_PLAN_WORKSPACES] +
                           m[AITK_PLAN_TEXT_ENCODERS] + m[AITK_PLAN_VAE];
    const double managed = out->validation_kept + out->validation_text + out->validation_forward;
    out->validation_total = managed * (1.0 + p->fragmentation) + m[AITK_PLAN_CUDA_CONTEXT];
}

double aitk_memory_plan_peak(const aitk_memory_plan *m)
{
    return fmax(m->total, m->validation_total);
}

static aitk_status memory_plan(const aitk_workload *w, const aitk_cost_params *p,
                               long resolution, aitk_memory_plan *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    const aitk_model_spec *s = w->spec;
    const aitk_optimizer_spec *opt = aitk_cost_find_optimizer(p, w->optimizer);
    if (!opt) {
        aitk_str_appendf(err, "unknown optimizer '%s' (known:", w->optimizer);
        for (size_t i = 0; i < p->n_optimizers; i++)
            aitk_str_appendf(err, " %s", p->optimizers[i].name);
        aitk_str_append(err, ")");
        return AITK_E_NOTFOUND;
    }
    double *m = out->bytes, lora = 0, factored = 0, largest_weight = 0, live = 0;
    /* torchao's fp8 training keeps the weights in bf16. */
    const bool f8compute = aitk_workload_fp8_compute(w);
    const double wbytes = f8compute ? p->weight_bytes[AITK_WEIGHT_BF16]
                                    : stored_bytes(p, w->base_dtype, w->base_packed_bits);
    const bool quant = (w->base_dtype == AITK_WEIGHT_FP8 && !f8compute) ||
                       w->base_dtype == AITK_WEIGHT_NF4;
    /* NF4's block statistics are in its bytes per weight; quanto's fp8 has
     * row scales, a plain cast none. */
    const double row_scale = w->base_dtype == AITK_WEIGHT_FP8 && w->fp8_path == AITK_FP8_QUANTO
                                 ? p->scale_bytes_per_row
                                 : 0;
    for (size_t g = 0; g < s->n_blocks; g++) {
        const aitk_block_spec *b = &s->blocks[g];
        const double n = (double)b->count;
        m[AITK_PLAN_BASE_WEIGHTS] += n * (double)b->norm_params * p->weight_bytes[AITK_WEIGHT_BF16];
        for (size_t i = 0; i < b->n_linears; i++) {
            const aitk_linear_spec *l = &b->linears[i];
            const double k = n * (double)l->repeat, in = (double)l->in, o = (double)l->out;
            const double scales = o * row_scale;
            const double bias = l->bias ? o * p->weight_bytes[AITK_WEIGHT_BF16] : 0;
            m[AITK_PLAN_BASE_WEIGHTS] += k * (in * o * wbytes + scales + bias);
            if (in * o > largest_weight)
                largest_weight = in * o;
            if (l->lora && w->rank > 0) {
                const double r = (double)w->rank, inst = lora_instances(w, b, l);
                lora += r * (in + o) * inst;
                /* down (r x in) and up (o x r): a row and a column statistic each */
                factored += (r + in + o + r) * inst;
            }
        }
        if (w->forward_only) {
            /* Nothing is kept for a backward pass. */
            live = fmax(live, block_live_bytes(w, p, b, resolution));
        } else if (w->checkpointing && b->checkpointed) {
            /* One block at a time is run again, keeps what it saves and
             * runs its backward. */
            m[AITK_PLAN_CHECKPOINTS] += n * block_input_bytes(w, p, b, resolution);
            live = fmax(live, block_saved_bytes(w, p, b, resolution) +
                                  block_backward_extra_bytes(w, p, b, resolution) +
                                  block_kept_weight_bytes(w, p, b));
        } else if (b->backward) {
            /* Without checkpointing every block keeps all it saved, and the
             * backward of one of them holds its gradients on top. The
             * estimate (no op-by-op count) has every Linear's input but not
             * the block's own, which its first norm keeps for its backward. */
            m[AITK_PLAN_CHECKPOINTS] +=
                n * (block_saved_bytes(w, p, b, resolution) + block_kept_weight_bytes(w, p, b) +
                     (saved_is_estimated(w, b) ? block_input_bytes(w, p, b, resolution) : 0));
            live = fmax(live, block_backward_extra_bytes(w, p, b, resolution));
        }
    }
    m[AITK_PLAN_LORA_PARAMS] = lora * w->lora_bytes;
    m[AITK_PLAN_LORA_GRADS] = lora * w->lora_bytes;
    m[AITK_PLAN_OPTIMIZER] = lora * (opt->bytes_per_param + (w->ema ? w->lora_bytes : 0)) +
                             factored * opt->factored_bytes;
    /* A boolean mask made once for the step (ai-toolkit's Chroma) stays
     * beside whichever block runs. Its making passes through float and
     * int32 copies of that size, at the forward's start, before any block
     * has saved anything: not the step's peak, and not counted. */
    double kept = 0;
    if (aitk_workload_attention_mask(w) == AITK_MASK_PER_HEAD_KEPT)
        for (size_t g = 0; g < s->n_blocks; g++)
            kept = fmax(kept, p->mask_bool_bytes * mask_elements(w, &s->blocks[g], resolution));
    m[AITK_PLAN_LIVE_BLOCK] = live + kept;
    /* A quantized weight is expanded to bf16 for its GEMM; allow two at once
     * (the one in use and the next). */
    m[AITK_PLAN_WORKSPACES] = p->cublas_workspace_mib * 1048576.0 +
                             (quant ? 2 * largest_weight * p->weight_bytes[AITK_WEIGHT_BF16] : 0);
    for (size_t i = 0; i < s->n_frozen; i++) {
        const aitk_frozen_spec *f = &s->frozen[i];
        if (f->role == AITK_FROZEN_TEXT_ENCODER && (!w->cache_text || w->te_resident))
            m[AITK_PLAN_TEXT_ENCODERS] +=
                f->params * stored_bytes(p, w->te_dtype, w->te_packed_bits);
        else if (f->role == AITK_FROZEN_VAE && !w->cache_latents)
            m[AITK_PLAN_VAE] += f->params * p->weight_bytes[AITK_WEIGHT_BF16];
    }
    double managed = 0;
    for (int i = 0; i < AITK_PLAN_FRAGMENTATION; i++)
        managed += m[i];
    m[AITK_PLAN_FRAGMENTATION] = managed * p->fragmentation;
    m[AITK_PLAN_CUDA_CONTEXT] = p->cuda_context_gib * 1073741824.0;
    out->total = managed + m[AITK_PLAN_FRAGMENTATION] + m[AITK_PLAN_CUDA_CONTEXT];
    if (w->validation_resolution > 0 && !w->forward_only)
        validation_stage(w, p, out);
    return AITK_OK;
}

/* ---- time ---- */

/* Kernels one frozen base Linear adds to a bf16 Linear's, forward [0] and
 * backward [1], by how the job's trainer holds its weight. */
static const double *base_linear_kernels(const aitk_workload *w, const aitk_cost_params *p)
{
    static const double none[2] = {0, 0};
    if (w->base_dtype == AITK_WEIGHT_FP8)
        return p->fp8_linear_kernels[w->fp8_path];
    return w->base_dtype == AITK_WEIGHT_NF4 ? p->nf4_linear_kernels : none;
}

/* Kernels one step launches, by the blocks' counts (spec, or the trainer's
 * for its own code and LoRA): each checkpointed block's forward twice, its
 * backward once, every micro-batch of the step. A LoRA the job leaves off a
 * Linear takes its kernels off the spec's count, which has one on every
 * Linear; a forward-only pass has none. A quantized or fp8-computed base
 * adds its path's kernels to every Linear of the block (the counts are of
 * bf16 Linears). 0 when no block was counted. Blocks without a count (the
 * embedders, about 0.5% of FLUX.1-dev's step) add none. */
double aitk_cost_kernels(const aitk_workload *w, const aitk_cost_params *p)
{
    const aitk_model_spec *s = w->spec;
    const double *base = base_linear_kernels(w, p);
    double total = 0;
    for (size_t g = 0; g < s->n_blocks; g++) {
        const aitk_block_spec *b = &s->blocks[g];
        const bool own = g < AITK_WORKLOAD_MAX_GROUPS && w->kernels[g][0] > 0;
        const double *k = own ? w->kernels[g] : NULL;
        double fwd = own ? k[w->autocast ? 2 : 0]
                         : w->autocast ? b->kernels_forward_autocast : b->kernels_forward;
        double bwd = own ? k[w->autocast ? 3 : 1]
                         : w->autocast ? b->kernels_backward_autocast : b->kernels_backward;
        if (!(fwd > 0))
            continue;
        /* Linears of one block the spec's count adapts and the job leaves
         * bare (its trainer's own count already has its layers). */
        double bare = 0;
        for (size_t i = 0; !own && i < b->n_linears; i++) {
            const aitk_linear_spec *l = &b->linears[i];
            if (l->lora)
                bare += (double)b->count * (double)l->repeat -
                        (w->rank > 0 && !w->forward_only ? lora_instances(w, b, l) : 0);
        }
        bare /= (double)b->count;
        fwd -= bare * p->lora_kernels_fwd;
        bwd -= bare * p->lora_kernels_bwd;
        double linears = 0;
        for (size_t i = 0; i < b->n_linears; i++)
            linears += (double)b->linears[i].repeat;
        if (own && k[4] > 0)
            linears = k[4]; /* the trainer's block code has its own Linears */
        fwd += linears * base[0];
        bwd += linears * base[1];
        const bool backward = b->backward && !w->forward_only;
        const bool recompute = backward && w->checkpointing && b->checkpointed;
        total += (double)b->count * (fwd * (recompute ? 2 : 1) + (backward ? bwd : 0));
    }
    return total * (double)w->accumulation;
}

/* Attention's shares of g's matmul rate for w: flash attention's, or where
 * w's calls are masked or run on Windows' PyTorch, the memory-efficient
 * kernel's that they take. */
static void attention_shares(const aitk_workload *w, const aitk_cost_params *p,
                             const aitk_gpu_spec *g, double *fwd, double *bwd)
{
    aitk_cost_attention_shares(p, g, fwd, bwd);
    if (!aitk_workload_flash_attention(w)) {
        double mf, mb;
        aitk_cost_masked_attention_ratios(p, g, &mf, &mb);
        *fwd *= mf;
        *bwd *= mb;
    }
}

static void step_seconds(const aitk_workload *w, const aitk_step_work *wk,
                         const aitk_cost_params *p, const aitk_gpu_spec *g, double t[4])
{
    /* Tensor-core work runs at the GPU's own matmul rate (measured, or a
     * share of the datasheet: models/gpudb.c), memory work at its bandwidth.
     * torchao's fp8 GEMMs run at that rate times the datasheet's fp8 over
     * bf16 (a GPU without fp8 tensor cores keeps bf16's). */
    const double peak = aitk_gpu_matmul_tflops(g, w->fp16) * 1e12, bw = g->bandwidth_gbs * 1e9;
    const double fp8 = aitk_workload_fp8_compute(w) && g->fp8_tflops > 0 && g->bf16_tflops > 0
                           ? g->fp8_tflops / g->bf16_tflops
                           : 1;
    const double base = wk->flops[AITK_WORK_GEMM_FWD] + wk->flops[AITK_WORK_GEMM_RECOMPUTE] +
                        wk->flops[AITK_WORK_GEMM_BWD];
    const double other = wk->flops[AITK_WORK_LORA] + wk->flops[AITK_WORK_CONDITIONING];
    double attn_fwd, attn_bwd;
    attention_shares(w, p, g, &attn_fwd, &attn_bwd);
    t[0] = (base / fp8 + other) / (peak * p->eff_gemm);
    t[1] = (wk->flops[AITK_WORK_ATTN_FWD] + wk->flops[AITK_WORK_ATTN_RECOMPUTE]) /
               (peak * attn_fwd) +
           wk->flops[AITK_WORK_ATTN_BWD] / (peak * attn_bwd);
    /* Memory-bound work at a copy's rate, scaled by how near each kind of
     * kernel comes to a copy (models/cost.yaml). A new byte term must be
     * given its kind here. */
    _Static_assert(AITK_BYTES_TERMS == 4, "each byte term needs a kernel kind");
    const double copy = bw * p->eff_bandwidth;
    t[2] = wk->bytes[AITK_BYTES_ELEMENTWISE] / (copy * p->elt_chain_vs_copy) +
           (wk->bytes[AITK_BYTES_DEQUANT] + wk->bytes[AITK_BYTES_LORA] +
            wk->bytes[AITK_BYTES_MASK]) /
               (copy * p->elt_plain_vs_copy);
    t[3] = p->step_overhead_s;
}

/* Seconds of one step at each resolution bucket, mean over the buckets; the
 * largest bucket's work and terms go to out. */
static double bucket_seconds(const aitk_workload *w, const aitk_cost_params *p,
                             const aitk_gpu_spec *gpu, aitk_prediction *out)
{
    long largest = 0;
    double sum = 0;
    const double kernels = aitk_cost_kernels(w, p);
    for (size_t i = 0; i < w->n_resolutions; i++) {
        const long res = w->resolutions[i];
        aitk_step_work wk;
        double t[4];
        aitk_cost_work(w, p, res, &wk);
        step_seconds(w, &wk, p, gpu, t);
        /* The GPU runs what the host launches as it comes: the step takes
         * the longer of the two. aitk's own step is no Python loop. */
        const double gpu_s = t[0] + t[1] + t[2];
        const double host = w->step_graph ? 0 : kernels * p->host_s_per_kernel;
        sum += (host > gpu_s ? host : gpu_s) + t[3] * (double)w->accumulation;
        if (out && res > largest) {
            largest = res;
            out->work = wk;
            out->t_gemm = t[0];
            out->t_attention = t[1];
            out->t_memory = t[2];
            out->t_overhead = t[3] * (double)w->accumulation;
            out->t_host = host;
            out->kernels = w->step_graph ? 0 : kernels;
        }
    }
    return sum / (double)w->n_resolutions;
}

/* The floor of one step: what the work alone needs at the card's full rates.
 * Tensor-core FLOPs (base, LoRA, attention, text encoders) at the faster of
 * the measured matmul rate and the datasheet's, fp16's where the job computes
 * in fp16 on a card whose fp16 rate differs (fp8 GEMMs at the datasheet's
 * fp8 over bf16), plus the bytes that expand quantized weights at the
 * datasheet bandwidth: no efficiency below 1, no elementwise work, no host.
 * Eager kernels run one after another, so the two add. */
static double floor_seconds(const aitk_workload *w, const aitk_step_work *wk,
                            const aitk_gpu_spec *g)
{
    const double measured = aitk_gpu_matmul_tflops(g, w->fp16);
    const double datasheet = aitk_gpu_datasheet_tflops(g, w->fp16);
    const double rate = (measured > datasheet ? measured : datasheet) * 1e12;
    const double fp8 = aitk_workload_fp8_compute(w) && g->fp8_tflops > 0 && g->bf16_tflops > 0
                           ? g->fp8_tflops / g->bf16_tflops
                           : 1;
    const double base = wk->flops[AITK_WORK_GEMM_FWD] + wk->flops[AITK_WORK_GEMM_RECOMPUTE] +
                        wk->flops[AITK_WORK_GEMM_BWD];
    double rest = 0;
    for (int i = 0; i < AITK_WORK_FLOP_TERMS; i++)
        rest += wk->flops[i];
    rest -= base;
    return (base / fp8 + rest) / rate + wk->bytes[AITK_BYTES_DEQUANT] / (g->bandwidth_gbs * 1e9);
}

double aitk_cost_floor_seconds(const aitk_workload *w, const aitk_cost_params *p,
                               const aitk_gpu_spec *gpu)
{
    if (w->n_resolutions == 0 || gpu->bandwidth_gbs <= 0 ||
        (gpu->matmul_bf16_tflops <= 0 && gpu->bf16_tflops <= 0))
        return 0;
    aitk_workload x = *w;
    if (w->preservation)
        x.batch *= 2; /* as predict(); the prior's extra forward is left out */
    double sum = 0;
    for (size_t i = 0; i < x.n_resolutions; i++) {
        aitk_step_work wk;
        if (aitk_cost_work(&x, p, x.resolutions[i], &wk))
            return 0;
        sum += floor_seconds(&x, &wk, gpu);
    }
    return sum / (double)x.n_resolutions;
}

/* One forward pass of the transformer alone, no grad, batch 1 by default. */
static double forward_seconds(const aitk_workload *w, const aitk_cost_params *p,
                              const aitk_gpu_spec *gpu, long resolution, long batch)
{
    aitk_workload f = *w;
    f.forward_only = true;
    f.cache_text = true; /* the prompts are encoded once, not per pass */
    f.accumulation = 1;
    f.batch = batch;
    f.preservation = false;
    f.resolutions[0] = resolution;
    f.n_resolutions = 1;
    return bucket_seconds(&f, p, gpu, NULL);
}

/* Judges the memory plan against what a process can allocate on the card:
 * its total memory as PyTorch reports it (a spec without the figure, as a
 * test may build one, falls back to the nominal size), less the CUDA
 * context and the allocator's reserve. The plan's own context term is taken
 * out of what is needed, so the context is counted once. */
static void fit(const aitk_gpu_spec *gpu, const aitk_cost_params *p, aitk_prediction *out)
{
    const double gib = 1073741824.0;
    const double total = gpu->total_memory_gib > 0 ? gpu->total_memory_gib : gpu->vram_gb;
    out->vram_bytes = gpu->vram_gb * gib;
    out->total_memory_bytes = total * gib;
    out->usable_bytes = out->total_memory_bytes - p->cuda_context_gib * gib -
                        p->allocator_reserve_mib * 1048576.0;
    out->needed_bytes = aitk_memory_plan_peak(&out->memory) -
                        out->memory.bytes[AITK_PLAN_CUDA_CONTEXT];
    out->margin_bytes = out->usable_bytes - out->needed_bytes;
    out->fits = out->margin_bytes >= 0;
}

double aitk_prediction_margin_percent(const aitk_prediction *p)
{
    return p->usable_bytes > 0 ? 100.0 * p->margin_bytes / p->usable_bytes : 0;
}

aitk_status aitk_prediction_fit_text(const aitk_prediction *p, aitk_str *out)
{
    const double gib = fabs(p->margin_bytes) / 1073741824.0;
    const double pct = fabs(aitk_prediction_margin_percent(p));
    if (p->fits)
        aitk_str_appendf(out, "fits with %.1f GiB to spare (%.1f%% of usable)", gib, pct);
    else
        aitk_str_appendf(out, "misses by %.1f GiB (%.1f%% of usable)", gib, pct);
    return aitk_str_status(out);
}

static aitk_status predict(const aitk_workload *w, const aitk_cost_params *p,
                           const aitk_gpu_spec *gpu, aitk_prediction *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    if (w->n_resolutions == 0 || w->batch < 1 || w->accumulation < 1 || w->rank < 0) {
        aitk_str_append(err, "a workload needs a resolution, batch >= 1, accumulation >= 1 "
                             "and rank >= 0");
        return AITK_E_INVAL;
    }
    const long patch_px = w->spec->vae_downsample * w->spec->patch;
    long largest = 0;
    for (size_t i = 0; i < w->n_resolutions; i++) {
        if (w->resolutions[i] < patch_px) {
            aitk_str_appendf(err, "resolution %ld is below one latent patch (%ld px)",
                             w->resolutions[i], patch_px);
            return AITK_E_RANGE;
        }
        largest = w->resolutions[i] > largest ? w->resolutions[i] : largest;
    }
    /* The preservation prediction runs with grad over the same latents and
     * its loss joins the step's one backward: as a doubled batch, plus the
     * prior prediction without grad. */
    aitk_workload x = *w;
    if (w->preservation)
        x.batch *= 2;
    out->step_s = bucket_seconds(&x, p, gpu, out);
    attention_shares(w, p, gpu, &out->attn_fwd_share, &out->attn_bwd_share);
    for (size_t i = 0; w->preservation && i < w->n_resolutions; i++)
        out->step_s += forward_seconds(w, p, gpu, w->resolutions[i], w->batch) *
                       (double)w->accumulation / (double)w->n_resolutions;
    for (size_t i = 0; w->sample_every > 0 && i < w->n_sample_groups; i++) {
        const aitk_sample_group *g = &w->sample_groups[i];
        if (g->resolution >= patch_px)
            out->sample_s_per_1000 += 1000.0 / (double)w->sample_every * (double)g->images *
                                      (double)g->steps * (double)w->sample_passes *
                                      forward_seconds(w, p, gpu, g->resolution, 1);
    }
    /* validate() predicts each item as one batch of its sigmas, no grad. */
    if (!w->forward_only && w->val_loss_every > 0 && w->val_loss_items > 0 &&
        w->val_loss_resolution >= patch_px) {
        out->val_loss_s = (double)w->val_loss_items *
                          forward_seconds(w, p, gpu, w->val_loss_resolution, w->val_loss_sigmas) /
                          (double)w->val_loss_every;
        out->step_s += out->val_loss_s;
    }
    aitk_status st = aitk_cost_memory(&x, p, largest, &out->memory, err);
    if (st)
        return st;
    fit(gpu, p, out);
    return AITK_OK;
}

aitk_status aitk_cost_memory(const aitk_workload *w, const aitk_cost_params *p, long resolution,
                             aitk_memory_plan *out, aitk_str *err)
{
    /* err may be NULL: messages then go to a scratch string. */
    aitk_str scratch = AITK_STR_INIT;
    aitk_status st = memory_plan(w, p, resolution, out, err ? err : &scratch);
    aitk_str_free(&scratch);
    return st;
}

aitk_status aitk_cost_predict(const aitk_workload *w, const aitk_cost_params *p,
                              const aitk_gpu_spec *gpu, aitk_prediction *out, aitk_str *err)
{
    /* err may be NULL: messages then go to a scratch string. */
    aitk_str scratch = AITK_STR_INIT;
    aitk_status st = predict(w, p, gpu, out, err ? err : &scratch);
    aitk_str_free(&scratch);
    return st;
}
