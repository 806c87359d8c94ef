/* A fake CUDA plugin with one pretend GPU, for testing what the validator
 * does with a plugin that answers (the micro suite's cuda entries) on a
 * machine without a GPU. Every figure is synthetic and known in advance:
 * a GEMM takes 1 ms (so TFLOP/s = 2mnk / 1e9), a copy 2 ms; a GEMM with
 * m = 4096, n = 12288 (FLUX img_mlp_in) fails as a device out of memory would. */
#include <stdio.h>
#include <string.h>

#include "kernels/cuda_plugin.h"

static aitk_status probe(aitk_cuda_probe_result *out)
{
    memset(out, 0, sizeof *out);
    out->runtime_version = out->driver_version = 13000;
    out->device_count = out->n_devices = 1;
    snprintf(out->devices[0].name, sizeof out->devices[0].name, "Fake GPU 9000");
    out->devices[0].cc_major = 9;
    out->devices[0].total_memory_bytes = 80ull << 30;
    out->devices[0].sm_count = 100;
    out->devices[0].clock_khz = 1500000;
    return AITK_OK;
}

static aitk_status gemm_bench(const aitk_cuda_gemm_args *a, aitk_cuda_gemm_result *out)
{
    memset(out, 0, sizeof *out);
    if (a->m == 4096 && a->n == 12288) {
        snprintf(out->error, sizeof out->error, "cudaMalloc(&g->w, ...) at gemm.c:1: "
                                                "cudaErrorMemoryAllocation: out of memory");
        return AITK_E_NOMEM; /* device memory: must not stop the suite */
    }
    out->median_ms = out->min_ms = out->max_ms = 1.0;
    out->tflops = 2.0 * (double)a->m * (double)a->n * (double)a->k / 1e9;
    out->repetitions = 5;
    out->matmuls_per_sample = 2;
    return AITK_OK;
}

static aitk_status gemm_run(int device, aitk_cuda_dtype dtype, long m, long n, long k,
                            const void *x, const void *w, uint16_t *y, char *error, size_t len)
{
    snprintf(error, len, "fake");
    return AITK_E_UNSUPPORTED;
}

static aitk_status memcpy_bench(int device, uint64_t bytes, double min_time_s,
                                aitk_cuda_memcpy_result *out)
{
    memset(out, 0, sizeof *out);
    out->median_ms = 2.0;
    out->gbs = 2.0 * (double)bytes / 2e-3 / 1e9;
    out->repetitions = 7;
    return AITK_OK;
}

static aitk_status attention_bench(const aitk_cuda_attention_args *a,
                                   aitk_cuda_attention_result *out)
{
    memset(out, 0, sizeof *out);
    return AITK_E_UNSUPPORTED;
}

static aitk_status attention_run(int device, long b, long t, long h, long d, const uint16_t *q,
                                 const uint16_t *k, const uint16_t *v, uint16_t *o, char *error,
                                 size_t len)
{
    return AITK_E_UNSUPPORTED;
}

static void plugin_close(void)
{
}

static const aitk_cuda_plugin table = {
    .abi_version = AITK_CUDA_PLUGIN_ABI, .build = "fake", .probe = probe,
    .gemm_bench = gemm_bench, .gemm_run = gemm_run, .memcpy_bench = memcpy_bench,
    .attention_bench = attention_bench, .attention_run = attention_run, .close = plugin_close};

const aitk_cuda_plugin *aitk_cuda_plugin_get(int abi_version);
const aitk_cuda_plugin *aitk_cuda_plugin_get(int abi_version)
{
    return abi_version == AITK_CUDA_PLUGIN_ABI ? &table : NULL;
}
