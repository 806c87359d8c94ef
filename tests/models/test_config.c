/* The ai-toolkit config reader: each shape of ai-toolkit's example configs
 * (config/examples/train_lora_*_24gb.yaml; fixtures written from them), ai-toolkit's code defaults for missing keys, both
 * accumulation spellings refused as ai-toolkit refuses them, the upstream
 * OmniGen2 example's unterminated quote as file:line:column, unknown keys
 * listed with their places, and allocation failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "models/aitk_config.h"

#define FIXTURE(name) AITK_SOURCE_DIR "/tests/models/fixtures/" name

static void read_ok(const char *path, aitk_train_config *c)
{
    aitk_str err = AITK_STR_INIT;
    if (aitk_config_read(path, c, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
}

/* "<file>:<line>:<col>" then ':' or ')' somewhere in msg. */
static void assert_positioned(const char *msg, const char *file)
{
    const char *p = strstr(msg, file);
    if (!p)
        fail_msg("'%s' does not name %s", msg, file);
    p += strlen(file);
    for (int part = 0; part < 2; part++) {
        if (*p++ != ':' || !isdigit((unsigned char)*p))
            fail_msg("'%s' has no line:column after %s", msg, file);
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p != ':' && *p != ')')
        fail_msg("'%s' has no line:column after %s", msg, file);
}

static void test_flux_example(void **state)
{
    (void)state;
    aitk_train_config c;
    read_ok(FIXTURE("flux_24gb.yaml"), &c);
    assert_string_equal(c.model_id, "flux1-dev");
    assert_string_equal(c.name_or_path, "black-forest-labs/FLUX.1-dev");
    assert_int_equal(c.rank, 16);
    assert_true(c.alpha == 16);
    assert_int_equal(c.batch, 1);
    assert_int_equal(c.accumulation, 1);
    assert_int_equal(c.steps, 2000);
    assert_int_equal(c.n_resolutions, 3);
    assert_int_equal(c.resolutions[0], 512);
    assert_int_equal(c.resolutions[2], 1024);
    assert_true(c.checkpointing);
    assert_string_equal(c.dtype, "bf16");
    assert_true(c.lora_bytes == 2);
    assert_string_equal(c.optimizer, "adamw8bit");
    assert_true(c.quantize);
    assert_true(c.quantize_te); /* follows quantize when unset */
    assert_string_equal(c.qtype, "qfloat8");
    assert_true(c.cache_latents);
    assert_false(c.cache_text);
    /* Every key of the example is known and modelled (its EMA too). */
    if (c.n_unknown || c.n_not_modelled)
        fail_msg("unknown: %s; not modelled: %s", aitk_str_cstr(&c.unknown),
                 aitk_str_cstr(&c.not_modelled));
    assert_true(c.ema);
    assert_string_equal(c.title, "FLUX.1-dev (black-forest-labs/FLUX.1-dev)");
    assert_string_equal(c.job, "LoRA");
    aitk_config_free(&c);
}

static void test_chroma_example(void **state)
{
    (void)state;
    aitk_train_config c;
    read_ok(FIXTURE("chroma_24gb.yaml"), &c);
    assert_string_equal(c.model_id, "chroma");
    assert_int_equal(c.accumulation, 2); /* the gradient_accumulation spelling */
    assert_int_equal(c.steps, 3000);
    assert_int_equal(c.n_ignored, 1);
    assert_non_null(strstr(aitk_str_cstr(&c.ignored), "train.some_future_option"));
    assert_positioned(aitk_str_cstr(&c.ignored), "chroma_24gb.yaml");
    aitk_config_free(&c);
}

static void test_omnigen2_example(void **state)
{
    (void)state;
    aitk_train_config c;
    read_ok(FIXTURE("omnigen2_24gb.yaml"), &c);
    assert_string_equal(c.model_id, "omnigen2");
    assert_false(c.quantize);
    assert_true(c.quantize_te);
    aitk_config_free(&c);
}

/* ostris/ai-toolkit toolkit/config_modules.py: steps 1000, batch_size 1,
 * optimizer adamw, dtype fp32, gradient_checkpointing true, rank 4 / alpha
 * 1.0, quantize false, qtype qfloat8, resolution 512. */
static void test_code_defaults(void **state)
{
    (void)state;
    aitk_train_config c;
    read_ok(FIXTURE("minimal_flux.yaml"), &c);
    assert_string_equal(c.model_id, "flux1-dev");
    assert_int_equal(c.steps, 1000);
    assert_int_equal(c.batch, 1);
    assert_int_equal(c.accumulation, 1);
    assert_string_equal(c.optimizer, "adamw");
    assert_string_equal(c.dtype, "fp32");
    assert_true(c.lora_bytes == 4);
    assert_true(c.checkpointing);
    assert_int_equal(c.rank, 4);
    assert_true(c.alpha == 1.0);
    assert_false(c.quantize);
    assert_string_equal(c.qtype, "qfloat8");
    assert_int_equal(c.n_resolutions, 1);
    assert_int_equal(c.resolutions[0], 512);
    aitk_config_free(&c);
}

static void test_both_accumulation_spellings(void **state)
{
    (void)state;
    aitk_train_config c;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_config_read(FIXTURE("both_accumulation.yaml"), &c, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "mutually exclusive"));
    assert_positioned(aitk_str_cstr(&err), "both_accumulation.yaml");
    assert_null(c.doc);
    aitk_str_free(&err);
}

static void test_unterminated_quote(void **state)
{
    (void)state;
    aitk_train_config c;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_config_read(FIXTURE("omnigen2_unterminated.yaml"), &c, &err),
                     AITK_E_PARSE);
    assert_positioned(aitk_str_cstr(&err), "omnigen2_unterminated.yaml");
    /* ...and names where the quote was opened: line 9, column 23 of the file. */
    assert_non_null(strstr(aitk_str_cstr(&err), "omnigen2_unterminated.yaml:9:23"));
    aitk_str_free(&err);
    /* Other syntax errors get no quote hint; quotes inside words and closed
     * quotes are not mistaken for one. */
    const char *text = "config:\n  name: \"it's fine\" # don't\n  process: [1, 2\n";
    assert_int_equal(aitk_config_parse("x.yaml", text, strlen(text), &c, &err), AITK_E_PARSE);
    assert_positioned(aitk_str_cstr(&err), "x.yaml");
    assert_null(strstr(aitk_str_cstr(&err), "likely cause"));
    aitk_str_free(&err);
}

static void test_missing_file(void **state)
{
    (void)state;
    aitk_train_config c;
    aitk_str err = AITK_STR_INIT;
    assert_int_not_equal(aitk_config_read("/nonexistent/cfg.yaml", &c, &err), AITK_OK);
    assert_non_null(strstr(aitk_str_cstr(&err), "/nonexistent/cfg.yaml"));
    aitk_str_free(&err);
}

/* Broken configs given as text: each refused with a positioned reason. */
static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *text, *expect;
        aitk_status st;
    } cases[] = {
        {"- just a list\n", "ai-toolkit config", AITK_E_PARSE},
        {"job: extension\n", "missing 'config'", AITK_E_PARSE},
        {"config: {process: []}\n", "process is empty", AITK_E_PARSE},
        {"config: {process: [{model: {arch: sdxl}}]}\n", "trains Stable Diffusion XL", AITK_E_INVAL},
        {"config: {process: [{train: {batch_size: 1}}]}\n", "no model section", AITK_E_INVAL},
        {"config: {process: [{model: {name_or_path: x}}]}\n", "trains Stable Diffusion 1.x",
         AITK_E_INVAL},
        {"config: {process: [{model: {is_flux: true}, train: {batch_size: one}}]}\n",
         "cfg.yaml:1:65", AITK_E_PARSE},
        {"config: {process: [{model: {is_flux: true}, train: {batch_size: 0}}]}\n",
         "from 1 to 1024, found 0", AITK_E_RANGE},
        /* Past predict's own --batch/--rank/--resolution bounds: a typo, not a job. */
        {"config: {process: [{model: {is_flux: true}, train: {batch_size: 100000000}}]}\n",
         "batch_size must be from 1 to 1024", AITK_E_RANGE},
        {"config: {process: [{model: {is_flux: true}, network: {type: lora, linear: 5000}}]}\n",
         "linear must be from 1 to 4096", AITK_E_RANGE},
        {"config: {process: [{model: {is_flux: true}, datasets: [{resolution: [0]}]}]}\n",
         "outside 64..8192", AITK_E_RANGE},
        {"config: {process: [{model: {is_flux: true}, datasets: [{resolution: [16384]}]}]}\n",
         "outside 64..8192", AITK_E_RANGE},
        /* Every dataset's resolution empty: ai-toolkit makes no dataset of it. */
        {"config: {process: [{model: {is_flux: true}, datasets: [{resolution: []}]}]}\n",
         "cfg.yaml:1:55: no dataset has a resolution", AITK_E_INVAL},
        {"config: {process: [{model: {is_flux: true, quantize: true, qtype: qint3}}]}\n",
         "cfg.yaml:1:67: qtype 'qint3' is not one the memory model knows", AITK_E_PARSE},
        /* ai-toolkit's rotation and codebook backends: refused by name, not
         * counted as another type. */
        {"config: {process: [{model: {is_flux: true, quantize: true, qtype: convrot4}}]}\n",
         "qtype 'convrot4' is not one the memory model knows", AITK_E_PARSE},
        {"config: {process: [{model: {is_flux: true, quantize: true, qtype: orbit3}}]}\n",
         "the rotation and codebook types, convrot and orbit, are not counted", AITK_E_PARSE},
        {"config: {process: [{model: {is_flux: true, quantize: true, qtype: uint9}}]}\n",
         "qtype 'uint9' is not one the memory model knows", AITK_E_PARSE},
        {"config: {process: [{model: {is_flux: true}, train: {dtype: int3}}]}\n",
         "unknown dtype", AITK_E_PARSE},
        {"config: {process: [{model: {is_flux: true}, network: {type: lokr}}]}\n",
         "not modelled", AITK_E_INVAL},
        {"config: {process: [{model: {is_flux: maybe}}]}\n", "cfg.yaml:1:38", AITK_E_PARSE},
        /* -1 is "an epoch" (BaseSDTrainProcess.run); 0 is nothing ai-toolkit means. */
        {"config: {process: [{model: {is_flux: true}, network: {type: lora}, train: "
         "{gradient_accumulation_steps: 0}}]}\n",
         "gradient_accumulation_steps must be -1 (an epoch) or from 1", AITK_E_RANGE},
        {"config: {process: [{model: {is_flux: true}, network: {type: lora}, "
         "adapter: {type: ip}}]}\n",
         "cfg.yaml:1:68: this config is adapter training", AITK_E_INVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aitk_train_config c;
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_config_parse("cfg.yaml", cases[i].text, strlen(cases[i].text), &c,
                                           &err);
        if (st != cases[i].st)
            fail_msg("case %zu: status %d, expected %d (%s)", i, st, cases[i].st,
                     aitk_str_cstr(&err));
        if (!strstr(aitk_str_cstr(&err), cases[i].expect))
            fail_msg("case %zu: '%s' lacks '%s'", i, aitk_str_cstr(&err), cases[i].expect);
        aitk_str_free(&err);
    }
}

/* The config `text` read as cfg.yaml, which must be accepted. */
static void parse_ok(const char *text, aitk_train_config *c)
{
    aitk_str err = AITK_STR_INIT;
    if (aitk_config_parse("cfg.yaml", text, strlen(text), c, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
}

/* ai-toolkit makes one dataset per resolution listed, 512 where a dataset
 * gives none (config_modules.py preprocess_dataset_raw_config): a dataset
 * without the key adds a 512 px bucket beside the others' (it was left
 * out), and `resolution: []` adds none (it was read as 512). */
static void test_dataset_resolutions(void **state)
{
    (void)state;
    static const struct {
        const char *datasets;
        size_t n;
        long want[3];
    } cases[] = {
        {"[{resolution: [1024]}, {folder_path: /b}]", 2, {1024, 512}},
        {"[{resolution: []}, {resolution: 768}]", 1, {768}},
        {"[{folder_path: /a}]", 1, {512}},
        {"[{resolution: [768, 1024]}, {resolution: []}]", 2, {768, 1024}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[300];
        snprintf(text, sizeof text, "config: {process: [{model: {is_flux: true}, datasets: %s}]}\n",
                 cases[i].datasets);
        aitk_train_config c;
        parse_ok(text, &c);
        bool same = c.n_resolutions == cases[i].n;
        for (size_t k = 0; same && k < cases[i].n; k++)
            same = c.resolutions[k] == cases[i].want[k];
        if (!same)
            fail_msg("%s: %zu resolutions, the first %ld", cases[i].datasets, c.n_resolutions,
                     c.n_resolutions ? c.resolutions[0] : 0L);
        aitk_config_free(&c);
    }
}

/* qtype decides the bytes per weight: the digits after the type family.
 * qfloat8_e4m3fn is 8-bit although it contains a 4. ai-toolkit's uint2 to
 * uint7 (toolkit/util/uintx_quant.py @27a03a9) pack k bits a weight with a
 * bf16 scale and a uint8 zero point for each 64: k + 24/64 bits, worked by
 * hand; its uint8 quantizes nothing (can_quantize refuses 8 bits), so the
 * base stays as an unquantized one (bf16 here). */
static void test_qtype_bits(void **state)
{
    (void)state;
    static const struct {
        const char *qtype;
        double bits, packed_bits;
        aitk_weight_dtype base;
    } cases[] = {
        {"qfloat8", 8, 0, AITK_WEIGHT_FP8},      {"qfloat8_e4m3fn", 8, 0, AITK_WEIGHT_FP8},
        {"qfloat8_e5m2", 8, 0, AITK_WEIGHT_FP8}, {"qint8", 8, 0, AITK_WEIGHT_FP8},
        {"float8", 8, 0, AITK_WEIGHT_FP8},       {"qint4", 4, 0, AITK_WEIGHT_NF4},
        {"nf4", 4, 0, AITK_WEIGHT_NF4},          {"uint4", 4.375, 4.375, AITK_WEIGHT_NF4},
        {"uint2", 2.375, 2.375, AITK_WEIGHT_NF4}, {"uint3", 3.375, 3.375, AITK_WEIGHT_NF4},
        {"uint6", 6.375, 6.375, AITK_WEIGHT_NF4}, {"uint7", 7.375, 7.375, AITK_WEIGHT_NF4},
        {"uint8", 0, 0, AITK_WEIGHT_BF16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[240];
        snprintf(text, sizeof text,
                 "config: {process: [{train: {dtype: bf16}, model: {is_flux: true, quantize: "
                 "true, qtype: %s}}]}\n",
                 cases[i].qtype);
        aitk_train_config c;
        parse_ok(text, &c);
        if (c.qbits != cases[i].bits || aitk_config_base_packed_bits(&c) != cases[i].packed_bits ||
            aitk_config_base_storage(&c) != cases[i].base)
            fail_msg("%s: %g bits (packed %g, storage %d), expected %g (packed %g, storage %d)",
                     cases[i].qtype, c.qbits, aitk_config_base_packed_bits(&c),
                     (int)aitk_config_base_storage(&c), cases[i].bits, cases[i].packed_bits,
                     (int)cases[i].base);
        aitk_config_free(&c);
    }
}

/* train.dtype's fp16 spellings (toolkit/train_tools.py get_torch_dtype:
 * fp16, float16, half) compute in fp16; bf16 and fp32 (float, single,
 * float32) do not. */
static void test_dtype_fp16(void **state)
{
    (void)state;
    static const struct {
        const char *dtype;
        bool fp16;
    } cases[] = {{"fp16", true},      {"float16", true}, {"half", true},
                 {"bf16", false},     {"bfloat16", false}, {"fp32", false},
                 {"single", false}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[200];
        snprintf(text, sizeof text,
                 "config: {process: [{model: {is_flux: true}, train: {dtype: %s}}]}\n",
                 cases[i].dtype);
        aitk_train_config c;
        parse_ok(text, &c);
        if (c.fp16 != cases[i].fp16)
            fail_msg("dtype %s: fp16 %d, expected %d", cases[i].dtype, c.fp16, cases[i].fp16);
        aitk_config_free(&c);
    }
}

static void test_alloc_failures(void **state)
{
    (void)state;
    int failed = 0;
    for (long n = 0; n < 2000; n++) {
        aitk_train_config c;
        aitk_str err = AITK_STR_INIT;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_config_read(FIXTURE("chroma_24gb.yaml"), &c, &err);
        aitk_alloc_fail_after(-1);
        aitk_str_free(&err);
        if (!st) {
            aitk_config_free(&c);
            break;
        }
        failed++;
    }
    assert_true(failed > 0);
}

/* Deterministic mutation fuzzing of the reader (the ASan build checks memory):
 * bytes of every fixture deleted, inserted or replaced by YAML punctuation.
 * Whatever the input, the result is OK or one of the documented errors, and
 * an error always has a message. */
static void test_mutations(void **state)
{
    (void)state;
    static const char *const fixtures[] = {FIXTURE("flux_24gb.yaml"), FIXTURE("chroma_24gb.yaml"),
                                           FIXTURE("omnigen2_24gb.yaml")};
    static const char punct[] = ":\"'[]{}-,\n #&*!|>%@`0123456789ax";
    uint64_t x = 88172645463325252ULL; /* xorshift64 */
    for (int iter = 0; iter < 3000; iter++) {
        char *text = NULL;
        size_t len = 0;
        assert_int_equal(aitk_file_read(fixtures[iter % 3], 1 << 20, &text, &len, NULL), AITK_OK);
        char *buf = aitk_malloc(len + 16);
        assert_non_null(buf);
        memcpy(buf, text, len);
        aitk_free(text);
        int edits = 1 + iter % 5;
        for (int e = 0; e < edits && len > 1; e++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            size_t pos = (size_t)(x % len);
            char ch = punct[(x >> 32) % (sizeof punct - 1)];
            unsigned op = (unsigned)((x >> 48) % 3);
            if (op == 0) { /* delete */
                memmove(buf + pos, buf + pos + 1, len - pos - 1);
                len--;
            } else if (op == 1) { /* insert (buf has room for 16 more) */
                memmove(buf + pos + 1, buf + pos, len - pos);
                buf[pos] = ch;
                len++;
            } else {
                buf[pos] = ch;
            }
        }
        aitk_train_config c;
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_config_parse("fuzz.yaml", buf, len, &c, &err);
        if (st == AITK_OK) {
            aitk_config_free(&c);
        } else if (st != AITK_E_PARSE && st != AITK_E_INVAL && st != AITK_E_RANGE) {
            fail_msg("iteration %d: unexpected status %s", iter, aitk_status_name(st));
        } else if (err.len == 0) {
            fail_msg("iteration %d: %s without a message", iter, aitk_status_name(st));
        }
        aitk_str_free(&err);
        aitk_free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flux_example),       cmocka_unit_test(test_chroma_example),
        cmocka_unit_test(test_omnigen2_example),   cmocka_unit_test(test_code_defaults),
        cmocka_unit_test(test_both_accumulation_spellings),
        cmocka_unit_test(test_unterminated_quote), cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_malformed),          cmocka_unit_test(test_qtype_bits),
        cmocka_unit_test(test_dataset_resolutions),
        cmocka_unit_test(test_dtype_fp16),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
