/* The hardware's bound on a step (aitk_cost_floor_seconds) and what
 * `predict --reported` says of reported steps against it: the rates it
 * takes are the card's own figures from models/gpus.yaml, written out here,
 * and the rows of the text check are made by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "models/reported.h"

typedef struct fixture {
    aitk_model_spec *spec;
    aitk_cost_params *params;
    aitk_gpudb *db;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    aitk_str err = AITK_STR_INIT;
    if (!f || aitk_model_spec_load("flux1-dev", false, &f->spec, &err) ||
        aitk_cost_params_load(&f->params, &err) || aitk_gpudb_load(&f->db, &err)) {
        fprintf(stderr, "%s\n", aitk_str_cstr(&err));
        aitk_str_free(&err);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    aitk_model_spec_free(f->spec);
    aitk_cost_params_free(f->params);
    aitk_gpudb_free(f->db);
    free(f);
    return 0;
}

static const aitk_gpu_spec *gpu(const fixture *f, const char *name)
{
    const aitk_gpu_spec *g = NULL;
    if (aitk_gpudb_find(f->db, name, &g, NULL))
        fail_msg("no %s in the GPU database", name);
    return g;
}

static double all_flops(const aitk_step_work *wk)
{
    double sum = 0;
    for (int i = 0; i < AITK_WORK_FLOP_TERMS; i++)
        sum += wk->flops[i];
    return sum;
}

/* FLUX.1-dev at 1024 px with a bf16 base and its text embeddings cached
 * (no text encoder to expand either), and the work of its step. */
static void bf16_job_1024(const fixture *f, aitk_workload *w, aitk_step_work *wk)
{
    aitk_workload_defaults(w, f->spec);
    aitk_workload_set_resolution(w, 1024);
    w->base_dtype = AITK_WEIGHT_BF16;
    w->cache_text = true;
    assert_int_equal(aitk_cost_work(w, f->params, 1024, wk), AITK_OK);
}

/* The bound takes the faster of the measured and the datasheet matmul rate:
 * on an RTX A6000 the datasheet's 154.8 TFLOP/s (measured 123.34), on an
 * RTX 3090 the measured 76.58 (datasheet 71). A bf16 base with its text
 * embeddings cached moves no dequant bytes, so the bound is the FLOPs over
 * that rate alone. */
static void test_floor_rate(void **state)
{
    const fixture *f = *state;
    aitk_workload w;
    aitk_step_work wk;
    bf16_job_1024(f, &w, &wk);
    assert_true(wk.bytes[AITK_BYTES_DEQUANT] == 0);
    const double a6000 = aitk_cost_floor_seconds(&w, f->params, gpu(f, "RTX A6000"));
    const double r3090 = aitk_cost_floor_seconds(&w, f->params, gpu(f, "RTX 3090"));
    assert_true(fabs(a6000 - all_flops(&wk) / 154.8e12) < 1e-9 * a6000);
    assert_true(fabs(r3090 - all_flops(&wk) / 76.58e12) < 1e-9 * r3090);
}

/* A job in fp16 on a card with an fp16 rate of its own: the T4's bound is
 * the FLOPs over its datasheet fp16 65 TFLOP/s (measured 42.18), in bf16
 * over its bf16 ceiling, the FP32 8.1 (measured 2.25); a card without such
 * a rate keeps its bf16 bound in fp16. */
static void test_floor_fp16(void **state)
{
    const fixture *f = *state;
    aitk_workload w;
    aitk_step_work wk;
    bf16_job_1024(f, &w, &wk);
    const aitk_gpu_spec *t4 = gpu(f, "T4"), *a6000 = gpu(f, "RTX A6000");
    const double bf16 = aitk_cost_floor_seconds(&w, f->params, t4);
    const double a6000_bf16 = aitk_cost_floor_seconds(&w, f->params, a6000);
    w.fp16 = true;
    const double fp16 = aitk_cost_floor_seconds(&w, f->params, t4);
    assert_true(fabs(bf16 - all_flops(&wk) / 8.1e12) < 1e-9 * bf16);
    assert_true(fabs(fp16 - all_flops(&wk) / 65e12) < 1e-9 * fp16);
    assert_true(aitk_cost_floor_seconds(&w, f->params, a6000) == a6000_bf16);
}

/* A quantized base adds its expansion at the datasheet bandwidth (the A40's
 * 696 GB/s), and buckets are averaged as the prediction averages them. */
static void test_floor_dequant_and_buckets(void **state)
{
    const fixture *f = *state;
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    assert_int_equal(w.base_dtype, AITK_WEIGHT_FP8);
    const aitk_gpu_spec *a40 = gpu(f, "A40");
    double want = 0;
    for (size_t i = 0; i < w.n_resolutions; i++) {
        aitk_step_work wk;
        assert_int_equal(aitk_cost_work(&w, f->params, w.resolutions[i], &wk), AITK_OK);
        assert_true(wk.bytes[AITK_BYTES_DEQUANT] > 0);
        /* The A40: measured 122.29 TFLOP/s, datasheet 149.7. */
        want += all_flops(&wk) / 149.7e12 + wk.bytes[AITK_BYTES_DEQUANT] / 696e9;
    }
    want /= (double)w.n_resolutions;
    const double got = aitk_cost_floor_seconds(&w, f->params, a40);
    if (fabs(got - want) > 1e-9 * want)
        fail_msg("floor %.6g s, expected %.6g s", got, want);
}

/* No efficiency of models/cost.yaml is above 1, so no prediction can be
 * faster than the bound: checked for the three models' example jobs on every
 * GPU of the database. A card without rates has no bound (0). */
static void test_floor_below_every_prediction(void **state)
{
    const fixture *f = *state;
    static const char *const models[] = {"flux1-dev", "chroma", "omnigen2"};
    for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
        aitk_model_spec *spec = NULL;
        assert_int_equal(aitk_model_spec_load(models[m], false, &spec, NULL), AITK_OK);
        aitk_workload w;
        aitk_workload_defaults(&w, spec);
        /* In bf16 and in fp16, which takes other rates on some cards. */
        for (int fp16 = 0; fp16 < 2; fp16++) {
            w.fp16 = fp16;
            for (size_t i = 0; i < f->db->count; i++) {
                const aitk_gpu_spec *g = &f->db->gpus[i];
                aitk_prediction p;
                assert_int_equal(aitk_cost_predict(&w, f->params, g, &p, NULL), AITK_OK);
                const double bound = aitk_cost_floor_seconds(&w, f->params, g);
                if (!(bound > 0 && bound < p.step_s))
                    fail_msg("%s on %s%s: bound %.4g s, predicted %.4g s", models[m], g->name,
                             fp16 ? " in fp16" : "", bound, p.step_s);
            }
        }
        aitk_model_spec_free(spec);
    }
    aitk_gpu_spec bare = {.name = "bare"};
    aitk_workload w;
    aitk_workload_defaults(&w, f->spec);
    assert_true(aitk_cost_floor_seconds(&w, f->params, &bare) == 0);
}

/* The text of `predict --reported` on three hand-made training rows: reported
 * 2, 1 and 4 s against bounds of 1, 1.5 and 1 s, so shares 0.5, 1.5 and
 * 0.25; the second is below its bound and named with both figures. */
static void test_floor_text(void **state)
{
    const fixture *f = *state;
    const aitk_gpu_spec *g = gpu(f, "RTX 4090");
    static const struct {
        const char *id, *source;
        double seconds, bound;
    } data[] = {{"row-a", "A: one", 2, 1}, {"row-b", "B: two", 1, 1.5}, {"row-c", "C: three", 4, 1}};
    enum { N = sizeof data / sizeof *data };
    aitk_reported_speed speeds[N];
    aitk_reported_row rows[N];
    for (size_t i = 0; i < N; i++) {
        speeds[i] = (aitk_reported_speed){.id = data[i].id, .source = data[i].source,
                                          .trainer = "t", .model_id = "flux1-dev", .assumed = "",
                                          .gpu = g, .seconds_per_step = data[i].seconds,
                                          .peak_gb = -1};
        rows[i] = (aitk_reported_row){.report = &speeds[i], .ratio = 1 / data[i].seconds,
                                      .floor_s = data[i].bound};
        aitk_workload_defaults(&rows[i].workload, f->spec);
        rows[i].workload.spec = NULL;
        rows[i].pred.step_s = 1;
    }
    /* tmpfile, not open_memstream: the Windows build runs this test too. */
    FILE *out = tmpfile();
    assert_non_null(out);
    assert_int_equal(aitk_reported_print_text(out, rows, N), AITK_OK);
    const long len = ftell(out);
    assert_true(len > 0);
    char *text = malloc((size_t)len + 1);
    assert_non_null(text);
    rewind(out);
    assert_int_equal(fread(text, 1, (size_t)len, out), (size_t)len);
    text[len] = '\0';
    fclose(out);
    const char *want[] = {"is 0.25-1.50 of the reported\n  step (highest: row-b).",
                          "1 reported step is shorter than its setup allows (so, most likely, "
                          "not the setup assumed): row-b (1.00 s, bound 1.50 s)\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(text, want[i]))
            fail_msg("no '%s' in:\n%s", want[i], text);
    assert_null(strstr(text, "row-a (2.00 s"));
    assert_null(strstr(text, "row-c (4.00 s"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floor_rate),
        cmocka_unit_test(test_floor_fp16),
        cmocka_unit_test(test_floor_dequant_and_buckets),
        cmocka_unit_test(test_floor_below_every_prediction),
        cmocka_unit_test(test_floor_text),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
