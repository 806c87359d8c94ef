/* The architecture-neutral half of the training step: the PRNG every tensor
 * is drawn from, the tensor table and its arenas, drawing the tensors on the
 * backend, LoRA linears (with fp8 or NF4 base weights dequantized per GEMM),
 * FLOP accounting, the flow-matching inputs and the slots' bump allocator.
 * The public entry points are in step_api.c, the transformers in
 * step_flux*.c and step_omnigen2.c. */
#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "kernels/math/draw.h"
#include "models/step_internal.h"

/* ---- PRNG ---- */

/* The host's copy of the backends' draw (kernels/math/draw.h), for the
 * per-step noise and t and for tests. */
float aitk_step_draw(uint64_t seed, const char *name, uint64_t j, float scale)
{
    return aitk_draw(aitk_draw_key(seed, name), j, scale);
}

/* ---- spec look-ups ---- */

const aitk_block_spec *step_spec_block(const aitk_model_spec *s, const char *name)
{
    for (size_t i = 0; i < s->n_blocks; i++)
        if (strcmp(s->blocks[i].name, name) == 0)
            return &s->blocks[i];
    return NULL;
}

const aitk_linear_spec *step_spec_linear(const aitk_block_spec *b, const char *name)
{
    for (size_t i = 0; b && i < b->n_linears; i++)
        if (strcmp(b->linears[i].name, name) == 0)
            return &b->linears[i];
    return NULL;
}

/* ---- declaring ---- */

aitk_status step_declare(aitk_step_model *m, const char *name, aitk_step_kind kind, int ndim,
                         const long *dims, float scale, bool one_plus, long *index)
{
    if (m->n_t == m->cap_t) {
        size_t cap = m->cap_t ? 2 * m->cap_t : 64;
        step_tensor *t = aitk_realloc(m->t, cap * sizeof *t);
        if (!t)
            return AITK_E_NOMEM;
        m->t = t;
        m->cap_t = cap;
    }
    step_tensor *t = &m->t[m->n_t];
    memset(t, 0, sizeof *t);
    t->name = aitk_strdup(name);
    if (!t->name)
        return AITK_E_NOMEM;
    t->kind = kind;
    t->ndim = ndim;
    t->count = 1;
    for (int i = 0; i < ndim; i++) {
        t->dims[i] = dims[i];
        t->count *= (size_t)dims[i];
    }
    t->scale = scale;
    t->one_plus = one_plus;
    *index = (long)m->n_t++;
    return AITK_OK;
}

aitk_status step_declare_norm(aitk_step_model *m, const char *name, int c, long *index)
{
    long d = c;
    return step_declare(m, name, AITK_STEP_T_BASE, 1, &d, 0.125f, true, index);
}

aitk_status step_declare_linear(aitk_step_model *m, const char *name, int in, int out,
                                bool bias, bool lora, long *index)
{
    if (m->n_lin == m->cap_lin) {
        size_t cap = m->cap_lin ? 2 * m->cap_lin : 64;
        step_linear *l = aitk_realloc(m->lin, cap * sizeof *l);
        if (!l)
            return AITK_E_NOMEM;
        m->lin = l;
        m->cap_lin = cap;
    }
    step_linear *l = &m->lin[m->n_lin];
    memset(l, 0, sizeof *l);
    l->in = in;
    l->out = out;
    l->w = l->b = l->la = l->lb = -1;
    const float ws = (float)(1.0 / sqrt((double)in));
    aitk_str nm = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    aitk_str_appendf(&nm, "%s.w", name);
    if (!(st = aitk_str_status(&nm)))
        st = step_declare(m, aitk_str_cstr(&nm), AITK_STEP_T_BASE, 2, (long[]){out, in}, ws,
                          false, &l->w);
    if (!st)
        m->t[l->w].quant = m->setup.base == AITK_STEP_BASE_FP8 ||
                           m->setup.base == AITK_STEP_BASE_NF4;
    if (!st && bias) {
        aitk_str_clear(&nm);
        aitk_str_appendf(&nm, "%s.b", name);
        if (!(st = aitk_str_status(&nm)))
            st = step_declare(m, aitk_str_cstr(&nm), AITK_STEP_T_BASE, 1, (long[]){out}, ws,
                              false, &l->b);
    }
    if (!st && lora) {
        const long r = m->setup.rank;
        l->r = (int)r;
        aitk_str_clear(&nm);
        aitk_str_appendf(&nm, "%s.lora_a", name);
        if (!(st = aitk_str_status(&nm)))
            st = step_declare(m, aitk_str_cstr(&nm), AITK_STEP_T_LORA, 2, (long[]){r, in}, ws,
                              false, &l->la);
        aitk_str_clear(&nm);
        aitk_str_appendf(&nm, "%s.lora_b", name);
        /* B is not zero as at the start of a real run: a zero B makes every A
         * gradient zero, and the tests must see both. The work is the same. */
        if (!st && !(st = aitk_str_status(&nm)))
            st = step_declare(m, aitk_str_cstr(&nm), AITK_STEP_T_LORA, 2, (long[]){out, r},
                              (float)(0.25 / sqrt((double)r)), false, &l->lb);
    }
    aitk_str_free(&nm);
    if (st)
        return st;
    if ((long)in * out > m->max_w_elems)
        m->max_w_elems = in * out;
    *index = (long)m->n_lin++;
    return AITK_OK;
}

/* One more buffer in m->bufs, freed with the model. */
aitk_status step_alloc_bytes(aitk_step_model *m, size_t bytes, aitk_mem_tag tag,
                             const char *what, void **out)
{
    *out = NULL;
    if (m->n_bufs == STEP_MAX_BUFS)
        return AITK_E_INTERNAL;
    aitk_buf *b = &m->bufs[m->n_bufs];
    STEP_CHECK(aitk_buf_alloc(m->ops, m->acct, b, bytes, tag, what));
    m->n_bufs++;
    *out = b->ptr;
    return AITK_OK;
}

aitk_status step_alloc_floats(aitk_step_model *m, size_t floats, aitk_mem_tag tag,
                              const char *what, float **out)
{
    void *p = NULL;
    aitk_status st = step_alloc_bytes(m, aitk_dtype_bytes(AITK_DTYPE_F32, floats), tag, what,
                                      &p);
    *out = p;
    return st;
}

aitk_status step_alloc_acts(aitk_step_model *m, size_t elems, aitk_mem_tag tag,
                            const char *what, aitk_act **out)
{
    void *p = NULL;
    aitk_status st = step_alloc_bytes(m, aitk_dtype_bytes(m->ops->act_dtype, elems), tag, what,
                                      &p);
    *out = p;
    return st;
}

/* ---- slots ---- */

static unsigned char *bump_take(step_bump *b, size_t bytes)
{
    unsigned char *p = b->base ? b->base + b->used : NULL;
    b->used += (bytes + 63) & ~(size_t)63;
    return p;
}

aitk_act *step_take_act(step_bump *b, size_t n)
{
    return (aitk_act *)bump_take(b, aitk_dtype_bytes(b->ops->act_dtype, n));
}

float *step_take_f32(step_bump *b, size_t n)
{
    return (float *)bump_take(b, aitk_dtype_bytes(AITK_DTYPE_F32, n));
}

/* ---- arenas ---- */

/* Where a quantized weight of `count` elements goes: its bytes in the
 * quantized arena (one per fp8 weight, one per two NF4 weights) and, for
 * NF4, its blocks' absmax values in their fp32 arena. */
static void place_quantized(aitk_step_model *m, step_tensor *t)
{
    const bool nf4 = m->setup.base == AITK_STEP_BASE_NF4;
    t->offset = m->n_quant_bytes;
    m->n_quant_bytes += aitk_dtype_bytes(nf4 ? AITK_DTYPE_NF4 : AITK_DTYPE_FP8_E4M3, t->count);
    if (nf4) {
        t->blocks = aitk_nf4_blocks(t->count);
        t->block_offset = m->n_absmax;
        m->n_absmax += t->blocks;
    }
}

static void place_tensors(aitk_step_model *m)
{
    for (size_t i = 0; i < m->n_t; i++) {
        step_tensor *t = &m->t[i];
        if (t->quant) {
            place_quantized(m, t);
            continue;
        }
        size_t *n = t->kind == AITK_STEP_T_LORA    ? &m->n_lora
                    : t->kind == AITK_STEP_T_INPUT ? &m->n_input
                                                   : &m->n_base;
        t->offset = *n;
        *n += t->count;
    }
}

static aitk_status alloc_optimizer(aitk_step_model *m)
{
    const aitk_ops *o = m->ops;
    aitk_mem_account *a = m->acct;
    const size_t f = sizeof(float);
    if (m->setup.optimizer == AITK_STEP_ADAMW) {
        STEP_CHECK(aitk_buf_alloc(o, a, &m->opt_m, m->n_lora * f, AITK_MEM_OPTIMIZER, "AdamW m"));
        return aitk_buf_alloc(o, a, &m->opt_v, m->n_lora * f, AITK_MEM_OPTIMIZER, "AdamW v");
    }
    const size_t nb = aitk_adamw8_blocks(m->n_lora) * f;
    STEP_CHECK(aitk_buf_alloc(o, a, &m->opt_m, m->n_lora, AITK_MEM_OPTIMIZER, "8-bit AdamW m"));
    STEP_CHECK(aitk_buf_alloc(o, a, &m->opt_v, m->n_lora, AITK_MEM_OPTIMIZER, "8-bit AdamW v"));
    STEP_CHECK(aitk_buf_alloc(o, a, &m->opt_ms, nb, AITK_MEM_OPTIMIZER, "8-bit AdamW scales"));
    return aitk_buf_alloc(o, a, &m->opt_vs, nb, AITK_MEM_OPTIMIZER, "8-bit AdamW scales");
}

/* Base weights, biases and norm weights are activation storage; LoRA, its
 * gradients and the optimizer state fp32; a quantized base its codes (and
 * NF4's absmax values) plus one dequantized weight of scratch. */
static aitk_status alloc_all(aitk_step_model *m)
{
    const aitk_ops *o = m->ops;
    aitk_mem_account *a = m->acct;
    const aitk_dtype act = o->act_dtype;
    const size_t f = sizeof(float);
    const bool nf4 = m->setup.base == AITK_STEP_BASE_NF4;
    STEP_CHECK(aitk_buf_alloc(o, a, &m->base, aitk_dtype_bytes(act, m->n_base),
                              AITK_MEM_WEIGHTS, "base weights"));
    STEP_CHECK(aitk_buf_alloc(o, a, &m->base_q, m->n_quant_bytes, AITK_MEM_WEIGHTS,
                              nf4 ? "NF4 base weights" : "fp8 base weights"));
    STEP_CHECK(aitk_buf_alloc(o, a, &m->base_absmax, m->n_absmax * f, AITK_MEM_WEIGHTS,
                              "NF4 block absmax"));
    STEP_CHECK(aitk_buf_alloc(o, a, &m->lora, m->n_lora * f, AITK_MEM_WEIGHTS, "LoRA weights"));
    STEP_CHECK(aitk_buf_alloc(o, a, &m->grads, m->n_lora * f, AITK_MEM_GRADIENTS,
                              "LoRA gradients"));
    STEP_CHECK(aitk_buf_alloc(o, a, &m->inputs, aitk_dtype_bytes(act, m->n_input),
                              AITK_MEM_ACTIVATIONS, "cached latents and text features"));
    STEP_CHECK(alloc_optimizer(m));
    if (m->n_quant_bytes)
        STEP_CHECK(aitk_buf_alloc(o, a, &m->dequant, aitk_dtype_bytes(act, (size_t)m->max_w_elems),
                                  AITK_MEM_WORKSPACE,
                                  nf4 ? "NF4 dequantization" : "fp8 dequantization"));
    return AITK_OK;
}

static void bind_tensor(aitk_step_model *m, step_tensor *t)
{
    if (t->kind == AITK_STEP_T_LORA) {
        t->f = (float *)m->lora.ptr + t->offset;
        t->grad = (float *)m->grads.ptr + t->offset;
    } else if (t->kind == AITK_STEP_T_INPUT) {
        t->a = aitk_act_at(m->ops, m->inputs.ptr, t->offset);
    } else if (t->quant) {
        t->q = (uint8_t *)m->base_q.ptr + t->offset;
        if (m->setup.base == AITK_STEP_BASE_NF4)
            t->absmax = (float *)m->base_absmax.ptr + t->block_offset;
    } else {
        t->a = aitk_act_at(m->ops, m->base.ptr, t->offset);
    }
}

aitk_status step_alloc_arenas(aitk_step_model *m, aitk_str *err)
{
    place_tensors(m);
    aitk_status st = alloc_all(m);
    if (st) {
        aitk_str_appendf(err, "cannot allocate the %s model's weights and optimizer state: %s",
                         m->spec->id, aitk_strerror(st));
        if ((st == AITK_E_NOMEM || st == AITK_E_RANGE) && m->acct->failed_what)
            aitk_str_appendf(err, " (%s, %zu bytes)", m->acct->failed_what,
                             m->acct->failed_bytes);
        return st;
    }
    for (size_t i = 0; i < m->n_t; i++)
        bind_tensor(m, &m->t[i]);
    for (size_t i = 0; i < m->n_lin; i++) {
        step_linear *l = &m->lin[i];
        l->pw = m->t[l->w].a;
        l->wq = m->t[l->w].q;
        l->w4absmax = m->t[l->w].absmax;
        l->pb = l->b >= 0 ? m->t[l->b].a : NULL;
        l->pla = l->la >= 0 ? m->t[l->la].f : NULL;
        l->plb = l->lb >= 0 ? m->t[l->lb].f : NULL;
        l->dla = l->la >= 0 ? m->t[l->la].grad : NULL;
        l->dlb = l->lb >= 0 ? m->t[l->lb].grad : NULL;
    }
    return AITK_OK;
}

/* The scale of a tensor's quantized copy of `amax`: e4m3's range spans the
 * tensor's largest magnitude (1 for an all-zero tensor, which any scale
 * codes exactly). */
static float fp8_scale(float amax)
{
    return amax > 0 ? amax / AITK_FP8_E4M3_MAX : 1.0f;
}

/* A quantized base weight: drawn into the dequantization scratch (activation
 * storage, as large as the largest weight), then quantized from there. */
static aitk_status fill_quantized(aitk_step_model *m, size_t i, uint64_t key)
{
    const aitk_ops *o = m->ops;
    step_tensor *t = &m->t[i];
    aitk_act *w = m->dequant.ptr;
    STEP_CHECK(o->draw_act(w, t->count, key, 0, t->scale, 0.0f));
    if (m->setup.base == AITK_STEP_BASE_NF4)
        return o->nf4_quantize(t->q, t->absmax, w, t->count);
    float amax = 0;
    STEP_CHECK(o->absmax(&amax, w, t->count));
    t->scale = fp8_scale(amax);
    for (size_t l = 0; l < m->n_lin; l++)
        if (m->lin[l].w == (long)i)
            m->lin[l].w8scale = t->scale;
    return o->fp8_quantize(t->q, w, t->scale, t->count);
}

/* Draws every tensor on the backend, keyed by (seed, name): LoRA weights in
 * fp32, the rest in activation storage (quantized for an fp8 or NF4 base,
 * rounded for a bf16 one). Inputs are unit-scale uniforms, norm weights
 * 1 + draw. */
aitk_status step_fill_tensors(aitk_step_model *m)
{
    const aitk_ops *o = m->ops;
    for (size_t i = 0; i < m->n_t; i++) {
        step_tensor *t = &m->t[i];
        const uint64_t key = aitk_draw_key(m->setup.seed, t->name);
        const float add = t->one_plus ? 1.0f : 0.0f;
        if (t->quant) {
            STEP_CHECK(fill_quantized(m, i, key));
        } else if (t->kind == AITK_STEP_T_LORA) {
            STEP_CHECK(o->draw_f32(t->f, t->count, key, 0, t->scale, add));
        } else {
            STEP_CHECK(o->draw_act(t->a, t->count, key, 0, t->scale, add));
            if (t->kind == AITK_STEP_T_BASE && m->setup.base == AITK_STEP_BASE_BF16)
                STEP_CHECK(o->bf16_round(t->a, t->count));
        }
    }
    return AITK_OK;
}

aitk_status step_redraw_input(aitk_step_model *m, long index, long tokens)
{
    step_tensor *t = &m->t[index];
    t->dims[1] = tokens;
    t->count = (size_t)t->dims[0] * (size_t)tokens * (size_t)t->dims[2];
    /* Element j of a (B, tokens, width) input is value j of its stream, so
     * a smaller bucket's input is its own first elements, not a slice of
     * the larger one's rows. */
    return m->ops->draw_act(t->a, t->count, aitk_draw_key(m->setup.seed, t->name), 0, t->scale,
                            0.0f);
}

/* ---- running ---- */

/* A quantized weight expanded into the dequantization scratch. */
static aitk_status dequantize_weight(aitk_step_model *m, const step_linear *l)
{
    const size_t n = (size_t)l->in * (size_t)l->out;
    if (m->setup.base == AITK_STEP_BASE_NF4)
        return m->ops->nf4_dequantize(m->dequant.ptr, l->wq, l->w4absmax, n);
    return m->ops->fp8_dequantize(m->dequant.ptr, l->wq, l->w8scale, n);
}

aitk_status step_linear_forward(aitk_step_model *m, const step_linear *l, aitk_act *y,
                                aitk_act *xa, const aitk_act *x, int n)
{
    const aitk_act *w = l->pw;
    if (l->wq) {
        STEP_CHECK(dequantize_weight(m, l));
        w = m->dequant.ptr;
    }
    const double f = 2.0 * n * l->in * l->out + 2.0 * n * l->r * (l->in + l->out);
    m->flops += f;
    if (!m->recomputing)
        m->model_flops += f;
    return m->ops->lora_linear_forward(y, l->r ? xa : NULL, x, w, l->pb, l->pla, l->plb, n,
                                       l->in, l->out, l->r, m->lora_scale);
}

aitk_status step_linear_backward(aitk_step_model *m, const step_linear *l, aitk_act *dx,
                                 aitk_act *work, const aitk_act *dy, const aitk_act *x,
                                 const aitk_act *xa, int n, bool accumulate_dx)
{
    if (!dx && !l->r)
        return AITK_OK; /* a frozen linear whose input needs no gradient */
    /* Without dx the frozen weight is not read; a quantized weight is then
     * not expanded (the kernel still wants a pointer). */
    const aitk_act *w = l->wq ? m->dequant.ptr : l->pw;
    if (l->wq && dx)
        STEP_CHECK(dequantize_weight(m, l));
    const double f = (dx ? 2.0 * n * l->in * l->out : 0) + 4.0 * n * l->r * (l->in + l->out);
    m->flops += f;
    m->model_flops += f;
    return m->ops->lora_linear_backward(dx, l->dla, l->dlb, work, dy, x, xa, w, l->pla,
                                        l->plb, n, l->in, l->out, l->r, m->lora_scale,
                                        accumulate_dx);
}

aitk_status step_attention_forward(aitk_step_model *m, aitk_act *out, float *lse,
                                   const aitk_act *q, const aitk_act *k, const aitk_act *v, int b,
                                   int t, int hq, int hkv, int d)
{
    const double f = 4.0 * b * (double)t * t * d * hq;
    m->flops += f;
    if (!m->recomputing)
        m->model_flops += f;
    return m->ops->attention_forward(out, lse, q, k, v, b, t, hq, hkv, d,
                                     (float)(1.0 / sqrt((double)d)));
}

aitk_status step_attention_backward(aitk_step_model *m, aitk_act *dq, aitk_act *dk,
                                    aitk_act *dv, const aitk_act *dout, const aitk_act *q,
                                    const aitk_act *k, const aitk_act *v, const aitk_act *out,
                                    const float *lse, int b, int t, int hq, int hkv, int d)
{
    const double f = 2.5 * 4.0 * b * (double)t * t * d * hq;
    m->flops += f;
    m->model_flops += f;
    return m->ops->attention_backward(dq, dk, dv, dout, q, k, v, out, lse, b, t, hq, hkv, d,
                                      (float)(1.0 / sqrt((double)d)));
}

void step_sinusoid(float *host, double value, int dim)
{
    const int half = dim / 2;
    for (int i = 0; i < half; i++) {
        const double arg = value * exp(-log(10000.0) * i / half);
        host[i] = (float)cos(arg);
        host[half + i] = (float)sin(arg);
    }
}

void step_positions(float *pos, long tt, long ti, bool text_diagonal)
{
    long cols = (long)ceil(sqrt((double)ti));
    cols = cols < 1 ? 1 : cols;
    for (long i = 0; i < tt; i++)
        for (int a = 0; a < 3; a++)
            pos[i * 3 + a] = text_diagonal ? (float)i : 0.0f;
    for (long i = 0; i < ti; i++) {
        float *p = pos + (tt + i) * 3;
        p[0] = text_diagonal ? (float)tt : 0.0f;
        p[1] = (float)(i / cols);
        p[2] = (float)(i % cols);
    }
}

void step_rope_axes(int d, bool flux, int axes[3])
{
    /* Full size: FLUX (16,56,56) of 128, OmniGen2 (40,40,40) of 120; the tiny
     * configurations keep the proportions, each axis even. */
    int a0 = flux ? (int)lround(d * 16.0 / 128.0) : d / 3;
    a0 -= a0 % 2;
    int a1 = (d - a0) / 2;
    a1 -= a1 % 2;
    axes[0] = a0;
    axes[1] = a1;
    axes[2] = d - a0 - a1;
}

aitk_status step_host_alloc(step_host *h, size_t latent, size_t batch, size_t scratch)
{
    h->x0 = aitk_malloc(latent * sizeof(float));
    h->xt = aitk_malloc(latent * sizeof(float));
    h->target = aitk_malloc(latent * sizeof(float));
    h->t = aitk_malloc(batch * sizeof(float));
    h->scratch = aitk_malloc(scratch * sizeof(float));
    return h->x0 && h->xt && h->target && h->t && h->scratch ? AITK_OK : AITK_E_NOMEM;
}

void step_host_free(step_host *h)
{
    aitk_free(h->x0);
    aitk_free(h->xt);
    aitk_free(h->target);
    aitk_free(h->t);
    aitk_free(h->scratch);
    *h = (step_host){0};
}

aitk_status step_flow_inputs(aitk_step_model *m, const float *x0, float *xt, float *target,
                             float *t_host, int in_ch)
{
    const size_t per = (size_t)m->Ti * (size_t)in_ch, n = per * (size_t)m->B;
    const uint64_t s = m->setup.fixed_noise ? 0 : (uint64_t)(m->step - 1);
    const float amp = (float)sqrt(3.0); /* unit-variance uniform noise */
    for (long b = 0; b < m->B; b++)
        t_host[b] = 0.5f * (aitk_step_draw(m->setup.seed, "t", s * (uint64_t)m->B +
                                                                   (uint64_t)b, 1.0f) + 1.0f);
    for (size_t j = 0; j < n; j++) {
        const float noise = aitk_step_draw(m->setup.seed, "noise", s * n + j, amp);
        const float t = t_host[j / per];
        xt[j] = (1.0f - t) * x0[j] + t * noise;
        target[j] = noise - x0[j];
    }
    return AITK_OK;
}
