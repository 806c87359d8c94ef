/* ci/torch-flux-step.py --compare, the half of the GPU measurement that runs
 * without torch: a saved measurement (written here, as the device would) is
 * set beside `aitk-validate predict` for the job it describes. The predicted
 * seconds must be the ones predict gives for that job described
 * independently (an ai-toolkit config written by this test), the ratio
 * predicted / measured, the measurement must survive in the file, a row that
 * ran out of memory is left out, and bad input is refused with exit 2 (a GPU
 * the database lacks: exit 1 with predict's own words). With --report the
 * measurement is set beside aitk's own measured FLUX step from a saved
 * report (tests/ci/data), torch s/step over aitk s/step. python3 is a test
 * dependency (ci/install-deps.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/str.h"
#include "tests/exe_run.h"
#include "tests/report_json.h"

#define SCRIPT AITK_SOURCE_DIR "/ci/torch-flux-step.py"

static char dir[] = "/tmp/aitk-torch-compare-XXXXXX";

/* python3 ci/torch-flux-step.py ARGS... */
static ran compare(const char *const *args)
{
    const char *argv[16] = {"python3", SCRIPT};
    size_t n = 2;
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return run_program(argv, 120000);
}

static void write_file(const char *path, const char *text)
{
    aitk_str err = AITK_STR_INIT;
    if (aitk_file_write_atomic(path, text, strlen(text), &err))
        fail_msg("%s", aitk_str_cstr(&err));
}

static void path_in(aitk_str *p, const char *name)
{
    aitk_str_clear(p);
    aitk_path_join(p, dir, name);
}

/* What predict says for the measured job, from this test's own description
 * of it: FLUX.1-dev, LoRA rank 16 / alpha 16, batch 1, bf16 base, gradient
 * checkpointing (or not), AdamW, text embeddings cached, one resolution, with
 * `option value` (--attention-mask SHAPE, --os windows; NULL: neither). */
static double predicted_with(long res, bool checkpointing, const char *option,
                             const char *value)
{
    aitk_str cfg = AITK_STR_INIT, out = AITK_STR_INIT, text = AITK_STR_INIT;
    path_in(&cfg, "job.yaml");
    path_in(&out, "job.json");
    aitk_str_appendf(&text,
                     "job: extension\nconfig:\n  name: t\n  process:\n    - type: sd_trainer\n"
                     "      network: {type: lora, linear: 16, linear_alpha: 16}\n"
                     "      datasets: [{folder_path: /x, resolution: [%ld]}]\n"
                     "      train: {batch_size: 1, gradient_checkpointing: %s, optimizer: adamw,"
                     " dtype: bf16, cache_text_embeddings: true}\n"
                     "      model: {name_or_path: black-forest-labs/FLUX.1-dev, is_flux: true,"
                     " quantize: false}\n",
                     res, checkpointing ? "true" : "false");
    write_file(cfg.ptr, text.ptr);
    ran r = run((const char *[]){"predict", "--config", cfg.ptr, "--gpu", "H200 SXM", "--json",
                                 out.ptr, option, value, NULL});
    assert_int_equal(r.rc, 0);
    cJSON *j = load_json(out.ptr);
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0);
    const double s =
        json_num(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "gpus"), 0), "step_seconds");
    cJSON_Delete(j);
    ran_free(&r);
    aitk_str_free(&cfg);
    aitk_str_free(&out);
    aitk_str_free(&text);
    return s;
}

static double predicted_masked(long res, bool checkpointing, const char *mask)
{
    return predicted_with(res, checkpointing, "--attention-mask", mask);
}

static double predicted_independently(long res, bool checkpointing)
{
    return predicted_with(res, checkpointing, NULL, NULL);
}

static const char measured[] =
    "{\"schema\": 1, \"gpu\": \"NVIDIA H200\", \"torch\": \"2.11.0\",\n"
    " \"generation\": {\"resolution\": 1024, \"seconds_per_step\": 0.2},\n"
    " \"training\": [\n"
    "  {\"resolution\": 512, \"seconds_per_step\": 0.4,"
    "   \"kernel_seconds\": {\"gemm\": 0.1, \"attention\": 0.02, \"other\": 0.15},"
    "   \"kernels_per_step\": 21000},\n"
    "  {\"resolution\": 768, \"error\": \"out of memory\"},\n"
    "  {\"resolution\": 1024, \"seconds_per_step\": 1.25}],\n"
    " \"training_masked\": {\"resolution\": 1024, \"seconds_per_step\": 1.6,"
    "   \"mask\": \"T5 key mask\", \"kernel_seconds\": {\"attention\": 0.5}},\n"
    " \"training_efficient\": {\"resolution\": 1024, \"seconds_per_step\": 1.4,"
    "   \"attention\": \"memory-efficient kernel, no mask (as PyTorch on Windows)\"},\n"
    " \"training_dense_mask\": {\"resolution\": 1024, \"seconds_per_step\": 2.0}}\n";

static void test_compare(void **state)
{
    (void)state;
    aitk_str file = AITK_STR_INIT;
    path_in(&file, "torch-flux.json");
    write_file(file.ptr, measured);
    ran r = compare((const char *[]){"--compare", file.ptr, "--aitk", AITK_EXE, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, aitk_str_cstr(&r.err));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "NVIDIA H200"));
    cJSON *j = load_json(file.ptr);
    /* The measurement is still there, untouched. */
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "torch")->valuestring, "2.11.0");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "training")), 3);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "comparison"), "rows");
    assert_int_equal(cJSON_GetArraySize(rows), 2); /* the out-of-memory row is left out */
    static const struct {
        long res;
        double seconds;
    } want[] = {{512, 0.4}, {1024, 1.25}};
    for (int i = 0; i < 2; i++) {
        const cJSON *row = cJSON_GetArrayItem(rows, i);
        assert_int_equal((long)json_num(row, "resolution"), want[i].res);
        assert_float_equal(json_num(row, "measured_seconds"), want[i].seconds, 1e-12);
        const double p = predicted_independently(want[i].res, true);
        assert_float_equal(json_num(row, "predicted_seconds"), p, 1e-9 * p);
        assert_float_equal(json_num(row, "ratio"), p / want[i].seconds, 1e-9);
    }
    /* Kernel time by kind sits beside the model's terms. */
    const cJSON *other = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "terms"), "other");
    assert_float_equal(json_num(other, "measured"), 0.15, 1e-12);
    assert_true(json_num(other, "predicted") > 0);
    /* The profiler's launches beside the model's count of the same step's
     * kernels: models/flux1-dev.yaml by hand, 19 double blocks of
     * 2 x 164 + 224 and 38 single blocks of 2 x 79 + 107. */
    const cJSON *kernels = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "kernels");
    assert_float_equal(json_num(kernels, "measured"), 21000, 1e-12);
    assert_float_equal(json_num(kernels, "predicted"), 19 * (2 * 164 + 224) + 38 * (2 * 79 + 107),
                       1e-12);
    /* The steps off flash attention beside predict for the same job: the T5
     * key row as --attention-mask key_padding, the unmasked step on the
     * memory-efficient kernel as --os windows, ai-toolkit's kept dense mask
     * as --attention-mask per_head_kept, each priced above the flash step. */
    const cJSON *masked = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "comparison"), "masked");
    assert_int_equal(cJSON_GetArraySize(masked), 3);
    static const struct {
        const char *mask, *option, *value;
        double seconds;
    } runs[] = {{"key_padding", "--attention-mask", "key_padding", 1.6},
                {"none", "--os", "windows", 1.4},
                {"per_head_kept", "--attention-mask", "per_head_kept", 2.0}};
    for (int i = 0; i < 3; i++) {
        const cJSON *row = cJSON_GetArrayItem(masked, i);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(row, "mask")->valuestring,
                            runs[i].mask);
        const cJSON *opts = cJSON_GetObjectItemCaseSensitive(row, "predict_options");
        assert_string_equal(cJSON_GetArrayItem(opts, 0)->valuestring, runs[i].option);
        assert_string_equal(cJSON_GetArrayItem(opts, 1)->valuestring, runs[i].value);
        assert_float_equal(json_num(row, "measured_seconds"), runs[i].seconds, 1e-12);
        const double p = predicted_with(1024, true, runs[i].option, runs[i].value);
        assert_float_equal(json_num(row, "predicted_seconds"), p, 1e-9 * p);
        assert_true(p > predicted_independently(1024, true));
    }
    /* The Windows step converts no mask: priced below the masked ones. */
    assert_true(predicted_with(1024, true, "--os", "windows") <
                predicted_masked(1024, true, "key_padding"));
    assert_non_null(strstr(aitk_str_cstr(&r.out),
                           "memory-efficient kernel, no mask (as PyTorch on Windows) "
                           "(predict --os windows)"));
    const cJSON *attention = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(masked, 0), "terms"), "attention");
    assert_float_equal(json_num(attention, "measured"), 0.5, 1e-12);
    assert_non_null(strstr(aitk_str_cstr(&r.out),
                           "masked, T5 key mask (predict --attention-mask key_padding)"));
    cJSON_Delete(j);
    ran_free(&r);

    /* A step measured without checkpointing is set beside predict for that
     * job, which recomputes nothing and so predicts a shorter step. */
    static const char unchecked[] =
        "{\"schema\": 1, \"gpu\": \"NVIDIA H200\", \"setup\": {\"checkpointing\": false},\n"
        " \"training\": [{\"resolution\": 1024, \"seconds_per_step\": 0.8}]}\n";
    write_file(file.ptr, unchecked);
    r = compare((const char *[]){"--compare", file.ptr, "--aitk", AITK_EXE, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, aitk_str_cstr(&r.err));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "bf16 base, no checkpointing:"));
    j = load_json(file.ptr);
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "comparison"), "rows"), 0);
    const double p = predicted_independently(1024, false);
    assert_float_equal(json_num(row, "predicted_seconds"), p, 1e-9 * p);
    assert_true(p < predicted_independently(1024, true));
    cJSON_Delete(j);
    ran_free(&r);
    unlink(file.ptr);
    aitk_str_free(&file);
}

/* Refusals: each names the file (or predict's words) and exits as documented;
 * the file is left as it was. */
static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *words;
        int rc;
    } cases[] = {
        {"{\"schema\": 1, \"gpu\": \"NVIDIA H200\", \"training\": [", "torch-flux.json", 2},
        {"{\"schema\": 9, \"gpu\": \"NVIDIA H200\", \"training\": []}", "not a torch-flux-step", 2},
        {"{\"schema\": 1, \"gpu\": \"NVIDIA H200\", \"training\": [{\"resolution\": 512,"
         " \"seconds_per_step\": -1}]}",
         "training[0]: 'seconds_per_step' must be a number greater than 0", 2},
        {"{\"schema\": 1, \"gpu\": \"Voodoo 5\", \"training\": [{\"resolution\": 512,"
         " \"seconds_per_step\": 1}]}",
         "unknown GPU 'Voodoo 5'", 1},
    };
    aitk_str file = AITK_STR_INIT;
    path_in(&file, "torch-flux.json");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_file(file.ptr, cases[i].text);
        ran r = compare((const char *[]){"--compare", file.ptr, "--aitk", AITK_EXE, NULL});
        if (r.rc != cases[i].rc || !strstr(aitk_str_cstr(&r.err), cases[i].words))
            fail_msg("case %zu: exit %d (expected %d), stderr '%s'", i, r.rc, cases[i].rc,
                     aitk_str_cstr(&r.err));
        char *data = NULL;
        size_t len = 0;
        assert_int_equal(aitk_file_read(file.ptr, 1u << 20, &data, &len, NULL), AITK_OK);
        assert_string_equal(data, cases[i].text);
        aitk_free(data);
        ran_free(&r);
    }
    /* --compare without --aitk or --report is bad usage. */
    ran r = compare((const char *[]){"--compare", file.ptr, NULL});
    assert_int_equal(r.rc, 2);
    ran_free(&r);
    unlink(file.ptr);
    aitk_str_free(&file);
}

/* --report: aitk-validate's own FLUX step (a saved report, tests/ci/data)
 * beside the PyTorch step, with no torch and no --aitk. The fixture's
 * flux1-dev workload ran 768 and 1024 px, timed only 1024 (median 0.9 s);
 * the measurement has 512 and 1024 px: one row in common, and aitk's speed
 * is torch's 1.25 s over aitk's 0.9 s. The CPU workload of the fixture
 * (chroma) is not read. */
#define AITK_REPORT AITK_SOURCE_DIR "/tests/ci/data/aitk-report-flux-gpu.json"

static void test_aitk_step(void **state)
{
    (void)state;
    aitk_str file = AITK_STR_INIT;
    path_in(&file, "torch-flux.json");
    write_file(file.ptr, measured);
    ran r = compare((const char *[]){"--compare", file.ptr, "--report", AITK_REPORT, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, aitk_str_cstr(&r.err));
    printf("%s", aitk_str_cstr(&r.out));
    cJSON *j = load_json(file.ptr);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(j, "training")); /* kept */
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "comparison")); /* no --aitk: no predict */
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "aitk_step");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(a, "device")->valuestring, "NVIDIA H200");
    assert_float_equal(json_num(a, "mfu"), 0.41, 1e-12);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(a, "rows");
    assert_int_equal(cJSON_GetArraySize(rows), 1);
    const cJSON *row = cJSON_GetArrayItem(rows, 0);
    assert_int_equal((long)json_num(row, "resolution"), 1024);
    assert_float_equal(json_num(row, "torch_seconds"), 1.25, 1e-12);
    assert_float_equal(json_num(row, "aitk_seconds"), 0.9, 1e-12);
    assert_float_equal(json_num(row, "speedup"), 1.25 / 0.9, 1e-12);
    assert_non_null(strstr(aitk_str_cstr(&r.out), "1024 px: aitk 0.900 s/step, torch 1.250 s/step: "
                                                  "aitk x1.39 the speed of PyTorch eager"));
    cJSON_Delete(j);
    ran_free(&r);

    /* Reports that do not hold a GPU FLUX step are refused with exit 2. */
    static const struct {
        const char *report, *words;
    } bad[] = {
        {"{\"workloads\": [{\"name\": \"flux1-dev\", \"backend\": \"cpu\"}]}",
         "ran on the CPU backend"},
        {"{\"workloads\": [{\"name\": \"chroma\", \"backend\": \"cuda\"}]}",
         "no flux1-dev workload"},
        {"{\"workloads\": [{\"name\": \"flux1-dev\", \"backend\": \"cuda\", \"status\":"
         " \"completed\", \"configuration\": {\"batch\": 2}}]}",
         "ran batch 2"},
        {"{\"workloads\": [{\"name\": \"flux1-dev\", \"backend\": \"cuda\", \"status\":"
         " \"failed\", \"message\": \"out of memory\"}]}",
         "no timed steps (status 'failed': out of memory)"},
        {"{\"checks\": []}", "no 'workloads' list"},
        /* The measurement checkpointed (a file from before the option says
         * nothing: it did); aitk's step did not. */
        {"{\"workloads\": [{\"name\": \"flux1-dev\", \"backend\": \"cuda\", \"status\":"
         " \"completed\", \"configuration\": {\"batch\": 1, \"gradient_checkpointing\":"
         " false}, \"buckets\": [{\"resolution\": 1024, \"steps\": 3, \"median_s\": 0.7}]}]}",
         "ran without gradient checkpointing, the PyTorch step with"},
    };
    aitk_str report = AITK_STR_INIT;
    path_in(&report, "report.json");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_file(file.ptr, measured);
        write_file(report.ptr, bad[i].report);
        r = compare((const char *[]){"--compare", file.ptr, "--report", report.ptr, NULL});
        if (r.rc != 2 || !strstr(aitk_str_cstr(&r.err), bad[i].words))
            fail_msg("case %zu: exit %d, stderr '%s'", i, r.rc, aitk_str_cstr(&r.err));
        ran_free(&r);
    }
    unlink(report.ptr);
    unlink(file.ptr);
    aitk_str_free(&report);
    aitk_str_free(&file);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    aitk_str p = AITK_STR_INIT;
    static const char *const names[] = {"job.yaml", "job.json", NULL};
    for (size_t i = 0; names[i]; i++) {
        path_in(&p, names[i]);
        unlink(p.ptr);
    }
    aitk_str_free(&p);
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_aitk_step),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
