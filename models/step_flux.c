/* FLUX.1-dev and Chroma: the MMDiT transformer's blocks, forward and
 * backward (diffusers' FluxTransformerBlock and FluxSingleTransformerBlock).
 *
 * Double block, per stream s (img, txt), modulation m_s = 6 rows of C:
 *   x1 = LN(h) (1 + m1) + m0;  q,k,v = Linear(x1); q,k = RMSNorm_head(q,k)
 *   joint attention over [txt; img] with RoPE;  h += m2 * Out_s(attn_s)
 *   x2 = LN(h) (1 + m4) + m3;  h += m5 * Mlp2(gelu_tanh(Mlp1(x2)))
 * Single block over the joint tokens, modulation 3 rows:
 *   x = LN(h) (1 + m1) + m0;  a = attn(q,k,v of x);  u = gelu(Mlp1(x))
 *   h += m2 * Out([a | u])
 * FLUX computes the modulation rows with a LoRA Linear of silu(vec) per
 * block; Chroma takes them from its approximator's output (step_flux_run.c).
 *
 * Hidden states: a double block's input/output is [img (B,Ti,C) | txt
 * (B,Tt,C)]; a single block's is (B,T,C) with [txt; img] per sample.
 * Saved activations of a block live in one slot of bytes (carved in a fixed
 * order by carve_double/carve_single: activations in act_dtype, statistics
 * in fp32); with checkpointing all blocks share one slot and backward first
 * recomputes the block from its saved input. Activation gradients use one
 * shared scratch set (8 (N,C), one (N,M), one (N,C+M)). Offsets into
 * activation buffers go through step_act_at, which knows the element size. */
#include <string.h>

#include "models/step_flux.h"

/* The bump allocator rounds every piece to 64 bytes, so the order of the
 * pieces changes no slot's size. */
static void carve_attention(const flux_state *f, step_bump *b, flux_attn_acts *at)
{
    const size_t C = (size_t)f->C, N = f->N, H = (size_t)f->H;
    at->q_pre = step_take_act(b, N * C);
    at->k_pre = step_take_act(b, N * C);
    at->rstd_q = step_take_f32(b, N * H);
    at->rstd_k = step_take_f32(b, N * H);
    at->q = step_take_act(b, N * C);
    at->k = step_take_act(b, N * C);
    at->v = step_take_act(b, N * C);
    at->att = step_take_act(b, N * C);
    at->lse = step_take_f32(b, N * H);
}

void flux_carve_double(const flux_state *f, step_bump *b, flux_dacts *a)
{
    const size_t C = (size_t)f->C, M = (size_t)f->M, r = (size_t)f->r, B = (size_t)f->B;
    const size_t N = f->N;
    for (int s = 0; s < 2; s++) {
        const size_t ns = f->Ns[s];
        a->mod[s] = f->chroma ? NULL : step_take_act(b, B * 6 * C);
        a->xa_mod[s] = f->chroma ? NULL : step_take_act(b, B * r);
        a->ln1[s] = step_take_act(b, ns * C);
        a->mean1[s] = step_take_f32(b, ns);
        a->rstd1[s] = step_take_f32(b, ns);
        a->x1[s] = step_take_act(b, ns * C);
        for (int j = 0; j < 3; j++)
            a->xa_qkv[s][j] = step_take_act(b, ns * r);
        a->xa_o[s] = step_take_act(b, ns * r);
        a->o[s] = step_take_act(b, ns * C);
        a->ln2[s] = step_take_act(b, ns * C);
        a->mean2[s] = step_take_f32(b, ns);
        a->rstd2[s] = step_take_f32(b, ns);
        a->x2[s] = step_take_act(b, ns * C);
        a->u[s] = step_take_act(b, ns * M);
        a->g[s] = step_take_act(b, ns * M);
        a->xa_m1[s] = step_take_act(b, ns * r);
        a->xa_m2[s] = step_take_act(b, ns * r);
        a->f[s] = step_take_act(b, ns * C);
    }
    carve_attention(f, b, &a->attn);
    a->h1 = step_take_act(b, N * C);
}

void flux_carve_single(const flux_state *f, step_bump *b, flux_sacts *a)
{
    const size_t C = (size_t)f->C, M = (size_t)f->M, r = (size_t)f->r, B = (size_t)f->B;
    const size_t N = f->N;
    a->mod = f->chroma ? NULL : step_take_act(b, B * 3 * C);
    a->xa_mod = f->chroma ? NULL : step_take_act(b, B * r);
    a->ln = step_take_act(b, N * C);
    a->mean = step_take_f32(b, N);
    a->rstd = step_take_f32(b, N);
    a->x1 = step_take_act(b, N * C);
    carve_attention(f, b, &a->attn);
    for (int j = 0; j < 3; j++)
        a->xa_qkv[j] = step_take_act(b, N * r);
    a->u = step_take_act(b, N * M);
    a->xa_m1 = step_take_act(b, N * r);
    a->cat = step_take_act(b, N * (C + M));
    a->xa_out = step_take_act(b, N * r);
    a->o = step_take_act(b, N * C);
}

void flux_carve_grads(const flux_state *f, step_bump *b, flux_gscratch *g)
{
    const size_t C = (size_t)f->C, M = (size_t)f->M, r = (size_t)f->r, N = f->N;
    /* Between the forward and the blocks' backward the scratch also holds
     * the final layer (latent-sized prediction, target, gradient) and,
     * before the embedder, x_t. */
    const size_t lat = f->Ns[0] * (size_t)f->in_ch;
    for (int i = 0; i < 8; i++)
        g->sc[i] = step_take_act(b, N * C > lat ? N * C : lat);
    g->sm[0] = step_take_act(b, N * M > lat ? N * M : lat);
    g->cm = step_take_act(b, N * (C + M));
    /* Modulation-row gradients share the rows' layout: FLUX's (B,6C) per
     * stream, Chroma's (B,V,C) (the gradient of the approximator's output). */
    g->dmods = step_take_act(b, (size_t)f->B * (f->chroma ? (size_t)f->V * C : 12 * C));
    g->work = step_take_act(b, N * (r > 0 ? r : 1));
}


/* Per-head RMSNorm of one stream's rows of a joint (B,T,C) buffer. */
static aitk_status head_norm_fwd(aitk_step_model *m, const flux_state *f, aitk_act *out,
                                 float *rstd, const aitk_act *in, const aitk_act *w, int s)
{
    for (int b = 0; b < f->B; b++) {
        const size_t row = (size_t)b * (size_t)f->T + (size_t)f->joff[s];
        const size_t at = row * (size_t)f->C;
        STEP_CHECK(m->ops->rmsnorm_forward(step_act_at(m, out, at), rstd + row * f->H,
                                           step_act_cat(m, in, at), w, f->Ts[s] * f->H, f->D,
                                           1e-6f));
    }
    return AITK_OK;
}

static aitk_status head_norm_bwd(aitk_step_model *m, const flux_state *f, aitk_act *din,
                                 const aitk_act *dout, const aitk_act *in, const aitk_act *w,
                                 const float *rstd, int s)
{
    for (int b = 0; b < f->B; b++) {
        const size_t row = (size_t)b * (size_t)f->T + (size_t)f->joff[s];
        const size_t at = row * (size_t)f->C;
        STEP_CHECK(m->ops->rmsnorm_backward(step_act_at(m, din, at), NULL,
                                            step_act_cat(m, dout, at), step_act_cat(m, in, at),
                                            w, rstd + row * f->H, f->Ts[s] * f->H, f->D));
    }
    return AITK_OK;
}

/* One stream's Linear writing into / reading from its rows of a joint buffer. */
static aitk_status joint_lin_fwd(aitk_step_model *m, const flux_state *f, const step_linear *l,
                                 aitk_act *joint_y, aitk_act *xa, const aitk_act *x, int s,
                                 bool y_joint)
{
    const int ts = f->Ts[s];
    for (int b = 0; b < f->B; b++) {
        const size_t jrow = (size_t)b * (size_t)f->T + (size_t)f->joff[s];
        const size_t srow = (size_t)b * (size_t)ts;
        const size_t yrow = y_joint ? jrow : srow, xrow = y_joint ? srow : jrow;
        STEP_CHECK(step_linear_forward(m, l, step_act_at(m, joint_y, yrow * (size_t)l->out),
                                       step_act_at(m, xa, srow * (size_t)f->r),
                                       step_act_cat(m, x, xrow * (size_t)l->in), ts));
    }
    return AITK_OK;
}

static aitk_status joint_lin_bwd(aitk_step_model *m, const flux_state *f, const step_linear *l,
                                 aitk_act *dx, aitk_act *work, const aitk_act *dy,
                                 const aitk_act *x, const aitk_act *xa, int s, bool y_joint,
                                 bool acc)
{
    const int ts = f->Ts[s];
    for (int b = 0; b < f->B; b++) {
        const size_t jrow = (size_t)b * (size_t)f->T + (size_t)f->joff[s];
        const size_t srow = (size_t)b * (size_t)ts;
        const size_t yrow = y_joint ? jrow : srow, xrow = y_joint ? srow : jrow;
        STEP_CHECK(step_linear_backward(m, l, step_act_at(m, dx, xrow * (size_t)l->in), work,
                                        step_act_cat(m, dy, yrow * (size_t)l->out),
                                        step_act_cat(m, x, xrow * (size_t)l->in),
                                        step_act_cat(m, xa, srow * (size_t)f->r), ts, acc));
    }
    return AITK_OK;
}

/* Row `row` of C-wide activation rows starting at p. */
static aitk_act *row_at(const aitk_step_model *m, aitk_act *p, size_t row, int c)
{
    return step_act_at(m, p, row * (size_t)c);
}

static const aitk_act *row_cat(const aitk_step_model *m, const aitk_act *p, size_t row, int c)
{
    return step_act_cat(m, p, row * (size_t)c);
}

aitk_status flux_double_forward(aitk_step_model *m, flux_state *f, int i, flux_dacts *a,
                                const aitk_act *hin, aitk_act *hout)
{
    const flux_attn_acts *at = &a->attn;
    const aitk_ops *o = m->ops;
    const flux_double *d = &f->dbl[i];
    const int C = f->C, B = f->B;
    const aitk_act *hs[2] = {hin, row_cat(m, hin, f->rowoff[1], C)};
    aitk_act *ho[2] = {hout, row_at(m, hout, f->rowoff[1], C)};
    aitk_act *ms[2];
    const int ld = f->chroma ? f->V * C : 6 * C;
    for (int s = 0; s < 2; s++) {
        if (f->chroma) {
            ms[s] = row_at(m, f->mods, (size_t)(12 * i + 6 * s), C);
        } else {
            ms[s] = a->mod[s];
            STEP_CHECK(step_linear_forward(m, &m->lin[d->mod[s]], a->mod[s], a->xa_mod[s],
                                           f->svec, B));
        }
        STEP_CHECK(o->layernorm_modulate_forward(a->x1[s], a->ln1[s], a->mean1[s], a->rstd1[s],
                                                 hs[s], ms[s], row_at(m, ms[s], 1, C), B,
                                                 f->Ts[s], C, ld, 1e-6f));
        aitk_act *dst[3] = {at->q_pre, at->k_pre, at->v};
        for (int j = 0; j < 3; j++)
            STEP_CHECK(joint_lin_fwd(m, f, &m->lin[d->qkv[s][j]], dst[j], a->xa_qkv[s][j],
                                     a->x1[s], s, true));
        STEP_CHECK(head_norm_fwd(m, f, at->q, at->rstd_q, at->q_pre, step_a(m, d->nq[s]), s));
        STEP_CHECK(head_norm_fwd(m, f, at->k, at->rstd_k, at->k_pre, step_a(m, d->nk[s]), s));
    }
    STEP_CHECK(o->rope_forward(at->q, at->q, f->cos, f->sin, B, f->T, f->H, f->D));
    STEP_CHECK(o->rope_forward(at->k, at->k, f->cos, f->sin, B, f->T, f->H, f->D));
    STEP_CHECK(step_attention_forward(m, at->att, at->lse, at->q, at->k, at->v, B, f->T, f->H, f->H,
                                      f->D));
    if (hout != hin)
        STEP_CHECK(o->copy2d(hout, C, hin, C, (int)f->N, C));
    for (int s = 0; s < 2; s++) {
        STEP_CHECK(joint_lin_fwd(m, f, &m->lin[d->out[s]], a->o[s], a->xa_o[s], at->att, s,
                                 false));
        STEP_CHECK(o->gated_residual_forward(ho[s], a->o[s], row_at(m, ms[s], 2, C), B,
                                             f->Ts[s], C, ld));
    }
    STEP_CHECK(o->copy2d(a->h1, C, hout, C, (int)f->N, C));
    for (int s = 0; s < 2; s++) {
        const int ns = (int)f->Ns[s];
        const aitk_act *h1 = row_cat(m, a->h1, f->rowoff[s], C);
        STEP_CHECK(o->layernorm_modulate_forward(a->x2[s], a->ln2[s], a->mean2[s], a->rstd2[s],
                                                 h1, row_at(m, ms[s], 3, C),
                                                 row_at(m, ms[s], 4, C), B, f->Ts[s], C, ld,
                                                 1e-6f));
        STEP_CHECK(step_linear_forward(m, &m->lin[d->mlp1[s]], a->u[s], a->xa_m1[s], a->x2[s],
                                       ns));
        STEP_CHECK(o->gelu_forward(a->g[s], a->u[s], (size_t)ns * (size_t)f->M));
        STEP_CHECK(step_linear_forward(m, &m->lin[d->mlp2[s]], a->f[s], a->xa_m2[s], a->g[s],
                                       ns));
        STEP_CHECK(o->gated_residual_forward(ho[s], a->f[s], row_at(m, ms[s], 5, C), B,
                                             f->Ts[s], C, ld));
    }
    return AITK_OK;
}

/* dres [img|txt] (N,C): the gradient of the block's output on entry, of its
 * input on return (the residual stream passes through, branches add). */
aitk_status flux_double_backward(aitk_step_model *m, flux_state *f, int i, flux_dacts *a,
                                 flux_gscratch *g, const aitk_act *hin, aitk_act *dres)
{
    const flux_attn_acts *at = &a->attn;
    const aitk_ops *o = m->ops;
    const flux_double *d = &f->dbl[i];
    const int C = f->C, B = f->B;
    aitk_act *ms[2], *dms[2];
    const int ld = f->chroma ? f->V * C : 6 * C;
    for (int s = 0; s < 2; s++) {
        const size_t v0 = (size_t)(12 * i + 6 * s);
        ms[s] = f->chroma ? row_at(m, f->mods, v0, C) : a->mod[s];
        dms[s] = f->chroma ? row_at(m, g->dmods, v0, C)
                           : row_at(m, g->dmods, (size_t)s * (size_t)B * 6, C);
    }
    for (int s = 0; s < 2; s++) {
        const int ns = (int)f->Ns[s];
        const size_t r0 = f->rowoff[s];
        aitk_act *dr = row_at(m, dres, r0, C), *d_f = row_at(m, g->sc[0], r0, C);
        aitk_act *d_x2 = row_at(m, g->sc[1], r0, C), *d_tmp = row_at(m, g->sc[3], r0, C);
        STEP_CHECK(o->gated_residual_backward(d_f, row_at(m, dms[s], 5, C), dr, a->f[s],
                                              row_at(m, ms[s], 5, C), B, f->Ts[s], C, ld));
        STEP_CHECK(step_linear_backward(m, &m->lin[d->mlp2[s]], g->sm[0], g->work, d_f,
                                        a->g[s], a->xa_m2[s], ns, false));
        STEP_CHECK(o->gelu_backward(g->cm, g->sm[0], a->u[s], (size_t)ns * (size_t)f->M));
        STEP_CHECK(step_linear_backward(m, &m->lin[d->mlp1[s]], d_x2, g->work, g->cm,
                                        a->x2[s], a->xa_m1[s], ns, false));
        STEP_CHECK(o->layernorm_modulate_backward(
            d_tmp, row_at(m, dms[s], 3, C), row_at(m, dms[s], 4, C), d_x2,
            row_cat(m, a->h1, r0, C), a->ln2[s], a->mean2[s], a->rstd2[s],
            row_at(m, ms[s], 4, C), B, f->Ts[s], C, ld));
        STEP_CHECK(o->axpy(dr, 1.0f, d_tmp, (size_t)ns * (size_t)C));
        /* attention branch, output side */
        aitk_act *d_o = row_at(m, g->sc[0], r0, C);
        STEP_CHECK(o->gated_residual_backward(d_o, row_at(m, dms[s], 2, C), dr, a->o[s],
                                              row_at(m, ms[s], 2, C), B, f->Ts[s], C, ld));
        STEP_CHECK(joint_lin_bwd(m, f, &m->lin[d->out[s]], g->sc[4], g->work, d_o, at->att,
                                 a->xa_o[s], s, false, false));
    }
    aitk_act *dq = g->sc[5], *dk = g->sc[6], *dv = g->sc[7];
    STEP_CHECK(step_attention_backward(m, dq, dk, dv, g->sc[4], at->q, at->k, at->v, at->att,
                                       at->lse, B, f->T, f->H, f->H, f->D));
    STEP_CHECK(o->rope_backward(dq, dq, f->cos, f->sin, B, f->T, f->H, f->D));
    STEP_CHECK(o->rope_backward(dk, dk, f->cos, f->sin, B, f->T, f->H, f->D));
    aitk_act *dqp = g->sc[4], *dkp = g->sc[0];
    for (int s = 0; s < 2; s++) {
        STEP_CHECK(head_norm_bwd(m, f, dqp, dq, at->q_pre, step_a(m, d->nq[s]), at->rstd_q, s));
        STEP_CHECK(head_norm_bwd(m, f, dkp, dk, at->k_pre, step_a(m, d->nk[s]), at->rstd_k, s));
    }
    for (int s = 0; s < 2; s++) {
        const int ns = (int)f->Ns[s];
        const size_t r0 = f->rowoff[s];
        aitk_act *dr = row_at(m, dres, r0, C), *d_x1 = row_at(m, g->sc[1], r0, C);
        aitk_act *d_tmp = row_at(m, g->sc[3], r0, C);
        const aitk_act *dy[3] = {dqp, dkp, dv};
        for (int j = 0; j < 3; j++)
            STEP_CHECK(joint_lin_bwd(m, f, &m->lin[d->qkv[s][j]], d_x1, g->work, dy[j],
                                     a->x1[s], a->xa_qkv[s][j], s, true, j > 0));
        STEP_CHECK(o->layernorm_modulate_backward(
            d_tmp, dms[s], row_at(m, dms[s], 1, C), d_x1, row_cat(m, hin, r0, C), a->ln1[s],
            a->mean1[s], a->rstd1[s], row_at(m, ms[s], 1, C), B, f->Ts[s], C, ld));
        STEP_CHECK(o->axpy(dr, 1.0f, d_tmp, (size_t)ns * (size_t)C));
        if (!f->chroma)
            STEP_CHECK(step_linear_backward(m, &m->lin[d->mod[s]], NULL, g->work, dms[s],
                                            f->svec, a->xa_mod[s], B, false));
    }
    return AITK_OK;
}

aitk_status flux_single_forward(aitk_step_model *m, flux_state *f, int j, flux_sacts *a,
                                const aitk_act *hin, aitk_act *hout)
{
    const flux_attn_acts *at = &a->attn;
    const aitk_ops *o = m->ops;
    const flux_single *sb = &f->sgl[j];
    const int C = f->C, B = f->B, T = f->T, M = f->M, N = (int)f->N;
    aitk_act *ms = a->mod;
    const int ld = f->chroma ? f->V * C : 3 * C;
    if (f->chroma)
        ms = row_at(m, f->mods, (size_t)(12 * f->nd + 3 * j), C);
    else
        STEP_CHECK(step_linear_forward(m, &m->lin[sb->mod], a->mod, a->xa_mod, f->svec, B));
    STEP_CHECK(o->layernorm_modulate_forward(a->x1, a->ln, a->mean, a->rstd, hin, ms,
                                             row_at(m, ms, 1, C), B, T, C, ld, 1e-6f));
    aitk_act *dst[3] = {at->q_pre, at->k_pre, at->v};
    for (int i = 0; i < 3; i++)
        STEP_CHECK(step_linear_forward(m, &m->lin[sb->qkv[i]], dst[i], a->xa_qkv[i], a->x1, N));
    STEP_CHECK(o->rmsnorm_forward(at->q, at->rstd_q, at->q_pre, step_a(m, sb->nq), N * f->H, f->D,
                                  1e-6f));
    STEP_CHECK(o->rmsnorm_forward(at->k, at->rstd_k, at->k_pre, step_a(m, sb->nk), N * f->H, f->D,
                                  1e-6f));
    STEP_CHECK(o->rope_forward(at->q, at->q, f->cos, f->sin, B, T, f->H, f->D));
    STEP_CHECK(o->rope_forward(at->k, at->k, f->cos, f->sin, B, T, f->H, f->D));
    STEP_CHECK(step_attention_forward(m, at->att, at->lse, at->q, at->k, at->v, B, T, f->H, f->H,
                                      f->D));
    STEP_CHECK(step_linear_forward(m, &m->lin[sb->mlp1], a->u, a->xa_m1, a->x1, N));
    /* [attn | gelu(u)] is the input of the output Linear */
    STEP_CHECK(o->copy2d(a->cat, C + M, at->att, C, N, C));
    /* gelu writes contiguously: staged in a gradient scratch buffer, which
     * holds nothing while a forward runs */
    STEP_CHECK(o->gelu_forward(f->g.sm[0], a->u, (size_t)N * (size_t)M));
    STEP_CHECK(o->copy2d(step_act_at(m, a->cat, (size_t)C), C + M, f->g.sm[0], M, N, M));
    STEP_CHECK(step_linear_forward(m, &m->lin[sb->out], a->o, a->xa_out, a->cat, N));
    if (hout != hin)
        STEP_CHECK(o->copy2d(hout, C, hin, C, N, C));
    return o->gated_residual_forward(hout, a->o, row_at(m, ms, 2, C), B, T, C, ld);
}

aitk_status flux_single_backward(aitk_step_model *m, flux_state *f, int j, flux_sacts *a,
                                 flux_gscratch *g, const aitk_act *hin, aitk_act *dres)
{
    const flux_attn_acts *at = &a->attn;
    const aitk_ops *o = m->ops;
    const flux_single *sb = &f->sgl[j];
    const int C = f->C, B = f->B, T = f->T, M = f->M, N = (int)f->N;
    const size_t v0 = (size_t)(12 * f->nd + 3 * j);
    aitk_act *ms = f->chroma ? row_at(m, f->mods, v0, C) : a->mod;
    aitk_act *dms = f->chroma ? row_at(m, g->dmods, v0, C) : g->dmods;
    const int ld = f->chroma ? f->V * C : 3 * C;
    aitk_act *d_o = g->sc[0], *d_x1 = g->sc[1], *d_tmp = g->sc[3];
    aitk_act *d_att = g->sc[4], *dq = g->sc[5], *dk = g->sc[6], *dv = g->sc[7];
    STEP_CHECK(o->gated_residual_backward(d_o, row_at(m, dms, 2, C), dres, a->o,
                                          row_at(m, ms, 2, C), B, T, C, ld));
    STEP_CHECK(step_linear_backward(m, &m->lin[sb->out], g->cm, g->work, d_o, a->cat,
                                    a->xa_out, N, false));
    STEP_CHECK(o->copy2d(d_att, C, g->cm, C + M, N, C));
    STEP_CHECK(o->copy2d(g->sm[0], M, step_act_at(m, g->cm, (size_t)C), C + M, N, M));
    /* d_cat is consumed: its buffer takes d_u */
    STEP_CHECK(o->gelu_backward(g->cm, g->sm[0], a->u, (size_t)N * (size_t)M));
    STEP_CHECK(step_linear_backward(m, &m->lin[sb->mlp1], d_x1, g->work, g->cm, a->x1,
                                    a->xa_m1, N, false));
    STEP_CHECK(step_attention_backward(m, dq, dk, dv, d_att, at->q, at->k, at->v, at->att, at->lse,
                                       B, T, f->H, f->H, f->D));
    STEP_CHECK(o->rope_backward(dq, dq, f->cos, f->sin, B, T, f->H, f->D));
    STEP_CHECK(o->rope_backward(dk, dk, f->cos, f->sin, B, T, f->H, f->D));
    aitk_act *dqp = d_o, *dkp = d_att;
    STEP_CHECK(o->rmsnorm_backward(dqp, NULL, dq, at->q_pre, step_a(m, sb->nq), at->rstd_q,
                                   N * f->H, f->D));
    STEP_CHECK(o->rmsnorm_backward(dkp, NULL, dk, at->k_pre, step_a(m, sb->nk), at->rstd_k,
                                   N * f->H, f->D));
    const aitk_act *dy[3] = {dqp, dkp, dv};
    for (int i = 0; i < 3; i++)
        STEP_CHECK(step_linear_backward(m, &m->lin[sb->qkv[i]], d_x1, g->work, dy[i], a->x1,
                                        a->xa_qkv[i], N, true));
    STEP_CHECK(o->layernorm_modulate_backward(d_tmp, dms, row_at(m, dms, 1, C), d_x1, hin, a->ln,
                                              a->mean, a->rstd, row_at(m, ms, 1, C), B, T, C,
                                              ld));
    STEP_CHECK(o->axpy(dres, 1.0f, d_tmp, (size_t)N * (size_t)C));
    if (!f->chroma)
        STEP_CHECK(step_linear_backward(m, &m->lin[sb->mod], NULL, g->work, dms, f->svec,
                                        a->xa_mod, B, false));
    return AITK_OK;
}
