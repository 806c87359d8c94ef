/* Internal to the FLUX/Chroma step (step_flux.c: blocks; step_flux_run.c:
 * declaration, buffers, conditioning, final layer and the step itself).
 * Activations are aitk_act (the backend's act_dtype), per-row statistics
 * (mean, rstd, lse), RoPE tables and positions float (kernels/ops.h). */
#ifndef AITK_MODELS_STEP_FLUX_H
#define AITK_MODELS_STEP_FLUX_H

#include "models/step_internal.h"

typedef struct flux_double {
    long mod[2];     /* linear indices, stream 0 img, 1 txt (FLUX only) */
    long qkv[2][3], out[2], mlp1[2], mlp2[2];
    long nq[2], nk[2]; /* tensor indices of the per-head RMSNorm weights */
} flux_double;

typedef struct flux_single {
    long mod, qkv[3], mlp1, out, nq, nk;
} flux_single;

/* Saved activations of the joint attention, the same in both kinds of
 * block: q and k before and after their per-head RMSNorm, v, the output
 * and its log-sum-exp. */
typedef struct flux_attn_acts {
    aitk_act *q_pre, *k_pre, *q, *k, *v, *att;
    float *rstd_q, *rstd_k, *lse;
} flux_attn_acts;

/* Saved activations of one double block. */
typedef struct flux_dacts {
    aitk_act *mod[2], *xa_mod[2], *ln1[2], *x1[2], *xa_qkv[2][3];
    aitk_act *xa_o[2], *o[2], *ln2[2], *x2[2], *u[2], *g[2];
    aitk_act *xa_m1[2], *xa_m2[2], *f[2];
    aitk_act *h1;
    float *mean1[2], *rstd1[2], *mean2[2], *rstd2[2];
    flux_attn_acts attn;
} flux_dacts;

/* Saved activations of one single block. */
typedef struct flux_sacts {
    aitk_act *mod, *xa_mod, *ln, *x1, *xa_qkv[3], *u, *xa_m1, *cat, *xa_out, *o;
    float *mean, *rstd;
    flux_attn_acts attn;
} flux_sacts;

/* Activation-gradient scratch shared by all blocks. */
typedef struct flux_gscratch {
    aitk_act *sc[8], *sm[1], *cm, *dmods, *work;
} flux_gscratch;

typedef struct flux_state {
    bool chroma;
    int C, H, D, M, in_ch, txt_dim, clip, freq, nd, ns, r, B, T;
    int Ts[2];          /* tokens per sample of stream 0 (img) and 1 (txt) */
    int joff[2];        /* a stream's first row within a sample's joint rows */
    size_t Ns[2], N;    /* rows of a stream, of the joint stream (all samples) */
    size_t rowoff[2];   /* a stream's first row in the [img | txt] layout */
    int V, ain, ahid, alayers; /* Chroma's approximator */

    flux_double *dbl;
    flux_single *sgl;
    long x_emb, ctx_emb, t1, t2, g1, g2, p1, p2, norm_mod, proj_out; /* linears */
    long a_in, a_out, *a_l1, *a_l2, *a_norm;                          /* Chroma */
    long in_x0, in_txt, in_pooled;                                    /* tensors */

    /* buffers */
    aitk_act *ckpt;       /* (nd+ns+1) hidden states of B*T*C: block inputs, final output */
    void *acts;           /* one slot (checkpointing) or one per block */
    size_t dslot, sslot;  /* bytes per double / single slot */
    void *grad_arena;
    aitk_act *dres;       /* the residual stream's gradient (N,C) */
    flux_gscratch g;
    float *cos, *sin, *pos;
    aitk_act *vec, *svec, *e1, *e2, *e3, *ts, *gs;        /* conditioning */
    aitk_act *mods, *ax_in, *ax, *ax_n, *ax_h1, *ax_h2; /* Chroma */
    float *ax_rstd;
    float *fin_mean, *fin_rstd;
    aitk_act *fin_mod, *fin_dmod;
    step_host host; /* host staging */
} flux_state;

void flux_carve_double(const flux_state *f, step_bump *b, flux_dacts *a);
void flux_carve_single(const flux_state *f, step_bump *b, flux_sacts *a);
void flux_carve_grads(const flux_state *f, step_bump *b, flux_gscratch *g);

aitk_status flux_double_forward(aitk_step_model *m, flux_state *f, int i, flux_dacts *a,
                                const aitk_act *hin, aitk_act *hout);
aitk_status flux_double_backward(aitk_step_model *m, flux_state *f, int i, flux_dacts *a,
                                 flux_gscratch *g, const aitk_act *hin, aitk_act *dres);
aitk_status flux_single_forward(aitk_step_model *m, flux_state *f, int j, flux_sacts *a,
                                const aitk_act *hin, aitk_act *hout);
aitk_status flux_single_backward(aitk_step_model *m, flux_state *f, int j, flux_sacts *a,
                                 flux_gscratch *g, const aitk_act *hin, aitk_act *dres);

#endif
