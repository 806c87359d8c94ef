/* `aitk-validate deps` as a user runs it: the torch-2.4.0-shaped fixture
 * gives the broken chain, the folders in order, the remedy with its source,
 * exit 1, and --json carries the same; bad input exits 2; a whole tree
 * exits 0. Also the remedies file: matching, and a broken edited copy
 * (AITK_DATA_DIR) named with file:line:column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "fixtures.h"
#include "validate/libdeps/opened.h"
#include "validate/libdeps/remedies.h"
#include "tests/test_time.h"

static int run_deps(const char *const *args, aitk_str *out, aitk_str *errout,
                    const char *const *env)
{
    const char *argv[16] = {AITK_EXE, "deps"};
    size_t n = 2;
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(60000), .env = env};
    aitk_proc_result r = {0};
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_proc_run(argv, &o, &r, out, errout, &err), AITK_OK);
    aitk_str_free(&err);
    assert_true(r.exited);
    return r.exit_code;
}

static void need_pe(void)
{
    if (!fx_exists(FX_TORCH "/fbgemm.dll"))
        skip();
}

static void test_fbgemm_text(void **state)
{
    (void)state;
    need_pe();
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {"--windows-root", FX_WINROOT, FX_TORCH "/fbgemm.dll", NULL};
    assert_int_equal(run_deps(args, &out, &err, NULL), 1);
    const char *o = aitk_str_cstr(&out);
    const char *want[] = {
        "PROBLEM: fbgemm.dll -> libomp140.x86_64.dll: NOT FOUND",
        "searched, in order:",
        "1. " FX_TORCH " (the DLL's folder)",
        "2. " FX "/pe/env (application folder (the environment's own, no pyvenv.cfg))",
        "3. " FX "/pe/env/Library/bin (add_dll_directory (Library\\bin))",
        "4. " FX_WINROOT "/Windows/System32 (System32)",
        "torch to 2.4.1", "MSVC v143 build tools", "source: pytorch/pytorch#131662",
        "result: 1 problem"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(o, want[i]))
            fail_msg("output lacks '%s':\n%s", want[i], o);
    /* The search order is printed in order. */
    assert_true(strstr(o, "1. ") < strstr(o, "2. ") && strstr(o, "2. ") < strstr(o, "3. ") &&
                strstr(o, "3. ") < strstr(o, "4. "));
    assert_null(strstr(o, "KERNEL32.dll: NOT FOUND"));
    assert_null(strstr(o, "msvcrt.dll: NOT FOUND"));
    assert_null(strstr(o, "api-ms-win-crt-runtime-l1-1-0.dll: NOT FOUND"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void test_fbgemm_json(void **state)
{
    (void)state;
    need_pe();
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {"--json", "--windows-root", FX_WINROOT, FX_TORCH "/fbgemm.dll", NULL};
    assert_int_equal(run_deps(args, &out, &err, NULL), 1);
    cJSON *doc = cJSON_Parse(aitk_str_cstr(&out));
    assert_non_null(doc);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(doc, "ok")));
    cJSON *root = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "roots"), 0);
    cJSON *problems = cJSON_GetObjectItem(root, "problems");
    assert_int_equal(cJSON_GetArraySize(problems), 1);
    cJSON *p = cJSON_GetArrayItem(problems, 0);
    assert_string_equal(cJSON_GetObjectItem(p, "name")->valuestring, "libomp140.x86_64.dll");
    assert_string_equal(cJSON_GetObjectItem(p, "kind")->valuestring, "not_found");
    cJSON *chain = cJSON_GetObjectItem(p, "chain");
    assert_int_equal(cJSON_GetArraySize(chain), 2);
    assert_string_equal(cJSON_GetArrayItem(chain, 0)->valuestring, "fbgemm.dll");
    assert_string_equal(cJSON_GetArrayItem(chain, 1)->valuestring, "libomp140.x86_64.dll");
    cJSON *searched = cJSON_GetObjectItem(p, "searched");
    assert_int_equal(cJSON_GetArraySize(searched), 4);
    assert_string_equal(cJSON_GetArrayItem(searched, 0)->valuestring,
                        FX_TORCH " (the DLL's folder)");
    cJSON *rem = cJSON_GetObjectItem(p, "remedy");
    assert_non_null(strstr(cJSON_GetObjectItem(rem, "fix")->valuestring, "2.4.1"));
    assert_non_null(strstr(cJSON_GetObjectItem(rem, "source")->valuestring, "131662"));
    cJSON_Delete(doc);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void test_exit_codes(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *ok[] = {FX "/elf/chain/libtop.so", NULL};
    assert_int_equal(run_deps(ok, &out, &err, NULL), 0);
    assert_non_null(strstr(aitk_str_cstr(&out), "result: 0 problems"));
    const char *missing[] = {FX "/elf/missing/libneedsgone.so", NULL};
    assert_int_equal(run_deps(missing, &out, &err, NULL), 1);
    const char *nofile[] = {FX "/nothing-here.so", NULL};
    aitk_str_clear(&err);
    assert_int_equal(run_deps(nofile, &out, &err, NULL), 2);
    assert_non_null(strstr(aitk_str_cstr(&err), "nothing-here.so"));
    const char *notelf[] = {FX "/src/leaf.c", NULL};
    assert_int_equal(run_deps(notelf, &out, &err, NULL), 2);
    const char *none[] = {NULL};
    assert_int_equal(run_deps(none, &out, &err, NULL), 2);
    const char *badroot[] = {"--windows-root", FX "/no-windows-here", FX_TORCH "/c10.dll", NULL};
    aitk_str_clear(&err);
    assert_int_equal(run_deps(badroot, &out, &err, NULL), 2);
    assert_non_null(strstr(aitk_str_cstr(&err), "no-windows-here: not a folder"));
    const char *badopt[] = {"--depth", "zero", FX "/elf/chain/libtop.so", NULL};
    assert_int_equal(run_deps(badopt, &out, &err, NULL), 2);
    /* add_dll_directory refuses a missing folder; --path means nothing
     * without --legacy: both are usage errors, not silently accepted. */
    const char *baddll[] = {"--dll-dir", FX "/no-such-dir", FX "/elf/chain/libtop.so", NULL};
    aitk_str_clear(&err);
    assert_int_equal(run_deps(baddll, &out, &err, NULL), 2);
    assert_non_null(strstr(aitk_str_cstr(&err), "--dll-dir " FX "/no-such-dir: not a folder"));
    const char *lonepath[] = {"--path", FX, FX "/elf/chain/libtop.so", NULL};
    aitk_str_clear(&err);
    assert_int_equal(run_deps(lonepath, &out, &err, NULL), 2);
    assert_non_null(strstr(aitk_str_cstr(&err), "--path only applies with --legacy"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* Every PATH is checked before anything is printed: exit 2 writes nothing
 * to stdout, even after a good library (its report used to come first). A
 * GNU ld script is skipped, not bad input, unless it is all there is. */
static void test_inputs_checked_first(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *good_missing[] = {FX "/elf/chain/libtop.so", FX "/nothing-here.so", NULL};
    assert_int_equal(run_deps(good_missing, &out, &err, NULL), 2);
    assert_int_equal(out.len, 0);
    assert_non_null(strstr(aitk_str_cstr(&err), "nothing-here.so"));
    /* A PATH is named as it was given, not made absolute. */
    const char *relative[] = {"no-such-dir/nothing-here.so", NULL};
    aitk_str_clear(&err);
    assert_int_equal(run_deps(relative, &out, &err, NULL), 2);
    if (!strstr(aitk_str_cstr(&err), "deps: no-such-dir/nothing-here.so: "))
        fail_msg("stderr: %s", aitk_str_cstr(&err));
    const char *good_folder[] = {FX "/elf/chain/libtop.so", FX "/elf", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(good_folder, &out, &err, NULL), 2);
    assert_int_equal(out.len, 0);
    const char *script[] = {FX "/elf/chain/libtop.so", FX "/elf/ldscript/libscript.so", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(script, &out, &err, NULL), 0);
    assert_non_null(strstr(aitk_str_cstr(&out), "result: 0 problems"));
    assert_non_null(strstr(aitk_str_cstr(&out), FX "/elf/ldscript/libscript.so: skipped, not a "
                                                   "shared library: a GNU ld script"));
    const char *missing_and_script[] = {FX "/elf/missing/libneedsgone.so",
                                        FX "/elf/ldscript/libscript.so", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(missing_and_script, &out, &err, NULL), 1);
    const char *json[] = {"--json", FX "/elf/ldscript/libscript.so", FX "/elf/chain/libtop.so", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(json, &out, &err, NULL), 0);
    cJSON *doc = cJSON_Parse(aitk_str_cstr(&out));
    assert_non_null(doc);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(doc, "ok")));
    cJSON *sk = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "skipped"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(sk, "reason")), "a GNU ld script");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "roots")), 1);
    cJSON_Delete(doc);
    const char *only_script[] = {FX "/elf/ldscript/libscript.so", NULL};
    aitk_str_clear(&out);
    aitk_str_clear(&err);
    assert_int_equal(run_deps(only_script, &out, &err, NULL), 2);
    assert_int_equal(out.len, 0);
    assert_non_null(strstr(aitk_str_cstr(&err), "not a shared library: a GNU ld script"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* A library folder as a shell glob meets it: files that are no library by
 * design (a GNU ld script, an ar archive even under a .so name) or by name
 * (README.txt) are skipped; files named like a library that are none (a Git
 * LFS pointer, an empty file) are problems, with the remedy. */
typedef struct glob_dir {
    char dir[32];
    aitk_str paths[5];
} glob_dir;

static const char lfs_pointer[] =
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 876543210\n";

static void glob_dir_make(glob_dir *g)
{
    strcpy(g->dir, "/tmp/aitk-glob-XXXXXX");
    assert_non_null(mkdtemp(g->dir));
    static const char script[] = "/* GNU ld script */\nGROUP ( libc.so.6 )\n";
    static const char archive[] = "!<arch>\n";
    /* In the order a glob gives them (byte order). */
    assert_true(fx_put(g->dir, "README.txt", "how to build\n", 13));
    assert_true(fx_put(g->dir, "libarch.so", archive, sizeof archive - 1));
    assert_true(fx_put(g->dir, "libbar.so", "", 0));
    assert_true(fx_put(g->dir, "libfoo.so", lfs_pointer, sizeof lfs_pointer - 1));
    assert_true(fx_put(g->dir, "libscript.so", script, sizeof script - 1));
    const char *names[] = {"README.txt", "libarch.so", "libbar.so", "libfoo.so", "libscript.so"};
    for (size_t i = 0; i < 5; i++) {
        g->paths[i] = (aitk_str)AITK_STR_INIT;
        aitk_str_appendf(&g->paths[i], "%s/%s", g->dir, names[i]);
    }
}

static void glob_dir_remove(glob_dir *g)
{
    for (size_t i = 0; i < 5; i++) {
        remove(g->paths[i].ptr);
        aitk_str_free(&g->paths[i]);
    }
    assert_int_equal(rmdir(g->dir), 0);
}

static void test_glob_one_rule(void **state)
{
    (void)state;
    glob_dir g;
    glob_dir_make(&g);
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {g.paths[0].ptr, g.paths[1].ptr, g.paths[2].ptr, g.paths[3].ptr,
                          g.paths[4].ptr, NULL};
    assert_int_equal(run_deps(args, &out, &err, NULL), 1);
    const char *o = aitk_str_cstr(&out);
    aitk_str want[9];
    for (size_t i = 0; i < 9; i++)
        want[i] = (aitk_str)AITK_STR_INIT;
    aitk_str_appendf(&want[0], "%s: skipped, not a shared library: neither an ELF nor a PE",
                     g.paths[0].ptr);
    aitk_str_appendf(&want[1], "%s: skipped, not a shared library: an ar archive", g.paths[1].ptr);
    aitk_str_appendf(&want[2], "%s: skipped, not a shared library: a GNU ld script",
                     g.paths[4].ptr);
    aitk_str_appendf(&want[3], "%s (not a shared library)\n  PROBLEM: libbar.so: NOT A LIBRARY\n"
                               "    file: %s\n    why: an empty file\n", g.paths[2].ptr,
                     g.paths[2].ptr);
    aitk_str_appendf(&want[4], "%s (not a shared library)\n  PROBLEM: libfoo.so: NOT A LIBRARY\n"
                               "    file: %s\n    why: a Git LFS pointer", g.paths[3].ptr,
                     g.paths[3].ptr);
    aitk_str_append(&want[5], "git lfs pull");
    aitk_str_append(&want[6], "pip install --force-reinstall");
    aitk_str_append(&want[7], "source: Git LFS specification");
    aitk_str_append(&want[8], "result: 1 problem, 0 warnings (0 links examined)");
    for (size_t i = 0; i < 9; i++) {
        if (!strstr(o, want[i].ptr))
            fail_msg("output lacks '%s':\n%s", want[i].ptr, o);
        aitk_str_free(&want[i]);
    }
    /* Exit 1 through the problems alone: the skipped files change nothing. */
    const char *lone_pointer[] = {g.paths[3].ptr, NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(lone_pointer, &out, &err, NULL), 1);
    assert_non_null(strstr(aitk_str_cstr(&out), "why: a Git LFS pointer"));
    /* --load: this OS's loader refuses it too, its witness, not a second problem. */
    const char *load_pointer[] = {"--load", g.paths[3].ptr, NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(load_pointer, &out, &err, NULL), 1);
    if (!strstr(aitk_str_cstr(&out), "  loader says: ") ||
        strstr(aitk_str_cstr(&out), "not loadable on this OS") ||
        !strstr(aitk_str_cstr(&out), "result: 1 problem,"))
        fail_msg("%s", aitk_str_cstr(&out));
    const char *pointer_and_script[] = {g.paths[4].ptr, g.paths[3].ptr, NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(pointer_and_script, &out, &err, NULL), 1);
    /* The ld script skipped (stdout as the first line), the pointer a problem. */
    assert_non_null(strstr(aitk_str_cstr(&out), "libscript.so: skipped, not a shared library: "
                                                "a GNU ld script\n"));
    assert_non_null(strstr(aitk_str_cstr(&out), "PROBLEM: libfoo.so: NOT A LIBRARY"));
    assert_non_null(strstr(aitk_str_cstr(&out), "result: 1 problem,"));
#ifndef _WIN32
    /* A pointer named like a Windows DLL: ld.so's words are not what its
     * user met, so no loader is asked. */
    assert_true(fx_put(g.dir, "fbgemm.dll", lfs_pointer, sizeof lfs_pointer - 1));
    aitk_str dll = AITK_STR_INIT;
    aitk_str_appendf(&dll, "%s/fbgemm.dll", g.dir);
    const char *load_dll[] = {"--load", dll.ptr, NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(load_dll, &out, &err, NULL), 1);
    assert_non_null(strstr(aitk_str_cstr(&out), "  loader says: not loadable on this OS\n"));
    remove(dll.ptr);
    aitk_str_free(&dll);
#endif
    /* Everything skipped: nothing to examine (exit 2), each named on stderr. */
    const char *skipped_only[] = {g.paths[0].ptr, g.paths[1].ptr, NULL};
    aitk_str_clear(&out);
    aitk_str_clear(&err);
    assert_int_equal(run_deps(skipped_only, &out, &err, NULL), 2);
    assert_int_equal(out.len, 0);
    assert_non_null(strstr(aitk_str_cstr(&err), "README.txt: not a shared library: neither"));
    assert_non_null(strstr(aitk_str_cstr(&err), "libarch.so: not a shared library: an ar"));
    aitk_str_free(&out);
    aitk_str_free(&err);
    glob_dir_remove(&g);
}

static const char *json_str(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
    if (!s)
        fail_msg("no string '%s' in %s", key, cJSON_PrintUnformatted(o));
    return s;
}

static void test_glob_one_rule_json(void **state)
{
    (void)state;
    glob_dir g;
    glob_dir_make(&g);
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {"--json",       g.paths[0].ptr, g.paths[1].ptr, g.paths[2].ptr,
                          g.paths[3].ptr, g.paths[4].ptr, NULL};
    assert_int_equal(run_deps(args, &out, &err, NULL), 1);
    cJSON *doc = cJSON_Parse(aitk_str_cstr(&out));
    assert_non_null(doc);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(doc, "ok")));
    cJSON *skipped = cJSON_GetObjectItem(doc, "skipped");
    assert_int_equal(cJSON_GetArraySize(skipped), 3);
    const char *skip_path[] = {g.paths[0].ptr, g.paths[1].ptr, g.paths[4].ptr};
    const char *skip_kind[] = {"unknown", "ar_archive", "ld_script"};
    for (int i = 0; i < 3; i++) {
        cJSON *s = cJSON_GetArrayItem(skipped, i);
        assert_string_equal(json_str(s, "path"), skip_path[i]);
        assert_string_equal(json_str(s, "kind"), skip_kind[i]);
    }
    assert_string_equal(json_str(cJSON_GetArrayItem(skipped, 2), "reason"), "a GNU ld script");
    cJSON *roots = cJSON_GetObjectItem(doc, "roots");
    assert_int_equal(cJSON_GetArraySize(roots), 2);
    const char *root_path[] = {g.paths[2].ptr, g.paths[3].ptr};
    const char *root_kind[] = {"empty", "git_lfs_pointer"};
    const char *root_name[] = {"libbar.so", "libfoo.so"};
    const char *root_why[] = {"an empty file", "a Git LFS pointer"};
    for (int i = 0; i < 2; i++) {
        cJSON *r = cJSON_GetArrayItem(roots, i);
        assert_string_equal(json_str(r, "path"), root_path[i]);
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "format")));
        assert_string_equal(json_str(r, "not_library"), root_kind[i]);
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r, "ok")));
        cJSON *problems = cJSON_GetObjectItem(r, "problems");
        assert_int_equal(cJSON_GetArraySize(problems), 1);
        cJSON *p = cJSON_GetArrayItem(problems, 0);
        assert_string_equal(json_str(p, "kind"), "bad_file");
        assert_string_equal(json_str(p, "not_library"), root_kind[i]);
        /* A root's problem is named by its path, as for a cut-off root. */
        assert_string_equal(json_str(p, "name"), root_path[i]);
        cJSON *chain = cJSON_GetObjectItem(p, "chain");
        assert_int_equal(cJSON_GetArraySize(chain), 1);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(chain, 0)), root_name[i]);
        assert_string_equal(json_str(p, "path"), root_path[i]);
        if (strncmp(json_str(p, "detail"), root_why[i], strlen(root_why[i])) != 0)
            fail_msg("detail: %s", json_str(p, "detail"));
        cJSON *rem = cJSON_GetObjectItem(p, "remedy");
        assert_non_null(strstr(json_str(rem, "fix"), "git lfs pull"));
        assert_non_null(strstr(json_str(rem, "source"), "Git LFS specification"));
        assert_string_equal(json_str(cJSON_GetObjectItem(r, "tree"), "state"), "bad_file");
    }
    cJSON_Delete(doc);
    aitk_str_free(&out);
    aitk_str_free(&err);
    glob_dir_remove(&g);
}

/* Each PATH is opened once by the whole command (it used to be three
 * times: a sniff to check it, a sniff in the analysis, the object read),
 * counted by the kernel while the real program runs. */
static void test_one_open_per_input(void **state)
{
    (void)state;
#ifndef __linux__
    skip();
#else
    glob_dir g;
    glob_dir_make(&g);
    /* A library of our own (another test may open the shared fixture). */
    size_t len = 0;
    unsigned char *lib = fx_read(FX "/elf/chain/sub/leafdir/libleaf.so.1", &len);
    assert_non_null(lib);
    assert_true(fx_put(g.dir, "libleaf.so.1", lib, len));
    aitk_free(lib);
    aitk_str leaf = AITK_STR_INIT;
    aitk_str_appendf(&leaf, "%s/libleaf.so.1", g.dir);
    const char *watched[] = {leaf.ptr, g.paths[3].ptr, g.paths[4].ptr};
    int w[3];
    for (size_t i = 0; i < 3; i++)
        if ((w[i] = fx_watch_opens(watched[i])) < 0)
            skip();
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {"--json", leaf.ptr, g.paths[3].ptr, g.paths[4].ptr, NULL};
    assert_int_equal(run_deps(args, &out, &err, NULL), 1);
    for (size_t i = 0; i < 3; i++) {
        int opens, closes;
        fx_count_opens(w[i], &opens, &closes);
        close(w[i]);
        if (opens != 1)
            fail_msg("%s opened %d times", watched[i], opens);
    }
    /* The library was examined from that one open. */
    cJSON *doc = cJSON_Parse(aitk_str_cstr(&out));
    cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "roots"), 0);
    assert_string_equal(json_str(first, "format"), "elf");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(first, "ok")));
    cJSON_Delete(doc);
    remove(leaf.ptr);
    aitk_str_free(&leaf);
    aitk_str_free(&out);
    aitk_str_free(&err);
    glob_dir_remove(&g);
#endif
}

/* A library name from the file with control characters is printed escaped,
 * never raw to the terminal; JSON keeps the name itself. */
static void test_control_characters_escaped(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {"--all", FX "/elf/escape/libuseesc.so", NULL};
    assert_int_equal(run_deps(args, &out, &err, NULL), 1);
    for (size_t i = 0; i < out.len; i++)
        if (((unsigned char)out.ptr[i] < 0x20 && out.ptr[i] != '\n') || out.ptr[i] == 0x7f)
            fail_msg("raw control character 0x%02x in:\n%s", (unsigned char)out.ptr[i], out.ptr);
    assert_non_null(strstr(aitk_str_cstr(&out),
                           "libuseesc.so -> lib\\x1b]0;PWN\\x07\\x1b[2J.so: NOT FOUND"));
    /* A newline in a name stays in the name: the verdict keeps one result
     * line, ours, and the forged one shows as text within the name. */
    const char *nl[] = {FX "/elf/escape/libusenl.so", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(nl, &out, &err, NULL), 1);
    size_t results = 0;
    for (const char *at = aitk_str_cstr(&out); (at = strstr(at, "\n  result: ")); at++)
        results++;
    if (results != 1 || !strstr(aitk_str_cstr(&out), "  result: 1 problem, 0 warnings") ||
        !strstr(aitk_str_cstr(&out), "libusenl.so -> libnl\\x0a  result: 0 problems"))
        fail_msg("the name forged a line:\n%s", aitk_str_cstr(&out));
    const char *json[] = {"--json", FX "/elf/escape/libuseesc.so", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(json, &out, &err, NULL), 1);
    cJSON *doc = cJSON_Parse(aitk_str_cstr(&out));
    assert_non_null(doc);
    cJSON *p = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "roots"), 0), "problems"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")),
                        "lib\033]0;PWN\a\033[2J.so");
    cJSON_Delete(doc);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* The fix follows what is wrong with the copy found, not the generic
 * "find which package ships this library" (remedies.yaml `when:`). */
static void test_remedy_by_problem_kind(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *cut[] = {FX "/elf/load/cutdep/libuser.so", NULL};
    assert_int_equal(run_deps(cut, &out, &err, NULL), 1);
    assert_non_null(strstr(aitk_str_cstr(&out), "fix: The file is cut short: reinstall or "
                                                "re-download"));
    const char *old[] = {FX "/elf/oldver/libneedsver.so", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(old, &out, &err, NULL), 1);
    assert_non_null(strstr(aitk_str_cstr(&out), "libneedsver.so -> libver.so: MISSING VERSION"));
    assert_non_null(strstr(aitk_str_cstr(&out), "fix: This library is older than what"));
    /* The version is there, the symbol is not: another release, not an
     * older one, and the fix is to load one release. */
    const char *other[] = {FX "/elf/symver/libsvuse.so", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(other, &out, &err, NULL), 1);
    assert_non_null(strstr(aitk_str_cstr(&out), "libsvuse.so -> libsv.so.1: MISSING SYMBOL"));
    assert_non_null(strstr(aitk_str_cstr(&out), "fix: Make the two copies the same release"));
    assert_null(strstr(aitk_str_cstr(&out), "This library is older"));
    /* glibc keeps its own advice: never copy a newer libc in. */
    const char *glibc[] = {FX "/elf/glibc/libtoonew.so", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run_deps(glibc, &out, &err, NULL), 1);
    assert_non_null(strstr(aitk_str_cstr(&out), "never copy a newer libc"));
    /* VCOMP140.DLL (torch 2.4.0 imports it) comes with the VC++
     * redistributable: it had "no known remedy". */
    if (fx_exists(FX "/pe/vcomp/usevcomp.dll")) {
        const char *vcomp[] = {"--windows-root", FX_WINROOT, FX "/pe/vcomp/usevcomp.dll", NULL};
        aitk_str_clear(&out);
        assert_int_equal(run_deps(vcomp, &out, &err, NULL), 1);
        const char *o = aitk_str_cstr(&out);
        if (!strstr(o, "usevcomp.dll -> VCOMP140.DLL: NOT FOUND") ||
            !strstr(o, "fix: Install the latest VC++ 2015-2022 redistributable, which ships "
                       "vcomp140.dll") ||
            strstr(o, "no known remedy"))
            fail_msg("%s", o);
    }
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* A 32-bit DLL where a 64-bit one is needed: the wrong-architecture advice
 * (skipped, not passed, where no i686 cross-compiler built the fixture). */
static void test_remedy_wrong_arch(void **state)
{
    (void)state;
    need_pe();
    if (fx_exists(FX "/pe/no-i686"))
        skip();
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *arch[] = {"--windows-root", FX_WINROOT, FX_TORCH "/torch_cuda.dll", NULL};
    assert_int_equal(run_deps(arch, &out, &err, NULL), 1);
    assert_non_null(strstr(aitk_str_cstr(&out), "zlibwapi.dll: WRONG ARCHITECTURE"));
    assert_non_null(strstr(aitk_str_cstr(&out), "the 64-bit x64 / x86-64 build"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* A looping symlink named like the library is listed as a skipped
 * candidate with its reason, not hidden behind a plain NOT FOUND. */
static void test_symlink_loop_skipped(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {FX "/elf/symloop/libneedsloop.so", NULL};
    assert_int_equal(run_deps(args, &out, &err, NULL), 1);
    const char *o = aitk_str_cstr(&out);
    assert_non_null(strstr(o, "libneedsloop.so -> libloop.so.1: NOT FOUND"));
    assert_non_null(strstr(o, "skipped candidates:\n      " FX
                              "/elf/symloop/lib/libloop.so.1 (a symbolic link loop: ld.so gives "
                              "up the rest of this folder list, DT_RUNPATH of libneedsloop.so)"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* A Git LFS pointer ahead of the real library in RUNPATH: the pointer is
 * where the load stops, and the real copy is named as never reached. */
static void test_refused_first_copy_worded(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {FX "/elf/lfsdep/libuser.so", NULL};
    assert_int_equal(run_deps(args, &out, &err, NULL), 1);
    const char *o = aitk_str_cstr(&out);
    assert_non_null(strstr(o, "PROBLEM: libuser.so -> libptr.so.1: NOT A LIBRARY"));
    assert_non_null(strstr(o, "    first found (the load stops there): " FX
                              "/elf/lfsdep/lfs/libptr.so.1\n"));
    assert_non_null(strstr(o, "the refused first copy: "));
    assert_null(strstr(o, "loaded: "));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* A program under a soname: labelled as refused, with that remedy (it was
 * UNREADABLE with "install it", though the file is installed). */
static void test_refused_file_worded(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {FX "/elf/refused/exec/libuser.so", NULL};
    assert_int_equal(run_deps(args, &out, &err, NULL), 1);
    const char *o = aitk_str_cstr(&out);
    assert_non_null(strstr(o, "PROBLEM: libuser.so -> libref.so.1: REFUSED BY THE LOADER\n"));
    assert_non_null(strstr(o, "(ld.so: cannot dynamically load executable)"));
    assert_non_null(strstr(o, "    fix: Remove or rename the file the loader stops at"));
    aitk_str_clear(&out);
    const char *json[] = {"--json", FX "/elf/refused/exec/libuser.so", NULL};
    assert_int_equal(run_deps(json, &out, &err, NULL), 1);
    assert_non_null(strstr(aitk_str_cstr(&out), "\"refused\":\ttrue")); /* cJSON_Print's tab */
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void test_depth_all_and_load(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *all[] = {"--all", FX "/elf/chain/libtop.so", NULL};
    assert_int_equal(run_deps(all, &out, &err, NULL), 0);
    assert_non_null(
        strstr(aitk_str_cstr(&out), "libleaf.so.1 => " FX "/elf/chain/sub/leafdir/libleaf.so.1"));
    aitk_str_clear(&out);
    const char *shallow[] = {"--all", "--depth", "1", FX "/elf/chain/libtop.so", NULL};
    assert_int_equal(run_deps(shallow, &out, &err, NULL), 0);
    assert_non_null(strstr(aitk_str_cstr(&out), "libmid.so.1 => "));
    assert_null(strstr(aitk_str_cstr(&out), "libleaf.so.1"));
    aitk_str_clear(&out);
    /* The real loader's verdict beside the static one (our own fixtures:
     * their code is known, so running constructors is safe). */
    const char *load_ok[] = {"--load", FX "/elf/chain/libtop.so", NULL};
    assert_int_equal(run_deps(load_ok, &out, &err, NULL), 0);
    assert_non_null(strstr(aitk_str_cstr(&out), "loader says: loaded"));
    aitk_str_clear(&out);
    const char *load_bad[] = {"--load", FX "/elf/missing/libneedsgone.so", NULL};
    assert_int_equal(run_deps(load_bad, &out, &err, NULL), 1);
    const char *says = strstr(aitk_str_cstr(&out), "loader says: ");
    assert_non_null(says);
    assert_non_null(strstr(says, "libgone.so.1"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void test_remedy_matching(void **state)
{
    (void)state;
    assert_true(aitk_remedies_glob("libcudnn*.so*", "libcudnn_ops.so.9"));
    assert_true(aitk_remedies_glob("cudart64_*.dll", "CUDART64_12.DLL"));
    assert_false(aitk_remedies_glob("libc.so.6", "libc.so.60"));
    assert_false(aitk_remedies_glob("*.dll", "x.so"));
    aitk_remedies *r = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_remedies_load(&r, &err), AITK_OK);
    const aitk_remedy *m = aitk_remedies_find(r, "LIBOMP140.X86_64.DLL", false);
    assert_non_null(m);
    assert_non_null(strstr(m->fix, "2.4.1"));
    assert_non_null(strstr(aitk_remedies_find(r, "libiomp5md.dll", true)->symptom, "Error #15"));
    assert_non_null(aitk_remedies_find(r, "libiomp5md.dll", false));
    assert_null(aitk_remedies_find(r, "libunknown-thing.so.1", false));
    /* The driver's own libraries, as the NVIDIA driver installs them on
     * Linux and Windows; the toolkit's and torch's are not. */
    assert_true(aitk_remedies_of_driver(r, "libcuda.so.1"));
    assert_true(aitk_remedies_of_driver(r, "NVCUDA.DLL"));
    assert_true(aitk_remedies_of_driver(r, "libnvidia-ml.so.1"));
    assert_true(aitk_remedies_of_driver(r, "nvml.dll"));
    assert_false(aitk_remedies_of_driver(r, "libcudart.so.12"));
    assert_false(aitk_remedies_of_driver(r, "libc10_cuda.so"));
    assert_false(aitk_remedies_of_driver(r, "libcuda.so.1.bak"));
    assert_false(aitk_remedies_of_driver(NULL, "libcuda.so.1"));
    aitk_remedies_free(r);
    aitk_str_free(&err);
}

static void test_broken_remedies_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-remedies-XXXXXX";
    assert_non_null(mkdtemp(dir));
    aitk_str path = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_str_appendf(&path, "%s/validate/libdeps", dir);
    assert_int_equal(aitk_dir_create(path.ptr, &err), AITK_OK);
    aitk_str_append(&path, "/remedies.yaml");
    /* A file of another format version is refused, as every data file is. */
    const char *other = "schema: 2\nremedies: []\n";
    assert_int_equal(aitk_file_write_atomic(path.ptr, other, strlen(other), &err), AITK_OK);
    setenv("AITK_DATA_DIR", dir, 1);
    aitk_remedies *r = NULL;
    assert_int_equal(aitk_remedies_load(&r, &err), AITK_E_PARSE);
    if (!strstr(aitk_str_cstr(&err), "remedies.yaml:1:9: schema 2 is not supported"))
        fail_msg("unexpected message: %s", aitk_str_cstr(&err));
    aitk_str_clear(&err);
    const char *text =
        "schema: 1\nremedies:\n  - match: [\"x.dll\"]\n    fix: \"a\"\n    colour: red\n";
    assert_int_equal(aitk_file_write_atomic(path.ptr, text, strlen(text), &err), AITK_OK);
    assert_int_equal(aitk_remedies_load(&r, &err), AITK_E_PARSE);
    unsetenv("AITK_DATA_DIR");
    if (!strstr(aitk_str_cstr(&err), "remedies.yaml:5:5: unknown key 'colour'"))
        fail_msg("unexpected message: %s", aitk_str_cstr(&err));
    assert_null(r);
    const char *not_bool = "schema: 1\nremedies:\n  - match: [\"x.dll\"]\n    comes_from: \"a\"\n"
                           "    symptom: \"b\"\n    fix: \"c\"\n    source: \"d\"\n"
                           "    of_driver: maybe\n";
    aitk_str_clear(&err);
    assert_int_equal(aitk_file_write_atomic(path.ptr, not_bool, strlen(not_bool), &err), AITK_OK);
    setenv("AITK_DATA_DIR", dir, 1);
    assert_int_equal(aitk_remedies_load(&r, &err), AITK_E_PARSE);
    unsetenv("AITK_DATA_DIR");
    if (!strstr(aitk_str_cstr(&err), "remedies.yaml:8:16:"))
        fail_msg("unexpected message: %s", aitk_str_cstr(&err));
    assert_null(r);
    assert_int_equal(aitk_file_write_atomic(path.ptr, text, strlen(text), &err), AITK_OK);
    /* The command says bad input (exit 2), as predict and gpus do for their data. */
    aitk_str env = AITK_STR_INIT, out = AITK_STR_INIT, errout = AITK_STR_INIT;
    aitk_str_appendf(&env, "AITK_DATA_DIR=%s", dir);
    const char *envp[] = {env.ptr, "NO_COLOR=1", NULL};
    const char *args[] = {FX "/elf/chain/libtop.so", NULL};
    assert_int_equal(run_deps(args, &out, &errout, envp), 2);
    assert_non_null(strstr(aitk_str_cstr(&errout), "remedies.yaml:5:5"));
    /* Leave nothing behind: the file, then its folders, innermost first. */
    remove(path.ptr);
    aitk_str_clear(&path);
    aitk_str_appendf(&path, "%s/validate/libdeps", dir);
    rmdir(path.ptr);
    aitk_str_clear(&path);
    aitk_str_appendf(&path, "%s/validate", dir);
    rmdir(path.ptr);
    rmdir(dir);
    aitk_str_free(&path);
    aitk_str_free(&err);
    aitk_str_free(&env);
    aitk_str_free(&out);
    aitk_str_free(&errout);
}

/* opened.yaml is checked as remedies.yaml is: a name only in
 * graph_jit_only (a typo the default walk would never follow) and a
 * malformed list are refused with file:line:column, and `deps` says bad
 * input (exit 2) rather than walking without the run-time openers. */
static void test_broken_opened_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-opened-XXXXXX";
    assert_non_null(mkdtemp(dir));
    aitk_str path = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_str_appendf(&path, "%s/validate/libdeps", dir);
    assert_int_equal(aitk_dir_create(path.ptr, &err), AITK_OK);
    aitk_str_append(&path, "/opened.yaml");
    const char *stray = "schema: 1\nopeners:\n  - library: a.so\n    opens: [b.so]\n"
                        "    graph_jit_only: [c.so]\n    when_missing: x\n    source: y\n";
    const char *not_list = "schema: 1\nopeners:\n  - library: a.so\n    opens: b.so\n"
                           "    graph_jit_only: []\n    when_missing: x\n    source: y\n";
    const struct {
        const char *text, *message;
    } cases[] = {
        {stray, "opened.yaml:5:22: 'c.so' is in graph_jit_only but not in opens"},
        {not_list, "opened.yaml:4:12:"},
    };
    setenv("AITK_DATA_DIR", dir, 1);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aitk_str_clear(&err);
        assert_int_equal(aitk_file_write_atomic(path.ptr, cases[i].text, strlen(cases[i].text),
                                                &err),
                         AITK_OK);
        aitk_opened *o = NULL;
        assert_int_equal(aitk_opened_load(&o, &err), AITK_E_PARSE);
        assert_null(o);
        if (!strstr(aitk_str_cstr(&err), cases[i].message))
            fail_msg("case %zu: unexpected message: %s", i, aitk_str_cstr(&err));
    }
    unsetenv("AITK_DATA_DIR");
    /* The command reads remedies.yaml from the same folder first: the
     * project's own copy. */
    char *remedies = NULL;
    size_t remedies_len = 0;
    aitk_str copy = AITK_STR_INIT;
    aitk_str_appendf(&copy, "%s/validate/libdeps/remedies.yaml", dir);
    assert_int_equal(aitk_file_read(AITK_SOURCE_DIR "/validate/libdeps/remedies.yaml", 1 << 20,
                                    &remedies, &remedies_len, &err),
                     AITK_OK);
    assert_int_equal(aitk_file_write_atomic(copy.ptr, remedies, remedies_len, &err), AITK_OK);
    aitk_free(remedies);
    aitk_str env = AITK_STR_INIT, out = AITK_STR_INIT, errout = AITK_STR_INIT;
    aitk_str_appendf(&env, "AITK_DATA_DIR=%s", dir);
    const char *envp[] = {env.ptr, "NO_COLOR=1", NULL};
    const char *args[] = {FX "/elf/chain/libtop.so", NULL};
    assert_int_equal(run_deps(args, &out, &errout, envp), 2);
    if (!strstr(aitk_str_cstr(&errout), "opened.yaml:4:12"))
        fail_msg("unexpected message: %s", aitk_str_cstr(&errout));
    remove(copy.ptr);
    aitk_str_free(&copy);
    remove(path.ptr);
    aitk_str_clear(&path);
    aitk_str_appendf(&path, "%s/validate/libdeps", dir);
    rmdir(path.ptr);
    aitk_str_clear(&path);
    aitk_str_appendf(&path, "%s/validate", dir);
    rmdir(path.ptr);
    rmdir(dir);
    aitk_str_free(&path);
    aitk_str_free(&err);
    aitk_str_free(&env);
    aitk_str_free(&out);
    aitk_str_free(&errout);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fbgemm_text),
        cmocka_unit_test(test_fbgemm_json),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_inputs_checked_first),
        cmocka_unit_test(test_glob_one_rule),
        cmocka_unit_test(test_glob_one_rule_json),
        cmocka_unit_test(test_one_open_per_input),
        cmocka_unit_test(test_control_characters_escaped),
        cmocka_unit_test(test_remedy_by_problem_kind),
        cmocka_unit_test(test_remedy_wrong_arch),
        cmocka_unit_test(test_symlink_loop_skipped),
        cmocka_unit_test(test_refused_first_copy_worded),
        cmocka_unit_test(test_refused_file_worded),
        cmocka_unit_test(test_depth_all_and_load),
        cmocka_unit_test(test_remedy_matching),
        cmocka_unit_test(test_broken_remedies_file),
        cmocka_unit_test(test_broken_opened_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
