/* gpu.container: the container check against fake roots (scratch folders
 * holding the marker files, /proc/self/cgroup, /proc/self/mountinfo and
 * /dev/nvidia* that a real container would have), run in-process through
 * the provider itself, and once through the real binary with the stub
 * driver, where a GPU answers and the check must not warn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probe_test.h"
#include "validate/engine.h"
#include "validate/probes/container.h"

/* A root as a plain Linux host sees itself: a cgroup v2 path under a
 * systemd slice, and a mount table that lists a running container's shm
 * mount (a host with Docker has those) but nothing at /etc/hosts. */
static const char host_cgroup[] = "0::/user.slice/user-1000.slice/session-2.scope\n";
static const char host_mounts[] =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "98 22 0:50 / /var/lib/docker/containers/0123abcd/mounts/shm rw - tmpfs shm rw\n";

typedef struct result {
    cJSON *env;
    aitk_run_ctx ctx;
    const aitk_check *check;
} result;

/* Runs the provider at `root`; `gpus` NVML devices are put in the record
 * first, as the gpu provider would have. */
static void run_at(result *r, const char *root, int gpus)
{
    memset(r, 0, sizeof *r);
    r->env = cJSON_CreateObject();
    cJSON *devs = cJSON_AddArrayToObject(
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(r->env, "gpu"), "nvml"), "devices");
    for (int i = 0; i < gpus; i++)
        cJSON_AddItemToArray(devs, cJSON_CreateObject());
    r->ctx.level = AITK_LEVEL_QUICK;
    r->ctx.env = r->env;
    assert_int_equal(aitk_container_checks_at(&r->ctx, root), AITK_OK);
    assert_int_equal(r->ctx.checks.count, 1);
    r->check = &r->ctx.checks.items[0];
    assert_string_equal(r->check->id, "gpu.container");
}

static void done(result *r)
{
    aitk_checklist_free(&r->ctx.checks);
    cJSON_Delete(r->env);
}

static char *host_root(const char *tag)
{
    char *root = pt_tempdir(tag);
    pt_write(root, "proc/self/cgroup", host_cgroup);
    pt_write(root, "proc/self/mountinfo", host_mounts);
    pt_write(root, "dev/null", "");
    return root;
}

static void test_plain_host_is_silent(void **state)
{
    (void)state;
    char *root = host_root("host");
    /* A host without a GPU too: no container, so nothing to say. */
    pt_write(root, "etc/hostname", "box\n");
    result r;
    run_at(&r, root, 0);
    assert_int_equal(r.check->status, AITK_CHECK_SKIP);
    assert_string_equal(r.check->observed, "not in a container");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(r.env, "container");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(rec, "in_container")));
    done(&r);
    free(root);
}

static void test_docker_without_gpu_warns(void **state)
{
    (void)state;
    char *root = host_root("docker");
    pt_write(root, ".dockerenv", "");
    pt_write(root, "dev/nvidia-uvm", ""); /* not a GPU: no /dev/nvidia<N> */
    result r;
    run_at(&r, root, 0);
    assert_int_equal(r.check->status, AITK_CHECK_WARN);
    pt_assert_contains(r.check->observed, "in Docker");
    pt_assert_contains(r.check->observed, "/.dockerenv");
    pt_assert_contains(r.check->observed, "0 /dev/nvidia<N> device nodes");
    pt_assert_contains(r.check->message, "started without GPU access");
    pt_assert_contains(r.check->remedy, "docker run --gpus all");
    pt_assert_contains(r.check->remedy, "capabilities: [gpu]");
    pt_assert_contains(r.check->remedy, "nvidia.com/gpu");
    pt_assert_contains(r.check->remedy, "NVIDIA Container Toolkit");
    pt_assert_contains(r.check->source, "https://docs.docker.com/compose/how-tos/gpu-support/");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(r.env, "container");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "in_container")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(rec, "engine")->valuestring, "Docker");
    done(&r);
    free(root);
}

static void test_docker_with_gpu_passes(void **state)
{
    (void)state;
    char *root = host_root("docker-gpu");
    pt_write(root, ".dockerenv", "");
    pt_write(root, "dev/nvidiactl", "");
    pt_write(root, "dev/nvidia0", "");
    pt_write(root, "dev/nvidia1", "");
    result r;
    run_at(&r, root, 2);
    assert_int_equal(r.check->status, AITK_CHECK_PASS);
    pt_assert_contains(r.check->observed, "2 /dev/nvidia<N> device nodes; 2 GPUs answered");
    done(&r);
    free(root);
}

static void test_nodes_without_driver_libraries(void **state)
{
    (void)state;
    char *root = host_root("nolib");
    pt_write(root, "run/.containerenv", "");
    pt_write(root, "dev/nvidia0", "");
    result r;
    run_at(&r, root, 0);
    assert_int_equal(r.check->status, AITK_CHECK_WARN);
    pt_assert_contains(r.check->observed, "in Podman");
    pt_assert_contains(r.check->message, "driver's libraries are not mounted in");
    pt_assert_contains(r.check->remedy, "NVIDIA_DRIVER_CAPABILITIES=compute,utility");
    done(&r);
    free(root);
}

/* Under WSL 2 a container's GPU is /dev/dxg, never /dev/nvidia<N> (the
 * NVIDIA Container Toolkit's WSL CDI specification): with a GPU answering
 * it passes; with none, the fix is the libraries from /usr/lib/wsl, not
 * "start the container with GPU access", which it was. */
static void test_wsl_container(void **state)
{
    (void)state;
    char *root = host_root("wsl");
    pt_write(root, ".dockerenv", "");
    pt_write(root, "dev/dxg", "");
    result r;
    run_at(&r, root, 1);
    assert_int_equal(r.check->status, AITK_CHECK_PASS);
    pt_assert_contains(r.check->observed, "0 /dev/nvidia<N> device nodes, WSL 2's /dev/dxg; 1 GPU answered");
    done(&r);
    run_at(&r, root, 0);
    assert_int_equal(r.check->status, AITK_CHECK_WARN);
    pt_assert_contains(r.check->message, "WSL 2's GPU device (/dev/dxg) but no GPU answered");
    pt_assert_contains(r.check->remedy, "/usr/lib/wsl");
    pt_assert_contains(r.check->remedy, "nvidia-ctk cdi generate");
    if (strstr(r.check->message, "started without GPU access"))
        fail_msg("told to start with GPU access: %s", r.check->message);
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(r.env, "container");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "wsl_gpu_device")));
    done(&r);
    free(root);
}

/* Kubernetes under cgroup v2, service account not mounted: only the bind
 * mounts of /etc/hosts and /etc/hostname give it away. */
static void test_kubernetes_by_mounts(void **state)
{
    (void)state;
    char *root = pt_tempdir("k8s");
    pt_write(root, "proc/self/cgroup", "0::/\n");
    pt_write(root, "proc/self/mountinfo",
             "700 650 0:90 / / rw - overlay overlay rw,lowerdir=/l\n"
             "710 700 259:1 /var/lib/kubelet/pods/5f0e/etc-hosts /etc/hosts rw - ext4 /dev/nvme0n1p1 rw\n"
             "711 700 259:1 /var/lib/containerd/io.containerd.grpc/abc/hostname /etc/hostname rw - "
             "ext4 /dev/nvme0n1p1 rw\n");
    result r;
    run_at(&r, root, 0);
    assert_int_equal(r.check->status, AITK_CHECK_WARN);
    pt_assert_contains(r.check->observed, "in a container");
    pt_assert_contains(r.check->observed, "/proc/self/mountinfo: mount point /etc/hosts");
    pt_assert_contains(r.check->observed, "mount point /etc/hostname");
    done(&r);
    free(root);
}

/* cgroup v1: the engine's folder in the path; the bind-mount rule wants
 * the whole mount point (/etc/hostsx is not /etc/hosts). */
static void test_cgroup_v1_and_mount_point_boundaries(void **state)
{
    (void)state;
    char *root = pt_tempdir("cgv1");
    pt_write(root, "proc/self/cgroup", "12:devices:/docker/4f2a9c\n11:memory:/docker/4f2a9c\n");
    result r;
    run_at(&r, root, 0);
    assert_int_equal(r.check->status, AITK_CHECK_WARN);
    pt_assert_contains(r.check->observed, "/proc/self/cgroup: cgroup /docker/");
    done(&r);
    free(root);

    root = pt_tempdir("near");
    pt_write(root, "proc/self/cgroup", "0::/system.slice/docker.service\n");
    pt_write(root, "proc/self/mountinfo", "40 1 8:1 /x /etc/hostsx rw - ext4 /dev/sda1 rw\n");
    run_at(&r, root, 0);
    assert_int_equal(r.check->status, AITK_CHECK_SKIP);
    done(&r);
    free(root);
}

/* The real binary with the stub driver answering one GPU: whether or not
 * this test itself runs in a container, the check must not warn. */
static void test_binary_with_gpu_does_not_warn(void **state)
{
    (void)state;
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "gpu=NVIDIA GeForce RTX 4090|8.9|24564", args, NULL, &rc);
    const cJSON *c = pt_check(r, "gpu.container");
    const char *st = pt_text(c, "status");
    if (strcmp(st, "pass") != 0 && strcmp(st, "skip") != 0)
        fail_msg("gpu.container is '%s' with a GPU answering: %s", st, pt_text(c, "observed"));
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_host_is_silent),
        cmocka_unit_test(test_docker_without_gpu_warns),
        cmocka_unit_test(test_docker_with_gpu_passes),
        cmocka_unit_test(test_nodes_without_driver_libraries),
        cmocka_unit_test(test_wsl_container),
        cmocka_unit_test(test_kubernetes_by_mounts),
        cmocka_unit_test(test_cgroup_v1_and_mount_point_boundaries),
        cmocka_unit_test(test_binary_with_gpu_does_not_warn),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
