/* The trainer as a parameter of the job (models/trainers.yaml): the file is
 * read and checked, each trainer's settings move a prediction the way its
 * source says (against figures worked by hand in the comments), a reported
 * row is predicted with the trainer it names, and `predict --trainer` parses,
 * refuses an unknown name with exit 2 and one line, and keeps a config's
 * trainer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "models/reported.h"
#include "models/trainers.h"
#include "tests/exe_run.h"

#define FIXTURE(name) AITK_SOURCE_DIR "/tests/models/fixtures/" name

/* In doubles: cmocka's assert_float_equal compares floats (and casts its
 * first argument unparenthesized), too coarse for bytes in the billions. */
#define assert_near(a, b, tol)                                                                   \
    do {                                                                                         \
        const double a_ = (a), b_ = (b);                                                         \
        if (!(fabs(a_ - b_) <= (tol)))                                                           \
            fail_msg("%s = %.6f, expected %.6f within %g", #a, a_, b_, (double)(tol));            \
    } while (0)

typedef struct fixture {
    aitk_trainers *trainers;
    aitk_cost_params *params;
    aitk_gpudb *db;
    aitk_model_spec *flux, *chroma;
} fixture;

static int setup(void **state)
{
    fixture *f = aitk_calloc(1, sizeof *f);
    aitk_str err = AITK_STR_INIT;
    if (!f || aitk_trainers_load(&f->trainers, &err) || aitk_cost_params_load(&f->params, &err) ||
        aitk_gpudb_load(&f->db, &err) || aitk_model_spec_load("flux1-dev", false, &f->flux, &err) ||
        aitk_model_spec_load("chroma", false, &f->chroma, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    aitk_trainers_free(f->trainers);
    aitk_cost_params_free(f->params);
    aitk_gpudb_free(f->db);
    aitk_model_spec_free(f->flux);
    aitk_model_spec_free(f->chroma);
    aitk_free(f);
    return 0;
}

static const aitk_trainer *trainer(fixture *f, const char *id)
{
    const aitk_trainer *t = aitk_trainers_find(f->trainers, id);
    if (!t)
        fail_msg("no trainer '%s'", id);
    return t;
}

/* FLUX.1-dev at one square resolution, batch 1, text cached, with trainer t. */
static aitk_workload flux_job(fixture *f, const char *t, long res, aitk_weight_dtype base)
{
    aitk_workload w;
    aitk_workload_defaults(&w, f->flux);
    aitk_workload_set_resolution(&w, res);
    w.batch = 1;
    w.cache_text = true;
    w.checkpointing = true;
    w.base_dtype = base;
    aitk_workload_set_trainer(&w, trainer(f, t));
    return w;
}

static aitk_prediction predict(fixture *f, const aitk_workload *w, const char *gpu)
{
    const aitk_gpu_spec *g = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_prediction p;
    if (aitk_gpudb_find(f->db, gpu, &g, &err) || aitk_cost_predict(w, f->params, g, &p, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    return p;
}

/* The file as its sources say (models/trainers.yaml): kohya's fp8_base is a
 * plain cast and its optimizer AdamW; diffusers' fp8 is torchao's; ai-toolkit
 * and SimpleTuner quantize with quanto; all four pad FLUX.1's T5 prompts to
 * 512 tokens and count optimizer steps; ai-toolkit is the default. */
static void test_file(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->trainers->count, 4);
    assert_string_equal(f->trainers->fallback->id, "ai-toolkit");
    assert_int_equal(trainer(f, "kohya")->fp8, AITK_FP8_CAST);
    assert_string_equal(trainer(f, "kohya")->optimizer, "adamw");
    assert_int_equal(trainer(f, "diffusers")->fp8, AITK_FP8_TORCHAO);
    assert_int_equal(trainer(f, "ai-toolkit")->fp8, AITK_FP8_QUANTO);
    assert_null(trainer(f, "ai-toolkit")->optimizer);
    assert_int_equal(trainer(f, "simpletuner")->fp8, AITK_FP8_QUANTO);
    for (size_t i = 0; i < f->trainers->count; i++) {
        aitk_workload w = flux_job(f, f->trainers->items[i].id, 512, AITK_WEIGHT_BF16);
        assert_int_equal(w.text_tokens, 512);
        assert_true(f->trainers->items[i].optimizer_steps);
        /* Every default optimizer is one cost.yaml prices. */
        assert_non_null(aitk_cost_find_optimizer(f->params, w.optimizer));
    }
    /* Names ignore case; a report's free text names its trainer by alias. */
    assert_ptr_equal(aitk_trainers_find(f->trainers, "KOHYA"), trainer(f, "kohya"));
    assert_ptr_equal(aitk_trainers_match(f->trainers, "fluxgym (kohya sd-scripts)"),
                     trainer(f, "kohya"));
    assert_ptr_equal(aitk_trainers_match(f->trainers, "SimpleTuner"), trainer(f, "simpletuner"));
    assert_ptr_equal(aitk_trainers_match(f->trainers, "diffusers (train_dreambooth_lora_flux.py)"),
                     trainer(f, "diffusers"));
    assert_null(aitk_trainers_match(f->trainers, "OmniGen2 (train.py)"));
    assert_null(aitk_trainers_find(f->trainers, "onetrainer"));
    assert_true(aitk_trainer_has_model(trainer(f, "kohya"), "chroma"));
    assert_false(aitk_trainer_has_model(trainer(f, "diffusers"), "chroma"));
}

/* SimpleTuner's settings for FLUX.1-dev are ai-toolkit's (512 tokens,
 * optimum-quanto, no optimizer of its own) but for its LoRA, which adapts
 * the attention projections only (--flux_lora_target all): per double block
 * q, k, v and out of both streams, 8 x (3072 + 3072) = 49,152, per single
 * block q, k, v, 3 x (3072 + 3072) = 18,432; 19 x 49,152 + 38 x 18,432 =
 * 1,634,304 a rank, 26,148,864 at rank 16. Given the same layers, and
 * autocast as SimpleTuner runs its forward, ai-toolkit's job is the same job:
 * the same answer. */
static void test_simpletuner_as_aitk(void **state)
{
    fixture *f = *state;
    aitk_workload a = flux_job(f, "ai-toolkit", 1024, AITK_WEIGHT_FP8);
    aitk_workload s = flux_job(f, "simpletuner", 1024, AITK_WEIGHT_FP8);
    aitk_prediction ps = predict(f, &s, "RTX 4090");
    assert_float_equal(ps.work.lora_params, 26148864.0, 0.5);
    assert_true(predict(f, &a, "RTX 4090").step_s > ps.step_s);
    a.lora_only = s.lora_only;
    a.autocast = s.autocast;
    aitk_prediction pa = predict(f, &a, "RTX 4090");
    assert_float_equal(ps.step_s, pa.step_s, 0);
    assert_float_equal(ps.memory.total, pa.memory.total, 0);
}

static void rejects_trainers(const char *text, const char *needle)
{
    aitk_yaml_doc *doc = NULL;
    aitk_trainers *t = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_yaml_parse("t.yaml", text, strlen(text), &doc, &err), AITK_OK);
    assert_int_not_equal(aitk_trainers_from_doc(doc, &t, &err), AITK_OK);
    assert_null(t);
    if (!strstr(aitk_str_cstr(&err), needle))
        fail_msg("'%s' lacks '%s'", aitk_str_cstr(&err), needle);
    aitk_str_free(&err);
}

#define TRAINER_HEAD "schema: 1\ndefault: a\ntrainers:\n  a:\n    title: A\n    aliases: [a]\n"
#define TOKENS "    text_tokens: {flux1-dev: {value: 77, source: s}}\n"
#define REST                                                                                     \
    "    optimizer: {value: none, source: s}\n    step: {value: optimizer, source: s}\n"

/* A malformed trainers file is refused at its place: a value without a
 * source, an fp8 path nobody knows, a default that is no trainer. */
static void test_file_rejects(void **state)
{
    (void)state;
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: quanto}\n" REST, "t.yaml:8:");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: int3, source: s}\n" REST,
                     "'int3' is not one of the known values");
    rejects_trainers(TRAINER_HEAD "    text_tokens: {flux1-dev: {value: 0, source: s}}\n"
                                  "    fp8: {value: quanto, source: s}\n" REST,
                     "text tokens 0 out of range");
    rejects_trainers("schema: 1\ndefault: b\ntrainers:\n  a:\n    title: A\n    aliases: [a]\n"
                     TOKENS "    fp8: {value: cast, source: s}\n" REST,
                     "default: no trainer 'b'");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    lora_layers: {value: [], source: s}\n",
                     "lora_layers: expected 1 to 16 module names, found 0");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    lora_layers: {value: attn.to_q, source: s}\n",
                     "t.yaml:11:26: a list of module names must be a list");
    /* A validation stage needs both its size and its encoders' dtype. */
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    validation_text: {value: bf16, source: s}\n",
                     "validation_resolution");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    validation_resolution: {value: 16, source: s}\n"
                     "    validation_text: {value: bf16, source: s}\n",
                     "validation_resolution 16 out of range");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    validation_resolution: {value: 1024, source: s}\n"
                     "    validation_text: {value: int8, source: s}\n",
                     "'int8' is not one of the known values");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    elementwise_bwd_factor: {flux1-dev: {value: 9, source: s}}\n",
                     "elementwise_bwd_factor 9 out of range");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    elementwise_bwd_factor: {flux1-dev: {value: 1.5}}\n",
                     "source");
}

/* Validation between steps (models/trainers.yaml): diffusers' script loads
 * both text encoders again for it, a second peak beside the training step;
 * the other trainers have none. FLUX.1's encoders hold 4.76e9 (T5-XXL) +
 * 123e6 (CLIP-L) = 4.883e9 parameters: loaded in fp32 rather than bf16 they
 * take 2 B more each, 9.766e9 B, and the peak that much more with the
 * fragmentation allowance on it. The fit is judged on the larger peak: a
 * 512 px job whose step fits an A100 40GB misses there once the encoders
 * come back in fp32 (diffusers before 2024-09-14; the row of
 * huggingface/diffusers issue #9156 in models/reported_speeds.yaml). */
static void test_validation(void **state)
{
    fixture *f = *state;
    aitk_workload a = flux_job(f, "ai-toolkit", 512, AITK_WEIGHT_BF16);
    aitk_prediction pa = predict(f, &a, "A100 40GB SXM");
    assert_int_equal(a.validation_resolution, 0);
    assert_float_equal(pa.memory.validation_total, 0, 0);
    assert_float_equal(aitk_memory_plan_peak(&pa.memory), pa.memory.total, 0);

    aitk_workload d = flux_job(f, "diffusers", 512, AITK_WEIGHT_BF16);
    assert_int_equal(d.validation_resolution, 1024);
    assert_int_equal(d.validation_te_dtype, AITK_WEIGHT_BF16);
    /* The script of #9156's week deleted its encoders after encoding the
     * prompt (the script keeps them since 37e3603c4a: cached_text). */
    assert_true(d.te_resident);
    d.te_resident = false;
    d.checkpointing = false;
    aitk_prediction bf = predict(f, &d, "A100 40GB SXM");
    assert_near(bf.memory.validation_text, 4.883e9 * 2, 1);
    d.validation_te_dtype = AITK_WEIGHT_FP32;
    aitk_prediction fp = predict(f, &d, "A100 40GB SXM");
    assert_near(fp.memory.validation_text, 4.883e9 * 4, 1);
    assert_near(fp.memory.validation_total - bf.memory.validation_total,
                9.766e9 * (1.0 + f->params->fragmentation), 1);
    /* The step is the same; only the second peak moved. */
    assert_float_equal(fp.memory.total, bf.memory.total, 0);
    const double ctx = fp.memory.bytes[AITK_PLAN_CUDA_CONTEXT];
    assert_true(fp.memory.total - ctx < fp.usable_bytes);
    assert_true(fp.memory.validation_total > fp.memory.total);
    assert_near(fp.needed_bytes, fp.memory.validation_total - ctx, 1);
    assert_false(fp.fits);
    d.validation_resolution = 0;
    assert_true(predict(f, &d, "A100 40GB SXM").fits);
}

/* Text tokens (a): diffusers' QLoRA research project encodes 77 T5 tokens
 * where ai-toolkit pads to 512. FLUX.1's 19 double and 38 single blocks all
 * attend over image + text tokens; at 512 px a sample has (512 / 16)^2 = 1024
 * image tokens, so 1024 + 512 = 1536 tokens against 1024 + 77 = 1101.
 * Attention FLOPs go with the square: 1101^2 / 1536^2 = 1212201 / 2359296 =
 * 0.513797...; the step gets shorter and the peak smaller. */
static void test_text_tokens(void **state)
{
    fixture *f = *state;
    aitk_workload w512 = flux_job(f, "diffusers", 512, AITK_WEIGHT_BF16);
    aitk_workload w77 = w512;
    w77.text_tokens = 77;
    aitk_step_work a, b;
    assert_int_equal(aitk_cost_work(&w512, f->params, 512, &a), AITK_OK);
    assert_int_equal(aitk_cost_work(&w77, f->params, 512, &b), AITK_OK);
    assert_float_equal(b.flops[AITK_WORK_ATTN_FWD] / a.flops[AITK_WORK_ATTN_FWD],
                       1212201.0 / 2359296.0, 1e-12);
    aitk_prediction p512 = predict(f, &w512, "RTX 4090"), p77 = predict(f, &w77, "RTX 4090");
    assert_true(p77.step_s < p512.step_s);
    assert_true(p77.memory.total < p512.memory.total);
}

/* Quantization path (b), in bytes moved to expand a base weight to bf16 for
 * one pass: optimum-quanto's qfloat8 casts (read 1 B, write 2 B) and scales
 * (read 2 B, write 2 B): 7 B; kohya's float8_e4m3fn weight is cast by
 * autocast alone: 3 B. With the text cached only base weights are expanded,
 * so kohya's expansion traffic is 3 / 7 = 0.428571... of quanto's, and its
 * weights carry no row scales: less memory. */
static void test_fp8_cast(void **state)
{
    fixture *f = *state;
    aitk_workload q = flux_job(f, "ai-toolkit", 1024, AITK_WEIGHT_FP8);
    aitk_workload c = flux_job(f, "kohya", 1024, AITK_WEIGHT_FP8);
    c.optimizer = q.optimizer; /* the path alone */
    aitk_step_work wq, wc;
    assert_int_equal(aitk_cost_work(&q, f->params, 1024, &wq), AITK_OK);
    assert_int_equal(aitk_cost_work(&c, f->params, 1024, &wc), AITK_OK);
    assert_float_equal(wc.bytes[AITK_BYTES_DEQUANT] / wq.bytes[AITK_BYTES_DEQUANT], 3.0 / 7.0,
                       1e-12);
    aitk_prediction pq = predict(f, &q, "RTX A6000"), pc = predict(f, &c, "RTX A6000");
    assert_true(pc.step_s < pq.step_s);
    assert_true(pc.memory.bytes[AITK_PLAN_BASE_WEIGHTS] < pq.memory.bytes[AITK_PLAN_BASE_WEIGHTS]);
}

/* torchao's float8 training (diffusers --do_fp8_training) keeps bf16
 * weights: its base weighs what a bf16 base does, twice quanto's 1 B a
 * weight for the Linears. Its base GEMMs run at the fp8 rate: on an H100 SXM
 * 1979 / 989 = 2.001 times the bf16 one (NVIDIA's datasheet figures in
 * models/gpus.yaml), so GEMM time is (base / 2.001 + LoRA) over the matmul
 * rate 786.45 TFLOP/s x 0.875. */
static void test_fp8_torchao(void **state)
{
    fixture *f = *state;
    aitk_workload t = flux_job(f, "diffusers", 1024, AITK_WEIGHT_FP8);
    aitk_workload b = flux_job(f, "diffusers", 1024, AITK_WEIGHT_BF16);
    aitk_prediction pt = predict(f, &t, "H100 SXM"), pb = predict(f, &b, "H100 SXM");
    assert_float_equal(pt.memory.bytes[AITK_PLAN_BASE_WEIGHTS],
                       pb.memory.bytes[AITK_PLAN_BASE_WEIGHTS], 1);
    const aitk_step_work *k = &pt.work;
    const double base = k->flops[AITK_WORK_GEMM_FWD] + k->flops[AITK_WORK_GEMM_RECOMPUTE] +
                        k->flops[AITK_WORK_GEMM_BWD];
    const double other = k->flops[AITK_WORK_LORA] + k->flops[AITK_WORK_CONDITIONING];
    assert_float_equal(pt.t_gemm, (base / (1979.0 / 989.0) + other) / (786.45e12 * 0.875),
                       1e-9);
    assert_true(pt.t_gemm < pb.t_gemm);
    /* Each fp8 GEMM scales and casts its operands: traffic a bf16 base has not. */
    assert_true(k->bytes[AITK_BYTES_DEQUANT] > pb.work.bytes[AITK_BYTES_DEQUANT]);
    /* torchao's backward computes the frozen weight's gradient as well as
     * dX: twice a bf16 base's backward GEMMs. */
    assert_float_equal(k->flops[AITK_WORK_GEMM_BWD], 2 * pb.work.flops[AITK_WORK_GEMM_BWD], 1);
    /* Each fp8 GEMM scales and casts its operands, 33 B an element in eager
     * PyTorch (cost.yaml fp8_compute_cast_bytes). A forward pass casts each
     * Linear's weight and input (in x out + in x tokens): the recompute of
     * FLUX's checkpointed blocks at 1024 px (h = 3072; tokens 4096 image,
     * 512 text, 4608 both, 1 for the modulation Linears) casts, per double
     * block, 36 h^2 + 9 x 4608 h + 2 h elements and per single block
     * 15 h^2 + 9 x 4608 h + h: 19 and 38 of them, 19,096,375,296 elements.
     * A backward casts dY twice and the input again (2 x out x tokens +
     * in x tokens): per double block 27 x 4608 h + 26 h, per single
     * 25 x 4608 h + 7 h, and the final layer's two Linears 5 h + 13,107,200:
     * 20,725,357,568 elements, the step's traffic over a forward pass's. */
    aitk_step_work nockpt, fwd_only;
    aitk_workload t2 = t;
    t2.checkpointing = false;
    assert_int_equal(aitk_cost_work(&t2, f->params, 1024, &nockpt), AITK_OK);
    assert_float_equal(k->bytes[AITK_BYTES_DEQUANT] - nockpt.bytes[AITK_BYTES_DEQUANT],
                       33 * 19096375296.0, 1e3);
    t2.forward_only = true;
    assert_int_equal(aitk_cost_work(&t2, f->params, 1024, &fwd_only), AITK_OK);
    assert_float_equal(nockpt.bytes[AITK_BYTES_DEQUANT] - fwd_only.bytes[AITK_BYTES_DEQUANT],
                       33 * 20725357568.0, 1e3);
}

/* Each base Linear of a quantized or fp8-computed base launches kernels a
 * bf16 one does not (cost.yaml base_linear_kernels: quanto 3 forward and 2
 * backward, torchao 23 and 34, NF4 3 and 3), every forward pass and the
 * backward: FLUX.1-dev's blocks in diffusers' layout have 14 and 6 Linears,
 * 19 x 14 + 38 x 6 = 494, each forward twice with checkpointing. */
static void test_base_linear_kernels(void **state)
{
    fixture *f = *state;
    const struct {
        const char *trainer;
        aitk_weight_dtype base;
        double more;
    } cases[] = {{"ai-toolkit", AITK_WEIGHT_FP8, 494 * (3 * 2 + 2)},
                 {"ai-toolkit", AITK_WEIGHT_NF4, 494 * (3 * 2 + 3)},
                 {"diffusers", AITK_WEIGHT_FP8, 494 * (23 * 2 + 34)}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aitk_workload q = flux_job(f, cases[i].trainer, 512, cases[i].base);
        aitk_workload b = flux_job(f, cases[i].trainer, 512, AITK_WEIGHT_BF16);
        const double more = aitk_cost_kernels(&q, f->params) - aitk_cost_kernels(&b, f->params);
        if (fabs(more - cases[i].more) > 1e-6)
            fail_msg("%s, base %s: %g kernels more, expected %g", cases[i].trainer,
                     aitk_weight_dtype_name(cases[i].base), more, cases[i].more);
    }
}

/* Optimizer state (c): kohya's default AdamW keeps two fp32 moments, 8 B a
 * LoRA parameter, where ai-toolkit's example's 8-bit AdamW keeps 2 B: the
 * optimizer term is 8 / 2 = 4 times as large. Prodigy (16 B: exp_avg,
 * exp_avg_sq, s, p0) keeps 16 / 8 = 2 times AdamW's. */
static void test_optimizer_state(void **state)
{
    fixture *f = *state;
    aitk_workload a = flux_job(f, "ai-toolkit", 1024, AITK_WEIGHT_FP8);
    aitk_workload k = flux_job(f, "kohya", 1024, AITK_WEIGHT_FP8);
    assert_string_equal(a.optimizer, "adamw8bit");
    assert_string_equal(k.optimizer, "adamw");
    aitk_memory_plan ma, mk, mp;
    assert_int_equal(aitk_cost_memory(&a, f->params, 1024, &ma, NULL), AITK_OK);
    assert_int_equal(aitk_cost_memory(&k, f->params, 1024, &mk, NULL), AITK_OK);
    assert_float_equal(mk.bytes[AITK_PLAN_OPTIMIZER] / ma.bytes[AITK_PLAN_OPTIMIZER], 4.0, 1e-12);
    aitk_workload p = k;
    p.optimizer = "prodigy";
    assert_int_equal(aitk_cost_memory(&p, f->params, 1024, &mp, NULL), AITK_OK);
    assert_float_equal(mp.bytes[AITK_PLAN_OPTIMIZER] / mk.bytes[AITK_PLAN_OPTIMIZER], 2.0, 1e-12);
}

static aitk_status load_reported(fixture *f, const char *text, aitk_reported_speeds **out,
                                 aitk_str *err);

/* kohya keeps its LoRA in fp32 unless --full_bf16 (train_network.py casts
 * the network only then); diffusers' bf16 run keeps it bf16; ai-toolkit's
 * example bf16. FLUX.1-dev's LoRA at rank 128 on every Linear the model
 * marks: 128 x 5,369,856 (the sum of in + out, worked out in
 * tests/models/test_cost.c) = 687,341,568 parameters, 2,749,366,272 B in
 * fp32, half that in bf16, and as much again for the gradients. A row's
 * lora_dtype (full_bf16) wins over its trainer's. */
static void test_lora_dtype(void **state)
{
    fixture *f = *state;
    aitk_workload k = flux_job(f, "kohya", 1024, AITK_WEIGHT_BF16);
    aitk_workload d = flux_job(f, "diffusers", 1024, AITK_WEIGHT_BF16);
    aitk_workload a = flux_job(f, "ai-toolkit", 1024, AITK_WEIGHT_BF16);
    k.rank = d.rank = a.rank = 128;
    aitk_memory_plan mk, md, ma;
    assert_int_equal(aitk_cost_memory(&k, f->params, 1024, &mk, NULL), AITK_OK);
    assert_int_equal(aitk_cost_memory(&d, f->params, 1024, &md, NULL), AITK_OK);
    assert_int_equal(aitk_cost_memory(&a, f->params, 1024, &ma, NULL), AITK_OK);
    assert_float_equal(mk.bytes[AITK_PLAN_LORA_PARAMS], 2749366272.0, 0.5);
    assert_float_equal(mk.bytes[AITK_PLAN_LORA_GRADS], 2749366272.0, 0.5);
    /* diffusers adapts its default list only (models/trainers.yaml
     * lora_layers): per double block q, k, v and out of both streams, 8 x
     * (3072 + 3072) = 49,152, and the four MLP Linears, 4 x (3072 + 12288)
     * = 61,440; per single block q, k, v, 3 x 6144 = 18,432. 19 x 110,592
     * + 38 x 18,432 = 2,801,664; x 128 x 2 B = 717,225,984. */
    assert_float_equal(md.bytes[AITK_PLAN_LORA_PARAMS], 717225984.0, 0.5);
    assert_float_equal(ma.bytes[AITK_PLAN_LORA_PARAMS], 1374683136.0, 0.5);
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    const char *text = "schema: 1\nreports:\n"
        "  - {id: a, source: s, trainer: kohya, gpu: RTX 4090, model: flux1-dev,\n"
        "     seconds_per_step: 2, setup: {rank: 128, lora_dtype: bf16}}\n"
        "  - {id: b, source: s, trainer: kohya, gpu: RTX 4090, model: flux1-dev,\n"
        "     seconds_per_step: 2, setup: {rank: 128}}\n";
    if (load_reported(f, text, &s, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_reported_row rows[2];
    assert_int_equal(aitk_reported_evaluate(s, f->params, NULL, rows, &err), AITK_OK);
    assert_float_equal(rows[0].workload.lora_bytes, 2, 0);
    assert_float_equal(rows[1].workload.lora_bytes, 4, 0);
    aitk_reported_speeds_free(s);
    aitk_str_clear(&err);
    const char *bad = "schema: 1\nreports:\n"
        "  - {id: a, source: s, trainer: kohya, gpu: RTX 4090, model: flux1-dev,\n"
        "     seconds_per_step: 2, setup: {lora_dtype: fp8}}\n";
    assert_int_not_equal(load_reported(f, bad, &s, &err), AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&err), "lora_dtype: expected bf16 or fp32"));
    /* precision reads the same way: bf16 or fp16, nothing else. */
    aitk_str_clear(&err);
    const char *bad_precision = "schema: 1\nreports:\n"
        "  - {id: a, source: s, trainer: kohya, gpu: RTX 4090, model: flux1-dev,\n"
        "     seconds_per_step: 2, setup: {precision: fp32}}\n";
    assert_int_not_equal(load_reported(f, bad_precision, &s, &err), AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&err), "precision: expected bf16 or fp16, found 'fp32'"));
    aitk_str_free(&err);
}

static aitk_status load_reported(fixture *f, const char *text, aitk_reported_speeds **out,
                                 aitk_str *err)
{
    aitk_yaml_doc *doc = NULL;
    aitk_status st = aitk_yaml_parse("r.yaml", text, strlen(text), &doc, err);
    return st ? st : aitk_reported_speeds_from_doc(doc, f->db, f->params, out, err);
}

#define ROW(id, trainer, extra)                                                                  \
    "  - {id: " id ", source: s, trainer: " trainer ", gpu: RTX 4090, model: flux1-dev,\n"      \
    "     seconds_per_step: 2, setup: {resolutions: [512], rank: 4, base: fp8, text: cached" extra \
    "}}\n"

/* What a step is (d), and a report's trainer read from its row: a kohya
 * report's step is one optimizer step, so with accumulation 4 it is four
 * micro-batches and predicted at exactly 4 times the single one (work and
 * the per-pass overhead both x 4); the row names kohya by its free text, so
 * its fp8 base is kohya's cast and its optimizer AdamW. A trainer no entry
 * names is refused unless the row says what it is modelled as. */
static void test_reported_trainer(void **state)
{
    fixture *f = *state;
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    const char *text = "schema: 1\nreports:\n" ROW("a", "fluxgym (kohya sd-scripts)", "")
        ROW("b", "fluxgym (kohya sd-scripts)", ", accumulation: 4")
        ROW("c", "diffusers (miniature)", ", text_tokens: 77");
    if (load_reported(f, text, &s, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_reported_row rows[3];
    assert_int_equal(aitk_reported_evaluate(s, f->params, NULL, rows, &err), AITK_OK);
    assert_string_equal(s->items[0].trainer_spec->id, "kohya");
    assert_int_equal(rows[0].workload.fp8_path, AITK_FP8_CAST);
    assert_string_equal(rows[0].workload.optimizer, "adamw");
    assert_float_equal(rows[1].pred.step_s / rows[0].pred.step_s, 4.0, 1e-9);
    assert_int_equal(rows[2].workload.text_tokens, 77);
    assert_int_equal(rows[2].workload.fp8_path, AITK_FP8_TORCHAO);
    aitk_reported_speeds_free(s);
    aitk_str_clear(&err);
    assert_int_not_equal(load_reported(f, "schema: 1\nreports:\n" ROW("o", "OmniGen2", ""), &s,
                                       &err),
                         AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&err), "r.yaml:3:"));
    assert_non_null(strstr(aitk_str_cstr(&err), "give modelled_as"));
    aitk_str_clear(&err);
    const char *as = "schema: 1\nreports:\n"
                     "  - {id: o, source: s, trainer: OmniGen2, modelled_as: ai-toolkit,\n"
                     "     gpu: RTX 4090, model: flux1-dev, seconds_per_step: 2}\n";
    assert_int_equal(load_reported(f, as, &s, &err), AITK_OK);
    assert_string_equal(s->items[0].trainer_spec->id, "ai-toolkit");
    aitk_reported_speeds_free(s);
    const char *bad = "schema: 1\nreports:\n"
                      "  - {id: o, source: s, trainer: OmniGen2, modelled_as: onetrainer,\n"
                      "     gpu: RTX 4090, model: flux1-dev, seconds_per_step: 2}\n";
    assert_int_not_equal(load_reported(f, bad, &s, &err), AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&err), "modelled_as: no trainer 'onetrainer'"));
    aitk_str_free(&err);
}

/* Whether the forward runs under autocast is the trainer's (kohya's
 * accelerator.autocast(), accelerate's mixed precision for diffusers and
 * SimpleTuner; ai-toolkit's FLUX call has none), and a report's own
 * `autocast` wins over it. Under autocast kohya's FLUX job at 512 px launches
 * its blocks' autocast kernels (models/trainers.yaml kohya kernels:
 * 19 x (2 x 151 + 245) + 38 x (2 x 59 + 97) = 18,563 with checkpointing),
 * plain 19 x (2 x 139 + 205) + 38 x (2 x 56 + 86) = 16,701; its fp8 base, a
 * plain cast, adds one kernel to each Linear's forward (cost.yaml
 * base_linear_kernels cast), and kohya's blocks have 10 and 3 Linears (q, k
 * and v fused): 19 x 10 x 2 + 38 x 3 x 2 = 608 more, forward twice. A value
 * that is no boolean, or one without a source, is refused at its place. */
static void test_autocast(void **state)
{
    fixture *f = *state;
    assert_false(trainer(f, "ai-toolkit")->autocast);
    assert_true(trainer(f, "kohya")->autocast);
    assert_true(trainer(f, "diffusers")->autocast);
    assert_true(trainer(f, "simpletuner")->autocast);
    aitk_workload w = flux_job(f, "kohya", 512, AITK_WEIGHT_FP8);
    assert_true(w.autocast);
    assert_near(aitk_cost_kernels(&w, f->params), 18563 + 608, 1e-9);
    w.autocast = false;
    assert_near(aitk_cost_kernels(&w, f->params), 16701 + 608, 1e-9);
    assert_false(flux_job(f, "ai-toolkit", 512, AITK_WEIGHT_FP8).autocast);

    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    const char *text = "schema: 1\nreports:\n" ROW("k", "fluxgym (kohya sd-scripts)", "")
        ROW("off", "fluxgym (kohya sd-scripts)", ", autocast: false")
        ROW("on", "ai-toolkit", ", autocast: true") ROW("a", "ai-toolkit", "");
    if (load_reported(f, text, &s, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_reported_row rows[4];
    assert_int_equal(aitk_reported_evaluate(s, f->params, NULL, rows, &err), AITK_OK);
    assert_true(rows[0].workload.autocast);
    assert_false(rows[1].workload.autocast);
    assert_true(rows[2].workload.autocast);
    assert_false(rows[3].workload.autocast);
    aitk_reported_speeds_free(s);
    aitk_str_free(&err);

    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    autocast: {value: sometimes, source: s}\n",
                     "t.yaml:11:");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    autocast: {value: true}\n",
                     "source");
}

/* kohya's own FLUX blocks save 25 hidden-sized tensors a token in a double
 * block where diffusers' save 27 (single blocks: 23 both; under autocast
 * 29 and 25 against 33 and 28). Without checkpointing every block keeps
 * them: at 512 px, 1024 image + 512 text tokens enter each double block, so
 * kohya's job keeps 2 x 19 x 1536 x 3072 x 2 B = 358,612,992 B less than
 * the same job with diffusers' counts (a LoRA on every Linear in both), and
 * under autocast 4 x 19 + 3 x 38 = 190 tensors a token less: 1,793,064,960 B. */
/* What `fewer` keeps less than `more` in its saved activations at 512 px,
 * plain and under autocast: the expected gaps are counted by hand. */
static void assert_saved_gap(const fixture *f, aitk_workload more, aitk_workload fewer,
                             double plain, double autocast)
{
    aitk_memory_plan mm, mf;
    for (int cast = 0; cast < 2; cast++) {
        more.autocast = fewer.autocast = cast;
        assert_int_equal(aitk_cost_memory(&more, f->params, 512, &mm, NULL), AITK_OK);
        assert_int_equal(aitk_cost_memory(&fewer, f->params, 512, &mf, NULL), AITK_OK);
        assert_near(mm.bytes[AITK_PLAN_CHECKPOINTS] - mf.bytes[AITK_PLAN_CHECKPOINTS],
                    cast ? autocast : plain, 1e-3);
    }
}

static void test_kohya_saved(void **state)
{
    fixture *f = *state;
    aitk_workload k = flux_job(f, "kohya", 512, AITK_WEIGHT_BF16);
    k.checkpointing = false;
    aitk_workload d = k;
    memset(d.saved_per_token, 0, sizeof d.saved_per_token);
    memset(d.saved_per_token_autocast, 0, sizeof d.saved_per_token_autocast);
    assert_saved_gap(f, d, k, 358612992.0, 1793064960.0);
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    saved_per_token: {flux1-dev: {double_stream: {value: 25, source: s}}}\n",
                     "autocast");
}

/* SimpleTuner adapts only the attention projections, and not the
 * approximator whose modulation its blocks read, so they keep less
 * (ci/autograd-saved.py --targets simpletuner --modulation frozen: 15 and
 * 14 hidden-sized tensors a token, 19 and 17 under autocast) than Chroma's
 * own counts with a LoRA on every Linear and a modulation that trains
 * (models/chroma.yaml: 25 and 23, 29 and 25). Without checkpointing, at
 * 512 px 1536 tokens enter each of the 19 double and 38 single blocks:
 * (10 x 19 + 9 x 38) x 1536 x 3072 x 2 B = 5,020,581,888 B less, and under
 * autocast (10 x 19 + 8 x 38) x 1536 x 6144 B = 4,661,968,896 B.
 * ai-toolkit keeps the model's counts. */
static void test_simpletuner_saved(void **state)
{
    fixture *f = *state;
    aitk_workload st, aitk;
    aitk_workload_defaults(&st, f->chroma);
    aitk_workload_set_resolution(&st, 512);
    st.batch = 1;
    st.cache_text = true;
    st.checkpointing = false;
    st.base_dtype = AITK_WEIGHT_BF16;
    aitk = st;
    aitk_workload_set_trainer(&st, trainer(f, "simpletuner"));
    aitk_workload_set_trainer(&aitk, trainer(f, "ai-toolkit"));
    /* The same layers and masks: only the saved counts differ. */
    aitk.lora_only = st.lora_only;
    aitk.attention_mask = st.attention_mask;
    assert_saved_gap(f, aitk, st, 5020581888.0, 4661968896.0);
}

/* SimpleTuner's Chroma blocks launch their own kernels (models/trainers.yaml
 * kernels, peft's LoRA on the attention projections): without checkpointing
 * and under autocast, 19 x (140 + 190) + 38 x (66 + 90) = 12,198 a step;
 * ai-toolkit's own blocks with a LoRA on every Linear (models/chroma.yaml)
 * 19 x (137 + 220) + 38 x (53 + 85) = 12,027, and with checkpointing each
 * forward twice: 19 x (2 x 137 + 220) + 38 x (2 x 53 + 85) = 16,644. A count
 * that is not all four figures is refused, as is a block's Linear count
 * that is not a whole number. */
static void test_kernels(void **state)
{
    fixture *f = *state;
    aitk_workload st;
    aitk_workload_defaults(&st, f->chroma);
    st.checkpointing = false;
    st.autocast = true;
    st.base_dtype = AITK_WEIGHT_BF16; /* the blocks' own kernels (test_base_linear_kernels) */
    aitk_workload aitk = st;
    aitk_workload_set_trainer(&st, trainer(f, "simpletuner"));
    aitk_workload_set_trainer(&aitk, trainer(f, "ai-toolkit"));
    aitk.autocast = true; /* ai-toolkit's own is off; the counts compared are autocast's */
    assert_near(aitk_cost_kernels(&st, f->params), 12198, 1e-9);
    assert_near(aitk_cost_kernels(&aitk, f->params), 12027, 1e-9);
    aitk.checkpointing = true;
    assert_near(aitk_cost_kernels(&aitk, f->params), 16644, 1e-9);
    aitk.accumulation = 4;
    assert_near(aitk_cost_kernels(&aitk, f->params), 4 * 16644, 1e-9);
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    kernels: {chroma: {double_stream: {forward: 1, backward: 2,"
                     " forward_autocast: 3, source: s}}}\n",
                     "backward_autocast");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    kernels: {chroma: {double_stream: {forward: 0, backward: 2,"
                     " forward_autocast: 3, backward_autocast: 4, source: s}}}\n",
                     "forward 0 out of range");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    kernels: {chroma: {double_stream: {forward: 1, backward: 2,"
                     " forward_autocast: 3, backward_autocast: 4, linears: 2.5, source: s}}}\n",
                     "linears 2.5 is not a whole number in 1..1000");
}

/* diffusers' script encodes its one prompt and keeps both text encoders on
 * the GPU in bf16 for the whole run (models/trainers.yaml cached_text:
 * resident): with the prompts cached, their 4.883e9 parameters still count,
 * 9.766e9 B, whatever the base (an NF4 base does not make them fp8 as
 * ai-toolkit's qtype_te would); ai-toolkit unloads them. */
static void test_cached_text_resident(void **state)
{
    fixture *f = *state;
    aitk_workload d = flux_job(f, "diffusers", 512, AITK_WEIGHT_BF16);
    aitk_workload a = flux_job(f, "ai-toolkit", 512, AITK_WEIGHT_BF16);
    aitk_workload_set_base(&d, AITK_WEIGHT_NF4);
    aitk_memory_plan md, ma;
    assert_int_equal(aitk_cost_memory(&d, f->params, 512, &md, NULL), AITK_OK);
    assert_int_equal(aitk_cost_memory(&a, f->params, 512, &ma, NULL), AITK_OK);
    assert_true(d.te_resident && d.cache_text);
    assert_near(md.bytes[AITK_PLAN_TEXT_ENCODERS], 9.766e9, 1);
    assert_float_equal(ma.bytes[AITK_PLAN_TEXT_ENCODERS], 0, 0);
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    cached_text: {value: kept, source: s}\n",
                     "'kept' is not one of the known values");
}

/* The elementwise backward as the trainer's block code moves it
 * (models/trainers.yaml elementwise_bwd_factor): diffusers' FLUX blocks,
 * which ai-toolkit, diffusers' script and SimpleTuner train, 1.52 times the
 * forward bytes; kohya's own blocks 2.0; ai-toolkit's own Chroma blocks 1.84;
 * a model a trainer gives none keeps cost.yaml's. The factor multiplies the
 * backward's share only: with checkpointing a block's elementwise bytes are
 * (2 + factor) times its forward's, so the FLUX job's bytes move linearly
 * with it, and 1.52 sits 0.48 of the way from 2.0 down to 1.0. */
static void test_bwd_factor(void **state)
{
    fixture *f = *state;
    aitk_workload a = flux_job(f, "ai-toolkit", 1024, AITK_WEIGHT_BF16);
    assert_float_equal(a.elementwise_bwd_factor, 1.52, 0);
    assert_float_equal(flux_job(f, "kohya", 1024, AITK_WEIGHT_BF16).elementwise_bwd_factor,
                       2.0, 0);
    assert_float_equal(flux_job(f, "diffusers", 1024, AITK_WEIGHT_BF16).elementwise_bwd_factor,
                       1.52, 0);
    aitk_workload c;
    aitk_workload_defaults(&c, f->chroma);
    aitk_workload_set_trainer(&c, trainer(f, "ai-toolkit"));
    assert_float_equal(c.elementwise_bwd_factor, 1.84, 0);
    aitk_workload_set_trainer(&c, trainer(f, "simpletuner"));
    assert_float_equal(c.elementwise_bwd_factor, 0, 0);
    double bytes[3];
    const double factors[3] = {2.0, 1.52, 1.0};
    for (int i = 0; i < 3; i++) {
        a.elementwise_bwd_factor = factors[i];
        aitk_step_work wk;
        assert_int_equal(aitk_cost_work(&a, f->params, 1024, &wk), AITK_OK);
        bytes[i] = wk.bytes[AITK_BYTES_ELEMENTWISE];
    }
    assert_true(bytes[0] > bytes[1] && bytes[1] > bytes[2]);
    assert_near((bytes[0] - bytes[1]) / (bytes[0] - bytes[2]), 0.48, 1e-9);
    /* 0: the cost.yaml figure (2.0) */
    a.elementwise_bwd_factor = 0;
    aitk_step_work wk;
    assert_int_equal(aitk_cost_work(&a, f->params, 1024, &wk), AITK_OK);
    assert_near(wk.bytes[AITK_BYTES_ELEMENTWISE], bytes[0], 1e-3);
}

/* What a trainer's code does to a model that the cost model leaves out
 * (models/trainers.yaml not_modelled) reaches the workload for that model
 * only: kohya's Chroma prompts cut to their length; nothing for FLUX.1, and
 * nothing where the masks are now counted (ai-toolkit's and SimpleTuner's
 * Chroma). A sentence without a source, or an empty one, is refused at its
 * place. */
static void test_not_modelled(void **state)
{
    fixture *f = *state;
    assert_null(flux_job(f, "ai-toolkit", 1024, AITK_WEIGHT_BF16).not_modelled);
    assert_null(flux_job(f, "kohya", 1024, AITK_WEIGHT_BF16).not_modelled);
    aitk_workload c;
    aitk_workload_defaults(&c, f->chroma);
    assert_null(c.not_modelled);
    aitk_workload_set_trainer(&c, trainer(f, "ai-toolkit"));
    assert_null(c.not_modelled);
    aitk_workload_set_trainer(&c, trainer(f, "simpletuner"));
    assert_null(c.not_modelled);
    aitk_workload_set_trainer(&c, trainer(f, "kohya"));
    assert_non_null(strstr(c.not_modelled, "cut to its own length"));
    aitk_workload_set_trainer(&c, trainer(f, "diffusers"));
    assert_null(c.not_modelled);
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    not_modelled: {chroma: {value: a mask}}\n",
                     "t.yaml:11:28: missing 'source'");
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    not_modelled: {chroma: {value: '', source: s}}\n",
                     "'chroma' says nothing");
}

/* The mask each trainer's code gives a model's attention calls, as read
 * in their sources (models/trainers.yaml attention_mask): ai-toolkit's
 * Chroma a (batch, heads, tokens, tokens) boolean made once a step, its
 * OmniGen2 the padding row; SimpleTuner's Chroma a (batch, 1, tokens,
 * tokens) one per block; FLUX.1 none in any trainer, kohya's Chroma none
 * (it cuts each prompt instead). A report's setup overrides it (kohya's
 * --apply_t5_attn_mask); a shape nobody knows is refused at its place. */
static void test_attention_masks(void **state)
{
    fixture *f = *state;
    static const char *const all[] = {"ai-toolkit", "kohya", "diffusers", "simpletuner"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        assert_int_equal(flux_job(f, all[i], 1024, AITK_WEIGHT_BF16).attention_mask,
                         AITK_MASK_NONE);
    aitk_workload c;
    aitk_workload_defaults(&c, f->chroma);
    aitk_workload_set_trainer(&c, trainer(f, "ai-toolkit"));
    assert_int_equal(c.attention_mask, AITK_MASK_PER_HEAD_KEPT);
    aitk_workload_set_trainer(&c, trainer(f, "simpletuner"));
    assert_int_equal(c.attention_mask, AITK_MASK_PAIRWISE);
    aitk_workload_set_trainer(&c, trainer(f, "kohya"));
    assert_int_equal(c.attention_mask, AITK_MASK_NONE);
    aitk_model_spec *omnigen2 = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_model_spec_load("omnigen2", false, &omnigen2, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_workload o;
    aitk_workload_defaults(&o, omnigen2);
    aitk_workload_set_trainer(&o, trainer(f, "ai-toolkit"));
    assert_int_equal(o.attention_mask, AITK_MASK_KEY_PADDING);
    aitk_model_spec_free(omnigen2);
    rejects_trainers(TRAINER_HEAD TOKENS "    fp8: {value: cast, source: s}\n" REST
                     "    attention_mask: {chroma: {value: dense, source: s}}\n",
                     "t.yaml:11:38: 'chroma': 'dense' is not a mask shape (none, key_padding, "
                     "pairwise, per_head or per_head_kept)");
    aitk_reported_speeds *s = NULL;
    const char *text = "schema: 1\nreports:\n" ROW("a", "kohya", "")
        ROW("b", "kohya", ", attention_mask: per_head");
    if (load_reported(f, text, &s, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_reported_row rows[2];
    assert_int_equal(aitk_reported_evaluate(s, f->params, NULL, rows, &err), AITK_OK);
    assert_int_equal(rows[0].workload.attention_mask, AITK_MASK_NONE);
    assert_int_equal(rows[1].workload.attention_mask, AITK_MASK_PER_HEAD);
    assert_true(rows[1].pred.step_s > rows[0].pred.step_s);
    aitk_reported_speeds_free(s);
    aitk_str_clear(&err);
    const char *bad = "schema: 1\nreports:\n" ROW("c", "kohya", ", attention_mask: dense");
    assert_int_not_equal(load_reported(f, bad, &s, &err), AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&err), "attention_mask: expected none, key_padding"));
    aitk_str_free(&err);
}

/* A report's `os: windows` runs its attention at the memory-efficient
 * kernel's rate (PyTorch's Windows wheels have no flash attention): the same
 * job, a longer step, the same peak; another value is refused at it. */
static void test_reported_os(void **state)
{
    fixture *f = *state;
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    const char *text = "schema: 1\nreports:\n" ROW("a", "kohya", "")
        ROW("b", "kohya", ", os: windows") ROW("c", "kohya", ", os: linux");
    if (load_reported(f, text, &s, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_reported_row rows[3];
    assert_int_equal(aitk_reported_evaluate(s, f->params, NULL, rows, &err), AITK_OK);
    assert_int_equal(rows[0].workload.os, AITK_OS_LINUX);
    assert_int_equal(rows[1].workload.os, AITK_OS_WINDOWS);
    assert_int_equal(rows[2].workload.os, AITK_OS_LINUX);
    assert_true(rows[1].pred.step_s > rows[0].pred.step_s);
    assert_true(rows[2].pred.step_s == rows[0].pred.step_s);
    assert_true(aitk_memory_plan_peak(&rows[1].pred.memory) ==
                aitk_memory_plan_peak(&rows[0].pred.memory));
    aitk_reported_speeds_free(s);
    aitk_str_clear(&err);
    const char *bad = "schema: 1\nreports:\n" ROW("d", "kohya", ", os: macos");
    assert_int_not_equal(load_reported(f, bad, &s, &err), AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&err), "os: expected linux or windows, found 'macos'"));
    aitk_str_free(&err);
}

/* A report's validation_text overrides its trainer's: fp32 for a script of
 * the weeks that moved the encoders without a dtype, none for one that
 * runs no validation (the QLoRA research project's miniature script). */
static void test_reported_validation(void **state)
{
    fixture *f = *state;
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    const char *text = "schema: 1\nreports:\n" ROW("a", "diffusers", "")
        ROW("b", "diffusers", ", validation_text: fp32")
        ROW("c", "diffusers (miniature)", ", validation_text: none")
        ROW("d", "kohya", ", validation_text: fp32");
    if (load_reported(f, text, &s, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_reported_row rows[4];
    assert_int_equal(aitk_reported_evaluate(s, f->params, NULL, rows, &err), AITK_OK);
    assert_int_equal(rows[0].workload.validation_resolution, 1024);
    assert_int_equal(rows[0].workload.validation_te_dtype, AITK_WEIGHT_BF16);
    assert_int_equal(rows[1].workload.validation_te_dtype, AITK_WEIGHT_FP32);
    assert_true(rows[1].pred.memory.validation_text > rows[0].pred.memory.validation_text);
    assert_int_equal(rows[2].workload.validation_resolution, 0);
    assert_float_equal(rows[2].pred.memory.validation_total, 0, 0);
    /* A dtype for a trainer that runs no such validation adds none. */
    assert_float_equal(rows[3].pred.memory.validation_total, 0, 0);
    aitk_reported_speeds_free(s);
    aitk_str_clear(&err);
    const char *bad = "schema: 1\nreports:\n" ROW("e", "diffusers", ", validation_text: fp16");
    assert_int_not_equal(load_reported(f, bad, &s, &err), AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&err), "validation_text: expected bf16, fp32 or none"));
    assert_non_null(strstr(aitk_str_cstr(&err), "r.yaml:4:"));
    aitk_str_free(&err);
}

/* The stderr of a refused command: exit 2 and exactly one line. */
static void one_line_usage_error(const char *const *args, const char *needle)
{
    ran r = run(args);
    assert_int_equal(r.rc, 2);
    const char *e = aitk_str_cstr(&r.err);
    const char *nl = strchr(e, '\n');
    if (!nl || nl[1] != '\0')
        fail_msg("expected one line, got '%s'", e);
    if (!strstr(e, needle))
        fail_msg("'%s' lacks '%s'", e, needle);
    assert_int_equal(r.out.len, 0);
    ran_free(&r);
}

static cJSON *workload_of(const char *const *args, const cJSON **w)
{
    char path[] = "/tmp/aitk-trainer-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *argv[16];
    size_t n = 0;
    for (; args[n]; n++)
        argv[n] = args[n];
    argv[n++] = "--json";
    argv[n++] = path;
    argv[n] = NULL;
    ran r = run(argv);
    assert_int_equal(r.rc, 0);
    char *text = NULL;
    assert_int_equal(aitk_file_read(path, 1 << 24, &text, NULL, NULL), AITK_OK);
    unlink(path);
    cJSON *j = cJSON_Parse(text);
    aitk_free(text);
    assert_non_null(j);
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0);
    *w = cJSON_GetObjectItemCaseSensitive(p, "workload");
    assert_non_null(*w);
    ran_free(&r);
    return j;
}

/* `predict --trainer`: a known name sets the job's trainer; an unknown one
 * is bad usage with the names there are; --config is ai-toolkit's and says
 * so; --reported takes each row's own. */
static void test_cli(void **state)
{
    (void)state;
    const cJSON *w = NULL;
    cJSON *j = workload_of((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "4090",
                                            "--trainer", "kohya", NULL},
                           &w);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "trainer")->valuestring, "kohya");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "fp8_path")->valuestring, "cast");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "optimizer")->valuestring, "adamw");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(w, "text_tokens")->valueint, 512);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "autocast")));
    cJSON_Delete(j);
    j = workload_of((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "4090", NULL}, &w);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "trainer")->valuestring,
                        "ai-toolkit");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "fp8_path")->valuestring, "quanto");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(w, "autocast")));
    cJSON_Delete(j);
    /* The setup line says it. */
    ran t = run((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "4090", "--trainer",
                                 "kohya", NULL});
    assert_int_equal(t.rc, 0);
    assert_non_null(strstr(aitk_str_cstr(&t.out), "forward under autocast (models/trainers.yaml)"));
    ran_free(&t);
    j = workload_of((const char *[]){"predict", "--config", FIXTURE("flux_24gb.yaml"), "--gpu",
                                     "4090", NULL},
                    &w);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "trainer")->valuestring,
                        "ai-toolkit");
    cJSON_Delete(j);
    one_line_usage_error((const char *[]){"predict", "--model", "flux1-dev", "--trainer",
                                          "onetrainer", NULL},
                         "--trainer: expected ai-toolkit|kohya|diffusers|simpletuner, found "
                         "'onetrainer'");
    one_line_usage_error((const char *[]){"predict", "--config", FIXTURE("flux_24gb.yaml"),
                                          "--trainer", "kohya", NULL},
                         "--config reads an ai-toolkit config");
    one_line_usage_error((const char *[]){"predict", "--reported", "--trainer", "kohya", NULL},
                         "it takes only --calibrate and --json");
    one_line_usage_error((const char *[]){"predict", "--trainer", NULL}, "--trainer");
    /* A trainer with no entry for the model says so, and predicts. */
    ran r = run((const char *[]){"predict", "--model", "omnigen2", "--gpu", "4090", "--trainer",
                                 "diffusers", NULL});
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(aitk_str_cstr(&r.err), "no omnigen2 entry"));
    ran_free(&r);
}

int main(void)
{
    unsetenv("AITK_DATA_DIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file),          cmocka_unit_test(test_file_rejects),
        cmocka_unit_test(test_simpletuner_as_aitk),
        cmocka_unit_test(test_text_tokens),   cmocka_unit_test(test_fp8_cast),
        cmocka_unit_test(test_fp8_torchao),   cmocka_unit_test(test_optimizer_state),
        cmocka_unit_test(test_base_linear_kernels),
        cmocka_unit_test(test_reported_trainer), cmocka_unit_test(test_cli),
        cmocka_unit_test(test_lora_dtype),    cmocka_unit_test(test_validation),
        cmocka_unit_test(test_reported_validation),
        cmocka_unit_test(test_reported_os),
        cmocka_unit_test(test_bwd_factor),
        cmocka_unit_test(test_cached_text_resident),
        cmocka_unit_test(test_not_modelled), cmocka_unit_test(test_attention_masks),
        cmocka_unit_test(test_kohya_saved),
        cmocka_unit_test(test_simpletuner_saved),
        cmocka_unit_test(test_kernels),       cmocka_unit_test(test_autocast),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
