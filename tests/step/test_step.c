/* Training-step tests (models/step.h) beyond the PyTorch goldens:
 * - gradient checkpointing changes nothing: gradients bitwise equal with and
 *   without it, for all three architectures;
 * - the measured peak (aitk_mem_account) with checkpointing is within 10% of
 *   the cost model's memory plan (CPU-shaped, aitk_step_memory_plan);
 * - the generator gives the values gen_step_golden.py's numpy version gives;
 * - setup errors, allocation limits and allocation failures are reported,
 *   never crashed on, and leak nothing;
 * - the storage variants (bf16 base, fp8 base, 8-bit AdamW) stay close to
 *   the fp32 reference by the margins their formats allow;
 * - tensors drawn on the backend (draw_act/draw_f32) hold aitk_step_draw's
 *   values;
 * - an NF4 base trains (finite loss, lower than untrained on the same
 *   batch) and keeps half a byte per weight plus one fp32 absmax per 64. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/alloc.h"
#include "kernels/math/draw.h"
#include "models/spec.h"
#include "models/step.h"

static const char *const models[] = {"flux1-dev", "chroma", "omnigen2"};

static aitk_model_spec *load(const char *id)
{
    aitk_model_spec *spec = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_model_spec_load(id, true, &spec, &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    return spec;
}

static void tiny_setup(aitk_step_setup *s, const aitk_model_spec *spec)
{
    aitk_step_setup_defaults(s, spec);
    s->batch = 2;
    s->resolution = 0;
    s->img_tokens = 16;
    s->txt_tokens = 8;
    s->rank = 4;
    s->alpha = 4;
    s->base = AITK_STEP_BASE_FP32;
    s->optimizer = AITK_STEP_ADAMW;
    s->adamw.lr = 1e-3f;
}

static aitk_step_model *create(const aitk_model_spec *spec, const aitk_step_setup *s,
                               aitk_mem_account *acct)
{
    aitk_step_model *m = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_step_model_create(spec, s, aitk_ops_cpu(), acct, &m, &err) != AITK_OK)
        fail_msg("create: %s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    return m;
}

/* All LoRA gradients (or values) of a model, concatenated. */
static float *lora_dump(aitk_step_model *m, bool grads, size_t *count)
{
    size_t n = aitk_step_lora_params(m), at = 0;
    float *all = malloc(n * sizeof *all);
    assert_non_null(all);
    for (size_t i = 0; i < aitk_step_tensor_count(m); i++) {
        aitk_step_tensor t;
        assert_int_equal(aitk_step_tensor_info(m, i, &t), AITK_OK);
        if (t.kind != AITK_STEP_T_LORA)
            continue;
        assert_true(at + t.count <= n);
        if (grads)
            assert_int_equal(aitk_step_grad_get(m, i, all + at, t.count), AITK_OK);
        else
            assert_int_equal(aitk_step_tensor_get(m, i, all + at, t.count), AITK_OK);
        at += t.count;
    }
    assert_int_equal(at, n);
    *count = n;
    return all;
}

static void checkpointing_is_bitwise_neutral(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        aitk_model_spec *spec = load(models[k]);
        aitk_step_setup s;
        tiny_setup(&s, spec);
        float *g[2];
        double loss[2];
        size_t n[2];
        size_t peak[2];
        for (int ck = 0; ck < 2; ck++) {
            s.checkpointing = ck;
            aitk_mem_account acct = {0};
            aitk_step_model *m = create(spec, &s, &acct);
            aitk_step_result r;
            assert_int_equal(aitk_step_forward_backward(m, &r), AITK_OK);
            loss[ck] = r.loss;
            g[ck] = lora_dump(m, true, &n[ck]);
            peak[ck] = acct.peak[AITK_MEM_ACTIVATIONS];
            aitk_step_model_free(m);
        }
        assert_int_equal(n[0], n[1]);
        printf("%s: %zu LoRA gradients, loss %.6f; saved activations %zu B without, %zu B with "
               "checkpointing\n", models[k], n[0], loss[0], peak[0], peak[1]);
        assert_true(loss[0] == loss[1]);
        assert_memory_equal(g[0], g[1], n[0] * sizeof(float));
        /* and checkpointing did keep less */
        assert_true(peak[1] < peak[0]);
        size_t nonzero = 0;
        for (size_t i = 0; i < n[0]; i++)
            nonzero += g[0][i] != 0.0f;
        /* the comparison compared something (OmniGen2's unused reference-image
         * refiner has zero gradients: a fifth of its adapters) */
        assert_true(nonzero > n[0] * 3 / 4);
        free(g[0]);
        free(g[1]);
        aitk_model_spec_free(spec);
    }
}

/* fp32 + AdamW, ai-toolkit's defaults fp8 + 8-bit AdamW, and NF4 + 8-bit
 * AdamW (QLoRA's storage). */
static void peak_matches_memory_plan(void **state)
{
    (void)state;
    const size_t n_models = sizeof models / sizeof *models;
    for (size_t k = 0; k < 3 * n_models; k++) {
        const bool fp8 = k / n_models == 1, nf4 = k / n_models == 2;
        aitk_model_spec *spec = load(models[k % n_models]);
        aitk_step_setup s;
        aitk_step_setup_defaults(&s, spec);
        s.batch = 1;
        s.resolution = 512; /* 1024 image tokens */
        s.txt_tokens = 64;
        s.rank = 16;
        s.alpha = 16;
        s.checkpointing = true;
        s.base = fp8 ? AITK_STEP_BASE_FP8 : nf4 ? AITK_STEP_BASE_NF4 : AITK_STEP_BASE_FP32;
        s.optimizer = fp8 || nf4 ? AITK_STEP_ADAMW8BIT : AITK_STEP_ADAMW;
        aitk_mem_account acct = {0};
        aitk_step_model *m = create(spec, &s, &acct);
        aitk_step_result r;
        assert_int_equal(aitk_step_run(m, &r), AITK_OK);
        aitk_step_plan plan;
        aitk_str err = AITK_STR_INIT;
        if (aitk_step_memory_plan(m, &plan, &err) != AITK_OK)
            fail_msg("%s", aitk_str_cstr(&err));
        const double peak = (double)acct.peak_total, rel = fabs(peak - plan.total) / plan.total;
        printf("%s%s: measured peak %.3f MiB, plan %.3f MiB (%+.1f%%)\n"
               "  measured peaks by tag: weights %.3f, activations %.3f, gradients %.3f, "
               "optimizer %.3f, workspace %.3f MiB\n"
               "  plan: base %.3f, LoRA %.3f + grads %.3f, optimizer %.3f, checkpoints %.3f, "
               "live block %.3f, its gradients %.3f MiB\n",
               spec->id,
               fp8   ? " (fp8, 8-bit AdamW)"
               : nf4 ? " (NF4, 8-bit AdamW)"
                     : "",
               peak / 1048576, plan.total / 1048576, 100 * (peak - plan.total) / plan.total,
               acct.peak[AITK_MEM_WEIGHTS] / 1048576.0, acct.peak[AITK_MEM_ACTIVATIONS] / 1048576.0,
               acct.peak[AITK_MEM_GRADIENTS] / 1048576.0, acct.peak[AITK_MEM_OPTIMIZER] / 1048576.0,
               acct.peak[AITK_MEM_WORKSPACE] / 1048576.0, plan.base_weights / 1048576,
               plan.lora_params / 1048576, plan.lora_grads / 1048576, plan.optimizer / 1048576,
               plan.checkpoints / 1048576, plan.live_block / 1048576, plan.block_grads / 1048576);
        assert_true(rel <= 0.10);
        /* the FLOPs the graph counted as it ran, against the cost model's */
        double predicted = 0;
        assert_int_equal(aitk_step_predicted_flops(m, &predicted, &err), AITK_OK);
        printf("  FLOPs: counted %.4g, cost model %.4g (%+.2f%%)\n", r.flops, predicted,
               100 * (r.flops - predicted) / predicted);
        assert_true(fabs(r.flops - predicted) <= 0.01 * predicted); /* measured < 0.01% */
        aitk_step_model_free(m);
        assert_int_equal(acct.current_total, 0);
        aitk_str_free(&err);
        aitk_model_spec_free(spec);
    }
}

static void draw_matches_numpy(void **state)
{
    (void)state;
    /* Values printed by gen_step_golden.py's numpy draw() ('%.9g', exact for fp32):
     * draw(42, "x0", 3, 1.0) and draw(7, "noise", 2, 1.5, start=5). */
    assert_true(aitk_step_draw(42, "x0", 0, 1.0f) == 0.398358226f);
    assert_true(aitk_step_draw(42, "x0", 1, 1.0f) == -0.543182492f);
    assert_true(aitk_step_draw(42, "x0", 2, 1.0f) == -0.276966810f);
    assert_true(aitk_step_draw(7, "noise", 5, 1.5f) == -0.449034512f);
    assert_true(aitk_step_draw(7, "noise", 6, 1.5f) == -0.0565822721f);
}

/* The backend's draw members give aitk_step_draw's values (the numpy
 * literals above for the first three), and a built model's tensors hold
 * them: x0 as drawn, a norm weight 1 + draw(1/8), a LoRA A draw(1/sqrt(in)). */
static void backend_draw_matches_step_draw(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    aitk_mem_account acct = {0};
    aitk_buf a, f;
    assert_int_equal(aitk_buf_alloc(ops, &acct, &a, aitk_dtype_bytes(ops->act_dtype, 16),
                                    AITK_MEM_WORKSPACE, "draw_act"),
                     AITK_OK);
    assert_int_equal(aitk_buf_alloc(ops, &acct, &f, 16 * sizeof(float), AITK_MEM_WORKSPACE,
                                    "draw_f32"),
                     AITK_OK);
    float got[16];
    assert_int_equal(ops->draw_f32(f.ptr, 3, aitk_draw_key(42, "x0"), 0, 1.0f, 0.0f), AITK_OK);
    assert_int_equal(ops->download(got, f.ptr, 3 * sizeof(float)), AITK_OK);
    assert_true(got[0] == 0.398358226f);
    assert_true(got[1] == -0.543182492f);
    assert_true(got[2] == -0.276966810f);
    assert_int_equal(ops->draw_act(a.ptr, 16, aitk_draw_key(7, "noise"), 5, 1.5f, 1.0f), AITK_OK);
    assert_int_equal(ops->download_act(got, a.ptr, 16), AITK_OK);
    assert_true(got[0] == 1.0f + -0.449034512f);
    for (int j = 0; j < 16; j++)
        assert_true(got[j] == 1.0f + aitk_step_draw(7, "noise", 5 + (uint64_t)j, 1.5f));
    aitk_buf_free(ops, &acct, &a);
    aitk_buf_free(ops, &acct, &f);

    aitk_model_spec *spec = load("flux1-dev");
    aitk_step_setup s;
    tiny_setup(&s, spec);
    aitk_step_model *m = create(spec, &s, &acct);
    const char *names[3] = {"x0", "double.0.img_norm_q", "double.0.img_q.lora_a"};
    for (int k = 0; k < 3; k++) {
        size_t i;
        aitk_step_tensor t;
        assert_int_equal(aitk_step_tensor_find(m, names[k], &i), AITK_OK);
        assert_int_equal(aitk_step_tensor_info(m, i, &t), AITK_OK);
        float *v = malloc(t.count * sizeof *v);
        assert_non_null(v);
        assert_int_equal(aitk_step_tensor_get(m, i, v, t.count), AITK_OK);
        const float scale = k == 0   ? 1.0f
                            : k == 1 ? 0.125f
                                     : (float)(1.0 / sqrt((double)t.dims[1]));
        for (size_t j = 0; j < t.count; j++) {
            const float d = aitk_step_draw(s.seed, names[k], j, scale);
            assert_true(v[j] == (k == 1 ? 1.0f + d : d));
        }
        free(v);
    }
    aitk_step_model_free(m);
    aitk_model_spec_free(spec);
}

/* Loss of step `at` after `trained` updates at learning rate `lr` (lr 0:
 * the untrained model on the very same batch, as the inputs of step k
 * depend only on the seed and k). */
static double loss_at_step(const aitk_model_spec *spec, aitk_step_setup s, int at, float lr,
                           aitk_mem_account *acct)
{
    s.adamw.lr = lr;
    aitk_step_model *m = create(spec, &s, acct);
    aitk_step_result r = {0};
    for (int i = 0; i < at; i++) {
        assert_int_equal(aitk_step_run(m, &r), AITK_OK);
        assert_true(isfinite(r.loss));
    }
    aitk_step_model_free(m);
    return r.loss;
}

static void nf4_base_trains_and_keeps_its_bytes(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        aitk_model_spec *spec = load(models[k]);
        aitk_step_setup s;
        tiny_setup(&s, spec);
        s.base = AITK_STEP_BASE_NF4;
        s.checkpointing = true;
        /* Weight bytes: every Linear weight (".w") NF4, n/2 bytes (rounded
         * up) + 4 per 64-weight block; biases, norm weights and the fp32
         * LoRA 4 bytes each. */
        aitk_mem_account acct = {0};
        aitk_step_model *m = create(spec, &s, &acct);
        size_t want = 0, nf4 = 0, a_weight = 0;
        for (size_t i = 0; i < aitk_step_tensor_count(m); i++) {
            aitk_step_tensor t;
            assert_int_equal(aitk_step_tensor_info(m, i, &t), AITK_OK);
            const size_t len = strlen(t.name);
            if (t.kind == AITK_STEP_T_BASE && len > 2 && strcmp(t.name + len - 2, ".w") == 0) {
                want += (t.count + 1) / 2 + 4 * ((t.count + 63) / 64);
                nf4++;
                a_weight = i;
            } else if (t.kind != AITK_STEP_T_INPUT) {
                want += 4 * t.count;
            }
        }
        printf("%s NF4: %zu quantized weights, weight bytes %zu (expected %zu)\n", models[k],
               nf4, acct.current[AITK_MEM_WEIGHTS], want);
        assert_true(nf4 > 10);
        assert_int_equal(acct.current[AITK_MEM_WEIGHTS], want);
        /* a quantized weight reads back as codes times its block's absmax:
         * within half the widest code gap (0.30 x absmax <= 0.16 / sqrt(in)) */
        aitk_step_tensor t;
        assert_int_equal(aitk_step_tensor_info(m, a_weight, &t), AITK_OK);
        float *w = malloc(t.count * sizeof *w);
        assert_non_null(w);
        assert_int_equal(aitk_step_tensor_get(m, a_weight, w, t.count), AITK_OK);
        const float ws = (float)(1.0 / sqrt((double)t.dims[1]));
        double worst = 0;
        for (size_t j = 0; j < t.count; j++)
            worst = fmax(worst, fabs((double)w[j] - aitk_step_draw(s.seed, t.name, j, ws)));
        assert_true(worst > 0 && worst <= 0.16 * ws);
        free(w);
        aitk_step_model_free(m);
        /* Training lowers the loss on a batch it has not seen: step 9's,
         * after 8 updates, against the untrained model on the same batch. */
        const double trained = loss_at_step(spec, s, 9, 1e-2f, &acct);
        const double untrained = loss_at_step(spec, s, 9, 0.0f, &acct);
        printf("%s NF4: loss of step 9 %.6f trained, %.6f untrained\n", models[k], trained,
               untrained);
        assert_true(trained < untrained);
        assert_int_equal(acct.current_total, 0);
        aitk_model_spec_free(spec);
    }
}

/* Fixed noise: every step sees the data of the first, so at the default
 * learning rate (1e-4, what the workloads run) the loss falls at every one
 * of 12 steps, in all three models; without it the second step's loss
 * differs from what the first step's data would give. */
static void fixed_noise_makes_the_loss_fall(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        aitk_model_spec *spec = load(models[k]);
        aitk_step_setup s;
        tiny_setup(&s, spec);
        s.adamw.lr = 1e-4f;
        s.fixed_noise = true;
        aitk_mem_account acct = {0};
        aitk_step_model *m = create(spec, &s, &acct);
        double loss[12];
        for (int i = 0; i < 12; i++) {
            aitk_step_result r;
            assert_int_equal(aitk_step_run(m, &r), AITK_OK);
            loss[i] = r.loss;
        }
        aitk_step_model_free(m);
        printf("%s fixed noise: loss %.6f at step 1, %.6f at step 12\n", models[k], loss[0],
               loss[11]);
        for (int i = 1; i < 12; i++)
            if (!(loss[i] < loss[i - 1]))
                fail_msg("%s: step %d's loss %.9f is not below step %d's %.9f", models[k],
                         i + 1, loss[i], i, loss[i - 1]);

        /* Fresh noise: step 2 of an untrained model (lr 0) sees other data
         * than step 1, so its loss differs; with fixed noise it is equal. */
        s.adamw.lr = 0.0f;
        for (int fixed = 0; fixed < 2; fixed++) {
            s.fixed_noise = fixed;
            m = create(spec, &s, &acct);
            aitk_step_result r1, r2;
            assert_int_equal(aitk_step_run(m, &r1), AITK_OK);
            assert_int_equal(aitk_step_run(m, &r2), AITK_OK);
            aitk_step_model_free(m);
            if (fixed)
                assert_true(r1.loss == r2.loss);
            else
                assert_true(r1.loss != r2.loss);
        }
        assert_int_equal(acct.current_total, 0);
        aitk_model_spec_free(spec);
    }
}

static void bad_setups_are_reported(void **state)
{
    (void)state;
    aitk_model_spec *spec = load("flux1-dev");
    aitk_step_setup s;
    aitk_str err = AITK_STR_INIT;
    aitk_mem_account acct = {0};
    aitk_step_model *m = (aitk_step_model *)&s; /* must be reset to NULL on failure */
    struct {
        long rank, batch, resolution, img;
        const char *needle;
    } bad[] = {
        {0, 1, 0, 16, "rank 0"},
        {4, 0, 0, 16, "batch 0"},
        {4, 1, 8, 0, "resolution 8 px"},
        {4, 1, 0, 0, "img_tokens 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tiny_setup(&s, spec);
        s.rank = bad[i].rank;
        s.batch = bad[i].batch;
        s.resolution = bad[i].resolution;
        s.img_tokens = bad[i].img;
        aitk_str_clear(&err);
        assert_int_equal(aitk_step_model_create(spec, &s, aitk_ops_cpu(), &acct, &m, &err),
                         AITK_E_INVAL);
        assert_null(m);
        if (!strstr(aitk_str_cstr(&err), bad[i].needle))
            fail_msg("'%s' does not mention '%s'", aitk_str_cstr(&err), bad[i].needle);
    }
    /* an incomplete backend table names the missing operation */
    aitk_ops partial = *aitk_ops_cpu();
    partial.swiglu_backward = NULL;
    tiny_setup(&s, spec);
    aitk_str_clear(&err);
    assert_int_equal(aitk_step_model_create(spec, &s, &partial, &acct, &m, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "swiglu_backward"));
    /* a model without a step graph */
    const char *saved = spec->id;
    spec->id = "sd15";
    aitk_str_clear(&err);
    assert_int_equal(aitk_step_model_create(spec, &s, aitk_ops_cpu(), &acct, &m, &err),
                     AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "sd15"));
    spec->id = saved;
    assert_int_equal(acct.current_total, 0);
    aitk_str_free(&err);
    aitk_model_spec_free(spec);
}

static void memory_limit_and_failures_are_clean(void **state)
{
    (void)state;
    aitk_model_spec *spec = load("omnigen2");
    aitk_step_setup s;
    tiny_setup(&s, spec);
    aitk_str err = AITK_STR_INIT;
    /* the account's limit: "does it fit" simulated on this machine */
    aitk_mem_account acct = {.limit = 64 * 1024};
    aitk_step_model *m = NULL;
    assert_int_equal(aitk_step_model_create(spec, &s, aitk_ops_cpu(), &acct, &m, &err),
                     AITK_E_NOMEM);
    assert_null(m);
    assert_true(err.len > 0);
    assert_int_equal(acct.current_total, 0);
    /* every allocation in turn fails: reported, nothing leaks (ASan checks) */
    int failures = 0;
    for (long n = 0; n < 100000; n++) {
        aitk_mem_account a2 = {0};
        aitk_str_clear(&err);
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_step_model_create(spec, &s, aitk_ops_cpu(), &a2, &m, &err);
        aitk_alloc_fail_after(-1);
        if (st == AITK_OK) {
            aitk_step_model_free(m);
            break;
        }
        assert_int_equal(st, AITK_E_NOMEM);
        assert_null(m);
        assert_int_equal(a2.current_total, 0);
        failures++;
    }
    printf("%d allocation failures injected, each reported\n", failures);
    assert_true(failures > 50);
    aitk_str_free(&err);
    aitk_model_spec_free(spec);
}

static void tensor_table_lookups(void **state)
{
    (void)state;
    aitk_model_spec *spec = load("chroma");
    aitk_step_setup s;
    tiny_setup(&s, spec);
    aitk_mem_account acct = {0};
    aitk_step_model *m = create(spec, &s, &acct);
    size_t i;
    assert_int_equal(aitk_step_tensor_find(m, "no.such.tensor", &i), AITK_E_NOTFOUND);
    assert_int_equal(aitk_step_tensor_find(m, "double.1.img_mlp_in.lora_a", &i), AITK_OK);
    aitk_step_tensor t;
    assert_int_equal(aitk_step_tensor_info(m, i, &t), AITK_OK);
    assert_int_equal(t.kind, AITK_STEP_T_LORA);
    assert_int_equal(t.dims[0], 4);  /* rank */
    assert_int_equal(t.dims[1], 64); /* tiny hidden */
    float buf[4];
    assert_int_equal(aitk_step_tensor_get(m, i, buf, 4), AITK_E_INVAL);
    assert_int_equal(aitk_step_tensor_find(m, "double.1.img_mlp_in.w", &i), AITK_OK);
    assert_int_equal(aitk_step_grad_get(m, i, buf, 4), AITK_E_INVAL); /* frozen */
    assert_int_equal(aitk_step_tensor_info(m, aitk_step_tensor_count(m), &t), AITK_E_RANGE);
    /* Chroma has no per-block modulation Linears; FLUX's would be here */
    assert_int_equal(aitk_step_tensor_find(m, "double.0.img_mod.w", &i), AITK_E_NOTFOUND);
    aitk_step_model_free(m);
    /* the cost model's plan is written over square images */
    s.img_tokens = 15;
    m = create(spec, &s, &acct);
    aitk_step_plan plan;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_step_memory_plan(m, &plan, &err), AITK_E_UNSUPPORTED);
    assert_non_null(strstr(aitk_str_cstr(&err), "15 tokens"));
    aitk_str_free(&err);
    aitk_step_model_free(m);
    aitk_model_spec_free(spec);
}

/* Runs 3 steps and returns the loss of each and the LoRA weights after. */
static float *three_steps(const aitk_model_spec *spec, const aitk_step_setup *s, double loss[3],
                          size_t *n)
{
    aitk_mem_account acct = {0};
    aitk_step_model *m = create(spec, s, &acct);
    for (int i = 0; i < 3; i++) {
        aitk_step_result r;
        assert_int_equal(aitk_step_run(m, &r), AITK_OK);
        assert_true(isfinite(r.loss) && r.flops > r.model_flops * (s->checkpointing ? 1 : 0));
        loss[i] = r.loss;
    }
    float *w = lora_dump(m, false, n);
    aitk_step_model_free(m);
    return w;
}

static void storage_variants_stay_close(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        aitk_model_spec *spec = load(models[k]);
        aitk_step_setup s;
        tiny_setup(&s, spec);
        s.checkpointing = true;
        double ref[3], got[3];
        size_t n, n2;
        float *w = three_steps(spec, &s, ref, &n);
        /* bf16 weights: 8 significant bits, <= 2^-9 relative per weight; the
         * errors average out over each dot product and the loss moved by at
         * most 8e-5 (measured): allowed 1e-3. fp8 e4m3 with a per-tensor scale:
         * 4 bits, <= 2^-4 per weight (worse near the bottom of its range):
         * measured at most 1.4e-3, allowed 1e-2. Both must differ from fp32
         * (the storage was really emulated). */
        const struct { aitk_step_base base; double tol; const char *name; } v[] = {
            {AITK_STEP_BASE_BF16, 1e-3, "bf16"}, {AITK_STEP_BASE_FP8, 1e-2, "fp8"}};
        for (int j = 0; j < 2; j++) {
            s.base = v[j].base;
            float *w2 = three_steps(spec, &s, got, &n2);
            const double rel = fabs(got[0] - ref[0]) / ref[0];
            printf("%s %s base: loss %.6f vs fp32 %.6f (%.2g rel, allowed %.2g)\n", models[k],
                   v[j].name, got[0], ref[0], rel, v[j].tol);
            assert_true(rel > 0 && rel <= v[j].tol); /* different, and close */
            free(w2);
        }
        /* 8-bit AdamW: e4m3 moments (3 significant bits) change each step by
         * a fraction of lr, never by more than lr; weights differ from fp32
         * AdamW by under 0.5 lr after 3 steps, and do differ. */
        s.base = AITK_STEP_BASE_FP32;
        s.optimizer = AITK_STEP_ADAMW8BIT;
        float *w8 = three_steps(spec, &s, got, &n2);
        assert_int_equal(n, n2);
        double worst = 0;
        for (size_t i = 0; i < n; i++)
            worst = fmax(worst, fabs((double)w8[i] - w[i]));
        printf("%s 8-bit AdamW: largest weight difference %.3g lr\n", models[k],
               worst / s.adamw.lr);
        assert_true(worst > 0 && worst <= 0.5 * s.adamw.lr);
        free(w8);
        free(w);
        aitk_model_spec_free(spec);
    }
}

/* With an argument, runs only the test of that name (one ctest each). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(checkpointing_is_bitwise_neutral),
        cmocka_unit_test(peak_matches_memory_plan),
        cmocka_unit_test(draw_matches_numpy),
        cmocka_unit_test(bad_setups_are_reported),
        cmocka_unit_test(memory_limit_and_failures_are_clean),
        cmocka_unit_test(tensor_table_lookups),
        cmocka_unit_test(storage_variants_stay_close),
        cmocka_unit_test(backend_draw_matches_step_draw),
        cmocka_unit_test(nf4_base_trains_and_keeps_its_bytes),
        cmocka_unit_test(fixed_noise_makes_the_loss_fall),
    };
    if (argc > 1) {
        bool known = false;
        for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
            known = known || strcmp(tests[i].name, argv[1]) == 0;
        if (!known) {
            fprintf(stderr, "test_step.all: no test '%s'\n", argv[1]);
            return 2;
        }
        cmocka_set_test_filter(argv[1]);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
