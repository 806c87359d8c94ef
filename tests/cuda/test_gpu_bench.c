/* GPU: the plugin's figures are plausible for the detected GPU, judged
 * against its datasheet row in bench/gpus.yaml:
 * - device copy bandwidth > 0 and below 2x the datasheet DRAM bandwidth
 *   (read + written bytes are counted, so a copy at the full datasheet rate
 *   would already show 1x; 2x catches a factor-of-two counting slip and
 *   anything that never reached DRAM);
 * - bf16 GEMM TFLOP/s at a full-size FLUX Linear > 0 and below 1.3x the
 *   datasheet dense bf16 peak (boost clocks and rounding in datasheets leave
 *   some margin; beyond 1.3x the FLOP count or the timing is wrong);
 * - the reference attention kernel gives a positive rate.
 * Exits 77 when no GPU answers, and after the > 0 checks when the GPU has no
 * row in bench/gpus.yaml (the ceilings cannot be judged: not a pass). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "models/gpudb.h"
#include "tests/cuda/cuda_test.h"

static const aitk_cuda_plugin *gpu;
static const aitk_gpu_spec *spec; /* NULL: not in the database */

static void test_memcpy_bandwidth(void **state)
{
    (void)state;
    aitk_cuda_memcpy_result r;
    if (gpu->memcpy_bench(0, 256ull << 20, 0.2, &r))
        fail_msg("memcpy_bench: %s", r.error);
    print_message("device copy: %.0f GB/s (median %.3f ms over %ld copies of 256 MiB)\n", r.gbs,
                  r.median_ms, r.repetitions);
    assert_true(r.gbs > 0);
    assert_true(r.repetitions >= 5);
    if (spec) {
        print_message("datasheet: %.0f GB/s (%s)\n", spec->bandwidth_gbs, spec->name);
        assert_true(r.gbs < 2.0 * spec->bandwidth_gbs);
    }
}

static void test_gemm_rate(void **state)
{
    (void)state;
    /* FLUX double_stream img_mlp_in at 1024 px: 4096 image tokens, 3072 -> 12288. */
    aitk_cuda_gemm_args a = {.device = 0, .m = 4096, .n = 12288, .k = 3072,
                             .dtype = AITK_CUDA_BF16, .min_time_s = 0.3};
    aitk_cuda_gemm_result r;
    if (gpu->gemm_bench(&a, &r))
        fail_msg("gemm_bench: %s", r.error);
    print_message("bf16 GEMM 4096x12288x3072: %.1f TFLOP/s (median %.3f ms, %ld samples of %ld; "
                  "%s)\n", r.tflops, r.median_ms, r.repetitions, r.matmuls_per_sample, r.algo);
    assert_true(r.tflops > 0);
    assert_true(r.min_ms <= r.median_ms && r.median_ms <= r.max_ms);
    if (spec) {
        print_message("datasheet: %.0f TFLOP/s bf16 dense (%s)\n", spec->bf16_tflops, spec->name);
        assert_true(r.tflops < 1.3 * spec->bf16_tflops);
    }
}

static void test_attention_rate(void **state)
{
    (void)state;
    /* FLUX joint attention at 512 px: 1024 image + 512 text tokens, 24 heads of 128. */
    aitk_cuda_attention_args a = {.device = 0, .batch = 1, .tokens = 1536, .heads = 24,
                                  .head_dim = 128, .min_time_s = 0.2};
    aitk_cuda_attention_result r;
    if (gpu->attention_bench(&a, &r))
        fail_msg("attention_bench: %s", r.error);
    print_message("attention (%s): %.2f TFLOP/s, median %.3f ms\n", r.kernel, r.tflops,
                  r.median_ms);
    assert_true(r.tflops > 0);
    assert_non_null(strstr(r.kernel, "reference"));
    if (spec)
        assert_true(r.tflops < 1.3 * spec->bf16_tflops);
}

int main(void)
{
    gpu = cuda_test_device(); /* exit 77 without a GPU */
    aitk_gpudb *db = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_gpudb_load(&db, &err) ||
        aitk_gpudb_find(db, cuda_test_probe.devices[0].name, &spec, &err)) {
        fprintf(stderr, "no datasheet row for %s: %s\n", cuda_test_probe.devices[0].name,
                aitk_str_cstr(&err));
        spec = NULL;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memcpy_bandwidth),
        cmocka_unit_test(test_gemm_rate),
        cmocka_unit_test(test_attention_rate),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    aitk_gpudb_free(db);
    aitk_str_free(&err);
    if (rc == 0 && !spec) {
        fprintf(stderr, "skipped: the ceilings need the GPU's row in bench/gpus.yaml\n");
        return 77;
    }
    return rc;
}
