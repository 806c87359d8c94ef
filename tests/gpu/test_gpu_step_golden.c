/* The whole tiny training step on the CUDA backend against the golden files
 * of tests/golden/gen_step_golden.py, the same files and configurations the
 * CPU golden test (tests/step/test_step_golden.c) uses.
 *
 * The CUDA step stores activations and base weights in bf16, so it is held
 * to the bf16 tolerances of step_rules.h (cosine and norm error for LoRA
 * gradients and weight changes, relative error for the losses) instead of
 * the CPU's fp32 ones. The CPU step of the same configuration runs in the
 * same process and is printed beside it, so a failure on a GPU machine
 * shows where the two part: both off means the golden file or the graph,
 * only the GPU off means the backend.
 *
 * Every configuration the CPU golden test covers runs (FLUX.1-dev, Chroma,
 * OmniGen2, each with and without gradient checkpointing), one cmocka test
 * each; exit 77 (skipped) when no device answers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "golden_run.h"
#include "gpu_test.h"
#include "models/spec.h"
#include "models/step.h"

typedef struct golden_config {
    const char *model;
    bool ckpt;
} golden_config;

/* The configurations of tests/step/CMakeLists.txt's golden.step.* tests. */
static const golden_config configs[] = {
    {"flux1-dev", true}, {"flux1-dev", false}, {"chroma", true},
    {"chroma", false},   {"omnigen2", true},   {"omnigen2", false},
};
static const char *const config_names[] = {
    "flux1_dev", "flux1_dev.nockpt", "chroma", "chroma.nockpt", "omnigen2", "omnigen2.nockpt",
};

static const aitk_backend *g_be;

/* The GPU draws the fp32 LoRA masters with the generator the CPU uses
 * (ops.h: draw_f32, the same values on every backend), so they start equal
 * bit for bit; the weight change is then measured from the same point. */
static void expect_same_initial_weights(const gpu_lora_snapshot *cpu,
                                        const gpu_lora_snapshot *gpu)
{
    assert_int_equal(cpu->n, gpu->n);
    for (size_t k = 0; k < cpu->n; k++) {
        const float *got = gpu_lora_snapshot_find(gpu, cpu->names[k], cpu->counts[k]);
        if (!got)
            fail_msg("the GPU model has no LoRA tensor %s", cpu->names[k]);
        if (memcmp(got, cpu->values[k], cpu->counts[k] * sizeof(float)) != 0)
            fail_msg("initial %s differs between CPU and GPU", cpu->names[k]);
    }
}

static void run_or_fail(const aitk_model_spec *spec, const aitk_step_setup *s,
                        const aitk_ops *ops, const aitk_golden *g, gpu_golden_run *out)
{
    aitk_str err = AITK_STR_INIT;
    if (gpu_golden_run_steps(spec, s, ops, NULL, g, NULL, out, &err) != AITK_OK)
        fail_msg("%s step of %s: %s", ops->name, spec->id, aitk_str_cstr(&err));
    aitk_str_free(&err);
}

static void gpu_step_golden(void **state)
{
    const golden_config *cfg = *state;
    const char *model = cfg->model;
    const bool ckpt = cfg->ckpt;
    aitk_str err = AITK_STR_INIT;
    aitk_golden g = {0};
    if (gpu_golden_load_step(model, &g, &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_model_spec *spec = NULL;
    if (aitk_model_spec_load(model, true, &spec, &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_step_setup s;
    if (gpu_golden_setup(&g, spec, ckpt, &s, &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    gpu_golden_run cpu, gpu;
    run_or_fail(spec, &s, aitk_ops_cpu(), &g, &cpu);
    printf("%s%s, batch %ld, %ld image + %ld text tokens, rank %ld\n", model,
           ckpt ? "" : " (no checkpointing)", s.batch, s.img_tokens, s.txt_tokens, s.rank);
    if (gpu_golden_run_steps(spec, &s, g_be->ops, g_be, &g, &cpu.initial, &gpu, &err)) {
        gpu_golden_print(stdout, &g, &cpu, NULL); /* what the GPU should have given */
        fail_msg("cuda step of %s: %s", model, aitk_str_cstr(&err));
    }
    gpu_golden_print(stdout, &g, &cpu, &gpu);
    gpu_test_print_paths(g_be);
    expect_same_initial_weights(&cpu.initial, &gpu.initial);
    /* The CPU must pass the bf16 rules with room to spare; if it does not,
     * the golden file or the graph is at fault, not the backend. */
    printf("CPU against the bf16 rules:\n");
    const size_t cpu_failures = gpu_golden_judge(&cpu, &g, stdout);
    printf("GPU against the bf16 rules:\n");
    const size_t gpu_failures = gpu_golden_judge(&gpu, &g, stdout);
    printf("failures: cpu %zu, gpu %zu\n", cpu_failures, gpu_failures);
    assert_int_equal(cpu_failures, 0);
    assert_int_equal(gpu_failures, 0);
    gpu_golden_run_free(&cpu);
    gpu_golden_run_free(&gpu);
    aitk_model_spec_free(spec);
    aitk_golden_free(&g);
    aitk_str_free(&err);
}

int main(void)
{
    const int rc = gpu_test_open(&g_be);
    if (rc != 0)
        return rc;
    enum { N = sizeof configs / sizeof *configs };
    struct CMUnitTest tests[N];
    for (size_t i = 0; i < N; i++) {
        memset(&tests[i], 0, sizeof tests[i]);
        tests[i].name = config_names[i];
        tests[i].test_func = gpu_step_golden;
        tests[i].initial_state = (void *)&configs[i];
    }
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed)
        gpu_test_print_last_error(g_be, "last_error");
    g_be->close();
    return failed;
}
