/* `aitk-validate predict --calibrate report.json`, run as a person runs it.
 *
 * No GPU exists on the machines that run this suite, so no report with GPU
 * measurements can be produced here: the tests write small GPU reports
 * themselves, in the shape the report schema gives micro[] and workloads[]
 * entries (backend "cuda"). Their rates are chosen fractions of the figures
 * the model divides by (the matmul rate for GEMM and attention, the datasheet
 * bandwidth for copies), which the test reads itself from models/gpus.yaml, so each expected
 * efficiency is known by arithmetic done here, never by asking the code under
 * test. The predictions are read back from `predict --json` (a predictions
 * document, not a report: it stays out of AITK_TEST_REPORTS). */
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
#include "common/proc.h"
#include "common/yaml.h"

/* The GPU the fake reports were "measured" on, as NVML names it. */
#define MEASURED "NVIDIA H200"

#include "tests/exe_run.h"

/* ---- figures read from the data files, independently of the code under test ---- */

typedef struct datasheet {
    double bf16_tflops, bandwidth_gbs;
    double matmul_tflops; /* matmul_bf16_tflops's value, or matmul_default_fraction x bf16 */
} datasheet;

static double yaml_number(const aitk_yaml_doc *doc, const aitk_yaml_node *n)
{
    double v = 0;
    assert_int_equal(aitk_yaml_double(doc, n, &v, NULL), AITK_OK);
    return v;
}

/* The models/gpus.yaml row with `alias` among its aliases. */
static datasheet datasheet_of(const char *alias)
{
    aitk_yaml_doc *doc = NULL;
    assert_int_equal(aitk_yaml_load_file(AITK_SOURCE_DIR "/models/gpus.yaml", &doc, NULL), AITK_OK);
    const aitk_yaml_node *gpus = aitk_yaml_get(doc->root, "gpus");
    datasheet d = {0};
    for (size_t i = 0; gpus && i < gpus->count; i++) {
        const aitk_yaml_node *row = gpus->items[i], *aliases = aitk_yaml_get(row, "aliases");
        for (size_t k = 0; aliases && k < aliases->count; k++)
            if (strcmp(aliases->items[k]->text, alias) == 0) {
                d.bf16_tflops = yaml_number(doc, aitk_yaml_get(row, "bf16_tflops"));
                d.bandwidth_gbs = yaml_number(doc, aitk_yaml_get(row, "bandwidth_gbs"));
                const aitk_yaml_node *m = aitk_yaml_get(row, "matmul_bf16_tflops");
                const aitk_yaml_node *f = aitk_yaml_get(aitk_yaml_get(doc->root,
                                                                      "matmul_default_fraction"),
                                                        "value");
                d.matmul_tflops = m ? yaml_number(doc, aitk_yaml_figure(m))
                                    : yaml_number(doc, f) * d.bf16_tflops;
            }
    }
    aitk_yaml_free(doc);
    if (!(d.bf16_tflops > 0 && d.bandwidth_gbs > 0 && d.matmul_tflops > 0))
        fail_msg("models/gpus.yaml has no row with alias '%s'", alias);
    return d;
}

/* models/cost.yaml's default of efficiency.<key>.value. */
static double default_efficiency(const char *key)
{
    aitk_yaml_doc *doc = NULL;
    assert_int_equal(aitk_yaml_load_file(AITK_SOURCE_DIR "/models/cost.yaml", &doc, NULL), AITK_OK);
    const aitk_yaml_node *e = aitk_yaml_get(aitk_yaml_get(doc->root, "efficiency"), key);
    double v = yaml_number(doc, aitk_yaml_get(e, "value"));
    aitk_yaml_free(doc);
    return v;
}

/* ---- writing fake GPU reports ---- */

/* A report with the fields the schema requires, device 0 of the probes
 * being `gpu`; micro[] and workloads[] are added by the test. */
static cJSON *report_new(const char *gpu)
{
    const char *text =
        "{\"schema_version\": \"1.0\","
        " \"tool\": {\"name\": \"aitk-validate\", \"version\": \"0.1.0\","
        " \"git_commit\": \"test\"},"
        " \"created_at\": \"2025-01-01T00:00:00Z\", \"command\": \"aitk-validate --full\","
        " \"level\": \"full\", \"profile\": \"default\", \"strict\": false, \"checks\": [],"
        " \"host\": {},"
        " \"environment\": {\"gpu\": {\"nvml\": {\"loaded\": true, \"devices\": []}}},"
        " \"summary\": {\"counts\": {\"pass\": 0, \"warn\": 0, \"fail\": 0, \"skip\": 0,"
        " \"total\": 0},"
        " \"verdict\": \"pass\", \"exit_code\": 0}, \"micro\": [], \"workloads\": []}";
    cJSON *r = cJSON_Parse(text);
    assert_non_null(r);
    cJSON *devices = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
                                              cJSON_GetObjectItemCaseSensitive(r, "environment"),
                                              "gpu"),
                                          "nvml"),
        "devices");
    cJSON *dev = cJSON_CreateObject();
    cJSON_AddNumberToObject(dev, "index", 0);
    cJSON_AddStringToObject(dev, "name", gpu);
    cJSON_AddItemToArray(devices, dev);
    return r;
}

static void add_micro(cJSON *report, const char *name, const char *category, const char *backend,
                      double value, const char *unit)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "category", category);
    cJSON_AddStringToObject(m, "backend", backend);
    cJSON_AddNumberToObject(m, "value", value);
    cJSON_AddStringToObject(m, "unit", unit);
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(report, "micro"), m);
}

/* A completed workload of `model` with its median step; `resolution` 0
 * leaves out the configuration object. */
static void add_workload(cJSON *report, const char *model, const char *backend, double median_s,
                         long resolution)
{
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "name", model);
    cJSON_AddStringToObject(w, "status", "completed");
    cJSON_AddStringToObject(w, "backend", backend);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(w, "step_time_s"), "median", median_s);
    if (resolution) {
        cJSON *c = cJSON_AddObjectToObject(w, "configuration");
        cJSON_AddStringToObject(c, "size", "full");
        const int buckets[] = {(int)resolution};
        cJSON_AddItemToObject(c, "resolutions", cJSON_CreateIntArray(buckets, 1));
        cJSON_AddNumberToObject(c, "batch", 1);
    }
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(report, "workloads"), w);
}

typedef struct tmpdir {
    char path[64];
    char *files[16];
    size_t n;
} tmpdir;

static void tmp_open(tmpdir *t)
{
    memset(t, 0, sizeof *t);
    strcpy(t->path, "/tmp/aitk-calibrate-XXXXXX");
    assert_non_null(mkdtemp(t->path));
}

/* A path in the folder, removed by tmp_close. */
static const char *tmp_file(tmpdir *t, const char *name)
{
    assert_true(t->n < sizeof t->files / sizeof *t->files);
    aitk_str path = AITK_STR_INIT;
    aitk_str_appendf(&path, "%s/%s", t->path, name);
    t->files[t->n] = aitk_str_steal(&path);
    assert_non_null(t->files[t->n]);
    return t->files[t->n++];
}

static void tmp_close(tmpdir *t)
{
    for (size_t i = 0; i < t->n; i++) {
        unlink(t->files[i]);
        aitk_free(t->files[i]);
    }
    rmdir(t->path);
}

static void write_text(const char *path, const char *text)
{
    assert_int_equal(aitk_file_write_atomic(path, text, strlen(text), NULL), AITK_OK);
}

/* Writes the report and frees it. */
static const char *write_report(tmpdir *t, const char *name, cJSON *report)
{
    const char *path = tmp_file(t, name);
    char *text = cJSON_Print(report);
    write_text(path, text);
    cJSON_free(text);
    cJSON_Delete(report);
    return path;
}

/* ---- reading predict --json ---- */

/* Runs predict with `args` (its --json names `out`, the tmpdir's newest
 * file) and returns the JSON it wrote; the file goes, its name is reused. */
static cJSON *predict_out(tmpdir *t, const char *const *args, const char *out)
{
    ran r = run(args);
    if (r.rc != 0)
        fail_msg("predict exited %d: %s", r.rc, aitk_str_cstr(&r.err));
    ran_free(&r);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(out, 1 << 24, &text, &len, NULL), AITK_OK);
    cJSON *j = cJSON_ParseWithLength(text, len);
    aitk_free(text);
    assert_non_null(j);
    unlink(out);
    aitk_free(t->files[--t->n]); /* the name is reused by the next call */
    return j;
}

static cJSON *predict_json(tmpdir *t, const char *calibrate, const char *gpu, const char *res)
{
    const char *out = tmp_file(t, calibrate ? "cal.json" : "plain.json");
    const char *with[] = {"predict", "--model", "flux1-dev", "--gpu", gpu, "--json", out,
                          "--calibrate", calibrate, res ? "--resolution" : NULL, res, NULL};
    const char *without[] = {"predict", "--model", "flux1-dev", "--gpu", gpu, "--json", out,
                             res ? "--resolution" : NULL, res, NULL};
    return predict_out(t, calibrate ? with : without, out);
}

static const cJSON *at(const cJSON *o, const char *path)
{
    /* "a.b.0.c": keys and array indices. */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *k = strtok(buf, "."); k && o; k = strtok(NULL, "."))
        o = (*k >= '0' && *k <= '9') ? cJSON_GetArrayItem(o, atoi(k))
                                     : cJSON_GetObjectItemCaseSensitive(o, k);
    if (!o)
        fail_msg("no '%s' in the predictions", path);
    return o;
}

static double num_at(const cJSON *o, const char *path)
{
    const cJSON *n = at(o, path);
    if (!cJSON_IsNumber(n))
        fail_msg("'%s' is not a number", path);
    return n->valuedouble;
}

static void assert_close(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= 1e-9 * fmax(1, fabs(want))))
        fail_msg("%s: got %.12g, expected %.12g", what, got, want);
}

/* ---- the tests ---- */

/* Median of each kind, GFLOP/s converted, cpu entries (which would move the
 * median or be refused as 3x the datasheet) left out. */
static void test_efficiencies(void **state)
{
    (void)state;
    const datasheet h = datasheet_of(MEASURED);
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new(MEASURED);
    /* Fractions of the matmul rate, sorted: 0.76 0.78 0.80 0.82 0.84 0.86 (the
     * last in GFLOP/s); the cpu entry at 0.10 would move the median to 0.80. */
    static const double gemm[] = {0.80, 0.84, 0.76, 0.82, 0.78};
    const char *names[] = {"gemm.cuda.bf16.flux1-dev.img_qkv",
                           "gemm.cuda.bf16.flux1-dev.img_mlp_in", "gemm.cuda.bf16.chroma.mlp_in",
                           "gemm.cuda.bf16.omnigen2.ffn_in", "gemm.cuda.bf16.flux1-dev.txt_qkv"};
    for (size_t i = 0; i < 5; i++)
        add_micro(r, names[i], "gemm", "cuda", gemm[i] * h.matmul_tflops, "TFLOP/s");
    add_micro(r, "gemm.cuda.bf16.flux1-dev.proj", "gemm", "cuda", 0.86 * h.matmul_tflops * 1000,
              "GFLOP/s");
    add_micro(r, "gemm.cpu.fp32.flux1-dev.img_qkv", "gemm", "cpu", 0.10 * h.bf16_tflops, "TFLOP/s");
    add_micro(r, "gemm.cpu.fp32.chroma.mlp_in", "gemm", "cpu", 3.0 * h.bf16_tflops, "TFLOP/s");
    add_micro(r, "attention.cuda.bf16.flux1-dev", "attention", "cuda", 0.40 * h.matmul_tflops,
              "TFLOP/s");
    add_micro(r, "attention.cuda.bf16.omnigen2", "attention", "cuda", 0.44 * h.matmul_tflops,
              "TFLOP/s");
    add_micro(r, "attention_backward.cuda.bf16.flux1-dev", "attention", "cuda", 0.30 * h.matmul_tflops,
              "TFLOP/s");
    add_micro(r, "attention.cpu.fp32.flux1-dev", "attention", "cpu", 5.0 * h.bf16_tflops,
              "TFLOP/s");
    add_micro(r, "memcpy.device", "memcpy", "cuda", 0.85 * h.bandwidth_gbs, "GB/s");
    add_micro(r, "memcpy.host", "memcpy", "cpu", 0.01 * h.bandwidth_gbs, "GB/s");
    const char *report = write_report(&t, "gpu.json", r);

    cJSON *j = predict_json(&t, report, "RTX 4090", NULL);
    assert_close(num_at(j, "efficiencies.gemm"), (0.80 + 0.82) / 2, "gemm (median of six)");
    assert_close(num_at(j, "efficiencies.attention_fwd"), (0.40 + 0.44) / 2, "attention_fwd");
    assert_close(num_at(j, "efficiencies.attention_bwd"), 0.30, "attention_bwd");
    assert_close(num_at(j, "efficiencies.bandwidth"), 0.85, "bandwidth");
    /* Measured on an H200 (9.0, not in cost.yaml's attention_by_cc), the
     * attention shares replace the defaults; the RTX 4090's own (8.9) stay
     * what cost.yaml says (0.94 and 0.69). */
    const cJSON *ada = cJSON_GetObjectItemCaseSensitive(at(j, "efficiencies.attention_by_cc"), "8.9");
    assert_non_null(ada);
    assert_close(cJSON_GetNumberValue(cJSON_GetObjectItem(ada, "fwd")), 0.94, "attention_fwd on 8.9");
    assert_close(cJSON_GetNumberValue(cJSON_GetObjectItem(ada, "bwd")), 0.69, "attention_bwd on 8.9");
    assert_int_equal(cJSON_GetArraySize(at(j, "calibration.measured")), 4);
    assert_int_equal(cJSON_GetArraySize(at(j, "calibration.defaults")), 0);
    assert_non_null(strstr(at(j, "efficiencies.sources.gemm")->valuestring, "median of 6"));
    assert_string_equal(at(j, "calibration.gpu")->valuestring, "H200 SXM");
    cJSON_Delete(j);

    /* The text says what was measured, from what, above the table. */
    const char *args[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                          "--calibrate", report, NULL};
    ran x = run(args);
    assert_int_equal(x.rc, 0);
    const char *out = aitk_str_cstr(&x.out);
    char want[256];
    snprintf(want, sizeof want, "gemm 0.81 measured (was %.2f default) from 6 gemm.cuda.bf16.* "
             "entries on " MEASURED ", %s", default_efficiency("gemm"), report);
    if (!strstr(out, want))
        fail_msg("'%s' not in:\n%s", want, out);
    assert_non_null(strstr(out, "attention_fwd 0.42 measured"));
    assert_non_null(strstr(out, "from 2 attention.cuda.bf16.* entries"));
    assert_non_null(strstr(out, "carry over to other GPUs of similar class"));
    assert_true(strstr(out, "Calibrated") < strstr(out, "flux1-dev —"));
    ran_free(&x);
    /* --explain shows the values the times were computed with. */
    const char *explain[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                             "--calibrate", report, "--explain", NULL};
    x = run(explain);
    assert_int_equal(x.rc, 0);
    assert_non_null(strstr(aitk_str_cstr(&x.out), "gemm 0.810 (measured), attention_fwd 0.420 "
                                                  "(measured), attention_bwd 0.300 (measured), "
                                                  "bandwidth 0.850 (measured)"));
    ran_free(&x);
    tmp_close(&t);
}

/* Measured on an RTX 4090 (8.9, listed in attention_by_cc): the attention
 * shares replace that capability's alone. The 4090's attention time then
 * follows the measured shares (0.60 and 0.50 of its matmul rate, from the
 * figures written here); an RTX 3090 (8.6) and an H200 (the defaults) keep
 * theirs, so their attention time does not move; the text says the
 * measured value, and the JSON's sources where it went. */
static void test_attention_calibrated_by_cc(void **state)
{
    (void)state;
    const datasheet h = datasheet_of("NVIDIA GeForce RTX 4090");
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new("NVIDIA GeForce RTX 4090");
    add_micro(r, "attention.cuda.bf16.flux1-dev", "attention", "cuda", 0.60 * h.matmul_tflops,
              "TFLOP/s");
    add_micro(r, "attention_backward.cuda.bf16.flux1-dev", "attention", "cuda",
              0.50 * h.matmul_tflops, "TFLOP/s");
    const char *report = write_report(&t, "ada.json", r);
    static const char key[] = "predictions.0.gpus.0.seconds_at_largest_resolution.attention";
    static const char *const others[] = {"RTX 3090", "H200 SXM"};
    for (size_t g = 0; g < 2; g++) {
        cJSON *plain = predict_json(&t, NULL, others[g], NULL);
        cJSON *cal = predict_json(&t, report, others[g], NULL);
        assert_close(num_at(cal, key), num_at(plain, key), "attention elsewhere unchanged");
        cJSON_Delete(plain);
        cJSON_Delete(cal);
    }
    cJSON *cal = predict_json(&t, report, "RTX 4090", NULL);
    const cJSON *ada = cJSON_GetObjectItemCaseSensitive(at(cal, "efficiencies.attention_by_cc"),
                                                        "8.9");
    assert_close(cJSON_GetNumberValue(cJSON_GetObjectItem(ada, "fwd")), 0.60, "8.9 forward");
    assert_close(cJSON_GetNumberValue(cJSON_GetObjectItem(ada, "bwd")), 0.50, "8.9 backward");
    assert_close(num_at(cal, "efficiencies.attention_fwd"), default_efficiency("attention_fwd"),
                 "default kept");
    assert_non_null(strstr(at(cal, "efficiencies.sources.attention_fwd")->valuestring,
                           "replaced attention_by_cc 8.9's"));
    /* The prediction's own record of the rate its attention time used. */
    assert_close(num_at(cal, "predictions.0.gpus.0.attention_shares.fwd"), 0.60, "row forward");
    assert_close(num_at(cal, "predictions.0.gpus.0.attention_shares.bwd"), 0.50, "row backward");
    cJSON_Delete(cal);
    const char *explain[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                             "--calibrate", report, "--explain", NULL};
    ran x = run(explain);
    assert_int_equal(x.rc, 0);
    assert_non_null(strstr(aitk_str_cstr(&x.out), "attention_fwd 0.600 (measured), "
                                                  "attention_bwd 0.500 (measured)"));
    assert_non_null(strstr(aitk_str_cstr(&x.out), "8.9 0.60/0.50"));
    ran_free(&x);
    tmp_close(&t);
}

/* The lent H200's own --full report (bench/reference-runs, redacted):
 * calibration reads its attention figures, which bench names
 * attention.cuda.bf16.<model> and attention_backward.cuda.bf16.<model>.
 * It ignored all four while it looked for names ending in .fwd or .bwd,
 * which no report ever had. */
static void test_real_h200_report(void **state)
{
    (void)state;
    const char *args[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090", "--calibrate",
                          AITK_SOURCE_DIR "/bench/reference-runs/2026-12-04-h200-second-gpu-check/"
                                          "call1-report.json",
                          NULL};
    ran x = run(args);
    assert_int_equal(x.rc, 0);
    const char *out = aitk_str_cstr(&x.out);
    static const char *const want[] = {
        "from 2 attention.cuda.bf16.* entries on NVIDIA H200",
        "from 2 attention_backward.cuda.bf16.* entries on NVIDIA H200",
        "from 4 gemm.cuda.bf16.* entries on NVIDIA H200"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(out, want[i]))
            fail_msg("'%s' not in:\n%s", want[i], out);
    assert_null(strstr(out, "ignored: attention"));
    ran_free(&x);
}

/* Only GEMMs measured: the other efficiencies keep cost.yaml's defaults and
 * say so; the GEMM time changes by default/measured and nothing else does. */
static void test_gemm_only(void **state)
{
    (void)state;
    const datasheet h = datasheet_of(MEASURED);
    const double measured = 0.56, def = default_efficiency("gemm");
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new(MEASURED);
    add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", measured * h.matmul_tflops,
              "TFLOP/s");
    const char *report = write_report(&t, "gemm.json", r);
    static const char *const gpus[] = {"RTX 4090", "H200 SXM"};
    for (size_t g = 0; g < 2; g++) {
        cJSON *plain = predict_json(&t, NULL, gpus[g], NULL);
        cJSON *cal = predict_json(&t, report, gpus[g], NULL);
        assert_close(num_at(cal, "efficiencies.gemm"), measured, "gemm");
        assert_close(num_at(cal, "efficiencies.attention_fwd"), default_efficiency("attention_fwd"),
                     "attention_fwd kept");
        assert_close(num_at(cal, "efficiencies.bandwidth"), default_efficiency("bandwidth"),
                     "bandwidth kept");
        assert_non_null(strstr(at(cal, "efficiencies.sources.attention_bwd")->valuestring,
                               "default"));
        const char *p = "predictions.0.gpus.0.";
        char key[96];
        snprintf(key, sizeof key, "%sseconds_at_largest_resolution.gemm", p);
        const double gemm0 = num_at(plain, key), gemm1 = num_at(cal, key);
        assert_close(gemm1, gemm0 * def / measured, "GEMM seconds");
        snprintf(key, sizeof key, "%sseconds_at_largest_resolution.attention", p);
        assert_close(num_at(cal, key), num_at(plain, key), "attention seconds unchanged");
        snprintf(key, sizeof key, "%sstep_seconds", p);
        /* One resolution: the step is the sum of its terms. */
        assert_close(num_at(cal, key), num_at(plain, key) + gemm0 * (def / measured - 1),
                     "step seconds");
        cJSON_Delete(plain);
        cJSON_Delete(cal);
    }
    tmp_close(&t);
}

/* A completed cuda workload: on the GPU and configuration it ran, the
 * calibrated prediction is the measurement; on any other GPU the step is
 * multiplied by measured/predicted. A cpu workload changes nothing. */
static void test_step_scale(void **state)
{
    (void)state;
    const datasheet h = datasheet_of(MEASURED);
    const double median_s = 2.0;
    tmpdir t;
    tmp_open(&t);
    cJSON *a = report_new(MEASURED);
    add_micro(a, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", 0.75 * h.bf16_tflops,
              "TFLOP/s");
    add_workload(a, "flux1-dev", "cpu", 999.0, 768);
    cJSON *b = cJSON_Duplicate(a, 1);
    add_workload(b, "flux1-dev", "cuda", median_s, 768);
    const char *ra = write_report(&t, "micro-only.json", a);
    const char *rb = write_report(&t, "with-workload.json", b);

    /* Report A's prediction of the workload's own setup: 768 px on the H200. */
    cJSON *ja = predict_json(&t, ra, "H200 SXM", "768");
    const double predicted = num_at(ja, "predictions.0.gpus.0.step_seconds");
    assert_null(cJSON_GetObjectItemCaseSensitive(at(ja, "predictions.0"), "step_scale"));
    assert_int_equal(cJSON_GetArraySize(at(ja, "calibration.step_scales")), 0);
    cJSON_Delete(ja);
    cJSON *jb = predict_json(&t, rb, "H200 SXM", "768");
    assert_close(num_at(jb, "predictions.0.gpus.0.step_seconds"), median_s, "measured GPU");
    assert_close(num_at(jb, "calibration.step_scales.0.scale"), median_s / predicted, "scale");
    assert_close(num_at(jb, "predictions.0.step_scale.value"), median_s / predicted, "applied");
    cJSON_Delete(jb);
    /* Another GPU, another resolution: the same factor. */
    cJSON *a4090 = predict_json(&t, ra, "RTX 4090", NULL);
    cJSON *b4090 = predict_json(&t, rb, "RTX 4090", NULL);
    assert_close(num_at(b4090, "predictions.0.gpus.0.step_seconds"),
                 num_at(a4090, "predictions.0.gpus.0.step_seconds") * median_s / predicted,
                 "RTX 4090 step");
    cJSON_Delete(a4090);
    cJSON_Delete(b4090);
    tmp_close(&t);
}

/* Chroma's step at 1024 px on the H200: `calibrate` (a report, or NULL) and
 * `mask` (an --attention-mask shape, or NULL for the trainer's). */
static double chroma_step(tmpdir *t, const char *calibrate, const char *mask)
{
    const char *out = tmp_file(t, "chroma.json");
    const char *args[16] = {"predict", "--model", "chroma", "--gpu", "H200 SXM", "--resolution",
                            "1024", "--json", out};
    size_t n = 9;
    if (calibrate) {
        args[n++] = "--calibrate";
        args[n++] = calibrate;
    }
    if (mask) {
        args[n++] = "--attention-mask";
        args[n++] = mask;
    }
    cJSON *j = predict_out(t, args, out);
    const double s = num_at(j, "predictions.0.gpus.0.step_seconds");
    cJSON_Delete(j);
    return s;
}

/* ai-toolkit masks Chroma's attention (models/trainers.yaml attention_mask);
 * this project's GPU step does not. A measured Chroma step scales the
 * unmasked prediction, so the calibrated ai-toolkit job keeps the mask's
 * price on top of the measurement: measured x masked / unmasked. */
static void test_step_scale_unmasked(void **state)
{
    (void)state;
    const double median_s = 3.0;
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new(MEASURED);
    add_workload(r, "chroma", "cuda", median_s, 1024);
    const char *report = write_report(&t, "chroma-report.json", r);
    const double masked = chroma_step(&t, NULL, NULL), unmasked = chroma_step(&t, NULL, "none");
    assert_true(masked > unmasked);
    assert_close(chroma_step(&t, report, NULL), median_s * masked / unmasked, "masked job");
    assert_close(chroma_step(&t, report, "none"), median_s, "the measured, unmasked step");
    tmp_close(&t);
}

/* Without a configuration the workload is taken at the model's defaults,
 * and the output says so. */
static void test_step_scale_defaults(void **state)
{
    (void)state;
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new(MEASURED);
    add_workload(r, "flux1-dev", "cuda", 1.0, 0);
    const char *report = write_report(&t, "defaults.json", r);
    cJSON *j = predict_json(&t, report, "H200 SXM", NULL);
    assert_close(num_at(j, "predictions.0.gpus.0.step_seconds"), 1.0, "default setup");
    assert_non_null(strstr(at(j, "calibration.step_scales.0.configuration")->valuestring,
                           "does not record"));
    assert_int_equal(cJSON_GetArraySize(at(j, "calibration.measured")), 0);
    cJSON_Delete(j);
    tmp_close(&t);
}

/* Exit 2, nothing on stdout, one line on stderr containing `want`. */
static void expect_refused(const char *report, const char *want)
{
    const char *args[] = {"predict", "--model", "flux1-dev", "--calibrate", report, NULL};
    ran r = run(args);
    const char *err = aitk_str_cstr(&r.err);
    const char *nl = strchr(err, '\n');
    if (r.rc != 2 || r.out.len != 0 || !nl || nl[1] != '\0' || !strstr(err, want) ||
        !strstr(err, report))
        fail_msg("%s: exit %d, stdout %zu bytes, stderr '%s' (wanted one line with '%s')",
                 report, r.rc, r.out.len, err, want);
    ran_free(&r);
}

/* A report the real binary wrote here, without a GPU: refused plainly. */
static void test_report_without_gpu(void **state)
{
    (void)state;
    tmpdir t;
    tmp_open(&t);
    const char *report = tmp_file(&t, "r.json");
    const char *args[] = {"--quick", "--json", report, NULL};
    ran r = run(args);
    if (r.rc != 0 && r.rc != 1)
        fail_msg("aitk-validate --quick exited %d: %s", r.rc, aitk_str_cstr(&r.err));
    ran_free(&r);
    expect_refused(report, "has no GPU measurements (no micro[] entry and no completed workload "
                           "with backend \"cuda\")");
    /* CPU measurements are no GPU measurements either. */
    cJSON *c = report_new(MEASURED);
    add_micro(c, "gemm.cpu.fp32.flux1-dev.img_qkv", "gemm", "cpu", 100, "GFLOP/s");
    add_micro(c, "memcpy.host", "memcpy", "cpu", 10, "GB/s");
    add_workload(c, "flux1-dev", "cpu", 0.5, 256);
    expect_refused(write_report(&t, "cpu.json", c), "no GPU measurements");
    tmp_close(&t);
}

static void test_bad_reports(void **state)
{
    (void)state;
    const datasheet h = datasheet_of(MEASURED);
    tmpdir t;
    tmp_open(&t);
    expect_refused(tmp_file(&t, "missing.json"), "No such file");

    /* Truncated: the array opened at line 3, column 12 is never closed, and
     * the parser names that bracket. */
    const char *trunc = tmp_file(&t, "truncated.json");
    write_text(trunc, "{\n  \"schema_version\": \"1.0\",\n  \"micro\": [");
    char want[160];
    snprintf(want, sizeof want, "%s:3:12: not valid JSON", trunc);
    expect_refused(trunc, want);
    /* A bad literal inside the file: line 3, column 8 is the 't' of "tru". */
    const char *bad = tmp_file(&t, "bad-literal.json");
    write_text(bad, "{\n  \"a\": 1,\n  \"b\": tru\n}\n");
    snprintf(want, sizeof want, "%s:3:8: not valid JSON", bad);
    expect_refused(bad, want);

    /* A list that is no list is malformed, not "nothing measured". */
    cJSON *odd = report_new(MEASURED);
    cJSON_ReplaceItemInObjectCaseSensitive(odd, "micro", cJSON_CreateString("x"));
    expect_refused(write_report(&t, "micro-text.json", odd), "micro is not a list");
    odd = report_new(MEASURED);
    cJSON_ReplaceItemInObjectCaseSensitive(odd, "workloads", cJSON_CreateObject());
    expect_refused(write_report(&t, "workloads-map.json", odd), "workloads is not a list");

    const char *other = tmp_file(&t, "other.json");
    write_text(other, "{\"predictions\": [], \"schema\": 1}");
    expect_refused(other, "not an aitk-validate report");

    cJSON *r = report_new(MEASURED);
    add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", 0.7 * h.bf16_tflops,
              "TFLOP/s");
    add_micro(r, "gemm.cuda.bf16.chroma.mlp_in", "gemm", "cuda", 3.0 * h.bf16_tflops, "TFLOP/s");
    expect_refused(write_report(&t, "too-fast.json", r), "gemm.cuda.bf16.chroma.mlp_in measured");

    r = report_new(MEASURED);
    add_micro(r, "memcpy.device", "memcpy", "cuda", -5, "GB/s");
    expect_refused(write_report(&t, "negative.json", r), "memcpy.device");

    r = report_new("NVIDIA Voodoo5 6000");
    add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", 100, "TFLOP/s");
    expect_refused(write_report(&t, "unknown-gpu.json", r),
                   "'NVIDIA Voodoo5 6000' is not in models/gpus.yaml");
    tmp_close(&t);
}

/* Sets the memory the NVML probe saw on device 0 (bytes). */
static void set_probed_memory(cJSON *report, double bytes)
{
    cJSON *dev = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(report, "environment"), "gpu"),
                "nvml"),
            "devices"),
        0);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(dev, "memory"), "total_bytes", bytes);
}

/* NVML gives the 16 and the 8 GB RTX 4060 Ti one name: a report of one is
 * told by the memory its probe saw, and its GEMM rate is taken over the
 * 16 GB card's matmul rate; an 8 GB card's report is refused (the database
 * lists no 8 GB card), as is one whose memory nobody recorded. */
static void test_shared_name_told_by_memory(void **state)
{
    (void)state;
    const char *nvml = "NVIDIA GeForce RTX 4060 Ti";
    const datasheet ti16 = datasheet_of("4060 Ti 16GB");
    const double measured = 0.6, gib = 1073741824.0;
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new(nvml);
    set_probed_memory(r, 16 * gib);
    add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", measured * ti16.matmul_tflops,
              "TFLOP/s");
    const char *report = write_report(&t, "ti16.json", r);
    cJSON *cal = predict_json(&t, report, "RTX 4090", NULL);
    assert_close(num_at(cal, "efficiencies.gemm"), measured, "gemm over the 16 GB card's rate");
    assert_string_equal(at(cal, "calibration.gpu")->valuestring, "RTX 4060 Ti 16GB");
    assert_string_equal(at(cal, "calibration.device")->valuestring, nvml);
    assert_non_null(strstr(at(cal, "calibration.device_choice")->valuestring,
                           "told from the other cards of that name by its 16.0 GiB"));
    cJSON_Delete(cal);

    r = report_new(nvml);
    set_probed_memory(r, 8 * gib);
    add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", 20, "TFLOP/s");
    expect_refused(write_report(&t, "ti8.json", r),
                   "the measured GPU: 'NVIDIA GeForce RTX 4060 Ti' with 8.0 GiB is none of the "
                   "cards of that name listed: 'RTX 4060 Ti 16GB' (16 GB), so its efficiencies "
                   "cannot be computed");
    r = report_new(nvml);
    add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", 20, "TFLOP/s");
    expect_refused(write_report(&t, "ti-unknown.json", r),
                   "the measured GPU 'NVIDIA GeForce RTX 4060 Ti' is the name NVML gives "
                   "cards of more than one memory size, and the report records no memory size");
    tmp_close(&t);
}

/* 1.25x the datasheet is still accepted (boost clocks); just above is not. */
static void test_boost_limit(void **state)
{
    (void)state;
    const datasheet h = datasheet_of(MEASURED);
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new(MEASURED);
    add_micro(r, "memcpy.device", "memcpy", "cuda", 1.25 * h.bandwidth_gbs, "GB/s");
    cJSON *j = predict_json(&t, write_report(&t, "boost.json", r), "H200 SXM", NULL);
    assert_close(num_at(j, "efficiencies.bandwidth"), 1.25, "bandwidth at the limit");
    cJSON_Delete(j);
    r = report_new(MEASURED);
    add_micro(r, "memcpy.device", "memcpy", "cuda", 1.26 * h.bandwidth_gbs, "GB/s");
    expect_refused(write_report(&t, "over.json", r), "memcpy.device measured");
    /* An absurd value is named in a few digits, not 300. */
    r = report_new(MEASURED);
    add_micro(r, "memcpy.device", "memcpy", "cuda", 1e308, "GB/s");
    const char *absurd = write_report(&t, "absurd.json", r);
    expect_refused(absurd, "1e+308 GB/s");
    const char *args[] = {"predict", "--model", "flux1-dev", "--calibrate", absurd, NULL};
    ran rr = run(args);
    if (rr.err.len > 600)
        fail_msg("a %zu-byte message: %s", rr.err.len, aitk_str_cstr(&rr.err));
    ran_free(&rr);
    tmp_close(&t);
}

/* A GEMM faster than the large-matmul rate listed for its GPU: within the
 * datasheet bound, but the listed rate is the default share (L40: 0.80 of
 * 181.1), so it is that row that is wrong; taken as an efficiency of about
 * 1.38 it would put every GPU past its datasheet. Refused, naming the rate.
 * At the listed rate it is an efficiency of exactly 1. */
static void test_gemm_above_listed_matmul(void **state)
{
    (void)state;
    const datasheet l40 = datasheet_of("NVIDIA L40");
    const double listed = l40.matmul_tflops; /* the default share: L40 lists none */
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new("NVIDIA L40");
    add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", 200, "TFLOP/s");
    assert_true(200 > listed && 200 < 1.25 * l40.bf16_tflops); /* not the datasheet bound */
    char says[96];
    snprintf(says, sizeof says, "above the %.4g TFLOP/s of a large matmul", listed);
    expect_refused(write_report(&t, "fast.json", r), says);
    r = report_new("NVIDIA L40");
    add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", listed, "TFLOP/s");
    cJSON *j = predict_json(&t, write_report(&t, "at.json", r), "L40", NULL);
    assert_close(num_at(j, "efficiencies.gemm"), 1.0, "GEMM at the listed matmul rate");
    cJSON_Delete(j);
    tmp_close(&t);
}

/* A completed GPU workload whose step time is not a number is said to be
 * left out, beside the measurements that were used. */
static void test_unreadable_workload_said(void **state)
{
    (void)state;
    const datasheet h = datasheet_of(MEASURED);
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new(MEASURED);
    add_micro(r, "memcpy.device", "memcpy", "cuda", 0.9 * h.bandwidth_gbs, "GB/s");
    add_workload(r, "chroma", "cuda", 1.0, 1024);
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "workloads"), 0);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(w, "step_time_s"), "median",
                              cJSON_CreateString("fast"));
    cJSON *j = predict_json(&t, write_report(&t, "fast.json", r), "H200 SXM", NULL);
    const cJSON *cal = cJSON_GetObjectItemCaseSensitive(j, "calibration");
    const cJSON *ignored = cJSON_GetObjectItemCaseSensitive(cal, "ignored");
    if (!cJSON_IsString(ignored) || !strstr(ignored->valuestring, "workload chroma (step_time_s"))
        fail_msg("calibration.ignored should name the workload: %s",
                 cJSON_IsString(ignored) ? ignored->valuestring : "(absent)");
    cJSON_Delete(j);
    tmp_close(&t);
}

/* The other end: a rate far below the datasheet, a non-finite one, or a
 * measured step the model misses by more than 50x is refused, not turned
 * into "inf" or 300-digit predictions. */
static void test_implausible_measurements(void **state)
{
    (void)state;
    const datasheet h = datasheet_of(MEASURED);
    tmpdir t;
    tmp_open(&t);
    cJSON *r = report_new(MEASURED);
    add_micro(r, "memcpy.device", "memcpy", "cuda", 0.011 * h.bandwidth_gbs, "GB/s");
    cJSON *j = predict_json(&t, write_report(&t, "slow.json", r), "H200 SXM", NULL);
    assert_close(num_at(j, "efficiencies.bandwidth"), 0.011, "bandwidth just above the floor");
    cJSON_Delete(j);
    r = report_new(MEASURED);
    add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", 1e-320, "TFLOP/s");
    expect_refused(write_report(&t, "denormal.json", r), "did not measure this GPU");
    r = report_new(MEASURED);
    add_micro(r, "memcpy.device", "memcpy", "cuda", 0.009 * h.bandwidth_gbs, "GB/s");
    expect_refused(write_report(&t, "floor.json", r), "did not measure this GPU");

    static const double medians[] = {1e300, 1e-9};
    for (size_t i = 0; i < 2; i++) {
        r = report_new(MEASURED);
        add_micro(r, "gemm.cuda.bf16.flux1-dev.img_qkv", "gemm", "cuda", 0.75 * h.bf16_tflops,
                  "TFLOP/s");
        add_workload(r, "flux1-dev", "cuda", medians[i], 768);
        expect_refused(write_report(&t, i ? "tiny-step.json" : "huge-step.json", r),
                       "is not the job the model predicts");
    }
    tmp_close(&t);
}

int main(void)
{
    unsetenv("AITK_DATA_DIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_efficiencies),
        cmocka_unit_test(test_attention_calibrated_by_cc),
        cmocka_unit_test(test_gemm_only),
        cmocka_unit_test(test_real_h200_report),
        cmocka_unit_test(test_step_scale),     cmocka_unit_test(test_step_scale_defaults),
        cmocka_unit_test(test_step_scale_unmasked),
        cmocka_unit_test(test_report_without_gpu), cmocka_unit_test(test_bad_reports),
        cmocka_unit_test(test_boost_limit), cmocka_unit_test(test_gemm_above_listed_matmul),
        cmocka_unit_test(test_unreadable_workload_said),
        cmocka_unit_test(test_implausible_measurements),
        cmocka_unit_test(test_shared_name_told_by_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
