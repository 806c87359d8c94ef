/* The step graphs call the fused LayerNorm + modulation op (ops.h:
 * layernorm_modulate_*) where a block or final layer opens with a
 * LayerNorm and its adaLN modulation. On the CPU this changes nothing:
 * a table whose fused members run the separate ops instead (layernorm then
 * modulate; modulate_backward into a scratch tensor, then
 * layernorm_backward) gives the same loss and the same LoRA gradients bit
 * for bit, for the three architectures, with and without checkpointing.
 * So the golden files, made when the graphs called the separate ops, hold
 * for the fused graphs, and a GPU's fused kernel is judged against the same
 * reference. The composed table also counts its calls: a graph that
 * stopped using the fused op would fail here rather than compare two
 * identical runs. */
#include <math.h>
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

/* ---- the fused op composed of the separate ones (CPU storage: fp32) ---- */

static long composed_calls;
static float *scratch;      /* modulate_backward's dx, the gradient reaching ln */
static size_t scratch_elems;

static aitk_status composed_fwd(aitk_act *out, aitk_act *ln, float *mean, float *rstd,
                                const aitk_act *inp, const aitk_act *shift, const aitk_act *scale,
                                int b, int t, int c, int ld, float eps)
{
    const aitk_ops *cpu = aitk_ops_cpu();
    composed_calls++;
    aitk_status st = cpu->layernorm_forward(ln, mean, rstd, inp, b * t, c, eps);
    return st ? st : cpu->modulate_forward(out, ln, shift, scale, b, t, c, ld);
}

static aitk_status composed_bwd(aitk_act *dinp, aitk_act *dshift, aitk_act *dscale,
                                const aitk_act *dout, const aitk_act *inp, const aitk_act *ln,
                                const float *mean, const float *rstd, const aitk_act *scale,
                                int b, int t, int c, int ld)
{
    const aitk_ops *cpu = aitk_ops_cpu();
    const size_t n = (size_t)b * (size_t)t * (size_t)c;
    composed_calls++;
    if (n > scratch_elems) {
        float *p = realloc(scratch, n * sizeof *p);
        assert_non_null(p);
        scratch = p;
        scratch_elems = n;
    }
    aitk_act *d_ln = (aitk_act *)scratch;
    aitk_status st = cpu->modulate_backward(d_ln, dshift, dscale, dout, ln, scale, b, t, c, ld);
    return st ? st : cpu->layernorm_backward(dinp, d_ln, inp, mean, rstd, b * t, c);
}

static const aitk_ops *composed_table(void)
{
    static aitk_ops table;
    table = *aitk_ops_cpu();
    table.name = "cpu-separate-norm-modulate";
    table.layernorm_modulate_forward = composed_fwd;
    table.layernorm_modulate_backward = composed_bwd;
    return &table;
}

/* ---- one step on a table ---- */

typedef struct step_out {
    double loss;
    float *grads;
    size_t n;
} step_out;

static step_out run_step(const aitk_model_spec *spec, bool ckpt, const aitk_ops *ops)
{
    aitk_step_setup s;
    aitk_step_setup_defaults(&s, spec);
    s.batch = 2; /* two samples: the per-sample modulation rows are exercised */
    s.resolution = 0;
    s.img_tokens = 16;
    s.txt_tokens = 8;
    s.rank = 4;
    s.alpha = 4;
    s.base = AITK_STEP_BASE_FP32;
    s.optimizer = AITK_STEP_ADAMW;
    s.checkpointing = ckpt;
    aitk_mem_account acct = {0};
    aitk_step_model *m = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_step_model_create(spec, &s, ops, &acct, &m, &err) != AITK_OK)
        fail_msg("create: %s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    aitk_step_result r;
    assert_int_equal(aitk_step_forward_backward(m, &r), AITK_OK);
    step_out o = {r.loss, malloc(aitk_step_lora_params(m) * sizeof(float)), 0};
    assert_non_null(o.grads);
    for (size_t i = 0; i < aitk_step_tensor_count(m); i++) {
        aitk_step_tensor t;
        assert_int_equal(aitk_step_tensor_info(m, i, &t), AITK_OK);
        if (t.kind != AITK_STEP_T_LORA)
            continue;
        assert_int_equal(aitk_step_grad_get(m, i, o.grads + o.n, t.count), AITK_OK);
        o.n += t.count;
    }
    aitk_step_model_free(m);
    return o;
}

static void fused_graph_is_bitwise_separate(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        aitk_model_spec *spec = NULL;
        aitk_str err = AITK_STR_INIT;
        if (aitk_model_spec_load(models[k], true, &spec, &err) != AITK_OK)
            fail_msg("%s", aitk_str_cstr(&err));
        aitk_str_free(&err);
        for (int ck = 0; ck < 2; ck++) {
            step_out fused = run_step(spec, ck, aitk_ops_cpu());
            composed_calls = 0;
            step_out separate = run_step(spec, ck, composed_table());
            printf("%s%s: loss %.9g fused, %.9g separate; %zu LoRA gradients; %ld calls of "
                   "the fused op\n",
                   models[k], ck ? " (checkpointing)" : "", fused.loss, separate.loss, fused.n,
                   composed_calls);
            assert_true(composed_calls > 0);
            assert_true(fused.loss == separate.loss);
            assert_int_equal(fused.n, separate.n);
            assert_memory_equal(fused.grads, separate.grads, fused.n * sizeof(float));
            size_t nonzero = 0;
            for (size_t i = 0; i < fused.n; i++)
                nonzero += fused.grads[i] != 0.0f;
            assert_true(nonzero > fused.n / 2); /* the comparison compared something */
            free(fused.grads), free(separate.grads);
        }
        aitk_model_spec_free(spec);
    }
    free(scratch);
    scratch = NULL;
    scratch_elems = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fused_graph_is_bitwise_separate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
