/* gpu.wsl: the WSL check against fake roots (scratch folders holding the
 * kernel release string and the /usr/lib/wsl folder a real WSL has, with
 * the kernel strings real WSL 1 and WSL 2 kernels report, quoted in
 * validate/probes/wsl.yaml's sources), run in-process through the provider
 * with the CUDA driver record the gpu provider would have left; and once
 * through the real binary on this machine, which is not WSL. */
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
#include "validate/probes/wsl.h"

#define WSL2_KERNEL "5.15.167.4-microsoft-standard-WSL2\n"

typedef struct result {
    cJSON *env;
    aitk_run_ctx ctx;
    const aitk_check *check;
} result;

/* Runs the provider at `root` with the CUDA driver record the gpu provider
 * leaves: loaded from `libcuda` (NULL: not loaded, with the loader's words). */
static void run_at(result *r, const char *root, const char *libcuda)
{
    memset(r, 0, sizeof *r);
    r->env = cJSON_CreateObject();
    cJSON *cu = cJSON_AddObjectToObject(cJSON_AddObjectToObject(r->env, "gpu"), "cuda_driver");
    cJSON_AddBoolToObject(cu, "loaded", libcuda != NULL);
    if (libcuda)
        cJSON_AddStringToObject(cu, "path", libcuda);
    else
        cJSON_AddStringToObject(cu, "loader_error",
                                "libcuda.so.1: cannot open shared object file: No such file or "
                                "directory");
    r->ctx.level = AITK_LEVEL_QUICK;
    r->ctx.env = r->env;
    assert_int_equal(aitk_wsl_checks_at(&r->ctx, root), AITK_OK);
    assert_int_equal(r->ctx.checks.count, 1);
    r->check = &r->ctx.checks.items[0];
    assert_string_equal(r->check->id, "gpu.wsl");
}

static void done(result *r)
{
    aitk_checklist_free(&r->ctx.checks);
    cJSON_Delete(r->env);
}

/* A WSL 2 root with Windows' driver mounted. */
static char *wsl2_root(const char *tag)
{
    char *root = pt_tempdir(tag);
    pt_write(root, "proc/sys/kernel/osrelease", WSL2_KERNEL);
    pt_write(root, "usr/lib/wsl/lib/libcuda.so.1", "");
    return root;
}

static void test_not_wsl_is_silent(void **state)
{
    (void)state;
    char *root = pt_tempdir("wsl-none");
    pt_write(root, "proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
    result r;
    run_at(&r, root, NULL);
    assert_int_equal(r.check->status, AITK_CHECK_SKIP);
    assert_string_equal(r.check->observed, "not under WSL");
    done(&r);
    free(root);
}

/* Azure's own kernels also say "microsoft" (systemd PR #15614): without
 * WSL's /usr/lib/wsl folder that is not WSL. */
static void test_azure_kernel_is_not_wsl(void **state)
{
    (void)state;
    char *root = pt_tempdir("wsl-azure");
    pt_write(root, "proc/sys/kernel/osrelease", "5.15.0-1074-azure-microsoft-standard\n");
    result r;
    run_at(&r, root, NULL);
    assert_int_equal(r.check->status, AITK_CHECK_SKIP);
    done(&r);
    free(root);
}

static void test_wsl2_with_windows_driver_passes(void **state)
{
    (void)state;
    char *root = wsl2_root("wsl-ok");
    result r;
    run_at(&r, root, "/usr/lib/wsl/lib/libcuda.so.1");
    assert_int_equal(r.check->status, AITK_CHECK_PASS);
    pt_assert_contains(r.check->observed, "Windows' NVIDIA driver (/usr/lib/wsl/lib/libcuda.so.1)");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(r.env, "wsl");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(rec, "version")->valueint, 2);
    done(&r);
    free(root);
}

/* The early WSL 2 kernels said "4.19.128-microsoft-standard", no WSL2:
 * the /usr/lib/wsl folder tells it from Azure's. */
static void test_early_wsl2_kernel(void **state)
{
    (void)state;
    char *root = wsl2_root("wsl-early");
    pt_write(root, "proc/sys/kernel/osrelease", "4.19.128-microsoft-standard\n");
    result r;
    run_at(&r, root, "/usr/lib/wsl/lib/libcuda.so.1");
    assert_int_equal(r.check->status, AITK_CHECK_PASS);
    done(&r);
    free(root);
}

static void test_wsl1_has_no_gpu(void **state)
{
    (void)state;
    char *root = pt_tempdir("wsl1");
    pt_write(root, "proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n");
    result r;
    run_at(&r, root, NULL);
    assert_int_equal(r.check->status, AITK_CHECK_FAIL);
    pt_assert_contains(r.check->observed, "WSL 1 (kernel 4.4.0-19041-Microsoft)");
    pt_assert_contains(r.check->remedy, "wsl --set-version <distribution> 2");
    done(&r);
    free(root);
}

/* A Linux NVIDIA driver installed inside WSL: its libcuda comes first, and
 * it cannot reach the GPU from WSL. The fix removes it; it must not be the
 * generic "install the driver". */
static void test_linux_driver_shadows_windows_one(void **state)
{
    (void)state;
    char *root = wsl2_root("wsl-shadow");
    result r;
    run_at(&r, root, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    assert_int_equal(r.check->status, AITK_CHECK_FAIL);
    pt_assert_contains(r.check->observed,
                       "libcuda.so.1 loaded from /usr/lib/x86_64-linux-gnu/libcuda.so.1");
    pt_assert_contains(r.check->remedy, "dpkg -S");
    pt_assert_contains(r.check->remedy, "must not be installed in WSL 2");
    pt_assert_contains(r.check->source, "https://docs.nvidia.com/cuda/wsl-user-guide/");
    done(&r);
    free(root);
}

static void test_windows_driver_missing(void **state)
{
    (void)state;
    char *root = pt_tempdir("wsl-nodriver");
    pt_write(root, "proc/sys/kernel/osrelease", WSL2_KERNEL);
    pt_write(root, "usr/lib/wsl/lib/libd3d12.so", "");
    result r;
    run_at(&r, root, NULL);
    assert_int_equal(r.check->status, AITK_CHECK_FAIL);
    pt_assert_contains(r.check->observed, "no /usr/lib/wsl/lib/libcuda.so.1");
    pt_assert_contains(r.check->remedy, "on Windows");
    pt_assert_contains(r.check->remedy, "wsl --update");
    done(&r);
    free(root);
}

/* The library is there but the loader does not look in its folder
 * ([automount] ldconfig = false in /etc/wsl.conf, or ld.wsl.conf deleted). */
static void test_driver_not_on_loader_path(void **state)
{
    (void)state;
    char *root = wsl2_root("wsl-ldpath");
    result r;
    run_at(&r, root, NULL);
    assert_int_equal(r.check->status, AITK_CHECK_FAIL);
    pt_assert_contains(r.check->observed, "cannot open shared object file");
    pt_assert_contains(r.check->remedy, "ld.wsl.conf");
    pt_assert_contains(r.check->source, "MicrosoftDocs/WSL issue #1301");
    done(&r);
    free(root);
}

/* Docker under WSL 2: the NVIDIA Container Toolkit mounts Windows'
 * libcuda into /usr/lib/x86_64-linux-gnu, which outside a container would
 * be a Linux driver shadowing it. In a container the path proves nothing:
 * no verdict, gpu.container judges access. */
static void test_container_under_wsl2_is_not_judged_by_path(void **state)
{
    (void)state;
    char *root = pt_tempdir("wsl-docker");
    pt_write(root, "proc/sys/kernel/osrelease", WSL2_KERNEL);
    result r;
    memset(&r, 0, sizeof r);
    r.env = cJSON_CreateObject();
    cJSON_AddBoolToObject(cJSON_AddObjectToObject(r.env, "container"), "in_container", 1);
    cJSON *cu = cJSON_AddObjectToObject(cJSON_AddObjectToObject(r.env, "gpu"), "cuda_driver");
    cJSON_AddBoolToObject(cu, "loaded", 1);
    cJSON_AddStringToObject(cu, "path", "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    r.ctx.level = AITK_LEVEL_QUICK;
    r.ctx.env = r.env;
    assert_int_equal(aitk_wsl_checks_at(&r.ctx, root), AITK_OK);
    r.check = &r.ctx.checks.items[0];
    assert_int_equal(r.check->status, AITK_CHECK_SKIP);
    pt_assert_contains(r.check->observed, "in a container under WSL 2");
    done(&r);
    free(root);
}

/* A data file whose remedy is gone: the check fails and names what is
 * missing, rather than failing a WSL machine with an empty fix. */
static void test_data_without_a_remedy(void **state)
{
    (void)state;
    char *dir = pt_tempdir("wsl-data");
    pt_write(dir, "validate/probes/wsl.yaml",
             "schema: 1\nkernel_release: {path: proc/sys/kernel/osrelease}\n"
             "windows_driver: {path: usr/lib/wsl/lib/libcuda.so.1, folder: /usr/lib/wsl/}\n"
             "remedy:\n  wsl1: {value: convert, source: s}\n");
    char *root = wsl2_root("wsl-data-root");
    setenv("AITK_DATA_DIR", dir, 1);
    result r;
    run_at(&r, root, NULL);
    unsetenv("AITK_DATA_DIR");
    assert_int_equal(r.check->status, AITK_CHECK_FAIL);
    pt_assert_contains(r.check->observed, "remedy.no_windows_driver needs a value and a source");
    done(&r);
    free(root);
    free(dir);
}

/* The binary on this machine, which is no WSL: the check is there and
 * silent, whatever the GPU. */
static void test_binary_on_this_machine(void **state)
{
    (void)state;
    FILE *f = fopen("/proc/sys/kernel/osrelease", "r");
    char release[256] = "";
    if (!f || !fgets(release, sizeof release, f) || strstr(release, "icrosoft")) {
        if (f)
            fclose(f);
        skip(); /* no /proc, or this machine is WSL */
    }
    fclose(f);
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, NULL, &rc);
    pt_assert_status(pt_check(r, "gpu.wsl"), "skip");
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_wsl_is_silent),
        cmocka_unit_test(test_azure_kernel_is_not_wsl),
        cmocka_unit_test(test_wsl2_with_windows_driver_passes),
        cmocka_unit_test(test_early_wsl2_kernel),
        cmocka_unit_test(test_wsl1_has_no_gpu),
        cmocka_unit_test(test_linux_driver_shadows_windows_one),
        cmocka_unit_test(test_windows_driver_missing),
        cmocka_unit_test(test_driver_not_on_loader_path),
        cmocka_unit_test(test_container_under_wsl2_is_not_judged_by_path),
        cmocka_unit_test(test_data_without_a_remedy),
        cmocka_unit_test(test_binary_on_this_machine),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
