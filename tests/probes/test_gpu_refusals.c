/* Every NVML and CUDA driver call the probes make, refused in turn by the
 * stub driver with an error the real driver documents for it. The probe must
 * record the refusal in the driver's words and leave the value out, never
 * put a default in its place; the checks built on a refused call must say
 * so. Expected texts are the stub's error strings (stub_nvml.c, stub_cuda.c)
 * and the figures of the stub's machine written here by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_test.h"

/* One RTX 4090 that drives a display: every optional figure has a value. */
#define ONE_GPU "driver=570.86.15;cuda=12080;gpu=NVIDIA GeForce RTX 4090|8.9|24564|display=1"

static const cJSON *env_part(const cJSON *report, const char *lib)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(report, "environment");
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(env, "gpu");
    const cJSON *part = cJSON_GetObjectItemCaseSensitive(gpu, lib);
    assert_non_null(part);
    return part;
}

static const cJSON *first_device(const cJSON *report, const char *lib)
{
    const cJSON *dev = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(env_part(report, lib), "devices"), 0);
    assert_non_null(dev);
    return dev;
}

/* "a.b" inside `o`, or NULL. */
static const cJSON *at_path(const cJSON *o, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = strtok(buf, "."); p && o; p = strtok(NULL, "."))
        o = cJSON_GetObjectItemCaseSensitive(o, p);
    return o;
}

static cJSON *run_refusing(const char *fn, int code, int *rc)
{
    char spec[512];
    snprintf(spec, sizeof spec, "refuse=%s:%d;%s", fn, code, ONE_GPU);
    const char *args[] = {"--quick", NULL};
    return pt_run(AITK_STUB_DIR, spec, args, NULL, rc);
}

typedef struct per_device_case {
    const char *lib;     /* "nvml" or "cuda_driver" */
    const char *fn;      /* the function refused */
    int code;            /* the error it answers */
    const char *words;   /* what the record must say */
    const char *absent;  /* the figure that must be missing */
    const char *present; /* a figure of another call that must still be there */
} per_device_case;

/* NOT_SUPPORTED (3) is what NVML answers for a query a GPU or driver lacks;
 * NO_PERMISSION (4), GPU_IS_LOST (15) and UNKNOWN (999) are the others its
 * reference lists for device queries. */
static const per_device_case device_cases[] = {
    {"nvml", "nvmlDeviceGetName", 15, "NVML error 15: GPU is lost", "name", "memory"},
    {"nvml", "nvmlDeviceGetUUID", 3, "NVML error 3: Not Supported", "uuid", "name"},
    {"nvml", "nvmlDeviceGetPciInfo_v3", 3, "NVML error 3: Not Supported", "pci_bus_id", "name"},
    {"nvml", "nvmlDeviceGetMemoryBusWidth", 3, "NVML error 3: Not Supported",
     "memory_bus_width_bits", "name"},
    {"nvml", "nvmlDeviceGetCurrPcieLinkGeneration", 3, "Not Supported", "pcie.generation",
     "pcie.width"},
    {"nvml", "nvmlDeviceGetMaxPcieLinkGeneration", 3, "Not Supported", "pcie.generation_max",
     "pcie.width_max"},
    {"nvml", "nvmlDeviceGetCurrPcieLinkWidth", 3, "Not Supported", "pcie.width",
     "pcie.generation"},
    {"nvml", "nvmlDeviceGetMaxPcieLinkWidth", 3, "Not Supported", "pcie.width_max",
     "pcie.generation_max"},
    {"nvml", "nvmlDeviceGetPowerManagementLimit", 4, "NVML error 4: Insufficient Permissions",
     "power_limit_w", "temperature_c"},
    {"nvml", "nvmlDeviceGetTemperature", 3, "Not Supported", "temperature_c", "power_limit_w"},
    {"nvml", "nvmlDeviceGetClockInfo", 3, "Not Supported", "clocks.sm_mhz", "clocks.sm_max_mhz"},
    {"nvml", "nvmlDeviceGetMaxClockInfo", 3, "Not Supported", "clocks.sm_max_mhz",
     "clocks.sm_mhz"},
    {"nvml", "nvmlDeviceGetEccMode", 3, "Not Supported", "ecc", "remapped_rows"},
    {"nvml", "nvmlDeviceGetRemappedRows", 3, "Not Supported", "remapped_rows", "ecc"},
    {"nvml", "nvmlDeviceGetRetiredPages", 3, "Not Supported", "retired_pages", "ecc"},
    {"nvml", "nvmlDeviceGetPersistenceMode", 3, "Not Supported", "persistence_mode",
     "mig_mode"},
    {"nvml", "nvmlDeviceGetMigMode", 3, "Not Supported", "mig_mode", "persistence_mode"},
    {"nvml", "nvmlDeviceGetDisplayActive", 3, "Not Supported", "display_active", "mig_mode"},
    {"nvml", "nvmlDeviceGetComputeRunningProcesses_v3", 3, "Not Supported",
     "compute_processes", "graphics_processes"},
    {"nvml", "nvmlDeviceGetGraphicsRunningProcesses_v3", 3, "Not Supported",
     "graphics_processes", "compute_processes"},
    {"cuda_driver", "cuDeviceGetName", 999, "CUDA_ERROR_UNKNOWN (999): unknown error", "name",
     "total_bytes"},
    {"cuda_driver", "cuDeviceGetAttribute", 101, "CUDA_ERROR_INVALID_DEVICE (101)",
     "compute_capability", "total_bytes"},
    {"cuda_driver", "cuDeviceTotalMem_v2", 999, "CUDA_ERROR_UNKNOWN (999)", "total_bytes",
     "name"},
};

static void test_each_device_query_refused(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof device_cases / sizeof *device_cases; i++) {
        const per_device_case *c = &device_cases[i];
        int rc = 0;
        cJSON *r = run_refusing(c->fn, c->code, &rc);
        const cJSON *dev = first_device(r, c->lib);
        const char *said = pt_text(cJSON_GetObjectItemCaseSensitive(dev, "refused"), c->fn);
        if (!strstr(said, c->words))
            fail_msg("%s refused with %d: recorded \"%s\", expected \"%s\"", c->fn, c->code, said,
                     c->words);
        if (at_path(dev, c->absent))
            fail_msg("%s refused, yet %s has a value", c->fn, c->absent);
        if (!at_path(dev, c->present))
            fail_msg("%s refused, and %s (another call) is missing too", c->fn, c->present);
        /* One refused figure is no reason to fail the GPU itself. */
        pt_assert_status(pt_check(r, "gpu.nvml"), "pass");
        cJSON_Delete(r);
    }
}

/* NVML and CUDA each answer the compute capability; refusing NVML's leaves
 * the driver's, marked with its source. */
static void test_compute_capability_from_driver(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = run_refusing("nvmlDeviceGetCudaComputeCapability", 3, &rc);
    const cJSON *dev = first_device(r, "nvml");
    assert_string_equal(pt_text(cJSON_GetObjectItemCaseSensitive(dev, "refused"),
                                "nvmlDeviceGetCudaComputeCapability"),
                        "NVML error 3: Not Supported");
    assert_string_equal(pt_text(dev, "compute_capability"), "8.9");
    assert_string_equal(pt_text(dev, "compute_capability_source"), "cuDeviceGetAttribute");
    cJSON_Delete(r);
}

static void test_init_refused(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = run_refusing("nvmlInit_v2", 9, &rc);
    assert_int_equal(rc, 1);
    assert_string_equal(pt_text(env_part(r, "nvml"), "init_error"),
                        "NVML error 9: Driver Not Loaded");
    pt_assert_status(pt_check(r, "gpu.nvml"), "fail");
    cJSON_Delete(r);
    r = run_refusing("cuInit", 100, &rc);
    assert_int_equal(rc, 1);
    const char *said = pt_text(env_part(r, "cuda_driver"), "init_error");
    assert_string_equal(said, "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected");
    pt_assert_status(pt_check(r, "gpu.cuda_driver"), "fail");
    cJSON_Delete(r);
}

/* A driver version that was not read is shown as unknown with NVML's words,
 * not as an empty "driver  (path)". */
static void test_driver_version_refused(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = run_refusing("nvmlSystemGetDriverVersion", 999, &rc);
    const cJSON *nvml = env_part(r, "nvml");
    assert_null(cJSON_GetObjectItemCaseSensitive(nvml, "driver_version"));
    assert_string_equal(pt_text(nvml, "driver_version_error"), "NVML error 999: Unknown Error");
    pt_assert_contains(pt_text(pt_check(r, "gpu.nvml"), "observed"),
                       "driver version unknown: NVML error 999");
    cJSON_Delete(r);
}

static void test_version_queries_refused(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = run_refusing("nvmlSystemGetCudaDriverVersion_v2", 3, &rc);
    assert_null(cJSON_GetObjectItemCaseSensitive(env_part(r, "nvml"), "cuda_driver_version"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(env_part(r, "nvml"), "driver_version"));
    cJSON_Delete(r);
    r = run_refusing("cuDriverGetVersion", 999, &rc);
    const cJSON *cu = env_part(r, "cuda_driver");
    assert_null(cJSON_GetObjectItemCaseSensitive(cu, "driver_api_version"));
    assert_string_equal(pt_text(cu, "version_error"), "CUDA_ERROR_UNKNOWN (999): unknown error");
    cJSON_Delete(r);
}

/* NVML cannot count the GPUs: the CUDA driver's list stands in. */
static void test_count_refused(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = run_refusing("nvmlDeviceGetCount_v2", 999, &rc);
    assert_string_equal(pt_text(env_part(r, "nvml"), "count_error"),
                        "NVML error 999: Unknown Error");
    pt_assert_status(pt_check(r, "gpu.count"), "pass");
    pt_assert_contains(pt_text(pt_check(r, "gpu.0"), "observed"), "RTX 4090");
    cJSON_Delete(r);
    r = run_refusing("cuDeviceGetCount", 999, &rc);
    assert_string_equal(pt_text(env_part(r, "cuda_driver"), "count_error"),
                        "CUDA_ERROR_UNKNOWN (999): unknown error");
    cJSON_Delete(r);
}

static void test_handle_refused(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = run_refusing("nvmlDeviceGetHandleByIndex_v2", 15, &rc);
    assert_string_equal(pt_text(first_device(r, "nvml"), "error"), "NVML error 15: GPU is lost");
    pt_assert_contains(pt_text(pt_check(r, "gpu.0"), "observed"), "GPU is lost");
    cJSON_Delete(r);
    r = run_refusing("cuDeviceGet", 101, &rc);
    assert_string_equal(pt_text(first_device(r, "cuda_driver"), "error"),
                        "CUDA_ERROR_INVALID_DEVICE (101)");
    cJSON_Delete(r);
}

/* Without NVML's shutdown answering, the run still ends as usual. */
static void test_shutdown_refused(void **state)
{
    (void)state;
    int rc = 0;
    cJSON *r = run_refusing("nvmlShutdown", 999, &rc);
    pt_assert_status(pt_check(r, "gpu.nvml"), "pass");
    pt_assert_status(pt_check(r, "gpu.vram.flux1-dev"), "pass");
    cJSON_Delete(r);
}

/* Each UUID call refused in turn: the other answers, and a whole GPU's UUID
 * keeps the "GPU-" prefix. The stub's GPU UUID is 0x11, zeros, ordinal. */
static void test_uuid_refused(void **state)
{
    (void)state;
    const char *fns[] = {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"};
    for (int i = 0; i < 2; i++) {
        int rc = 0;
        cJSON *r = run_refusing(fns[i], 999, &rc);
        const cJSON *dev = first_device(r, "cuda_driver");
        assert_string_equal(pt_text(dev, "uuid"), "GPU-11000000-0000-0000-0000-000000000000");
        pt_assert_contains(pt_text(cJSON_GetObjectItemCaseSensitive(dev, "refused"), fns[i]),
                           "CUDA_ERROR_UNKNOWN");
        cJSON_Delete(r);
    }
}

/* Without cuGetErrorName / cuGetErrorString the code is still reported. */
static void test_error_text_refused(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "refuse=cuInit:100;refuse=cuGetErrorName:1;" ONE_GPU, args,
                      NULL, &rc);
    assert_string_equal(pt_text(env_part(r, "cuda_driver"), "init_error"),
                        "CUDA error (100): no CUDA-capable device is detected");
    cJSON_Delete(r);
    r = pt_run(AITK_STUB_DIR, "refuse=cuInit:100;refuse=cuGetErrorString:1;" ONE_GPU, args, NULL,
               &rc);
    assert_string_equal(pt_text(env_part(r, "cuda_driver"), "init_error"),
                        "CUDA_ERROR_NO_DEVICE (100)");
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_device_query_refused),
        cmocka_unit_test(test_compute_capability_from_driver),
        cmocka_unit_test(test_init_refused),
        cmocka_unit_test(test_driver_version_refused),
        cmocka_unit_test(test_version_queries_refused),
        cmocka_unit_test(test_count_refused),
        cmocka_unit_test(test_handle_refused),
        cmocka_unit_test(test_shutdown_refused),
        cmocka_unit_test(test_uuid_refused),
        cmocka_unit_test(test_error_text_refused),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
