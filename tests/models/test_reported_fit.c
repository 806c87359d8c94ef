/* The memory reports of models/reported_speeds.yaml (models/reported.c) and
 * the fit verdicts set against them (models/reported_fit.c): the schema on
 * hand-made YAML, and verdicts whose answer follows from figures worked out
 * here by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <string.h>

#include "common/yaml.h"
#include "models/gpudb.h"
#include "models/reported_fit.h"

typedef struct fixture {
    aitk_gpudb *db;
    aitk_cost_params *params;
} fixture;

static int setup(void **state)
{
    static fixture f;
    aitk_str err = AITK_STR_INIT;
    if (aitk_gpudb_load(&f.db, &err) || aitk_cost_params_load(&f.params, &err)) {
        print_error("%s\n", aitk_str_cstr(&err));
        aitk_str_free(&err);
        return -1;
    }
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    aitk_gpudb_free(f->db);
    aitk_cost_params_free(f->params);
    return 0;
}

/* One timed report, so the file holds the list every file must have. */
#define TIMED                                                                                    \
    "schema: 1\n"                                                                                \
    "reports:\n"                                                                                 \
    "  - {id: t, source: s, trainer: ai-toolkit, gpu: RTX 4090, model: flux1-dev,\n"                    \
    "     seconds_per_step: 2}\n"

static aitk_status load(fixture *f, const char *text, aitk_reported_speeds **out, aitk_str *err)
{
    aitk_yaml_doc *doc = NULL;
    aitk_status st = aitk_yaml_parse("r.yaml", text, strlen(text), &doc, err);
    return st ? st : aitk_reported_speeds_from_doc(doc, f->db, f->params, out, err);
}

/* Expects `text` to fail with `want`, the message holding `needle`. */
static void rejects(fixture *f, const char *text, aitk_status want, const char *needle)
{
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(load(f, text, &s, &err), want);
    assert_null(s);
    if (!strstr(aitk_str_cstr(&err), needle))
        fail_msg("'%s' lacks '%s'", aitk_str_cstr(&err), needle);
    aitk_str_free(&err);
}

/* A file without memory_reports loads as before; each row reads its outcome,
 * an optional time and peak, and a GPU that unstated rows alone may leave
 * out (then none is looked up). */
static void test_schema_accepts(void **state)
{
    fixture *f = *state;
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(load(f, TIMED, &s, &err), AITK_OK);
    assert_int_equal(s->count, 1);
    assert_int_equal(s->n_memory, 0);
    assert_int_equal(s->items[0].outcome, AITK_OUTCOME_RAN);
    aitk_reported_speeds_free(s);
    const char *text = TIMED "memory_reports:\n"
                             "  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S, model: flux1-dev,\n"
                             "     outcome: oom}\n"
                             "  - {id: b, source: s, trainer: ai-toolkit, gpu: RTX 4090, model: chroma,\n"
                             "     outcome: ran, seconds_per_step: 3.5, peak_gb: 20}\n"
                             "  - {id: c, source: s, trainer: ai-toolkit, model: flux1-dev,\n"
                             "     outcome: unstated, peak_gb: 30}\n";
    assert_int_equal(load(f, text, &s, &err), AITK_OK);
    assert_int_equal(s->n_memory, 3);
    assert_int_equal(s->memory[0].outcome, AITK_OUTCOME_OOM);
    assert_string_equal(s->memory[0].gpu->name, "L40S");
    assert_true(s->memory[0].seconds_per_step == 0 && s->memory[0].peak_gb < 0);
    assert_int_equal(s->memory[1].outcome, AITK_OUTCOME_RAN);
    assert_true(s->memory[1].seconds_per_step == 3.5 && s->memory[1].peak_gb == 20);
    assert_int_equal(s->memory[2].outcome, AITK_OUTCOME_UNSTATED);
    assert_null(s->memory[2].gpu);
    aitk_reported_speeds_free(s);
    aitk_str_free(&err);
}

/* Each malformed row is refused with its place and its problem. */
static void test_schema_rejects(void **state)
{
    fixture *f = *state;
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S,\n"
                     "     model: flux1-dev, outcome: maybe}\n",
            AITK_E_PARSE, "r.yaml:7:33:");
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S,\n"
                     "     model: flux1-dev, outcome: maybe}\n",
            AITK_E_PARSE, "expected oom, ran or unstated, found 'maybe'");
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S,\n"
                     "     model: flux1-dev}\n",
            AITK_E_PARSE, "outcome");
    /* Only an unstated outcome may name no GPU. */
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, model: flux1-dev,\n"
                     "     outcome: oom}\n",
            AITK_E_PARSE, "gpu");
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S,\n"
                     "     model: flux1-dev, outcome: ran, peak_gb: -3}\n",
            AITK_E_RANGE, "greater than 0");
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S,\n"
                     "     model: flux1-dev, outcome: ran, seconds_per_step: 0}\n",
            AITK_E_RANGE, "greater than 0");
    rejects(f, TIMED "memory_reports: {id: a}\n", AITK_E_PARSE, "a list of memory reports");
    /* outcome belongs to memory reports: a timed report has run. */
    rejects(f, "schema: 1\nreports:\n  - {id: t, source: s, trainer: ai-toolkit, gpu: RTX 4090,\n"
               "     model: flux1-dev, seconds_per_step: 2, outcome: oom}\n",
            AITK_E_PARSE, "outcome");
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: Voodoo 2,\n"
                     "     model: flux1-dev, outcome: ran}\n",
            AITK_E_PARSE, "r.yaml:6:");
}

/* setup_unknown: a reason read onto oom and ran rows; refused on an
 * unstated row (no verdict to hold back), empty, or on a timed report. */
static void test_setup_unknown(void **state)
{
    fixture *f = *state;
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    const char *text = TIMED "memory_reports:\n"
                             "  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S, model: flux1-dev,\n"
                             "     outcome: oom, setup_unknown: batch not given}\n"
                             "  - {id: b, source: s, trainer: ai-toolkit, gpu: L40S, model: flux1-dev,\n"
                             "     outcome: ran}\n";
    assert_int_equal(load(f, text, &s, &err), AITK_OK);
    assert_string_equal(s->memory[0].setup_unknown, "batch not given");
    assert_null(s->memory[1].setup_unknown);
    assert_null(s->items[0].setup_unknown);
    aitk_reported_speeds_free(s);
    aitk_str_free(&err);
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, model: flux1-dev,\n"
                     "     outcome: unstated, setup_unknown: why}\n",
            AITK_E_PARSE, "setup_unknown: give the reason");
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S,\n"
                     "     model: flux1-dev, outcome: oom, setup_unknown: ''}\n",
            AITK_E_PARSE, "setup_unknown: give the reason");
    rejects(f, "schema: 1\nreports:\n  - {id: t, source: s, trainer: ai-toolkit, gpu: RTX 4090,\n"
               "     model: flux1-dev, seconds_per_step: 2, setup_unknown: why}\n",
            AITK_E_PARSE, "setup_unknown");
}

/* Agreement and the tally on rows whose verdicts are set by hand:
 *   oom/misses yes, oom/fits no, ran/fits yes, ran/misses no, ran/fits yes,
 *   unstated on a GPU and a row with no GPU: not judged.
 * Judged 5, right 3; out of memory 1 of 2, ran 2 of 3. */
static void test_tally(void **state)
{
    (void)state;
    static const aitk_gpu_spec gpu = {.name = "G"};
    const aitk_reported_outcome outcome[] = {AITK_OUTCOME_OOM, AITK_OUTCOME_OOM,
                                             AITK_OUTCOME_RAN, AITK_OUTCOME_RAN,
                                             AITK_OUTCOME_RAN, AITK_OUTCOME_UNSTATED,
                                             AITK_OUTCOME_UNSTATED};
    const bool fits[] = {false, true, true, false, true, true, false};
    const int want[] = {1, 0, 1, 0, 1, -1, -1};
    aitk_reported_speed r[7];
    aitk_fit_row rows[7];
    for (int i = 0; i < 7; i++) {
        r[i] = (aitk_reported_speed){.gpu = i < 6 ? &gpu : NULL, .outcome = outcome[i]};
        rows[i] = (aitk_fit_row){.report = &r[i], .pred = {.fits = fits[i]}};
        assert_int_equal(aitk_reported_fit_agrees(&rows[i]), want[i]);
    }
    aitk_fit_tally t;
    aitk_reported_fit_tally(rows, 7, &t);
    assert_int_equal(t.rows, 5);
    assert_int_equal(t.right, 3);
    assert_int_equal(t.oom, 2);
    assert_int_equal(t.oom_right, 1);
    assert_int_equal(t.ran, 3);
    assert_int_equal(t.ran_right, 2);
    assert_int_equal(t.unknown, 0);
    /* The same rows with the setup of the first three left open: oom/misses
     * (right) and oom/fits (wrong) and ran/fits (right) leave the count;
     * judged 2, right 1 (ran 1 of 2, no oom), and 2 of 3 open rows agree. */
    for (int i = 0; i < 3; i++)
        r[i].setup_unknown = "not given";
    aitk_reported_fit_tally(rows, 7, &t);
    assert_int_equal(t.rows, 2);
    assert_int_equal(t.right, 1);
    assert_int_equal(t.oom, 0);
    assert_int_equal(t.ran, 2);
    assert_int_equal(t.ran_right, 1);
    assert_int_equal(t.unknown, 3);
    assert_int_equal(t.unknown_right, 2);
}

/* Verdicts whose answer needs no cost model: FLUX.1-dev's transformer holds
 * 11.9 B weights, 23.8 GB in bf16, so a bf16 job cannot fit an RTX 3080's
 * 10 GB (its out-of-memory report agrees); on an H200 (141 GB) a 4-bit job
 * at 512 px with cached text fits with room for a whole bf16 copy, so its
 * 'ran' agrees and an out-of-memory report for it does not. The row with no
 * GPU gets a peak above its 23.8 GB of bf16 weights and no verdict. */
static void test_evaluate(void **state)
{
    fixture *f = *state;
    const char *text =
        TIMED "memory_reports:\n"
              "  - {id: a, source: s, trainer: ai-toolkit, gpu: RTX 3080 10GB, model: flux1-dev,\n"
              "     outcome: oom, setup: {resolutions: [512], base: bf16, text: cached,\n"
              "                           autocast: true}}\n"
              "  - {id: b, source: s, trainer: ai-toolkit, gpu: H200 SXM, model: flux1-dev,\n"
              "     outcome: ran, setup: {resolutions: [512], base: nf4, text: cached}}\n"
              "  - {id: c, source: s, trainer: ai-toolkit, gpu: H200 SXM, model: flux1-dev,\n"
              "     outcome: oom, setup: {resolutions: [512], base: nf4, text: cached}}\n"
              "  - {id: d, source: s, trainer: ai-toolkit, model: flux1-dev, outcome: unstated,\n"
              "     setup: {resolutions: [512], base: bf16, text: cached}}\n";
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(load(f, text, &s, &err), AITK_OK);
    aitk_fit_row rows[4];
    assert_int_equal(aitk_reported_fit_evaluate(s, f->params, rows, &err), AITK_OK);
    assert_true(rows[0].workload.autocast && !rows[1].workload.autocast);
    assert_false(rows[0].pred.fits);
    assert_int_equal(aitk_reported_fit_agrees(&rows[0]), 1);
    assert_true(rows[1].pred.fits);
    assert_int_equal(aitk_reported_fit_agrees(&rows[1]), 1);
    assert_int_equal(aitk_reported_fit_agrees(&rows[2]), 0);
    assert_int_equal(aitk_reported_fit_agrees(&rows[3]), -1);
    assert_true(rows[3].pred.memory.total > 23.8e9);
    assert_null(rows[3].workload.spec);
    aitk_fit_tally t;
    aitk_reported_fit_tally(rows, 4, &t);
    assert_int_equal(t.rows, 3);
    assert_int_equal(t.right, 2);
    aitk_reported_speeds_free(s);
    aitk_str_free(&err);
}

/* text: resident (diffusers' train_dreambooth_lora_flux.py since
 * huggingface/diffusers 37e3603c4a keeps both encoders on the GPU after it
 * has encoded the one prompt): the encoders' bf16 weights count, T5-XXL's
 * encoder 4.76e9 and CLIP-L's text tower 123e6 parameters (their model
 * cards), (4.76e9 + 0.123e9) x 2 B = 9.766e9 B, and their work does not:
 * the step is the cached job's to the second. */
static void test_text_resident(void **state)
{
    fixture *f = *state;
    const char *text =
        TIMED "memory_reports:\n"
              "  - {id: a, source: s, trainer: diffusers, gpu: A100 80GB SXM, model: flux1-dev,\n"
              "     outcome: oom, setup: {resolutions: [512], base: bf16, text: resident}}\n"
              "  - {id: b, source: s, trainer: diffusers, gpu: A100 80GB SXM, model: flux1-dev,\n"
              "     outcome: oom, setup: {resolutions: [512], base: bf16, text: cached}}\n";
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(load(f, text, &s, &err), AITK_OK);
    aitk_fit_row rows[2];
    assert_int_equal(aitk_reported_fit_evaluate(s, f->params, rows, &err), AITK_OK);
    assert_float_equal(rows[0].pred.memory.bytes[AITK_PLAN_TEXT_ENCODERS], 9.766e9, 1e6);
    assert_float_equal(rows[1].pred.memory.bytes[AITK_PLAN_TEXT_ENCODERS], 0, 0);
    assert_float_equal(rows[0].pred.step_s, rows[1].pred.step_s, 1e-12);
    aitk_str setup = AITK_STR_INIT;
    aitk_reported_describe_setup(&setup, &rows[0].workload);
    assert_non_null(strstr(aitk_str_cstr(&setup), "text resident"));
    aitk_str_free(&setup);
    aitk_reported_speeds_free(s);
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S,\n"
                     "     model: flux1-dev, outcome: oom, setup: {text: kept}}\n",
            AITK_E_PARSE, "expected cached, resident, bf16 or fp8");
    aitk_str_free(&err);
}

/* lora_layers: the Hugging Face blog 'Fine-Tuning FLUX.1-dev on Consumer
 * Hardware' trains 'Only 4.67M LoRA parameters': rank 4 on to_q, to_k,
 * to_v, to_out.0, i.e. q, k, v, out of the 19 double blocks' image stream
 * and q, k, v of the 38 single blocks, each 3072 -> 3072:
 * (19 x 4 + 38 x 3) x 4 x (3072 + 3072) = 4,669,440. Without the list the
 * trainer's own default applies: diffusers' twelve modules, 4 x 2,801,664
 * = 11,206,656 (tests/models/test_trainers.c works out the sum); ai-toolkit
 * adapts every Linear the model marks lora, far more. A list must hold 1
 * to 16 names. */
static void test_lora_layers(void **state)
{
    fixture *f = *state;
    const char *text =
        TIMED "memory_reports:\n"
              "  - {id: a, source: s, trainer: diffusers, gpu: RTX 4090, model: flux1-dev,\n"
              "     outcome: ran, setup: {resolutions: [512], rank: 4, base: nf4, text: cached,\n"
              "       lora_layers: [attn.to_q, attn.to_k, attn.to_v, attn.to_out.0]}}\n"
              "  - {id: b, source: s, trainer: diffusers, gpu: RTX 4090, model: flux1-dev,\n"
              "     outcome: ran, setup: {resolutions: [512], rank: 4, base: nf4, text: cached}}\n"
              "  - {id: c, source: s, trainer: ai-toolkit, gpu: RTX 4090, model: flux1-dev,\n"
              "     outcome: ran, setup: {resolutions: [512], rank: 4, base: nf4, text: cached}}\n";
    aitk_reported_speeds *s = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(load(f, text, &s, &err), AITK_OK);
    aitk_fit_row rows[3];
    assert_int_equal(aitk_reported_fit_evaluate(s, f->params, rows, &err), AITK_OK);
    const double lora_a = rows[0].pred.memory.bytes[AITK_PLAN_LORA_PARAMS] /
                          rows[0].workload.lora_bytes;
    const double lora_b = rows[1].pred.memory.bytes[AITK_PLAN_LORA_PARAMS] /
                          rows[1].workload.lora_bytes;
    const double lora_c = rows[2].pred.memory.bytes[AITK_PLAN_LORA_PARAMS] /
                          rows[2].workload.lora_bytes;
    assert_float_equal(lora_a, 4669440.0, 0.5);
    assert_float_equal(lora_b, 11206656.0, 0.5);
    assert_true(lora_c > 4 * lora_a);
    assert_true(rows[0].pred.step_s < rows[1].pred.step_s);
    aitk_reported_speeds_free(s);
    aitk_str_free(&err);
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S,\n"
                     "     model: flux1-dev, outcome: oom, setup: {lora_layers: []}}\n",
            AITK_E_RANGE, "lora_layers: expected 1 to 16 module names");
    rejects(f, TIMED "memory_reports:\n  - {id: a, source: s, trainer: ai-toolkit, gpu: L40S,\n"
                     "     model: flux1-dev, outcome: oom, setup: {lora_layers: attn}}\n",
            AITK_E_PARSE, "a list of module names");
}

/* The head every report row starts with: the speed rows and the memory rows
 * once wrote it apart, and only the memory rows knew a report may name no
 * GPU. */
static void test_entry_json(void **state)
{
    (void)state;
    static const aitk_gpu_spec gpu = {.name = "G"};
    aitk_reported_speed r = {.id = "i", .source = "s", .trainer = "t", .gpu = &gpu,
                             .model_id = "m", .assumed = "a"};
    aitk_workload w = {0};
    cJSON *o = aitk_reported_entry_json(&r, &w);
    assert_non_null(o);
    static const char *const keys[] = {"id", "source", "trainer", "gpu", "model", "assumed",
                                       "setup"};
    const cJSON *item = o->child;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++, item = item->next) {
        assert_non_null(item);
        assert_string_equal(item->string, keys[i]);
    }
    assert_null(item);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "gpu")->valuestring, "G");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "model")->valuestring, "m");
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "setup")));
    cJSON_Delete(o);
    r.gpu = NULL;
    o = aitk_reported_entry_json(&r, &w);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "gpu")));
    cJSON_Delete(o);
}

/* The peak error: reported / predicted peak over the rows that measured a
 * peak on a named GPU, timed rows and memory rows alike; a row without a
 * peak, or a documentation figure with no GPU, is left out. Ratios 0.9,
 * 1.0 and 1.2 (sorted), 10th and 90th percentiles interpolated between
 * neighbours: 0.9 + 0.2 x 0.1 = 0.92 and 1.0 + 0.8 x 0.2 = 1.16. */
static void test_peak_error(void **state)
{
    fixture *f = *state;
    const aitk_gpu_spec *g = NULL;
    assert_int_equal(aitk_gpudb_find(f->db, "RTX 4090", &g, NULL), AITK_OK);
    aitk_reported_speed low = {.gpu = g, .peak_gb = 9}, high = {.gpu = g, .peak_gb = 12},
                        none = {.gpu = g, .peak_gb = -1}, even = {.gpu = g, .peak_gb = 10},
                        doc = {.gpu = NULL, .peak_gb = 30};
    aitk_reported_row timed[3] = {{.report = &low}, {.report = &none}, {.report = &high}};
    aitk_fit_row fits[2] = {{.report = &even}, {.report = &doc}};
    for (int i = 0; i < 3; i++)
        timed[i].pred.memory.total = 10e9;
    for (int i = 0; i < 2; i++)
        fits[i].pred.memory.total = 10e9;
    aitk_time_range e;
    assert_int_equal(aitk_reported_peak_error(timed, 3, fits, 2, &e), AITK_OK);
    assert_int_equal((int)e.n, 3);
    assert_float_equal(e.lo, 0.92, 1e-12);
    assert_float_equal(e.hi, 1.16, 1e-12);
    /* No measured peak at all: no range, and so no tight mark. */
    assert_int_equal(aitk_reported_peak_error(timed + 1, 1, fits + 1, 1, &e), AITK_OK);
    assert_int_equal((int)e.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_accepts),
        cmocka_unit_test(test_schema_rejects),
        cmocka_unit_test(test_setup_unknown),
        cmocka_unit_test(test_tally),
        cmocka_unit_test(test_evaluate),
        cmocka_unit_test(test_text_resident),
        cmocka_unit_test(test_lora_layers),
        cmocka_unit_test(test_entry_json),
        cmocka_unit_test(test_peak_error),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
