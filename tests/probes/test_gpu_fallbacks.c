/* The probes' fallbacks, each driven by a stub that lacks what the newest
 * path needs: older function names (a driver from before them), a figure
 * NVML refuses that the CUDA driver answers, a MIG compute instance. The
 * expected values are the stub machine's figures, written here by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_test.h"

static const cJSON *env_part(const cJSON *report, const char *lib)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(report, "environment");
    const cJSON *part = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(env, "gpu"), lib);
    assert_non_null(part);
    return part;
}

static const cJSON *device(const cJSON *report, const char *lib, int i)
{
    const cJSON *dev = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(env_part(report, lib), "devices"), i);
    assert_non_null(dev);
    return dev;
}

static double number(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        fail_msg("%s is not a number", key);
    return v->valuedouble;
}

static const char *const quick[] = {"--quick", NULL};

/* Only nvmlInit, nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex,
 * nvmlSystemGetCudaDriverVersion, nvmlDeviceGetPciInfo_v2, the v1 process
 * lists and cuDeviceGetUuid: each older name answers in place of the newer. */
static void test_old_driver(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_OLD_DIR,
                      "driver=418.87.01;cuda=10010;gpu=Tesla V100-SXM2-16GB|7.0|16160;"
                      "gpu=Tesla T4|7.5|15109|display=1",
                      quick, NULL, &rc);
    const cJSON *nvml = env_part(r, "nvml");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(nvml, "loaded")));
    assert_string_equal(pt_text(nvml, "driver_version"), "418.87.01");
    assert_int_equal((int)number(nvml, "cuda_driver_version"), 10010);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(nvml, "devices")), 2);
    /* The old struct has the bus id where busIdLegacy is and reserved words
     * where busId is: the id comes from the numbers (bus 2 for the second). */
    assert_string_equal(pt_text(device(r, "nvml", 1), "pci_bus_id"), "00000000:02:00.0");
    assert_int_equal((int)number(device(r, "nvml", 1), "graphics_processes"), 1);
    assert_int_equal((int)number(device(r, "nvml", 0), "compute_processes"), 0);
    assert_string_equal(pt_text(device(r, "cuda_driver", 0), "uuid"),
                        "GPU-11000000-0000-0000-0000-000000000000");
    pt_assert_status(pt_check(r, "gpu.nvml"), "pass");
    pt_assert_status(pt_check(r, "gpu.cuda_driver"), "pass");
    cJSON_Delete(r);
}

/* Each older name refused in turn, on the old driver: the refusal is the
 * one recorded (so the older name was the one called), in NVML's words. */
static void test_old_names_refused(void **state)
{
    (void)state;
    static const struct { const char *fn; const char *absent; } device_calls[] = {
        {"nvmlDeviceGetPciInfo_v2", "pci_bus_id"},
        {"nvmlDeviceGetComputeRunningProcesses", "compute_processes"},
        {"nvmlDeviceGetGraphicsRunningProcesses", "graphics_processes"},
    };
    char spec[256];
    for (size_t i = 0; i < sizeof device_calls / sizeof *device_calls; i++) {
        snprintf(spec, sizeof spec, "refuse=%s:3;gpu=Tesla T4|7.5|15109|display=1",
                 device_calls[i].fn);
        int rc = 0;
        cJSON *r = pt_run(AITK_STUB_OLD_DIR, spec, quick, NULL, &rc);
        const cJSON *dev = device(r, "nvml", 0);
        assert_string_equal(pt_text(cJSON_GetObjectItemCaseSensitive(dev, "refused"),
                                    device_calls[i].fn),
                            "NVML error 3: Not Supported");
        assert_null(cJSON_GetObjectItemCaseSensitive(dev, device_calls[i].absent));
        cJSON_Delete(r);
    }
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_OLD_DIR, "refuse=nvmlInit:9;gpu=Tesla T4|7.5|15109", quick, NULL, &rc);
    assert_string_equal(pt_text(env_part(r, "nvml"), "init_error"), "NVML error 9: Driver Not Loaded");
    cJSON_Delete(r);
    r = pt_run(AITK_STUB_OLD_DIR, "refuse=nvmlDeviceGetCount:999;gpu=Tesla T4|7.5|15109", quick, NULL, &rc);
    assert_string_equal(pt_text(env_part(r, "nvml"), "count_error"), "NVML error 999: Unknown Error");
    cJSON_Delete(r);
    r = pt_run(AITK_STUB_OLD_DIR, "refuse=nvmlDeviceGetHandleByIndex:15;gpu=Tesla T4|7.5|15109", quick,
               NULL, &rc);
    assert_string_equal(pt_text(device(r, "nvml", 0), "error"), "NVML error 15: GPU is lost");
    cJSON_Delete(r);
    r = pt_run(AITK_STUB_OLD_DIR, "refuse=nvmlSystemGetCudaDriverVersion:3;gpu=Tesla T4|7.5|15109",
               quick, NULL, &rc);
    assert_null(cJSON_GetObjectItemCaseSensitive(env_part(r, "nvml"), "cuda_driver_version"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(env_part(r, "nvml"), "driver_version"));
    cJSON_Delete(r);
    /* The middle of the process-list chain: the _v2 graphics list. */
    r = pt_run(AITK_STUB_NO_V3_DIR,
               "refuse=nvmlDeviceGetGraphicsRunningProcesses_v2:3;gpu=NVIDIA A40|8.6|46068|display=1",
               quick, NULL, &rc);
    assert_string_equal(pt_text(cJSON_GetObjectItemCaseSensitive(device(r, "nvml", 0), "refused"),
                                "nvmlDeviceGetGraphicsRunningProcesses_v2"),
                        "NVML error 3: Not Supported");
    cJSON_Delete(r);
}

/* The _v2 process lists (R450-R470) when _v3 is absent: a refusal of _v2
 * names _v2, which shows the middle of the chain was the one called. */
static void test_processes_v2(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_NO_V3_DIR, "gpu=NVIDIA A40|8.6|46068|display=1", quick, NULL, &rc);
    assert_int_equal((int)number(device(r, "nvml", 0), "graphics_processes"), 1);
    cJSON_Delete(r);
    r = pt_run(AITK_STUB_NO_V3_DIR,
               "refuse=nvmlDeviceGetComputeRunningProcesses_v2:3;gpu=NVIDIA A40|8.6|46068", quick,
               NULL, &rc);
    const cJSON *refused = cJSON_GetObjectItemCaseSensitive(device(r, "nvml", 0), "refused");
    assert_string_equal(pt_text(refused, "nvmlDeviceGetComputeRunningProcesses_v2"),
                        "NVML error 3: Not Supported");
    assert_null(cJSON_GetObjectItemCaseSensitive(device(r, "nvml", 0), "compute_processes"));
    cJSON_Delete(r);
}

/* DGX Spark (GB10) answers NOT_SUPPORTED to nvmlDeviceGetMemoryInfo: the
 * CUDA driver's total for the same card (same PCI bus id) is the figure. */
static void test_memory_from_driver(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR,
                      "refuse=nvmlDeviceGetMemoryInfo:3;gpu=NVIDIA GeForce RTX 4070|8.9|12282", quick,
                      NULL, &rc);
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(device(r, "nvml", 0), "memory");
    assert_non_null(mem);
    assert_true(number(mem, "total_bytes") == 12282.0 * 1048576.0);
    assert_string_equal(pt_text(mem, "source"), "cuDeviceTotalMem_v2");
    /* 12 GB is short of the 24 GB FLUX needs: judged on the driver's figure. */
    const cJSON *c = pt_check(r, "gpu.vram.flux1-dev");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "12.0 GiB");
    cJSON_Delete(r);
}

/* Neither library reports the memory: every gpu.vram check says unknown,
 * with the driver's words, and none passes (it did, with an empty observed
 * value, when NVML refused). */
static void test_memory_unknown_never_passes(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR,
                      "refuse=nvmlDeviceGetMemoryInfo:3;refuse=cuDeviceTotalMem_v2:999;"
                      "gpu=NVIDIA GB10|12.1|0",
                      quick, NULL, &rc);
    const char *models[] = {"gpu.vram.flux1-dev", "gpu.vram.chroma", "gpu.vram.omnigen2"};
    for (int i = 0; i < 3; i++) {
        const cJSON *c = pt_check(r, models[i]);
        pt_assert_status(c, "warn");
        pt_assert_contains(pt_text(c, "observed"), "memory unknown (NVML error 3: Not Supported)");
        pt_assert_contains(pt_text(c, "message"), "is unknown");
    }
    cJSON_Delete(r);
}

/* With NVML alone refusing and the CUDA driver absent, too. */
static void test_memory_unknown_without_driver_api(void **state)
{
    (void)state;
    int rc = 0;
    char *nocuda = pt_tempdir("nvml-only");
    /* Only NVML: a folder holding the stub NVML alone. */
    pt_nvml_only(AITK_STUB_DIR, nocuda);
    cJSON *r = pt_run(nocuda, "refuse=nvmlDeviceGetMemoryInfo:3;gpu=NVIDIA GeForce RTX 4090|8.9|24564",
                      quick, NULL, &rc);
    pt_assert_status(pt_check(r, "gpu.cuda_driver"), "fail");
    /* NVML answered: libcuda's absence is a failure of its own. */
    assert_null(cJSON_GetObjectItem(pt_check(r, "gpu.cuda_driver"), "follows"));
    pt_assert_status(pt_check(r, "gpu.vram.flux1-dev"), "warn");
    cJSON_Delete(r);
    free(nocuda);
}

/* One GPU known to fit and one whose memory neither library reports: a
 * warning that names the good one, not a pass. */
static void test_one_known_one_unknown(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR,
                      "refuse=nvmlDeviceGetMemoryInfo@1:3;refuse=cuDeviceTotalMem_v2@1:999;"
                      "gpu=NVIDIA RTX A6000|8.6|49140;gpu=NVIDIA RTX A6000|8.6|49140",
                      quick, NULL, &rc);
    const cJSON *c = pt_check(r, "gpu.vram.flux1-dev");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "observed"), "GPU 0 NVIDIA RTX A6000 48.0 GiB");
    pt_assert_contains(pt_text(c, "observed"), "GPU 1 NVIDIA RTX A6000 memory unknown");
    pt_assert_contains(pt_text(c, "message"), "the memory of 1 other GPU is unknown");
    pt_assert_contains(pt_text(c, "remedy"), "CUDA_VISIBLE_DEVICES=0");
    cJSON_Delete(r);
}

/* A CUDA device that is a MIG compute instance: its UUID is the instance's,
 * printed as nvidia-smi -L prints it, and its memory (a slice) never stands
 * in for the GPU's. */
static void test_mig_instance_uuid(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR,
                      "refuse=nvmlDeviceGetMemoryInfo:3;refuse=nvmlDeviceGetPciInfo_v3:3;"
                      "gpu=NVIDIA A100-SXM4-80GB|8.0|9728|mig_instance=1",
                      quick, NULL, &rc);
    const cJSON *cu = device(r, "cuda_driver", 0);
    assert_string_equal(pt_text(cu, "uuid"), "MIG-4d000000-0000-0000-0000-000000000000");
    assert_string_equal(pt_text(cu, "gpu_uuid"), "GPU-11000000-0000-0000-0000-000000000000");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cu, "mig_instance")));
    assert_null(cJSON_GetObjectItemCaseSensitive(device(r, "nvml", 0), "memory"));
    pt_assert_status(pt_check(r, "gpu.vram.flux1-dev"), "warn");
    cJSON_Delete(r);
}

/* No compute capability from either library: whether torch has kernels for
 * the GPU is unknown, a warning, never a pass. */
static void test_compute_capability_unknown(void **state)
{
    (void)state;
    static const char *const torch[] = {"torch==2.7.0+cu128", "torchvision==0.22.0+cu128", NULL};
    char *venv = pt_tempdir("venv-cc");
    pt_fake_venv(venv, "3.12.3", torch, "12.8");
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR,
                      "refuse=nvmlDeviceGetCudaComputeCapability:3;refuse=cuDeviceGetAttribute:999;"
                      "gpu=NVIDIA GeForce RTX 4090|8.9|24564",
                      args, NULL, &rc);
    const cJSON *c = pt_check(r, "gpu.arch_for_torch");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "observed"), "compute capability unknown");
    cJSON_Delete(r);
    free(venv);
}

/* A driver with none of the optional functions: the probes run on what is
 * required, the figures of the absent calls are missing (not invented), and
 * the checks built on required figures still judge. */
static void test_required_functions_only(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_MINIMAL_DIR, "refuse=cuInit:100;gpu=NVIDIA L4|8.9|23034", quick,
                      NULL, &rc);
    const cJSON *dev = device(r, "nvml", 0);
    assert_string_equal(pt_text(dev, "name"), "NVIDIA L4");
    const char *absent[] = {"uuid", "pci_bus_id", "compute_capability", "memory_bus_width_bits",
                            "power_limit_w", "temperature_c", "ecc", "remapped_rows",
                            "retired_pages", "persistence_mode", "mig_mode", "display_active",
                            "compute_processes", "graphics_processes", "refused"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
        if (cJSON_GetObjectItemCaseSensitive(dev, absent[i]))
            fail_msg("%s has a value though its function is absent", absent[i]);
    assert_null(cJSON_GetObjectItemCaseSensitive(env_part(r, "nvml"), "cuda_driver_version"));
    /* No error-text functions: the code alone. */
    assert_string_equal(pt_text(env_part(r, "cuda_driver"), "init_error"), "CUDA error (100)");
    /* The L4's 22.5 GiB is a 24 GB-class card (ECC reserves 1/16). */
    pt_assert_status(pt_check(r, "gpu.vram.flux1-dev"), "pass");
    pt_assert_status(pt_check(r, "gpu.nvml"), "pass");
    cJSON_Delete(r);
    /* No nvmlErrorString: an NVML error is its number alone. */
    r = pt_run(AITK_STUB_MINIMAL_DIR, "refuse=nvmlDeviceGetHandleByIndex_v2:15;gpu=NVIDIA L4|8.9|23034",
               quick, NULL, &rc);
    assert_string_equal(pt_text(device(r, "nvml", 0), "error"), "NVML error 15");
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_old_driver),
        cmocka_unit_test(test_processes_v2),
        cmocka_unit_test(test_old_names_refused),
        cmocka_unit_test(test_memory_from_driver),
        cmocka_unit_test(test_memory_unknown_never_passes),
        cmocka_unit_test(test_memory_unknown_without_driver_api),
        cmocka_unit_test(test_one_known_one_unknown),
        cmocka_unit_test(test_mig_instance_uuid),
        cmocka_unit_test(test_compute_capability_unknown),
        cmocka_unit_test(test_required_functions_only),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
