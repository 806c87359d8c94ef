/* Running a tiny golden configuration and judging it (golden_run.h). */
#include "golden_run.h"

#include <math.h>
#include <string.h>

#include "step_rules.h"

double gpu_golden_loss(const aitk_golden *g, int step)
{
    char name[16];
    snprintf(name, sizeof name, "loss.%d", step);
    const aitk_golden_tensor *t = aitk_golden_get(g, name);
    return t && t->count == 1 ? t->data[0] : NAN;
}

/* A GPU failure's own words ("cudaErrorIllegalAddress ...") for the message. */
static void append_backend_error(const aitk_backend *be, aitk_str *err)
{
    char text[AITK_BACKEND_ERROR_LEN];
    be->last_error(text, sizeof text);
    if (text[0])
        aitk_str_appendf(err, " (backend: %s)", text);
}

static aitk_status one_step(aitk_step_model *m, const aitk_backend *be, double *loss)
{
    aitk_step_result r = {.loss = NAN};
    aitk_status st = aitk_step_run(m, &r);
    if (st == AITK_OK && be)
        st = be->synchronize();
    *loss = r.loss;
    return st;
}

static aitk_status run_model(aitk_step_model *m, const aitk_backend *be, const aitk_golden *g,
                             const gpu_lora_snapshot *base, gpu_golden_run *out, aitk_str *err)
{
    aitk_status st = gpu_lora_snapshot_take(m, &out->initial);
    if (st == AITK_OK)
        st = one_step(m, be, &out->loss[0]);
    /* aitk_step_run leaves the step's gradients in place after its update. */
    if (st == AITK_OK)
        st = gpu_lora_compare(m, g, "grad.", true, NULL, &out->grads, err);
    for (int step = 1; st == AITK_OK && step < 3; step++)
        st = one_step(m, be, &out->loss[step]);
    if (st == AITK_OK)
        st = gpu_lora_compare(m, g, "after3.", false, base ? base : &out->initial, &out->update,
                              err);
    return st;
}

aitk_status gpu_golden_run_steps(const aitk_model_spec *spec, const aitk_step_setup *s,
                                 const aitk_ops *ops, const aitk_backend *be,
                                 const aitk_golden *g, const gpu_lora_snapshot *base,
                                 gpu_golden_run *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    aitk_mem_account acct = {0};
    aitk_step_model *m = NULL;
    aitk_status st = aitk_step_model_create(spec, s, ops, &acct, &m, err);
    if (st != AITK_OK)
        return st;
    st = run_model(m, be, g, base, out, err);
    if (st != AITK_OK && be)
        append_backend_error(be, err);
    aitk_step_model_free(m);
    out->peak_bytes = acct.peak_total;
    out->left_bytes = acct.current_total;
    return st;
}

void gpu_golden_run_free(gpu_golden_run *r)
{
    gpu_lora_snapshot_free(&r->initial);
    gpu_lora_cmp_free(&r->grads);
    gpu_lora_cmp_free(&r->update);
}

size_t gpu_golden_judge(const gpu_golden_run *r, const aitk_golden *g, FILE *log)
{
    size_t failures = 0;
    for (int step = 1; step <= 3; step++) {
        const double ref = gpu_golden_loss(g, step);
        if (!gpu_loss_close(r->loss[step - 1], ref, GPU_STEP_LOSS_TOL)) {
            failures++;
            fprintf(log, "  loss.%d: %.8f, golden %.8f, rel err %.3g (max %.3g)\n", step,
                    r->loss[step - 1], ref, fabs(r->loss[step - 1] - ref) / fabs(ref),
                    GPU_STEP_LOSS_TOL);
        }
    }
    failures += gpu_lora_failures(&r->grads, &gpu_step_grad_rule, log);
    failures += gpu_lora_failures(&r->update, &gpu_step_update_rule, log);
    if (r->left_bytes != 0) {
        failures++;
        fprintf(log, "  %zu bytes still accounted after the model was freed\n", r->left_bytes);
    }
    return failures;
}

void gpu_golden_print(FILE *out, const aitk_golden *g, const gpu_golden_run *cpu,
                      const gpu_golden_run *gpu)
{
    fprintf(out, "  %-8s %14s %14s %10s %14s %10s\n", "loss", "golden", "cpu", "rel err",
            "gpu", "rel err");
    for (int step = 1; step <= 3; step++) {
        const double ref = gpu_golden_loss(g, step), c = cpu->loss[step - 1];
        fprintf(out, "  step %-3d %14.8f %14.8f %10.2e", step, ref, c, fabs(c - ref) / ref);
        if (gpu)
            fprintf(out, " %14.8f %10.2e\n", gpu->loss[step - 1],
                    fabs(gpu->loss[step - 1] - ref) / ref);
        else
            fprintf(out, " %14s %10s\n", "-", "-");
    }
    gpu_lora_print_side_by_side(out, "step-1 LoRA gradients", &cpu->grads,
                                gpu ? &gpu->grads : NULL);
    gpu_lora_print_side_by_side(out, "LoRA weight change over 3 steps", &cpu->update,
                                gpu ? &gpu->update : NULL);
}
