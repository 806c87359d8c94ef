/* The judging of gpu.step_golden, checked without a GPU.
 *
 * gpu.step_golden can only run where a device answers; its comparisons
 * (step_compare.h) and tolerances (step_rules.h) are plain C, so they are
 * checked here on the CPU backend: with hand-computed numbers, by accepting
 * the CPU step of every tiny golden configuration, in fp32 and with bf16
 * storage emulated (bf16_emul.h), and by rejecting the
 * CPU step against golden files perturbed the way a wrong backend would
 * perturb its results: a loss off by 1%, a gradient tensor scaled or
 * negated, every gradient 10% too large, no update, a reversed update,
 * an update 1.5 times too large. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bf16_emul.h"
#include "golden_run.h"
#include "models/spec.h"
#include "models/step.h"
#include "step_rules.h"

static const char *const models[] = {"flux1-dev", "chroma", "omnigen2"};

/* ---- hand-computed numbers ---- */

static gpu_vec_sums sums_of(const float *got, const float *ref, size_t n)
{
    gpu_vec_sums s = {0};
    gpu_sums_add(&s, got, ref, n);
    return s;
}

static void helpers_give_hand_computed_values(void **state)
{
    (void)state;
    const float x[2] = {1, 0}, y[2] = {0, 1}, a[2] = {3, 4}, b[2] = {6, 8}, z[2] = {0, 0};
    const float c[2] = {4, 3}, nan2[2] = {NAN, 1};
    gpu_vec_sums s = sums_of(x, y, 2); /* orthogonal, same length */
    assert_float_equal(gpu_sums_cosine(&s), 0.0, 1e-12);
    assert_float_equal(gpu_sums_norm_err(&s), 0.0, 1e-12);
    assert_float_equal(gpu_sums_diff_err(&s), sqrt(2.0), 1e-12);
    s = sums_of(a, b, 2); /* parallel, half the length: |5 - 10| / 10 */
    assert_float_equal(gpu_sums_cosine(&s), 1.0, 1e-12);
    assert_float_equal(gpu_sums_norm_err(&s), 0.5, 1e-12);
    s = sums_of(c, a, 2); /* (4,3).(3,4) = 24 over 5 * 5 */
    assert_float_equal(gpu_sums_cosine(&s), 0.96, 1e-12);
    assert_float_equal(gpu_sums_norm_err(&s), 0.0, 1e-12);
    s = sums_of(z, z, 2); /* nothing against nothing: equal */
    assert_float_equal(gpu_sums_cosine(&s), 1.0, 0.0);
    assert_float_equal(gpu_sums_norm_err(&s), 0.0, 0.0);
    s = sums_of(z, a, 2); /* a missing gradient */
    assert_float_equal(gpu_sums_cosine(&s), 0.0, 0.0);
    assert_float_equal(gpu_sums_norm_err(&s), 1.0, 1e-12);
    s = sums_of(a, z, 2); /* a gradient where there should be none */
    assert_true(isinf(gpu_sums_norm_err(&s)));
    const gpu_vec_tol loose = {.min_cosine = -1.0, .max_norm_err = INFINITY};
    s = sums_of(nan2, a, 2); /* NaN is never close, however loose the rule */
    assert_true(isnan(gpu_sums_cosine(&s)));
    assert_false(gpu_sums_close(&s, &loose));
    gpu_vec_sums merged = sums_of(x, x, 2), part = sums_of(y, z, 2);
    gpu_sums_merge(&merged, &part); /* (1,0,0,1) against (1,0,0,0) */
    assert_int_equal(merged.n, 4);
    assert_float_equal(gpu_sums_cosine(&merged), 1.0 / sqrt(2.0), 1e-12);
    assert_true(gpu_loss_close(1.004, 1.0, 5e-3));
    assert_false(gpu_loss_close(1.006, 1.0, 5e-3));
    assert_false(gpu_loss_close(0.994, 1.0, 5e-3));
    assert_false(gpu_loss_close(NAN, 1.0, 5e-3));
    assert_false(gpu_loss_close(INFINITY, 1.0, 5e-3));
}

/* ---- the CPU step against the golden files ---- */

typedef struct config {
    aitk_golden g;
    aitk_model_spec *spec;
    aitk_step_setup s;
} config;

static void config_load(config *c, const char *model)
{
    aitk_str err = AITK_STR_INIT;
    memset(c, 0, sizeof *c);
    if (gpu_golden_load_step(model, &c->g, &err) != AITK_OK ||
        aitk_model_spec_load(model, true, &c->spec, &err) != AITK_OK ||
        gpu_golden_setup(&c->g, c->spec, true, &c->s, &err) != AITK_OK)
        fail_msg("%s: %s", model, aitk_str_cstr(&err));
    aitk_str_free(&err);
}

static void config_free(config *c)
{
    aitk_model_spec_free(c->spec);
    aitk_golden_free(&c->g);
}

static void cpu_run(const config *c, const aitk_ops *ops, gpu_golden_run *out)
{
    aitk_str err = AITK_STR_INIT;
    if (gpu_golden_run_steps(c->spec, &c->s, ops, NULL, &c->g, NULL, out, &err))
        fail_msg("%s on %s: %s", c->spec->id, ops->name, aitk_str_cstr(&err));
    aitk_str_free(&err);
}

/* Failures of a run on `ops`; its step-1 loss in *loss1 when not NULL. */
static size_t cpu_failures(const config *c, const aitk_ops *ops, bool print, double *loss1)
{
    gpu_golden_run r;
    cpu_run(c, ops, &r);
    if (print)
        gpu_golden_print(stdout, &c->g, &r, NULL);
    const size_t failures = gpu_golden_judge(&r, &c->g, stdout);
    if (loss1)
        *loss1 = r.loss[0];
    gpu_golden_run_free(&r);
    return failures;
}

static void rules_accept_the_cpu_step(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        config c;
        config_load(&c, models[k]);
        double fp32_loss, bf16_loss;
        printf("== %s, fp32\n", models[k]);
        assert_int_equal(cpu_failures(&c, aitk_ops_cpu(), true, &fp32_loss), 0);
        /* Every activation and the base weights stored in bf16, as the CUDA
         * backend stores them (bf16_emul.h): the rules must hold for it. */
        printf("== %s, bf16 storage emulated\n", models[k]);
        assert_int_equal(cpu_failures(&c, gpu_ops_cpu_bf16_storage(), true, &bf16_loss), 0);
        assert_true(bf16_loss != fp32_loss); /* the storage really was emulated */
        config_free(&c);
    }
}

/* ---- perturbed golden files ---- */

static float *golden_data(const aitk_golden *g, const char *name, size_t *count)
{
    const aitk_golden_tensor *t = aitk_golden_get(g, name);
    if (!t)
        fail_msg("golden tensor %s missing", name);
    *count = t->count;
    return t->data;
}

/* The "grad." tensor with the largest norm: certainly judged on its own. */
static const char *largest_grad(const aitk_golden *g)
{
    const char *best = NULL;
    double best2 = -1;
    for (size_t i = 0; i < g->count; i++) {
        if (strncmp(g->tensors[i].name, "grad.", 5) != 0)
            continue;
        double sum2 = 0;
        for (size_t j = 0; j < g->tensors[i].count; j++)
            sum2 += (double)g->tensors[i].data[j] * g->tensors[i].data[j];
        if (sum2 > best2) {
            best2 = sum2;
            best = g->tensors[i].name;
        }
    }
    assert_non_null(best);
    return best;
}

static void scale_tensor(aitk_golden *g, const char *name, float factor)
{
    size_t n;
    float *d = golden_data(g, name, &n);
    for (size_t j = 0; j < n; j++)
        d[j] *= factor;
}

static void scale_all_with_prefix(aitk_golden *g, const char *prefix, float factor)
{
    for (size_t i = 0; i < g->count; i++)
        if (strncmp(g->tensors[i].name, prefix, strlen(prefix)) == 0)
            scale_tensor(g, g->tensors[i].name, factor);
}

/* after3 := initial + factor * (after3 - initial) for every LoRA tensor. */
static void scale_updates(aitk_golden *g, const gpu_lora_snapshot *initial, float factor)
{
    for (size_t k = 0; k < initial->n; k++) {
        char name[160];
        snprintf(name, sizeof name, "after3.%s", initial->names[k]);
        size_t n;
        float *d = golden_data(g, name, &n);
        assert_int_equal(n, initial->counts[k]);
        for (size_t j = 0; j < n; j++)
            d[j] = initial->values[k][j] + factor * (d[j] - initial->values[k][j]);
    }
}

typedef enum perturbation {
    LOSS_2_UP_1_PERCENT,
    LARGEST_GRAD_TIMES_1_5,
    LARGEST_GRAD_NEGATED,
    ALL_GRADS_10_PERCENT_LARGER,
    NO_UPDATE,
    REVERSED_UPDATE,
    UPDATE_1_5_TIMES_LARGER,
    PERTURBATION_COUNT
} perturbation;

static const char *const perturbation_names[PERTURBATION_COUNT] = {
    "loss.2 1% larger", "largest gradient tensor x1.5", "largest gradient tensor negated",
    "every gradient 10% larger", "no update", "reversed update", "update 1.5 times larger"};

static void perturb(aitk_golden *g, perturbation p, const gpu_lora_snapshot *initial)
{
    size_t n;
    switch (p) {
    case LOSS_2_UP_1_PERCENT: golden_data(g, "loss.2", &n)[0] *= 1.01f; break;
    case LARGEST_GRAD_TIMES_1_5: scale_tensor(g, largest_grad(g), 1.5f); break;
    case LARGEST_GRAD_NEGATED: scale_tensor(g, largest_grad(g), -1.0f); break;
    case ALL_GRADS_10_PERCENT_LARGER: scale_all_with_prefix(g, "grad.", 1.1f); break;
    case NO_UPDATE: scale_updates(g, initial, 0.0f); break;
    case REVERSED_UPDATE: scale_updates(g, initial, -1.0f); break;
    case UPDATE_1_5_TIMES_LARGER: scale_updates(g, initial, 1.5f); break;
    case PERTURBATION_COUNT: break;
    }
}

static void rules_reject_wrong_numbers(void **state)
{
    (void)state;
    config c;
    gpu_golden_run first;
    for (int p = 0; p < PERTURBATION_COUNT; p++) {
        config_load(&c, "flux1-dev"); /* a fresh, unperturbed file each time */
        cpu_run(&c, aitk_ops_cpu(), &first);          /* the initial weights the updates start from */
        perturb(&c.g, (perturbation)p, &first.initial);
        gpu_golden_run_free(&first);
        printf("== flux1-dev against a golden file with %s:\n", perturbation_names[p]);
        const size_t failures = cpu_failures(&c, aitk_ops_cpu(), false, NULL);
        printf("   %zu failures\n", failures);
        if (failures == 0)
            fail_msg("the rules accepted a golden file with %s", perturbation_names[p]);
        config_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(helpers_give_hand_computed_values),
        cmocka_unit_test(rules_accept_the_cpu_step),
        cmocka_unit_test(rules_reject_wrong_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
