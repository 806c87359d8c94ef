/* Resolution buckets on one model (aitk_step_set_resolution): a model built
 * for the largest bucket and switched to a smaller one must compute what a
 * model built at the smaller one computes, bit for bit, and switching back
 * must give the larger model's numbers. The sizes are tiny (64 px: a 4x4
 * grid of 16 image tokens; 48 px: 3x3, 9 tokens), batch 2, on the CPU
 * backend. The grids differ in width, so a RoPE table left at the built
 * grid, an input not redrawn, or a buffer addressed with the built row
 * counts changes the losses or the gradients; every comparison is memcmp.
 * Both with and without gradient checkpointing, since the saved
 * activations are laid out differently in the two. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "models/spec.h"
#include "models/step.h"

static const char *const models[] = {"flux1-dev", "chroma", "omnigen2"};

enum { STEPS = 2, SMALL_PX = 48, LARGE_PX = 64 };

static aitk_model_spec *load(const char *id)
{
    aitk_model_spec *spec = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_model_spec_load(id, true, &spec, &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    return spec;
}

static aitk_step_model *create(const aitk_model_spec *spec, long px, bool ckpt,
                               aitk_mem_account *acct)
{
    aitk_step_setup s;
    aitk_step_setup_defaults(&s, spec);
    s.batch = 2;
    s.resolution = px;
    s.txt_tokens = 8;
    s.rank = 4;
    s.alpha = 4;
    s.base = AITK_STEP_BASE_FP32;
    s.optimizer = AITK_STEP_ADAMW;
    s.adamw.lr = 1e-3f;
    s.checkpointing = ckpt;
    aitk_step_model *m = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_step_model_create(spec, &s, aitk_ops_cpu(), acct, &m, &err) != AITK_OK)
        fail_msg("create: %s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    return m;
}

static void set_px(aitk_step_model *m, long px)
{
    aitk_str err = AITK_STR_INIT;
    if (aitk_step_set_resolution(m, px, &err) != AITK_OK)
        fail_msg("switching to %ld px: %s", px, aitk_str_cstr(&err));
    aitk_str_free(&err);
}

/* What a run leaves to compare: each step's loss and FLOPs, then the LoRA
 * weights after the last update and the last step's gradients. */
typedef struct run_out {
    double loss[STEPS], flops[STEPS];
    float *lora, *grads;
    size_t n;
} run_out;

static run_out run(aitk_step_model *m)
{
    run_out r = {.n = aitk_step_lora_params(m)};
    for (int i = 0; i < STEPS; i++) {
        aitk_step_result res;
        assert_int_equal(aitk_step_run(m, &res), AITK_OK);
        r.loss[i] = res.loss;
        r.flops[i] = res.flops;
    }
    r.lora = malloc(r.n * sizeof(float));
    r.grads = malloc(r.n * sizeof(float));
    assert_non_null(r.lora);
    assert_non_null(r.grads);
    size_t at = 0;
    for (size_t i = 0; i < aitk_step_tensor_count(m); i++) {
        aitk_step_tensor t;
        assert_int_equal(aitk_step_tensor_info(m, i, &t), AITK_OK);
        if (t.kind != AITK_STEP_T_LORA)
            continue;
        assert_int_equal(aitk_step_tensor_get(m, i, r.lora + at, t.count), AITK_OK);
        assert_int_equal(aitk_step_grad_get(m, i, r.grads + at, t.count), AITK_OK);
        at += t.count;
    }
    assert_int_equal(at, r.n);
    return r;
}

static void same(const char *what, const run_out *a, const run_out *b)
{
    assert_int_equal(a->n, b->n);
    for (int i = 0; i < STEPS; i++)
        if (memcmp(&a->loss[i], &b->loss[i], sizeof a->loss[i]) != 0 ||
            a->flops[i] != b->flops[i])
            fail_msg("%s: step %d loss %.9g vs %.9g, FLOPs %g vs %g", what, i + 1, a->loss[i],
                     b->loss[i], a->flops[i], b->flops[i]);
    if (memcmp(a->lora, b->lora, a->n * sizeof(float)) != 0)
        fail_msg("%s: LoRA weights differ", what);
    if (memcmp(a->grads, b->grads, a->n * sizeof(float)) != 0)
        fail_msg("%s: LoRA gradients differ", what);
}

static void run_free(run_out *r)
{
    free(r->lora);
    free(r->grads);
}

/* The x0 input as the tensor table shows it: its size follows the bucket. */
static float *x0_of(const aitk_step_model *m, size_t *count)
{
    size_t i;
    aitk_step_tensor t;
    assert_int_equal(aitk_step_tensor_find(m, "x0", &i), AITK_OK);
    assert_int_equal(aitk_step_tensor_info(m, i, &t), AITK_OK);
    float *v = malloc(t.count * sizeof *v);
    assert_non_null(v);
    assert_int_equal(aitk_step_tensor_get(m, i, v, t.count), AITK_OK);
    *count = t.count;
    return v;
}

static void switched_model_matches_built_one(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        aitk_model_spec *spec = load(models[k]);
        for (int ck = 0; ck < 2; ck++) {
            aitk_mem_account a_small = {0}, a_large = {0}, a_down = {0}, a_back = {0};
            aitk_step_model *small = create(spec, SMALL_PX, ck, &a_small);
            aitk_step_model *large = create(spec, LARGE_PX, ck, &a_large);
            aitk_step_model *down = create(spec, LARGE_PX, ck, &a_down);
            aitk_step_model *back = create(spec, LARGE_PX, ck, &a_back);
            set_px(down, SMALL_PX);
            assert_int_equal(aitk_step_img_tokens(down), aitk_step_img_tokens(small));
            size_t n_small, n_down;
            float *x_small = x0_of(small, &n_small), *x_down = x0_of(down, &n_down);
            assert_int_equal(n_small, n_down);
            assert_memory_equal(x_small, x_down, n_small * sizeof(float));
            free(x_small);
            free(x_down);
            set_px(back, SMALL_PX);
            set_px(back, LARGE_PX);
            run_out r_small = run(small), r_large = run(large);
            run_out r_down = run(down), r_back = run(back);
            printf("%s%s: loss %.6f at %d px, %.6f at %d px\n", models[k],
                   ck ? " (checkpointing)" : "", r_small.loss[0], SMALL_PX, r_large.loss[0],
                   LARGE_PX);
            /* the buckets do differ, so equality below is not vacuous */
            assert_true(r_small.loss[0] != r_large.loss[0]);
            same("switched down", &r_down, &r_small);
            same("switched down and back", &r_back, &r_large);
            /* the buffers stayed the built bucket's: no allocation on a switch */
            assert_int_equal(a_down.peak_total, a_large.peak_total);
            run_free(&r_small);
            run_free(&r_large);
            run_free(&r_down);
            run_free(&r_back);
            aitk_step_model_free(small);
            aitk_step_model_free(large);
            aitk_step_model_free(down);
            aitk_step_model_free(back);
        }
        aitk_model_spec_free(spec);
    }
}

static void switching_above_the_built_size_is_refused(void **state)
{
    (void)state;
    aitk_model_spec *spec = load("flux1-dev");
    aitk_mem_account acct = {0};
    aitk_step_model *m = create(spec, SMALL_PX, true, &acct);
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_step_set_resolution(m, LARGE_PX, &err), AITK_E_RANGE);
    printf("%s\n", aitk_str_cstr(&err));
    assert_non_null(strstr(aitk_str_cstr(&err), "64 px"));
    assert_non_null(strstr(aitk_str_cstr(&err), "built for 9 image tokens"));
    aitk_str_clear(&err);
    assert_int_equal(aitk_step_set_img_tokens(m, 10, &err), AITK_E_RANGE);
    assert_non_null(strstr(aitk_str_cstr(&err), "built for 9"));
    aitk_str_clear(&err);
    assert_int_equal(aitk_step_set_img_tokens(m, 0, &err), AITK_E_INVAL);
    aitk_str_clear(&err);
    assert_int_equal(aitk_step_set_resolution(m, 8, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "8 px"));
    /* refused: the model runs what it ran */
    assert_int_equal(aitk_step_img_tokens(m), 9);
    aitk_step_result r;
    assert_int_equal(aitk_step_run(m, &r), AITK_OK);
    aitk_str_free(&err);
    aitk_step_model_free(m);
    aitk_model_spec_free(spec);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(switched_model_matches_built_one),
        cmocka_unit_test(switching_above_the_built_size_is_refused),
    };
    if (argc > 1) {
        /* a misspelt name would run nothing and pass */
        bool known = false;
        for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
            known = known || strcmp(tests[i].name, argv[1]) == 0;
        if (!known) {
            fprintf(stderr, "test_step.bucket: no test '%s'\n", argv[1]);
            return 2;
        }
        cmocka_set_test_filter(argv[1]);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
