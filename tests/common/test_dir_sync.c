/* A published file survives a power loss: after the rename, the folder that
 * holds the new name is flushed too (aitk_dir_sync_of).
 *
 * What this can prove without pulling the plug: that fsync is called on that
 * folder, after the rename (the new file is already in place when it runs),
 * and that a failing folder flush is reported, not swallowed. This program
 * defines its own fsync, which the static aitk_common links against in place
 * of libc's: it records each call on a folder and can make those fail, then
 * does the real flush with the system call. It cannot prove the disk honours
 * the flush. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fileio.h"

static char base[] = "/tmp/aitk-dirsync-XXXXXX";
static char target[600];

static int dir_syncs;            /* fsync calls on a folder */
static int synced_our_folder;    /* ... on base, while target held "new" */
static int fail_dir_with;        /* errno to fail folder flushes with; 0: none */

static int target_is_new(void)
{
    FILE *f = fopen(target, "r");
    char buf[16] = "";
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, "new") == 0;
}

int fsync(int fd)
{
    struct stat sb, bsb;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        dir_syncs++;
        if (stat(base, &bsb) == 0 && bsb.st_ino == sb.st_ino && bsb.st_dev == sb.st_dev &&
            target_is_new())
            synced_our_folder++;
        if (fail_dir_with) {
            errno = fail_dir_with;
            return -1;
        }
    }
    return (int)syscall(SYS_fsync, fd);
}

static void reset(void)
{
    dir_syncs = synced_our_folder = fail_dir_with = 0;
    assert_int_equal(aitk_file_write_atomic(target, "old", 3, NULL), AITK_OK);
    dir_syncs = synced_our_folder = 0;
}

static void test_folder_flushed_after_rename(void **state)
{
    (void)state;
    reset();
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_write_atomic(target, "new", 3, &err), AITK_OK);
    assert_true(target_is_new());
    /* Once is enough; the folder holding the new name, with the name in it. */
    assert_int_equal(synced_our_folder, 1);
    aitk_str_free(&err);
}

static void test_staged_commit_flushes(void **state)
{
    (void)state;
    reset();
    aitk_staged s;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_stage(target, "new", 3, &s, &err), AITK_OK);
    assert_int_equal(synced_our_folder, 0); /* not before the rename */
    assert_int_equal(aitk_file_commit(&s, &err), AITK_OK);
    assert_int_equal(synced_our_folder, 1);
    aitk_str_free(&err);
}

static void test_flush_failure_reported(void **state)
{
    (void)state;
    reset();
    fail_dir_with = EIO;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_write_atomic(target, "new", 3, &err), AITK_E_IO);
    /* One line naming the folder. */
    assert_non_null(strstr(aitk_str_cstr(&err), base));
    assert_null(strchr(aitk_str_cstr(&err), '\n'));
    fail_dir_with = 0;
    aitk_str_free(&err);
}

static void test_folder_that_cannot_flush_is_no_error(void **state)
{
    (void)state;
    reset();
    fail_dir_with = EINVAL; /* what some FUSE and network file systems answer */
    assert_int_equal(aitk_file_write_atomic(target, "new", 3, NULL), AITK_OK);
    assert_true(target_is_new());
    fail_dir_with = 0;
}

static void test_missing_folder(void **state)
{
    (void)state;
    char path[700];
    snprintf(path, sizeof path, "%s/gone/report.json", base);
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_dir_sync_of(path, &err), AITK_E_IO);
    assert_non_null(strstr(aitk_str_cstr(&err), "/gone"));
    aitk_str_free(&err);
}

int main(void)
{
    if (!mkdtemp(base))
        return 1;
    snprintf(target, sizeof target, "%s/report.json", base);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folder_flushed_after_rename),
        cmocka_unit_test(test_staged_commit_flushes),
        cmocka_unit_test(test_flush_failure_reported),
        cmocka_unit_test(test_folder_that_cannot_flush_is_no_error),
        cmocka_unit_test(test_missing_folder),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    remove(target);
    rmdir(base);
    return rc;
}
