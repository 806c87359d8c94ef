/* python.bitsandbytes beyond --quick: the build bitsandbytes picks must
 * also load after import torch. The loader and the interpreter are real
 * (this machine's python3, glibc's ld.so); the libraries are libdeps'
 * fixtures under bitsandbytes' file names: one with no needs, which loads,
 * and one built against libgone.so.1, which was then removed, as a CUDA 11
 * build needs libcudart.so.11.0 beside a CUDA 12 or 13 torch. torch itself
 * is a stand-in package here (nothing in it loads a library):
 * realworld.linux.bitsandbytes runs the same check with the real torch and
 * bitsandbytes wheels, judged by bitsandbytes' own get_native_library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/aitk_config.h"
#include "bnb_env.h"
#include "probe_test.h"
#include "validate/engine.h"
#include "validate/probes/bnb.h"

#define FX AITK_LIBDEPS_FIXTURES "/elf"

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[1 << 14];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

typedef struct scene {
    char *site;      /* site-packages with bitsandbytes/ */
    char *torch_ok;  /* a torch package that imports */
    char *torch_bad; /* one whose import fails as a broken torch's does */
} scene;

static int setup(void **state)
{
    scene *s = calloc(1, sizeof *s);
    s->site = pt_tempdir("bnbload");
    char path[4096];
    pt_write(s->site, "bitsandbytes/cextension.py", "");
    snprintf(path, sizeof path, "%s/bitsandbytes/libbitsandbytes_cuda124.so", s->site);
    copy_file(FX "/chain/sub/leafdir/libleaf.so.1", path);
    snprintf(path, sizeof path, "%s/bitsandbytes/libbitsandbytes_cuda118.so", s->site);
    copy_file(FX "/missing/libneedsgone.so", path);
    /* A build whose constructor aborts the process that loads it. */
    snprintf(path, sizeof path, "%s/bitsandbytes/libbitsandbytes_cuda126.so", s->site);
    copy_file(FX "/load/libctorabort.so", path);
    s->torch_ok = pt_tempdir("torchok");
    pt_write(s->torch_ok, "torch/__init__.py", "__version__ = '2.5.1+cu124'\n");
    s->torch_bad = pt_tempdir("torchbad");
    pt_write(s->torch_bad, "torch/__init__.py",
             "raise ImportError('libcudnn.so.9: cannot open shared object file: "
             "No such file or directory')\n");
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    scene *s = *state;
    free(s->site);
    free(s->torch_ok);
    free(s->torch_bad);
    free(s);
    unsetenv("BNB_CUDA_VERSION");
    unsetenv("PYTHONPATH");
    return 0;
}

/* The check at `level` on an environment record with an interpreter. */
static const aitk_check *run(aitk_run_ctx *ctx, aitk_level level, const char *site,
                             const char *torch_dir)
{
    setenv("PYTHONPATH", torch_dir, 1);
    ctx->level = level;
    ctx->env = bnb_env("0.45.5", "12.4", site, AITK_TEST_PYTHON3);
    assert_int_equal(aitk_bnb_checks(ctx), AITK_OK);
    assert_int_equal(ctx->checks.count, 1);
    return &ctx->checks.items[0];
}

static void done(aitk_run_ctx *ctx)
{
    aitk_checklist_free(&ctx->checks);
    cJSON_Delete(ctx->env);
    memset(ctx, 0, sizeof *ctx);
}

static void test_build_that_loads(void **state)
{
    scene *s = *state;
    aitk_run_ctx ctx = {0};
    const aitk_check *c = run(&ctx, AITK_LEVEL_STANDARD, s->site, s->torch_ok);
    assert_int_equal(c->status, AITK_CHECK_PASS);
    pt_assert_contains(c->observed, "picks libbitsandbytes_cuda124.so, which loads beside torch");
    done(&ctx);
    /* --quick loads nothing: the file decides. */
    c = run(&ctx, AITK_LEVEL_QUICK, s->site, s->torch_ok);
    assert_int_equal(c->status, AITK_CHECK_PASS);
    assert_null(strstr(c->observed, "beside torch"));
    done(&ctx);
}

static void test_build_that_does_not_load(void **state)
{
    scene *s = *state;
    aitk_run_ctx ctx = {0};
    /* The file is there, of another major: --quick can only warn. */
    setenv("BNB_CUDA_VERSION", "118", 1);
    const aitk_check *c = run(&ctx, AITK_LEVEL_QUICK, s->site, s->torch_ok);
    assert_int_equal(c->status, AITK_CHECK_WARN);
    done(&ctx);
    /* Loaded, it is refused: the example configs' adamw8bit would fail. */
    c = run(&ctx, AITK_LEVEL_STANDARD, s->site, s->torch_ok);
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    pt_assert_contains(c->observed, "libbitsandbytes_cuda118.so, which does not load beside "
                                    "torch: libgone.so.1: cannot open shared object file");
    pt_assert_contains(c->message, "8-bit optimizers fail at the first training step");
    pt_assert_contains(c->message, "adamw8bit, is one of them");
    pt_assert_contains(c->remedy, "unset it");
    pt_assert_contains(c->source, "issues #1452 and #1483");
    done(&ctx);
    /* A job whose optimizer does not call bitsandbytes: a warning. */
    aitk_train_config cfg = {.optimizer = "adamw"};
    ctx.train_config = &cfg;
    c = run(&ctx, AITK_LEVEL_STANDARD, s->site, s->torch_ok);
    assert_int_equal(c->status, AITK_CHECK_WARN);
    pt_assert_contains(c->message, "adamw, is not one of them");
    done(&ctx);
    unsetenv("BNB_CUDA_VERSION");
}

static void test_build_that_crashes(void **state)
{
    scene *s = *state;
    aitk_run_ctx ctx = {0};
    setenv("BNB_CUDA_VERSION", "126", 1);
    const aitk_check *c = run(&ctx, AITK_LEVEL_STANDARD, s->site, s->torch_ok);
    unsetenv("BNB_CUDA_VERSION");
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    pt_assert_contains(c->observed, "libbitsandbytes_cuda126.so, which does not load beside "
                                    "torch: the process died loading it (signal 6)");
    done(&ctx);
}

static void test_torch_does_not_import(void **state)
{
    scene *s = *state;
    aitk_run_ctx ctx = {0};
    /* Nothing to say about bitsandbytes' load: python.import_torch fails. */
    setenv("BNB_CUDA_VERSION", "118", 1);
    const aitk_check *c = run(&ctx, AITK_LEVEL_STANDARD, s->site, s->torch_bad);
    unsetenv("BNB_CUDA_VERSION");
    assert_int_equal(c->status, AITK_CHECK_WARN);
    pt_assert_contains(c->observed, "not loaded: import torch fails, see python.import_torch");
    done(&ctx);
    /* python.import_torch already saw torch fail: no second try (its
     * interpreter would answer; this one cannot even start). */
    setenv("BNB_CUDA_VERSION", "118", 1);
    ctx.env = bnb_env("0.45.5", "12.4", s->site, "/nonexistent/python3");
    ctx.level = AITK_LEVEL_STANDARD;
    cJSON *deep = cJSON_AddObjectToObject(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(ctx.env, "python"),
                                               "environments"),
                           0),
        "deep");
    cJSON_AddStringToObject(deep, "error", "ImportError: libcudnn.so.9");
    assert_int_equal(aitk_bnb_checks(&ctx), AITK_OK);
    unsetenv("BNB_CUDA_VERSION");
    c = &ctx.checks.items[0];
    assert_int_equal(c->status, AITK_CHECK_WARN);
    pt_assert_contains(c->observed, "not loaded: import torch fails, see python.import_torch");
    done(&ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_that_loads),
        cmocka_unit_test(test_build_that_does_not_load),
        cmocka_unit_test(test_build_that_crashes),
        cmocka_unit_test(test_torch_does_not_import),
    };
    return pt_finish(cmocka_run_group_tests(tests, setup, teardown));
}
