/* deps.* checks in the main report: a folder whose library lacks a
 * dependency fails with the chain, the folders searched and a remedy; a
 * whole folder passes; an absent folder is skipped; at the standard level
 * the loader's own verdict is recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/libload.h"
#include "fixtures.h"
#include "validate/probes/deps.h"
#include "tests/temp_tree.h"

static const aitk_check *run_dir(aitk_run_ctx *ctx, const char *dir)
{
    ctx->env = cJSON_CreateObject();
    assert_int_equal(aitk_deps_check_dir(ctx, "deps.cuda", "t", dir, ctx->env), AITK_OK);
    assert_int_equal(ctx->checks.count, 1);
    return &ctx->checks.items[0];
}

static void test_failing_folder(void **state)
{
    (void)state;
    aitk_run_ctx ctx = {0};
    const aitk_check *c = run_dir(&ctx, FX "/elf/provider");
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    if (!strstr(c->observed, "libneedsgone.so.1 -> libgone.so.1: NOT FOUND") ||
        !strstr(c->observed, "1. /etc/ld.so.cache"))
        fail_msg("observed: %s", c->observed);
    assert_true(strlen(c->remedy) > 0);
    /* A library of its own is missing: not the driver's failure. */
    assert_true(!c->follows || !*c->follows);
    cJSON *cuda = cJSON_GetObjectItem(ctx.env, "cuda");
    assert_string_equal(cJSON_GetObjectItem(cuda, "dir")->valuestring, FX "/elf/provider");
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

/* cuDNN's sub-libraries are opened at run time (opened.yaml): one of them
 * broken leaves every library loadable, so the check warns, naming the
 * chain from the opener once, and says the first call fails. Here
 * libcudnn_ops.so.9 binds a symbol at version libcudnn_graph.so.9 and the
 * graph library is gone: the system's copy (without that symbol) or none
 * is found, and the real loader refuses libcudnn_ops.so.9 either way. The
 * folder holds one library linking that libcudnn.so.9, as torch/lib's do. */
static void test_opened_at_run_time_warns(void **state)
{
    (void)state;
    /* The real loader, binding every symbol now as Python's ctypes does. */
    void *h = dlopen(FX "/elf/opened/graphgone/libcudnn_ops.so.9", RTLD_NOW | RTLD_LOCAL);
    if (h)
        fail_msg("the real loader loads libcudnn_ops.so.9: the fixture is not broken");

    aitk_run_ctx ctx = {0};
    const aitk_check *c = run_dir(&ctx, FX "/elf/opened/user");
    assert_int_equal(c->status, AITK_CHECK_WARN);
    if (!strstr(c->observed, "at first use, not at import: libcudnn.so.9 -> libcudnn_ops.so.9 -> "
                             "libcudnn_graph.so.9: "))
        fail_msg("observed: %s", c->observed);
    /* The chain starts at the opener, and is said once. */
    const char *first = strstr(c->observed, "libcudnn_ops.so.9 -> libcudnn_graph.so.9");
    assert_null(strstr(first + 1, "libcudnn_ops.so.9 -> libcudnn_graph.so.9"));
    assert_null(strstr(c->observed, "libusecudnn.so ->"));
    assert_non_null(strstr(c->message, "broken library among those opened at run time"));
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

/* A folder whose only missing link is the driver's libcuda.so.1 follows
 * gpu.cuda_driver, which tells the driver's absence first; one that also
 * misses a library of its own does not. Whether libcuda.so.1 is installed
 * is the loader cache's answer (ldconfig -p), not this code's. */
static void test_driver_only_follows(void **state)
{
    (void)state;
    if (system("{ ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | grep -q 'libcuda\\.so\\.1 '") ==
        0) {
        print_message("libcuda.so.1 is installed here: nothing to miss\n");
        skip();
    }
    aitk_run_ctx ctx = {0};
    const aitk_check *c = run_dir(&ctx, FX "/elf/driveronly");
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    assert_non_null(strstr(c->observed, "libusecuda.so.1 -> libcuda.so.1: NOT FOUND"));
    assert_non_null(c->follows);
    assert_string_equal(c->follows, "gpu.cuda_driver");
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);

    memset(&ctx, 0, sizeof ctx);
    c = run_dir(&ctx, FX "/elf/drivermore");
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    assert_non_null(strstr(c->observed, "libneedsgone.so.1: NOT FOUND"));
    assert_true(!c->follows || !*c->follows);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);

    /* A library cut short is damaged itself: reinstalling its package, not
     * the driver, mends it, though it too may need only libcuda.so.1. */
    memset(&ctx, 0, sizeof ctx);
    c = run_dir(&ctx, FX "/elf/driverdamaged");
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    if (!strstr(c->observed, "libusecut.so.1: UNREADABLE") || !strstr(c->observed, "truncated"))
        fail_msg("observed: %s", c->observed);
    assert_true(!c->follows || !*c->follows);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

static void test_loader_confirms(void **state)
{
    (void)state;
    /* At the standard level the real loader runs too (our fixtures only). */
    aitk_run_ctx ctx = {.level = AITK_LEVEL_STANDARD};
    const aitk_check *c = run_dir(&ctx, FX "/elf/provider");
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    assert_non_null(strstr(c->observed, "loader: "));
    cJSON *lib = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(ctx.env, "cuda"), "libraries"), 0);
    assert_non_null(strstr(cJSON_GetObjectItem(lib, "load")->valuestring, "libgone.so.1"));
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    memset(&ctx, 0, sizeof ctx);
    ctx.level = AITK_LEVEL_STANDARD;
    c = run_dir(&ctx, FX "/elf/chain/sub");
    assert_int_equal(c->status, AITK_CHECK_PASS);
    lib = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(ctx.env, "cuda"), "libraries"), 0);
    assert_string_equal(cJSON_GetObjectItem(lib, "load")->valuestring, "loaded");
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

static void test_passing_and_absent(void **state)
{
    (void)state;
    aitk_run_ctx ctx = {0};
    const aitk_check *c = run_dir(&ctx, FX "/elf/chain/sub");
    assert_int_equal(c->status, AITK_CHECK_PASS);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    /* An unversioned lib*.so (torch's own naming) is examined too. */
    memset(&ctx, 0, sizeof ctx);
    c = run_dir(&ctx, FX "/elf/chain");
    assert_int_equal(c->status, AITK_CHECK_PASS);
    cJSON *libs = cJSON_GetObjectItem(cJSON_GetObjectItem(ctx.env, "cuda"), "libraries");
    assert_int_equal(cJSON_GetArraySize(libs), 1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(libs, 0), "path")->valuestring,
                        FX "/elf/chain/libtop.so");
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    memset(&ctx, 0, sizeof ctx);
    c = run_dir(&ctx, FX "/no-such-folder");
    assert_int_equal(c->status, AITK_CHECK_SKIP);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

static void put(const char *dir, const char *name, const char *text, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
}

/* A linker script or a static archive under a library's name (Debian's
 * libc.so, a stray libfoo.a renamed) is not a shared library: skipped and
 * said so, not counted unreadable. A file under a library's name that is no
 * library at all (a Git LFS pointer, an empty file) is a broken library:
 * it fails, named for what it is, with the remedy, as `deps` says it (the
 * one rule in libdeps, aitk_deps_not_library_is_problem). */
static void test_not_libraries(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-provider-XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const char script[] = "/* GNU ld script */\nGROUP ( libc.so.6 libc_nonshared.a )\n";
    static const char archive[] = "!<arch>\nfoo.o/          0           0     0     644     0 "
                                  "        `\n";
    put(dir, "libscript.so", script, sizeof script - 1);
    put(dir, "libstatic.so", archive, sizeof archive - 1);
    aitk_run_ctx ctx = {0};
    const aitk_check *c = run_dir(&ctx, dir);
    assert_int_equal(c->status, AITK_CHECK_SKIP);
    if (!strstr(c->message, "0 libraries") || !strstr(c->message, "2 skipped, not shared libraries"))
        fail_msg("message: %s", c->message);
    cJSON *libs = cJSON_GetObjectItem(cJSON_GetObjectItem(ctx.env, "cuda"), "libraries");
    assert_int_equal(cJSON_GetArraySize(libs), 2);
    cJSON *first = cJSON_GetArrayItem(libs, 0); /* sorted: libscript.so */
    assert_non_null(strstr(cJSON_GetObjectItem(first, "skipped")->valuestring,
                           "libscript.so: a GNU ld script, not a shared library"));
    assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(libs, 1), "skipped")->valuestring,
                           "an ar archive"));
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);

    static const char pointer[] =
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 876543210\n";
    put(dir, "libbroken.so.1", pointer, sizeof pointer - 1);
    put(dir, "libempty.so.2", "", 0);
    memset(&ctx, 0, sizeof ctx);
    c = run_dir(&ctx, dir);
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    if (!strstr(c->message, "2 libraries") || strstr(c->message, "unreadable") ||
        !strstr(c->message, "2 named like a library but not one") || !strstr(c->message, "2 skipped") ||
        !strstr(c->observed, "libbroken.so.1: NOT A LIBRARY (a Git LFS pointer: ") ||
        !strstr(c->observed, "libempty.so.2: NOT A LIBRARY (an empty file)"))
        fail_msg("message: %s; observed: %s", c->message, c->observed);
    if (!strstr(c->remedy, "libbroken.so.1: The file is not the library") ||
        !strstr(c->remedy, "git lfs pull") || !strstr(c->source, "Git LFS specification"))
        fail_msg("remedy: %s; source: %s", c->remedy, c->source);
    libs = cJSON_GetObjectItem(cJSON_GetObjectItem(ctx.env, "cuda"), "libraries");
    assert_int_equal(cJSON_GetArraySize(libs), 4); /* sorted: libbroken, libempty, ... */
    const char *kinds[] = {"git_lfs_pointer", "empty"};
    for (int i = 0; i < 2; i++) {
        cJSON *lib = cJSON_GetArrayItem(libs, i);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(lib, "not_library")),
                            kinds[i]);
        assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(lib, "problems")), 1);
        assert_null(cJSON_GetObjectItem(lib, "error"));
    }
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    assert_int_equal(aitk_test_remove_tree(dir), 0);
}

/* A link of the folder whose target does not exist (Debian 12's
 * python3-torch leaves three in torch/lib: libcaffe2_*.so) is no library:
 * when every library's links resolve, nothing opens it and the check
 * passes, naming it; when a library's links do not resolve, the check
 * fails for that library and the link is not called harmless. The
 * real-world oracle is realworld.linux.debian-python3-torch. */
static void test_dangling_links(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-dangling-XXXXXX", cmd[1200];
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "cp -r '%s/elf/chain/sub' '%s/ok' && ln -s ../gone/libleft.so.1.13 '%s/ok/libleft.so' "
             "&& cp -r '%s/elf/chain/sub' '%s/bad' && rm '%s/bad/leafdir/libleaf.so.1' && "
             "ln -s nowhere/libleaf.so.1 '%s/bad/libleaf.so.1'",
             FX, dir, dir, FX, dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    char ok[600], bad[600];
    snprintf(ok, sizeof ok, "%s/ok", dir);
    snprintf(bad, sizeof bad, "%s/bad", dir);
    aitk_run_ctx ctx = {.level = AITK_LEVEL_STANDARD};
    const aitk_check *c = run_dir(&ctx, ok);
    if (c->status != AITK_CHECK_PASS ||
        !strstr(c->message, "1 library in ") ||
        !strstr(c->message, "1 dangling link, whose target does not exist (libleft.so -> "
                            "../gone/libleft.so.1.13): no library's links lead there"))
        fail_msg("ok: %s | %s", c->observed, c->message);
    cJSON *libs = cJSON_GetObjectItem(cJSON_GetObjectItem(ctx.env, "cuda"), "libraries");
    assert_int_equal(cJSON_GetArraySize(libs), 2); /* sorted: libleft.so, libmid.so.1 */
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(libs, 0), "dangling_link")),
        "../gone/libleft.so.1.13");
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(libs, 0), "error"));
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    memset(&ctx, 0, sizeof ctx);
    c = run_dir(&ctx, bad);
    if (c->status != AITK_CHECK_FAIL || !strstr(c->observed, "libleaf.so.1: NOT FOUND") ||
        !strstr(c->observed, "libleaf.so.1 -> nowhere/libleaf.so.1: the link's target does not "
                             "exist, and libmid.so.1 lists it as a link") ||
        !strstr(c->message, "1 dangling link") || strstr(c->message, "no library's links"))
        fail_msg("bad: %s | %s", c->observed, c->message);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    /* A name torch opens by name while it runs (deps.yaml) is never a
     * harmless leftover, though no library lists it. */
    snprintf(cmd, sizeof cmd, "ln -s gone/libtorch_global_deps.so.1 '%s/ok/libtorch_global_deps.so'",
             dir);
    assert_int_equal(system(cmd), 0);
    memset(&ctx, 0, sizeof ctx);
    c = run_dir(&ctx, ok);
    if (c->status != AITK_CHECK_FAIL || !strstr(c->observed, "libtorch_global_deps.so -> ") ||
        !strstr(c->observed, "torch opens it by name (pytorch/pytorch torch/__init__.py"))
        fail_msg("opened by name: %s | %s", c->observed, c->message);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    /* torch's Python extension, torch/_C*.so beside the folder, needs
     * libraries of torch/lib without being among them. */
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/torch/lib' && cp '%s/elf/chain/sub/libmid.so.1' '%s/torch/_C.so' && "
             "cp '%s/elf/chain/sub/leafdir/libleaf.so.1' '%s/torch/lib/libreal.so.1' && "
             "ln -s gone/libleaf.so.1.0 '%s/torch/lib/libleaf.so.1'",
             dir, FX, dir, FX, dir, dir);
    assert_int_equal(system(cmd), 0);
    char torch_lib[600];
    snprintf(torch_lib, sizeof torch_lib, "%s/torch/lib", dir);
    memset(&ctx, 0, sizeof ctx);
    c = run_dir(&ctx, torch_lib);
    if (c->status != AITK_CHECK_FAIL ||
        !strstr(c->observed, "libleaf.so.1 -> gone/libleaf.so.1.0: the link's target does not "
                             "exist, and torch's Python extension (torch/_C) lists it as a link"))
        fail_msg("extension: %s | %s", c->observed, c->message);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    /* Nothing but dangling links: no library at all, not a pass or a skip. */
    snprintf(cmd, sizeof cmd, "mkdir '%s/only' && ln -s gone.so.1 '%s/only/libleft.so'", dir, dir);
    assert_int_equal(system(cmd), 0);
    char only[600];
    snprintf(only, sizeof only, "%s/only", dir);
    memset(&ctx, 0, sizeof ctx);
    c = run_dir(&ctx, only);
    if (c->status != AITK_CHECK_FAIL || !strstr(c->observed, "every library here is a dangling"))
        fail_msg("only dangling: %s | %s", c->observed, c->message);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    assert_int_equal(aitk_test_remove_tree(dir), 0);
}

static void test_torch_in_venv(void **state)
{
    (void)state;
    /* Discovery through $VIRTUAL_ENV; the CUDA folder is pointed at an
     * empty place so only deps.torch has something to say. */
    setenv("VIRTUAL_ENV", FX "/elf/venv", 1);
    setenv("AITK_CUDA_LIB_DIR", FX "/no-cuda-here", 1);
    aitk_run_ctx ctx = {0};
    ctx.env = cJSON_CreateObject();
    assert_int_equal(aitk_deps_checks(&ctx), AITK_OK);
    unsetenv("VIRTUAL_ENV");
    unsetenv("AITK_CUDA_LIB_DIR");
    assert_int_equal(ctx.checks.count, 2);
    assert_int_equal(ctx.checks.items[0].status, AITK_CHECK_SKIP);
    const aitk_check *c = &ctx.checks.items[1];
    assert_string_equal(c->id, "deps.torch");
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    if (!strstr(c->observed, "libtorch_cuda.so -> libcudart.so.99: NOT FOUND") ||
        !strstr(c->observed, "nvidia/cuda_runtime/lib (DT_RUNPATH of libtorch_cuda.so)"))
        fail_msg("observed: %s", c->observed);
    assert_non_null(strstr(c->remedy, "libcudart.so.99: "));
    assert_non_null(strstr(c->message, "3 libraries"));
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

static void test_torch_in_user_site(void **state)
{
    (void)state;
    /* No environment chose a torch: the user site's is judged, unless
     * PYTHONNOUSERSITE turns the user site off (Python imports nothing
     * from it then); PYTHONUSERBASE moves it. */
    char home[] = "/tmp/aitk-user-site-XXXXXX";
    assert_non_null(mkdtemp(home));
    char dir[512], link[600];
    snprintf(dir, sizeof dir, "%s/base/lib/python3.11/site-packages", home);
    char mk[700];
    snprintf(mk, sizeof mk, "mkdir -p '%s' '%s/.local/lib'", dir, home);
    assert_int_equal(system(mk), 0);
    snprintf(link, sizeof link, "%s/torch", dir);
    assert_int_equal(symlink(FX "/elf/venv/lib/python3.11/site-packages/torch", link), 0);
    snprintf(link, sizeof link, "%s/.local/lib/python3.11", home);
    assert_int_equal(symlink("../../base/lib/python3.11", link), 0);
    unsetenv("VIRTUAL_ENV");
    unsetenv("CONDA_PREFIX");
    unsetenv("PYTHONUSERBASE");
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", home, 1);
    setenv("AITK_CUDA_LIB_DIR", FX "/no-cuda-here", 1);
    const char *cases[][2] = {{"", ""}, {"1", ""}, {"1", "base"}, {"", "base"}};
    const int judged[] = {1, 0, 0, 1};
    for (size_t k = 0; k < 4; k++) {
        setenv("PYTHONNOUSERSITE", cases[k][0], 1);
        char base[600];
        snprintf(base, sizeof base, "%s/%s", home, cases[k][1]);
        if (*cases[k][1])
            setenv("PYTHONUSERBASE", base, 1);
        else
            unsetenv("PYTHONUSERBASE");
        aitk_run_ctx ctx = {0};
        ctx.env = cJSON_CreateObject();
        assert_int_equal(aitk_deps_checks(&ctx), AITK_OK);
        const aitk_check *c = &ctx.checks.items[1];
        /* /usr/local and /usr may hold a torch of this machine's own. */
        const bool user = strstr(c->message, home) != NULL;
        if (user != (judged[k] == 1))
            fail_msg("PYTHONNOUSERSITE='%s' PYTHONUSERBASE='%s': %s", cases[k][0], cases[k][1],
                     c->message);
        aitk_checklist_free(&ctx.checks);
        cJSON_Delete(ctx.env);
    }
    unsetenv("PYTHONNOUSERSITE");
    unsetenv("PYTHONUSERBASE");
    unsetenv("AITK_CUDA_LIB_DIR");
    if (old_home) {
        setenv("HOME", old_home, 1);
        free(old_home);
    }
    assert_int_equal(aitk_test_remove_tree(home), 0);
}

static void test_torch_of_selected_python_env(void **state)
{
    (void)state;
    /* The python.* checks chose an environment (here as --python would
     * have): deps.torch examines that environment's torch, even with no
     * $VIRTUAL_ENV and nothing else to find it by. */
    unsetenv("VIRTUAL_ENV");
    unsetenv("CONDA_PREFIX");
    setenv("AITK_CUDA_LIB_DIR", FX "/no-cuda-here", 1);
    aitk_run_ctx ctx = {0};
    ctx.env = cJSON_Parse("{\"python\": {\"environments\": [{\"packages\": {\"torch\": "
                          "{\"site\": \"" FX "/elf/venv/lib/python3.11/site-packages\"}}}]}}");
    assert_non_null(ctx.env);
    assert_int_equal(aitk_deps_checks(&ctx), AITK_OK);
    unsetenv("AITK_CUDA_LIB_DIR");
    assert_int_equal(ctx.checks.count, 2);
    const aitk_check *c = &ctx.checks.items[1];
    assert_string_equal(c->id, "deps.torch");
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    assert_non_null(strstr(c->observed, "libtorch_cuda.so -> libcudart.so.99: NOT FOUND"));
    cJSON *torch = cJSON_GetObjectItem(cJSON_GetObjectItem(ctx.env, "deps"), "torch");
    assert_string_equal(cJSON_GetObjectItem(torch, "dir")->valuestring,
                        FX "/elf/venv/lib/python3.11/site-packages/torch/lib");
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

/* deps.torch for torch apart from pip's nvidia-* wheels, with `target`
 * (a PYTHONPATH folder holding them) on sys.path or not. */
#define APART FX "/elf/apart"
static const aitk_check *run_apart(aitk_run_ctx *ctx, const char *venv, bool target)
{
    unsetenv("VIRTUAL_ENV");
    unsetenv("CONDA_PREFIX");
    setenv("AITK_CUDA_LIB_DIR", FX "/no-cuda-here", 1);
    char json[2048];
    snprintf(json, sizeof json,
             "{\"python\": {\"environments\": [{\"site_packages\": [%s"
             "{\"path\": \"%s/lib/python3.11/site-packages\", \"kind\": \"environment\"}],"
             "\"torch\": {\"cuda\": \"12.4\"}, \"packages\": {\"torch\": "
             "{\"site\": \"%s/lib/python3.11/site-packages\"}}}]}}",
             target ? "{\"path\": \"" APART "/target\", \"kind\": \"PYTHONPATH\"}," : "", venv,
             venv);
    ctx->env = cJSON_Parse(json);
    assert_non_null(ctx->env);
    assert_int_equal(aitk_deps_checks(ctx), AITK_OK);
    unsetenv("AITK_CUDA_LIB_DIR");
    assert_int_equal(ctx->checks.count, 2);
    assert_string_equal(ctx->checks.items[1].id, "deps.torch");
    return &ctx->checks.items[1];
}

static void free_ctx(aitk_run_ctx *ctx)
{
    aitk_checklist_free(&ctx->checks);
    cJSON_Delete(ctx->env);
    memset(ctx, 0, sizeof *ctx);
}

/* deps.torch passes for `venv` with the wheels on sys.path, at `level`. */
static void expect_apart_pass(const char *venv, aitk_level level, const char *what)
{
    aitk_run_ctx ctx = {.level = level};
    const aitk_check *c = run_apart(&ctx, venv, true);
    if (c->status != AITK_CHECK_PASS)
        fail_msg("%s: %s | %s", what, c->observed, c->message);
    free_ctx(&ctx);
}

static void test_torch_apart_from_wheels(void **state)
{
    (void)state;
    /* torch 2.5.1's shape: libtorch_global_deps.so cannot find libcudart,
     * torch preloads its list from sys.path, and the libraries bind to
     * those copies (libcublasLt.so.98 too, which libcublas brings in). */
    expect_apart_pass(APART "/venv", AITK_LEVEL_QUICK, "with the wheels on sys.path");
    /* The real loader agrees, given the same libraries first. */
    expect_apart_pass(APART "/venv", AITK_LEVEL_STANDARD, "loaded after the preloads");
    /* Not on sys.path: torch raises ValueError; the links are not found. */
    aitk_run_ctx ctx = {0};
    const aitk_check *c = run_apart(&ctx, APART "/venv", false);
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    if (!strstr(c->observed, "libtorch_cuda.so -> libcudart.so.98: NOT FOUND") ||
        !strstr(c->message, "libcublas.so.*[0-9] from nvidia/cublas/lib") ||
        !strstr(c->message, "raises ValueError"))
        fail_msg("without them: %s | %s", c->observed, c->message);
    free_ctx(&ctx);
    /* A listed library no folder holds: torch raises, nothing preloaded. */
    c = run_apart(&ctx, APART "/venv-cudnn", true);
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    if (!strstr(c->message, "libcudnn.so.*[0-9] from nvidia/cudnn/lib") ||
        !strstr(c->observed, "libcublas.so.98: NOT FOUND"))
        fail_msg("cuDNN listed and absent: %s | %s", c->observed, c->message);
    free_ctx(&ctx);
}

static void test_torch_apart_best_effort(void **state)
{
    (void)state;
    /* torch 2.15's shape: libtorch_global_deps.so loads (libcudart in the
     * venv), then each listed library found is preloaded, the absent
     * cuDNN and nvtx passed over. */
    expect_apart_pass(APART "/venv-new", AITK_LEVEL_QUICK, "best effort, wheels on sys.path");
    aitk_run_ctx ctx = {0};
    const aitk_check *c = run_apart(&ctx, APART "/venv-new", false);
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    if (!strstr(c->observed, "libtorch_cuda.so -> libcublas.so.98: NOT FOUND") ||
        strstr(c->message, "ValueError"))
        fail_msg("best effort, without them: %s | %s", c->observed, c->message);
    free_ctx(&ctx);
}

static void test_real_cuda(void **state)
{
    (void)state;
    if (!fx_exists("/usr/local/cuda/lib64/libcudart.so.13") &&
        !fx_exists("/usr/local/cuda/lib64/libcudart.so.12"))
        skip();
    aitk_run_ctx ctx = {0};
    ctx.env = cJSON_CreateObject();
    assert_int_equal(aitk_deps_checks(&ctx), AITK_OK);
    assert_int_equal(ctx.checks.count, 2);
    assert_string_equal(ctx.checks.items[0].id, "deps.cuda");
    assert_int_not_equal(ctx.checks.items[0].status, AITK_CHECK_SKIP);
    assert_string_equal(ctx.checks.items[1].id, "deps.torch");
    cJSON *deps = cJSON_GetObjectItem(ctx.env, "deps");
    cJSON *libs = cJSON_GetObjectItem(cJSON_GetObjectItem(deps, "cuda"), "libraries");
    assert_true(cJSON_GetArraySize(libs) >= 5);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

/* A library the loader refuses alone for a symbol its needer's other links
 * give (torch's libtorch_nvshmem.so, needed by libtorch_cuda.so, false-failed
 * the lent H200): not broken when the needer in the same folder loads; broken
 * with no needer, or when the needer does not load either. The verdicts were
 * first taken from Python's ctypes.CDLL on the same files. */
static void test_loaded_inside_needer(void **state)
{
    (void)state;
    aitk_run_ctx ctx = {.level = AITK_LEVEL_STANDARD};
    const aitk_check *c = run_dir(&ctx, FX "/elf/inside");
    if (c->status != AITK_CHECK_PASS)
        fail_msg("inside: %s | %s", c->observed, c->message);
    assert_non_null(strstr(c->message, "1 loaded only as a link of another library here"));
    const cJSON *lib;
    int seen = 0;
    cJSON_ArrayForEach(lib, cJSON_GetObjectItem(cJSON_GetObjectItem(ctx.env, "cuda"), "libraries"))
    {
        const cJSON *in = cJSON_GetObjectItem(lib, "loaded_inside");
        if (strstr(cJSON_GetObjectItem(lib, "path")->valuestring, "libinner.so")) {
            seen = 1;
            assert_non_null(strstr(cJSON_GetObjectItem(lib, "load")->valuestring,
                                   "undefined symbol: aitk_provided_data"));
            assert_non_null(in);
            assert_non_null(strstr(in->valuestring, "/elf/inside/libouter.so"));
        } else {
            assert_null(in);
        }
    }
    assert_true(seen);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
    const char *broken[] = {FX "/elf/orphan", FX "/elf/halfway"};
    for (size_t i = 0; i < 2; i++) {
        memset(&ctx, 0, sizeof ctx);
        ctx.level = AITK_LEVEL_STANDARD;
        c = run_dir(&ctx, broken[i]);
        if (c->status != AITK_CHECK_FAIL || !strstr(c->observed, "undefined symbol: "
                                                                  "aitk_provided_data"))
            fail_msg("%s: %s | %s", broken[i], c->observed, c->message);
        assert_null(strstr(c->message, "loaded only as a link"));
        aitk_checklist_free(&ctx.checks);
        cJSON_Delete(ctx.env);
    }
}

/* A remedy written for any variant ("--index-url .../cu<NNN>") names the
 * one the selected environment's torch is built for. */
static void test_remedy_names_variant(void **state)
{
    (void)state;
    aitk_run_ctx ctx = {0};
    ctx.env = cJSON_Parse("{\"python\": {\"environments\": [{\"torch\": {\"variant\": "
                          "\"cu124\"}}]}}");
    assert_non_null(ctx.env);
    assert_int_equal(aitk_deps_check_dir(&ctx, "deps.torch", "t",
                                         FX "/elf/venv/lib/python3.11/site-packages/torch/lib",
                                         ctx.env), AITK_OK);
    const aitk_check *c = &ctx.checks.items[0];
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    if (!strstr(c->remedy, "--index-url https://download.pytorch.org/whl/cu124)") ||
        strstr(c->remedy, "cu<NNN>"))
        fail_msg("remedy: %s", c->remedy);
    aitk_checklist_free(&ctx.checks);
    cJSON_Delete(ctx.env);
}

int main(void)
{
    /* The loads happen in the real aitk-validate (common/libload.h). */
    aitk_libload_set_helper(AITK_EXE);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failing_folder),
        cmocka_unit_test(test_opened_at_run_time_warns),
        cmocka_unit_test(test_driver_only_follows),
        cmocka_unit_test(test_remedy_names_variant),
        cmocka_unit_test(test_passing_and_absent),
        cmocka_unit_test(test_not_libraries),
        cmocka_unit_test(test_loader_confirms),
        cmocka_unit_test(test_loaded_inside_needer),
        cmocka_unit_test(test_dangling_links),
        cmocka_unit_test(test_torch_in_venv),
        cmocka_unit_test(test_torch_of_selected_python_env),
        cmocka_unit_test(test_torch_in_user_site),
        cmocka_unit_test(test_torch_apart_from_wheels),
        cmocka_unit_test(test_torch_apart_best_effort),
        cmocka_unit_test(test_real_cuda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
