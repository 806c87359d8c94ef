/* `deps --load` and damaged files, as a user runs them. The native loader
 * runs in a child process: a library whose constructor aborts, ends the
 * process with status 0 or hangs must become that file's verdict (exit 1,
 * output intact), never a dead or silently successful tool. A loader
 * refusal the static walk cannot see (an undefined data symbol) is a
 * problem too. Cut copies and copies without section headers are read for
 * what they are (fixtures: make_fixtures.sh, elf/load). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <dirent.h>

#include "common/clock.h"
#include "fixtures.h"

#define FX_LOAD FX "/elf/load"

/* `aitk-validate deps ARGS...`: the exit code, or -1 when the tool itself
 * died (fx_run reports how). */
static int deps(const char *const *args, aitk_str *out)
{
    const char *argv[12] = {AITK_EXE, "deps"};
    size_t n = 2;
    for (size_t i = 0; args[i] && n < 11; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    aitk_str_clear(out);
    return fx_run(argv, out);
}

static void expect_text(const aitk_str *out, const char *const *want, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!strstr(aitk_str_cstr(out), want[i]))
            fail_msg("output lacks '%s':\n%s", want[i], aitk_str_cstr(out));
}

static void test_constructor_abort(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT;
    const char *args[] = {"--load", FX_LOAD "/libctorabort.so", NULL};
    assert_int_equal(deps(args, &out), 1);
    const char *want[] = {"PROBLEM: libctorabort.so: NOT LOADABLE",
                          "loader says: the loader crashed the process: signal 6 (SIGABRT) "
                          "while loading " FX_LOAD "/libctorabort.so",
                          "result: 1 problem"};
    expect_text(&out, want, 3);
    aitk_str_free(&out);
}

/* _exit(0) in a constructor: the tool used to exit 0 with no output. */
static void test_constructor_exit_json(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT;
    const char *args[] = {"--load", "--json", FX_LOAD "/libctorexit.so", NULL};
    assert_int_equal(deps(args, &out), 1);
    cJSON *doc = cJSON_Parse(aitk_str_cstr(&out));
    if (!doc)
        fail_msg("not JSON:\n%s", aitk_str_cstr(&out));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(doc, "ok")));
    cJSON *root = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "roots"), 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(root, "ok")));
    const char *load = cJSON_GetStringValue(cJSON_GetObjectItem(root, "load"));
    assert_non_null(load);
    assert_non_null(strstr(load, "exit status 0 and no verdict"));
    cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "problems"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "kind")), "not_loadable");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "detail")), load);
    cJSON_Delete(doc);
    aitk_str_free(&out);
}

static void test_constructor_hang(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT;
    const char *args[] = {"--load", "--load-timeout", "1", FX_LOAD "/libctorhang.so", NULL};
    double t0 = aitk_clock_ms();
    assert_int_equal(deps(args, &out), 1);
    assert_true(aitk_clock_ms() - t0 < 20000); /* the constructor sleeps 300 s */
    const char *want[] = {"loader says: the loader did not finish within 1 s", "result: 1 problem"};
    expect_text(&out, want, 2);
    const char *bad[] = {"--load-timeout", "0", FX_LOAD "/libctorhang.so", NULL};
    assert_int_equal(deps(bad, &out), 2);
    aitk_str_free(&out);
}

/* Processes whose command line names `needle` (the loading process and the
 * helpers it forked carry the library's path in theirs); -1 without /proc. */
static int processes_naming(const char *needle)
{
    int n = 0;
    DIR *dir = opendir("/proc");
    if (!dir)
        return -1;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        char buf[4096];
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < got; i++)
            if (!buf[i])
                buf[i] = ' ';
        buf[got] = '\0';
        n += strstr(buf, needle) != NULL;
    }
    closedir(dir);
    return n;
}

/* A constructor forks a helper that keeps running and holds the output
 * pipe: the library loaded, and says so at once; the helper does not
 * outlive the tool, even when it left the process group and ignores
 * SIGTERM. (It used to read as NOT LOADABLE after the time limit.) */
static void test_constructor_forks_helper(void **state)
{
    (void)state;
    const char *libs[] = {FX_LOAD "/libctorfork.so", FX_LOAD "/libctordaemon.so"};
    for (size_t i = 0; i < 2; i++) {
        aitk_str out = AITK_STR_INIT;
        const char *args[] = {"--load", "--load-timeout", "30", libs[i], NULL};
        double t0 = aitk_clock_ms();
        assert_int_equal(deps(args, &out), 0);
        assert_true(aitk_clock_ms() - t0 < 15000);
        const char *want[] = {"loader says: loaded", "result: 0 problems"};
        expect_text(&out, want, 2);
        int left = processes_naming(libs[i]);
        if (left < 0) {
            aitk_str_free(&out);
            skip(); /* no /proc: what outlives the tool cannot be counted here */
        }
        if (left)
            fail_msg("%d process(es) started for %s still run", left, libs[i]);
        aitk_str_free(&out);
    }
}

/* An undefined data symbol: nothing is missing from the tree, yet dlopen
 * refuses. The refusal alone makes the result a failure. */
static void test_refusal_the_walk_cannot_see(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT;
    const char *plain[] = {FX_LOAD "/libundef.so", NULL};
    assert_int_equal(deps(plain, &out), 0);
    const char *load[] = {"--load", FX_LOAD "/libundef.so", NULL};
    assert_int_equal(deps(load, &out), 1);
    const char *want[] = {"PROBLEM: libundef.so: NOT LOADABLE", "undefined symbol: aitk_data",
                          "result: 1 problem"};
    expect_text(&out, want, 3);
    const char *json[] = {"--load", "--json", FX_LOAD "/libundef.so", NULL};
    assert_int_equal(deps(json, &out), 1);
    cJSON *doc = cJSON_Parse(aitk_str_cstr(&out));
    assert_non_null(doc);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(doc, "ok")));
    cJSON_Delete(doc);
    aitk_str_free(&out);
}

/* Section headers zeroed: ld.so reads PT_DYNAMIC, and so must we. The
 * loader's own words stay in the output. */
static void test_no_section_headers(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT;
    const char *args[] = {FX_LOAD "/libnosections.so", NULL};
    assert_int_equal(deps(args, &out), 1);
    const char *want[] = {"PROBLEM: libnosections.so -> libgone.so.1: NOT FOUND"};
    expect_text(&out, want, 1);
    const char *load[] = {"--load", FX_LOAD "/libnosections.so", NULL};
    assert_int_equal(deps(load, &out), 1);
    const char *words[] = {"libgone.so.1: NOT FOUND",
                           "loader says: libgone.so.1: cannot open shared object file",
                           "result: 1 problem"};
    expect_text(&out, words, 3);
    aitk_str_free(&out);
}

static void test_cut_copies(void **state)
{
    (void)state;
    aitk_str out = AITK_STR_INIT;
    const char *cut100[] = {FX_LOAD "/libcut100.so", NULL};
    assert_int_equal(deps(cut100, &out), 1);
    const char *want100[] = {"PROBLEM: libcut100.so: UNREADABLE",
                             "truncated: the file has 100 bytes, its headers describe",
                             "fix: The file is cut short: reinstall", "result: 1 problem"};
    expect_text(&out, want100, 4);
    size_t whole = 0;
    unsigned char *data = fx_read(FX "/elf/missing/libneedsgone.so", &whole);
    assert_non_null(data);
    aitk_free(data);
    aitk_str half = AITK_STR_INIT;
    aitk_str_appendf(&half, "truncated: the file has %zu bytes, its headers describe %zu",
                     whole / 2, whole);
    const char *plain[] = {FX_LOAD "/libhalf.so", NULL};
    assert_int_equal(deps(plain, &out), 1);
    const char *want_half[] = {half.ptr};
    expect_text(&out, want_half, 1);
    /* The real loader faults on the missing pages (SIGBUS; under
     * AddressSanitizer its report and exit status instead): the child's
     * death is the verdict, not ours. */
    const char *load[] = {"--load", FX_LOAD "/libhalf.so", NULL};
    assert_int_equal(deps(load, &out), 1);
    const char *want_load[] = {half.ptr, "loader says: the ", "result: 1 problem"};
    expect_text(&out, want_load, 3);
    const char *load100[] = {"--load", FX_LOAD "/libcut100.so", NULL};
    assert_int_equal(deps(load100, &out), 1);
    const char *want_load100[] = {"loader says: ", "result: 1 problem"};
    expect_text(&out, want_load100, 2);
    /* A cut dependency is a broken link, found where RUNPATH says. */
    const char *dep[] = {FX_LOAD "/cutdep/libuser.so", NULL};
    assert_int_equal(deps(dep, &out), 1);
    const char *want_dep[] = {"PROBLEM: libuser.so -> libcutdep.so: UNREADABLE",
                              "why: truncated: the file has ",
                              "fix: The file is cut short: reinstall"};
    expect_text(&out, want_dep, 3);
    aitk_str_free(&half);
    aitk_str_free(&out);
}

/* A copy of `whole` with `n` bytes at `at` replaced, written to dir/name. */
static void put_patched(const char *dir, const char *name, const unsigned char *whole, size_t len,
                        size_t at, const void *bytes, size_t n)
{
    unsigned char *copy = aitk_malloc(len);
    assert_non_null(copy);
    memcpy(copy, whole, len);
    memcpy(copy + at, bytes, n);
    assert_true(fx_put(dir, name, copy, len));
    aitk_free(copy);
}

/* The one rule for a damaged PATH (deps --help): whatever byte is damaged,
 * ELF or PE, the file is the broken link, a problem (exit 1) named for what
 * it is: cut short (UNREADABLE, "truncated", the re-download fix) when it is
 * shorter than plausible headers describe, even inside its ELF header;
 * CORRUPT (the reinstall-and-check-the-disk fix) when a header holds what no
 * tool writes or points past the end of a file that is otherwise whole. The
 * loader is the witness: --load's verdict is ld.so's (a child process, so a
 * crash is a verdict too). */
static void test_damaged_roots(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-damaged-XXXXXX";
    assert_non_null(mkdtemp(dir));
    size_t len = 0;
    /* A library whose one need (libc) loads: the loader's verdict is on it. */
    unsigned char *so = fx_read(FX "/elf/chain/sub/leafdir/libleaf.so.1", &len);
    assert_non_null(so);
    const uint64_t far = 0xffffffffffff0000ull;
    const uint16_t many = 0xffff;
    const unsigned char msb = 2;
    assert_true(fx_put(dir, "libstub.so", so, 4));  /* "\177ELF" alone */
    assert_true(fx_put(dir, "libcut64.so", so, 64)); /* the ELF header alone */
    put_patched(dir, "libshoff.so", so, len, 0x28, &far, 8);
    put_patched(dir, "libphoff.so", so, len, 0x20, &far, 8);
    put_patched(dir, "libphnum.so", so, len, 0x38, &many, 2);
    put_patched(dir, "libendian.so", so, len, 5, &msb, 1);
    unsigned char mz[128] = {'M', 'Z'};
    const uint32_t lfanew = 0x7ffffff0u;
    memcpy(mz + 0x3c, &lfanew, 4);
    assert_true(fx_put(dir, "bigdos.dll", mz, sizeof mz));
    assert_true(fx_put(dir, "mzonly.dll", mz, 2));
    static const struct {
        const char *file; /* in dir, or a fixture path */
        /* loader: --load's words ("!loaded": anything but loaded; ld.so
         * crashes on this one, and under ASan the child reports that as an
         * abort), NULL: not asked */
        const char *label, *why, *fix, *loader;
    } cases[] = {
        {"libstub.so", "UNREADABLE",
         "truncated: the file has 4 bytes, an ELF header needs 64 (ld.so: file too short)",
         "fix: The file is cut short", "file too short"},
        {"libcut64.so", "UNREADABLE", "truncated: the file has 64 bytes, its headers describe",
         "fix: The file is cut short", "cannot read file data"},
        {"libshoff.so", "CORRUPT", "the section header table (e_shoff 18446744073709486080, "
         "e_shnum ", "lies beyond any plausible file size", "loaded"},
        {"libphoff.so", "CORRUPT", "the program header table (e_phoff 18446744073709486080",
         "check the disk", "cannot read file data"},
        {"libphnum.so", "CORRUPT", "e_phnum 65535; ld.so: cannot read file data) runs past the "
         "end of the file", "check the disk", "cannot read file data"},
        {"libendian.so", "CORRUPT", "byte order byte (EI_DATA) says big-endian, but the header "
         "is little-endian", "check the disk", "ELF file data encoding not little-endian"},
        {FX "/elf/refused/phent/bad/libref.so.1", "CORRUPT",
         "e_phentsize is 1, a 64-bit program header is 56 bytes (ld.so: ELF file's phentsize "
         "not the expected size)", "check the disk", "ELF file's phentsize not the expected size"},
        {FX "/elf/refused/strtab/bad/libref.so.1", "CORRUPT",
         "DT_STRTAB 0x7ffffff0 lies in no loadable segment", "check the disk", "!loaded"},
        {"bigdos.dll", "CORRUPT", "corrupt DOS header: e_lfanew 0x7ffffff0 points beyond what "
         "Windows accepts", "check the disk", NULL},
        {"mzonly.dll", "UNREADABLE", "truncated: the file has 2 bytes, its headers describe 64",
         "fix: The file is cut short", NULL},
    };
    aitk_str out = AITK_STR_INIT, path = AITK_STR_INIT, want = AITK_STR_INIT;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aitk_str_clear(&path);
        if (cases[i].file[0] == '/')
            aitk_str_append(&path, cases[i].file);
        else
            aitk_str_appendf(&path, "%s/%s", dir, cases[i].file);
        const char *base = strrchr(path.ptr, '/') + 1;
        const char *plain[] = {path.ptr, NULL}, *load[] = {"--load", path.ptr, NULL};
        int rc = deps(cases[i].loader ? load : plain, &out);
        aitk_str_clear(&want);
        aitk_str_appendf(&want, "PROBLEM: %s: %s\n", base, cases[i].label);
        const char *o = aitk_str_cstr(&out);
        if (rc != 1 || !strstr(o, want.ptr) || !strstr(o, cases[i].why) ||
            !strstr(o, cases[i].fix) || !strstr(o, "result: 1 problem"))
            fail_msg("%s: exit %d, wanted 1 and '%s', '%s', '%s':\n%s", cases[i].file, rc,
                     want.ptr, cases[i].why, cases[i].fix, o);
        /* The loader agrees that the file is broken (or, for damage only
         * in the section headers, which it never reads, loads it). */
        if (cases[i].loader) {
            aitk_str_clear(&want);
            aitk_str_appendf(&want, "loader says: ");
            const char *said = strstr(o, want.ptr);
            const bool any_failure = strcmp(cases[i].loader, "!loaded") == 0;
            if (!said || (any_failure ? strncmp(said + want.len, "loaded", 6) == 0
                                      : !strstr(said, cases[i].loader)))
                fail_msg("%s: the loader should say '%s':\n%s", cases[i].file, cases[i].loader, o);
        }
        if (cases[i].file[0] != '/')
            remove(path.ptr);
    }
    /* --json says which kind of damage. */
    aitk_str_clear(&path);
    aitk_str_appendf(&path, "%s/libendian.so", dir);
    put_patched(dir, "libendian.so", so, len, 5, &msb, 1);
    const char *json[] = {"--json", path.ptr, NULL};
    assert_int_equal(deps(json, &out), 1);
    cJSON *doc = cJSON_Parse(aitk_str_cstr(&out));
    assert_non_null(doc);
    cJSON *p = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "roots"), 0), "problems"), 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(p, "corrupt")));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "kind")), "bad_file");
    cJSON_Delete(doc);
    remove(path.ptr);
    aitk_free(so);
    aitk_str_free(&out);
    aitk_str_free(&path);
    aitk_str_free(&want);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constructor_abort),
        cmocka_unit_test(test_constructor_exit_json),
        cmocka_unit_test(test_constructor_hang),
        cmocka_unit_test(test_constructor_forks_helper),
        cmocka_unit_test(test_refusal_the_walk_cannot_see),
        cmocka_unit_test(test_no_section_headers),
        cmocka_unit_test(test_cut_copies),
        cmocka_unit_test(test_damaged_roots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
