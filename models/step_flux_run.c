/* FLUX.1-dev and Chroma: the model's tensors (from the spec's dimensions),
 * its buffers, the frozen conditioning (FLUX's timestep/guidance/pooled-text
 * MLPs; Chroma's approximator), the frozen embedders and final layer, and the
 * order of one step: forward through every block keeping block inputs, loss,
 * backward block by block (recomputing first when checkpointing). Host fp32
 * data (x_t, the target, sinusoids, Chroma's approximator input) enters the
 * activations through upload_act; the loss comes back from mse_forward.
 *
 * Conditioning as defined here (the golden generator mirrors it):
 * - FLUX: vec = T2(silu(T1(sin(1000 t)))) + G2(silu(G1(sin(1000 g)))) +
 *   P2(silu(P1(pooled))), guidance g = 1; blocks and the final layer read
 *   silu(vec). Final layer: scale, shift = Linear(silu(vec)).
 * - Chroma: V = 12 nd + 3 ns + 2 modulation rows per sample; row v's input
 *   is [sin(1000 t) (ain/4) | sin(0) (ain/4) | sin(v) (ain/2)] (t, guidance
 *   0, row index); approximator: x = In(inp); per layer x += L2(silu(L1(
 *   RMSNorm(x)))); rows = Out(x). Double block i takes rows 12i..12i+5 (img)
 *   and 12i+6.. (txt), single block j rows 12nd+3j.., final (scale, shift)
 *   the last two. (Chroma's real row order differs; the work is the same.) */
#include <limits.h>
#include <string.h>

#include "common/alloc.h"
#include "models/step_flux.h"

/* Short names for the declarations below; every FLUX linear has a bias. */
#define lin(m, idx, in, out, lora, ...) \
    step_declare_linearf((m), (idx), (in), (out), true, (lora), __VA_ARGS__)
#define norm(m, idx, c, ...) step_declare_normf((m), (idx), (c), __VA_ARGS__)

/* Everything sized by the token counts of the bucket that runs. */
static void token_counts(const aitk_step_model *m, flux_state *f)
{
    f->Ts[0] = (int)m->Ti;
    f->Ts[1] = (int)m->Tt;
    f->T = f->Ts[0] + f->Ts[1];
    f->joff[0] = f->Ts[1];
    f->joff[1] = 0;
    f->Ns[0] = (size_t)f->B * (size_t)f->Ts[0];
    f->Ns[1] = (size_t)f->B * (size_t)f->Ts[1];
    f->N = f->Ns[0] + f->Ns[1];
    f->rowoff[0] = 0;
    f->rowoff[1] = f->Ns[0];
}

static aitk_status read_dims(aitk_step_model *m, flux_state *f, aitk_str *err)
{
    const aitk_model_spec *s = m->spec;
    const aitk_block_spec *db = step_spec_block(s, "double_stream");
    const aitk_block_spec *sb = step_spec_block(s, "single_stream");
    const aitk_block_spec *eb = step_spec_block(s, "embed_in");
    const aitk_linear_spec *mlp = step_spec_linear(db, "img_mlp_in");
    const aitk_linear_spec *xe = step_spec_linear(eb, "x_embedder");
    const aitk_linear_spec *ce = step_spec_linear(eb, "context_embedder");
    const aitk_linear_spec *te = step_spec_linear(eb, "timestep_embedder");
    const aitk_linear_spec *pe = step_spec_linear(eb, "text_embedder");
    const aitk_block_spec *ab = step_spec_block(s, "approximator");
    const aitk_linear_spec *ai = step_spec_linear(ab, "in_proj");
    const aitk_linear_spec *al = step_spec_linear(ab, "layer_in");
    if (!db || !sb || !mlp || !xe || !ce || (f->chroma ? !ai || !al : !te || !pe)) {
        aitk_str_appendf(err, "model spec '%s' lacks a block or Linear the MMDiT step needs "
                              "(double_stream, single_stream, embed_in, %s)", s->id,
                         f->chroma ? "approximator" : "timestep/text embedders");
        return AITK_E_INVAL;
    }
    f->C = (int)s->hidden;
    f->H = (int)db->heads;
    f->D = (int)db->head_dim;
    f->M = (int)mlp->out;
    f->nd = (int)db->count;
    f->ns = (int)sb->count;
    f->in_ch = (int)xe->in;
    f->txt_dim = (int)ce->in;
    if (f->chroma) {
        f->ain = (int)ai->in;
        f->ahid = (int)ai->out;
        f->alayers = (int)al->repeat;
        /* The spec's mod_vectors only sizes the approximator's FLOPs; the
         * graph needs exactly the rows its blocks read. */
        f->V = 12 * f->nd + 3 * f->ns + 2;
    } else {
        f->freq = (int)te->in;
        f->clip = (int)pe->in;
    }
    f->r = (int)m->setup.rank;
    f->B = (int)m->B;
    token_counts(m, f);
    if (f->H < 1 || f->D < 2 || f->D % 2 || (long)f->H * f->D != f->C || f->nd < 1 ||
        f->ns < 1 || f->Ts[1] < 1 || (f->chroma && (f->ain % 4 || f->ain < 4))) {
        aitk_str_appendf(err, "model spec '%s': heads (%d) x head_dim (%d) must be hidden (%d), "
                              "head_dim even, %d double and %d single blocks at least 1, text "
                              "tokens (%d) at least 1", s->id, f->H, f->D, f->C, f->nd, f->ns,
                         f->Ts[1]);
        return AITK_E_INVAL;
    }
    if ((double)f->N * (double)(f->C + f->M) > (double)INT_MAX ||
        (double)f->N * f->H > (double)INT_MAX) {
        aitk_str_appendf(err, "%zu tokens x width %d is past what one GEMM call takes", f->N,
                         f->C + f->M);
        return AITK_E_RANGE;
    }
    return AITK_OK;
}

static aitk_status flux_declare(aitk_step_model *m, aitk_str *err)
{
    flux_state *f = aitk_calloc(1, sizeof *f);
    if (!f)
        return AITK_E_NOMEM;
    m->arch_state = f;
    f->chroma = m->arch_id == STEP_ARCH_CHROMA;
    STEP_CHECK(read_dims(m, f, err));
    const int C = f->C, M = f->M, D = f->D;
    f->dbl = aitk_calloc((size_t)f->nd, sizeof *f->dbl);
    f->sgl = aitk_calloc((size_t)f->ns, sizeof *f->sgl);
    if (!f->dbl || !f->sgl)
        return AITK_E_NOMEM;
    STEP_CHECK(step_declare(m, "x0", AITK_STEP_T_INPUT, 3, (long[]){m->B, m->Ti, f->in_ch},
                            1.0f, false, &f->in_x0));
    STEP_CHECK(step_declare(m, "txt", AITK_STEP_T_INPUT, 3, (long[]){m->B, m->Tt, f->txt_dim},
                            1.0f, false, &f->in_txt));
    STEP_CHECK(lin(m, &f->x_emb, f->in_ch, C, false, "x_embedder"));
    STEP_CHECK(lin(m, &f->ctx_emb, f->txt_dim, C, false, "context_embedder"));
    if (f->chroma) {
        f->a_l1 = aitk_calloc((size_t)f->alayers, sizeof *f->a_l1);
        f->a_l2 = aitk_calloc((size_t)f->alayers, sizeof *f->a_l2);
        f->a_norm = aitk_calloc((size_t)f->alayers, sizeof *f->a_norm);
        if (!f->a_l1 || !f->a_l2 || !f->a_norm)
            return AITK_E_NOMEM;
        STEP_CHECK(lin(m, &f->a_in, f->ain, f->ahid, false, "approx.in"));
        for (int l = 0; l < f->alayers; l++) {
            STEP_CHECK(norm(m, &f->a_norm[l], f->ahid, "approx.%d.norm", l));
            STEP_CHECK(lin(m, &f->a_l1[l], f->ahid, f->ahid, false, "approx.%d.in", l));
            STEP_CHECK(lin(m, &f->a_l2[l], f->ahid, f->ahid, false, "approx.%d.out", l));
        }
        STEP_CHECK(lin(m, &f->a_out, f->ahid, C, false, "approx.out"));
    } else {
        STEP_CHECK(step_declare(m, "pooled", AITK_STEP_T_INPUT, 2, (long[]){m->B, f->clip},
                                1.0f, false, &f->in_pooled));
        STEP_CHECK(lin(m, &f->t1, f->freq, C, false, "time_1"));
        STEP_CHECK(lin(m, &f->t2, C, C, false, "time_2"));
        STEP_CHECK(lin(m, &f->g1, f->freq, C, false, "guidance_1"));
        STEP_CHECK(lin(m, &f->g2, C, C, false, "guidance_2"));
        STEP_CHECK(lin(m, &f->p1, f->clip, C, false, "text_1"));
        STEP_CHECK(lin(m, &f->p2, C, C, false, "text_2"));
    }
    static const char *const sn[2] = {"img", "txt"};
    static const char *const qkv[3] = {"q", "k", "v"};
    for (int i = 0; i < f->nd; i++) {
        flux_double *d = &f->dbl[i];
        for (int s = 0; s < 2; s++) {
            if (!f->chroma)
                STEP_CHECK(lin(m, &d->mod[s], C, 6 * C, true, "double.%d.%s_mod", i, sn[s]));
            for (int j = 0; j < 3; j++)
                STEP_CHECK(lin(m, &d->qkv[s][j], C, C, true, "double.%d.%s_%s", i, sn[s],
                               qkv[j]));
            STEP_CHECK(norm(m, &d->nq[s], D, "double.%d.%s_norm_q", i, sn[s]));
            STEP_CHECK(norm(m, &d->nk[s], D, "double.%d.%s_norm_k", i, sn[s]));
            STEP_CHECK(lin(m, &d->out[s], C, C, true, "double.%d.%s_out", i, sn[s]));
            STEP_CHECK(lin(m, &d->mlp1[s], C, M, true, "double.%d.%s_mlp_in", i, sn[s]));
            STEP_CHECK(lin(m, &d->mlp2[s], M, C, true, "double.%d.%s_mlp_out", i, sn[s]));
        }
    }
    for (int j = 0; j < f->ns; j++) {
        flux_single *sb = &f->sgl[j];
        if (!f->chroma)
            STEP_CHECK(lin(m, &sb->mod, C, 3 * C, true, "single.%d.mod", j));
        for (int k = 0; k < 3; k++)
            STEP_CHECK(lin(m, &sb->qkv[k], C, C, true, "single.%d.%s", j, qkv[k]));
        STEP_CHECK(norm(m, &sb->nq, D, "single.%d.norm_q", j));
        STEP_CHECK(norm(m, &sb->nk, D, "single.%d.norm_k", j));
        STEP_CHECK(lin(m, &sb->mlp1, C, M, true, "single.%d.mlp_in", j));
        STEP_CHECK(lin(m, &sb->out, C + M, C, true, "single.%d.out", j));
    }
    if (!f->chroma)
        STEP_CHECK(lin(m, &f->norm_mod, C, 2 * C, false, "norm_out_mod"));
    STEP_CHECK(lin(m, &f->proj_out, C, f->in_ch, false, "proj_out"));
    return AITK_OK;
}

/* ALLOC: activation elements; ALLOC_F32: fp32 values; ALLOC_BYTES: a slot. */
#define ALLOC(ptr, n, tag, what) STEP_CHECK(step_alloc_acts(m, (n), (tag), (what), &(ptr)))
#define ALLOC_F32(ptr, n, tag, what) \
    STEP_CHECK(step_alloc_floats(m, (n), (tag), (what), &(ptr)))
#define ALLOC_BYTES(ptr, n, tag, what) \
    STEP_CHECK(step_alloc_bytes(m, (n), (tag), (what), &(ptr)))

static aitk_status flux_alloc(aitk_step_model *m, aitk_str *err)
{
    (void)err;
    flux_state *f = m->arch_state;
    const size_t C = (size_t)f->C, B = (size_t)f->B, NC = f->N * C, Ni = f->Ns[0];
    step_bump meas = {m->ops, NULL, 0};
    flux_dacts da;
    flux_sacts sa;
    flux_gscratch gs;
    flux_carve_double(f, &meas, &da);
    f->dslot = meas.used;
    meas.used = 0;
    flux_carve_single(f, &meas, &sa);
    f->sslot = meas.used;
    meas.used = 0;
    flux_carve_grads(f, &meas, &gs);
    const size_t slot = f->dslot > f->sslot ? f->dslot : f->sslot;
    ALLOC(f->ckpt, (size_t)(f->nd + f->ns + 1) * NC, AITK_MEM_ACTIVATIONS,
          "block inputs (checkpoints)");
    if (m->setup.checkpointing)
        ALLOC_BYTES(f->acts, slot, AITK_MEM_ACTIVATIONS, "one block's saved activations");
    else
        ALLOC_BYTES(f->acts, (size_t)f->nd * f->dslot + (size_t)f->ns * f->sslot,
                    AITK_MEM_ACTIVATIONS, "every block's saved activations");
    ALLOC_BYTES(f->grad_arena, meas.used, AITK_MEM_GRADIENTS,
                "activation gradients of one block");
    step_bump gb = {m->ops, f->grad_arena, 0};
    flux_carve_grads(f, &gb, &f->g);
    ALLOC(f->dres, NC, AITK_MEM_GRADIENTS, "residual-stream gradient");
    ALLOC_F32(f->pos, (size_t)f->T * 3, AITK_MEM_WORKSPACE, "token positions");
    ALLOC_F32(f->cos, (size_t)f->T * (size_t)f->D / 2, AITK_MEM_WORKSPACE, "RoPE cos");
    ALLOC_F32(f->sin, (size_t)f->T * (size_t)f->D / 2, AITK_MEM_WORKSPACE, "RoPE sin");
    ALLOC(f->vec, B * C, AITK_MEM_ACTIVATIONS, "conditioning vector");
    ALLOC(f->svec, B * C, AITK_MEM_ACTIVATIONS, "silu(conditioning)");
    size_t cond_w = f->chroma ? 0 : (size_t)(f->freq > f->C ? f->freq : f->C);
    ALLOC(f->e1, B * cond_w + 1, AITK_MEM_WORKSPACE, "conditioning scratch");
    ALLOC(f->e2, B * cond_w + 1, AITK_MEM_WORKSPACE, "conditioning scratch");
    ALLOC(f->e3, B * cond_w + 1, AITK_MEM_WORKSPACE, "conditioning scratch");
    ALLOC(f->ts, B * cond_w + 1, AITK_MEM_WORKSPACE, "timestep embedding");
    ALLOC(f->gs, B * cond_w + 1, AITK_MEM_WORKSPACE, "guidance embedding");
    size_t host_sin = B * (size_t)(f->chroma ? (size_t)f->V * (size_t)f->ain : (size_t)f->freq);
    if (f->chroma) {
        const size_t bv = B * (size_t)f->V, ah = (size_t)f->ahid;
        ALLOC(f->mods, bv * C, AITK_MEM_ACTIVATIONS, "approximator modulation rows");
        ALLOC(f->ax_in, bv * (size_t)f->ain, AITK_MEM_WORKSPACE, "approximator input");
        ALLOC(f->ax, bv * ah, AITK_MEM_WORKSPACE, "approximator state");
        ALLOC(f->ax_n, bv * ah, AITK_MEM_WORKSPACE, "approximator scratch");
        ALLOC(f->ax_h1, bv * ah, AITK_MEM_WORKSPACE, "approximator scratch");
        ALLOC(f->ax_h2, bv * ah, AITK_MEM_WORKSPACE, "approximator scratch");
        ALLOC_F32(f->ax_rstd, bv, AITK_MEM_WORKSPACE, "approximator scratch");
    }
    const size_t lat = Ni * (size_t)f->in_ch;
    ALLOC_F32(f->fin_mean, Ni, AITK_MEM_ACTIVATIONS, "final LayerNorm statistics");
    ALLOC_F32(f->fin_rstd, Ni, AITK_MEM_ACTIVATIONS, "final LayerNorm statistics");
    ALLOC(f->fin_mod, B * 2 * C, AITK_MEM_ACTIVATIONS, "final modulation rows");
    ALLOC(f->fin_dmod, B * 2 * C, AITK_MEM_GRADIENTS, "final modulation rows' gradient");
    STEP_CHECK(step_host_alloc(&f->host, lat, B, host_sin + (size_t)f->T * 3));
    /* positions and RoPE tables are fixed until the bucket changes */
    return step_rope_tables(m, f->host.scratch, f->Ts[1], f->Ts[0], true, f->D, f->pos, f->cos,
                            f->sin);
}

/* Another bucket, within the buffers of the built one: the slots and the
 * gradient scratch are carved again for the new row counts (each carving
 * of fewer rows fits in the larger one's bytes; the slots keep their
 * built stride), x0 is redrawn and the RoPE tables follow the new grid. */
static aitk_status flux_set_tokens(aitk_step_model *m)
{
    flux_state *f = m->arch_state;
    token_counts(m, f);
    step_bump gb = {m->ops, f->grad_arena, 0};
    flux_carve_grads(f, &gb, &f->g);
    STEP_CHECK(step_redraw_input(m, f->in_x0, m->Ti));
    return step_rope_tables(m, f->host.scratch, f->Ts[1], f->Ts[0], true, f->D, f->pos, f->cos,
                            f->sin);
}

static void flux_free(aitk_step_model *m)
{
    flux_state *f = m->arch_state;
    if (!f)
        return;
    aitk_free(f->dbl);
    aitk_free(f->sgl);
    aitk_free(f->a_l1);
    aitk_free(f->a_l2);
    aitk_free(f->a_norm);
    step_host_free(&f->host);
    aitk_free(f);
    m->arch_state = NULL;
}

/* Frozen conditioning: FLUX's vec/silu(vec) or Chroma's modulation rows. */
static aitk_status conditioning(aitk_step_model *m, flux_state *f)
{
    const aitk_ops *o = m->ops;
    const int B = f->B, C = f->C;
    const size_t bc = (size_t)B * (size_t)C;
    if (f->chroma) {
        const int q = f->ain / 4, V = f->V;
        for (int b = 0; b < B; b++)
            for (int v = 0; v < V; v++) {
                float *row = f->host.scratch + ((size_t)b * V + v) * (size_t)f->ain;
                step_sinusoid(row, (double)f->host.t[b] * 1000.0, q);
                step_sinusoid(row + q, 0.0, q);
                step_sinusoid(row + 2 * q, (double)v, 2 * q);
            }
        const int n = B * V;
        STEP_CHECK(o->upload_act(f->ax_in, f->host.scratch, (size_t)n * f->ain));
        STEP_CHECK(step_linear_forward(m, &m->lin[f->a_in], f->ax, NULL, f->ax_in, n));
        for (int l = 0; l < f->alayers; l++) {
            STEP_CHECK(o->rmsnorm_forward(f->ax_n, f->ax_rstd, f->ax, step_a(m, f->a_norm[l]), n,
                                          f->ahid, 1e-6f));
            STEP_CHECK(step_linear_forward(m, &m->lin[f->a_l1[l]], f->ax_h1, NULL, f->ax_n, n));
            STEP_CHECK(o->silu_forward(f->ax_h2, f->ax_h1, (size_t)n * f->ahid));
            STEP_CHECK(step_linear_forward(m, &m->lin[f->a_l2[l]], f->ax_h1, NULL, f->ax_h2, n));
            STEP_CHECK(o->axpy(f->ax, 1.0f, f->ax_h1, (size_t)n * f->ahid));
        }
        return step_linear_forward(m, &m->lin[f->a_out], f->mods, NULL, f->ax, n);
    }
    const size_t fr = (size_t)f->freq;
    for (int b = 0; b < B; b++)
        step_sinusoid(f->host.scratch + b * fr, (double)f->host.t[b] * 1000.0, f->freq);
    STEP_CHECK(o->upload_act(f->ts, f->host.scratch, B * fr));
    for (int b = 0; b < B; b++)
        step_sinusoid(f->host.scratch + b * fr, 1000.0, f->freq);
    STEP_CHECK(o->upload_act(f->gs, f->host.scratch, B * fr));
    const long first[3] = {f->t1, f->g1, f->p1}, second[3] = {f->t2, f->g2, f->p2};
    const aitk_act *in[3] = {f->ts, f->gs, step_a(m, f->in_pooled)};
    for (int i = 0; i < 3; i++) {
        STEP_CHECK(step_linear_forward(m, &m->lin[first[i]], f->e1, NULL, in[i], B));
        STEP_CHECK(o->silu_forward(f->e2, f->e1, bc));
        STEP_CHECK(step_linear_forward(m, &m->lin[second[i]], i ? f->e3 : f->vec, NULL, f->e2,
                                       B));
        if (i)
            STEP_CHECK(o->axpy(f->vec, 1.0f, f->e3, bc));
    }
    return o->silu_forward(f->svec, f->vec, bc);
}

/* [img | txt] <-> per-sample [txt; img] */
static aitk_status to_joint(const aitk_ops *o, const flux_state *f, aitk_act *dst,
                            const aitk_act *src)
{
    const size_t C = (size_t)f->C, Ti = (size_t)f->Ts[0], Tt = (size_t)f->Ts[1];
    for (int b = 0; b < f->B; b++) {
        aitk_act *row = aitk_act_at(o, dst, (size_t)b * (size_t)f->T * C);
        STEP_CHECK(o->copy2d(row, f->C, aitk_act_cat(o, src, (f->Ns[0] + b * Tt) * C), f->C,
                             f->Ts[1], f->C));
        STEP_CHECK(o->copy2d(aitk_act_at(o, row, Tt * C), f->C, aitk_act_cat(o, src, b * Ti * C),
                             f->C, f->Ts[0], f->C));
    }
    return AITK_OK;
}

static aitk_status to_double(const aitk_ops *o, const flux_state *f, aitk_act *dst,
                             const aitk_act *src)
{
    const size_t C = (size_t)f->C, Ti = (size_t)f->Ts[0], Tt = (size_t)f->Ts[1];
    for (int b = 0; b < f->B; b++) {
        const aitk_act *row = aitk_act_cat(o, src, (size_t)b * (size_t)f->T * C);
        STEP_CHECK(o->copy2d(aitk_act_at(o, dst, (f->Ns[0] + b * Tt) * C), f->C, row, f->C,
                             f->Ts[1], f->C));
        STEP_CHECK(o->copy2d(aitk_act_at(o, dst, b * Ti * C), f->C, aitk_act_cat(o, row, Tt * C),
                             f->C, f->Ts[0], f->C));
    }
    return AITK_OK;
}

static flux_dacts dslot(const aitk_step_model *m, const flux_state *f, bool ckpt, int i)
{
    flux_dacts a;
    step_bump b = {m->ops, (unsigned char *)f->acts + (ckpt ? 0 : (size_t)i * f->dslot), 0};
    flux_carve_double(f, &b, &a);
    return a;
}

static flux_sacts sslot(const aitk_step_model *m, const flux_state *f, bool ckpt, int j)
{
    flux_sacts a;
    const size_t off = ckpt ? 0 : (size_t)f->nd * f->dslot + (size_t)j * f->sslot;
    step_bump b = {m->ops, (unsigned char *)f->acts + off, 0};
    flux_carve_single(f, &b, &a);
    return a;
}

/* First image row of sample b in the joint layout. */
static size_t img_row(const flux_state *f, int b)
{
    return (size_t)b * (size_t)f->T + (size_t)f->Ts[1];
}

/* Final layer: LN of the image rows, modulate (scale, shift), proj_out; the
 * MSE and its gradient back to dres (joint layout). Frozen: no LoRA. */
static aitk_status final_layer(aitk_step_model *m, flux_state *f, const aitk_act *h,
                               double *loss)
{
    const aitk_ops *o = m->ops;
    const int C = f->C, B = f->B, Ti = f->Ts[0], Ni = (int)f->Ns[0];
    const size_t lat = f->Ns[0] * (size_t)f->in_ch;
    /* the final layer's tensors live in gradient scratch: nothing else is
     * live there between the last forward block and the first backward one */
    aitk_act *target = f->g.sc[5], *pred = f->g.sc[6], *dpred = f->g.sc[7];
    aitk_act *fin_ln = f->g.sc[3], *fin_x = f->g.sc[4];
    STEP_CHECK(o->upload_act(target, f->host.target, lat));
    const aitk_act *scale, *shift;
    aitk_act *dscale, *dshift;
    int ld;
    if (f->chroma) {
        ld = f->V * C;
        scale = step_act_at(m, f->mods, (size_t)(f->V - 2) * C);
        shift = step_act_cat(m, scale, (size_t)C);
        dscale = step_act_at(m, f->g.dmods, (size_t)(f->V - 2) * C);
        dshift = step_act_at(m, dscale, (size_t)C);
    } else {
        ld = 2 * C;
        STEP_CHECK(step_linear_forward(m, &m->lin[f->norm_mod], f->fin_mod, NULL, f->svec, B));
        scale = f->fin_mod;
        shift = step_act_at(m, f->fin_mod, (size_t)C);
        dscale = f->fin_dmod;
        dshift = step_act_at(m, f->fin_dmod, (size_t)C);
    }
    /* each sample's image rows are contiguous in h: normalized where they
     * are, one sample (and its modulation rows, ld apart) per call */
    for (int b = 0; b < B; b++) {
        const size_t row = (size_t)b * (size_t)Ti, mod = (size_t)b * (size_t)ld;
        STEP_CHECK(o->layernorm_modulate_forward(
            step_act_at(m, fin_x, row * C), step_act_at(m, fin_ln, row * C), f->fin_mean + row,
            f->fin_rstd + row, step_act_cat(m, h, img_row(f, b) * C), step_act_cat(m, shift, mod),
            step_act_cat(m, scale, mod), 1, Ti, C, ld, 1e-6f));
    }
    aitk_act *d_x = f->g.sc[0];
    STEP_CHECK(step_output_loss(m, &m->lin[f->proj_out], fin_x, pred, target, dpred, d_x,
                                f->g.work, Ni, lat, loss));
    STEP_CHECK(o->zero(f->dres, aitk_dtype_bytes(o->act_dtype, f->N * (size_t)C)));
    for (int b = 0; b < B; b++) {
        const size_t row = (size_t)b * (size_t)Ti, at = img_row(f, b) * C;
        const size_t mod = (size_t)b * (size_t)ld;
        STEP_CHECK(o->layernorm_modulate_backward(
            step_act_at(m, f->dres, at), step_act_at(m, dshift, mod), step_act_at(m, dscale, mod),
            step_act_cat(m, d_x, row * C), step_act_cat(m, h, at),
            step_act_cat(m, fin_ln, row * C), f->fin_mean + row, f->fin_rstd + row,
            step_act_cat(m, scale, mod), 1, Ti, C, ld));
    }
    return AITK_OK;
}

/* Hidden state k of the checkpoint arena (N,C each). */
static aitk_act *ckpt_state(const aitk_step_model *m, const flux_state *f, int k)
{
    return step_act_at(m, f->ckpt, (size_t)k * f->N * (size_t)f->C);
}

static aitk_status flux_forward_backward(aitk_step_model *m, double *loss)
{
    flux_state *f = m->arch_state;
    const aitk_ops *o = m->ops;
    const bool ck = m->setup.checkpointing;
    const size_t lat = f->Ns[0] * (size_t)f->in_ch;
    STEP_CHECK(o->download_act(f->host.x0, step_a(m, f->in_x0), lat));
    STEP_CHECK(step_flow_inputs(m, f->host.x0, f->host.xt, f->host.target, f->host.t, f->in_ch));
    /* x_t only feeds the frozen x_embedder: gradient scratch holds it */
    aitk_act *xt = f->g.sm[0];
    STEP_CHECK(o->upload_act(xt, f->host.xt, lat));
    STEP_CHECK(conditioning(m, f));
    /* embedders write block 0's input [img | txt] */
    STEP_CHECK(step_linear_forward(m, &m->lin[f->x_emb], f->ckpt, NULL, xt, (int)f->Ns[0]));
    STEP_CHECK(step_linear_forward(m, &m->lin[f->ctx_emb],
                                   step_act_at(m, f->ckpt, f->Ns[0] * (size_t)f->C), NULL,
                                   step_a(m, f->in_txt), (int)f->Ns[1]));
    /* Buffers that hold nothing during the forward pass stand in for
     * temporaries: dres takes the double->joint hand-over, and a
     * recomputed block writes its (unused) output into gradient scratch. */
    for (int i = 0; i < f->nd; i++) {
        flux_dacts a = dslot(m, f, ck, i);
        aitk_act *out = i + 1 < f->nd ? ckpt_state(m, f, i + 1) : f->dres;
        STEP_CHECK(flux_double_forward(m, f, i, &a, ckpt_state(m, f, i), out));
    }
    STEP_CHECK(to_joint(o, f, ckpt_state(m, f, f->nd), f->dres));
    for (int j = 0; j < f->ns; j++) {
        flux_sacts a = sslot(m, f, ck, j);
        STEP_CHECK(flux_single_forward(m, f, j, &a, ckpt_state(m, f, f->nd + j),
                                       ckpt_state(m, f, f->nd + j + 1)));
    }
    STEP_CHECK(final_layer(m, f, ckpt_state(m, f, f->nd + f->ns), loss));
    for (int j = f->ns - 1; j >= 0; j--) {
        flux_sacts a = sslot(m, f, ck, j);
        const aitk_act *in = ckpt_state(m, f, f->nd + j);
        if (ck) {
            m->recomputing = true;
            aitk_status st = flux_single_forward(m, f, j, &a, in, f->g.sc[7]);
            m->recomputing = false;
            STEP_CHECK(st);
        }
        STEP_CHECK(flux_single_backward(m, f, j, &a, &f->g, in, f->dres));
    }
    STEP_CHECK(o->copy2d(f->g.sc[0], f->C, f->dres, f->C, (int)f->N, f->C));
    STEP_CHECK(to_double(o, f, f->dres, f->g.sc[0]));
    for (int i = f->nd - 1; i >= 0; i--) {
        flux_dacts a = dslot(m, f, ck, i);
        const aitk_act *in = ckpt_state(m, f, i);
        if (ck) {
            m->recomputing = true;
            aitk_status st = flux_double_forward(m, f, i, &a, in, f->g.sc[7]);
            m->recomputing = false;
            STEP_CHECK(st);
        }
        STEP_CHECK(flux_double_backward(m, f, i, &a, &f->g, in, f->dres));
    }
    return AITK_OK;
}

const step_arch step_arch_flux = {
    .declare = flux_declare,
    .alloc = flux_alloc,
    .forward_backward = flux_forward_backward,
    .set_tokens = flux_set_tokens,
    .free = flux_free,
};
