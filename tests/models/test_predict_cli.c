/* `aitk-validate predict` and `aitk-validate gpus` run as a person runs them:
 * the Done-when commands (checked against reported figures), the
 * explanations a non-fitting plan must show, and every bad input giving exit
 * code 2 with a reason. */
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

#define FIXTURE(name) AITK_SOURCE_DIR "/tests/models/fixtures/" name
#define GIB 1073741824.0

#include "tests/exe_run.h"
#include "tests/report_json.h"

/* Issue 5: FLUX on an RTX 4090 at 1024 px (fp8 base, rank 16, checkpointing)
 * predicts a peak under 24 GB and a step within 1.5x of the reported 3.5 s
 * (SimpleTuner FLUX quickstart, documentation/quickstart/FLUX.md). */
static void test_flux_4090_json(void **state)
{
    (void)state;
    char path[] = "/tmp/aitk-predict-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *args[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                          "--resolution", "1024", "--json", path, NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    cJSON *j = load_json(path);
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(p, "workload");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "base_dtype")->valuestring, "fp8");
    assert_int_equal((int)json_num(w, "rank"), 16);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "gradient_checkpointing")));
    /* Nothing known that ai-toolkit does to FLUX.1 is left out. */
    assert_null(cJSON_GetObjectItemCaseSensitive(w, "not_modelled"));
    assert_null(strstr(aitk_str_cstr(&r.out), "not modelled:"));
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "gpus"), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(g, "gpu")->valuestring, "RTX 4090");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "fits")));
    assert_true(json_num(g, "peak_bytes") < 24 * GIB);
    double s = json_num(g, "step_seconds");
    if (s > 3.5 * 1.5 || s < 3.5 / 1.5)
        fail_msg("predicted %.2f s/step, reported 3.5", s);
    /* The rate its GEMMs were counted against: a measured one (models/gpus.yaml). */
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(g, "matmul_kind")->valuestring,
                        "measured");
    /* Under the predictions: how far the same model was from reported jobs. */
    const cJSON *against = cJSON_GetObjectItemCaseSensitive(j, "against_reports");
    assert_true(json_num(against, "reports") >= 1);
    assert_true(json_num(against, "min_ratio") <= json_num(against, "max_ratio"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "(`predict --reported`)"));
    cJSON_Delete(j);
    unlink(path);
    ran_free(&r);
}

/* The first row of `predict ARGS... --json` (a fresh temporary file). */
static cJSON *predict_row(const char *const *args, const cJSON **row, ran *r)
{
    char path[] = "/tmp/aitk-predict-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *argv[24];
    size_t n = 0;
    for (; args[n]; n++)
        argv[n] = args[n];
    argv[n++] = "--json";
    argv[n++] = path;
    argv[n] = NULL;
    *r = run(argv);
    assert_int_equal(r->rc, 0);
    cJSON *j = load_json(path);
    unlink(path);
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0);
    *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "gpus"), 0);
    assert_non_null(*row);
    return j;
}

/* A fit within the model's own memory error is marked tight: FLUX at rank
 * 112 on an RTX 4090 fits by 2.3% of usable memory, less than the 10% or
 * so the model has been low on measured peaks (predict --reported's peak
 * error); the example job at rank 16 fits by 15% and is not marked. */
static void test_tight(void **state)
{
    (void)state;
    const cJSON *g = NULL;
    ran r;
    cJSON *j = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu",
                                            "RTX 4090", "--rank", "112", NULL},
                           &g, &r);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "fits")));
    const cJSON *fit = cJSON_GetObjectItemCaseSensitive(g, "fit");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fit, "tight")));
    assert_true(json_num(fit, "margin_percent") < 10);
    assert_non_null(strstr(aitk_str_cstr(&r.out), "tight: needs"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "so it may not fit"));
    /* Its basis, under the predictions: the high end of the peak error is
     * the factor the line names. */
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "against_reports"), "peak_error");
    assert_true(json_num(e, "runs") >= 2);
    assert_true(json_num(e, "low") <= json_num(e, "high") && json_num(e, "high") > 1);
    char factor[32];
    snprintf(factor, sizeof factor, "up to %.2fx", json_num(e, "high"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), factor));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "How far to trust the fits"));
    cJSON_Delete(j);
    ran_free(&r);
    j = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                                     NULL},
                    &g, &r);
    fit = cJSON_GetObjectItemCaseSensitive(g, "fit");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(fit, "tight")));
    assert_null(strstr(aitk_str_cstr(&r.out), "tight:"));
    cJSON_Delete(j);
    ran_free(&r);
}

/* A job that does not fit, or only just, gets the Windows driver's
 * system-memory fallback named (NVIDIA support answer 5490: from driver
 * 536.40 an allocation that no longer fits goes to system memory instead of
 * failing); a job with room to spare does not. FLUX.1-dev with its bf16
 * base and text encoders needs about 36 GiB, more than a 16 GB card holds;
 * rank 112 on an RTX 4090 is test_tight's tight fit. */
static void test_windows_spill(void **state)
{
    (void)state;
    static const struct {
        const char *gpu, *quantize, *rank;
        bool spills;
    } cases[] = {{"RTX 4060 Ti 16GB", "none", "16", true},
                 {"RTX 4090", "fp8", "112", true},
                 {"RTX 4090", "fp8", "16", false}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const cJSON *g = NULL;
        ran r;
        cJSON *j = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu",
                                                cases[i].gpu, "--quantize", cases[i].quantize,
                                                "--rank", cases[i].rank, NULL},
                               &g, &r);
        const cJSON *spill = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(g, "fit"), "may_spill_on_windows");
        assert_true(cJSON_IsBool(spill));
        if (cJSON_IsTrue(spill) != cases[i].spills)
            fail_msg("%s rank %s: may_spill_on_windows %d", cases[i].gpu, cases[i].rank,
                     cJSON_IsTrue(spill));
        const char *line = strstr(aitk_str_cstr(&r.out), "on Windows, a job marked NO or tight");
        if ((line != NULL) != cases[i].spills)
            fail_msg("%s rank %s: Windows line %s", cases[i].gpu, cases[i].rank,
                     line ? "shown" : "missing");
        if (line)
            assert_non_null(strstr(line, "'Prefer No Sysmem Fallback'"));
        cJSON_Delete(j);
        ran_free(&r);
    }
}

/* A step whose GPU work is shorter than eager PyTorch's time to launch it
 * takes the host's time, and is marked. The oracle is a measurement: on the
 * lent H200 the eager FLUX.1-dev step (bf16 base, LoRA r16 on every Linear,
 * checkpointing, AdamW) took 0.727 s at 512 px and 0.724 s at 768 px with
 * the GPU busy 36% and 47% of it (bench/reference-runs/2026-12-04-h200-
 * second-gpu-check, call3-torch-flux.json). Its kernels, from
 * models/flux1-dev.yaml by hand: 19 double blocks of 2 x 164 + 224 and 38
 * single blocks of 2 x 79 + 107. The RTX 4090 at 1024 px is GPU-bound. */
static void test_host_bound(void **state)
{
    (void)state;
    const cJSON *g = NULL;
    ran r;
    const struct {
        const char *res;
        double measured;
    } h200[] = {{"512", 0.727}, {"768", 0.724}};
    for (size_t i = 0; i < sizeof h200 / sizeof *h200; i++) {
        cJSON *j = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu",
                                                "H200 SXM", "--resolution", h200[i].res,
                                                "--quantize", "none", "--optimizer", "adamw",
                                                NULL},
                               &g, &r);
        const double step = json_num(g, "step_seconds");
        if (!(step > h200[i].measured / 1.1 && step < h200[i].measured * 1.1))
            fail_msg("%s px: predicted %.3f s, measured %.3f s", h200[i].res, step,
                     h200[i].measured);
        assert_int_equal((long)json_num(g, "kernels_per_step"),
                         19 * (2 * 164 + 224) + 38 * (2 * 79 + 107));
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "host_bound")));
        if (!strstr(aitk_str_cstr(&r.out), "host-bound: H200 SXM (1 of 1)"))
            fail_msg("no host-bound line: %s", aitk_str_cstr(&r.out));
        cJSON_Delete(j);
        ran_free(&r);
    }
    cJSON *j = NULL;
    j = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                                     "--resolution", "1024", NULL},
                    &g, &r);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(g, "host_bound")));
    assert_null(strstr(aitk_str_cstr(&r.out), "host-bound"));
    cJSON_Delete(j);
    ran_free(&r);
}

/* OmniGen2 under ai-toolkit launches the kernels its blocks were counted at
 * (models/omnigen2.yaml: the modulated block 95 forward and 141 backward,
 * the context refiner's 80 and 121), and only the 32 joint layers run their
 * forward twice: ai-toolkit's OmniGen2 checkpoints those alone, so a
 * refiner recomputed would show in the sum. ai-toolkit's example quantizes
 * the base to qfloat8, whose Linears each launch 3 kernels more forward and
 * 2 backward (cost.yaml base_linear_kernels quanto): the refiners' blocks
 * have 7 and 8 Linears, the layers 8. On a CPU-bound eager step the host's
 * term is that count at cost.yaml's 32.8 us a kernel. */
static void test_omnigen2_kernels(void **state)
{
    (void)state;
    const cJSON *g = NULL;
    ran r;
    cJSON *j = predict_row((const char *[]){"predict", "--model", "omnigen2", "--gpu", "H200 SXM",
                                            "--resolution", "1024", NULL},
                           &g, &r);
    const long refiners = 2 * (80 + 7 * 3 + 121 + 7 * 2) + 2 * (95 + 8 * 3 + 141 + 8 * 2),
               layers = 32 * (2 * (95 + 8 * 3) + 141 + 8 * 2);
    assert_int_equal((long)json_num(g, "kernels_per_step"), refiners + layers);
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(g, "seconds_at_largest_resolution");
    const double host = json_num(at, "host");
    if (!(fabs(host - (double)(refiners + layers) * 32.8e-6) < 0.01))
        fail_msg("host %.3f s for %ld kernels", host, refiners + layers);
    cJSON_Delete(j);
    ran_free(&r);
}

/* Issue 5, "do the same against the A40 (6.5 s/it) and A6000 reports": the
 * same command (FLUX at 1024 px, fp8 base, rank 16, checkpointing) on those
 * GPUs, within 1.5x of each reported step (ostris/ai-toolkit issue #145,
 * A40 batch 1 and 4; on the RTX A6000 the SECourses author's rank-128 kohya
 * run with the T5 mask off, 4.43 s). kohya-ss/sd-scripts PR #1374's A6000
 * table (8.25 and 7.99 s, rank 128, 2024-08-19) held until attention on
 * Ampere took its measured rate; it is now predicted 0.6 of itself and is
 * the open case of test_reported's list. `predict --reported` compares each
 * report with its own setup as well as it is known (ranks, buckets, text
 * encoders). */
static void test_sanity_bound_a40_a6000(void **state)
{
    (void)state;
    static const struct {
        const char *gpu, *batch;
        double reported;
    } cases[] = {{"A40", "1", 6.5}, {"A40", "4", 22}, {"RTX A6000", "1", 4.43}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const cJSON *g = NULL;
        ran r;
        cJSON *j = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu",
                                                cases[i].gpu, "--resolution", "1024", "--batch",
                                                cases[i].batch, NULL},
                               &g, &r);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(g, "gpu")->valuestring,
                            cases[i].gpu);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "fits")));
        const double s = json_num(g, "step_seconds");
        if (s > cases[i].reported * 1.5 || s < cases[i].reported / 1.5)
            fail_msg("%s batch %s: predicted %.2f s/step, reported %.2f", cases[i].gpu,
                     cases[i].batch, s, cases[i].reported);
        cJSON_Delete(j);
        ran_free(&r);
    }
}

/* diffusers' validation stage decides a fit on its own: FLUX with a bf16
 * base at 512 px and the prompt encoded once trains on an A100 40GB (the
 * step's peak about 34.5 GiB, the script's encoders kept on the GPU), but
 * validation loads both text encoders again (4.883e9 parameters, 9.1 GiB in
 * bf16) and misses; the words say so, the change that fits is
 * --no-validation, and predict with it gives that job's own figures. */
static void test_validation_misses(void **state)
{
    (void)state;
    const cJSON *g = NULL, *g2 = NULL;
    ran r, r2;
    const char *args[16] = {"predict", "--model", "flux1-dev", "--gpu", "A100 40GB SXM",
                            "--trainer", "diffusers", "--quantize", "none", "--resolution",
                            "512", "--cache-text-embeddings", NULL};
    cJSON *j = predict_row(args, &g, &r);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(g, "fits")));
    assert_true(json_num(g, "validation_peak_bytes") > 40 * 1073741824.0);
    assert_non_null(strstr(aitk_str_cstr(&r.out),
                           "at the trainer's validation: text encoders loaded again 9.1 GiB"));
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(g, "fits_with");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(f, "change")->valuestring,
                        "--no-validation");
    args[12] = "--no-validation";
    cJSON *j2 = predict_row(args, &g2, &r2);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g2, "fits")));
    assert_null(cJSON_GetObjectItemCaseSensitive(g2, "validation_peak_bytes"));
    assert_float_equal(json_num(f, "peak_bytes"), json_num(g2, "peak_bytes"), 1e-6);
    cJSON_Delete(j);
    cJSON_Delete(j2);
    ran_free(&r);
    ran_free(&r2);
}

static const cJSON *plan_of(const cJSON *j)
{
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0);
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(p, "memory_plan_bytes");
    assert_non_null(plan);
    return plan;
}

/* The job options a trainer's user sets: --optimizer prices its state per
 * LoRA parameter (models/cost.yaml: Prodigy 16 B, 8-bit AdamW 2 B; FLUX at
 * rank 16 has 85,917,696 of them: 1,374,683,136 B against 171,835,392);
 * --accumulation N makes a step N passes with the peak of one;
 * --no-checkpointing keeps every block's activations (far more memory) and
 * drops the recompute (a shorter step); --attention-mask per_head (kohya's
 * --apply_t5_attn_mask) keeps a converted mask for the live block and
 * lengthens the step; --os windows lengthens it alone (PyTorch's Windows
 * wheels have no flash attention). The peak grows by the state's
 * growth with models/cost.yaml's fragmentation allowance (4.3%) on it. An
 * unknown optimizer is bad usage
 * that names the known ones; an accumulation of 0 is out of range. */
static void test_job_options(void **state)
{
    (void)state;
    const cJSON *g = NULL;
    ran r;
    const char *base[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090", NULL};
    cJSON *j = predict_row(base, &g, &r);
    const cJSON *plan = plan_of(j);
    const double opt8 = json_num(plan, "optimizer state (and EMA copy)");
    const double ckpt = json_num(plan, "checkpointed activations");
    const double live = json_num(plan, "one block live (recompute + backward)");
    const double step = json_num(g, "step_seconds"), peak = json_num(g, "peak_bytes");
    assert_float_equal(opt8, 171835392.0, 0.5);
    ran_free(&r);
    cJSON_Delete(j);

    const char *prodigy[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                             "--optimizer", "prodigy", "--accumulation", "4", NULL};
    j = predict_row(prodigy, &g, &r);
    plan = plan_of(j);
    assert_float_equal(json_num(plan, "optimizer state (and EMA copy)"), 1374683136.0, 0.5);
    assert_true(fabs(json_num(g, "step_seconds") / step - 4.0) < 1e-9);
    assert_true(fabs(json_num(g, "peak_bytes") - peak - (1374683136.0 - opt8) * 1.043) < 1e3);
    ran_free(&r);
    cJSON_Delete(j);

    /* kohya's --apply_t5_attn_mask: every call's mask written out as
     * (1, 24, 4608, 4608) at 1024 px, kept as bf16 for the live block's
     * backward (2 x 509,607,936 B), and a longer step. */
    const char *masked[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                            "--attention-mask", "per_head", NULL};
    j = predict_row(masked, &g, &r);
    plan = plan_of(j);
    assert_float_equal(json_num(plan, "one block live (recompute + backward)") - live,
                       1019215872.0, 0.5);
    assert_true(json_num(g, "step_seconds") > step);
    const cJSON *wj = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0), "workload");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(wj, "attention_mask")->valuestring,
                        "per_head");
    ran_free(&r);
    cJSON_Delete(j);

    /* --os windows: the same job and memory, its attention at the
     * memory-efficient kernel's rate (no mask), so a longer step. */
    const char *windows[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                             "--os", "windows", NULL};
    j = predict_row(windows, &g, &r);
    assert_float_equal(json_num(g, "peak_bytes"), peak, 0);
    assert_true(json_num(g, "step_seconds") > step * 1.05);
    wj = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0), "workload");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(wj, "os")->valuestring, "windows");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(wj, "attention_mask")->valuestring,
                        "none");
    assert_non_null(strstr(aitk_str_cstr(&r.out), "PyTorch on Windows: every attention call "
                                                  "runs the memory-efficient kernel"));
    ran_free(&r);
    cJSON_Delete(j);

    const char *nockpt[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                            "--no-checkpointing", NULL};
    j = predict_row(nockpt, &g, &r);
    plan = plan_of(j);
    assert_true(json_num(plan, "checkpointed activations") > 10 * ckpt);
    assert_true(json_num(g, "step_seconds") < step);
    ran_free(&r);
    cJSON_Delete(j);

    ran bad = run((const char *[]){"predict", "--model", "flux1-dev", "--optimizer", "sgd",
                                   NULL});
    assert_int_equal(bad.rc, 2);
    assert_non_null(strstr(aitk_str_cstr(&bad.err), "--optimizer: expected adamw, adamw8bit"));
    assert_non_null(strstr(aitk_str_cstr(&bad.err), "found 'sgd'"));
    ran_free(&bad);
    bad = run((const char *[]){"predict", "--model", "flux1-dev", "--accumulation", "0", NULL});
    assert_int_equal(bad.rc, 2);
    assert_non_null(strstr(aitk_str_cstr(&bad.err), "--accumulation"));
    ran_free(&bad);
    bad = run((const char *[]){"predict", "--model", "flux1-dev", "--attention-mask", "dense",
                               NULL});
    assert_int_equal(bad.rc, 2);
    assert_non_null(strstr(aitk_str_cstr(&bad.err), "--attention-mask: expected none, "
                                                    "key_padding, pairwise, per_head or "
                                                    "per_head_kept, found 'dense'"));
    ran_free(&bad);
    bad = run((const char *[]){"predict", "--model", "flux1-dev", "--os", "macos", NULL});
    assert_int_equal(bad.rc, 2);
    assert_non_null(
        strstr(aitk_str_cstr(&bad.err), "--os: expected linux or windows, found 'macos'"));
    ran_free(&bad);
}

/* A job that does not fit says which change would make it fit, with that
 * job's peak and step: the same figures predict gives when asked for the
 * changed job itself. FLUX at 768 px does not fit 16 GB with an fp8 base and
 * its text encoders loaded; cached embeddings (the first change tried, as it
 * changes nothing trained) make it fit. (At 1024 px it misses by 0.1 GiB even
 * cached: a 16 GB card gives a process 15.76 GiB, less the CUDA context.)
 * With a bf16 base in 24 GB, caching is not enough and an NF4 base is the
 * first that fits. */
static void test_fits_with(void **state)
{
    (void)state;
    static const struct {
        const char *gpu, *quantize, *resolution, *change;
    } cases[] = {{"RTX 4080", "fp8", "768", "--cache-text-embeddings"},
                 {"RTX 4090", "none", "1024", "--quantize nf4"}};
    const cJSON *g = NULL, *g2 = NULL, *f = NULL;
    ran r, r2;
    cJSON *j, *j2;
    for (size_t i = 0; i < 2; i++) {
        j = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu", cases[i].gpu,
                                         "--quantize", cases[i].quantize, "--resolution",
                                         cases[i].resolution, NULL}, &g, &r);
        assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(g, "fits")));
        f = cJSON_GetObjectItemCaseSensitive(g, "fits_with");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(f, "change")->valuestring,
                            cases[i].change);
        char line[96];
        snprintf(line, sizeof line, "fits with %s: peak", cases[i].change);
        assert_non_null(strstr(aitk_str_cstr(&r.out), line));
        const char *changed[12] = {"predict",  "--model",           "flux1-dev",
                                   "--gpu",    cases[i].gpu,        "--quantize",
                                   cases[i].quantize, "--resolution", cases[i].resolution,
                                   NULL};
        if (i == 0)
            changed[9] = "--cache-text-embeddings";
        else
            changed[6] = "nf4";
        j2 = predict_row(changed, &g2, &r2);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g2, "fits")));
        assert_null(cJSON_GetObjectItemCaseSensitive(g2, "fits_with"));
        assert_float_equal(json_num(f, "peak_bytes"), json_num(g2, "peak_bytes"), 1e-6);
        assert_float_equal(json_num(f, "step_seconds"), json_num(g2, "step_seconds"), 1e-12);
        cJSON_Delete(j);
        cJSON_Delete(j2);
        ran_free(&r);
        ran_free(&r2);
    }
    /* A batch too large: the largest smaller batch that fits comes first
     * (FLUX at 1024 px in 24 GB: batch 2 does, 3 does not, with the live
     * block's saved activations counted op by op and the allocator's
     * fragmentation at cost.yaml's 4.3%), figures equal to predict's for
     * that batch. */
    j = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                                     "--batch", "8", NULL}, &g, &r);
    f = cJSON_GetObjectItemCaseSensitive(g, "fits_with");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(f, "change")->valuestring, "--batch 2");
    j2 = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                                      "--batch", "2", NULL}, &g2, &r2);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g2, "fits")));
    assert_float_equal(json_num(f, "peak_bytes"), json_num(g2, "peak_bytes"), 1e-6);
    cJSON_Delete(j2);
    ran_free(&r2);
    j2 = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                                      "--batch", "3", NULL}, &g2, &r2);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(g2, "fits")));
    cJSON_Delete(j2);
    ran_free(&r2);
    cJSON_Delete(j);
    ran_free(&r);
    /* Changes combine: a part the job has already (its NF4 base) does not
     * drop the rest of a try, and a smaller batch goes with any change. */
    static const struct {
        const char *args[8], *change;
    } combos[] = {
        {{"--quantize", "nf4", "--rank", "224", NULL}, "--cache-text-embeddings --resolution 768"},
        {{"--quantize", "none", "--batch", "4", NULL}, "--batch 1 --quantize nf4"},
    };
    for (size_t i = 0; i < 2; i++) {
        const char *argv[16] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4080"};
        size_t n = 5;
        for (size_t k = 0; combos[i].args[k]; k++)
            argv[n++] = combos[i].args[k];
        argv[n] = NULL;
        j = predict_row(argv, &g, &r);
        f = cJSON_GetObjectItemCaseSensitive(g, "fits_with");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(f, "change")->valuestring,
                            combos[i].change);
        cJSON_Delete(j);
        ran_free(&r);
    }
    /* Nothing tried fits a rank-4096 adapter in 16 GB: said, and null. */
    j = predict_row((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "RTX 4080",
                                     "--rank", "4096", NULL}, &g, &r);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(g, "fits_with")));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "does not fit with any change tried"));
    cJSON_Delete(j);
    ran_free(&r);
}

/* Issue 5: bf16 base weights do not fit in 24 GB, and the terms are shown. */
static void test_flux_bf16_terms(void **state)
{
    (void)state;
    const char *args[] = {"predict", "--model", "flux1-dev", "--gpu", "4090", "--quantize",
                          "none", NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    const char *out = aitk_str_cstr(&r.out);
    assert_non_null(strstr(out, "NO"));
    assert_non_null(strstr(out, "largest terms: base weights"));
    ran_free(&r);
}

/* Runs `predict --model flux1-dev --gpu 4090 --quantize Q --json` and returns
 * the one prediction's JSON (caller deletes *doc). */
static const cJSON *predict_quantized(const char *q, cJSON **doc)
{
    char path[] = "/tmp/aitk-predict-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *args[] = {"predict", "--model", "flux1-dev", "--gpu", "4090", "--quantize",
                          q,         "--json",  path,        NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    ran_free(&r);
    *doc = load_json(path);
    unlink(path);
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(*doc, "predictions"), 0);
}

/* --quantize nf4: a 4-bit base (bitsandbytes NF4: 4 bits and, per 64 weights,
 * one 8-bit absmax, i.e. 0.5 + 1/64 bytes a weight) of FLUX.1-dev's
 * published 11.90 B weights; text encoders stay in fp8, as ai-toolkit's
 * qtype_te; the peak falls below the fp8 base's. */
static void test_quantize_nf4(void **state)
{
    (void)state;
    cJSON *d4 = NULL, *d8 = NULL;
    const cJSON *p4 = predict_quantized("nf4", &d4), *p8 = predict_quantized("fp8", &d8);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(p4, "workload");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "base_dtype")->valuestring, "nf4");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "text_encoder_dtype")->valuestring,
                        "fp8");
    const double base =
        json_num(cJSON_GetObjectItemCaseSensitive(p4, "memory_plan_bytes"), "base weights");
    const double expect = 11.90e9 * (0.5 + 1.0 / 64);
    if (base > expect * 1.02 || base < expect / 1.02)
        fail_msg("NF4 base weights %.3g B, expected %.3g", base, expect);
    const cJSON *g4 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p4, "gpus"), 0);
    const cJSON *g8 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p8, "gpus"), 0);
    assert_true(json_num(g4, "peak_bytes") < json_num(g8, "peak_bytes"));
    cJSON_Delete(d4);
    cJSON_Delete(d8);
}

/* The one prediction of FLUX.1-dev (NF4 base) on `gpu` with `extra` (one
 * option and its value, or NULL), and its first GPU row. */
static const cJSON *predict_on(const char *gpu, const char *opt, const char *val, cJSON **doc)
{
    char path[] = "/tmp/aitk-predict-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *args[] = {"predict", "--model", "flux1-dev", "--quantize", "nf4", "--gpu", gpu,
                          "--json",  path,      opt,         val,         NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    ran_free(&r);
    *doc = load_json(path);
    unlink(path);
    const cJSON *pred = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(*doc, "predictions"), 0);
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pred, "gpus"), 0);
}

/* --dtype fp16: the same speed on a card with bf16 tensor cores; on a T4
 * (none: torch's bf16 matmul measured at 2.25 TFLOP/s, fp16 at 42.18,
 * models/gpus.yaml) the fp16 step is faster by at most that ratio, 18.7x,
 * and by at least 5x, since FLUX's step is mostly matmuls; a bf16 job's
 * row gives the fp16 figure beside it, in the JSON and in the table. */
static void test_dtype(void **state)
{
    (void)state;
    cJSON *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    const cJSON *bf16 = predict_on("RTX 4090", NULL, NULL, &a);
    const cJSON *fp16 = predict_on("RTX 4090", "--dtype", "fp16", &b);
    assert_float_equal(json_num(bf16, "step_seconds"), json_num(fp16, "step_seconds"), 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(bf16, "step_seconds_in_fp16"));
    const cJSON *t4 = predict_on("T4", NULL, NULL, &c);
    const cJSON *t4_fp16 = predict_on("T4", "--dtype", "fp16", &d);
    const double slow = json_num(t4, "step_seconds"), fast = json_num(t4_fp16, "step_seconds");
    if (slow / fast < 5 || slow / fast > 42.18 / 2.25)
        fail_msg("T4: bf16 %.2f s, fp16 %.2f s a step", slow, fast);
    assert_float_equal(json_num(t4, "step_seconds_in_fp16"), fast, 1e-9);
    assert_null(cJSON_GetObjectItemCaseSensitive(t4_fp16, "step_seconds_in_fp16"));
    assert_float_equal(json_num(t4, "matmul_fp16_tflops"), 42.18, 1e-9);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "predictions"), 0), "workload");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "precision")->valuestring, "fp16");
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    cJSON_Delete(d);
    ran r = run((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "T4", NULL});
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(aitk_str_cstr(&r.out), "      no bf16 tensor cores: bf16 matmuls run "
                                                   "at 2.2 TFLOP/s here, fp16 at 42.2; in fp16 "
                                                   "(--dtype fp16, ai-toolkit train.dtype: "
                                                   "fp16) "));
    ran_free(&r);
    /* --explain shows the rate the job was counted at. */
    r = run((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "T4", "--dtype", "fp16",
                             "--explain", NULL});
    assert_int_equal(r.rc, 0);
    const char *rows = strstr(aitk_str_cstr(&r.out), "matmul TF    GEMM");
    assert_non_null(rows);
    assert_non_null(strstr(rows, "    T4                   42.2 "));
    assert_non_null(strstr(rows, "  for this job, computed in fp16: the fp16 TFLOP/s "));
    ran_free(&r);
    r = run((const char *[]){"predict", "--dtype", "fp32", NULL});
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(aitk_str_cstr(&r.err), "--dtype: expected bf16 or fp16, found 'fp32'"));
    ran_free(&r);
    /* A control character in the value never reaches the terminal raw (the
     * option's message escapes it, and so does the error printer). */
    r = run((const char *[]){"predict", "--dtype", "fp\x1b[2J", NULL});
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(aitk_str_cstr(&r.err), "found 'fp\\x1b[2J'"));
    assert_null(strchr(aitk_str_cstr(&r.err), '\x1b'));
    ran_free(&r);
}

static void test_explain_and_price(void **state)
{
    (void)state;
    const char *args[] = {"predict", "--model", "chroma", "--gpu", "A40,L40S", "--explain",
                          "--price-per-hour", "L40S=1.00", NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    const char *out = aitk_str_cstr(&r.out);
    assert_non_null(strstr(out, "Memory plan"));
    assert_non_null(strstr(out, "fragmentation allowance"));
    assert_non_null(strstr(out, "attention, backward"));
    assert_non_null(strstr(out, "L40S"));
    /* ai-toolkit's Chroma masks every attention call (models/trainers.yaml):
     * the prediction counts it and says so, and has nothing left unmodelled
     * to warn of. */
    assert_non_null(strstr(out, ", every attention call given a (batch, heads, tokens, tokens) "
                                "mask kept for the step"));
    assert_non_null(strstr(out, "attention masks (converted, read)"));
    assert_non_null(strstr(out, "masked calls, the memory-efficient kernel over flash attention "
                                "(forward/backward): 0.60/0.47, 8.0 0.57/0.47, 8.6 0.61/0.47"));
    assert_null(strstr(out, "not modelled:"));
    ran_free(&r);
    /* FLUX's calls are unmasked: on Linux flash attention alone, on Windows
     * the memory-efficient kernel's shares, named as such. */
    const char *flux[] = {"predict", "--model", "flux1-dev", "--gpu", "A40", "--explain", NULL};
    r = run(flux);
    assert_null(strstr(aitk_str_cstr(&r.out), "the memory-efficient kernel over flash"));
    ran_free(&r);
    const char *windows[] = {"predict", "--model", "flux1-dev", "--gpu", "A40", "--explain",
                             "--os", "windows", NULL};
    r = run(windows);
    assert_non_null(strstr(aitk_str_cstr(&r.out),
                           "calls on Windows, the memory-efficient kernel over flash attention "
                           "(forward/backward): 0.60/0.47"));
    ran_free(&r);
}

/* Every model on every GPU; the run is also the one timed for the < 50 ms
 * target (measured with hyperfine, not asserted here). */
static void test_all(void **state)
{
    (void)state;
    const char *args[] = {"predict", "--all-gpus", "--model", "flux1-dev,chroma,omnigen2", NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    const char *out = aitk_str_cstr(&r.out);
    assert_non_null(strstr(out, "flux1-dev"));
    assert_non_null(strstr(out, "chroma"));
    assert_non_null(strstr(out, "omnigen2"));
    assert_non_null(strstr(out, "B200"));
    ran_free(&r);
}

/* A model named twice is predicted once (GPUs were already deduplicated). */
static void test_duplicates_once(void **state)
{
    (void)state;
    ran r = run((const char *[]){"predict", "--model", "chroma,chroma", "--gpu", "4090,4090",
                                 NULL});
    assert_int_equal(r.rc, 0);
    const char *out = aitk_str_cstr(&r.out), *first = strstr(out, "chroma — ");
    assert_non_null(first);
    assert_null(strstr(first + 1, "chroma — "));
    first = strstr(out, "RTX 4090 ");
    assert_non_null(first);
    assert_null(strstr(first + 1, "RTX 4090 "));
    ran_free(&r);
}

static void test_config(void **state)
{
    (void)state;
    const char *ok[] = {"predict", "--config", FIXTURE("chroma_24gb.yaml"), "--gpu", "A40", NULL};
    ran r = run(ok);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(aitk_str_cstr(&r.out), "chroma"));
    assert_non_null(strstr(aitk_str_cstr(&r.err), "some_future_option"));
    ran_free(&r);
    const char *bad[] = {"predict", "--config", FIXTURE("omnigen2_unterminated.yaml"), NULL};
    r = run(bad);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(aitk_str_cstr(&r.err), "omnigen2_unterminated.yaml:"));
    ran_free(&r);
    /* An optimizer the memory model lacks: its place in the file, and the
     * names it knows. */
    char path[] = "/tmp/aitk-optimizer-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char cfg[] = "job: extension\nconfig:\n  process:\n    - model: {is_flux: true}\n"
                              "      train:\n        optimizer: sgd-magic\n";
    assert_int_equal(write(fd, cfg, sizeof cfg - 1), (ssize_t)(sizeof cfg - 1));
    close(fd);
    const char *unknown[] = {"predict", "--config", path, "--gpu", "4090", NULL};
    r = run(unknown);
    assert_int_equal(r.rc, 2);
    aitk_str where = AITK_STR_INIT;
    aitk_str_appendf(&where, "%s:6:20: optimizer 'sgd-magic'", path);
    if (!strstr(aitk_str_cstr(&r.err), where.ptr) || !strstr(aitk_str_cstr(&r.err), "adamw8bit"))
        fail_msg("expected '%s' and the known names, got: %s", where.ptr, aitk_str_cstr(&r.err));
    aitk_str_free(&where);
    ran_free(&r);
    unlink(path);
}

#define CORPUS(name) AITK_SOURCE_DIR "/tests/models/fixtures/corpus/" name

/* predict --config on the corpus (tests/models/fixtures/corpus): a job it
 * does not model is exit 2 naming it, never a table; the ones it models
 * print their own title, a sampling column when they sample, and the web
 * UI's job no warning at all (its keys are known; with --verbose they are
 * listed as playing no part). */
static void test_config_corpus_cli(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        int rc;
        const char *out, *err;
    } cases[] = {
        {CORPUS("flex1_is_flux.yaml"), 2, NULL, "this config trains Flex.1-alpha"},
        {CORPUS("flux2_is_flux.yaml"), 2, NULL, "this config trains FLUX.2-dev"},
        {CORPUS("full_fine_tune.yaml"), 2, NULL, "full fine-tune of FLUX.1-dev"},
        {CORPUS("redux_adapter.yaml"), 2, NULL, "adapter training"},
        {CORPUS("grpo.yaml"), 2, NULL, "GRPO"},
        {CORPUS("textual_inversion.yaml"), 2, NULL, "textual inversion"},
        {CORPUS("concept_slider.yaml"), 2, NULL, "concept slider"},
        {CORPUS("qwen_image_uint4.yaml"), 2, NULL, "qwen_image_uint4.yaml:32:15: this config "
                                                   "trains Qwen-Image"},
        {CORPUS("lumina2.yaml"), 2, NULL, "trains Lumina-Image 2.0"},
        {CORPUS("schnell.yaml"), 0, "FLUX.1-schnell (black-forest-labs/FLUX.1-schnell)",
         "model.assistant_lora_path"},
        {CORPUS("prodigyopt.yaml"), 0, ", prodigy,", NULL},
        {CORPUS("sample_flux.yaml"), 0, "sampling min/1000", NULL},
        /* uint8 is counted unquantized, and the output says why. */
        {CORPUS("flux_uint8.yaml"), 0,
         "bf16 base weights (qtype uint8 quantizes nothing: ai-toolkit's uint backend refuses "
         "8 bits",
         NULL},
        {CORPUS("flux_uint6.yaml"), 0, "uint6 base weights, LoRA rank", NULL},
        {CORPUS("flux_nvfp4.yaml"), 0, "nvfp4 base weights, LoRA rank", NULL},
        /* 19.70 GiB when a double block's saved activations were counted
         * at 37 hidden-sized tensors a token; at the 27 autograd keeps, the
         * block run again holds 10 x 4608 tokens x 6144 B = 0.264 GiB less,
         * 0.275 GiB with the 4.3% fragmentation allowance: 19.43 GiB. With
         * what a block's backward holds beyond that, the single block's 23 +
         * 10 tensors a token outgrow the double block's 27 (+ 4): 6 more,
         * 0.158 GiB, 0.165 with the allowance: 19.60 GiB. The job adapts
         * proj_out in 2 of the 38 single blocks only, and an unadapted
         * proj_out keeps its 5-tensor input no more (lora_saves): the single
         * block run again holds 5 x 36/38 = 4.74 a token less, x 4608
         * tokens x 6144 B = 0.125 GiB, 0.130 with the allowance: 19.47 GiB
         * (the double block, 6 a token less, stays below it). No block's
         * norm Linear is adapted either, so the modulation takes no
         * gradient and the single block's products keep 2 a token less:
         * 0.053 GiB, 0.055 with the allowance: 19.42 GiB (the double block,
         * 10 less, still below). */
        {CORPUS("only_if_contains.yaml"), 0, "RTX 4090          24 GiB  19.4 GiB   yes", NULL},
        {CORPUS("chroma_only_if_contains.yaml"), 0, "LoRA rank 128",
         "network.network_kwargs picks layers by name, which the Chroma"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *args[] = {"predict", "--config", cases[i].file, "--gpu", "RTX 4090", NULL};
        ran r = run(args);
        const char *out = aitk_str_cstr(&r.out), *err = aitk_str_cstr(&r.err);
        if (r.rc != cases[i].rc || (cases[i].out && !strstr(out, cases[i].out)) ||
            (cases[i].err && !strstr(err, cases[i].err)) || (r.rc && *out))
            fail_msg("%s: exit %d, stdout '%s', stderr '%s'", cases[i].file, r.rc, out, err);
        ran_free(&r);
    }
    const char *ui[] = {"predict", "--config", CORPUS("ui_job_flux.yaml"), "--gpu", "4090", NULL};
    ran r = run(ui);
    assert_int_equal(r.rc, 0);
    if (strstr(aitk_str_cstr(&r.err), "warning"))
        fail_msg("the web UI's job warns: %s", aitk_str_cstr(&r.err));
    ran_free(&r);
    const char *verbose[] = {"predict", "--config", CORPUS("ui_job_flux.yaml"), "--gpu", "4090",
                             "--verbose", NULL};
    r = run(verbose);
    assert_int_equal(r.rc, 0);
    if (!strstr(aitk_str_cstr(&r.err), "play no part in time or memory") ||
        !strstr(aitk_str_cstr(&r.err), "train.lr ("))
        fail_msg("--verbose does not list the keys of no effect: %s", aitk_str_cstr(&r.err));
    ran_free(&r);
}

/* Each bad use: exit 2 and a message that names what is wrong (a row that
 * failed for another reason, say an unknown option, would pass on exit code
 * alone). */
static void test_bad_usage(void **state)
{
    (void)state;
    static const struct {
        const char *args[10];
        const char *says;
    } cases[] = {
        {{"predict", "--gpu", "Voodoo", NULL}, "unknown GPU 'Voodoo'"},
        {{"predict", "--gpu", "A100", NULL}, "'A100' is ambiguous: it matches 'A100 40GB PCIe'"},
        {{"predict", "--model", "sdxl", NULL}, "unknown model 'sdxl'"},
        {{"predict", "--resolution", "big", NULL}, "--resolution: 'big' is not a whole number"},
        {{"predict", "--resolution", " 1024", NULL}, "--resolution: ' 1024' is not a whole number"},
        {{"predict", "--batch", "0", NULL}, "predict: --batch: 0 is out of range (1..1024)"},
        {{"predict", "--quantize", "int3", NULL}, "expected fp8, nf4 or none, found 'int3'"},
        {{"predict", "--price-per-hour", "4090", NULL}, "expected GPU=USD"},
        {{"predict", "--calibrate", "/nonexistent/report.json", NULL},
         "/nonexistent/report.json: No such file"},
        {{"predict", "--model", "chroma", "--config", "x.yaml", NULL},
         "give --model or --config, not both"},
        {{"predict", "--gpu", "A40", "--all-gpus", NULL}, "give --gpu or --all-gpus, not both"},
        {{"predict", "--config", FIXTURE("both_accumulation.yaml"), NULL},
         "both_accumulation.yaml:8:32: gradient_accumulation and gradient_accumulation_steps"},
        {{"predict", "--config", "/nonexistent.yaml", NULL}, "/nonexistent.yaml: No such file"},
        {{"predict", "--json", "/nonexistent-dir/out.json", "--model", "chroma", NULL},
         "/nonexistent-dir: cannot create a file in this folder"},
        {{"predict", "stray", NULL}, "unexpected argument 'stray'"},
        {{"predict", "--reported", "--gpu", "A40", NULL}, "it takes only --calibrate and --json"},
        {{"predict", "--reported", "--cache-text-embeddings", NULL},
         "it takes only --calibrate and --json"},
        {{"predict", "--cache-text-embeddings=yes", NULL},
         "--cache-text-embeddings takes no value"},
        {{"predict", "--cache-text=yes", NULL}, "--cache-text-embeddings takes no value"},
        {{"predict", "--res", NULL}, "--resolution needs a value"},
        {{"predict", "--re", "512", NULL}, "'--re' is ambiguous: it begins --resolution, --reported"},
        {{"predict", "--bogus", NULL}, "unknown option '--bogus' (see predict --help)"},
        {{"predict", "--model", "", NULL}, "--model: empty name in the list ''"},
        {{"predict", "--model", ",", NULL}, "--model: empty name in the list ','"},
        {{"predict", "--model", "chroma,,flux1-dev", NULL}, "empty name in the list 'chroma,,"},
        {{"predict", "--gpu", "", NULL}, "--gpu: empty name in the list ''"},
        {{"predict", "--gpu", ",,", NULL}, "--gpu: empty name in the list ',,'"},
        {{"predict", "--gpu", "4090", "--gpu", "A40", NULL},
         "--gpu is given twice; give it once (it takes a list: --gpu a,b)"},
        {{"predict", "--batch", "1", "--batch", "2", NULL}, "--batch is given twice"},
        {{"predict", "--gpu", "4090", "--price-per-hour", "4090=1", "--price-per-hour",
          "RTX 4090=2", NULL},
         "RTX 4090 has two prices"},
        {{"gpus", "--bogus", NULL}, "gpus: unknown option '--bogus' (see gpus --help)"},
        {{"gpus", "--json=1", NULL}, "gpus: --json takes no value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ran r = run(cases[i].args);
        if (r.rc != 2 || !strstr(aitk_str_cstr(&r.err), cases[i].says))
            fail_msg("case %zu (%s %s): exit %d, stderr '%s', expected '%s'", i,
                     cases[i].args[1], cases[i].args[2] ? cases[i].args[2] : "", r.rc,
                     aitk_str_cstr(&r.err), cases[i].says);
        ran_free(&r);
    }
    /* The price option is the one that may repeat: two GPUs, two prices. */
    const char *two[] = {"predict", "--model", "chroma", "--gpu", "4090,A40", "--price-per-hour",
                         "4090=0.69", "--price-per-hour", "A40=0.44", NULL};
    ran r = run(two);
    assert_int_equal(r.rc, 0);
    static const struct {
        const char *row;
        double usd_per_hour;
    } rows[] = {{"\n  RTX 4090 ", 0.69}, {"\n  A40 ", 0.44}};
    for (size_t i = 0; i < 2; i++) {
        const char *at = strstr(aitk_str_cstr(&r.out), rows[i].row);
        double minutes = 0, usd = 0;
        /* GPU  VRAM GiB  peak GiB  fits  margin GiB %  s/step  min/1000  USD/1000 */
        if (!at || sscanf(at + strlen(rows[i].row),
                          "%*[^G]GiB %*f GiB %*s %*f GiB %*s %*f %lf %lf",
                          &minutes, &usd) != 2)
            fail_msg("no priced row for%s in:\n%s", rows[i].row, aitk_str_cstr(&r.out));
        /* Each GPU's own price: minutes per 1000 steps at that hourly rate. */
        assert_true(fabs(usd - minutes / 60 * rows[i].usd_per_hour) < 0.006);
    }
    ran_free(&r);
}

/* The entry of `gpus --json` named `name` (the test fails without one). */
/* `arr` is a JSON array of exactly the strings in `want`, space-separated,
 * in that order ("" for none). */
static void assert_keys(const cJSON *arr, const char *want)
{
    assert_true(cJSON_IsArray(arr));
    aitk_str got = AITK_STR_INIT;
    const cJSON *k;
    cJSON_ArrayForEach(k, arr)
    {
        assert_true(cJSON_IsString(k));
        aitk_str_appendf(&got, "%s%s", got.len ? " " : "", k->valuestring);
    }
    assert_string_equal(aitk_str_cstr(&got), want);
    aitk_str_free(&got);
}

static const cJSON *json_row(const cJSON *rows, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, rows)
    {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")), name) == 0)
            return e;
    }
    fail_msg("no row '%s'", name);
    return NULL;
}

static void test_gpus(void **state)
{
    (void)state;
    const char *args[] = {"gpus", "--sources", NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    /* Lines end in "\r\n" on Windows: compared as "\n". */
    size_t w = 0;
    for (size_t k = 0; k < r.out.len; k++)
        if (r.out.ptr[k] != '\r')
            r.out.ptr[w++] = r.out.ptr[k];
    r.out.len = w;
    if (r.out.ptr)
        r.out.ptr[w] = '\0';
    assert_non_null(strstr(aitk_str_cstr(&r.out), "NVIDIA GeForce RTX 4090"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "unverified"));
    /* The RTX 3090 Ti's derived matmul rate: marked, its source and its
     * unverified list under the row, the mark explained below the table. */
    assert_non_null(strstr(aitk_str_cstr(&r.out), "    86.3~ "));
    assert_non_null(strstr(aitk_str_cstr(&r.out),
                           "    unverified: bf16_tflops, fp16_tflops, matmul_bf16_tflops, "
                           "total_memory_gib\n"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "\n~ none measured: derived from a measured "
                                                   "GPU of the same chip"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "\n* none listed: 0.80 x the GPU's datasheet "
                                                   "BF16 rate\n"));
    /* A row whose NVML name cards of another memory size share: shown as
     * shared, and the mark explained. */
    assert_non_null(strstr(aitk_str_cstr(&r.out), "  NVIDIA GeForce RTX 4060 Ti (shared)\n"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "\n(shared): NVML gives cards of another "
                                                   "memory size this name too"));
    /* The FP32 column is the rate without tensor cores, not a tensor rate
     * (an H100 SXM's 67 against its TF32 tensor rate's 495): the legend
     * and --help say which columns are which. */
    assert_non_null(strstr(aitk_str_cstr(&r.out), "\nBF16 and FP8: dense tensor-core rates (no "
                                                   "sparsity), BF16 with FP32 accumulate;\n"
                                                   "FP32: the rate without tensor cores."));
    ran_free(&r);
    const char *help[] = {"gpus", "--help", NULL};
    r = run(help);
    assert_int_equal(r.rc, 0);
    assert_null(strstr(aitk_str_cstr(&r.out), "FP32\ntensor rates"));
    assert_null(strstr(aitk_str_cstr(&r.out), "FP32 tensor"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "FP32 rate without tensor cores"));
    ran_free(&r);
    const char *json[] = {"gpus", "--json", NULL};
    r = run(json);
    assert_int_equal(r.rc, 0);
    cJSON *j = cJSON_Parse(aitk_str_cstr(&r.out));
    assert_true(cJSON_IsArray(j));
    /* The 19 rows from NVIDIA's own documents and 16 beyond them (test_gpudb.c). */
    assert_int_equal(cJSON_GetArraySize(j), 35);
    /* The fp16 rate only where it is the card's own (the T4's, measured). */
    assert_float_equal(json_num(json_row(j, "T4"), "matmul_fp16_tflops"), 42.18, 1e-9);
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(json_row(j, "T4"), "matmul_fp16_kind")),
        "measured");
    assert_null(cJSON_GetObjectItem(json_row(j, "RTX 4090"), "matmul_fp16_tflops"));
    /* The unverified figures' keys, in the order of the row's figures. */
    const cJSON *ti = json_row(j, "RTX 3090 Ti"), *l40 = json_row(j, "L40");
    const cJSON *ti16 = json_row(j, "RTX 4060 Ti 16GB");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ti16, "nvml_shared")),
                        "NVIDIA GeForce RTX 4060 Ti");
    assert_null(cJSON_GetObjectItem(ti, "nvml_shared"));
    assert_keys(cJSON_GetObjectItem(ti, "unverified"),
                "bf16_tflops fp16_tflops matmul_bf16_tflops total_memory_gib");
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(ti, "matmul_source")),
                           "derived"));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(l40, "name")), "L40");
    assert_keys(cJSON_GetObjectItem(l40, "unverified"),
                "bandwidth_gbs bf16_tflops fp16_tflops fp8_tflops fp32_tflops pcie_gen tdp_w");
    assert_keys(cJSON_GetObjectItem(json_row(j, "RTX 3090"), "unverified"), "");
    /* Where each matmul rate comes from, in a word: the RTX 3090 Ti's is
     * derived from the RTX 3090's measured one; the L4 lists none. */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ti, "matmul_kind")), "derived");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(json_row(j, "RTX 3090"), "matmul_kind")),
        "measured");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(json_row(j, "L4"), "matmul_kind")),
                        "default");
    cJSON_Delete(j);
    ran_free(&r);
}

/* A data folder for AITK_DATA_DIR: `copies` from the source tree, plus one
 * file `broken` with the text `text`; data_dir_remove() undoes it. */
static const char *const data_subdirs[] = {"models"};

static void data_dir_make(char *dir, const char *const *copies, const char *broken,
                          const char *text)
{
    assert_non_null(mkdtemp(dir));
    for (size_t i = 0; i < sizeof data_subdirs / sizeof *data_subdirs; i++) {
        aitk_str sub = AITK_STR_INIT;
        aitk_str_appendf(&sub, "%s/%s", dir, data_subdirs[i]);
        assert_int_equal(aitk_dir_create(aitk_str_cstr(&sub), NULL), AITK_OK);
        aitk_str_free(&sub);
    }
    for (const char *const *name = copies; *name; name++) {
        aitk_str from = AITK_STR_INIT, to = AITK_STR_INIT;
        aitk_str_appendf(&from, "%s/%s", AITK_SOURCE_DIR, *name);
        aitk_str_appendf(&to, "%s/%s", dir, *name);
        char *data = NULL;
        size_t len = 0;
        assert_int_equal(aitk_file_read(aitk_str_cstr(&from), 1 << 20, &data, &len, NULL),
                         AITK_OK);
        assert_int_equal(aitk_file_write_atomic(aitk_str_cstr(&to), data, len, NULL), AITK_OK);
        aitk_free(data);
        aitk_str_free(&from);
        aitk_str_free(&to);
    }
    aitk_str file = AITK_STR_INIT;
    aitk_str_appendf(&file, "%s/%s", dir, broken);
    assert_int_equal(aitk_file_write_atomic(aitk_str_cstr(&file), text, strlen(text), NULL),
                     AITK_OK);
    aitk_str_free(&file);
}

static void data_dir_remove(const char *dir, const char *const *copies, const char *broken)
{
    aitk_str path = AITK_STR_INIT;
    for (const char *const *name = copies; *name; name++) {
        aitk_str_clear(&path);
        aitk_str_appendf(&path, "%s/%s", dir, *name);
        unlink(aitk_str_cstr(&path));
    }
    aitk_str_clear(&path);
    aitk_str_appendf(&path, "%s/%s", dir, broken);
    unlink(aitk_str_cstr(&path));
    for (size_t i = 0; i < sizeof data_subdirs / sizeof *data_subdirs; i++) {
        aitk_str_clear(&path);
        aitk_str_appendf(&path, "%s/%s", dir, data_subdirs[i]);
        rmdir(aitk_str_cstr(&path));
    }
    rmdir(dir);
    aitk_str_free(&path);
}

/* Runs `args` with AITK_DATA_DIR=dir; expects exit 2 and "<file>:<line>:"
 * on stderr, followed by `words`. */
static void expect_data_error(const char *dir, const char *const *args, const char *file,
                              const char *words)
{
    setenv("AITK_DATA_DIR", dir, 1);
    ran r = run(args);
    unsetenv("AITK_DATA_DIR");
    if (r.rc != 2)
        fail_msg("exit %d, stderr '%s'", r.rc, aitk_str_cstr(&r.err));
    const char *at = strstr(aitk_str_cstr(&r.err), file);
    if (!at || !strstr(at, words))
        fail_msg("expected '%s:L:C: ...%s...', stderr '%s'", file, words, aitk_str_cstr(&r.err));
    const char digit = at[strlen(file) + 1];
    assert_true(digit >= '1' && digit <= '9');
    ran_free(&r);
}

/* A broken model spec read from disk (AITK_DATA_DIR): exit 2, positioned. */
/* cost.yaml with the text after `key` changed: with `value_only`, the rest
 * of key's line replaced by `text`; else `key` itself replaced by `text`.
 * predict must refuse it, naming the file and `words`. */
static void expect_cost_yaml_error(const char *key, const char *text, bool value_only,
                                   const char *words)
{
    char *real = NULL;
    assert_int_equal(aitk_file_read(AITK_SOURCE_DIR "/models/cost.yaml", 1 << 20, &real, NULL,
                                    NULL),
                     AITK_OK);
    const char *at = strstr(real, key);
    assert_non_null(at);
    const char *rest = at + strlen(key);
    aitk_str edited = AITK_STR_INIT;
    if (value_only)
        aitk_str_appendf(&edited, "%.*s%s%s%s", (int)(at - real), real, key, text,
                         rest + strcspn(rest, "\n"));
    else
        aitk_str_appendf(&edited, "%.*s%s%s", (int)(at - real), real, text, rest);
    static const char *const others[] = {"models/gpus.yaml", "models/flux1-dev.yaml",
                                         "models/reported_speeds.yaml", NULL};
    char dir[] = "/tmp/aitk-models-XXXXXX";
    data_dir_make(dir, others, "models/cost.yaml", edited.ptr);
    expect_data_error(dir, (const char *[]){"predict", "--model", "flux1-dev", NULL},
                      "models/cost.yaml", words);
    data_dir_remove(dir, others, "models/cost.yaml");
    aitk_str_free(&edited);
    aitk_free(real);
}

static void test_broken_data(void **state)
{
    (void)state;
    static const char *const copies[] = {"models/gpus.yaml", "models/cost.yaml",
                                         "models/trainers.yaml", NULL};
    char dir[] = "/tmp/aitk-models-XXXXXX";
    data_dir_make(dir, copies, "models/chroma.yaml", "schema: 1\nid: chroma\ntitle: [unclosed\n");
    expect_data_error(dir, (const char *[]){"predict", "--model", "chroma", NULL},
                      "models/chroma.yaml", "");
    data_dir_remove(dir, copies, "models/chroma.yaml");
    /* Well-formed YAML with a width of 0, or one no model has: refused at the
     * value, not predicted as a meaningless number. */
    char *real = NULL;
    assert_int_equal(aitk_file_read(AITK_SOURCE_DIR "/models/chroma.yaml", 1 << 20, &real, NULL,
                                    NULL),
                     AITK_OK);
    static const struct {
        const char *value, *words;
    } bad[] = {{"0", "hidden must be at least 1"}, {"999999999", "larger than any model dimension"}};
    for (size_t i = 0; i < 2; i++) {
        const char *at = strstr(real, "\n  hidden: {value: 3072,");
        assert_non_null(at);
        aitk_str edited = AITK_STR_INIT;
        aitk_str_appendf(&edited, "%.*s\n  hidden: {value: %s,%s", (int)(at - real), real,
                         bad[i].value, at + strlen("\n  hidden: {value: 3072,"));
        char dir2[] = "/tmp/aitk-models-XXXXXX";
        data_dir_make(dir2, copies, "models/chroma.yaml", edited.ptr);
        expect_data_error(dir2, (const char *[]){"predict", "--model", "chroma", NULL},
                          "models/chroma.yaml", bad[i].words);
        data_dir_remove(dir2, copies, "models/chroma.yaml");
        aitk_str_free(&edited);
    }
    aitk_free(real);
    /* An efficiency out of its range in cost.yaml: refused at the value. So is
     * an attention share by compute capability above 1, and a capability
     * written another way, which would match no GPU. */
    expect_cost_yaml_error("\n  elementwise_chain_vs_copy:\n    value: ", "5", true,
                           "'elementwise_chain_vs_copy' is 5; it must be in (0, 1.2]");
    expect_cost_yaml_error("\n    \"8.6\":\n      fwd: ", "1.9", true,
                           "'fwd' is 1.9; it must be in (0, 1]");
    expect_cost_yaml_error("\n    \"8.6\":\n", "\n    \"8,6\":\n", false,
                           "'8,6' is not a compute capability");
}

/* The figures the sources give (models/reported_speeds.yaml; the generation runs:
 * varadrane1707/BenchmarkFlux, 28 steps in 15.65 s on an A100 and 7.11 s on
 * an H100), by report id. */
static const struct {
    const char *id, *gpu;
    double seconds, peak_gb; /* peak 0: none reported */
    bool generation;
    /* A report issue 5's factor-1.5 bound is known not to hold for yet (the
     * docs/predict.md or the row's `assumed` says why); its figures are still checked. */
    bool outside_bound;
    /* A reported peak the memory model is known to miss by more than 10%
     * (the comment at the row says by how much); checked to stay a miss. */
    bool peak_outside;
} sourced[] = {
    {"aitk-145-a40-batch1", "A40", 6.5, 0, false, false, false},
    {"aitk-145-a40-batch4", "A40", 22, 0, false, false, false},
    {"simpletuner-4090-512", "RTX 4090", 1.4, 0, false, false, false},
    {"simpletuner-4090-1024", "RTX 4090", 3.5, 0, false, false, false},
    {"simpletuner-1033-h100", "H100 SXM", 0.5, 0, false, false, false},
    /* The RTX A6000 table of 2024-08-19 (8.25, 7.99 and #2701's 7.83 s),
     * predicted 0.59-0.63 of it since attention on Ampere runs at the rate
     * measured there (models/cost.yaml attention_by_cc): open, the same
     * author's later rank-128 run on that GPU took 4.43 s (predicted 1.09x,
     * kohya-gui-secourses-a6000), and nothing in the 2024 report says what
     * made it twice as slow. */
    {"kohya-1374-a6000-bf16", "RTX A6000", 8.25, 44.18, false, true, false},
    {"kohya-1374-a6000-fp8", "RTX A6000", 7.99, 33.53, false, true, false},
    {"benchmarkflux-a100-gen", "A100 80GB SXM", 0.559, 0, true, false, false},
    {"benchmarkflux-h100-gen", "H100 SXM", 0.254, 0, true, false, false},
    /* Hugging Face's FLUX QLoRA blog: 700 optimizer steps in 41 min over 13
     * images, 4 steps of 4, 4, 4 and 1 passes an epoch, so 2275 passes
     * (2460 / 2275 x 4 = 4.325 s per 4 passes), about 9 GB; the FP8 run 700
     * steps in 20 min at 36.57 GB. */
    {"hfblog-qlora-4090-nf4", "RTX 4090", 4.325, 9, false, false, false},
    {"hfblog-fp8-h100", "H100 SXM", 1.714, 36.57, false, false, false},
    {"kohya-2701-a6000-fp16", "RTX A6000", 7.83, 44.14, false, true, false},
    /* Added 2026-12-04 (docs/predict.md, "Rows and sources"): SimpleTuner
     * PR #1184 and README; the diffusers QLoRA README, 1.5 h for 700 steps
     * (7.71 s), predicted 1.49x slower, just inside the bound; kohya_ss #2701
     * (bmaltais), sd-scripts #1445, fluxgym via ComfyUI-FluxTrainer #51,
     * fluxgym #164 (3 h / 1200), #57 (4 h / 3200) and #423 (4 h / 3200);
     * the SECourses video's runs with the T5 mask off. */
    {"simpletuner-1184-4090-fp8-r1", "RTX 4090", 4.25, 0, false, false, false},
    {"simpletuner-readme-4090-flux", "RTX 4090", 3.0, 0, false, false, false},
    {"diffusers-qlora-readme-4090-nf4", "RTX 4090", 7.71, 0, false, false, false},
    {"kohya-gui-2701-3090-bmaltais", "RTX 3090", 1.09, 0, false, false, false},
    {"kohya-1445-4060ti16-512", "RTX 4060 Ti 16GB", 3.0, 0, false, false, false},
    {"fluxgym-fluxtrainer51-4090-512", "RTX 4090", 1.2, 0, false, false, false},
    {"fluxgym-164-3090-1024", "RTX 3090", 9.0, 0, false, false, false},
    {"fluxgym-57-3090-1024", "RTX 3090", 4.5, 0, false, false, false},
    {"fluxgym-423-4080super-512", "RTX 4080 SUPER", 4.5, 0, false, false, false},
    {"kohya-gui-secourses-a6000", "RTX A6000", 4.43, 0, false, false, false},
    {"kohya-gui-secourses-a40", "A40", 4.85, 0, false, false, false},
    /* Added 2026-12-07: the same video with --apply_t5_attn_mask on, 8.5
     * s/it on the RTX A6000 and about 10 on the A40, priced since masked
     * attention is (models/cost.yaml masked_attention): 0.71 and 0.64 of
     * them, the A40's outside the factor 1.5 (docs/predict.md). */
    {"kohya-gui-secourses-a6000-t5-mask", "RTX A6000", 8.5, 0, false, false, false},
    {"kohya-gui-secourses-a40-t5-mask", "A40", 10.0, 0, false, false, false},
    /* The same author's earlier video, RTX A6000, 8.56 s/it: made after
     * the T5 mask reached attention, with his configs that had it on (the
     * row says why), so priced masked as the 8.5 s run above. */
    {"kohya-gui-secourses-zero2hero-a6000", "RTX A6000", 8.56, 0, false, false, false},
    /* Added 2026-12-05 by a third search, blind to the predictions: the
     * Hugging Face Space that ran ai-toolkit on an L4 (7.54 s/it in its cost
     * estimate) and fluxgym #8 on a Linux RTX 4090 (1.08 it/s). */
    {"aitk-hfspace-l4", "L4", 7.54, 0, false, false, false},
    {"fluxgym-8-4090-linux-512", "RTX 4090", 0.926, 0, false, false, false},
    /* Added 2026-12-05: the blog's Colab notebook on a T4 in fp16, 100
     * optimizer steps (325 passes over the 13 images) in about 30 minutes:
     * 1800 / 325 x 4 = 22.15 s per 4 passes. */
    {"hfblog-qlora-t4-nf4", "T4", 22.15, 0, false, false, false},
    /* Added 2026-12-06: SimpleTuner's segmented-checkpointing sweep, Chroma
     * bf16 at 512 px, post-warmup s/step and peak GiB (entered in GB,
     * x 1.0737): 0.454 s / 26.18 GiB and 1.276 s / 17.67 GiB on an H100,
     * 0.559 s / 26.13 GiB and 1.430 s / 17.63 GiB on an L40S. Without
     * checkpointing the peaks are predicted 1.08x (30.3 GB against 28.1,
     * 30.0 before its attention masks were counted, 1.15x before SimpleTuner's
     * frozen modulation was), with every
     * block checkpointed 1.09x and 1.10x (20.8 against 19.0 and 18.9, the
     * L40S's just past 10%): open, docs/predict.md says what is known. */
    {"simpletuner-segckpt-chroma-h100-bf16-nockpt", "H100 SXM", 0.454, 28.1, false, false, false},
    {"simpletuner-segckpt-chroma-h100-bf16-layer", "H100 SXM", 1.276, 19.0, false, false, false},
    {"simpletuner-segckpt-chroma-l40s-bf16-nockpt", "L40S", 0.559, 28.1, false, false, false},
    {"simpletuner-segckpt-chroma-l40s-bf16-layer", "L40S", 1.43, 18.9, false, false, true},
};

/* A generation run is one forward pass a step with no trainer in between:
 * the forward accounting is held to it more tightly than training is held
 * to the factor 1.5 (what is left open there: the GPU variant and
 * one prompt encoding and VAE decode in the end-to-end time, ~10%). */
#define GENERATION_FACTOR 1.25

static const cJSON *reported_row(const cJSON *doc, const char *id)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, "reported"))
        if (strcmp(cJSON_GetObjectItemCaseSensitive(row, "id")->valuestring, id) == 0)
            return row;
    fail_msg("no reported row '%s'", id);
    return NULL;
}

/* predict --reported: every sourced report is there with the figures its
 * source gives; the 4090 rows hold the sanity bound; the predicted
 * peaks are within 10% of those reported, but for the rows marked as known
 * misses (the memory model against the world, not against itself). */
static void test_reported(void **state)
{
    (void)state;
    char path[] = "/tmp/aitk-reported-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    ran r = run((const char *[]){"predict", "--reported", "--json", path, NULL});
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(aitk_str_cstr(&r.out), "ostris/ai-toolkit issue #145"));
    cJSON *j = load_json(path);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "reported")),
                     (int)(sizeof sourced / sizeof *sourced));
    for (size_t i = 0; i < sizeof sourced / sizeof *sourced; i++) {
        const cJSON *row = reported_row(j, sourced[i].id);
        const cJSON *rep = cJSON_GetObjectItemCaseSensitive(row, "reported");
        const cJSON *pred = cJSON_GetObjectItemCaseSensitive(row, "predicted");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(row, "gpu")->valuestring,
                            sourced[i].gpu);
        assert_float_equal(json_num(rep, "seconds_per_step"), sourced[i].seconds, 1e-9);
        const cJSON *setup = cJSON_GetObjectItemCaseSensitive(row, "setup");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(setup, "task")->valuestring,
                            sourced[i].generation ? "inference" : "training");
        double ratio = json_num(pred, "seconds_per_step") / sourced[i].seconds;
        assert_float_equal(json_num(row, "ratio"), ratio, 1e-9);
        if (sourced[i].peak_gb > 0) {
            assert_float_equal(json_num(rep, "peak_gb"), sourced[i].peak_gb, 1e-9);
            double m = json_num(pred, "peak_gb") / sourced[i].peak_gb;
            if ((m < 0.9 || m > 1.1) != sourced[i].peak_outside)
                fail_msg("%s: predicted peak %.1f GB, reported %.2f%s", sourced[i].id,
                         json_num(pred, "peak_gb"), sourced[i].peak_gb,
                         sourced[i].peak_outside ? " (marked as a known miss)" : "");
        }
        /* Issue 5's bound holds for the 4090 and A6000 reports (not yet for
         * the A40's: see docs/predict.md). */
        if ((strstr(sourced[i].id, "4090") || strstr(sourced[i].id, "a6000")) &&
            !sourced[i].outside_bound && (ratio > 1.5 || ratio < 1 / 1.5))
            fail_msg("%s: predicted/reported %.2f, outside the factor 1.5", sourced[i].id, ratio);
        /* A row marked as a known miss must still be one: a mark that no
         * longer holds is cleared here, so the bound then guards the row. */
        if (sourced[i].outside_bound && ratio <= 1.5 && ratio >= 1 / 1.5)
            fail_msg("%s: marked outside the bound, but predicted/reported is %.2f",
                     sourced[i].id, ratio);
        if (sourced[i].generation && (ratio > GENERATION_FACTOR || ratio < 1 / GENERATION_FACTOR))
            fail_msg("%s: predicted/reported %.2f, outside the factor %.2f", sourced[i].id, ratio,
                     GENERATION_FACTOR);
        /* No reported training step is shorter than its setup's hardware
         * bound (a row that were would not have run the setup assumed). */
        const cJSON *below = cJSON_GetObjectItemCaseSensitive(row, "below_floor");
        if (!sourced[i].generation && !cJSON_IsFalse(below))
            fail_msg("%s: below_floor is not false", sourced[i].id);
    }
    assert_non_null(strstr(aitk_str_cstr(&r.out), "2 of 2 generation runs"));
    /* The T4 notebook computed in fp16 (precision: fp16); the 4090 run of
     * the same blog in bf16. */
    const cJSON *t4 = cJSON_GetObjectItemCaseSensitive(reported_row(j, "hfblog-qlora-t4-nf4"),
                                                       "setup");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(t4, "precision")->valuestring, "fp16");
    const cJSON *rtx = cJSON_GetObjectItemCaseSensitive(reported_row(j, "hfblog-qlora-4090-nf4"),
                                                        "setup");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(rtx, "precision")->valuestring, "bf16");
    /* kohya's T5 mask is the row's own setting; SimpleTuner's Chroma mask
     * its trainer's (models/trainers.yaml attention_mask). */
    static const struct {
        const char *id, *mask;
    } masks[] = {{"kohya-gui-secourses-a6000-t5-mask", "per_head"},
                 {"kohya-gui-secourses-a6000", "none"},
                 {"simpletuner-segckpt-chroma-l40s-bf16-layer", "pairwise"}};
    for (size_t i = 0; i < sizeof masks / sizeof *masks; i++) {
        const cJSON *su = cJSON_GetObjectItemCaseSensitive(reported_row(j, masks[i].id), "setup");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(su, "attention_mask")->valuestring,
                            masks[i].mask);
    }
    assert_non_null(strstr(aitk_str_cstr(&r.out), "ckpt, amp, mask per_head"));
    cJSON_Delete(j);
    ran_free(&r);
    /* The trust summary under a plain prediction speaks of training jobs only. */
    size_t training = 0;
    for (size_t i = 0; i < sizeof sourced / sizeof *sourced; i++)
        training += !sourced[i].generation;
    r = run((const char *[]){"predict", "--model", "flux1-dev", "--gpu", "A40", "--json", path,
                             NULL});
    assert_int_equal(r.rc, 0);
    j = load_json(path);
    assert_int_equal((int)json_num(cJSON_GetObjectItemCaseSensitive(j, "against_reports"), "reports"),
                     (int)training);
    cJSON_Delete(j);
    unlink(path);
    ran_free(&r);
}

/* The A40 report ran ai-toolkit's FLUX example config: its row must be the
 * prediction `predict --config` makes from that config (two paths, one model). */
static void test_reported_matches_config(void **state)
{
    (void)state;
    char a[] = "/tmp/aitk-reported-XXXXXX", b[] = "/tmp/aitk-config-XXXXXX";
    int fa = mkstemp(a), fb = mkstemp(b);
    assert_true(fa >= 0 && fb >= 0);
    close(fa);
    close(fb);
    ran r1 = run((const char *[]){"predict", "--reported", "--json", a, NULL});
    ran r2 = run((const char *[]){"predict", "--config", FIXTURE("flux_24gb.yaml"), "--gpu", "A40",
                                  "--json", b, NULL});
    assert_int_equal(r1.rc, 0);
    assert_int_equal(r2.rc, 0);
    cJSON *ja = load_json(a), *jb = load_json(b);
    const cJSON *pred = cJSON_GetObjectItemCaseSensitive(reported_row(ja, "aitk-145-a40-batch1"),
                                                         "predicted");
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(jb, "predictions"), 0);
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "gpus"), 0);
    assert_float_equal(json_num(pred, "seconds_per_step"), json_num(g, "step_seconds"), 1e-9);
    assert_float_equal(json_num(pred, "peak_gb") * 1e9, json_num(g, "peak_bytes"), 1.0);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    unlink(a);
    unlink(b);
    ran_free(&r1);
    ran_free(&r2);
}

/* A report naming a GPU the database lacks: exit 2 at its line and column. */
static void test_reported_bad_data(void **state)
{
    (void)state;
    static const char *const copies[] = {"models/gpus.yaml", "models/cost.yaml",
                                         "models/flux1-dev.yaml", "models/trainers.yaml",
                                         NULL};
    char dir[] = "/tmp/aitk-reported-XXXXXX";
    data_dir_make(dir, copies, "models/reported_speeds.yaml",
                  "schema: 1\nreports:\n  - id: x\n    source: s\n    trainer: ai-toolkit\n"
                  "    gpu: Voodoo 5\n    model: flux1-dev\n    seconds_per_step: 1\n");
    expect_data_error(dir, (const char *[]){"predict", "--reported", NULL},
                      "models/reported_speeds.yaml", "unknown GPU 'Voodoo 5'");
    data_dir_remove(dir, copies, "models/reported_speeds.yaml");
    char dir2[] = "/tmp/aitk-reported-XXXXXX";
    data_dir_make(dir2, copies, "models/reported_speeds.yaml",
                  "schema: 1\nreports:\n  - id: x\n    source: s\n    trainer: ai-toolkit\n"
                  "    gpu: A40\n    model: flux1-dev\n    seconds_per_step: 1\n"
                  "    setup: {task: serving}\n");
    expect_data_error(dir2, (const char *[]){"predict", "--reported", NULL},
                      "models/reported_speeds.yaml:9:",
                      "task: expected training or inference, found 'serving'");
    data_dir_remove(dir2, copies, "models/reported_speeds.yaml");
}

/* The reviewer's cases end to end: a default of flux1-dev.yaml that predict
 * cannot use stops it with the file's line and column (exit 2); quantize:
 * fp4 no longer predicts "bf16 base weights". Column 17 or 21: the value
 * inside "  rank: {value: " or "  quantize: {value: ". */
static void test_broken_defaults(void **state)
{
    (void)state;
    static const char *const copies[] = {"models/gpus.yaml", "models/cost.yaml",
                                         "models/trainers.yaml", NULL};
    static const struct {
        const char *line, *with, *words;
    } bad[] = {
        {"\n  rank: {value: 16,", "\n  rank: {value: -1,",
         ":17: rank must be from 1 to 4096, found -1"},
        {"\n  resolution: {value: 1024,", "\n  resolution: {value: 100000,",
         ":23: resolution must be from 64 to 8192, found 100000"},
        {"\n  quantize: {value: fp8,", "\n  quantize: {value: fp4,",
         ":21: quantize must be one of fp8, nf4, none"},
        {"\n  optimizer: {value: adamw8bit,", "\n  optimizer: {value: sgd,",
         ":22: optimizer must be one of adamw, adamw8bit"},
    };
    char *real = NULL;
    assert_int_equal(aitk_file_read(AITK_SOURCE_DIR "/models/flux1-dev.yaml", 1 << 20, &real,
                                    NULL, NULL),
                     AITK_OK);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *at = strstr(real, bad[i].line);
        assert_non_null(at);
        int line = 2;
        for (const char *c = real; c < at; c++)
            line += *c == '\n';
        aitk_str edited = AITK_STR_INIT, words = AITK_STR_INIT;
        aitk_str_appendf(&edited, "%.*s%s%s", (int)(at - real), real, bad[i].with,
                         at + strlen(bad[i].line));
        aitk_str_appendf(&words, "models/flux1-dev.yaml:%d%s", line, bad[i].words);
        char dir[] = "/tmp/aitk-defaults-XXXXXX";
        data_dir_make(dir, copies, "models/flux1-dev.yaml", edited.ptr);
        expect_data_error(dir,
                          (const char *[]){"predict", "--model", "flux1-dev", "--gpu", "rtx4090",
                                           NULL},
                          "models/flux1-dev.yaml", aitk_str_cstr(&words));
        data_dir_remove(dir, copies, "models/flux1-dev.yaml");
        aitk_str_free(&edited);
        aitk_str_free(&words);
    }
    aitk_free(real);
}

/* Every data file predict reads says which format it is in (`schema: 1`): a
 * file of another version, a word instead of a number, or none at all is
 * refused at the key (exit 2), never read as if it were version 1. The
 * position is that of the file's own `schema: 1` line (column 9: the value). */
static void test_data_schema(void **state)
{
    (void)state;
    static const char *const all[] = {"models/gpus.yaml",       "models/cost.yaml",
                                      "models/flux1-dev.yaml", "models/chroma.yaml",
                                      "models/omnigen2.yaml",  "models/reported_speeds.yaml",
                                      "models/trainers.yaml",  NULL};
    static const char *const predict_chroma[] = {"predict", "--model", "chroma", "--gpu",
                                                 "rtx4090", NULL};
    static const char *const predict_omnigen2[] = {"predict", "--model", "omnigen2", "--gpu",
                                                   "rtx4090", NULL};
    static const char *const predict_flux[] = {"predict", "--model", "flux1-dev", "--gpu",
                                               "rtx4090", NULL};
    static const char *const reported[] = {"predict", "--reported", NULL};
    static const char *const *const cmd[] = {predict_flux,     predict_flux, predict_flux,
                                             predict_chroma,   predict_omnigen2, reported,
                                             predict_flux};
    static const struct {
        const char *value, *words; /* words: after "file:L:C: " */
    } variants[] = {
        {"schema: 2\n", "schema 2 is not supported (this build reads schema 1)"},
        {"schema: abc\n", "schema abc is not supported (this build reads schema 1)"},
        {"schema: \"1\"\n", "schema \"1\" is not supported (this build reads schema 1)"},
        {"schema: [1]\n", "schema must be a number, found a list (this build reads schema 1)"},
        {"", "no 'schema' (this build reads schema 1)"},
    };
    for (size_t f = 0; all[f]; f++) {
        aitk_str from = AITK_STR_INIT;
        aitk_str_appendf(&from, "%s/%s", AITK_SOURCE_DIR, all[f]);
        char *real = NULL;
        assert_int_equal(aitk_file_read(aitk_str_cstr(&from), 1 << 20, &real, NULL, NULL),
                         AITK_OK);
        const char *at = strstr(real, "\nschema: 1\n");
        assert_non_null(at);
        int line = 2;
        for (const char *c = real; c < at; c++)
            line += *c == '\n';
        for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
            aitk_str edited = AITK_STR_INIT, words = AITK_STR_INIT;
            aitk_str_appendf(&edited, "%.*s\n%s%s", (int)(at - real), real, variants[v].value,
                             at + strlen("\nschema: 1\n"));
            /* Without the key the place is the top level (its first key). */
            if (*variants[v].value)
                aitk_str_appendf(&words, "%s:%d:9: %s", all[f], line, variants[v].words);
            else
                aitk_str_append(&words, variants[v].words);
            char dir[] = "/tmp/aitk-schema-XXXXXX";
            data_dir_make(dir, all, all[f], edited.ptr);
            expect_data_error(dir, (const char *const *)cmd[f], all[f], aitk_str_cstr(&words));
            data_dir_remove(dir, all, all[f]);
            aitk_str_free(&edited);
            aitk_str_free(&words);
        }
        aitk_free(real);
        aitk_str_free(&from);
    }
}

int main(void)
{
    unsetenv("AITK_DATA_DIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits_with),      cmocka_unit_test(test_tight),
        cmocka_unit_test(test_validation_misses), cmocka_unit_test(test_job_options),
        cmocka_unit_test(test_host_bound),     cmocka_unit_test(test_omnigen2_kernels),
        cmocka_unit_test(test_windows_spill),
        cmocka_unit_test(test_flux_4090_json), cmocka_unit_test(test_flux_bf16_terms),
        cmocka_unit_test(test_sanity_bound_a40_a6000),
        cmocka_unit_test(test_explain_and_price), cmocka_unit_test(test_all),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_config_corpus_cli),
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_duplicates_once), cmocka_unit_test(test_quantize_nf4),
        cmocka_unit_test(test_dtype),
        cmocka_unit_test(test_gpus),           cmocka_unit_test(test_broken_data),
        cmocka_unit_test(test_reported),       cmocka_unit_test(test_reported_matches_config),
        cmocka_unit_test(test_reported_bad_data), cmocka_unit_test(test_data_schema),
        cmocka_unit_test(test_broken_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
