/* Internals shared by the step graph's files (step.c: tensor table, arenas,
 * PRNG, linears, optimizer; step_flux.c: FLUX.1-dev and Chroma;
 * step_omnigen2.c: OmniGen2). Not part of the public API (models/step.h).
 *
 * Building a model is two-phase, so every byte is known before anything is
 * allocated: the architecture first declares its tensors and linears (only
 * indices and sizes), step.c then allocates one arena per kind (base weights,
 * LoRA weights, their gradients, optimizer state, inputs) and binds pointers,
 * and the architecture allocates its activation buffers.
 *
 * Types follow kernels/ops.h: activations, their gradients, the base
 * weights (and the dequantized scratch), biases, norm weights and the
 * cached inputs are aitk_act, in the backend's act_dtype; LoRA weights,
 * their gradients, optimizer state, per-row statistics, RoPE tables and
 * token positions are float. The graph never does arithmetic on an aitk_act
 * pointer: step_act_at/step_act_cat (aitk_act_at) know the element size, so
 * the same graph addresses fp32 buffers on the CPU and bf16 ones on a GPU. */
#ifndef AITK_MODELS_STEP_INTERNAL_H
#define AITK_MODELS_STEP_INTERNAL_H

#include "models/step.h"

#define STEP_CHECK(x)              \
    do {                           \
        aitk_status st_ = (x);     \
        if (st_ != AITK_OK)        \
            return st_;            \
    } while (0)

typedef struct step_tensor {
    char *name;
    aitk_step_kind kind;
    int ndim;
    long dims[3];
    size_t count;
    size_t offset;  /* elements into its arena (bytes in the quantized arena) */
    size_t blocks;  /* NF4: absmax values, at `block_offset` in the absmax arena */
    size_t block_offset;
    bool quant;     /* stored quantized (fp8 or NF4, m->setup.base says which) */
    float scale;    /* init: draw scale; fp8: the dequantization scale */
    bool one_plus;  /* init 1 + draw (norm weights) */
    aitk_act *a;    /* bound: base weight, bias, norm weight or input */
    float *f;       /* bound: LoRA weight (fp32 master) */
    uint8_t *q;     /* bound: quantized base weight */
    float *absmax;  /* bound: NF4 block absmax values */
    float *grad;    /* bound: LoRA gradient */
} step_tensor;

/* A Linear of the graph: frozen weight (out,in), optional bias, optional
 * LoRA A (r,in) / B (out,r). Indices into the tensor table; pointers bound. */
typedef struct step_linear {
    int in, out, r;
    long w, b, la, lb; /* tensor indices, -1 when absent */
    aitk_act *pw, *pb;
    float *pla, *plb, *dla, *dlb;
    const uint8_t *wq;      /* quantized weight (fp8 or NF4), else NULL */
    float w8scale;          /* fp8: the tensor's scale */
    const float *w4absmax;  /* NF4: the blocks' absmax values */
} step_linear;

typedef enum step_arch_id { STEP_ARCH_FLUX, STEP_ARCH_CHROMA, STEP_ARCH_OMNIGEN2 } step_arch_id;

typedef struct step_arch {
    /* Declares tensors and linears (no memory yet). */
    aitk_status (*declare)(aitk_step_model *m, aitk_str *err);
    /* After the arenas exist: allocate the activation buffers. */
    aitk_status (*alloc)(aitk_step_model *m, aitk_str *err);
    /* Forward + loss + backward; LoRA gradients accumulated (zeroed before). */
    aitk_status (*forward_backward)(aitk_step_model *m, double *loss);
    /* m->Ti has changed (aitk_step_set_img_tokens, never above the count
     * the buffers were sized for): the architecture's own token counts,
     * its cached inputs and its RoPE tables follow. */
    aitk_status (*set_tokens)(aitk_step_model *m);
    void (*free)(aitk_step_model *m);
} step_arch;

#define STEP_MAX_BUFS 64

struct aitk_step_model {
    const aitk_ops *ops;
    aitk_mem_account *acct;
    aitk_step_setup setup;
    const aitk_model_spec *spec;
    step_arch_id arch_id;
    const step_arch *arch;
    void *arch_state;

    long B, Ti, Tt;  /* batch, image and text tokens per sample */
    long Ti_built;   /* the image tokens every buffer was sized for (Ti <= Ti_built) */
    long built_resolution; /* the setup's resolution at build time (0: tokens given) */
    float lora_scale;

    step_tensor *t;
    size_t n_t, cap_t;
    step_linear *lin;
    size_t n_lin, cap_lin;
    size_t n_base, n_lora, n_input;     /* arena sizes (elements) */
    size_t n_quant_bytes, n_absmax;     /* quantized base: bytes, NF4 absmax values */
    int max_w_elems;                    /* largest weight, for the dequantization scratch */

    aitk_buf base, base_q, base_absmax, lora, grads, inputs, opt_m, opt_v, opt_ms, opt_vs,
        dequant;
    aitk_buf bufs[STEP_MAX_BUFS]; /* activation and scratch buffers of the architecture */
    size_t n_bufs;

    long step;
    double flops, model_flops; /* of the step in progress */
    bool recomputing;          /* a checkpointed block's second forward */
};

/* ---- declaring ---- */
/* Adds a tensor; *index gets its position. dims: ndim values. */
aitk_status step_declare(aitk_step_model *m, const char *name, aitk_step_kind kind, int ndim,
                         const long *dims, float scale, bool one_plus, long *index);
/* Adds a Linear `name` (weight, bias when `bias`, LoRA when `lora` and rank > 0),
 * weights drawn uniform +-1/sqrt(in) as torch.nn.Linear's default. */
aitk_status step_declare_linear(aitk_step_model *m, const char *name, int in, int out,
                                bool bias, bool lora, long *index);
/* A norm weight of c elements, 1 + uniform(+-1/8). */
aitk_status step_declare_norm(aitk_step_model *m, const char *name, int c, long *index);
/* Allocates one zeroed buffer for the architecture: `floats` fp32 values,
 * `elems` activation elements, or raw `bytes` (a slot that a step_bump
 * carves into both kinds). */
aitk_status step_alloc_floats(aitk_step_model *m, size_t floats, aitk_mem_tag tag,
                              const char *what, float **out);
aitk_status step_alloc_acts(aitk_step_model *m, size_t elems, aitk_mem_tag tag,
                            const char *what, aitk_act **out);
aitk_status step_alloc_bytes(aitk_step_model *m, size_t bytes, aitk_mem_tag tag,
                             const char *what, void **out);

/* A bump allocator over one slot of bytes: with base NULL it only measures.
 * Activations and fp32 statistics share a slot, so it counts bytes. */
typedef struct step_bump {
    const aitk_ops *ops;
    unsigned char *base;
    size_t used; /* bytes */
} step_bump;
/* The next `n` activation elements / fp32 values of the slot (NULL while
 * measuring). Each buffer's bytes are rounded up to a multiple of 64, so
 * every buffer starts 64-byte aligned, as vector loads want on any backend. */
aitk_act *step_take_act(step_bump *b, size_t n);
float *step_take_f32(step_bump *b, size_t n);

/* step.c: lays out and allocates the arenas, binds every tensor and linear;
 * then draws every tensor (see aitk_step_draw). */
aitk_status step_alloc_arenas(aitk_step_model *m, aitk_str *err);
aitk_status step_fill_tensors(aitk_step_model *m);
/* Input tensor `index` (B, tokens, width) redrawn for `tokens` per sample:
 * its dims and count follow, and the values are those a model built at
 * that size draws (same key, same element indices). */
aitk_status step_redraw_input(aitk_step_model *m, long index, long tokens);

/* ---- running ---- */
/* y (n,out) = linear(x (n,in)); xa (n,r) saved (NULL for a frozen linear). */
aitk_status step_linear_forward(aitk_step_model *m, const step_linear *l, aitk_act *y,
                                aitk_act *xa, const aitk_act *x, int n);
/* dx (n,in) written or accumulated (NULL: not needed); LoRA gradients +=.
 * work (n,r) scratch. */
aitk_status step_linear_backward(aitk_step_model *m, const step_linear *l, aitk_act *dx,
                                 aitk_act *work, const aitk_act *dy, const aitk_act *x,
                                 const aitk_act *xa, int n, bool accumulate_dx);
/* Attention with FLOP accounting (arguments as ops.h). */
aitk_status step_attention_forward(aitk_step_model *m, aitk_act *out, float *lse,
                                   const aitk_act *q, const aitk_act *k, const aitk_act *v, int b,
                                   int t, int hq, int hkv, int d);
aitk_status step_attention_backward(aitk_step_model *m, aitk_act *dq, aitk_act *dk,
                                    aitk_act *dv, const aitk_act *dout, const aitk_act *q,
                                    const aitk_act *k, const aitk_act *v, const aitk_act *out,
                                    const float *lse, int b, int t, int hq, int hkv, int d);

/* Activation storage of tensor `index` (a base weight, norm weight or input). */
static inline aitk_act *step_a(const aitk_step_model *m, long index)
{
    return m->t[index].a;
}

/* p advanced by `elems` activation elements (ops.h's aitk_act_at). */
static inline aitk_act *step_act_at(const aitk_step_model *m, aitk_act *p, size_t elems)
{
    return aitk_act_at(m->ops, p, elems);
}

static inline const aitk_act *step_act_cat(const aitk_step_model *m, const aitk_act *p,
                                           size_t elems)
{
    return aitk_act_cat(m->ops, p, elems);
}

/* Host staging shared by every architecture: one step's flow-matching
 * inputs (x0, x_t, target, per-sample t) in fp32, and a scratch for token
 * positions and sinusoidal embeddings. They reach the backend through
 * upload_act (activations) or upload (positions). */
typedef struct step_host {
    float *x0, *xt, *target, *t, *scratch;
} step_host;

/* latent: floats per x0/x_t/target; scratch: floats of the scratch buffer. */
aitk_status step_host_alloc(step_host *h, size_t latent, size_t batch, size_t scratch);
void step_host_free(step_host *h);

/* x_t = (1-t) x0 + t noise and target = noise - x0 for this step, on the
 * host: fills `xt` and `target` (B,Ti,in_ch) and `t_host` (B). */
aitk_status step_flow_inputs(aitk_step_model *m, const float *x0, float *xt, float *target,
                             float *t_host, int in_ch);
/* Sinusoidal embedding (diffusers' flip_sin_to_cos=True, shift 0) of `value`
 * into host[dim]: [cos(v f_i), sin(v f_i)], f_i = 10000^(-i/(dim/2)),
 * computed in double and rounded. */
void step_sinusoid(float *host, double value, int dim);

/* ---- shared by the architectures (step_arch.c) ---- */
/* step_declare_linear / step_declare_norm under a printf-style name. */
#if defined(__GNUC__)
__attribute__((format(printf, 7, 8)))
#endif
aitk_status step_declare_linearf(aitk_step_model *m, long *idx, int in, int out, bool bias,
                                 bool lora, const char *fmt, ...);
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
aitk_status step_declare_normf(aitk_step_model *m, long *idx, int c, const char *fmt, ...);
/* The positions of tt text and ti image tokens (FLUX's or OmniGen2's, see
 * step_positions) staged in `scratch` (3 (tt+ti) floats) and uploaded to
 * pos, then the RoPE tables cos/sin (tt+ti, d/2) with step_rope_axes. */
aitk_status step_rope_tables(aitk_step_model *m, float *scratch, long tt, long ti, bool flux,
                             int d, float *pos, float *cos, float *sin);
/* pred (rows,out) = proj_out(x), *loss = MSE(pred, target) over `latent`
 * elements, then back through the projection: dpred, dx written, the
 * projection's LoRA gradients (if any) accumulated; work as for
 * step_linear_backward. */
aitk_status step_output_loss(aitk_step_model *m, const step_linear *proj_out, const aitk_act *x,
                             aitk_act *pred, const aitk_act *target, aitk_act *dpred,
                             aitk_act *dx, aitk_act *work, int rows, size_t latent,
                             double *loss);

/* Token positions (T,3) on the host: FLUX-style (text all zero, image
 * (0,row,col)) or OmniGen2-style (text (i,i,i), image (Tt,row,col)); the
 * image is a grid of ceil(sqrt(Ti)) columns. */
void step_positions(float *pos, long tt, long ti, bool text_diagonal);
/* RoPE axes for head_dim d: FLUX's (16,56,56)/128 or OmniGen2's thirds. */
void step_rope_axes(int d, bool flux, int axes[3]);

/* step_plan.c: the plan with the backend's storage (act_bytes per
 * activation element and unquantized base weight); terms[] in
 * aitk_step_plan's order, total last. */
aitk_status step_plan_storage(const aitk_model_spec *spec, long resolution, long batch,
                          long txt_tokens, long rank, double alpha, bool fp8, bool nf4,
                          bool adamw, bool checkpointing, double act_bytes, double *terms,
                          aitk_str *err);
/* The cost model's hardware FLOPs of one step (aitk_cost_work, all terms). */
aitk_status step_plan_flops(const aitk_model_spec *spec, long resolution, long batch,
                            long txt_tokens, long rank, bool checkpointing, double *hardware,
                            aitk_str *err);

extern const step_arch step_arch_flux;
extern const step_arch step_arch_omnigen2;

/* A block group of the spec by name, or NULL. */
const aitk_block_spec *step_spec_block(const aitk_model_spec *s, const char *name);
/* A linear of a block by name, or NULL. */
const aitk_linear_spec *step_spec_linear(const aitk_block_spec *b, const char *name);

#endif
