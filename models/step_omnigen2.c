/* OmniGen2: a single-stream GQA transformer (Lumina-2 style blocks) with
 * refiner layers, forward and backward of one LoRA step.
 *
 * Block (h: (B,Tb,C)), modulated or not (the context refiner is not):
 *   scale_msa, gate_msa, scale_mlp, gate_mlp = Mod(silu(temb))   (4 rows of C)
 *   a = RMSNorm1(h) (1 + scale_msa);  q (Hq heads), k, v (Hkv heads) = Linear(a)
 *   q,k = RMSNorm_head; RoPE; GQA attention;  h += gate_msa * RMSNorm2(Out(attn))
 *   f = RMSNorm3(h) (1 + scale_mlp);  h += gate_mlp * RMSNorm4(W2(silu(W1 f) * W3 f))
 * Differences from the published model, all without effect on the work: the
 * gates are used as they come (OmniGen2 applies tanh, which ops.h lacks: B x C
 * values per block); text-to-image training has no reference image, so the
 * ref_image_refiner's weights and adapters exist but it never runs.
 *
 * Model: temb = T2(silu(T1(sin(1000 t)))); captions c = Cap(RMSNorm(txt)),
 * image tokens x = X(x_t); context refiners on c (text RoPE rows), noise
 * refiners on x (image rows), then the layers over per-sample [c; x]; final:
 * LN(image rows) (1 + Linear(silu(temb))), proj_out. Positions: text (i,i,i),
 * image (Tt, row, col). Checkpointing, slots and scratch as step_flux.c:
 * activations in act_dtype addressed through step_act_at, statistics and
 * RoPE tables in fp32, host fp32 data in through upload_act. */
#include <limits.h>
#include <string.h>

#include "common/alloc.h"
#include "models/step_internal.h"

typedef struct og_block {
    bool mod;
    long lmod, q, k, v, out, w1, w2, w3;           /* linears */
    long n1, n2, n3, n4, nq, nk;                   /* norm tensors */
} og_block;

typedef struct og_acts {
    aitk_act *mod, *xa_mod, *n1, *a, *q_pre, *k_pre, *q, *k, *v;
    aitk_act *xa_q, *xa_k, *xa_v, *att, *o, *xa_o, *o2, *h1, *f1, *fm;
    aitk_act *u1, *u3, *sg, *xa_w1, *xa_w3, *xa_w2, *y, *y2;
    float *rstd1, *rstd_q, *rstd_k, *lse, *rstd2, *rstd3, *rstd4;
} og_acts;

typedef struct og_state {
    int C, Hq, Hkv, D, F, L, R, in_ch, feat, cond, freq, r, B, Ti, Tt, T;
    og_block *blk; /* R context refiners, R noise refiners, L layers */
    og_block *ref; /* R reference-image refiners: weights and adapters only */
    long x_emb, t1, t2, cap, cap_norm, norm_mod, proj_out, in_x0, in_txt;
    aitk_act *ckpt, *zeros, *junk;
    void *acts;
    float *cos, *sin, *pos;
    size_t *slot_off; /* per block, bytes into acts (the refiners' always) */
    size_t slot_max;  /* bytes */
    aitk_act *sc[8], *sf[3], *dmod, *work, *dres;
    aitk_act *ts, *e1, *e2, *temb, *stemb, *txtn;
    float *txt_rstd;
    float *fin_mean, *fin_rstd;
    aitk_act *fin_mod;
    step_host host; /* host staging */
} og_state;

static void carve(const og_state *g, step_bump *b, int tb, bool mod, og_acts *a)
{
    const size_t N = (size_t)g->B * (size_t)tb, C = (size_t)g->C, r = (size_t)g->r;
    const size_t qd = (size_t)g->Hq * g->D, kd = (size_t)g->Hkv * g->D, F = (size_t)g->F;
    a->mod = mod ? step_take_act(b, (size_t)g->B * 4 * C) : NULL;
    a->xa_mod = mod ? step_take_act(b, (size_t)g->B * r) : NULL;
    a->n1 = step_take_act(b, N * C);
    a->rstd1 = step_take_f32(b, N);
    a->a = mod ? step_take_act(b, N * C) : a->n1;
    a->q_pre = step_take_act(b, N * qd);
    a->k_pre = step_take_act(b, N * kd);
    a->rstd_q = step_take_f32(b, N * (size_t)g->Hq);
    a->rstd_k = step_take_f32(b, N * (size_t)g->Hkv);
    a->q = step_take_act(b, N * qd);
    a->k = step_take_act(b, N * kd);
    a->v = step_take_act(b, N * kd);
    a->xa_q = step_take_act(b, N * r);
    a->xa_k = step_take_act(b, N * r);
    a->xa_v = step_take_act(b, N * r);
    a->att = step_take_act(b, N * qd);
    a->lse = step_take_f32(b, N * (size_t)g->Hq);
    a->o = step_take_act(b, N * C);
    a->xa_o = step_take_act(b, N * r);
    a->o2 = step_take_act(b, N * C);
    a->rstd2 = step_take_f32(b, N);
    a->h1 = step_take_act(b, N * C);
    a->f1 = step_take_act(b, N * C);
    a->rstd3 = step_take_f32(b, N);
    a->fm = mod ? step_take_act(b, N * C) : a->f1;
    a->u1 = step_take_act(b, N * F);
    a->u3 = step_take_act(b, N * F);
    a->sg = step_take_act(b, N * F);
    a->xa_w1 = step_take_act(b, N * r);
    a->xa_w3 = step_take_act(b, N * r);
    a->xa_w2 = step_take_act(b, N * r);
    a->y = step_take_act(b, N * C);
    a->y2 = step_take_act(b, N * C);
    a->rstd4 = step_take_f32(b, N);
}

/* Row `row` of C-wide activation rows starting at p. */
static aitk_act *row_at(const aitk_step_model *m, aitk_act *p, size_t row, int c)
{
    return step_act_at(m, p, row * (size_t)c);
}

static aitk_status block_forward(aitk_step_model *m, og_state *g, const og_block *k, og_acts *a,
                                 int tb, const float *cs, const float *sn, const aitk_act *hin,
                                 aitk_act *hout)
{
    const aitk_ops *o = m->ops;
    const int C = g->C, B = g->B, N = B * tb, D = g->D;
    if (k->mod)
        STEP_CHECK(step_linear_forward(m, &m->lin[k->lmod], a->mod, a->xa_mod, g->stemb, B));
    STEP_CHECK(o->rmsnorm_forward(a->n1, a->rstd1, hin, step_a(m, k->n1), N, C, 1e-6f));
    if (k->mod)
        STEP_CHECK(o->modulate_forward(a->a, a->n1, g->zeros, a->mod, B, tb, C, 4 * C));
    STEP_CHECK(step_linear_forward(m, &m->lin[k->q], a->q_pre, a->xa_q, a->a, N));
    STEP_CHECK(step_linear_forward(m, &m->lin[k->k], a->k_pre, a->xa_k, a->a, N));
    STEP_CHECK(step_linear_forward(m, &m->lin[k->v], a->v, a->xa_v, a->a, N));
    STEP_CHECK(o->rmsnorm_forward(a->q, a->rstd_q, a->q_pre, step_a(m, k->nq), N * g->Hq, D,
                                  1e-6f));
    STEP_CHECK(o->rmsnorm_forward(a->k, a->rstd_k, a->k_pre, step_a(m, k->nk), N * g->Hkv, D,
                                  1e-6f));
    STEP_CHECK(o->rope_forward(a->q, a->q, cs, sn, B, tb, g->Hq, D));
    STEP_CHECK(o->rope_forward(a->k, a->k, cs, sn, B, tb, g->Hkv, D));
    STEP_CHECK(step_attention_forward(m, a->att, a->lse, a->q, a->k, a->v, B, tb, g->Hq, g->Hkv,
                                      D));
    STEP_CHECK(step_linear_forward(m, &m->lin[k->out], a->o, a->xa_o, a->att, N));
    STEP_CHECK(o->rmsnorm_forward(a->o2, a->rstd2, a->o, step_a(m, k->n2), N, C, 1e-6f));
    if (hout != hin)
        STEP_CHECK(o->copy2d(hout, C, hin, C, N, C));
    if (k->mod)
        STEP_CHECK(
            o->gated_residual_forward(hout, a->o2, row_at(m, a->mod, 1, C), B, tb, C, 4 * C));
    else
        STEP_CHECK(o->axpy(hout, 1.0f, a->o2, (size_t)N * C));
    STEP_CHECK(o->copy2d(a->h1, C, hout, C, N, C));
    STEP_CHECK(o->rmsnorm_forward(a->f1, a->rstd3, a->h1, step_a(m, k->n3), N, C, 1e-6f));
    if (k->mod)
        STEP_CHECK(
            o->modulate_forward(a->fm, a->f1, g->zeros, row_at(m, a->mod, 2, C), B, tb, C, 4 * C));
    STEP_CHECK(step_linear_forward(m, &m->lin[k->w1], a->u1, a->xa_w1, a->fm, N));
    STEP_CHECK(step_linear_forward(m, &m->lin[k->w3], a->u3, a->xa_w3, a->fm, N));
    STEP_CHECK(o->swiglu_forward(a->sg, a->u1, a->u3, (size_t)N * g->F));
    STEP_CHECK(step_linear_forward(m, &m->lin[k->w2], a->y, a->xa_w2, a->sg, N));
    STEP_CHECK(o->rmsnorm_forward(a->y2, a->rstd4, a->y, step_a(m, k->n4), N, C, 1e-6f));
    if (k->mod)
        return o->gated_residual_forward(hout, a->y2, row_at(m, a->mod, 3, C), B, tb, C, 4 * C);
    return o->axpy(hout, 1.0f, a->y2, (size_t)N * C);
}

/* dres (B,tb,C): gradient of the block output in, of its input out. */
static aitk_status block_backward(aitk_step_model *m, og_state *g, const og_block *k,
                                  og_acts *a, int tb, const float *cs, const float *sn,
                                  const aitk_act *hin, aitk_act *dres)
{
    const aitk_ops *o = m->ops;
    const int C = g->C, B = g->B, N = B * tb, D = g->D;
    const size_t NC = (size_t)N * C;
    aitk_act *d_y2 = g->sc[0], *d_y = g->sc[1], *d_fm = g->sc[2], *d_f1 = g->sc[3];
    aitk_act *d_tmp = g->sc[4], *d_a = g->sc[5], *dq = g->sc[6], *dqp = g->sc[7];
    /* FFN branch */
    if (k->mod)
        STEP_CHECK(o->gated_residual_backward(d_y2, row_at(m, g->dmod, 3, C), dres, a->y2,
                                              row_at(m, a->mod, 3, C), B, tb, C, 4 * C));
    STEP_CHECK(o->rmsnorm_backward(d_y, NULL, k->mod ? d_y2 : dres, a->y, step_a(m, k->n4),
                                   a->rstd4, N, C));
    STEP_CHECK(step_linear_backward(m, &m->lin[k->w2], g->sf[0], g->work, d_y, a->sg, a->xa_w2,
                                    N, false));
    STEP_CHECK(o->swiglu_backward(g->sf[1], g->sf[2], g->sf[0], a->u1, a->u3,
                                  (size_t)N * g->F));
    STEP_CHECK(step_linear_backward(m, &m->lin[k->w1], d_fm, g->work, g->sf[1], a->fm,
                                    a->xa_w1, N, false));
    STEP_CHECK(step_linear_backward(m, &m->lin[k->w3], d_fm, g->work, g->sf[2], a->fm,
                                    a->xa_w3, N, true));
    if (k->mod)
        STEP_CHECK(o->modulate_backward(d_f1, g->junk, row_at(m, g->dmod, 2, C), d_fm, a->f1,
                                        row_at(m, a->mod, 2, C), B, tb, C, 4 * C));
    STEP_CHECK(o->rmsnorm_backward(d_tmp, NULL, k->mod ? d_f1 : d_fm, a->h1, step_a(m, k->n3),
                                   a->rstd3, N, C));
    STEP_CHECK(o->axpy(dres, 1.0f, d_tmp, NC));
    /* attention branch */
    if (k->mod)
        STEP_CHECK(o->gated_residual_backward(d_y2, row_at(m, g->dmod, 1, C), dres, a->o2,
                                              row_at(m, a->mod, 1, C), B, tb, C, 4 * C));
    STEP_CHECK(o->rmsnorm_backward(d_y, NULL, k->mod ? d_y2 : dres, a->o, step_a(m, k->n2),
                                   a->rstd2, N, C));
    aitk_act *d_att = g->sc[0], *dk = g->sc[2], *dv = g->sc[3], *dkp = g->sc[4];
    STEP_CHECK(step_linear_backward(m, &m->lin[k->out], d_att, g->work, d_y, a->att, a->xa_o,
                                    N, false));
    STEP_CHECK(step_attention_backward(m, dq, dk, dv, d_att, a->q, a->k, a->v, a->att, a->lse,
                                       B, tb, g->Hq, g->Hkv, D));
    STEP_CHECK(o->rope_backward(dq, dq, cs, sn, B, tb, g->Hq, D));
    STEP_CHECK(o->rope_backward(dk, dk, cs, sn, B, tb, g->Hkv, D));
    STEP_CHECK(o->rmsnorm_backward(dqp, NULL, dq, a->q_pre, step_a(m, k->nq), a->rstd_q,
                                   N * g->Hq, D));
    STEP_CHECK(o->rmsnorm_backward(dkp, NULL, dk, a->k_pre, step_a(m, k->nk), a->rstd_k,
                                   N * g->Hkv, D));
    STEP_CHECK(step_linear_backward(m, &m->lin[k->q], d_a, g->work, dqp, a->a, a->xa_q, N,
                                    false));
    STEP_CHECK(step_linear_backward(m, &m->lin[k->k], d_a, g->work, dkp, a->a, a->xa_k, N,
                                    true));
    STEP_CHECK(step_linear_backward(m, &m->lin[k->v], d_a, g->work, dv, a->a, a->xa_v, N,
                                    true));
    aitk_act *d_n1 = d_a;
    if (k->mod) {
        d_n1 = g->sc[1];
        STEP_CHECK(o->modulate_backward(d_n1, g->junk, g->dmod, d_a, a->n1, a->mod, B, tb, C,
                                        4 * C));
    }
    STEP_CHECK(o->rmsnorm_backward(d_tmp, NULL, d_n1, hin, step_a(m, k->n1), a->rstd1, N, C));
    STEP_CHECK(o->axpy(dres, 1.0f, d_tmp, NC));
    if (k->mod)
        STEP_CHECK(step_linear_backward(m, &m->lin[k->lmod], NULL, g->work, g->dmod, g->stemb,
                                        a->xa_mod, B, false));
    return AITK_OK;
}

static aitk_status declare_block(aitk_step_model *m, og_state *g, og_block *k, const char *pre,
                                 int i, bool mod)
{
    const int C = g->C, qd = g->Hq * g->D, kd = g->Hkv * g->D;
    aitk_str n = AITK_STR_INIT;
    k->mod = mod;
    if (mod)
        STEP_CHECK(step_declare_linearf(m, &k->lmod, g->cond, 4 * C, true, true, "%s.%d.mod",
                                        pre, i));
    STEP_CHECK(step_declare_linearf(m, &k->q, C, qd, false, true, "%s.%d.q", pre, i));
    STEP_CHECK(step_declare_linearf(m, &k->k, C, kd, false, true, "%s.%d.k", pre, i));
    STEP_CHECK(step_declare_linearf(m, &k->v, C, kd, false, true, "%s.%d.v", pre, i));
    STEP_CHECK(step_declare_linearf(m, &k->out, qd, C, false, true, "%s.%d.out", pre, i));
    STEP_CHECK(step_declare_linearf(m, &k->w1, C, g->F, false, true, "%s.%d.ffn_w1", pre, i));
    STEP_CHECK(step_declare_linearf(m, &k->w3, C, g->F, false, true, "%s.%d.ffn_w3", pre, i));
    STEP_CHECK(step_declare_linearf(m, &k->w2, g->F, C, false, true, "%s.%d.ffn_w2", pre, i));
    static const char *const norms[6] = {"norm1", "norm2", "ffn_norm1", "ffn_norm2", "norm_q",
                                         "norm_k"};
    long *dst[6] = {&k->n1, &k->n2, &k->n3, &k->n4, &k->nq, &k->nk};
    aitk_status st = AITK_OK;
    for (int j = 0; j < 6 && !st; j++) {
        aitk_str_clear(&n);
        aitk_str_appendf(&n, "%s.%d.%s", pre, i, norms[j]);
        if (!(st = aitk_str_status(&n)))
            st = step_declare_norm(m, aitk_str_cstr(&n), j < 4 ? C : g->D, dst[j]);
    }
    aitk_str_free(&n);
    return st;
}

static aitk_status og_declare(aitk_step_model *m, aitk_str *err)
{
    og_state *g = aitk_calloc(1, sizeof *g);
    if (!g)
        return AITK_E_NOMEM;
    m->arch_state = g;
    const aitk_model_spec *s = m->spec;
    const aitk_block_spec *lb = step_spec_block(s, "layers");
    const aitk_block_spec *cb = step_spec_block(s, "context_refiner");
    const aitk_block_spec *eb = step_spec_block(s, "embed_in");
    const aitk_linear_spec *ffn = step_spec_linear(lb, "ffn_in");
    const aitk_linear_spec *mod = step_spec_linear(lb, "mod");
    const aitk_linear_spec *xe = step_spec_linear(eb, "x_embedder");
    const aitk_linear_spec *te = step_spec_linear(eb, "timestep_embedder");
    const aitk_linear_spec *ce = step_spec_linear(eb, "caption_embedder");
    if (!lb || !cb || !ffn || !mod || !xe || !te || !ce) {
        aitk_str_appendf(err, "model spec '%s' lacks a block or Linear the OmniGen2 step needs "
                              "(layers, context_refiner, embed_in)", s->id);
        return AITK_E_INVAL;
    }
    g->C = (int)s->hidden;
    g->Hq = (int)lb->heads;
    g->Hkv = (int)lb->kv_heads;
    g->D = (int)lb->head_dim;
    g->F = (int)ffn->out;
    g->L = (int)lb->count;
    g->R = (int)cb->count;
    g->in_ch = (int)xe->in;
    g->feat = (int)ce->in;
    g->cond = (int)mod->in;
    g->freq = (int)te->in;
    g->r = (int)m->setup.rank;
    g->B = (int)m->B;
    g->Ti = (int)m->Ti;
    g->Tt = (int)m->Tt;
    g->T = g->Ti + g->Tt;
    if (g->Hq < 1 || g->Hkv < 1 || g->Hq % g->Hkv || g->D < 2 || g->D % 2 ||
        (long)g->Hq * g->D != g->C || g->L < 1 || g->Tt < 1) {
        aitk_str_appendf(err, "model spec '%s': heads (%d) x head_dim (%d) must be hidden (%d), "
                              "heads a multiple of kv_heads (%d), head_dim even, layers (%d) and "
                              "text tokens (%d) at least 1", s->id, g->Hq, g->D, g->C, g->Hkv,
                         g->L, g->Tt);
        return AITK_E_INVAL;
    }
    if ((double)g->B * g->T * (double)(g->F > g->C ? g->F : g->C) > (double)INT_MAX) {
        aitk_str_appendf(err, "%d x %d tokens is past what one GEMM call takes", g->B, g->T);
        return AITK_E_RANGE;
    }
    const int nb = 2 * g->R + g->L;
    g->blk = aitk_calloc((size_t)nb, sizeof *g->blk);
    g->ref = aitk_calloc((size_t)(g->R > 0 ? g->R : 1), sizeof *g->ref);
    g->slot_off = aitk_calloc((size_t)nb + 1, sizeof *g->slot_off);
    if (!g->blk || !g->ref || !g->slot_off)
        return AITK_E_NOMEM;
    STEP_CHECK(step_declare(m, "x0", AITK_STEP_T_INPUT, 3, (long[]){g->B, g->Ti, g->in_ch}, 1.0f,
                            false, &g->in_x0));
    STEP_CHECK(step_declare(m, "txt", AITK_STEP_T_INPUT, 3, (long[]){g->B, g->Tt, g->feat}, 1.0f,
                            false, &g->in_txt));
    STEP_CHECK(step_declare_linearf(m, &g->x_emb, g->in_ch, g->C, true, false, "x_embedder"));
    STEP_CHECK(step_declare_linearf(m, &g->t1, g->freq, g->cond, true, false, "time_1"));
    STEP_CHECK(step_declare_linearf(m, &g->t2, g->cond, g->cond, true, false, "time_2"));
    STEP_CHECK(step_declare_norm(m, "caption_norm", g->feat, &g->cap_norm));
    STEP_CHECK(step_declare_linearf(m, &g->cap, g->feat, g->C, true, false, "caption_embedder"));
    for (int i = 0; i < g->R; i++) {
        STEP_CHECK(declare_block(m, g, &g->blk[i], "context_refiner", i, false));
        STEP_CHECK(declare_block(m, g, &g->blk[g->R + i], "noise_refiner", i, true));
        /* Text-to-image steps have no reference image: the refiner runs over
         * 0 tokens, but its weights and adapters (zero gradient; the update
         * still applies weight decay) take memory as in the real model. */
        STEP_CHECK(declare_block(m, g, &g->ref[i], "ref_image_refiner", i, true));
    }
    for (int i = 0; i < g->L; i++)
        STEP_CHECK(declare_block(m, g, &g->blk[2 * g->R + i], "layers", i, true));
    STEP_CHECK(step_declare_linearf(m, &g->norm_mod, g->cond, g->C, true, false, "norm_out_mod"));
    return step_declare_linearf(m, &g->proj_out, g->C, g->in_ch, true, false, "proj_out");
}

/* Tokens of block i: context refiners over text, noise refiners over the
 * image, layers over both. */
static int block_tokens(const og_state *g, int i)
{
    return i < g->R ? g->Tt : i < 2 * g->R ? g->Ti : g->T;
}

/* Hidden states in the checkpoint arena: the context refiners' R + 1 (inputs,
 * then their output), the noise refiners' R + 1, the layers' L + 1. */
static aitk_act *ctx_state(const aitk_step_model *m, const og_state *g, int j)
{
    return step_act_at(m, g->ckpt, (size_t)j * (size_t)g->B * (size_t)g->Tt * (size_t)g->C);
}

static aitk_act *noise_state(const aitk_step_model *m, const og_state *g, int j)
{
    return step_act_at(m, ctx_state(m, g, g->R + 1),
                       (size_t)j * (size_t)g->B * (size_t)g->Ti * (size_t)g->C);
}

static aitk_act *main_state(const aitk_step_model *m, const og_state *g, int j)
{
    return step_act_at(m, noise_state(m, g, g->R + 1),
                       (size_t)j * (size_t)g->B * (size_t)g->T * (size_t)g->C);
}

/* Input and output of block i (0..R-1 context, R..2R-1 noise, then layers). */
static void block_io(const aitk_step_model *m, const og_state *g, int i, aitk_act **in,
                     aitk_act **out)
{
    if (i < g->R) {
        *in = ctx_state(m, g, i);
        *out = ctx_state(m, g, i + 1);
    } else if (i < 2 * g->R) {
        *in = noise_state(m, g, i - g->R);
        *out = noise_state(m, g, i - g->R + 1);
    } else {
        *in = main_state(m, g, i - 2 * g->R);
        *out = main_state(m, g, i - 2 * g->R + 1);
    }
}

/* RoPE rows of block i: text rows, image rows, or all. */
static size_t rope_row(const og_state *g, int i)
{
    return i >= g->R && i < 2 * g->R ? (size_t)g->Tt * (size_t)(g->D / 2) : 0;
}

/* ALLOC: activation elements; ALLOC_F32: fp32 values; ALLOC_BYTES: a slot. */
#define ALLOC(ptr, n, tag, what) STEP_CHECK(step_alloc_acts(m, (n), (tag), (what), &(ptr)))
#define ALLOC_F32(ptr, n, tag, what) \
    STEP_CHECK(step_alloc_floats(m, (n), (tag), (what), &(ptr)))
#define ALLOC_BYTES(ptr, n, tag, what) \
    STEP_CHECK(step_alloc_bytes(m, (n), (tag), (what), &(ptr)))

static aitk_status og_alloc(aitk_step_model *m, aitk_str *err)
{
    (void)err;
    og_state *g = m->arch_state;
    const int nb = 2 * g->R + g->L;
    const size_t C = (size_t)g->C, B = (size_t)g->B, N = B * (size_t)g->T, NC = N * C;
    const size_t Ni = B * (size_t)g->Ti, lat = Ni * (size_t)g->in_ch;
    og_acts a;
    for (int i = 0; i < nb; i++) {
        step_bump meas = {m->ops, NULL, 0};
        carve(g, &meas, block_tokens(g, i), g->blk[i].mod, &a);
        g->slot_off[i + 1] = g->slot_off[i] + meas.used;
        g->slot_max = meas.used > g->slot_max ? meas.used : g->slot_max;
    }
    const size_t states = (size_t)(g->R + 1) * B * (size_t)(g->Tt + g->Ti) * C +
                          (size_t)(g->L + 1) * NC;
    ALLOC(g->ckpt, states, AITK_MEM_ACTIVATIONS, "block inputs (checkpoints)");
    if (m->setup.checkpointing)
        ALLOC_BYTES(g->acts, g->slot_off[2 * g->R] + g->slot_max, AITK_MEM_ACTIVATIONS,
                    "the refiners' and one layer's saved activations");
    else
        ALLOC_BYTES(g->acts, g->slot_off[nb], AITK_MEM_ACTIVATIONS,
                    "every block's saved activations");
    /* Between the forward and the blocks' backward the scratch also holds the
     * final layer: latent-sized prediction, target and gradient. */
    for (int i = 0; i < 8; i++)
        ALLOC(g->sc[i], NC > lat ? NC : lat, AITK_MEM_GRADIENTS,
              "activation gradients of one block");
    /* sf[0] also stages x_t before the frozen embedder */
    for (int i = 0; i < 3; i++)
        ALLOC(g->sf[i], i == 0 && lat > N * (size_t)g->F ? lat : N * (size_t)g->F,
              AITK_MEM_GRADIENTS, "FFN activation gradients");
    ALLOC(g->dmod, B * 4 * C, AITK_MEM_GRADIENTS, "modulation gradients");
    ALLOC(g->junk, B * 4 * C, AITK_MEM_GRADIENTS, "gradient of the absent shift");
    ALLOC(g->work, N * (size_t)g->r, AITK_MEM_GRADIENTS, "LoRA backward scratch");
    ALLOC(g->dres, NC, AITK_MEM_GRADIENTS, "residual-stream gradient");
    ALLOC(g->zeros, B * 4 * C, AITK_MEM_WORKSPACE, "zero shift");
    ALLOC_F32(g->pos, (size_t)g->T * 3, AITK_MEM_WORKSPACE, "token positions");
    ALLOC_F32(g->cos, (size_t)g->T * (size_t)g->D / 2, AITK_MEM_WORKSPACE, "RoPE cos");
    ALLOC_F32(g->sin, (size_t)g->T * (size_t)g->D / 2, AITK_MEM_WORKSPACE, "RoPE sin");
    const size_t cw = (size_t)(g->freq > g->cond ? g->freq : g->cond);
    ALLOC(g->ts, B * cw, AITK_MEM_WORKSPACE, "timestep embedding");
    ALLOC(g->e1, B * cw, AITK_MEM_WORKSPACE, "conditioning scratch");
    ALLOC(g->e2, B * cw, AITK_MEM_WORKSPACE, "conditioning scratch");
    ALLOC(g->temb, B * (size_t)g->cond, AITK_MEM_ACTIVATIONS, "conditioning vector");
    ALLOC(g->stemb, B * (size_t)g->cond, AITK_MEM_ACTIVATIONS, "silu(conditioning)");
    ALLOC(g->txtn, B * (size_t)g->Tt * (size_t)g->feat, AITK_MEM_WORKSPACE, "caption norm");
    ALLOC_F32(g->txt_rstd, B * (size_t)g->Tt, AITK_MEM_WORKSPACE, "caption norm statistics");
    ALLOC_F32(g->fin_mean, Ni, AITK_MEM_ACTIVATIONS, "final LayerNorm statistics");
    ALLOC_F32(g->fin_rstd, Ni, AITK_MEM_ACTIVATIONS, "final LayerNorm statistics");
    ALLOC(g->fin_mod, B * C, AITK_MEM_ACTIVATIONS, "final scale rows");
    STEP_CHECK(step_host_alloc(&g->host, lat, B, B * (size_t)g->freq + (size_t)g->T * 3));
    return step_rope_tables(m, g->host.scratch, g->Tt, g->Ti, false, g->D, g->pos, g->cos,
                            g->sin);
}

/* Another bucket, within the buffers of the built one: the image and joint
 * token counts, x0 and the RoPE tables follow; slots keep their built
 * offsets (each block's carving of fewer rows fits in its slot), and the
 * hidden states are addressed from the counts as they run. */
static aitk_status og_set_tokens(aitk_step_model *m)
{
    og_state *g = m->arch_state;
    g->Ti = (int)m->Ti;
    g->T = g->Ti + g->Tt;
    STEP_CHECK(step_redraw_input(m, g->in_x0, m->Ti));
    return step_rope_tables(m, g->host.scratch, g->Tt, g->Ti, false, g->D, g->pos, g->cos,
                            g->sin);
}

static void og_free(aitk_step_model *m)
{
    og_state *g = m->arch_state;
    if (!g)
        return;
    aitk_free(g->blk);
    aitk_free(g->ref);
    aitk_free(g->slot_off);
    step_host_free(&g->host);
    aitk_free(g);
    m->arch_state = NULL;
}

/* With gradient checkpointing only the joint layers run their forward again
 * before their backward, one at a time in one shared slot; the refiners keep
 * what they saved, as in ai-toolkit's OmniGen2, whose
 * _gradient_checkpointing_func wraps self.layers alone (ostris/ai-toolkit
 * extensions_built_in/diffusion_models/omnigen2/src/models/transformers/
 * transformer_omnigen2.py @27a03a91f2). */
static bool recomputes(const og_state *g, bool ck, int i)
{
    return ck && i >= 2 * g->R;
}

static og_acts slot(const aitk_step_model *m, const og_state *g, bool ck, int i)
{
    const size_t off = recomputes(g, ck, i) ? g->slot_off[2 * g->R] : g->slot_off[i];
    step_bump b = {m->ops, (unsigned char *)g->acts + off, 0};
    og_acts a;
    carve(g, &b, block_tokens(g, i), g->blk[i].mod, &a);
    return a;
}

/* joint (B,T,C) with [txt; img] per sample <-> txt (B,Tt,C), img (B,Ti,C) */
static aitk_status og_join(const aitk_ops *o, const og_state *g, aitk_act *joint,
                           aitk_act *txt, aitk_act *img, bool split)
{
    const int C = g->C, Tt = g->Tt, Ti = g->Ti;
    const size_t c = (size_t)C;
    for (int b = 0; b < g->B; b++) {
        aitk_act *row = aitk_act_at(o, joint, (size_t)b * (size_t)g->T * c);
        aitk_act *rimg = aitk_act_at(o, row, (size_t)Tt * c);
        aitk_act *t = aitk_act_at(o, txt, (size_t)b * (size_t)Tt * c);
        aitk_act *x = aitk_act_at(o, img, (size_t)b * (size_t)Ti * c);
        if (split) {
            STEP_CHECK(o->copy2d(t, C, row, C, Tt, C));
            STEP_CHECK(o->copy2d(x, C, rimg, C, Ti, C));
        } else {
            STEP_CHECK(o->copy2d(row, C, t, C, Tt, C));
            STEP_CHECK(o->copy2d(rimg, C, x, C, Ti, C));
        }
    }
    return AITK_OK;
}

static aitk_status og_final(aitk_step_model *m, og_state *g, double *loss)
{
    const aitk_ops *o = m->ops;
    const int C = g->C, B = g->B, Ti = g->Ti, Ni = B * Ti;
    const size_t lat = (size_t)Ni * (size_t)g->in_ch;
    const aitk_act *h = main_state(m, g, g->L);
    const size_t T = (size_t)g->T, Tt = (size_t)g->Tt;
    /* in gradient scratch: free between the forward and the blocks' backward */
    aitk_act *target = g->sc[5], *pred = g->sc[6], *dpred = g->sc[7];
    aitk_act *fin_ln = g->sc[3], *fin_x = g->sc[4];
    STEP_CHECK(o->upload_act(target, g->host.target, lat));
    STEP_CHECK(step_linear_forward(m, &m->lin[g->norm_mod], g->fin_mod, NULL, g->stemb, B));
    /* each sample's image rows are contiguous in h: normalized where they
     * are, one sample (and its scale row) per call; the shift is zero */
    for (int b = 0; b < B; b++) {
        const size_t row = (size_t)b * Ti, img = (b * T + Tt) * (size_t)C;
        STEP_CHECK(o->layernorm_modulate_forward(
            row_at(m, fin_x, row, C), row_at(m, fin_ln, row, C), g->fin_mean + row,
            g->fin_rstd + row, step_act_cat(m, h, img), row_at(m, g->zeros, (size_t)b, C),
            row_at(m, g->fin_mod, (size_t)b, C), 1, Ti, C, C, 1e-6f));
    }
    STEP_CHECK(step_output_loss(m, &m->lin[g->proj_out], fin_x, pred, target, dpred, g->sc[0],
                                g->work, Ni, lat, loss));
    STEP_CHECK(o->zero(g->dres, aitk_dtype_bytes(o->act_dtype, (size_t)B * g->T * C)));
    for (int b = 0; b < B; b++) {
        const size_t row = (size_t)b * Ti, img = (b * T + Tt) * (size_t)C;
        STEP_CHECK(o->layernorm_modulate_backward(
            step_act_at(m, g->dres, img), row_at(m, g->junk, (size_t)b, C),
            row_at(m, g->dmod, (size_t)b, C), row_at(m, g->sc[0], row, C),
            step_act_cat(m, h, img), row_at(m, fin_ln, row, C), g->fin_mean + row,
            g->fin_rstd + row, row_at(m, g->fin_mod, (size_t)b, C), 1, Ti, C, C));
    }
    return AITK_OK;
}

static aitk_status og_forward_backward(aitk_step_model *m, double *loss)
{
    og_state *g = m->arch_state;
    const aitk_ops *o = m->ops;
    const bool ck = m->setup.checkpointing;
    const int nb = 2 * g->R + g->L, B = g->B;
    const size_t lat = (size_t)B * g->Ti * g->in_ch, fr = (size_t)g->freq;
    STEP_CHECK(o->download_act(g->host.x0, step_a(m, g->in_x0), lat));
    STEP_CHECK(step_flow_inputs(m, g->host.x0, g->host.xt, g->host.target, g->host.t, g->in_ch));
    aitk_act *xt = g->sf[0]; /* x_t only feeds the frozen embedder */
    STEP_CHECK(o->upload_act(xt, g->host.xt, lat));
    for (int b = 0; b < B; b++)
        step_sinusoid(g->host.scratch + b * fr, (double)g->host.t[b] * 1000.0, g->freq);
    STEP_CHECK(o->upload_act(g->ts, g->host.scratch, B * fr));
    STEP_CHECK(step_linear_forward(m, &m->lin[g->t1], g->e1, NULL, g->ts, B));
    STEP_CHECK(o->silu_forward(g->e2, g->e1, (size_t)B * g->cond));
    STEP_CHECK(step_linear_forward(m, &m->lin[g->t2], g->temb, NULL, g->e2, B));
    STEP_CHECK(o->silu_forward(g->stemb, g->temb, (size_t)B * g->cond));
    STEP_CHECK(o->rmsnorm_forward(g->txtn, g->txt_rstd, step_a(m, g->in_txt),
                                  step_a(m, g->cap_norm), B * g->Tt, g->feat, 1e-6f));
    STEP_CHECK(step_linear_forward(m, &m->lin[g->cap], ctx_state(m, g, 0), NULL, g->txtn,
                                   B * g->Tt));
    STEP_CHECK(step_linear_forward(m, &m->lin[g->x_emb], noise_state(m, g, 0), NULL, xt,
                                   B * g->Ti));
    for (int i = 0; i < nb; i++) {
        if (i == 2 * g->R)
            STEP_CHECK(og_join(o, g, main_state(m, g, 0), ctx_state(m, g, g->R),
                               noise_state(m, g, g->R), false));
        aitk_act *in, *out;
        block_io(m, g, i, &in, &out);
        og_acts a = slot(m, g, ck, i);
        const size_t rr = rope_row(g, i);
        STEP_CHECK(block_forward(m, g, &g->blk[i], &a, block_tokens(g, i), g->cos + rr,
                                 g->sin + rr, in, out));
    }
    STEP_CHECK(og_final(m, g, loss));
    /* the refiners' gradients take dres's place, split from a copy */
    aitk_act *d_txt = g->dres;
    aitk_act *d_img = step_act_at(m, g->dres, (size_t)B * g->Tt * g->C);
    for (int i = nb - 1; i >= 0; i--) {
        if (i == 2 * g->R - 1) {
            STEP_CHECK(o->copy2d(g->sc[0], g->C, g->dres, g->C, B * g->T, g->C));
            STEP_CHECK(og_join(o, g, g->sc[0], d_txt, d_img, true));
        }
        aitk_act *d = i >= 2 * g->R ? g->dres : i >= g->R ? d_img : d_txt;
        aitk_act *in, *out;
        block_io(m, g, i, &in, &out);
        og_acts a = slot(m, g, ck, i);
        const size_t rr = rope_row(g, i);
        const int tb = block_tokens(g, i);
        if (recomputes(g, ck, i)) {
            m->recomputing = true;
            /* the recomputed output is not needed: gradient scratch takes it */
            aitk_status st = block_forward(m, g, &g->blk[i], &a, tb, g->cos + rr, g->sin + rr,
                                           in, g->sc[7]);
            m->recomputing = false;
            STEP_CHECK(st);
        }
        STEP_CHECK(block_backward(m, g, &g->blk[i], &a, tb, g->cos + rr, g->sin + rr, in, d));
    }
    return AITK_OK;
}

const step_arch step_arch_omnigen2 = {
    .declare = og_declare,
    .alloc = og_alloc,
    .forward_backward = og_forward_backward,
    .set_tokens = og_set_tokens,
    .free = og_free,
};
