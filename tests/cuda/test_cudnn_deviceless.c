/* The CUDA plugin's cuDNN attention graphs, planned by the real cuDNN for
 * each GPU architecture of cudnn_devices.yaml without a GPU.
 *
 * Since cuDNN 9.8 a device-properties descriptor stands in for the handle
 * (NVIDIA's cuDNN frontend documentation, "Deviceless Ahead-of-time
 * Compilation"): the operation graph, the engine heuristic and the
 * execution plan are built for that device. The plan of a runtime-compiled
 * engine then compiles its kernel (NVRTC) and loads it with the CUDA driver,
 * which this test gives cuDNN as the toolkit's stub libcuda (LD_LIBRARY_PATH,
 * set by CMake): the load answers CUDA_ERROR_STUB_LIBRARY, and cuDNN
 * CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER. A plan that got that far has
 * passed every check cuDNN makes before the device, so either answer counts
 * as planned; an engine list that is empty, or a graph or plan refused for
 * another reason, fails the test with cuDNN's own words.
 *
 * The same graph code (attention_cudnn_graph.c) and plan code (cudnn_api.c)
 * run in the plugin. Held here: the forward node and the composite backward
 * for FLUX's attention at 1024 and 512 px, OmniGen2's grouped heads, and a
 * small shape; what cuDNN says of the SDPA_BWD node is printed, not judged
 * (on cuDNN 9.19 it refuses the node at the operation graph, as it did on an
 * H200; 9.26 at the heuristic; 9.28 plans it). Skipped (77) without cuDNN
 * 9.8 or the stub driver. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAKS_NOT_OURS_BEGIN() __lsan_disable()
#define LEAKS_NOT_OURS_END() __lsan_enable()
#else
#define LEAKS_NOT_OURS_BEGIN() ((void)0)
#define LEAKS_NOT_OURS_END() ((void)0)
#endif

#include "common/yaml.h"
#include "kernels/cuda/attention_check.h"
#include "kernels/cuda/attention_cudnn_graph.h"
#include "kernels/cuda/cudnn_api.h"

enum { MAX_DEVICES = 16 };

typedef struct device {
    char name[64];
    long cc; /* deviceVer: compute capability x 100 */
    aitk_dnn_desc prop;
} device;

static device devices[MAX_DEVICES];
static int n_devices;

/* The JSON of one cudnn_devices.yaml entry: the fields a device-properties
 * descriptor requires (cuDNN names each missing one when finalizing; 9.28
 * added memoryBusWidth, and older versions ignore it). */
static void device_json(aitk_str *j, const aitk_yaml_node *e, long cc)
{
    static const char *const from_yaml[] = {
        "multiProcessorCount", "maxSharedMemoryPerBlockOptin", "maxThreadsPerSM", "maxCtasPerSM",
        "l2CacheSize",         "smClockRateKHz",               "memClockRateKHz",
        "memoryBusWidth"};
    aitk_str_appendf(j, "{\"maxGridSize\":[2147483647,65535,65535],\"maxBlockSize\":[1024,1024,64],"
                        "\"regsPerBlock\":65536,\"warpSize\":32,\"maxSharedMemoryPerBlock\":49152,"
                        "\"reservedSharedMemoryPerBlock\":1024,\"maxRegistersPerSM\":65536,"
                        "\"maxThreadsPerBlock\":1024,\"pciDeviceId\":0,\"isTccDriver\":0,"
                        "\"supportCoopLaunch\":1,\"totalGlobalMem\":85899345920,"
                        "\"cudaDeviceId\":0,\"driverVer\":13000,\"deviceVer\":%ld",
                     cc);
    for (size_t i = 0; i < sizeof from_yaml / sizeof *from_yaml; i++) {
        const aitk_yaml_node *v = aitk_yaml_get(e, from_yaml[i]);
        assert_non_null(v);
        aitk_str_appendf(j, ",\"%s\":%s", from_yaml[i], v->text);
    }
    aitk_str_appendf(j, ",\"deviceName\":\"%s\"}", aitk_yaml_get(e, "name")->text);
}

static int load_devices(void)
{
    aitk_yaml_doc *doc = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_yaml_load_file(AITK_SOURCE_DIR "/tests/cuda/cudnn_devices.yaml", &doc, &err)) {
        fprintf(stderr, "%s\n", aitk_str_cstr(&err));
        return -1;
    }
    const aitk_yaml_node *list = aitk_yaml_get(doc->root, "devices");
    int listed = list ? (int)list->count : 0;
    for (size_t i = 0; list && i < list->count && n_devices < MAX_DEVICES; i++) {
        const aitk_yaml_node *e = list->items[i];
        device *d = &devices[n_devices];
        aitk_str j = AITK_STR_INIT;
        if (aitk_yaml_long(doc, aitk_yaml_get(e, "deviceVer"), &d->cc, &err))
            break;
        snprintf(d->name, sizeof d->name, "%s", aitk_yaml_get(e, "name")->text);
        device_json(&j, e, d->cc);
        cudnnStatus_t s = aitk_dnn_device_from_json(&d->prop, aitk_str_cstr(&j));
        if (s)
            fprintf(stderr, "%s: device properties refused: %s\n", d->name,
                    aitk_dnn.GetErrorString(s));
        else
            n_devices++;
        aitk_str_free(&j);
    }
    aitk_yaml_free(doc);
    aitk_str_free(&err);
    return n_devices == listed && n_devices > 0 ? 0 : -1;
}

typedef struct shape {
    const char *what;
    int b, t, hq, hkv, d;
} shape;

static const shape shapes[] = {
    {"FLUX.1-dev at 1024 px (4096 image + 512 text tokens)", 1, 4608, 24, 24, 128},
    {"FLUX.1-dev at 512 px", 1, 1536, 24, 24, 128},
    {"OmniGen2's grouped heads (21 query, 7 key/value, head_dim 120)", 1, 4352, 21, 7, 120},
    {"a small batch-2 case", 2, 256, 4, 4, 64},
};

/* Plans `kind` for the shape on the device: the status, and in *what and
 * *configs where it stopped and how many engines the heuristic offered. */
static cudnnStatus_t plan(const device *dev, const shape *s, aitk_sdpa_graph_kind kind,
                          const char **what, int64_t *configs)
{
    aitk_sdpa_graph g;
    *configs = 0;
    cudnnStatus_t st = aitk_sdpa_graph_build(&g, kind, s->b, s->t, s->hq, s->hkv, s->d, what);
    if (st)
        return st;
    aitk_dnn_target target = {.handle = NULL, .device = dev->prop};
    aitk_dnn_desc p = NULL;
    int64_t workspace = 0;
    /* cuDNN's runtime compiler keeps buffers of each kernel it compiles for
     * the life of the process, in memory no library maps (LeakSanitizer's
     * "<unknown module>"): not this project's to free, so not reported. */
    LEAKS_NOT_OURS_BEGIN();
    st = aitk_dnn_plan(&target, g.ops, g.nops, &p, &workspace, configs, what);
    LEAKS_NOT_OURS_END();
    if (p)
        aitk_dnn.DestroyDescriptor(p);
    aitk_sdpa_graph_free(&g);
    return st;
}

static bool planned(cudnnStatus_t st, const char *what)
{
    return st == CUDNN_STATUS_SUCCESS ||
           (st == CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER && !strcmp(what, "execution plan"));
}

/* Every shape the plugin would send to cuDNN (attention_check's refusals
 * skip the rest, as they do in the plugin) plans on every device. */
static void check_kind(aitk_sdpa_graph_kind kind, bool backward)
{
    int version = (int)aitk_dnn.GetVersion(), held = 0;
    for (int i = 0; i < n_devices; i++) {
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
            const shape *s = &shapes[k];
            const char *refusal = aitk_attention_cudnn_refusal(
                version, (int)(devices[i].cc / 100), s->b, s->t, s->hq, s->hkv, s->d, backward);
            if (refusal) {
                print_message("%s, %s: not sent to cuDNN: %s\n", devices[i].name, s->what,
                              refusal);
                continue;
            }
            const char *what = "";
            int64_t configs = 0;
            cudnnStatus_t st = plan(&devices[i], s, kind, &what, &configs);
            print_message("%s, %s, %s: %s at %s, %lld engine configurations\n", devices[i].name,
                          aitk_sdpa_graph_name(kind), s->what, aitk_dnn.GetErrorString(st), what,
                          (long long)configs);
            if (!planned(st, what))
                fail_msg("%s: cuDNN %d did not plan the %s for %s: %s at %s", devices[i].name,
                         version, aitk_sdpa_graph_name(kind), s->what,
                         aitk_dnn.GetErrorString(st), what);
            held++;
        }
    }
    assert_true(held > 0);
}

static void test_forward_node_plans(void **state)
{
    (void)state;
    check_kind(AITK_SDPA_FORWARD, false);
}

static void test_composite_backward_plans(void **state)
{
    (void)state;
    check_kind(AITK_SDPA_BACKWARD_COMPOSITE, true);
}

/* What the library says of the single backward node: printed for the
 * record, since the plugin tries it only after the composite graph. */
static void test_backward_node_reported(void **state)
{
    (void)state;
    if ((int)aitk_dnn.GetVersion() < AITK_CUDNN_SDPA_BWD_NODE_VERSION)
        skip();
    const char *what = "";
    int64_t configs = 0;
    cudnnStatus_t st = plan(&devices[0], &shapes[0], AITK_SDPA_BACKWARD_NODE, &what, &configs);
    print_message("%s, SDPA_BWD node, %s: %s at %s\n", devices[0].name, shapes[0].what,
                  aitk_dnn.GetErrorString(st), what);
    assert_true(*what != '\0');
}

/* The oracle can say no: a head_dim cuDNN's SDPA does not support (264,
 * past every engine's 256) is refused before any plan reaches the driver. */
static void test_unsupported_shape_refused(void **state)
{
    (void)state;
    const shape wide = {"head_dim 264", 1, 256, 2, 2, 264};
    for (int i = 0; i < n_devices; i++) {
        const char *what = "";
        int64_t configs = 0;
        cudnnStatus_t st = plan(&devices[i], &wide, AITK_SDPA_BACKWARD_COMPOSITE, &what, &configs);
        print_message("%s, composite backward, %s: %s at %s\n", devices[i].name, wide.what,
                      aitk_dnn.GetErrorString(st), what);
        assert_false(planned(st, what));
    }
}

/* Which failed plan builds are cached as the shape's refusal: cuDNN's
 * 2xxx and 3xxx answers; a failed compile (4xxx) or a kernel the driver
 * could not load (5xxx) is tried again. Runs without cuDNN. */
static void test_refusals_that_last(void **state)
{
    (void)state;
    assert_true(aitk_dnn_refusal_lasts(CUDNN_STATUS_BAD_PARAM));
    assert_true(aitk_dnn_refusal_lasts(CUDNN_STATUS_NOT_SUPPORTED));
    assert_true(aitk_dnn_refusal_lasts(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH));
    assert_true(aitk_dnn_refusal_lasts(CUDNN_STATUS_NOT_SUPPORTED_SHAPE));
    assert_true(aitk_dnn_refusal_lasts(CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT));
    assert_false(aitk_dnn_refusal_lasts(CUDNN_STATUS_SUCCESS));
    assert_false(aitk_dnn_refusal_lasts(CUDNN_STATUS_INTERNAL_ERROR));
    assert_false(aitk_dnn_refusal_lasts(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED));
    assert_false(aitk_dnn_refusal_lasts(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED));
    assert_false(aitk_dnn_refusal_lasts(CUDNN_STATUS_EXECUTION_FAILED));
    assert_false(aitk_dnn_refusal_lasts(CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER));
    assert_false(aitk_dnn_refusal_lasts(CUDNN_STATUS_NOT_INITIALIZED));
}

/* Tries that all failed report the first failure that does not last, so
 * the shape is tried again, and else the latest refusal. */
static void test_failures_folded(void **state)
{
    (void)state;
    const cudnnStatus_t none = CUDNN_STATUS_NOT_SUPPORTED, bad = CUDNN_STATUS_BAD_PARAM,
                        refused = CUDNN_STATUS_NOT_SUPPORTED_SHAPE,
                        compile = CUDNN_STATUS_INTERNAL_ERROR,
                        load = CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
    assert_int_equal(aitk_dnn_fold_failure(none, bad), bad);
    assert_int_equal(aitk_dnn_fold_failure(aitk_dnn_fold_failure(none, bad), refused), refused);
    cudnnStatus_t s = aitk_dnn_fold_failure(aitk_dnn_fold_failure(none, refused), compile);
    assert_int_equal(s, compile);
    assert_int_equal(aitk_dnn_fold_failure(s, load), compile);
    assert_int_equal(aitk_dnn_fold_failure(s, bad), compile);
}

int main(void)
{
    const struct CMUnitTest always[] = {cmocka_unit_test(test_refusals_that_last),
                                        cmocka_unit_test(test_failures_folded)};
    if (cmocka_run_group_tests(always, NULL, NULL))
        return 1;
    if (!aitk_dnn_load()) {
        printf("skipped: %s\n", aitk_dnn_load_error());
        return 77;
    }
    if (aitk_dnn.GetVersion() < 90800) {
        printf("skipped: cuDNN %zu has no device-properties descriptor (9.8 and later)\n",
               aitk_dnn.GetVersion());
        return 77;
    }
    /* AITK_CUDNN_VERSION_AT_LEAST: the run means another cuDNN than the
     * toolkit's (realworld.linux.cudnn_deviceless, pip's wheel); a lower one
     * loaded instead fails rather than passing for the wrong library. */
    printf("cuDNN %zu\n", aitk_dnn.GetVersion());
    const char *want = getenv("AITK_CUDNN_VERSION_AT_LEAST");
    if (want && aitk_dnn.GetVersion() < strtoul(want, NULL, 10)) {
        printf("cuDNN %zu loaded, %s or later wanted\n", aitk_dnn.GetVersion(), want);
        return 1;
    }
    const char *ld = getenv("LD_LIBRARY_PATH");
    if (!ld || !strstr(ld, "cuda-stub")) {
        printf("skipped: no stub CUDA driver on LD_LIBRARY_PATH (run it through ctest)\n");
        return 77;
    }
    if (load_devices())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_node_plans),
        cmocka_unit_test(test_composite_backward_plans),
        cmocka_unit_test(test_backward_node_reported),
        cmocka_unit_test(test_unsupported_shape_refused),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    for (int i = 0; i < n_devices; i++)
        aitk_dnn.DestroyDescriptor(devices[i].prop);
    return failed;
}
