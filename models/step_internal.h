/* Internals shared by the step graph's files (step.c: tensor table, arenas,
 * PRNG, linears, optimizer; step_flux.c: FLUX.1-dev and Chroma;
 * step_omnigen2.c: OmniGen2). Not part of the public API (models/step.h).
 *
 * Building a model is two-phase, so every byte is known before anything is
 * allocated: the architecture first declares its tensors and linears (only
 * indices and sizes), step.c then allocates one arena per kind (base weights,
 * LoRA weights, their gradients, optimizer state, inputs) and binds pointers,
 * and the architecture allocates its activation buffers. */
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
    size_t offset;  /* elements into its arena */
    bool fp8;       /* stored as e4m3 bytes in the fp8 arena */
    float scale;    /* init: draw scale; fp8: the dequantization scale */
    bool one_plus;  /* init 1 + draw (norm weights) */
    float *f;       /* bound: fp32 storage (NULL for fp8) */
    uint8_t *q;     /* bound: fp8 storage */
    float *grad;    /* bound: LoRA gradient */
} step_tensor;

/* A Linear of the graph: frozen weight (out,in), optional bias, optional
 * LoRA A (r,in) / B (out,r). Indices into the tensor table; pointers bound. */
typedef struct step_linear {
    int in, out, r;
    long w, b, la, lb; /* tensor indices, -1 when absent */
    float *pw, *pb, *pla, *plb, *dla, *dlb;
    const uint8_t *w8;
    float w8scale;
} step_linear;

typedef enum step_arch_id { STEP_ARCH_FLUX, STEP_ARCH_CHROMA, STEP_ARCH_OMNIGEN2 } step_arch_id;

typedef struct step_arch {
    /* Declares tensors and linears (no memory yet). */
    aitk_status (*declare)(aitk_step_model *m, aitk_str *err);
    /* After the arenas exist: allocate the activation buffers. */
    aitk_status (*alloc)(aitk_step_model *m, aitk_str *err);
    /* Forward + loss + backward; LoRA gradients accumulated (zeroed before). */
    aitk_status (*forward_backward)(aitk_step_model *m, double *loss);
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
    float lora_scale;

    step_tensor *t;
    size_t n_t, cap_t;
    step_linear *lin;
    size_t n_lin, cap_lin;
    size_t n_base, n_base8, n_lora, n_input; /* arena sizes (elements) */
    int max_w_elems;                         /* largest weight, for fp8 dequantization */

    aitk_buf base, base8, lora, grads, inputs, opt_m, opt_v, opt_ms, opt_vs, dequant;
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
/* Allocates one buffer of `floats` floats (zeroed) for the architecture. */
aitk_status step_alloc_floats(aitk_step_model *m, size_t floats, aitk_mem_tag tag,
                              const char *what, float **out);

/* step.c: lays out and allocates the arenas, binds every tensor and linear;
 * then draws every tensor (see aitk_step_draw). */
aitk_status step_alloc_arenas(aitk_step_model *m, aitk_str *err);
aitk_status step_fill_tensors(aitk_step_model *m);

/* ---- running ---- */
/* y (n,out) = linear(x (n,in)); xa (n,r) saved (NULL for a frozen linear). */
aitk_status step_linear_forward(aitk_step_model *m, const step_linear *l, float *y, float *xa,
                                const float *x, int n);
/* dx (n,in) written or accumulated (NULL: not needed); LoRA gradients +=.
 * work (n,r) scratch. */
aitk_status step_linear_backward(aitk_step_model *m, const step_linear *l, float *dx,
                                 float *work, const float *dy, const float *x, const float *xa,
                                 int n, bool accumulate_dx);
/* Attention with FLOP accounting (arguments as ops.h). */
aitk_status step_attention_forward(aitk_step_model *m, float *out, float *lse, const float *q,
                                   const float *k, const float *v, int b, int t, int hq,
                                   int hkv, int d);
aitk_status step_attention_backward(aitk_step_model *m, float *dq, float *dk, float *dv,
                                    const float *dout, const float *q, const float *k,
                                    const float *v, const float *out, const float *lse, int b,
                                    int t, int hq, int hkv, int d);

/* Float pointer of tensor `index`. */
static inline float *step_f(aitk_step_model *m, long index)
{
    return m->t[index].f;
}

/* x_t = (1-t) x0 + t noise and target = noise - x0 for this step, on the host
 * side of the table (cpu) or through upload: fills `xt` and `target`
 * (B,Ti,in_ch) and `t_host` (B). */
/* Host staging shared by every architecture: one step's flow-matching
 * inputs (x0, x_t, target, per-sample t) and a scratch for token positions
 * and sinusoidal embeddings. */
typedef struct step_host {
    float *x0, *xt, *target, *t, *scratch;
} step_host;

/* latent: floats per x0/x_t/target; scratch: floats of the scratch buffer. */
aitk_status step_host_alloc(step_host *h, size_t latent, size_t batch, size_t scratch);
void step_host_free(step_host *h);

aitk_status step_flow_inputs(aitk_step_model *m, const float *x0, float *xt, float *target,
                             float *t_host, int in_ch);
/* Sinusoidal embedding (diffusers' flip_sin_to_cos=True, shift 0) of `value`
 * into host[dim]: [cos(v f_i), sin(v f_i)], f_i = 10000^(-i/(dim/2)),
 * computed in double and rounded. */
void step_sinusoid(float *host, double value, int dim);

/* Token positions (T,3) on the host: FLUX-style (text all zero, image
 * (0,row,col)) or OmniGen2-style (text (i,i,i), image (Tt,row,col)); the
 * image is a grid of ceil(sqrt(Ti)) columns. */
void step_positions(float *pos, long tt, long ti, bool text_diagonal);
/* RoPE axes for head_dim d: FLUX's (16,56,56)/128 or OmniGen2's thirds. */
void step_rope_axes(int d, bool flux, int axes[3]);

/* step_plan.c (the one file that includes models/cost.h): the CPU-shaped
 * plan; terms[] in aitk_step_plan's order, total last. */
aitk_status step_plan_cpu(const aitk_model_spec *spec, long resolution, long batch,
                          long txt_tokens, long rank, double alpha, bool fp8, bool adamw,
                          bool checkpointing, double *terms, aitk_str *err);
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
