/* What a root file is, and what becomes of it (sniff.c, aitk_deps_read_root):
 * the one rule for a file that is not a shared library, over files the test
 * writes as broken installs have them (a Git LFS pointer under a library's
 * name, an empty library, a linker script, an archive, a README met by a
 * glob); and each root is opened once, counted by the kernel (inotify). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fixtures.h"
#include "validate/libdeps/tree.h"

/* A real pointer, as `git lfs pointer --file=...` writes one (git-lfs
 * docs/spec.md): version, oid, size, each line ended by \n. */
static const char lfs[] =
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 876543210\n";

static void test_library_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        bool library;
    } cases[] = {
        {"libtorch_cuda.so", true},
        {"/x/y/libcudnn.so.9", true},
        {"libstdc++.so.6.0.33", true},
        {"_C.cpython-311-x86_64-linux-gnu.so", true},
        {"fbgemm.dll", true},
        {"C:\\torch\\lib\\FBGEMM.DLL", true},
        {"_C.cp311-win_amd64.pyd", true},
        {"libstdc++.so.6.0.33-gdb.py", false}, /* gdb's helper beside the library */
        {"libfoo.so.", false},
        {"libfoo.so.x", false},
        {"libfoo.SO", false}, /* Linux names keep their case */
        {"libfoo.a", false},
        {"libfoo.dylib", false},
        {"README.txt", false},
        {"notes.so.txt", false},
        {"lib.so/README", false},
        {".so", false},
        {"", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (aitk_deps_library_name(cases[i].name) != cases[i].library)
            fail_msg("'%s' should %sbe a library name", cases[i].name,
                     cases[i].library ? "" : "not ");
}

/* The rule: a linker script or an archive is skipped whatever its name;
 * anything else that is no library is a problem under a library's name and
 * skipped under another. */
static void test_one_rule(void **state)
{
    (void)state;
    static const struct {
        aitk_dep_other kind;
        const char *name;
        bool problem;
    } cases[] = {
        {AITK_DEP_OTHER_LD_SCRIPT, "libc.so", false},
        {AITK_DEP_OTHER_ARCHIVE, "libfoo.so.1", false},
        {AITK_DEP_OTHER_LFS_POINTER, "libtorch_cuda.so", true},
        {AITK_DEP_OTHER_LFS_POINTER, "fbgemm.dll", true},
        {AITK_DEP_OTHER_LFS_POINTER, "model.safetensors", false},
        {AITK_DEP_OTHER_EMPTY, "libbar.so", true},
        {AITK_DEP_OTHER_EMPTY, "empty.txt", false},
        {AITK_DEP_OTHER_SCRIPT, "libfoo.so.6", true},
        {AITK_DEP_OTHER_SCRIPT, "libstdc++.so.6.0.33-gdb.py", false},
        {AITK_DEP_OTHER_UNKNOWN, "torch_cpu.dll", true},
        {AITK_DEP_OTHER_UNKNOWN, "README.txt", false},
        {AITK_DEP_OTHER_NONE, "libfoo.so", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (aitk_deps_not_library_is_problem(cases[i].kind, cases[i].name) != cases[i].problem)
            fail_msg("%s named %s should %sbe a problem", aitk_dep_other_name(cases[i].kind),
                     cases[i].name, cases[i].problem ? "" : "not ");
}

typedef struct root_case {
    const char *name;
    const char *data;
    size_t len;
    aitk_status status;  /* AITK_OK: a broken library; AITK_E_UNSUPPORTED: skipped */
    aitk_dep_other kind;
} root_case;

/* Each written file through aitk_deps_analyze, as both the deps command
 * and the report checks meet it. */
static void test_roots_written(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-roots-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char big[1100]; /* starts like a pointer, but pointers are under 1024 bytes */
    memset(big, 'x', sizeof big);
    memcpy(big, lfs, sizeof lfs - 1);
    static const char hawser[] = "version https://hawser.github.com/spec/v1\n"
                                 "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2"
                                 "ca24d17e2393\nsize 12345\n";
    static const char script[] = "/* GNU ld script */\nGROUP ( libc.so.6 libc_nonshared.a )\n";
    static const char archive[] = "!<arch>\n";
    const root_case cases[] = {
        {"libfoo.so", lfs, sizeof lfs - 1, AITK_OK, AITK_DEP_OTHER_LFS_POINTER},
        {"libold.so.1", hawser, sizeof hawser - 1, AITK_OK, AITK_DEP_OTHER_LFS_POINTER},
        {"fbgemm.dll", lfs, sizeof lfs - 1, AITK_OK, AITK_DEP_OTHER_LFS_POINTER},
        {"libbig.so", big, sizeof big, AITK_OK, AITK_DEP_OTHER_UNKNOWN},
        {"libbar.so", "", 0, AITK_OK, AITK_DEP_OTHER_EMPTY},
        {"librun.so.2", "#!/bin/sh\n", 10, AITK_OK, AITK_DEP_OTHER_SCRIPT},
        {"libc.so", script, sizeof script - 1, AITK_E_UNSUPPORTED, AITK_DEP_OTHER_LD_SCRIPT},
        {"libarch.so", archive, sizeof archive - 1, AITK_E_UNSUPPORTED, AITK_DEP_OTHER_ARCHIVE},
        {"README.txt", "read me\n", 8, AITK_E_UNSUPPORTED, AITK_DEP_OTHER_UNKNOWN},
        {"weights.bin", lfs, sizeof lfs - 1, AITK_E_UNSUPPORTED, AITK_DEP_OTHER_LFS_POINTER},
    };
    aitk_deps_opts o = {0};
    aitk_deps *d = NULL;
    aitk_str err = AITK_STR_INIT, path = AITK_STR_INIT;
    assert_int_equal(aitk_deps_new(&o, &d, &err), AITK_OK);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const root_case *c = &cases[i];
        assert_true(fx_put(dir, c->name, c->data, c->len));
        aitk_str_clear(&path);
        aitk_str_appendf(&path, "%s/%s", dir, c->name);
        aitk_str_clear(&err);
        aitk_dep_tree t;
        aitk_status st = aitk_deps_analyze(d, path.ptr, &t, &err);
        if (st != c->status || t.not_library != c->kind)
            fail_msg("%s: status %d, kind %s (%s); expected %d, %s", c->name, st,
                     aitk_dep_other_name(t.not_library), aitk_str_cstr(&err), c->status,
                     aitk_dep_other_name(c->kind));
        if (st == AITK_OK) {
            /* One node, the broken root, saying what it is. */
            assert_int_equal(t.count, 1);
            assert_int_equal(t.nodes[0].state, AITK_DEP_BAD_FILE);
            assert_int_equal(t.nodes[0].not_library, c->kind);
            assert_string_equal(t.nodes[0].detail, aitk_dep_other_text(c->kind));
            assert_int_equal(aitk_dep_tree_problems(&t), 1);
            aitk_dep_tree_free(&t);
        } else {
            assert_int_equal(t.count, 0);
            aitk_str want = AITK_STR_INIT;
            aitk_str_appendf(&want, "%s: %s, not a shared library", path.ptr,
                             aitk_dep_other_text(c->kind));
            assert_string_equal(aitk_str_cstr(&err), want.ptr);
            aitk_str_free(&want);
        }
        remove(path.ptr);
    }
    /* A malformed ELF is a finding, as a malformed dependency is: its read
     * succeeds (the file is there, says ELF, is read whole) and the walk
     * makes the root the broken link, CORRUPT, with what is wrong. */
    unsigned char bad[128];
    memset(bad, 0xA5, sizeof bad);
    memcpy(bad, "\177ELF", 4);
    assert_true(fx_put(dir, "libbad.so", bad, sizeof bad));
    aitk_str_clear(&path);
    aitk_str_appendf(&path, "%s/libbad.so", dir);
    aitk_dep_tree t;
    aitk_str_clear(&err);
    assert_int_equal(aitk_deps_read_root(d, path.ptr, &t, &err), AITK_OK);
    assert_int_equal(t.not_library, AITK_DEP_OTHER_NONE);
    assert_int_equal(t.count, 1);
    assert_int_equal(err.len, 0);
    assert_int_equal(aitk_deps_walk(d, &t, &err), AITK_OK);
    assert_int_equal(t.count, 1);
    assert_int_equal(t.nodes[0].state, AITK_DEP_BAD_FILE);
    assert_true(t.nodes[0].corrupt);
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    if (!strstr(t.nodes[0].detail, "libbad.so: corrupt header"))
        fail_msg("detail: %s", t.nodes[0].detail);
    aitk_dep_tree_free(&t);
    remove(path.ptr);
    /* The pointer is named for what it is. */
    assert_non_null(strstr(aitk_dep_other_text(AITK_DEP_OTHER_LFS_POINTER), "Git LFS pointer"));
    aitk_deps_free(d);
    aitk_str_free(&err);
    aitk_str_free(&path);
    assert_int_equal(rmdir(dir), 0);
}

/* Each root is opened once, and closed: the sniff and the object read
 * share one open (a second open would read a file that may have been
 * replaced since). A root read before is opened once more, to say what it
 * is now, and its object reused. */
static void test_root_opened_once(void **state)
{
    (void)state;
#ifndef __linux__
    skip();
#else
    char dir[] = "/tmp/aitk-once-XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* A private copy: another test opening the shared fixture meanwhile
     * must not count. */
    size_t len = 0;
    unsigned char *lib = fx_read(FX "/elf/chain/sub/leafdir/libleaf.so.1", &len);
    assert_non_null(lib);
    assert_true(fx_put(dir, "libleaf.so.1", lib, len));
    aitk_free(lib);
    assert_true(fx_put(dir, "libfoo.so", lfs, sizeof lfs - 1));
    assert_true(fx_put(dir, "README.txt", "read me\n", 8));
    const char *names[] = {"libleaf.so.1", "libfoo.so", "README.txt", "libleaf.so.1"};
    const aitk_status want[] = {AITK_OK, AITK_OK, AITK_E_UNSUPPORTED, AITK_OK};
    aitk_deps_opts o = {.ld_library_path = ""};
    aitk_deps *d = NULL;
    aitk_str err = AITK_STR_INIT, path = AITK_STR_INIT;
    assert_int_equal(aitk_deps_new(&o, &d, &err), AITK_OK);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        aitk_str_clear(&path);
        aitk_str_appendf(&path, "%s/%s", dir, names[i]);
        int w = fx_watch_opens(path.ptr);
        if (w < 0)
            skip();
        aitk_dep_tree t;
        assert_int_equal(aitk_deps_analyze(d, path.ptr, &t, &err), want[i]);
        if (want[i] == AITK_OK)
            aitk_dep_tree_free(&t);
        int opens, closes;
        fx_count_opens(w, &opens, &closes);
        close(w);
        if (opens != 1 || closes != 1)
            fail_msg("%s (pass %zu): opened %d times, closed %d times", names[i], i, opens,
                     closes);
    }
    aitk_deps_free(d);
    for (size_t i = 0; i < 3; i++) {
        aitk_str_clear(&path);
        aitk_str_appendf(&path, "%s/%s", dir, names[i]);
        remove(path.ptr);
    }
    aitk_str_free(&err);
    aitk_str_free(&path);
    assert_int_equal(rmdir(dir), 0);
#endif
}

/* How many descriptors this process holds (0 where /proc is not there). */
static size_t open_fds(void)
{
    char **names = NULL;
    size_t count = 0;
    if (aitk_dir_names("/proc/self/fd", &names, &count, NULL) != AITK_OK)
        return 0;
    aitk_dir_names_free(names, count);
    return count;
}

/* Each allocation in turn fails while a broken non-library and a skipped
 * file are read: NOMEM, or the right answer, never a crash, a leak (ASan)
 * or a descriptor left open. */
static void test_out_of_memory(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-rootmem-XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const char script[] = "GROUP ( libc.so.6 )\n";
    assert_true(fx_put(dir, "libfoo.so", lfs, sizeof lfs - 1));
    assert_true(fx_put(dir, "libc.so", script, sizeof script - 1));
    const char *names[] = {"libfoo.so", "libc.so"};
    const aitk_status whole[] = {AITK_OK, AITK_E_UNSUPPORTED};
    size_t fds_before = open_fds();
    aitk_str path = AITK_STR_INIT;
    for (size_t r = 0; r < 2; r++) {
        aitk_str_clear(&path);
        aitk_str_appendf(&path, "%s/%s", dir, names[r]);
        long n = 0;
        for (long ok_in_row = 0; ok_in_row < 20 && n < 1000; n++) {
            aitk_deps_opts o = {0};
            aitk_status st = fx_analyze_failing_at(&o, path.ptr, n);
            assert_true(st == whole[r] || st == AITK_E_NOMEM);
            ok_in_row = st == whole[r] ? ok_in_row + 1 : 0;
        }
        assert_true(n > 20); /* some allocation failed on the way */
        remove(path.ptr);
    }
    aitk_str_free(&path);
    assert_int_equal(open_fds(), fds_before);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_names),
        cmocka_unit_test(test_one_rule),
        cmocka_unit_test(test_roots_written),
        cmocka_unit_test(test_root_opened_once),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
