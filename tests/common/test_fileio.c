/* Files: capped reads, atomic writes that replace or leave untouched, mkdir -p. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "tests/temp_tree.h"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/aitk-test-fileio-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return aitk_test_remove_tree(tmpdir);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    if (d)
        closedir(d);
    return n;
}

static void test_atomic_write_replaces(void **state)
{
    (void)state;
    aitk_str path = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_path_join(&path, tmpdir, "r.json");
    assert_int_equal(aitk_file_write_atomic(path.ptr, "first", 5, &err), AITK_OK);
    assert_int_equal(aitk_file_write_atomic(path.ptr, "second!", 7, &err), AITK_OK);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(path.ptr, 100, &data, &len, &err), AITK_OK);
    assert_int_equal(len, 7);
    assert_string_equal(data, "second!");
    assert_int_equal(count_entries(tmpdir), 1); /* no temp file left behind */
    aitk_free(data);
    aitk_str_free(&path);
    aitk_str_free(&err);
}

/* The text of `path`, or "" when it cannot be read (freed by the next call). */
static const char *text_of(const char *path)
{
    static char *data;
    aitk_free(data);
    data = NULL;
    size_t len = 0;
    return aitk_file_read(path, 100, &data, &len, NULL) == AITK_OK ? data : "";
}

/* Staged files: written in full beside their targets, which stay as they
 * were until the commit; a discard leaves no trace. */
static void test_stage_then_commit_or_discard(void **state)
{
    (void)state;
    aitk_str a = AITK_STR_INIT, b = AITK_STR_INIT;
    aitk_path_join(&a, tmpdir, "report.json");
    aitk_path_join(&b, tmpdir, "report.html");
    assert_int_equal(aitk_file_write_atomic(a.ptr, "old json", 8, NULL), AITK_OK);
    assert_int_equal(aitk_file_write_atomic(b.ptr, "old html", 8, NULL), AITK_OK);
    aitk_staged sa, sb;
    assert_int_equal(aitk_file_stage(a.ptr, "new json", 8, &sa, NULL), AITK_OK);
    assert_int_equal(aitk_file_stage(b.ptr, "new html", 8, &sb, NULL), AITK_OK);
    /* Both staged: the old files are still there, with a copy beside each. */
    assert_string_equal(text_of(a.ptr), "old json");
    assert_string_equal(text_of(b.ptr), "old html");
    assert_int_equal(count_entries(tmpdir), 4);
    assert_int_equal(aitk_file_commit(&sa, NULL), AITK_OK);
    assert_string_equal(text_of(a.ptr), "new json");
    aitk_file_discard(&sb);
    assert_string_equal(text_of(b.ptr), "old html");
    assert_int_equal(count_entries(tmpdir), 2);
    /* A refused target stages nothing. */
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_stage(tmpdir, "x", 1, &sa, &err), AITK_E_INVAL);
    aitk_file_discard(&sa);
    assert_int_equal(count_entries(tmpdir), 2);
#ifndef _WIN32
    /* A device is written at the commit, not before: /dev/full fails there. */
    assert_int_equal(aitk_file_stage("/dev/full", "x", 1, &sa, NULL), AITK_OK);
    aitk_str_clear(&err);
    assert_int_equal(aitk_file_commit(&sa, &err), AITK_E_IO);
    assert_non_null(strstr(aitk_str_cstr(&err), "/dev/full"));
#endif
    text_of("");
    aitk_str_free(&err);
    aitk_str_free(&a);
    aitk_str_free(&b);
}

static void test_atomic_write_failure_names_path(void **state)
{
    (void)state;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_write_atomic("/nonexistent-dir-aitk/x.json", "a", 1, &err),
                     AITK_E_IO);
    assert_non_null(strstr(aitk_str_cstr(&err), "/nonexistent-dir-aitk/x.json"));
    aitk_str_free(&err);
}

/* Outputs that cannot be files: refused with their name, nothing written. */
static void test_write_refuses_folder_and_empty(void **state)
{
    (void)state;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_write_atomic(tmpdir, "a", 1, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "is a folder"));
    assert_int_equal(count_entries(tmpdir), 0);
    aitk_str_clear(&err);
    assert_int_equal(aitk_file_write_atomic("", "a", 1, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "empty"));
    aitk_str_free(&err);
}

#ifndef _WIN32
/* Through a symbolic link: the file it names gets the data, the link stays
 * a link; a link to nothing is refused. */
static void test_write_through_symlink(void **state)
{
    (void)state;
    aitk_str target = AITK_STR_INIT, link = AITK_STR_INIT, dangling = AITK_STR_INIT;
    aitk_path_join(&target, tmpdir, "target.txt");
    aitk_path_join(&link, tmpdir, "link.json");
    aitk_path_join(&dangling, tmpdir, "dangling.json");
    assert_int_equal(aitk_file_write_atomic(target.ptr, "old", 3, NULL), AITK_OK);
    assert_int_equal(symlink("target.txt", link.ptr), 0);
    assert_int_equal(aitk_file_write_atomic(link.ptr, "new!", 4, NULL), AITK_OK);
    struct stat lst;
    assert_int_equal(lstat(link.ptr, &lst), 0);
    assert_true(S_ISLNK(lst.st_mode));
    char *data = NULL;
    assert_int_equal(aitk_file_read(target.ptr, 100, &data, NULL, NULL), AITK_OK);
    assert_string_equal(data, "new!");
    aitk_free(data);
    assert_int_equal(symlink("missing.txt", dangling.ptr), 0);
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_write_atomic(dangling.ptr, "x", 1, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "link to nothing"));
    assert_int_equal(count_entries(tmpdir), 3); /* no temp file, no missing.txt */
    aitk_str_free(&err);
    aitk_str_free(&target);
    aitk_str_free(&link);
    aitk_str_free(&dangling);
}

/* A FIFO (what /dev/stdout is in a pipeline) is written in place and stays a
 * FIFO: replacing a non-regular file destroyed /dev/null once. A child reads
 * the FIFO into a regular file. */
static void test_write_into_fifo(void **state)
{
    (void)state;
    aitk_str fifo = AITK_STR_INIT, copy = AITK_STR_INIT;
    aitk_path_join(&fifo, tmpdir, "pipe");
    aitk_path_join(&copy, tmpdir, "copy");
    assert_int_equal(mkfifo(fifo.ptr, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(10); /* if the FIFO was replaced, nobody ever writes to it */
        char buf[64];
        int in = open(fifo.ptr, O_RDONLY);
        ssize_t n = in >= 0 ? read(in, buf, sizeof buf) : -1;
        int out = open(copy.ptr, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        _exit(n > 0 && out >= 0 && write(out, buf, (size_t)n) == n ? 0 : 1);
    }
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_write_atomic(fifo.ptr, "through", 7, &err), AITK_OK);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    assert_int_equal(lstat(fifo.ptr, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    char *data = NULL;
    assert_int_equal(aitk_file_read(copy.ptr, 100, &data, NULL, NULL), AITK_OK);
    assert_string_equal(data, "through");
    aitk_free(data);
    aitk_str_free(&err);
    aitk_str_free(&fifo);
    aitk_str_free(&copy);
}
#endif

static void test_read_cap_and_missing(void **state)
{
    (void)state;
    aitk_str path = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_path_join(&path, tmpdir, "big");
    char buf[1000];
    memset(buf, 'a', sizeof buf);
    assert_int_equal(aitk_file_write_atomic(path.ptr, buf, sizeof buf, NULL), AITK_OK);
    char *data = (char *)1;
    assert_int_equal(aitk_file_read(path.ptr, 999, &data, NULL, &err), AITK_E_RANGE);
    assert_null(data);
    assert_non_null(strstr(aitk_str_cstr(&err), "limit"));
    aitk_str_clear(&err);
    assert_int_equal(aitk_file_read("/no/such/file", 10, &data, NULL, &err), AITK_E_NOTFOUND);
    assert_non_null(strstr(aitk_str_cstr(&err), "/no/such/file"));
    /* A folder given as a file: said so, not "read error". */
    aitk_str_clear(&err);
    assert_int_not_equal(aitk_file_read(tmpdir, 10, &data, NULL, &err), AITK_OK);
    assert_null(data);
#ifndef _WIN32
    assert_non_null(strstr(aitk_str_cstr(&err), "is a folder, not a file"));
#endif
    aitk_str_free(&path);
    aitk_str_free(&err);
}

static void test_dir_create_and_writable(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, err = AITK_STR_INIT, file = AITK_STR_INIT;
    aitk_path_join(&dir, tmpdir, "a/b/c");
    assert_int_equal(aitk_dir_create(dir.ptr, &err), AITK_OK);
    assert_int_equal(aitk_dir_create(dir.ptr, &err), AITK_OK); /* idempotent */
    assert_int_equal(aitk_dir_check_writable(dir.ptr, &err), AITK_OK);
    assert_int_equal(count_entries(dir.ptr), 0); /* the probe file is removed */
    /* A folder under a regular file cannot exist, even for root. */
    aitk_path_join(&file, tmpdir, "plain");
    aitk_file_write_atomic(file.ptr, "x", 1, NULL);
    aitk_str_append(&file, "/sub");
    assert_int_equal(aitk_dir_create(file.ptr, &err), AITK_E_IO);
    assert_int_equal(aitk_dir_check_writable(file.ptr, &err), AITK_E_IO);
    aitk_str_free(&dir);
    aitk_str_free(&file);
    aitk_str_free(&err);
}

static void test_path_join(void **state)
{
    (void)state;
    aitk_str p = AITK_STR_INIT;
    aitk_path_join(&p, "a", "b");
    assert_string_equal(p.ptr, "a/b");
    aitk_path_join(&p, "a/", "b");
    assert_string_equal(p.ptr, "a/b");
    aitk_path_join(&p, "", "b");
    assert_string_equal(p.ptr, "b");
    aitk_str_free(&p);
}

/* Names in byte order whatever order the file system returns them, without
 * "." and ".."; folders are names too; a missing folder is NOTFOUND naming
 * it; each allocation that fails gives NOMEM and leaks nothing. */
static void test_dir_names(void **state)
{
    (void)state;
    static const char *const made[] = {"b.json", "a.json", "Z", "c"};
    aitk_str path = AITK_STR_INIT, err = AITK_STR_INIT;
    for (size_t i = 0; i < 4; i++) {
        aitk_str_clear(&path);
        aitk_path_join(&path, tmpdir, made[i]);
        if (i == 3)
            assert_int_equal(aitk_dir_create(path.ptr, NULL), AITK_OK);
        else
            assert_int_equal(aitk_file_write_atomic(path.ptr, "x", 1, NULL), AITK_OK);
    }
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(aitk_dir_names(tmpdir, &names, &n, &err), AITK_OK);
    assert_int_equal(n, 4);
    static const char *const sorted[] = {"Z", "a.json", "b.json", "c"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(names[i], sorted[i]);
    assert_true(aitk_is_dir(path.ptr));
    aitk_str_clear(&path);
    aitk_path_join(&path, tmpdir, "a.json");
    assert_false(aitk_is_dir(path.ptr));
    aitk_dir_names_free(names, n);

    int failures = 0;
    for (long k = 0; k < 50; k++) {
        aitk_alloc_fail_after(k);
        aitk_status st = aitk_dir_names(tmpdir, &names, &n, NULL);
        aitk_alloc_fail_after(-1);
        if (st == AITK_OK) {
            assert_int_equal(n, 4);
            aitk_dir_names_free(names, n);
            break;
        }
        assert_int_equal(st, AITK_E_NOMEM);
        assert_null(names);
        failures++;
    }
    assert_true(failures > 0);

    aitk_str_clear(&path);
    aitk_path_join(&path, tmpdir, "missing");
    assert_int_equal(aitk_dir_names(path.ptr, &names, &n, &err), AITK_E_NOTFOUND);
    assert_non_null(strstr(err.ptr, path.ptr));
    assert_int_equal(n, 0);
    aitk_str_free(&path);
    aitk_str_free(&err);
}

/* One file under two names is one file; a file not yet written is one place
 * under two spellings; different files are not; devices never clash. */
static void test_same_file(void **state)
{
    (void)state;
    aitk_str a = AITK_STR_INIT, b = AITK_STR_INIT, dotted = AITK_STR_INIT, fresh = AITK_STR_INIT,
             fresh2 = AITK_STR_INIT;
    aitk_path_join(&a, tmpdir, "config.yaml");
    aitk_path_join(&b, tmpdir, "other.yaml");
    aitk_path_join(&dotted, tmpdir, "./sub/../config.yaml");
    aitk_path_join(&fresh, tmpdir, "out.json");
    aitk_path_join(&fresh2, tmpdir, "./out.json");
    assert_int_equal(aitk_file_write_atomic(a.ptr, "a", 1, NULL), AITK_OK);
    assert_int_equal(aitk_file_write_atomic(b.ptr, "b", 1, NULL), AITK_OK);
    aitk_str sub = AITK_STR_INIT;
    aitk_path_join(&sub, tmpdir, "sub");
    assert_int_equal(aitk_dir_create(sub.ptr, NULL), AITK_OK);
    assert_true(aitk_same_file(a.ptr, a.ptr));
    assert_true(aitk_same_file(a.ptr, dotted.ptr));
    assert_false(aitk_same_file(a.ptr, b.ptr));
    assert_true(aitk_same_file(fresh.ptr, fresh2.ptr)); /* neither exists yet */
    assert_false(aitk_same_file(fresh.ptr, a.ptr));
    assert_false(aitk_same_file(a.ptr, NULL));
    assert_false(aitk_same_file("", ""));
    /* Relative to the working folder. */
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    assert_true(aitk_same_file("config.yaml", a.ptr));
    assert_true(aitk_same_file("out.json", fresh.ptr));
    assert_int_equal(chdir(cwd), 0);
#ifndef _WIN32
    aitk_str hard = AITK_STR_INIT, soft = AITK_STR_INIT;
    aitk_path_join(&hard, tmpdir, "hard.yaml");
    aitk_path_join(&soft, tmpdir, "soft.yaml");
    assert_int_equal(link(a.ptr, hard.ptr), 0);
    assert_int_equal(symlink("config.yaml", soft.ptr), 0);
    assert_true(aitk_same_file(hard.ptr, a.ptr));
    assert_true(aitk_same_file(soft.ptr, a.ptr));
    assert_false(aitk_same_file("/dev/null", "/dev/null"));
    aitk_str_free(&hard);
    aitk_str_free(&soft);
#endif
    /* The check names both options; order of outputs: the later one is named
     * second. */
    const aitk_named_path ins[] = {{"--config", a.ptr}, {"--calibrate", NULL}};
    const aitk_named_path ok[] = {{"--json", fresh.ptr}, {"--markdown", b.ptr}};
    assert_int_equal(aitk_outputs_distinct(ok, 2, ins, 2, NULL), AITK_OK);
    aitk_str err = AITK_STR_INIT;
    const aitk_named_path onto_input[] = {{"--json", dotted.ptr}};
    assert_int_equal(aitk_outputs_distinct(onto_input, 1, ins, 2, &err), AITK_E_INVAL);
    assert_non_null(strstr(err.ptr, "--json"));
    assert_non_null(strstr(err.ptr, "--config"));
    aitk_str_clear(&err);
    const aitk_named_path twice[] = {{"--json", fresh.ptr}, {"--html", fresh2.ptr}};
    assert_int_equal(aitk_outputs_distinct(twice, 2, ins, 0, &err), AITK_E_INVAL);
    assert_non_null(strstr(err.ptr, "--html"));
    /* "-" is standard output, not a file: one may take it, beside files
     * (also one named "./-"), and two are refused. */
    assert_true(aitk_output_is_stdout("-"));
    assert_false(aitk_output_is_stdout("./-") || aitk_output_is_stdout("--") ||
                 aitk_output_is_stdout("") || aitk_output_is_stdout(NULL));
    const aitk_named_path one_dash[] = {{"--json", "-"}, {"--html", "./-"}, {"--junit", fresh.ptr}};
    assert_int_equal(aitk_outputs_distinct(one_dash, 3, ins, 2, NULL), AITK_OK);
    aitk_str_clear(&err);
    const aitk_named_path two_dashes[] = {{"--json", "-"}, {"--html", fresh.ptr}, {"--junit", "-"}};
    assert_int_equal(aitk_outputs_distinct(two_dashes, 3, ins, 2, &err), AITK_E_INVAL);
    assert_string_equal(err.ptr, "--json - and --junit - both ask for standard output: only one "
                                 "output can go there; give the other a file name");
    char *data = NULL;
    assert_int_equal(aitk_file_read(a.ptr, 10, &data, NULL, NULL), AITK_OK);
    assert_string_equal(data, "a"); /* nothing was written by checking */
    aitk_free(data);
    aitk_str_free(&err);
    aitk_str_free(&sub);
    aitk_str_free(&a);
    aitk_str_free(&b);
    aitk_str_free(&dotted);
    aitk_str_free(&fresh);
    aitk_str_free(&fresh2);
}

/* Where a file name begins: after the last '/', and on Windows (where a
 * user types C:\\torch\\lib\\fbgemm.dll) after the last '\\' too. */
static void test_path_base_name(void **state)
{
    (void)state;
    assert_string_equal(aitk_path_base_name("/a/b/libc.so.6"), "libc.so.6");
    assert_string_equal(aitk_path_base_name("libc.so.6"), "libc.so.6");
    assert_string_equal(aitk_path_base_name("/a/b/"), "");
    assert_ptr_equal(aitk_path_last_separator("noslash"), NULL);
#ifdef _WIN32
    assert_string_equal(aitk_path_base_name("C:\\torch\\lib\\fbgemm.dll"), "fbgemm.dll");
    assert_string_equal(aitk_path_base_name("C:\\torch/lib\\fbgemm.dll"), "fbgemm.dll");
#else
    /* A backslash is part of a Linux file name. */
    assert_string_equal(aitk_path_base_name("/a/b\\c"), "b\\c");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_atomic_write_replaces, setup, teardown),
        cmocka_unit_test(test_atomic_write_failure_names_path),
        cmocka_unit_test_setup_teardown(test_stage_then_commit_or_discard, setup, teardown),
        cmocka_unit_test(test_path_base_name),
        cmocka_unit_test_setup_teardown(test_write_refuses_folder_and_empty, setup, teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(test_write_through_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_into_fifo, setup, teardown),
#endif
        cmocka_unit_test_setup_teardown(test_read_cap_and_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_create_and_writable, setup, teardown),
        cmocka_unit_test(test_path_join),
        cmocka_unit_test_setup_teardown(test_same_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_names, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
