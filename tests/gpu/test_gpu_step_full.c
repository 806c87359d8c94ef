/* One full-size FLUX.1-dev LoRA step on the CUDA backend: the spec's
 * ai-toolkit defaults (base storage and optimizer) at 1024 px, batch 1,
 * rank 16. Builds the step, runs three steps and reports seconds per step,
 * the accounted peak against the cost model's memory plan, the backend's
 * own workspace, the device's used memory, and which kernels ran.
 *
 * Asserted: every loss is finite, and the accounted peak
 * (aitk_mem_account.peak_total) is within 10% of the plan
 * (aitk_step_memory_plan(...).total), the target. The plan leaves
 * out the CUDA context and library workspaces (models/step.h), so the
 * backend's workspace_bytes is printed beside the peak, not added to it.
 * Exit 77 (skipped) when no device answers, and when the device has less
 * free memory than the step allocates (the allocation that did not fit is
 * named). On an H200 the whole test should take well under a minute. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gpu_test.h"
#include "models/spec.h"
#include "models/step.h"

#define GIB 1073741824.0
#define STEPS 3
#define PEAK_PLAN_TOL 0.10

static const aitk_backend *g_be;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *base_name(aitk_step_base base)
{
    switch (base) {
    case AITK_STEP_BASE_FP32: return "fp32 values in bf16 storage";
    case AITK_STEP_BASE_BF16: return "bf16";
    case AITK_STEP_BASE_FP8: return "fp8";
    case AITK_STEP_BASE_NF4: return "nf4";
    }
    return "?";
}

static void full_flux_setup(const aitk_model_spec *spec, aitk_step_setup *s)
{
    aitk_step_setup_defaults(s, spec); /* base storage, optimizer, checkpointing, alpha */
    s->resolution = 1024;
    s->batch = 1;
    s->rank = 16;
}

/* The step, or NULL when the device cannot hold it (then the test skips). */
static aitk_step_model *create_or_skip(const aitk_model_spec *spec, const aitk_step_setup *s,
                                       aitk_mem_account *acct, int *skip)
{
    size_t free_b = 0, total_b = 0;
    assert_int_equal(g_be->mem_info(&free_b, &total_b), AITK_OK);
    printf("device memory before the model: %.2f GiB free of %.2f GiB\n", free_b / GIB,
           total_b / GIB);
    /* Past what the device has free, the account refuses before the driver
     * does, and names the allocation. */
    acct->limit = free_b;
    aitk_str err = AITK_STR_INIT;
    aitk_step_model *m = NULL;
    aitk_status st = aitk_step_model_create(spec, s, g_be->ops, acct, &m, &err);
    if (st == AITK_E_NOMEM) {
        printf("skipped: the step does not fit in %.2f GiB free: %s (%.2f GiB already "
               "allocated)\n",
               free_b / GIB, aitk_str_cstr(&err), acct->current_total / GIB);
        *skip = 1;
    } else if (st != AITK_OK) {
        gpu_test_print_last_error(g_be, "backend");
        fail_msg("create: %s", aitk_str_cstr(&err));
    }
    aitk_str_free(&err);
    return m;
}

static void print_plan(const aitk_step_plan *p)
{
    printf("plan: base %.2f, LoRA %.3f + grads %.3f, optimizer %.3f, checkpoints %.2f, "
           "live block %.2f, its gradients %.2f, workspaces %.2f; total %.2f GiB\n",
           p->base_weights / GIB, p->lora_params / GIB, p->lora_grads / GIB, p->optimizer / GIB,
           p->checkpoints / GIB, p->live_block / GIB, p->block_grads / GIB, p->workspaces / GIB,
           p->total / GIB);
}

static void print_peaks(const aitk_mem_account *acct)
{
    printf("accounted peaks by tag:");
    for (int t = 0; t < AITK_MEM_TAG_COUNT; t++)
        printf(" %s %.2f", aitk_mem_tag_name((aitk_mem_tag)t), acct->peak[t] / GIB);
    printf(" GiB\n");
}

/* Wall clock around one step, synchronized so the GPU's work is in it;
 * -1 when the backend ran out of memory for what it holds outside the
 * account (cuDNN workspaces): the device is too small, a skip. */
static double timed_step(aitk_step_model *m, aitk_step_result *r)
{
    const double t0 = now_s();
    aitk_status st = aitk_step_run(m, r);
    if (st == AITK_OK)
        st = g_be->synchronize();
    if (st == AITK_E_NOMEM) {
        char text[AITK_BACKEND_ERROR_LEN];
        g_be->last_error(text, sizeof text);
        printf("skipped: out of device memory during step %ld: %s\n", r->step + 1, text);
        return -1.0;
    }
    if (st != AITK_OK) {
        gpu_test_print_last_error(g_be, "backend");
        fail_msg("step %ld: %s", r->step + 1, aitk_strerror(st));
    }
    return now_s() - t0;
}

static void gpu_step_full_flux(void **state)
{
    int *skip = *state;
    aitk_str err = AITK_STR_INIT;
    aitk_model_spec *spec = NULL;
    if (aitk_model_spec_load("flux1-dev", false, &spec, &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_step_setup s;
    full_flux_setup(spec, &s);
    aitk_mem_account acct = {0};
    const double t_create = now_s();
    aitk_step_model *m = create_or_skip(spec, &s, &acct, skip);
    if (!m) {
        aitk_model_spec_free(spec);
        aitk_str_free(&err);
        return;
    }
    assert_int_equal(g_be->synchronize(), AITK_OK);
    printf("flux1-dev %ld px, batch %ld, rank %ld, %s base, %s, checkpointing %s: "
           "%ld image + %ld text tokens, %zu LoRA parameters, built in %.1f s\n",
           s.resolution, s.batch, s.rank, base_name(s.base),
           s.optimizer == AITK_STEP_ADAMW8BIT ? "8-bit AdamW" : "AdamW",
           s.checkpointing ? "on" : "off",
           aitk_step_img_tokens(m), aitk_step_txt_tokens(m), aitk_step_lora_params(m),
           now_s() - t_create);
    double seconds[STEPS];
    aitk_step_result r = {0};
    for (int i = 0; i < STEPS; i++) {
        seconds[i] = timed_step(m, &r);
        if (seconds[i] < 0) {
            *skip = 1;
            aitk_step_model_free(m);
            aitk_model_spec_free(spec);
            aitk_str_free(&err);
            return;
        }
        printf("step %ld: loss %.6f, %.3f s, %.1f TFLOP/s (hardware FLOPs)\n", r.step, r.loss,
               seconds[i], r.flops / seconds[i] / 1e12);
        assert_true(isfinite(r.loss));
    }
    /* Step 1 builds the cuDNN plans; the later steps are the steady state. */
    printf("s/step (steps 2-%d): %.3f\n", STEPS, (seconds[1] + seconds[2]) / 2.0);
    aitk_step_plan plan;
    if (aitk_step_memory_plan(m, &plan, &err) != AITK_OK)
        fail_msg("plan: %s", aitk_str_cstr(&err));
    size_t free_b = 0, total_b = 0;
    assert_int_equal(g_be->mem_info(&free_b, &total_b), AITK_OK);
    const double peak = (double)acct.peak_total, ws = (double)g_be->workspace_bytes();
    const double rel = (peak - plan.total) / plan.total;
    print_plan(&plan);
    print_peaks(&acct);
    printf("accounted peak %.2f GiB + backend workspace %.2f GiB = %.2f GiB; device used "
           "%.2f GiB (mem_info, context included); plan %.2f GiB; peak vs plan %+.1f%% "
           "(allowed +-%.0f%%)\n",
           peak / GIB, ws / GIB, (peak + ws) / GIB, (double)(total_b - free_b) / GIB,
           plan.total / GIB, 100.0 * rel, 100.0 * PEAK_PLAN_TOL);
    gpu_test_print_paths(g_be);
    assert_true(fabs(rel) <= PEAK_PLAN_TOL);
    aitk_step_model_free(m);
    assert_int_equal(acct.current_total, 0);
    aitk_model_spec_free(spec);
    aitk_str_free(&err);
}

int main(void)
{
    const int rc = gpu_test_open(&g_be);
    if (rc != 0)
        return rc;
    int skip = 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(gpu_step_full_flux, &skip),
    };
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed)
        gpu_test_print_last_error(g_be, "last_error");
    g_be->close();
    return failed ? failed : skip ? GPU_TEST_SKIP : 0;
}
