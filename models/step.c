/* The architecture-neutral half of the training step: the PRNG every tensor
 * is drawn from, the tensor table and its arenas, LoRA linears (with fp8 base
 * weights dequantized per GEMM), FLOP accounting, the flow-matching inputs,
 * the optimizer update and the public entry points of models/step.h. The
 * transformers themselves are in step_flux.c and step_omnigen2.c. */
#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "models/step_internal.h"

/* ---- PRNG ---- */

static uint64_t splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001B3ull;
    return h;
}

float aitk_step_draw(uint64_t seed, const char *name, uint64_t j, float scale)
{
    uint64_t z = splitmix64((seed ^ fnv1a64(name)) + (j + 1) * 0x9E3779B97F4A7C15ull);
    float u = (float)(z >> 40) * (1.0f / 16777216.0f);
    return (2.0f * u - 1.0f) * scale;
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
        m->t[l->w].fp8 = m->setup.base == AITK_STEP_BASE_FP8;
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

aitk_status step_alloc_floats(aitk_step_model *m, size_t floats, aitk_mem_tag tag,
                              const char *what, float **out)
{
    *out = NULL;
    if (m->n_bufs == STEP_MAX_BUFS)
        return AITK_E_INTERNAL;
    aitk_buf *b = &m->bufs[m->n_bufs];
    STEP_CHECK(m->ops->alloc(m->acct, b, floats * sizeof(float), tag, what));
    m->n_bufs++;
    *out = b->ptr;
    return AITK_OK;
}

/* ---- arenas ---- */

aitk_status step_alloc_arenas(aitk_step_model *m, aitk_str *err)
{
    const aitk_ops *o = m->ops;
    for (size_t i = 0; i < m->n_t; i++) {
        step_tensor *t = &m->t[i];
        size_t *n = t->kind == AITK_STEP_T_LORA    ? &m->n_lora
                    : t->kind == AITK_STEP_T_INPUT ? &m->n_input
                    : t->fp8                       ? &m->n_base8
                                                   : &m->n_base;
        t->offset = *n;
        *n += t->count;
    }
    const size_t f = sizeof(float);
    aitk_status st = o->alloc(m->acct, &m->base, m->n_base * f, AITK_MEM_WEIGHTS,
                              "base weights");
    if (!st)
        st = o->alloc(m->acct, &m->base8, m->n_base8, AITK_MEM_WEIGHTS, "fp8 base weights");
    if (!st)
        st = o->alloc(m->acct, &m->lora, m->n_lora * f, AITK_MEM_WEIGHTS, "LoRA weights");
    if (!st)
        st = o->alloc(m->acct, &m->grads, m->n_lora * f, AITK_MEM_GRADIENTS, "LoRA gradients");
    if (!st)
        st = o->alloc(m->acct, &m->inputs, m->n_input * f, AITK_MEM_ACTIVATIONS,
                      "cached latents and text features");
    if (!st && m->setup.optimizer == AITK_STEP_ADAMW) {
        st = o->alloc(m->acct, &m->opt_m, m->n_lora * f, AITK_MEM_OPTIMIZER, "AdamW m");
        if (!st)
            st = o->alloc(m->acct, &m->opt_v, m->n_lora * f, AITK_MEM_OPTIMIZER, "AdamW v");
    } else if (!st) {
        const size_t nb = aitk_adamw8_blocks(m->n_lora) * f;
        st = o->alloc(m->acct, &m->opt_m, m->n_lora, AITK_MEM_OPTIMIZER, "8-bit AdamW m");
        if (!st)
            st = o->alloc(m->acct, &m->opt_v, m->n_lora, AITK_MEM_OPTIMIZER, "8-bit AdamW v");
        if (!st)
            st = o->alloc(m->acct, &m->opt_ms, nb, AITK_MEM_OPTIMIZER, "8-bit AdamW scales");
        if (!st)
            st = o->alloc(m->acct, &m->opt_vs, nb, AITK_MEM_OPTIMIZER, "8-bit AdamW scales");
    }
    if (!st && m->n_base8)
        st = o->alloc(m->acct, &m->dequant, (size_t)m->max_w_elems * f, AITK_MEM_WORKSPACE,
                      "fp8 dequantization");
    if (st) {
        aitk_str_appendf(err, "cannot allocate the %s model's weights and optimizer state: %s",
                         m->spec->id, aitk_strerror(st));
        return st;
    }
    for (size_t i = 0; i < m->n_t; i++) {
        step_tensor *t = &m->t[i];
        if (t->kind == AITK_STEP_T_LORA) {
            t->f = (float *)m->lora.ptr + t->offset;
            t->grad = (float *)m->grads.ptr + t->offset;
        } else if (t->kind == AITK_STEP_T_INPUT) {
            t->f = (float *)m->inputs.ptr + t->offset;
        } else if (t->fp8) {
            t->q = (uint8_t *)m->base8.ptr + t->offset;
        } else {
            t->f = (float *)m->base.ptr + t->offset;
        }
    }
    for (size_t i = 0; i < m->n_lin; i++) {
        step_linear *l = &m->lin[i];
        l->pw = m->t[l->w].f;
        l->w8 = m->t[l->w].q;
        l->pb = l->b >= 0 ? m->t[l->b].f : NULL;
        l->pla = l->la >= 0 ? m->t[l->la].f : NULL;
        l->plb = l->lb >= 0 ? m->t[l->lb].f : NULL;
        l->dla = l->la >= 0 ? m->t[l->la].grad : NULL;
        l->dlb = l->lb >= 0 ? m->t[l->lb].grad : NULL;
    }
    return AITK_OK;
}

/* Draws every tensor on the host and uploads it (quantized for fp8, rounded
 * for bf16). Inputs are drawn as unit-scale uniforms. */
aitk_status step_fill_tensors(aitk_step_model *m)
{
    size_t most = 0;
    for (size_t i = 0; i < m->n_t; i++)
        most = m->t[i].count > most ? m->t[i].count : most;
    float *h = aitk_malloc(most * sizeof *h);
    uint8_t *q = aitk_malloc(most);
    if (!h || !q) {
        aitk_free(h);
        aitk_free(q);
        return AITK_E_NOMEM;
    }
    aitk_status st = AITK_OK;
    for (size_t i = 0; i < m->n_t && !st; i++) {
        step_tensor *t = &m->t[i];
        float amax = 0;
        for (size_t j = 0; j < t->count; j++) {
            float v = aitk_step_draw(m->setup.seed, t->name, j, t->scale);
            h[j] = t->one_plus ? 1.0f + v : v;
            amax = fabsf(h[j]) > amax ? fabsf(h[j]) : amax;
        }
        if (t->fp8) {
            t->scale = amax > 0 ? amax / AITK_FP8_E4M3_MAX : 1.0f;
            st = m->ops->fp8_quantize(q, h, t->scale, t->count);
            if (!st)
                st = m->ops->upload(t->q, q, t->count);
            for (size_t l = 0; l < m->n_lin; l++)
                if (m->lin[l].w == (long)i)
                    m->lin[l].w8scale = t->scale;
            continue;
        }
        st = m->ops->upload(t->f, h, t->count * sizeof *h);
        if (!st && t->kind == AITK_STEP_T_BASE && m->setup.base == AITK_STEP_BASE_BF16)
            st = m->ops->bf16_round(t->f, t->count);
    }
    aitk_free(h);
    aitk_free(q);
    return st;
}

/* ---- running ---- */

aitk_status step_linear_forward(aitk_step_model *m, const step_linear *l, float *y, float *xa,
                                const float *x, int n)
{
    const float *w = l->pw;
    if (l->w8) {
        STEP_CHECK(m->ops->fp8_dequantize(m->dequant.ptr, l->w8, l->w8scale,
                                          (size_t)l->in * (size_t)l->out));
        w = m->dequant.ptr;
    }
    const double f = 2.0 * n * l->in * l->out + 2.0 * n * l->r * (l->in + l->out);
    m->flops += f;
    if (!m->recomputing)
        m->model_flops += f;
    return m->ops->lora_linear_forward(y, l->r ? xa : NULL, x, w, l->pb, l->pla, l->plb, n,
                                       l->in, l->out, l->r, m->lora_scale);
}

aitk_status step_linear_backward(aitk_step_model *m, const step_linear *l, float *dx,
                                 float *work, const float *dy, const float *x, const float *xa,
                                 int n, bool accumulate_dx)
{
    if (!dx && !l->r)
        return AITK_OK; /* a frozen linear whose input needs no gradient */
    /* Without dx the frozen weight is not read; an fp8 weight is then not
     * expanded (the kernel still wants a pointer). */
    const float *w = l->w8 ? m->dequant.ptr : l->pw;
    if (l->w8 && dx) {
        STEP_CHECK(m->ops->fp8_dequantize(m->dequant.ptr, l->w8, l->w8scale,
                                          (size_t)l->in * (size_t)l->out));
        w = m->dequant.ptr;
    }
    const double f = (dx ? 2.0 * n * l->in * l->out : 0) + 4.0 * n * l->r * (l->in + l->out);
    m->flops += f;
    m->model_flops += f;
    return m->ops->lora_linear_backward(dx, l->dla, l->dlb, work, dy, x, xa, w, l->pla,
                                        l->plb, n, l->in, l->out, l->r, m->lora_scale,
                                        accumulate_dx);
}

aitk_status step_attention_forward(aitk_step_model *m, float *out, float *lse, const float *q,
                                   const float *k, const float *v, int b, int t, int hq,
                                   int hkv, int d)
{
    const double f = 4.0 * b * (double)t * t * d * hq;
    m->flops += f;
    if (!m->recomputing)
        m->model_flops += f;
    return m->ops->attention_forward(out, lse, q, k, v, b, t, hq, hkv, d,
                                     (float)(1.0 / sqrt((double)d)));
}

aitk_status step_attention_backward(aitk_step_model *m, float *dq, float *dk, float *dv,
                                    const float *dout, const float *q, const float *k,
                                    const float *v, const float *out, const float *lse, int b,
                                    int t, int hq, int hkv, int d)
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
    const uint64_t s = (uint64_t)(m->step - 1);
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
