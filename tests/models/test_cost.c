/* The cost model against figures from outside the code: reported training
 * speeds and memory (the issues, pull requests and guides named below), the
 * attention FLOP formula of FlashAttention's benchmarks evaluated here from
 * the published architecture, and the
 * sanity bounds of issue 5. Expected values are never produced by the code
 * under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"

#define GB 1e9
#define GIB 1073741824.0

typedef struct fixture {
    aitk_model_spec *spec;
    aitk_cost_params *params;
    aitk_gpudb *db;
} fixture;

static fixture *load(const char *model)
{
    static fixture f;
    aitk_str err = AITK_STR_INIT;
    aitk_model_spec_free(f.spec);
    f.spec = NULL;
    if (aitk_model_spec_load(model, false, &f.spec, &err) ||
        (!f.params && aitk_cost_params_load(&f.params, &err)) ||
        (!f.db && aitk_gpudb_load(&f.db, &err)))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    return &f;
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

/* The model's ai-toolkit example job at one resolution. */
static aitk_workload example_job(const fixture *f, long resolution)
{
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    aitk_workload_set_resolution(&w, resolution);
    return w;
}

static void assert_factor(double got, double reported, double factor, const char *what)
{
    if (got > reported * factor || got < reported / factor)
        fail_msg("%s: predicted %.3g, reported %.3g: more than a factor %.2f apart", what, got,
                 reported, factor);
}

/* Without gradient checkpointing every FLUX block keeps what autograd saves,
 * as models/flux1-dev.yaml gives it (saved_per_token: 27 for a double block,
 * 23 for a single one, measured with PyTorch by ci/autograd-saved.py).
 * Worked out here at 512 px, batch 1, rank 4: 1024 image + 512 text = 1536
 * tokens, 1 conditioning token, bf16 (2 bytes), hidden 3072, 24 heads.
 *   double: 27 x 3072 x 2 x 1536 = 254,803,968; log-sum-exp 4 x 1536 x 24 =
 *     147,456; LoRA's low-rank outputs 2 x 4 x (2 x 1 + 6 x 1024 + 6 x 512)
 *     = 73,744; 255,025,168 each, 19 blocks.
 *   single: 23 x 3072 x 2 x 1536 = 217,055,232; 147,456; 2 x 4 x (1 + 5 x
 *     1536) = 61,448; 217,264,136 each, 38 blocks.
 *   embed_out (no op count: its Linears' inputs and outputs, and its own
 *     input, which its LayerNorm keeps): 2 x (3072 + 6144) + 2 x 1024 x
 *     (3072 + 64) + 2 x 1024 x 3072 = 12,732,416.
 * Sum: 13,114,247,776 bytes. The backward of one block holds more on top
 * (backward_extra_per_token: 4 for a double block, 10 for a single one):
 * the single block's 10 x 3072 x 2 x 1536 = 94,371,840 is the larger.
 * Checkpointed, the block run again keeps what it saves and its backward's
 * extra: double 255,025,168 + 4 x 9,437,184 = 292,773,904, single
 * 217,264,136 + 10 x 9,437,184 = 311,635,976, the larger. */
static void test_flux_saved_activations(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 512);
    w.batch = 1;
    w.rank = 4;
    w.checkpointing = false;
    aitk_memory_plan m;
    assert_int_equal(aitk_cost_memory(&w, f->params, 512, &m, NULL), AITK_OK);
    assert_float_equal(m.bytes[AITK_PLAN_CHECKPOINTS], 13114247776.0, 0.5);
    assert_float_equal(m.bytes[AITK_PLAN_LIVE_BLOCK], 94371840.0, 0.5);
    /* Checkpointed: the single block run again, with its backward. */
    w.checkpointing = true;
    assert_int_equal(aitk_cost_memory(&w, f->params, 512, &m, NULL), AITK_OK);
    assert_float_equal(m.bytes[AITK_PLAN_LIVE_BLOCK], 311635976.0, 0.5);
    /* Under autocast (saved_per_token_autocast: 33 and 28), the same sums
     * with 33 x 9,437,184 = 311,427,072 and 28 x 9,437,184 = 264,241,152:
     * 311,648,272 x 19 + 264,450,056 x 38 + 12,732,416 = 15,983,151,712. */
    w.checkpointing = false;
    w.autocast = true;
    assert_int_equal(aitk_cost_memory(&w, f->params, 512, &m, NULL), AITK_OK);
    assert_float_equal(m.bytes[AITK_PLAN_CHECKPOINTS], 15983151712.0, 0.5);
}

/* A LoRA on attention only (diffusers' --lora_layers attn.to_q,attn.to_k,
 * attn.to_v,attn.to_out.0) keeps less: each unadapted Linear's lora_saves
 * (models/flux1-dev.yaml, measured by ci/autograd-saved.py --targets) come
 * off, per token of its stream. The norm Linears are unadapted too, so
 * the modulation takes no gradient and its products keep 4 a token of the
 * stream they modulate (2 in a single block) less. The job above, 512 px
 * (1024 image + 512 text tokens), rank 4, no checkpointing:
 *   double: 27 x 6144 x 1536 + 147,456 (log-sum-exp) + the adapted LoRAs'
 *     low-rank outputs 2 x 4 x (3 x 1024 + 1024) = 32,768, less 6144 x
 *     (1 x 512 txt q/k/v + 1 x 1024 ff.net.0 + 4 x 1024 ff.net.2 + 1 x 512
 *     + 4 x 512 for the text MLP) = 50,331,648 and the modulation's 6144 x
 *     4 x 1536 = 37,748,736: 166,903,808 each, 19 blocks;
 *   single: 23 x 6144 x 1536 + 147,456 + 2 x 4 x 3 x 1536 = 36,864, less
 *     proj_out's 5 x 6144 x 1536 = 47,185,920 and the modulation's 2 x
 *     6144 x 1536 = 18,874,368: 151,179,264 each, 38 blocks;
 *   embed_out as above: 12,732,416. Sum 8,928,716,800.
 * Under autocast (33 and 28; q/k/v 3, proj_mlp 1, the modulation 6 and 3):
 * double 254,984,192 - 56,623,104 = 198,361,088, single 207,802,368 -
 * 28,311,552 = 179,490,816, sum 10,602,244,096. */
static void test_flux_saved_attention_only(void **state)
{
    (void)state;
    static const char *const attention[] = {"attn.to_q", "attn.to_k", "attn.to_v",
                                            "attn.to_out.0", NULL};
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 512);
    w.batch = 1;
    w.rank = 4;
    w.checkpointing = false;
    w.lora_only = attention;
    aitk_memory_plan m;
    assert_int_equal(aitk_cost_memory(&w, f->params, 512, &m, NULL), AITK_OK);
    assert_float_equal(m.bytes[AITK_PLAN_CHECKPOINTS], 8928716800.0, 0.5);
    w.autocast = true;
    assert_int_equal(aitk_cost_memory(&w, f->params, 512, &m, NULL), AITK_OK);
    assert_float_equal(m.bytes[AITK_PLAN_CHECKPOINTS], 10602244096.0, 0.5);
}

/* A filter that adapts whole blocks: "single_transformer_blocks.1" names
 * every Linear of single blocks 1 and 10-19, 11 of 38, and no double block.
 * Plain (no autocast), 512 px, rank 4, no checkpointing:
 *   double: 27 x 9,437,184 + 147,456, less every lora_saves: 6144 x (1024
 *     + 512 q/k/v + 1024 + 4 x 1024 + 512 + 4 x 512) = 56,623,104 and the
 *     modulation's 4 x 9,437,184 = 37,748,736: 160,579,584 each, 19 blocks;
 *   single: 23 x 9,437,184 + 147,456, the low-rank outputs of the 11
 *     adapted blocks' mod (1 token), q/k/v (3 x 1536), proj_mlp and
 *     proj_out (1536 each), 8 x 11/38 x 7681 = 17,787.37, less proj_out's
 *     5 x 9,437,184 and the modulation's 2 x 9,437,184 in the 27 unadapted
 *     of 38: 170,282,902.52 each, 38;
 *   embed_out as above. Sum 9,534,494,807.8 (9,534,494,720 as a float,
 *   the precision cmocka compares in). */
static void test_flux_saved_whole_blocks(void **state)
{
    (void)state;
    static const char *const some[] = {"single_transformer_blocks.1", NULL};
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 512);
    w.batch = 1;
    w.rank = 4;
    w.checkpointing = false;
    w.lora_only = some;
    aitk_memory_plan m;
    assert_int_equal(aitk_cost_memory(&w, f->params, 512, &m, NULL), AITK_OK);
    assert_float_equal(m.bytes[AITK_PLAN_CHECKPOINTS], 9534494807.8, 1.0);
    /* Under autocast q, k and v each keep their own cast (3 a token, 1 a
     * copy), counted by copies: 33 of 114 adapted; the modulation 6 and 3.
     * double: 33 x 9,437,184 + 147,456 less 6144 x (3 x 1024 + 3 x 512 +
     * 1024 + 4096 + 512 + 2048) and 6 x 9,437,184 = 179,453,952; single:
     * 28 x 9,437,184 + 147,456 + 17,787.37 less (3 x 81/114 + 1 x 27/38 for
     * proj_mlp's cast + 5 x 27/38 + 3 x 27/38) x 9,437,184 =
     * 183,941,984.63. Sum 10,412,152,919.9. */
    w.autocast = true;
    assert_int_equal(aitk_cost_memory(&w, f->params, 512, &m, NULL), AITK_OK);
    assert_float_equal(m.bytes[AITK_PLAN_CHECKPOINTS], 10412152919.9, 1.0);
}

/* Issue 5, Done when: FLUX on an RTX 4090 at 1024 px, fp8 base, rank 16,
 * checkpointing: peak under 24 GB and a step within 1.5x of the reported
 * 3.5 s/step (SimpleTuner FLUX quickstart, documentation/quickstart/FLUX.md). */
static void test_flux_4090_1024(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 1024);
    assert_int_equal(w.base_dtype, AITK_WEIGHT_FP8);
    assert_int_equal(w.rank, 16);
    assert_true(w.checkpointing);
    aitk_prediction p = predict(f, &w, "NVIDIA GeForce RTX 4090");
    assert_true(p.fits);
    assert_true(p.memory.total < 24 * GIB);
    assert_factor(p.step_s, 3.5, 1.5, "FLUX 4090 1024 px s/step");
}

/* Same source, 512 px: 1.4 s/step. */
static void test_flux_4090_512(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 512);
    aitk_prediction p = predict(f, &w, "RTX 4090");
    assert_factor(p.step_s, 1.4, 1.5, "FLUX 4090 512 px s/step");
}

/* Issue 5, Done when: bf16 base weights do not fit in 24 GB; SimpleTuner
 * reports > 30 GB for a rank-16 LoRA in bf16 (with text embeddings cached). */
static void test_flux_bf16_does_not_fit(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    w.base_dtype = w.te_dtype = AITK_WEIGHT_BF16;
    aitk_prediction p = predict(f, &w, "RTX 4090");
    assert_false(p.fits);
    w.cache_text = true;
    p = predict(f, &w, "RTX 4090");
    assert_false(p.fits);
    /* "> 30 GB" is an observed peak on a card that had more; read as 30 GB
     * within 1.25x (SimpleTuner also holds its own buffers). */
    assert_factor(p.memory.total / GB, 30, 1.25, "FLUX bf16 rank 16 GB");
    assert_true(p.memory.total > 24 * GIB);
}

/* Chroma, SimpleTuner CHROMA.md: rank-16 LoRA ~28 GB in bf16, ~16 GB in int8
 * (8-bit weights, as fp8 here), ~8 GB in NF4; read as within 1.3x. */
static void test_chroma_memory(void **state)
{
    (void)state;
    fixture *f = load("chroma");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    w.cache_text = true;
    static const struct {
        aitk_weight_dtype d;
        double gb;
    } rows[] = {{AITK_WEIGHT_BF16, 28}, {AITK_WEIGHT_FP8, 16}, {AITK_WEIGHT_NF4, 8}};
    for (size_t i = 0; i < 3; i++) {
        w.base_dtype = rows[i].d;
        aitk_prediction p = predict(f, &w, "H100 SXM");
        assert_factor(p.memory.total / GB, rows[i].gb, 1.3, aitk_weight_dtype_name(rows[i].d));
    }
}

/* kohya-ss/sd-scripts PR #1374: FLUX LoRA rank 128 on an RTX
 * A6000 used 44.2 GB with bf16 weights and 33.5 GB with an fp8 base. */
static void test_flux_a6000_memory(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    w.rank = 128;
    w.base_dtype = w.te_dtype = AITK_WEIGHT_BF16;
    aitk_prediction p = predict(f, &w, "RTX A6000");
    assert_factor(p.memory.total / GB, 44.2, 1.25, "A6000 bf16 rank 128 GB");
    w.base_dtype = AITK_WEIGHT_FP8;
    p = predict(f, &w, "RTX A6000");
    assert_factor(p.memory.total / GB, 33.5, 1.25, "A6000 fp8 base rank 128 GB");
}

/* Dao-AILab/flash-attention benchmark_flash_attention.py, flops(): attention
 * forward is 4*T^2*head_dim*heads per layer and sample, backward 2.5x;
 * checkpointing recomputes the forward once. FLUX at 1024 px: T = 4096 + 512,
 * 24 heads of 128, 19 + 38 blocks (FLUX.1-dev transformer config). */
static void test_flux_attention_flops(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    aitk_step_work wk;
    assert_int_equal(aitk_cost_work(&w, f->params, 1024, &wk), AITK_OK);
    const double t = 4096 + 512, fwd = 4 * t * t * 128 * 24 * (19 + 38);
    assert_true(fabs(wk.flops[AITK_WORK_ATTN_FWD] - fwd) < 1e-9 * fwd);
    assert_true(fabs(wk.flops[AITK_WORK_ATTN_RECOMPUTE] - fwd) < 1e-9 * fwd);
    assert_true(fabs(wk.flops[AITK_WORK_ATTN_BWD] - 2.5 * fwd) < 1e-9 * fwd);
    /* Base GEMMs: forward, recompute and dX are one forward's worth each. */
    assert_true(fabs(wk.flops[AITK_WORK_GEMM_RECOMPUTE] / wk.flops[AITK_WORK_GEMM_FWD] - 1) < 0.01);
    assert_true(fabs(wk.flops[AITK_WORK_GEMM_BWD] / wk.flops[AITK_WORK_GEMM_FWD] - 1) < 0.01);
    /* Rough check (derived): ~4.0e14 FLOP per step, 3 x 2NT for the Linears
     * + 4.5 x the attention forward. That figure charges all
     * 11.9 B parameters to every token; the per-stream Linears of the double
     * blocks see only their own tokens, so the spec-based count is lower. */
    double total = 0;
    for (int i = 0; i < AITK_WORK_FLOP_TERMS; i++)
        total += wk.flops[i];
    assert_factor(total, 4.0e14, 2.0, "FLUX 1024 px FLOP per step");
}

/* Equal up to rounding: sums taken in another order. */
static void assert_same(double got, double expect, const char *what)
{
    if (fabs(got / expect - 1) > 1e-9)
        fail_msg("%s: %.6g, expected %.6g", what, got, expect);
}

/* One adapted Linear's bytes under ai-toolkit's LoRA module (cost.yaml
 * flop_rules, derived from toolkit/network_mixins.py): per token, the forward
 * reads x once and moves 8 output-width bf16 tensors and runs twice under
 * checkpointing; the backward moves 5 input- and 6 output-width tensors. */
static double lora_bytes(double tokens, double count, double in, double out)
{
    return 2.0 * tokens * count * ((in + 8 * out) * 2 + 5 * in + 6 * out);
}

/* The LoRA traffic of a FLUX step at 1024 px, evaluated here from the
 * published shapes (diffusers FluxTransformer2DModel): 4096 image, 512 text
 * tokens, one conditioning vector; every Linear inside the blocks adapted. */
static void test_lora_traffic(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    aitk_step_work wk;
    assert_int_equal(aitk_cost_work(&w, f->params, 1024, &wk), AITK_OK);
    const double h = 3072, img = 4096, txt = 512, all = img + txt;
    const double per_double = lora_bytes(1, 2, h, 6 * h) + lora_bytes(img, 4, h, h) +
                              lora_bytes(txt, 4, h, h) + lora_bytes(img, 1, h, 4 * h) +
                              lora_bytes(img, 1, 4 * h, h) + lora_bytes(txt, 1, h, 4 * h) +
                              lora_bytes(txt, 1, 4 * h, h);
    const double per_single = lora_bytes(1, 1, h, 3 * h) + lora_bytes(all, 3, h, h) +
                              lora_bytes(all, 1, h, 4 * h) + lora_bytes(all, 1, 5 * h, h);
    const double expect = 19 * per_double + 38 * per_single;
    assert_same(wk.bytes[AITK_BYTES_LORA], expect, "LoRA traffic, bytes");
}

/* Expanding a quantized base to bf16 costs bytes per weight in each pass that
 * uses it: forward, recompute and backward under checkpointing. The per-weight
 * figures follow from the storage formats, worked out here: optimum-quanto
 * qfloat8 casts (read 1 B, write 2 B) and multiplies by the scale (read 2 B,
 * write 2 B); bitsandbytes NF4 double-quantized reads 4 bits and writes 2 B,
 * after expanding each 64 weights' 8-bit absmax to fp32 (1 + 4 B) and reading
 * it (4 B). Weights: FLUX.1-dev's published 11.90 B, nearly all in Linears. */
static void test_dequant_traffic(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    static const struct {
        aitk_weight_dtype d;
        double bytes_per_pass;
    } rows[] = {{AITK_WEIGHT_FP8, 1 + 2 + 2 + 2}, {AITK_WEIGHT_NF4, 0.5 + 2 + (1 + 4 + 4) / 64.0}};
    w.te_dtype = AITK_WEIGHT_BF16; /* the base alone first */
    for (size_t i = 0; i < 2; i++) {
        w.base_dtype = rows[i].d;
        aitk_step_work wk;
        assert_int_equal(aitk_cost_work(&w, f->params, 1024, &wk), AITK_OK);
        assert_factor(wk.bytes[AITK_BYTES_DEQUANT], rows[i].bytes_per_pass * 3 * 11.90e9, 1.01,
                      aitk_weight_dtype_name(rows[i].d));
    }
    w.base_dtype = AITK_WEIGHT_BF16;
    aitk_step_work wk;
    assert_int_equal(aitk_cost_work(&w, f->params, 1024, &wk), AITK_OK);
    assert_true(wk.bytes[AITK_BYTES_DEQUANT] == 0);
    /* Text encoders stored in fp8 are expanded for their one forward pass per
     * step, whatever the batch: T5-XXL's encoder (4.76 B) and CLIP-L's text
     * tower (123 M), at the same 7 B a weight; nothing when cached. */
    w.te_dtype = AITK_WEIGHT_FP8;
    for (long batch = 1; batch <= 4; batch += 3) {
        w.batch = batch;
        assert_int_equal(aitk_cost_work(&w, f->params, 1024, &wk), AITK_OK);
        assert_factor(wk.bytes[AITK_BYTES_DEQUANT], 7 * (4.76e9 + 123e6), 1.001, "text fp8");
    }
    w.cache_text = true;
    assert_int_equal(aitk_cost_work(&w, f->params, 1024, &wk), AITK_OK);
    assert_true(wk.bytes[AITK_BYTES_DEQUANT] == 0);
}

/* Generation is one forward pass: no adapter, no recompute, no backward, no
 * text encoder per step; the forward GEMMs are the training step's own and
 * the elementwise traffic is each block's count (models/flux1-dev.yaml,
 * counted from diffusers' code: embedders 2, double 124, single 117, final
 * 6 hidden-sized tensors per token) over its tokens, once. */
static void test_forward_only(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    aitk_step_work train, gen;
    assert_int_equal(aitk_cost_work(&w, f->params, 1024, &train), AITK_OK);
    w.forward_only = true;
    assert_int_equal(aitk_cost_work(&w, f->params, 1024, &gen), AITK_OK);
    assert_true(gen.flops[AITK_WORK_GEMM_FWD] == train.flops[AITK_WORK_GEMM_FWD]);
    assert_true(gen.flops[AITK_WORK_ATTN_FWD] == train.flops[AITK_WORK_ATTN_FWD]);
    static const int none[] = {AITK_WORK_GEMM_RECOMPUTE, AITK_WORK_GEMM_BWD, AITK_WORK_LORA,
                               AITK_WORK_ATTN_RECOMPUTE, AITK_WORK_ATTN_BWD,
                               AITK_WORK_CONDITIONING};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        assert_true(gen.flops[none[i]] == 0);
    assert_true(gen.bytes[AITK_BYTES_LORA] == 0 && gen.lora_params == 0);
    const double all = 4096 + 512, img = 4096;
    const double expect = 2.0 * 3072 * ((2 + 19 * 124 + 38 * 117) * all + 6 * img);
    assert_same(gen.bytes[AITK_BYTES_ELEMENTWISE], expect, "elementwise traffic, bytes");
}

/* Without checkpointing nothing is recomputed and every block keeps what it
 * saved, so memory grows and work shrinks. */
static void test_checkpointing_tradeoff(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    aitk_prediction on = predict(f, &w, "H100 SXM");
    w.checkpointing = false;
    aitk_prediction off = predict(f, &w, "H100 SXM");
    assert_true(off.work.flops[AITK_WORK_GEMM_RECOMPUTE] == 0);
    assert_true(off.work.flops[AITK_WORK_ATTN_RECOMPUTE] == 0);
    assert_true(off.step_s < on.step_s);
    assert_true(off.memory.total > on.memory.total + 10 * GB);
}

/* AdamW keeps two fp32 moments (8 B/param); bitsandbytes' 8-bit AdamW two
 * 8-bit moments (2 B/param): a 4x smaller optimizer term. */
static void test_optimizer_state(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    w.optimizer = "adamw";
    aitk_prediction a = predict(f, &w, "A40");
    w.optimizer = "AdamW8bit";
    aitk_prediction b = predict(f, &w, "A40");
    assert_true(fabs(a.memory.bytes[AITK_PLAN_OPTIMIZER] / b.memory.bytes[AITK_PLAN_OPTIMIZER] - 4) <
                1e-9);
    w.optimizer = "sgd-of-my-own";
    const aitk_gpu_spec *g = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_gpudb_find(f->db, "A40", &g, &err), AITK_OK);
    assert_int_equal(aitk_cost_predict(&w, f->params, g, &b, &err), AITK_E_NOTFOUND);
    assert_non_null(strstr(aitk_str_cstr(&err), "sgd-of-my-own"));
    assert_int_equal(aitk_cost_predict(&w, f->params, g, &b, NULL), AITK_E_NOTFOUND);
    aitk_str_free(&err);
}

/* Adafactor as kohya's README and fluxgym run it (beta1 None, so no first
 * moment; huggingface/transformers optimization.py) keeps, for each 2-D
 * parameter, one fp32 statistic per row and one per column. A LoRA pair on
 * a Linear in -> out at rank r is down (r x in) and up (out x r): r + in +
 * out + r statistics. Summed by hand over FLUX.1-dev's adapted Linears
 * (models/flux1-dev.yaml, hidden 3072, MLP 12288):
 *   double block (19): mod 2 x (3072 + 18432) = 43,008; q/k/v of both
 *     streams 6 x 6,144 = 36,864; out of both 2 x 6,144 = 12,288; MLP in
 *     and out of both 4 x 15,360 = 61,440: in + out 153,600 over 14 Linears.
 *   single block (38): mod 3072 + 9216 = 12,288; q/k/v 18,432; mlp_in
 *     15,360; out 15,360 + 3,072 = 18,432: 64,512 over 6 Linears.
 *   in + out: 19 x 153,600 + 38 x 64,512 = 5,369,856; 2r per Linear: 2r x
 *     (19 x 14 + 38 x 6) = 988 r.
 * At rank 4: (5,369,856 + 3,952) x 4 B = 21,495,232 B; the LoRA itself is
 * 4 x 5,369,856 = 21,479,424 parameters, so the old 4 B a parameter
 * (85.9 MB) overstated the state by four times. */
static void test_adafactor_state(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    w.rank = 4;
    w.alpha = 4;
    w.ema = false;
    w.optimizer = "adafactor";
    aitk_prediction p = predict(f, &w, "RTX 4090");
    assert_float_equal(p.memory.bytes[AITK_PLAN_OPTIMIZER], 21495232.0, 0.5);
    assert_float_equal(p.memory.bytes[AITK_PLAN_LORA_PARAMS] / w.lora_bytes, 21479424.0, 0.5);
}

/* PyTorch's allocator returns every wholly free segment to the driver
 * before it raises out-of-memory, so the 'reserved by PyTorch but
 * unallocated' of the message is the fragmentation at the failing peak. The
 * five messages cited in models/cost.yaml, as their sources print them:
 * 1.83 GiB of 42.17 (bmaltais/kohya_ss #2724), 1021.72 MiB of 38.05 GiB
 * (huggingface/diffusers #10120), 395.28 MiB of 78.20 GiB (#10994), 35.86
 * MiB of 20.73 GiB (bghira/SimpleTuner #786), 5.97 MiB of 23.19 GiB
 * (bmaltais/kohya_ss #2972). The allowance is the largest share, 4.34%, and
 * the plan adds it to everything the allocator holds. */
static void test_fragmentation_share(void **state)
{
    (void)state;
    const double shares[] = {1.83 / 42.17, 1021.72 / 1024 / 38.05, 395.28 / 1024 / 78.20,
                             35.86 / 1024 / 20.73, 5.97 / 1024 / 23.19};
    double largest = 0;
    for (size_t i = 0; i < sizeof shares / sizeof *shares; i++)
        largest = fmax(largest, shares[i]);
    fixture *f = load("flux1-dev");
    assert_float_equal(f->params->fragmentation, largest, 0.0005);
    aitk_workload w = example_job(f, 1024);
    aitk_prediction p = predict(f, &w, "RTX 4090");
    double managed = 0;
    for (int i = 0; i < AITK_PLAN_FRAGMENTATION; i++)
        managed += p.memory.bytes[i];
    assert_float_equal(p.memory.bytes[AITK_PLAN_FRAGMENTATION], managed * largest,
                       managed * 0.0005);
}

/* Bad workloads are refused with a reason, not predicted. */
static void test_bad_workloads(void **state)
{
    (void)state;
    fixture *f = load("omnigen2");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    const aitk_gpu_spec *g = &f->db->gpus[0];
    aitk_prediction p;
    aitk_str err = AITK_STR_INIT;
    w.batch = 0;
    assert_int_equal(aitk_cost_predict(&w, f->params, g, &p, &err), AITK_E_INVAL);
    w.batch = 1;
    w.resolutions[0] = 8;
    assert_int_equal(aitk_cost_predict(&w, f->params, g, &p, &err), AITK_E_RANGE);
    assert_non_null(strstr(aitk_str_cstr(&err), "resolution 8"));
    aitk_str_free(&err);
}

/* Multi-bucket configs: time is the mean of the buckets, memory the largest. */
static void test_buckets(void **state)
{
    (void)state;
    fixture *f = load("chroma");
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    double s[2], peak_1024 = 0;
    const long res[2] = {512, 1024};
    for (int i = 0; i < 2; i++) {
        w.resolutions[0] = res[i];
        aitk_prediction p = predict(f, &w, "L40S");
        s[i] = p.step_s;
        peak_1024 = p.memory.total;
    }
    w.resolutions[0] = 512;
    w.resolutions[1] = 1024;
    w.n_resolutions = 2;
    aitk_prediction both = predict(f, &w, "L40S");
    assert_true(fabs(both.step_s - (s[0] + s[1]) / 2) < 1e-9);
    assert_true(both.memory.total == peak_1024);
}

/* Tensor-core time runs at the GPU's matmul rate (models/gpus.yaml), not its
 * datasheet rate: two copies of one GPU that differ only in the datasheet
 * figure predict the same step; doubling the matmul rate halves GEMM and
 * attention time and leaves memory time alone. The GEMM time is the step's
 * GEMM FLOPs over matmul x the GEMM efficiency, both read from the data. */
static void test_time_uses_matmul_rate(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 1024);
    const aitk_gpu_spec *g = NULL;
    assert_int_equal(aitk_gpudb_find(f->db, "RTX A6000", &g, NULL), AITK_OK);
    assert_non_null(g->matmul_source);
    aitk_gpu_spec a = *g, b = *g, c = *g;
    b.bf16_tflops *= 3; /* the datasheet figure alone */
    c.matmul_bf16_tflops *= 2;
    aitk_prediction pa, pb, pc;
    assert_int_equal(aitk_cost_predict(&w, f->params, &a, &pa, NULL), AITK_OK);
    assert_int_equal(aitk_cost_predict(&w, f->params, &b, &pb, NULL), AITK_OK);
    assert_int_equal(aitk_cost_predict(&w, f->params, &c, &pc, NULL), AITK_OK);
    assert_true(pa.step_s == pb.step_s);
    assert_true(fabs(pc.t_gemm - pa.t_gemm / 2) < 1e-12 * pa.t_gemm);
    assert_true(fabs(pc.t_attention - pa.t_attention / 2) < 1e-12 * pa.t_attention);
    assert_true(pc.t_memory == pa.t_memory);
    const double gemm_flops = pa.work.flops[AITK_WORK_GEMM_FWD] +
                              pa.work.flops[AITK_WORK_GEMM_RECOMPUTE] +
                              pa.work.flops[AITK_WORK_GEMM_BWD] + pa.work.flops[AITK_WORK_LORA] +
                              pa.work.flops[AITK_WORK_CONDITIONING];
    /* 123.34: the A6000's measured rate (models/gpus.yaml's source). */
    const double want = gemm_flops / (123.34e12 * f->params->eff_gemm);
    assert_true(fabs(pa.t_gemm - want) < 1e-9 * want);
}

/* Attention runs at its compute capability's shares of the matmul rate
 * (models/cost.yaml attention_by_cc, from FA2 measured on such GPUs): on an
 * RTX 3090 (8.6) forward, recompute and backward at 0.91 and 0.67 of its
 * measured 76.58 TFLOP/s; an H100 SXM (9.0, not listed) keeps the defaults
 * 0.43 and 0.34 of its 786.45; a GPU with no compute capability does too. */
static void test_attention_by_cc(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 1024);
    static const struct {
        const char *gpu;
        double matmul, fwd, bwd;
    } cases[] = {{"RTX 3090", 76.58e12, 0.91, 0.67}, {"H100 SXM", 786.45e12, 0.43, 0.34}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aitk_prediction p = predict(f, &w, cases[i].gpu);
        const double fwd = p.work.flops[AITK_WORK_ATTN_FWD] + p.work.flops[AITK_WORK_ATTN_RECOMPUTE];
        const double want = fwd / (cases[i].matmul * cases[i].fwd) +
                            p.work.flops[AITK_WORK_ATTN_BWD] / (cases[i].matmul * cases[i].bwd);
        if (fabs(p.t_attention - want) > 1e-9 * want)
            fail_msg("%s: attention %.6g s, expected %.6g s", cases[i].gpu, p.t_attention, want);
        assert_true(p.attn_fwd_share == cases[i].fwd && p.attn_bwd_share == cases[i].bwd);
    }
    const aitk_gpu_spec *g = NULL;
    assert_int_equal(aitk_gpudb_find(f->db, "RTX 3090", &g, NULL), AITK_OK);
    aitk_gpu_spec bare = *g;
    bare.cc = NULL;
    double fwd = 0, bwd = 0;
    aitk_cost_attention_shares(f->params, &bare, &fwd, &bwd);
    assert_true(fwd == f->params->eff_attn_fwd && bwd == f->params->eff_attn_bwd);
    assert_true(fabs(fwd - 0.43) < 1e-12 && fabs(bwd - 0.34) < 1e-12);
}

/* Memory-bound time: elementwise chains at their ratio of a device copy,
 * dequantization and LoRA traffic at the plain-kernel ratio (cost.yaml,
 * from Liger-Kernel's measured eager kernels: 0.605 and 0.835 of the
 * datasheet over a copy's 0.90). Checked on a job that has all three terms
 * (fp8 base), against the figures written out here. */
static void test_memory_time_by_kind(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 1024);
    assert_int_equal(w.base_dtype, AITK_WEIGHT_FP8);
    aitk_prediction p = predict(f, &w, "A40");
    assert_true(p.work.bytes[AITK_BYTES_ELEMENTWISE] > 0 && p.work.bytes[AITK_BYTES_DEQUANT] > 0 &&
                p.work.bytes[AITK_BYTES_LORA] > 0);
    assert_true(fabs(f->params->elt_chain_vs_copy - 0.67) < 1e-12);
    assert_true(fabs(f->params->elt_plain_vs_copy - 0.93) < 1e-12);
    const double copy = 696e9 * 0.90; /* the A40's datasheet bandwidth, a copy's share */
    const double want = p.work.bytes[AITK_BYTES_ELEMENTWISE] / (copy * 0.67) +
                        (p.work.bytes[AITK_BYTES_DEQUANT] + p.work.bytes[AITK_BYTES_LORA]) /
                            (copy * 0.93);
    if (fabs(p.t_memory - want) > 1e-9 * want)
        fail_msg("memory time %.6g s, expected %.6g s", p.t_memory, want);
}

/* Issue 23: a job fits against what a process can allocate, not the card's
 * nominal size: its total memory as PyTorch reports it, less the CUDA
 * context (0.5 GiB) and the allocator's reserve (22 MiB, models/cost.yaml).
 * The plan's own context term is not counted twice, so a job fits exactly
 * when its peak + 22 MiB <= the total memory: checked 1 KiB either side of
 * that on a card whose nominal 48 GB is far above the peak (the old rule
 * said fits both times), and on the L40S's published 44.53 GiB. */
static void test_fit_against_usable_memory(void **state)
{
    (void)state;
    const double gib = 1073741824.0, mib = 1048576.0;
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 1024);
    aitk_prediction p = predict(f, &w, "L40S");
    assert_true(fabs(p.total_memory_bytes - 44.53 * gib) < 1);
    assert_true(fabs(p.usable_bytes - (44.03 * gib - 22 * mib)) < 1);
    assert_true(fabs(p.margin_bytes - (44.53 * gib - 22 * mib - p.memory.total)) < 1);
    assert_true(p.fits);
    const aitk_gpu_spec *l40s = NULL;
    assert_int_equal(aitk_gpudb_find(f->db, "L40S", &l40s, NULL), AITK_OK);
    aitk_gpu_spec g = *l40s;
    aitk_prediction q;
    g.total_memory_gib = (p.memory.total + 22 * mib + 1024) / gib;
    assert_int_equal(aitk_cost_predict(&w, f->params, &g, &q, NULL), AITK_OK);
    assert_true(q.fits && fabs(q.margin_bytes - 1024) < 1);
    g.total_memory_gib = (p.memory.total + 22 * mib - 1024) / gib;
    assert_int_equal(aitk_cost_predict(&w, f->params, &g, &q, NULL), AITK_OK);
    assert_true(!q.fits && fabs(q.margin_bytes + 1024) < 1);
    assert_true(q.vram_bytes == 48 * gib);
}

/* The words for a margin: GiB to one decimal and the share of the usable
 * memory (3.1 of 44 GiB is 7.0%; 2.4 of 48 is 5.0%). */
static void test_fit_text(void **state)
{
    (void)state;
    const double gib = 1073741824.0;
    const aitk_prediction fits = {.fits = true, .margin_bytes = 3.1 * gib,
                                  .usable_bytes = 44 * gib};
    const aitk_prediction misses = {.fits = false, .margin_bytes = -2.4 * gib,
                                    .usable_bytes = 48 * gib};
    aitk_str t = AITK_STR_INIT;
    assert_int_equal(aitk_prediction_fit_text(&fits, &t), AITK_OK);
    assert_string_equal(aitk_str_cstr(&t), "fits with 3.1 GiB to spare (7.0% of usable)");
    aitk_str_clear(&t);
    assert_int_equal(aitk_prediction_fit_text(&misses, &t), AITK_OK);
    assert_string_equal(aitk_str_cstr(&t), "misses by 2.4 GiB (5.0% of usable)");
    aitk_str_free(&t);
}
/* A masked job (models/cost.h aitk_attention_mask) runs its attention at
 * the memory-efficient kernel's share of flash attention's (cost.yaml
 * masked_attention_by_cc 8.6: 0.61 forward, 0.47 backward), converts and
 * reads its mask in every call and keeps the converted mask for the
 * backward. Worked out here for FLUX.1-dev at 1024 px, batch 1, every block
 * checkpointed: 4096 + 512 = 4608 tokens, 24 heads, 57 blocks that attend.
 *   per_head: 24 x 4608^2 = 509,607,936 elements a call; the forward and the
 *     recompute each convert (3 B) and read (2 B) them, the backward reads
 *     them (2 B): 12 x 509,607,936 x 57 = 348,571,828,224 B.
 *   pairwise: a 24th of that, 14,523,826,176 B; key_padding: 12 x 4608 x 57
 *     = 3,151,872 B.
 * Memory: the live block keeps its converted mask, 2 x 509,607,936 =
 * 1,019,215,872 B; per_head_kept adds its booleans, 509,607,936 B; without
 * checkpointing every block keeps one (57 of them). This project's own
 * step graph passes no mask. */
static void test_masked_attention(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 1024);
    w.base_dtype = AITK_WEIGHT_BF16;
    aitk_prediction plain = predict(f, &w, "RTX A6000");
    assert_float_equal(plain.work.bytes[AITK_BYTES_MASK], 0, 0);
    static const struct {
        aitk_attention_mask mask;
        double bytes, live;
    } cases[] = {{AITK_MASK_PER_HEAD, 348571828224.0, 1019215872.0},
                 {AITK_MASK_PAIRWISE, 14523826176.0, 1019215872.0 / 24},
                 {AITK_MASK_KEY_PADDING, 3151872.0, 2.0 * 4608},
                 {AITK_MASK_PER_HEAD_KEPT, 348571828224.0, 1019215872.0 + 509607936.0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        w.attention_mask = cases[i].mask;
        aitk_prediction p = predict(f, &w, "RTX A6000");
        assert_same(p.work.bytes[AITK_BYTES_MASK], cases[i].bytes, "mask bytes");
        assert_same(p.memory.bytes[AITK_PLAN_LIVE_BLOCK] - plain.memory.bytes[AITK_PLAN_LIVE_BLOCK],
                    cases[i].live, "live block's mask");
        /* The kernel's rate: 123.34 TFLOP/s measured, flash's 0.91 and 0.67
         * of it (attention_by_cc 8.6), the masked kernel's 0.61 and 0.47 of
         * those. */
        const double fwd = p.work.flops[AITK_WORK_ATTN_FWD] + p.work.flops[AITK_WORK_ATTN_RECOMPUTE];
        const double want = fwd / (123.34e12 * 0.91 * 0.61) +
                            p.work.flops[AITK_WORK_ATTN_BWD] / (123.34e12 * 0.67 * 0.47);
        assert_same(p.t_attention, want, "masked attention time");
        /* The mask's bytes at the plain-kernel share of a copy (768 GB/s). */
        assert_same(p.t_memory - plain.t_memory, cases[i].bytes / (768e9 * 0.90 * 0.93),
                    "mask traffic time");
    }
    w.attention_mask = AITK_MASK_PER_HEAD;
    w.checkpointing = false;
    aitk_workload nockpt = w;
    nockpt.attention_mask = AITK_MASK_NONE;
    assert_same(predict(f, &w, "RTX A6000").memory.bytes[AITK_PLAN_CHECKPOINTS] -
                    predict(f, &nockpt, "RTX A6000").memory.bytes[AITK_PLAN_CHECKPOINTS],
                57 * 1019215872.0, "every block's kept mask");
    aitk_workload own = example_job(f, 1024);
    own.step_graph = true;
    aitk_step_work wk;
    assert_int_equal(aitk_cost_work(&own, f->params, 1024, &wk), AITK_OK);
    own.attention_mask = AITK_MASK_PER_HEAD;
    aitk_step_work masked;
    assert_int_equal(aitk_cost_work(&own, f->params, 1024, &masked), AITK_OK);
    assert_float_equal(masked.bytes[AITK_BYTES_MASK], 0, 0);
    aitk_attention_mask k = AITK_MASK_NONE;
    assert_int_equal(aitk_attention_mask_parse("pairwise", &k), AITK_OK);
    assert_int_equal(k, AITK_MASK_PAIRWISE);
    assert_int_not_equal(aitk_attention_mask_parse("dense", &k), AITK_OK);
    assert_string_equal(aitk_attention_mask_name(AITK_MASK_PER_HEAD_KEPT), "per_head_kept");
}

/* PyTorch on Windows has no flash attention (models/cost.h aitk_host_os):
 * an unmasked FLUX.1-dev job there runs every call at the memory-efficient
 * kernel's shares, the masked ones' (RTX A6000: 0.91 x 0.61 forward, 0.67
 * x 0.47 backward of 123.34 TFLOP/s), with no mask to convert or keep: the
 * same work and memory as on Linux, only attention slower. A masked job is
 * the same on both; this project's own step graph is not PyTorch's. */
static void test_windows_attention(void **state)
{
    (void)state;
    fixture *f = load("flux1-dev");
    aitk_workload w = example_job(f, 1024);
    w.base_dtype = AITK_WEIGHT_BF16;
    aitk_prediction linux = predict(f, &w, "RTX A6000");
    w.os = AITK_OS_WINDOWS;
    aitk_prediction windows = predict(f, &w, "RTX A6000");
    assert_float_equal(windows.work.bytes[AITK_BYTES_MASK], 0, 0);
    assert_same(aitk_memory_plan_peak(&windows.memory), aitk_memory_plan_peak(&linux.memory),
                "peak");
    assert_same(windows.t_memory, linux.t_memory, "memory time");
    const double fwd =
        windows.work.flops[AITK_WORK_ATTN_FWD] + windows.work.flops[AITK_WORK_ATTN_RECOMPUTE];
    assert_same(windows.t_attention,
                fwd / (123.34e12 * 0.91 * 0.61) +
                    windows.work.flops[AITK_WORK_ATTN_BWD] / (123.34e12 * 0.67 * 0.47),
                "attention time on Windows");
    assert_true(windows.step_s > linux.step_s);
    w.attention_mask = AITK_MASK_PER_HEAD;
    aitk_prediction masked_windows = predict(f, &w, "RTX A6000");
    w.os = AITK_OS_LINUX;
    assert_same(masked_windows.step_s, predict(f, &w, "RTX A6000").step_s, "masked step");
    aitk_workload own = example_job(f, 1024);
    own.step_graph = true;
    const double own_linux = predict(f, &own, "RTX A6000").t_attention;
    own.os = AITK_OS_WINDOWS;
    assert_same(predict(f, &own, "RTX A6000").t_attention, own_linux, "own step graph");
    aitk_host_os os = AITK_OS_LINUX;
    assert_int_equal(aitk_host_os_parse("windows", &os), AITK_OK);
    assert_int_equal(os, AITK_OS_WINDOWS);
    assert_int_not_equal(aitk_host_os_parse("Windows", &os), AITK_OK);
    assert_string_equal(aitk_host_os_name(AITK_OS_LINUX), "linux");
}


static int teardown(void **state)
{
    (void)state;
    fixture *f = load("chroma");
    aitk_model_spec_free(f->spec);
    aitk_cost_params_free(f->params);
    aitk_gpudb_free(f->db);
    return 0;
}

int main(void)
{
    unsetenv("AITK_DATA_DIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flux_saved_activations),
        cmocka_unit_test(test_flux_saved_attention_only),
        cmocka_unit_test(test_flux_saved_whole_blocks),
        cmocka_unit_test(test_flux_4090_1024),     cmocka_unit_test(test_flux_4090_512),
        cmocka_unit_test(test_flux_bf16_does_not_fit), cmocka_unit_test(test_chroma_memory),
        cmocka_unit_test(test_flux_a6000_memory),  cmocka_unit_test(test_flux_attention_flops),
        cmocka_unit_test(test_checkpointing_tradeoff), cmocka_unit_test(test_optimizer_state),
        cmocka_unit_test(test_adafactor_state),    cmocka_unit_test(test_fragmentation_share),
        cmocka_unit_test(test_bad_workloads),      cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_lora_traffic),       cmocka_unit_test(test_forward_only),
        cmocka_unit_test(test_dequant_traffic),    cmocka_unit_test(test_time_uses_matmul_rate),
        cmocka_unit_test(test_attention_by_cc),
        cmocka_unit_test(test_memory_time_by_kind), cmocka_unit_test(test_masked_attention),
        cmocka_unit_test(test_windows_attention),
        cmocka_unit_test(test_fit_against_usable_memory), cmocka_unit_test(test_fit_text),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
