/* Internal to the FLUX/Chroma step (step_flux.c: blocks; step_flux_run.c:
 * declaration, buffers, conditioning, final layer and the step itself). */
#ifndef AITK_MODELS_STEP_FLUX_H
#define AITK_MODELS_STEP_FLUX_H

#include "models/step_internal.h"

/* A bump allocator over one slot: with base NULL it only measures. */
typedef struct step_bump {
    float *base;
    size_t used;
} step_bump;

typedef struct flux_double {
    long mod[2];     /* linear indices, stream 0 img, 1 txt (FLUX only) */
    long qkv[2][3], out[2], mlp1[2], mlp2[2];
    long nq[2], nk[2]; /* tensor indices of the per-head RMSNorm weights */
} flux_double;

typedef struct flux_single {
    long mod, qkv[3], mlp1, out, nq, nk;
} flux_single;

/* Saved activations of one double block. */
typedef struct flux_dacts {
    float *mod[2], *xa_mod[2], *ln1[2], *mean1[2], *rstd1[2], *x1[2], *xa_qkv[2][3];
    float *xa_o[2], *o[2], *ln2[2], *mean2[2], *rstd2[2], *x2[2], *u[2], *g[2];
    float *xa_m1[2], *xa_m2[2], *f[2];
    float *q_pre, *k_pre, *rstd_q, *rstd_k, *q, *k, *v, *att, *lse, *h1;
} flux_dacts;

/* Saved activations of one single block. */
typedef struct flux_sacts {
    float *mod, *xa_mod, *ln, *mean, *rstd, *x1, *q_pre, *k_pre, *rstd_q, *rstd_k;
    float *q, *k, *v, *xa_qkv[3], *att, *lse, *u, *xa_m1, *cat, *xa_out, *o;
} flux_sacts;

/* Activation-gradient scratch shared by all blocks. */
typedef struct flux_gscratch {
    float *sc[8], *sm[1], *cm, *dmods, *work;
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
    float *ckpt;          /* (nd+ns+1) hidden states of B*T*C: block inputs, final output */
    float *acts;          /* one slot (checkpointing) or one per block */
    size_t dslot, sslot;  /* floats per double / single slot */
    float *grad_arena, *dres; /* dres: the residual stream's gradient (N,C) */
    flux_gscratch g;
    float *cos, *sin, *pos;
    float *vec, *svec, *e1, *e2, *e3, *ts, *gs; /* conditioning */
    float *mods, *ax_in, *ax, *ax_n, *ax_h1, *ax_h2, *ax_rstd; /* Chroma */
    float *fin_mean, *fin_rstd, *fin_mod;
    float *fin_dmod;
    step_host host; /* host staging */
} flux_state;

void flux_carve_double(const flux_state *f, step_bump *b, flux_dacts *a);
void flux_carve_single(const flux_state *f, step_bump *b, flux_sacts *a);
void flux_carve_grads(const flux_state *f, step_bump *b, flux_gscratch *g);

aitk_status flux_double_forward(aitk_step_model *m, flux_state *f, int i, flux_dacts *a,
                                const float *hin, float *hout);
aitk_status flux_double_backward(aitk_step_model *m, flux_state *f, int i, flux_dacts *a,
                                 flux_gscratch *g, const float *hin, float *dres);
aitk_status flux_single_forward(aitk_step_model *m, flux_state *f, int j, flux_sacts *a,
                                const float *hin, float *hout);
aitk_status flux_single_backward(aitk_step_model *m, flux_state *f, int j, flux_sacts *a,
                                 flux_gscratch *g, const float *hin, float *dres);

#endif
