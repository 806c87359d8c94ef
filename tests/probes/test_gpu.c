/* GPU probe through the fake driver libraries: every case runs the real
 * binary, which dlopens the stubs found through LD_LIBRARY_PATH. Expected
 * figures are written here from the NVIDIA CUDA Toolkit Release Notes
 * (Table 3) and the ai-toolkit README, not taken from compat.yaml. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "probe_test.h"

/* The driver a CUDA 12.8 torch needs (Release Notes, Table 3): Linux and
 * Windows drivers are numbered apart. */
#ifdef _WIN32
#define DRIVER_MIN_CU128 "570.65"
#else
#define DRIVER_MIN_CU128 "570.26"
#endif

/* The remedies name the system's own tools. */
#ifdef _WIN32
#define REMEDY_INIT_WORDS "Restart Windows after a driver update"
#define REMEDY_CUINIT_WORDS "Device Manager"
#else
#define REMEDY_INIT_WORDS "Reboot"
#define REMEDY_CUINIT_WORDS "nvidia-uvm"
#endif

static const char *const torch_cu128[] = {"torch==2.7.0+cu128", "torchvision==0.22.0+cu128",
                                          "torchaudio==2.7.0+cu128", NULL};
static const char *const torch_cu126[] = {"torch==2.7.0+cu126", "torchvision==0.22.0+cu126",
                                          NULL};

static void test_no_driver(void **state)
{
    (void)state;
    char *empty = pt_tempdir("nodriver");
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(empty, NULL, args, NULL, &rc);
    assert_int_equal(rc, 1);
    const cJSON *c = pt_check(r, "gpu.nvml");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), PT_NVML_LIB);
    pt_assert_contains(pt_text(c, "message"), "No NVIDIA driver is present");
    pt_assert_contains(pt_text(c, "remedy"), "Install the NVIDIA driver");
    c = pt_check(r, "gpu.cuda_driver");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), PT_CUDA_LIB);
    /* One missing driver: NVML tells it, libcuda's failure follows. Not
     * under WSL, NVML's own link to gpu.wsl is dropped. */
    assert_string_equal(pt_text(c, "follows"), "gpu.nvml");
    assert_null(cJSON_GetObjectItem(pt_check(r, "gpu.nvml"), "follows"));
    const cJSON *first = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(r, "summary"), "fix_first"), 0);
    assert_string_equal(pt_text(first, "id"), "gpu.nvml");
    const cJSON *explains = cJSON_GetObjectItem(first, "explains");
    assert_int_equal(cJSON_GetArraySize(explains), 1);
    assert_string_equal(cJSON_GetArrayItem(explains, 0)->valuestring, "gpu.cuda_driver");
    /* Nothing about GPUs can be judged without a driver. */
    assert_null(pt_find_check(r, "gpu.count"));
    assert_null(pt_find_check(r, "gpu.vram.flux1-dev"));
    cJSON_Delete(r);
    free(empty);
}

static void test_driver_too_old_for_torch(void **state)
{
    (void)state;
    char *venv = pt_tempdir("venv-cu128");
    pt_fake_venv(venv, "3.12.3", torch_cu128, "12.8");
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "driver=535.104.05;cuda=12020;gpu=NVIDIA GeForce RTX 4090|8.9|24564",
                      args, NULL, &rc);
    assert_int_equal(rc, 1);
    const cJSON *c = pt_check(r, "gpu.nvml");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "535.104.05");
    c = pt_check(r, "gpu.driver_for_torch");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "expected"), DRIVER_MIN_CU128);
    pt_assert_contains(pt_text(c, "observed"), "535.104.05");
    pt_assert_contains(pt_text(c, "remedy"), DRIVER_MIN_CU128);
    pt_assert_contains(pt_text(c, "remedy"), "CUDA 12.2");
    pt_assert_contains(pt_text(c, "source"), "Table 3");
    pt_assert_contains(pt_text(c, "source"),
                       "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/");
    /* The 4090 itself is fine for a cu128 wheel (sm_89 runs sm_86 kernels). */
    pt_assert_status(pt_check(r, "gpu.arch_for_torch"), "pass");
    cJSON_Delete(r);
    free(venv);
}

static void test_driver_new_enough(void **state)
{
    (void)state;
    char *venv = pt_tempdir("venv-ok");
    pt_fake_venv(venv, "3.12.3", torch_cu128, "12.8");
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "driver=" DRIVER_MIN_CU128 ";cuda=12080;gpu=NVIDIA GeForce RTX 4090|8.9|24564",
                      args, NULL, &rc);
    pt_assert_status(pt_check(r, "gpu.driver_for_torch"), "pass");
    pt_assert_status(pt_check(r, "gpu.vram.flux1-dev"), "pass");
    cJSON_Delete(r);
    free(venv);
}

static void test_sm120_with_cu126(void **state)
{
    (void)state;
    char *venv = pt_tempdir("venv-cu126");
    pt_fake_venv(venv, "3.12.3", torch_cu126, "12.6");
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "driver=575.64.03;cuda=12090;gpu=NVIDIA GeForce RTX 5090|12.0|32607",
                      args, NULL, &rc);
    assert_int_equal(rc, 1);
    const cJSON *c = pt_check(r, "gpu.arch_for_torch");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "sm_120");
    pt_assert_contains(pt_text(c, "message"), "no kernel image is available");
    pt_assert_contains(pt_text(c, "expected"), "50 60 70 75 80 86 90");
    pt_assert_contains(pt_text(c, "remedy"), "torch 2.7 or newer");
    pt_assert_contains(pt_text(c, "remedy"), "whl/cu128");
    pt_assert_status(pt_check(r, "gpu.driver_for_torch"), "pass");
    cJSON_Delete(r);
    free(venv);
}

static void test_two_gpus_one_small(void **state)
{
    (void)state;
    const char *args[] = {"--quick", "--model", "flux1-dev", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR,
                      "driver=570.86.15;cuda=12080;gpu=NVIDIA GeForce RTX 4090|8.9|24564;"
                      "gpu=NVIDIA GeForce RTX 3060|8.6|12288",
                      args, NULL, &rc);
    pt_assert_status(pt_check(r, "gpu.count"), "pass");
    pt_assert_contains(pt_text(pt_check(r, "gpu.count"), "observed"), "2");
    const cJSON *c = pt_check(r, "gpu.vram.flux1-dev");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "expected"), ">= 24 GB");
    pt_assert_contains(pt_text(c, "observed"), "GPU 1 NVIDIA GeForce RTX 3060 12.0 GiB");
    pt_assert_contains(pt_text(c, "remedy"), "CUDA_VISIBLE_DEVICES=0");
    pt_assert_contains(pt_text(c, "source"), "24 GB");
    pt_assert_contains(pt_text(c, "source"), "https://github.com/ostris/ai-toolkit");
    /* --model limits the workloads judged. */
    assert_null(pt_find_check(r, "gpu.vram.chroma"));
    cJSON_Delete(r);
}

/* A "24 GB" card with ECC on reports 22.5 GiB: still the 24 GB class. A
 * 20 GB card is not. */
static void test_vram_card_class(void **state)
{
    (void)state;
    const char *args[] = {"--quick", "--model", "flux1-dev", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "gpu=NVIDIA L4|8.9|23034", args, NULL, &rc);
    pt_assert_status(pt_check(r, "gpu.vram.flux1-dev"), "pass");
    cJSON_Delete(r);
    r = pt_run(AITK_STUB_DIR, "gpu=NVIDIA RTX 4000 Ada Generation|8.9|20475", args, NULL, &rc);
    pt_assert_status(pt_check(r, "gpu.vram.flux1-dev"), "fail");
    cJSON_Delete(r);
}

static void test_only_small_gpu(void **state)
{
    (void)state;
    const char *args[] = {"--quick", "--model", "flux1-dev", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "gpu=NVIDIA GeForce RTX 3060|8.6|12288", args, NULL, &rc);
    const cJSON *c = pt_check(r, "gpu.vram.flux1-dev");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "remedy"), "quantize: true");
    assert_int_equal(rc, 1);
    cJSON_Delete(r);
}

static void test_nvml_ok_driver_api_fails(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "cu_init=999;gpu=NVIDIA A100-SXM4-80GB|8.0|81920", args, NULL,
                      &rc);
    assert_int_equal(rc, 1);
    pt_assert_status(pt_check(r, "gpu.nvml"), "pass");
    const cJSON *c = pt_check(r, "gpu.cuda_driver");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "CUDA_ERROR_UNKNOWN");
    pt_assert_contains(pt_text(c, "message"), "NVML sees the GPU");
    pt_assert_contains(pt_text(c, "remedy"), REMEDY_CUINIT_WORDS);
    /* NVML still describes the GPU. */
    pt_assert_contains(pt_text(pt_check(r, "gpu.0"), "observed"), "A100");
    cJSON_Delete(r);
}

static void test_required_symbol_missing(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(PT_DIRS(AITK_STUB_NOSYM_DIR, AITK_STUB_DIR), "gpu=NVIDIA L4|8.9|23034", args, NULL,
                      &rc);
    const cJSON *c = pt_check(r, "gpu.cuda_driver");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "cuDeviceTotalMem_v2");
    pt_assert_contains(pt_text(c, "message"), "required functions are missing");
    pt_assert_status(pt_check(r, "gpu.nvml"), "pass");
    cJSON_Delete(r);
}

static void test_nvml_symbol_missing(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(PT_DIRS(AITK_STUB_NVML_NOSYM_DIR, AITK_STUB_DIR), "gpu=NVIDIA L4|8.9|23034", args,
                      NULL, &rc);
    const cJSON *c = pt_check(r, "gpu.nvml");
    pt_assert_status(c, "fail");
#ifdef _WIN32
    /* Installed where the driver puts it: System32. */
    pt_assert_contains(pt_text(c, "observed"), "\\nvml.dll lacks nvmlDeviceGetMemoryInfo");
#else
    pt_assert_contains(pt_text(c, "observed"), "stub-nvml-nosym/libnvidia-ml.so.1 lacks nvmlDeviceGetMemoryInfo");
#endif
    /* The driver API still answers and describes the GPU. */
    pt_assert_status(pt_check(r, "gpu.cuda_driver"), "pass");
    pt_assert_contains(pt_text(pt_check(r, "gpu.0"), "observed"), "NVIDIA L4, sm_89, 22 GB");
    cJSON_Delete(r);
}

static void test_nvml_init_fails(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "nvml_init=18;cu_init=803;gpu=NVIDIA L4|8.9|23034", args, NULL,
                      &rc);
    const cJSON *c = pt_check(r, "gpu.nvml");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "NVML error 18");
    pt_assert_contains(pt_text(c, "remedy"), REMEDY_INIT_WORDS);
    pt_assert_contains(pt_text(pt_check(r, "gpu.cuda_driver"), "observed"),
                       "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
    cJSON_Delete(r);
}

static void test_mig_enabled(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "gpu=NVIDIA H100 80GB HBM3|9.0|81559|mig=1", args, NULL, &rc);
    const cJSON *c = pt_check(r, "gpu.0");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "message"), "MIG mode is enabled");
    pt_assert_contains(pt_text(c, "remedy"), "nvidia-smi -i 0 -mig 0");
    /* The environment record keeps the raw facts. */
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
    const cJSON *dev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(env, "gpu"), "nvml"),
        "devices"), 0);
    assert_string_equal(pt_text(cJSON_GetObjectItemCaseSensitive(dev, "mig_mode"), "current"), "enabled");
    assert_string_equal(pt_text(dev, "pci_bus_id"), "00000000:01:00.0");
    /* Values the stub answers (stub_nvml.c), each through its own query. */
    const cJSON *pcie = cJSON_GetObjectItemCaseSensitive(dev, "pcie");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(pcie, "generation")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(pcie, "generation_max")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(pcie, "width_max")->valueint, 16);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(dev, "temperature_c")->valueint, 41);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(dev, "memory_bus_width_bits")->valueint, 384);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(dev, "power_limit_w")->valueint, 450);
    const cJSON *clocks = cJSON_GetObjectItemCaseSensitive(dev, "clocks");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(clocks, "sm_max_mhz")->valueint, 3120);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(clocks, "memory_mhz")->valueint, 10501);
    cJSON_Delete(r);
}

static const cJSON *nvml_device(const cJSON *r, int i)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(env, "gpu"), "nvml"),
        "devices"), i);
}

static int number_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
    if (!cJSON_IsNumber(x))
        fail_msg("%s.%s is not a number", a, b);
    return x->valueint;
}

/* NVLink per GPU and the pairs' PCIe ancestor, as the stub answers them:
 * GPU 0 with 18 active NVLink 4.0 links (nvmlNvlinkVersion_t 6), GPU 1
 * with 16, GPU 2 without NVLink (NOT_SUPPORTED for link 0: active_links 0,
 * no version); every pair "SYSTEM" (50). */
static void test_nvlink_and_topology(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR,
                      "gpu=NVIDIA H100 80GB HBM3|9.0|81559|nvlink=18.6;"
                      "gpu=NVIDIA H100 80GB HBM3|9.0|81559|nvlink=16.6;"
                      "gpu=NVIDIA L40S|8.9|46068", args, NULL, &rc);
    assert_int_equal(number_at(nvml_device(r, 0), "nvlink", "active_links"), 18);
    assert_int_equal(number_at(nvml_device(r, 0), "nvlink", "version"), 6);
    assert_int_equal(number_at(nvml_device(r, 1), "nvlink", "active_links"), 16);
    assert_int_equal(number_at(nvml_device(r, 2), "nvlink", "active_links"), 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(nvml_device(r, 2), "nvlink"), "version"));
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
    const cJSON *topo = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(env, "gpu"), "nvml"),
        "topology");
    /* Three GPUs: pairs (0,1), (0,2), (1,2). */
    assert_int_equal(cJSON_GetArraySize(topo), 3);
    const cJSON *p = cJSON_GetArrayItem(topo, 2);
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "gpus"), 0)->valueint, 1);
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "gpus"), 1)->valueint, 2);
    assert_string_equal(pt_text(p, "common_ancestor"), "SYSTEM");
    cJSON_Delete(r);
}

/* A refusal of link 0 other than NOT_SUPPORTED is recorded in NVML's words
 * and no link count is made up. */
static void test_nvlink_refused(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR,
                      "refuse=nvmlDeviceGetNvLinkState:999;"
                      "gpu=NVIDIA H100 80GB HBM3|9.0|81559|nvlink=18.6", args, NULL, &rc);
    const cJSON *dev = nvml_device(r, 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(dev, "nvlink"));
    pt_assert_contains(pt_text(cJSON_GetObjectItemCaseSensitive(dev, "refused"),
                               "nvmlDeviceGetNvLinkState"), "NVML error 999");
    cJSON_Delete(r);
}

static void test_display_attached(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "gpu=NVIDIA GeForce RTX 4090|8.9|24564|display=1", args, NULL, &rc);
    const cJSON *c = pt_check(r, "gpu.0");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "remedy"), "low_vram: true");
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_driver),
        cmocka_unit_test(test_driver_too_old_for_torch),
        cmocka_unit_test(test_driver_new_enough),
        cmocka_unit_test(test_sm120_with_cu126),
        cmocka_unit_test(test_two_gpus_one_small),
        cmocka_unit_test(test_vram_card_class),
        cmocka_unit_test(test_only_small_gpu),
        cmocka_unit_test(test_nvml_ok_driver_api_fails),
        cmocka_unit_test(test_required_symbol_missing),
        cmocka_unit_test(test_nvml_symbol_missing),
        cmocka_unit_test(test_nvml_init_fails),
        cmocka_unit_test(test_mig_enabled),
        cmocka_unit_test(test_display_attached),
        cmocka_unit_test(test_nvlink_and_topology),
        cmocka_unit_test(test_nvlink_refused),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
