/* The public entry points of models/step.h: setup defaults and checks,
 * building a model (declare, allocate, draw on the backend), one step
 * (forward/backward then the optimizer), the tensor table (read back
 * through the backend's download members), and the CPU-shaped memory plan. */
#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "models/step_internal.h"

void aitk_step_setup_defaults(aitk_step_setup *s, const aitk_model_spec *spec)
{
    memset(s, 0, sizeof *s);
    const aitk_model_defaults *d = &spec->defaults;
    s->rank = d->rank > 0 ? d->rank : 16;
    s->alpha = d->alpha > 0 ? (double)d->alpha : (double)s->rank;
    s->batch = d->batch > 0 ? d->batch : 1;
    s->resolution = d->resolution;
    s->checkpointing = d->checkpointing;
    /* The spec loader admits quantize fp8, nf4 or none and optimizer adamw
     * or adamw8bit (models/spec.c). A spec's nf4 still runs an unquantized
     * base by default, so the default step of every spec keeps the numbers
     * its golden files were made with; AITK_STEP_BASE_NF4 is chosen
     * explicitly. */
    s->base = d->quantize && strcmp(d->quantize, "fp8") == 0 ? AITK_STEP_BASE_FP8
                                                              : AITK_STEP_BASE_FP32;
    s->optimizer = d->optimizer && strcmp(d->optimizer, "adamw") == 0 ? AITK_STEP_ADAMW
                                                                        : AITK_STEP_ADAMW8BIT;
    s->adamw = (aitk_adamw_hparams){.lr = 1e-4f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                                    .weight_decay = 0.01f};
    s->seed = 42;
}

static aitk_status check_setup(const aitk_step_setup *s, const aitk_model_spec *spec,
                               aitk_str *err)
{
    const long patch_px = spec->vae_downsample * spec->patch;
    if (s->rank < 1 || s->rank > 4096 || !(s->alpha > 0) || s->batch < 1 || s->batch > 4096) {
        aitk_str_appendf(err, "step setup out of range: rank %ld (1..4096), alpha %g (> 0), "
                              "batch %ld (1..4096)", s->rank, s->alpha, s->batch);
        return AITK_E_INVAL;
    }
    if (s->resolution < 0 || (s->resolution > 0 && s->resolution < patch_px) ||
        (s->resolution == 0 && s->img_tokens < 1) || s->txt_tokens < 0 ||
        s->resolution > 16384 || s->img_tokens > 1048576 || s->txt_tokens > 65536) {
        aitk_str_appendf(err, "step setup: resolution %ld px (>= %ld, <= 16384) or, with "
                              "resolution 0, img_tokens %ld (1..1048576); txt_tokens %ld "
                              "(0..65536)", s->resolution, patch_px, s->img_tokens,
                         s->txt_tokens);
        return AITK_E_INVAL;
    }
    if ((unsigned)s->base > AITK_STEP_BASE_NF4 || (unsigned)s->optimizer > AITK_STEP_ADAMW8BIT) {
        aitk_str_append(err, "step setup: unknown base dtype or optimizer");
        return AITK_E_INVAL;
    }
    return AITK_OK;
}

static void free_model(aitk_step_model *m)
{
    if (m->arch && m->arch->free)
        m->arch->free(m);
    for (size_t i = 0; i < m->n_bufs; i++)
        aitk_buf_free(m->ops, m->acct, &m->bufs[i]);
    aitk_buf *arenas[] = {&m->base,  &m->base_q, &m->base_absmax, &m->lora,
                          &m->grads, &m->inputs, &m->opt_m,       &m->opt_v,
                          &m->opt_ms, &m->opt_vs, &m->dequant};
    for (size_t i = 0; i < sizeof arenas / sizeof *arenas; i++)
        aitk_buf_free(m->ops, m->acct, arenas[i]);
    for (size_t i = 0; i < m->n_t; i++)
        aitk_free(m->t[i].name);
    aitk_free(m->t);
    aitk_free(m->lin);
    aitk_free(m);
}

void aitk_step_model_free(aitk_step_model *m)
{
    if (m)
        free_model(m);
}

aitk_status aitk_step_model_create(const aitk_model_spec *spec, const aitk_step_setup *setup,
                                   const aitk_ops *ops, aitk_mem_account *acct,
                                   aitk_step_model **out, aitk_str *err)
{
    *out = NULL;
    const char *missing = NULL;
    if (!spec || !setup || !ops || !acct) {
        aitk_str_append(err, "aitk_step_model_create: a required argument is NULL");
        return AITK_E_INVAL;
    }
    if (aitk_ops_check(ops, &missing) != AITK_OK) {
        aitk_str_appendf(err, "backend '%s' lacks the operation '%s'",
                         ops->name ? ops->name : "?", missing);
        return AITK_E_INVAL;
    }
    STEP_CHECK(check_setup(setup, spec, err));
    aitk_step_model *m = aitk_calloc(1, sizeof *m);
    if (!m)
        return AITK_E_NOMEM;
    m->ops = ops;
    m->acct = acct;
    m->setup = *setup;
    m->spec = spec;
    if (strcmp(spec->id, "flux1-dev") == 0) {
        m->arch_id = STEP_ARCH_FLUX;
        m->arch = &step_arch_flux;
    } else if (strcmp(spec->id, "chroma") == 0) {
        m->arch_id = STEP_ARCH_CHROMA;
        m->arch = &step_arch_flux;
    } else if (strcmp(spec->id, "omnigen2") == 0) {
        m->arch_id = STEP_ARCH_OMNIGEN2;
        m->arch = &step_arch_omnigen2;
    } else {
        aitk_str_appendf(err, "no training-step graph for model '%s' (known: flux1-dev, "
                              "chroma, omnigen2)", spec->id);
        aitk_free(m);
        return AITK_E_INVAL;
    }
    m->B = setup->batch;
    if (setup->resolution > 0) {
        m->Ti = aitk_model_spec_tokens(spec, AITK_STREAM_IMG, setup->resolution, 0);
    } else {
        m->Ti = setup->img_tokens;
    }
    m->Ti_built = m->Ti;
    m->built_resolution = setup->resolution;
    m->Tt = setup->txt_tokens > 0 ? setup->txt_tokens : spec->text_tokens;
    m->lora_scale = (float)(setup->alpha / (double)setup->rank);
    aitk_status st = m->arch->declare(m, err);
    if (!st)
        st = step_alloc_arenas(m, err);
    if (!st)
        st = m->arch->alloc(m, err);
    if (st && err->len == 0)
        aitk_str_appendf(err, "building the %s training step failed: %s", spec->id,
                         aitk_strerror(st));
    if (!st)
        st = step_fill_tensors(m);
    if (st) {
        free_model(m);
        return st;
    }
    *out = m;
    return AITK_OK;
}

aitk_status aitk_step_forward_backward(aitk_step_model *m, aitk_step_result *res)
{
    memset(res, 0, sizeof *res);
    m->step++;
    m->flops = m->model_flops = 0;
    STEP_CHECK(m->ops->zero(m->grads.ptr, m->grads.bytes));
    double loss = 0;
    STEP_CHECK(m->arch->forward_backward(m, &loss));
    res->loss = loss;
    res->flops = m->flops;
    res->model_flops = m->model_flops;
    res->step = m->step;
    return AITK_OK;
}

aitk_status aitk_step_run(aitk_step_model *m, aitk_step_result *res)
{
    STEP_CHECK(aitk_step_forward_backward(m, res));
    /* One update over the whole LoRA arena: parameters and gradients share
     * the layout, so the optimizer sees one flat tensor. */
    if (m->setup.optimizer == AITK_STEP_ADAMW)
        return m->ops->adamw_update(m->lora.ptr, m->opt_m.ptr, m->opt_v.ptr, m->grads.ptr,
                                    m->n_lora, &m->setup.adamw, m->step);
    return m->ops->adamw8_update(m->lora.ptr, m->opt_m.ptr, m->opt_v.ptr, m->opt_ms.ptr,
                                 m->opt_vs.ptr, m->grads.ptr, m->n_lora, &m->setup.adamw,
                                 m->step);
}

aitk_status aitk_step_set_img_tokens(aitk_step_model *m, long img_tokens, aitk_str *err)
{
    if (img_tokens < 1 || img_tokens > m->Ti_built) {
        aitk_str_appendf(err, "cannot switch the %s step to %ld image tokens: it was built for "
                              "%ld, and runs 1..%ld", m->spec->id, img_tokens, m->Ti_built,
                         m->Ti_built);
        return img_tokens < 1 ? AITK_E_INVAL : AITK_E_RANGE;
    }
    const long was = m->Ti;
    m->Ti = img_tokens;
    aitk_status st = m->arch->set_tokens(m);
    if (st) {
        /* Put back the bucket it ran, so the model stays usable. */
        m->Ti = was;
        m->arch->set_tokens(m);
        aitk_str_appendf(err, "switching the %s step to %ld image tokens failed: %s",
                         m->spec->id, img_tokens, aitk_strerror(st));
        return st;
    }
    m->setup.resolution = 0;
    m->setup.img_tokens = img_tokens;
    return AITK_OK;
}

aitk_status aitk_step_set_resolution(aitk_step_model *m, long resolution, aitk_str *err)
{
    const long patch_px = m->spec->vae_downsample * m->spec->patch;
    if (resolution < patch_px || resolution > 16384) {
        aitk_str_appendf(err, "cannot switch the %s step to %ld px: a bucket is %ld..16384 px",
                         m->spec->id, resolution, patch_px);
        return AITK_E_INVAL;
    }
    const long tokens = aitk_model_spec_tokens(m->spec, AITK_STREAM_IMG, resolution, 0);
    if (tokens > m->Ti_built) {
        aitk_str_appendf(err, "cannot switch the %s step to %ld px (%ld image tokens): it was "
                              "built for %ld image tokens, its buffers hold no more",
                         m->spec->id, resolution, tokens, m->Ti_built);
        return AITK_E_RANGE;
    }
    STEP_CHECK(aitk_step_set_img_tokens(m, tokens, err));
    m->setup.resolution = resolution;
    return AITK_OK;
}

long aitk_step_img_tokens(const aitk_step_model *m)
{
    return m->Ti;
}

long aitk_step_txt_tokens(const aitk_step_model *m)
{
    return m->Tt;
}

size_t aitk_step_lora_params(const aitk_step_model *m)
{
    return m->n_lora;
}

const aitk_step_setup *aitk_step_setup_of(const aitk_step_model *m)
{
    return &m->setup;
}

size_t aitk_step_tensor_count(const aitk_step_model *m)
{
    return m->n_t;
}

aitk_status aitk_step_tensor_info(const aitk_step_model *m, size_t i, aitk_step_tensor *out)
{
    if (i >= m->n_t)
        return AITK_E_RANGE;
    const step_tensor *t = &m->t[i];
    out->name = t->name;
    out->kind = t->kind;
    out->ndim = t->ndim;
    memcpy(out->dims, t->dims, sizeof out->dims);
    out->count = t->count;
    return AITK_OK;
}

aitk_status aitk_step_tensor_find(const aitk_step_model *m, const char *name, size_t *index)
{
    for (size_t i = 0; i < m->n_t; i++)
        if (strcmp(m->t[i].name, name) == 0) {
            *index = i;
            return AITK_OK;
        }
    return AITK_E_NOTFOUND;
}

aitk_status aitk_step_tensor_get(const aitk_step_model *m, size_t i, float *host, size_t count)
{
    if (i >= m->n_t)
        return AITK_E_RANGE;
    const step_tensor *t = &m->t[i];
    if (count != t->count)
        return AITK_E_INVAL;
    if (t->kind == AITK_STEP_T_LORA)
        return m->ops->download(host, t->f, count * sizeof *host);
    if (!t->quant)
        return m->ops->download_act(host, t->a, count);
    /* Expanded by the backend itself, in the dequantization scratch, which
     * holds any base weight and nothing between steps. */
    aitk_act *w = m->dequant.ptr;
    aitk_status st = m->setup.base == AITK_STEP_BASE_NF4
                         ? m->ops->nf4_dequantize(w, t->q, t->absmax, count)
                         : m->ops->fp8_dequantize(w, t->q, t->scale, count);
    return st ? st : m->ops->download_act(host, w, count);
}

aitk_status aitk_step_grad_get(const aitk_step_model *m, size_t i, float *host, size_t count)
{
    if (i >= m->n_t)
        return AITK_E_RANGE;
    const step_tensor *t = &m->t[i];
    if (t->kind != AITK_STEP_T_LORA || count != t->count)
        return AITK_E_INVAL;
    return m->ops->download(host, t->grad, count * sizeof *host);
}

/* The cost model is written over a resolution: a model built from token
 * counts is expressed the same way when its image tokens form a square grid.
 * `res_px` and `tokens`: the setup's resolution and image tokens of the
 * bucket in question. */
static aitk_status plan_resolution(const aitk_step_model *m, long res_px, long tokens,
                                   long *res, aitk_str *err)
{
    *res = res_px;
    if (*res == 0) {
        long side = lround(sqrt((double)tokens));
        if (side * side != tokens) {
            aitk_str_appendf(err, "the cost model needs a square image; %ld tokens is not one",
                             tokens);
            return AITK_E_UNSUPPORTED;
        }
        *res = side * m->spec->vae_downsample * m->spec->patch;
    }
    return AITK_OK;
}

aitk_status aitk_step_predicted_flops(const aitk_step_model *m, double *flops, aitk_str *err)
{
    *flops = 0;
    long res;
    STEP_CHECK(plan_resolution(m, m->setup.resolution, m->Ti, &res, err));
    return step_plan_flops(m->spec, res, m->B, m->Tt, m->setup.rank, m->setup.checkpointing,
                           flops, err);
}

aitk_status aitk_step_memory_plan(const aitk_step_model *m, aitk_step_plan *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    /* The buffers are the built bucket's, whichever bucket runs now. */
    long res;
    STEP_CHECK(plan_resolution(m, m->built_resolution, m->Ti_built, &res, err));
    double t[8];
    STEP_CHECK(step_plan_storage(m->spec, res, m->B, m->Tt, m->setup.rank, m->setup.alpha,
                             m->setup.base == AITK_STEP_BASE_FP8,
                             m->setup.base == AITK_STEP_BASE_NF4,
                             m->setup.optimizer == AITK_STEP_ADAMW, m->setup.checkpointing,
                             (double)aitk_dtype_bytes(m->ops->act_dtype, 1), t, err));
    *out = (aitk_step_plan){t[0], t[1], t[2], t[3], t[4], t[5], t[6], 0, t[7]};
    /* the backward's own working set (see step.h) */
    out->block_grads = out->live_block;
    out->total += out->block_grads;
    return AITK_OK;
}
