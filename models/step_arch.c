/* What the architectures' files (step_flux_run.c, step_omnigen2.c) share
 * around their blocks: tensors declared under printf-style names, the RoPE
 * tables fixed for a model's lifetime, and the output projection with its
 * MSE loss. Each was written twice before; one copy keeps FLUX and
 * OmniGen2 doing the same thing where they do the same thing. */
#include <stdarg.h>

#include "models/step_internal.h"

/* A linear (in, out, bias, lora) or, when not `linear`, a norm of `out`
 * elements, declared under the name fmt/ap makes. */
static aitk_status declare_named(aitk_step_model *m, long *idx, bool linear, int in, int out,
                                 bool bias, bool lora, const char *fmt, va_list ap)
{
    aitk_str name = AITK_STR_INIT;
    aitk_str_vappendf(&name, fmt, ap);
    aitk_status st = aitk_str_status(&name);
    if (!st && linear)
        st = step_declare_linear(m, aitk_str_cstr(&name), in, out, bias, lora, idx);
    else if (!st)
        st = step_declare_norm(m, aitk_str_cstr(&name), out, idx);
    aitk_str_free(&name);
    return st;
}

aitk_status step_declare_linearf(aitk_step_model *m, long *idx, int in, int out, bool bias,
                                 bool lora, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    aitk_status st = declare_named(m, idx, true, in, out, bias, lora, fmt, ap);
    va_end(ap);
    return st;
}

aitk_status step_declare_normf(aitk_step_model *m, long *idx, int c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    aitk_status st = declare_named(m, idx, false, 0, c, false, false, fmt, ap);
    va_end(ap);
    return st;
}

aitk_status step_rope_tables(aitk_step_model *m, float *scratch, long tt, long ti, bool flux,
                             int d, float *pos, float *cos, float *sin)
{
    const long t = tt + ti;
    step_positions(scratch, tt, ti, !flux);
    STEP_CHECK(m->ops->upload(pos, scratch, (size_t)t * 3 * sizeof(float)));
    int axes[3];
    step_rope_axes(d, flux, axes);
    return m->ops->rope_table(cos, sin, pos, (int)t, d, axes, 10000.0f);
}

aitk_status step_output_loss(aitk_step_model *m, const step_linear *proj_out, const aitk_act *x,
                             aitk_act *pred, const aitk_act *target, aitk_act *dpred,
                             aitk_act *dx, aitk_act *work, int rows, size_t latent,
                             double *loss)
{
    const aitk_ops *o = m->ops;
    STEP_CHECK(step_linear_forward(m, proj_out, pred, NULL, x, rows));
    float host_loss = 0;
    STEP_CHECK(o->mse_forward(&host_loss, pred, target, latent));
    *loss = host_loss;
    STEP_CHECK(o->mse_backward(dpred, 1.0f, pred, target, latent));
    return step_linear_backward(m, proj_out, dx, work, dpred, x, NULL, rows, false);
}
