/* Fault injection at the allocation seam (the SQLite habit): every provider
 * of this module is run with the N-th allocation failing, for every N until
 * a run needs no more, and must return AITK_OK or AITK_E_NOMEM: never crash,
 * never another error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/str.h"
#include "probe_test.h"
#include "validate/compat.h"
#include "validate/engine.h"
#include "validate/probes/cuda_stack.h"
#include "validate/probes/envlint.h"
#include "validate/probes/gpu.h"
#include "validate/probes/python.h"
#include "validate/probes/rules.h"

#define FAULT_RUNS 400

static void run_with_faults(aitk_provider_fn fn, const char *venv, const char *name)
{
    aitk_compat *compat = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_compat_load(NULL, &compat, &err), AITK_OK);
    /* Past the provider's last allocation the runs are plain runs; the bound
     * is well above the largest count measured (167, the python provider). */
    for (long n = 0; n < FAULT_RUNS; n++) {
        aitk_run_ctx ctx = {.level = AITK_LEVEL_QUICK, .compat = compat,
                            .profile_name = compat->profile_name, .python = venv,
                            .env = cJSON_CreateObject()};
        assert_non_null(ctx.env);
        /* The providers that judge need the facts of the ones before them. */
        if (fn == aitk_rules_checks || fn == aitk_cuda_stack_checks) {
            assert_int_equal(aitk_gpu_checks(&ctx), AITK_OK);
            assert_int_equal(aitk_python_checks(&ctx), AITK_OK);
        }
        aitk_alloc_fail_after(n);
        aitk_status st = fn(&ctx);
        aitk_alloc_fail_after(-1);
        if (st != AITK_OK && st != AITK_E_NOMEM)
            fail_msg("%s with allocation %ld failing: %s", name, n, aitk_strerror(st));
        cJSON_Delete(ctx.env);
        aitk_checklist_free(&ctx.checks);
    }
    aitk_compat_free(compat);
    aitk_str_free(&err);
}

static char *venv;

static int setup(void **state)
{
    (void)state;
    venv = pt_tempdir("faults-venv");
    const char *pkgs[] = {"torch==2.7.0+cu126", "torchvision==0.22.0+cpu", "torch==2.6.0",
                          "nvidia-cudnn-cu12==9.1.0.70", "diffusers==0.33.0", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.6");
    char *site = pt_site(venv, "3.12.3");
    pt_write(site, "nvidia/cudnn/lib/libcudnn.so.9", "x");
    free(site);
    setenv("CUDA_VISIBLE_DEVICES", "0,zz", 1);
    setenv("PYTORCH_CUDA_ALLOC_CONF", "roundup_power2_divisions:[256:1,512:2],bad:1", 1);
    setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(venv);
    return 0;
}

static void test_python(void **state) { (void)state; run_with_faults(aitk_python_checks, venv, "python"); }
static void test_cuda_stack(void **state) { (void)state; run_with_faults(aitk_cuda_stack_checks, venv, "cuda"); }
static void test_envlint(void **state) { (void)state; run_with_faults(aitk_envlint_checks, venv, "env"); }
static void test_gpu(void **state) { (void)state; run_with_faults(aitk_gpu_checks, venv, "gpu"); }
static void test_rules(void **state) { (void)state; run_with_faults(aitk_rules_checks, venv, "rules"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_python),   cmocka_unit_test(test_cuda_stack),
        cmocka_unit_test(test_envlint),  cmocka_unit_test(test_gpu),
        cmocka_unit_test(test_rules),
    };
    return pt_finish(cmocka_run_group_tests(tests, setup, teardown));
}
