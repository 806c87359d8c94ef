/* Whole-model golden tests of the training step (models/step.h): the tiny
 * FLUX.1-dev, Chroma and OmniGen2 models against PyTorch
 * (tests/golden/gen_step_golden.py writes tests/golden/data/step_<id>.bin).
 *
 * Both sides draw the same weights and inputs from aitk_step_draw's
 * generator; PyTorch computes in float64 with autograd and
 * torch.optim.AdamW, the C step in fp32. Tolerances, per tensor, as
 * max|c - ref| / max|ref| (relative to the tensor's scale, so one element
 * near zero does not decide):
 *   loss              1e-5  fp32 through ~10 blocks: a few ulp per op;
 *   step-1 gradients  1e-4  backward doubles the depth, and the smallest
 *                           tensors (rank-2 LoRA A of a mod Linear) sum few terms;
 *   weights after 3   0.1 lr, absolute (|c - ref| in units of the learning
 *                           rate): AdamW moves every weight by about lr per step
 *                           whatever its gradient's size, so an element whose
 *                           gradient is nearly zero (k adapters: softmax ignores a
 *                           shift of k) carries fp32's relative error of that
 *                           tiny gradient straight into its step (worst measured
 *                           0.03 lr, OmniGen2); a skipped or wrong update, or a
 *                           wrong gradient in steps 2-3, is off by ~lr or more.
 * Usage: test_step.golden <model id> [nockpt] (one ctest per model). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "models/spec.h"
#include "models/step.h"
#include "tests/golden/golden.h"

static const char *g_model;
static bool g_ckpt = true;

/* Largest |got - ref| in units of `unit`. */
static double abs_err(const float *got, const float *ref, size_t n, double unit)
{
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        e = isnan(d) ? INFINITY : fmax(e, d);
    }
    return e / unit;
}

static double rel_err(const float *got, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]);
        num = isnan(e) ? INFINITY : fmax(num, e);
        den = fmax(den, fabs(ref[i]));
    }
    return den > 0 ? num / den : num;
}

static const aitk_golden_tensor *need(const aitk_golden *g, const char *name)
{
    const aitk_golden_tensor *t = aitk_golden_get(g, name);
    if (!t)
        fail_msg("golden tensor %s missing", name);
    return t;
}

static void check_loss(const aitk_golden *g, int step, double loss)
{
    char name[16];
    snprintf(name, sizeof name, "loss.%d", step);
    const double ref = need(g, name)->data[0];
    const double rel = fabs(loss - ref) / fabs(ref);
    printf("%s %s: C %.8f PyTorch %.8f rel err %.2g (allowed 1e-5)\n", g_model, name, loss, ref,
           rel);
    assert_true(rel <= 1e-5);
}

/* Every LoRA tensor of the model against "<prefix><name>"; returns the worst. */
static double check_lora(const aitk_golden *g, aitk_step_model *m, const char *prefix,
                         bool grads, double tol, double unit)
{
    size_t n_lora = 0, n_golden = 0;
    double worst = 0;
    const char *worst_name = "";
    for (size_t i = 0; i < g->count; i++)
        n_golden += strncmp(g->tensors[i].name, prefix, strlen(prefix)) == 0;
    for (size_t i = 0; i < aitk_step_tensor_count(m); i++) {
        aitk_step_tensor info;
        assert_int_equal(aitk_step_tensor_info(m, i, &info), AITK_OK);
        if (info.kind != AITK_STEP_T_LORA)
            continue;
        n_lora++;
        aitk_str name = AITK_STR_INIT;
        aitk_str_appendf(&name, "%s%s", prefix, info.name);
        const aitk_golden_tensor *ref = need(g, aitk_str_cstr(&name));
        assert_int_equal(ref->count, info.count);
        float *got = malloc(info.count * sizeof *got);
        assert_non_null(got);
        if (grads)
            assert_int_equal(aitk_step_grad_get(m, i, got, info.count), AITK_OK);
        else
            assert_int_equal(aitk_step_tensor_get(m, i, got, info.count), AITK_OK);
        const double e = unit > 0 ? abs_err(got, ref->data, info.count, unit)
                                  : rel_err(got, ref->data, info.count);
        if (e > worst || isnan(e)) {
            worst = e;
            worst_name = info.name;
        }
        if (!(e <= tol))
            printf("  %s: error %.3g > %.2g\n", aitk_str_cstr(&name), e, tol);
        aitk_str_free(&name);
        free(got);
    }
    printf("%s %s*: %zu tensors, worst %s %.3g (%s), allowed %.2g\n", g_model, prefix, n_lora,
           unit > 0 ? "error in units of lr" : "rel err", worst, worst_name, tol);
    assert_int_equal(n_lora, n_golden); /* the C model has every tensor PyTorch has */
    return worst;
}

static void golden_step(void **state)
{
    (void)state;
    aitk_str path = AITK_STR_INIT;
    aitk_str_appendf(&path, "%s/tests/golden/data/step_", AITK_SOURCE_DIR);
    for (const char *c = g_model; *c; c++)
        aitk_str_appendc(&path, *c == '-' ? '_' : *c);
    aitk_str_append(&path, ".bin");
    aitk_golden g = {0};
    aitk_str err = AITK_STR_INIT;
    if (aitk_golden_load(&g, aitk_str_cstr(&path), &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&path);
    const float *cfg = need(&g, "config")->data;
    aitk_model_spec *spec = NULL;
    assert_int_equal(aitk_model_spec_load(g_model, true, &spec, &err), AITK_OK);
    aitk_step_setup s;
    aitk_step_setup_defaults(&s, spec);
    s.batch = (long)cfg[0];
    s.resolution = 0;
    s.img_tokens = (long)cfg[1];
    s.txt_tokens = (long)cfg[2];
    s.rank = (long)cfg[3];
    s.alpha = cfg[4];
    s.adamw.lr = cfg[5];
    s.adamw.weight_decay = cfg[6];
    s.seed = (uint64_t)cfg[7];
    s.base = AITK_STEP_BASE_FP32;
    s.optimizer = AITK_STEP_ADAMW;
    s.checkpointing = g_ckpt;
    aitk_mem_account acct = {0};
    aitk_step_model *m = NULL;
    if (aitk_step_model_create(spec, &s, aitk_ops_cpu(), &acct, &m, &err) != AITK_OK)
        fail_msg("create: %s", aitk_str_cstr(&err));
    aitk_step_result r;
    assert_int_equal(aitk_step_run(m, &r), AITK_OK);
    check_loss(&g, 1, r.loss);
    assert_true(check_lora(&g, m, "grad.", true, 1e-4, 0) <= 1e-4);
    for (int step = 2; step <= 3; step++) {
        assert_int_equal(aitk_step_run(m, &r), AITK_OK);
        check_loss(&g, step, r.loss);
    }
    assert_true(check_lora(&g, m, "after3.", false, 0.1, s.adamw.lr) <= 0.1);
    aitk_step_model_free(m);
    assert_int_equal(acct.current_total, 0); /* everything allocated was freed */
    aitk_model_spec_free(spec);
    aitk_golden_free(&g);
    aitk_str_free(&err);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_step.golden <flux1-dev|chroma|omnigen2> [nockpt]\n");
        return 2;
    }
    g_model = argv[1];
    g_ckpt = !(argc > 2 && strcmp(argv[2], "nockpt") == 0);
    const struct CMUnitTest tests[] = {cmocka_unit_test(golden_step)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
