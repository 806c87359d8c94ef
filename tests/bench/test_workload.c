/* The reference-workload layer: the run plan file (and its errors, with
 * line and column), the documented target scaled to another GPU through the
 * cost model, the GPU hook's honest "not run", and one real short CPU run of
 * the training-step graph when this build has it. */
#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/config.h"
#include "bench/workload_step.h"
#include "bench/workload.h"
#include "bench/workload_kernels.h"
#include "common/fileio.h"
#include "kernels/backend.h"
#include "models/aitk_config.h"
#include "tests/bench/bt.h"

static void test_config_defaults(void **state)
{
    (void)state;
    aitk_bench_config *c = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_bench_config_load(&c, &err), 0);
    assert_true(c->cpu.tiny);
    assert_false(c->cuda.tiny);
    assert_int_equal(c->cpu.n_resolutions, 3);
    assert_int_equal(c->cpu.resolutions[0], 128);
    assert_int_equal(c->cpu.resolutions[2], 256);
    assert_int_equal(c->cpu.full_steps, 1000);
    assert_int_equal(c->cuda.n_resolutions, 0);
    assert_true(c->n_gemm >= 1);
    aitk_bench_config_free(c);
    aitk_str_free(&err);
}

/* Writes `text` as <tmp>/bench/workloads.yaml and loads it via AITK_DATA_DIR. */
static aitk_status load_text(const char *text, aitk_str *err)
{
    char dir[] = "/tmp/aitk-bench-cfg-XXXXXX";
    assert_non_null(mkdtemp(dir));
    aitk_str sub = AITK_STR_INIT, file = AITK_STR_INIT;
    aitk_path_join(&sub, dir, "bench");
    assert_int_equal(aitk_dir_create(sub.ptr, NULL), 0);
    aitk_path_join(&file, sub.ptr, "workloads.yaml");
    assert_int_equal(aitk_file_write_atomic(file.ptr, text, strlen(text), NULL), 0);
    setenv("AITK_DATA_DIR", dir, 1);
    aitk_bench_config *c = NULL;
    aitk_status st = aitk_bench_config_load(&c, err);
    unsetenv("AITK_DATA_DIR");
    aitk_bench_config_free(c);
    unlink(file.ptr);
    rmdir(sub.ptr);
    rmdir(dir);
    aitk_str_free(&sub);
    aitk_str_free(&file);
    return st;
}

#define BACKEND(res) \
    "    size: tiny\n    resolutions: " res "\n    standard_steps: 30\n" \
    "    full_steps: 1000\n    time_limit_s: 60\n"
#define MICRO MICRO_ONLY COLLECTIVES("4")
#define MICRO_ONLY                                                                         \
    "micro:\n  memcpy_mib: 8\n  gemm_resolution: 256\n  gemm: []\n"                        \
    "  attention_resolution: 256\n  attention: []\n  min_time_s: 0.1\n"
#define COLLECTIVES(factor)                                                                \
    "collectives:\n  min_mib: 1\n  max_mib: 16\n  factor: " factor "\n  warmup: 1\n"      \
    "  iters: 2\n"

static void test_config_errors_are_positioned(void **state)
{
    (void)state;
    aitk_str err = AITK_STR_INIT;
    /* Well formed: loads. */
    assert_int_equal(load_text("schema: 1\nbackends:\n  cpu:\n" BACKEND("[128]") "  cuda:\n"
                               BACKEND("[]") MICRO, &err), 0);
    /* 100 px is not a multiple of 16: line 5, column 18 (the item). */
    aitk_str_clear(&err);
    assert_int_equal(load_text("schema: 1\nbackends:\n  cpu:\n    size: tiny\n"
                               "    resolutions: [100]\n    standard_steps: 30\n"
                               "    full_steps: 1000\n    time_limit_s: 60\n  cuda:\n"
                               BACKEND("[]") MICRO, &err), AITK_E_RANGE);
    assert_non_null(strstr(err.ptr, "workloads.yaml:5:19"));
    assert_non_null(strstr(err.ptr, "multiple of 16"));
    /* A collectives factor of 1 would never reach max_mib: refused by name. */
    aitk_str_clear(&err);
    assert_int_equal(load_text("schema: 1\nbackends:\n  cpu:\n" BACKEND("[128]") "  cuda:\n"
                               BACKEND("[]") MICRO_ONLY COLLECTIVES("1"), &err),
                     AITK_E_RANGE);
    assert_non_null(strstr(err.ptr, "'factor' must be at least 2"));
    /* A typo is an error, not a silent default. */
    aitk_str_clear(&err);
    assert_int_not_equal(load_text("schema: 1\nbackends:\n  cpu:\n" BACKEND("[128]")
                                   "    standrd_steps: 3\n  cuda:\n" BACKEND("[]") MICRO, &err),
                         0);
    assert_non_null(strstr(err.ptr, "standrd_steps"));
    /* A missing backend. */
    aitk_str_clear(&err);
    assert_int_not_equal(load_text("schema: 1\nbackends:\n  cpu:\n" BACKEND("[128]") MICRO,
                                   &err), 0);
    assert_non_null(strstr(err.ptr, "cuda"));
    /* Another format version, a word, or none: refused at the key, not read
     * as if it were version 1. */
    aitk_str_clear(&err);
    assert_int_equal(load_text("schema: 2\nbackends:\n  cpu:\n" BACKEND("[128]") "  cuda:\n"
                               BACKEND("[]") MICRO, &err), AITK_E_PARSE);
    assert_non_null(strstr(err.ptr, "bench/workloads.yaml:1:9: schema 2 is not supported (this "
                                    "build reads schema 1)"));
    aitk_str_clear(&err);
    assert_int_equal(load_text("schema: abc\nbackends:\n  cpu:\n" BACKEND("[128]") "  cuda:\n"
                               BACKEND("[]") MICRO, &err), AITK_E_PARSE);
    assert_non_null(strstr(err.ptr, "workloads.yaml:1:9: schema abc is not supported"));
    aitk_str_clear(&err);
    assert_int_equal(load_text("backends:\n  cpu:\n" BACKEND("[128]") "  cuda:\n"
                               BACKEND("[]") MICRO, &err), AITK_E_PARSE);
    assert_non_null(strstr(err.ptr, "workloads.yaml:1:1: no 'schema' (this build reads "
                                    "schema 1)"));
    aitk_str_free(&err);
}

static void test_scaled_target(void **state)
{
    (void)state;
    aitk_gpudb *db = NULL;
    aitk_cost_params *p = NULL;
    aitk_model_spec *flux = NULL, *og = NULL;
    aitk_str err = AITK_STR_INIT, src = AITK_STR_INIT;
    assert_int_equal(aitk_gpudb_load(&db, &err), 0);
    assert_int_equal(aitk_cost_params_load(&p, &err), 0);
    assert_int_equal(aitk_model_spec_load("flux1-dev", false, &flux, &err), 0);
    assert_int_equal(aitk_model_spec_load("omnigen2", false, &og, &err), 0);
    const aitk_gpu_spec *g4090 = NULL, *h100 = NULL, *a100 = NULL, *tgt = NULL;
    assert_int_equal(aitk_gpudb_find(db, "RTX 4090", &g4090, &err), 0);
    assert_int_equal(aitk_gpudb_find(db, "H100 SXM", &h100, &err), 0);
    assert_int_equal(aitk_gpudb_find(db, "A100 40GB PCIe", &a100, &err), 0);
    double t;
    /* On the target GPU itself the target is the documented 45 min. */
    assert_int_equal(aitk_bench_scaled_target(flux, db, g4090, p, &t, &tgt, &src, &err), 0);
    assert_near(t, 45 * 60, 1e-6);
    assert_ptr_equal(tgt, g4090);
    assert_non_null(strstr(src.ptr, "seed guide"));
    /* An H100 (989 vs 165 dense bf16 TFLOP/s) is predicted faster. */
    aitk_str_clear(&src);
    assert_int_equal(aitk_bench_scaled_target(flux, db, h100, p, &t, &tgt, &src, &err), 0);
    assert_true(t < 45 * 60);
    /* "2 x A100": ambiguous A100 read as the first listed, two GPUs in data
     * parallel -> one A100 40GB PCIe needs 2 x 240 min = 28800 s. */
    aitk_str_clear(&src);
    assert_int_equal(aitk_bench_scaled_target(og, db, a100, p, &t, &tgt, &src, &err), 0);
    assert_near(t, 2 * 240 * 60, 1e-6);
    assert_non_null(strstr(src.ptr, "read as A100 40GB PCIe"));
    assert_non_null(strstr(src.ptr, "data parallel"));
    aitk_model_spec_free(flux);
    aitk_model_spec_free(og);
    aitk_cost_params_free(p);
    aitk_gpudb_free(db);
    aitk_str_free(&err);
    aitk_str_free(&src);
}

static void test_gpu_backend_is_not_faked(void **state)
{
    (void)state;
    aitk_bench_config *c = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_bench_config_load(&c, &err), 0);
    aitk_bench_device dev = {.backend = "cuda", .name = "GPU", .vram_bytes = 24e9};
    aitk_bench_request req = {.model_id = "flux1-dev", .device = &dev};
    cJSON *w = NULL;
    assert_int_equal(aitk_bench_workload_run(c, &req, &w), 0);
    assert_string_equal(cJSON_GetObjectItem(w, "status")->valuestring, "skipped");
    assert_non_null(strstr(cJSON_GetObjectItem(w, "message")->valuestring, "no GPU backend is open"));
    assert_null(cJSON_GetObjectItem(w, "time_per_1000_steps"));
    cJSON_Delete(w);
    /* An unknown model is a failed entry naming the problem, not a crash. */
    dev.backend = "cpu";
    req.model_id = "sdxl";
    assert_int_equal(aitk_bench_workload_run(c, &req, &w), 0);
    assert_string_equal(cJSON_GetObjectItem(w, "status")->valuestring, "failed");
    assert_non_null(strstr(cJSON_GetObjectItem(w, "message")->valuestring, "sdxl"));
    cJSON_Delete(w);
    aitk_bench_config_free(c);
    aitk_str_free(&err);
}

/* A GPU step may hold no more than the device had free when it began: past
 * that NVIDIA's Windows driver would spill it into system memory and time a
 * job that does not fit as if it did (NVIDIA support answer 5490). A
 * "GPU" that is the CPU reference with 64 MiB free: FLUX.1-dev at its real
 * size does not fit, and the entry says why, before anything is computed. */
static aitk_status tiny_free(size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = (size_t)64 << 20;
    *total_bytes = (size_t)80 << 30;
    return AITK_OK;
}

static void test_gpu_step_capped_at_free_memory(void **state)
{
    (void)state;
    aitk_bench_config *c = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_bench_config_load(&c, &err), 0);
    aitk_backend be = *aitk_backend_cpu();
    be.mem_info = tiny_free;
    aitk_bench_device dev = {.backend = "cuda", .name = "Small GPU", .vram_bytes = 80.0 * (1 << 30),
                             .impl = &be};
    aitk_bench_request req = {.model_id = "flux1-dev", .steps = 1, .device = &dev};
    cJSON *w = NULL;
    assert_int_equal(aitk_bench_workload_run(c, &req, &w), 0);
    assert_string_equal(cJSON_GetObjectItem(w, "status")->valuestring, "skipped");
    const char *msg = cJSON_GetObjectItem(w, "message")->valuestring;
    if (!strstr(msg, "does not fit on Small GPU") ||
        !strstr(msg, "may not hold more than the 0.06 GiB the device had free"))
        fail_msg("%s", msg);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(w, "memory"), "fits")));
    cJSON_Delete(w);
    aitk_bench_config_free(c);
    aitk_str_free(&err);
}

static void test_short_cpu_run(void **state)
{
    (void)state;
    aitk_bench_config *c = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_bench_config_load(&c, &err), 0);
    aitk_bench_device dev = {.backend = "cpu", .name = "test CPU", .vram_bytes = NAN};
    aitk_bench_request req = {.model_id = "chroma", .steps = 3, .device = &dev};
    cJSON *w = NULL;
    assert_int_equal(aitk_bench_workload_run(c, &req, &w), 0);
    const char *status = cJSON_GetObjectItem(w, "status")->valuestring;
    if (strcmp(status, "completed") != 0)
        fail_msg("chroma: %s: %s", status, cJSON_GetObjectItem(w, "message")->valuestring);
    const cJSON *steps = cJSON_GetObjectItem(w, "steps");
    assert_int_equal(cJSON_GetObjectItem(steps, "timed")->valueint, 3);
    assert_true(cJSON_GetObjectItem(steps, "warmup")->valueint >= 3);
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(w, "memory"), "peak_bytes")->valuedouble
                > 0);
    /* The step graph counts its FLOPs: a positive rate. */
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(w, "throughput"), "gflops")->valuedouble
                > 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(w, "buckets")), 3);
    /* Every step's loss is kept, warm-up included: first, last and a curve. */
    const cJSON *loss = cJSON_GetObjectItem(w, "loss");
    assert_non_null(loss);
    assert_int_equal(cJSON_GetObjectItem(loss, "steps")->valueint,
                     cJSON_GetObjectItem(steps, "timed")->valueint +
                         cJSON_GetObjectItem(steps, "warmup")->valueint);
    assert_true(cJSON_GetObjectItem(loss, "first")->valuedouble > 0);
    assert_true(cJSON_GetObjectItem(loss, "last")->valuedouble > 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(loss, "curve")),
                     cJSON_GetObjectItem(loss, "steps")->valueint);
    /* The kernels that ran, from the CPU backend's paths (kernels/cpu/backend.c
     * names them): its GEMM and its reference attention, both ways. */
    const cJSON *kernels = cJSON_GetObjectItem(w, "kernels");
    assert_int_equal(cJSON_GetArraySize(kernels), 3);
    static const char *const want[][2] = {
        {"gemm", "OpenBLAS sgemm (fp32)"},
        {"attention_forward", "CPU reference (fp32, row strips)"},
        {"attention_backward", "CPU reference (fp32, row strips)"},
    };
    for (int i = 0; i < 3; i++) {
        const cJSON *k = cJSON_GetArrayItem(kernels, i);
        assert_string_equal(cJSON_GetObjectItem(k, "op")->valuestring, want[i][0]);
        assert_string_equal(cJSON_GetObjectItem(k, "kernel")->valuestring, want[i][1]);
        assert_true(cJSON_GetObjectItem(k, "calls")->valuedouble >= 1);
    }
    cJSON_Delete(w);
    aitk_bench_config_free(c);
    aitk_str_free(&err);
}

/* A fake backend whose paths are set by the test. */
static aitk_backend_path fake_table[3];
static size_t fake_n;

static aitk_status fake_paths(aitk_backend_path *out, size_t cap, size_t *n)
{
    *n = fake_n < cap ? fake_n : cap;
    memcpy(out, fake_table, *n * sizeof *out);
    return AITK_OK;
}

static void fake_path(size_t i, const char *op, const char *kernel, long calls)
{
    snprintf(fake_table[i].op, sizeof fake_table[i].op, "%s", op);
    snprintf(fake_table[i].kernel, sizeof fake_table[i].kernel, "%s", kernel);
    fake_table[i].calls = calls;
}

/* A workload's kernels are the calls it made, not the counts since the
 * backend opened: 10 GEMMs and 2 cuDNN forwards before, 15 and 2 after, and
 * a plain backward that appeared: 5 GEMMs and 3 backwards are this
 * workload's, the forward is not listed. */
static void test_kernels_are_the_workloads_own(void **state)
{
    (void)state;
    aitk_backend be = {.name = "fake", .paths = fake_paths};
    fake_n = 2;
    fake_path(0, "gemm", "cuBLASLt bf16", 10);
    fake_path(1, "attention_forward", "cuDNN 9.14.0 fused SDPA", 2);
    aitk_bench_paths before, after;
    assert_int_equal(aitk_bench_paths_take(&be, &before), AITK_OK);
    fake_n = 3;
    fake_path(0, "gemm", "cuBLASLt bf16", 15);
    fake_path(2, "attention_backward", "plain kernel: cuDNN refused: head_dim", 3);
    assert_int_equal(aitk_bench_paths_take(&be, &after), AITK_OK);
    cJSON *w = cJSON_CreateObject();
    assert_int_equal(aitk_bench_paths_json(w, &before, &after), AITK_OK);
    const cJSON *k = cJSON_GetObjectItem(w, "kernels");
    assert_int_equal(cJSON_GetArraySize(k), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(k, 0), "op")->valuestring, "gemm");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(k, 0), "calls")->valueint, 5);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(k, 1), "kernel")->valuestring,
                        "plain kernel: cuDNN refused: head_dim");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(k, 1), "calls")->valueint, 3);
    cJSON_Delete(w);
    /* A backend without paths: no "kernels" at all, rather than an empty list
     * that would read as "nothing ran". */
    aitk_bench_paths_free(&before);
    be.paths = NULL;
    assert_int_equal(aitk_bench_paths_take(&be, &before), AITK_OK);
    w = cJSON_CreateObject();
    assert_int_equal(aitk_bench_paths_json(w, &before, &after), AITK_OK);
    assert_null(cJSON_GetObjectItem(w, "kernels"));
    cJSON_Delete(w);
    aitk_bench_paths_free(&before);
    aitk_bench_paths_free(&after);
}

/* The cost figures of the buckets (cost_model_gflop) of a short chroma run
 * with `params` lent (NULL: the workload loads models/cost.yaml itself). */
static void cost_gflops(const aitk_bench_config *c, const aitk_cost_params *params,
                        double gflop[3])
{
    aitk_bench_device dev = {.backend = "cpu", .name = "test CPU", .vram_bytes = NAN};
    aitk_bench_request req = {.model_id = "chroma", .steps = 1, .device = &dev,
                              .cost_params = params};
    cJSON *w = NULL;
    assert_int_equal(aitk_bench_workload_run(c, &req, &w), 0);
    const cJSON *buckets = cJSON_GetObjectItem(w, "buckets");
    assert_int_equal(cJSON_GetArraySize(buckets), 3);
    for (int b = 0; b < 3; b++)
        gflop[b] = cJSON_GetObjectItem(cJSON_GetArrayItem(buckets, b), "cost_model_gflop")
                       ->valuedouble;
    cJSON_Delete(w);
}

/* The cost model the caller lent is the one used (main.c loads cost.yaml for
 * --config's check and lends it, rather than having it read twice): with
 * attention's backward counted twice over, every bucket costs more. */
static void test_lent_cost_params_are_used(void **state)
{
    (void)state;
    aitk_bench_config *c = NULL;
    aitk_cost_params *p = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_bench_config_load(&c, &err), 0);
    assert_int_equal(aitk_cost_params_load(&p, &err), 0);
    double loaded[3], lent[3], heavier[3];
    cost_gflops(c, NULL, loaded);
    cost_gflops(c, p, lent);
    p->attn_bwd_factor *= 2;
    cost_gflops(c, p, heavier);
    for (int b = 0; b < 3; b++) {
        assert_true(loaded[b] > 0);
        assert_true(lent[b] == loaded[b]);
        if (!(heavier[b] > lent[b]))
            fail_msg("bucket %d: %g GFLOP with attention_bwd_factor doubled, %g without", b,
                     heavier[b], lent[b]);
    }
    aitk_cost_params_free(p);
    aitk_bench_config_free(c);
    aitk_str_free(&err);
}

/* An ai-toolkit job for chroma with these dataset buckets (LoRA rank 4,
 * batch 1, fp32 AdamW, no quantization: quick on the tiny model). */
static void chroma_job(const char *buckets, aitk_train_config *job)
{
    char text[1024];
    snprintf(text, sizeof text,
             "job: extension\nconfig:\n  name: buckets\n  process:\n"
             "    - type: sd_trainer\n      network: {type: lora, linear: 4, linear_alpha: 4}\n"
             "      datasets:\n        - folder_path: /data/set\n"
             "          cache_latents_to_disk: true\n          resolution: %s\n"
             "      train: {batch_size: 1, steps: 100, gradient_checkpointing: true, "
             "optimizer: adamw, dtype: bf16}\n"
             "      model: {name_or_path: lodestones/Chroma, arch: chroma}\n", buckets);
    aitk_str err = AITK_STR_INIT;
    if (aitk_config_parse("buckets.yaml", text, strlen(text), job, &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
}

/* The GPU path of a job with these buckets, run on the CPU backend at tiny
 * size (the plan, the one model and its switches are the GPU's; only the
 * operation table differs): its entry. */
static cJSON *gpu_path_run(aitk_bench_config *c, const char *buckets)
{
    aitk_train_config job;
    chroma_job(buckets, &job);
    c->cuda.tiny = true;
    aitk_bench_device dev = {.backend = "cuda", .name = "CPU as GPU", .vram_bytes = NAN,
                             .impl = aitk_backend_cpu()};
    aitk_bench_request req = {.model_id = "chroma", .steps = 2, .device = &dev,
                              .train = &job};
    cJSON *w = NULL;
    assert_int_equal(aitk_bench_workload_run(c, &req, &w), 0);
    aitk_config_free(&job);
    const char *status = cJSON_GetObjectItem(w, "status")->valuestring;
    if (strcmp(status, "completed") != 0)
        fail_msg("%s: %s: %s", buckets, status, cJSON_GetObjectItem(w, "message")->valuestring);
    return w;
}

/* A GPU runs every bucket of the job, on one model built for the largest:
 * each bucket is timed, the configuration names them, and the peak is the
 * one model's, as large as a job of the largest bucket alone. */
static void test_gpu_runs_the_jobs_buckets(void **state)
{
    (void)state;
    aitk_bench_config *c = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_bench_config_load(&c, &err), 0);
    cJSON *w = gpu_path_run(c, "[128, 256]");
    const cJSON *buckets = cJSON_GetObjectItem(w, "buckets");
    assert_int_equal(cJSON_GetArraySize(buckets), 2);
    const long want[2] = {128, 256};
    for (int b = 0; b < 2; b++) {
        const cJSON *o = cJSON_GetArrayItem(buckets, b);
        assert_int_equal(cJSON_GetObjectItem(o, "resolution")->valueint, want[b]);
        assert_true(cJSON_GetObjectItem(o, "steps")->valueint >= 1);
        printf("%ld px: %d timed steps, mean %.4f s\n", want[b],
               cJSON_GetObjectItem(o, "steps")->valueint,
               cJSON_GetObjectItem(o, "mean_s")->valuedouble);
    }
    const cJSON *conf = cJSON_GetObjectItem(w, "configuration");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(conf, "resolutions")), 2);
    const char *note = cJSON_GetObjectItem(conf, "buckets_note")->valuestring;
    printf("%s\n%s\n", cJSON_GetObjectItem(w, "title")->valuestring, note);
    assert_non_null(strstr(note, "128, 256 px"));
    assert_non_null(strstr(note, "built for 256 px"));
    const cJSON *loss = cJSON_GetObjectItem(w, "loss");
    assert_non_null(strstr(cJSON_GetObjectItem(loss, "of")->valuestring, "alternates"));
    const double peak =
        cJSON_GetObjectItem(cJSON_GetObjectItem(w, "memory"), "peak_bytes")->valuedouble;
    cJSON_Delete(w);
    w = gpu_path_run(c, "[256]");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(w, "buckets")), 1);
    const double alone =
        cJSON_GetObjectItem(cJSON_GetObjectItem(w, "memory"), "peak_bytes")->valuedouble;
    printf("peak %.0f B with buckets 128 and 256, %.0f B with 256 alone\n", peak, alone);
    if (!(peak == alone))
        fail_msg("peak %.0f B with buckets 128 and 256, %.0f B with 256 alone", peak, alone);
    cJSON_Delete(w);
    aitk_bench_config_free(c);
    aitk_str_free(&err);
}

/* One model cycling two buckets (the step adapter on the CPU backend): the
 * loss summary takes each bucket's own tenths. 20 steps, buckets 0 1 0 1
 * ...: the tenth of each bucket's 10 steps is its first (last) step, so the
 * expected means are those of steps 0 and 1 (18 and 19), worked out here
 * from the recorded losses. */
static void test_loss_summary_is_per_bucket(void **state)
{
    (void)state;
    aitk_model_spec *spec = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_model_spec_load("chroma", true, &spec, &err), 0);
    const long res[2] = {128, 256};
    aitk_bench_steps *s = NULL;
    if (aitk_bench_steps_create(spec, res, 2, NULL, aitk_backend_cpu(), 0, &s, NULL, &err))
        fail_msg("%s", aitk_str_cstr(&err));
    for (size_t i = 0; i < 20; i++) {
        aitk_bench_step_info info;
        assert_int_equal(aitk_bench_steps_run(s, i % 2, &info, &err), 0);
    }
    size_t n = 0;
    const double *loss = aitk_bench_steps_losses(s, &n);
    assert_int_equal(n, 20);
    aitk_bench_loss_summary sum;
    aitk_bench_steps_loss_summary(s, &sum);
    printf("losses: 128 px %.6f -> %.6f, 256 px %.6f -> %.6f\n", loss[0], loss[18], loss[1],
           loss[19]);
    /* the buckets do sit at different levels */
    assert_true(loss[0] != loss[1]);
    assert_true(sum.first_tenth_mean == (loss[0] + loss[1]) / 2);
    assert_true(sum.last_tenth_mean == (loss[18] + loss[19]) / 2);
    assert_true(sum.falls == (loss[18] < loss[0] && loss[19] < loss[1]));
    assert_true(sum.falls);
    aitk_bench_steps_free(s);
    aitk_model_spec_free(spec);
    aitk_str_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_errors_are_positioned),
        cmocka_unit_test(test_scaled_target),
        cmocka_unit_test(test_gpu_backend_is_not_faked),
        cmocka_unit_test(test_gpu_step_capped_at_free_memory),
        cmocka_unit_test(test_short_cpu_run),
        cmocka_unit_test(test_kernels_are_the_workloads_own),
        cmocka_unit_test(test_lent_cost_params_are_used),
        cmocka_unit_test(test_gpu_runs_the_jobs_buckets),
        cmocka_unit_test(test_loss_summary_is_per_bucket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
