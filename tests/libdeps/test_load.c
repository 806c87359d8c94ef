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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
