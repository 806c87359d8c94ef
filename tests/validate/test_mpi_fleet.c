/* Rank 0's side of `--mpi` without a launch (validate/mpi_fleet.h): the
 * options it refuses, the test-only variable, the node file names, and the
 * node reports and exit code it writes from what the ranks sent. The node
 * texts are the saved synthetic report, its verdict edited here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "validate/cli.h"
#include "validate/mpi_fleet.h"
#include "tests/temp_tree.h"

static char base[] = "/tmp/aitk-mpi-fleet-XXXXXX";

static aitk_status check(const char *const *args, aitk_str *err)
{
    char *argv[16] = {"aitk-validate"};
    int argc = 1;
    for (; args[argc - 1]; argc++)
        argv[argc] = (char *)args[argc - 1];
    aitk_options o;
    assert_int_equal(aitk_cli_parse(argc, argv, &o, err), AITK_OK);
    assert_true(o.mpi);
    return aitk_mpi_check_options(&o, err);
}

static void expect_refused(const char *const *args, const char *words)
{
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(check(args, &err), AITK_E_INVAL);
    if (!strstr(aitk_str_cstr(&err), words))
        fail_msg("expected '%s' in: %s", words, aitk_str_cstr(&err));
    aitk_str_free(&err);
}

static void test_options(void **state)
{
    (void)state;
    expect_refused((const char *[]){"--mpi", NULL}, "--mpi needs --output-dir");
    expect_refused((const char *[]){"--mpi", "-o", "d", "--json", "r.json", NULL},
                   "--mpi cannot be combined with --json");
    expect_refused((const char *[]){"--mpi", "-o", "d", "--support-bundle", "b", NULL},
                   "--mpi cannot be combined with --support-bundle");
    expect_refused((const char *[]){"--mpi", "-o", "d", "--redact", NULL},
                   "--mpi cannot be combined with --redact");
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(check((const char *[]){"--mpi", "--cpu", "-o", "d", NULL}, &err), AITK_OK);
    aitk_str_free(&err);
}

static void test_slow_rank(void **state)
{
    (void)state;
    aitk_str err = AITK_STR_INIT;
    int r = 7;
    assert_int_equal(aitk_mpi_slow_rank(NULL, 3, &r, &err), AITK_OK);
    assert_int_equal(r, -1);
    assert_int_equal(aitk_mpi_slow_rank("2", 3, &r, &err), AITK_OK);
    assert_int_equal(r, 2);
    assert_int_equal(aitk_mpi_slow_rank("3", 3, &r, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "AITK_TEST_SLOW_RANK"));
    aitk_str_clear(&err);
    assert_int_equal(aitk_mpi_slow_rank("1x", 3, &r, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "AITK_TEST_SLOW_RANK"));
    aitk_str_free(&err);
}

static void expect_path(int rank, const char *host, const char *want)
{
    aitk_str p = AITK_STR_INIT;
    assert_int_equal(aitk_mpi_node_path("out", rank, host, &p), AITK_OK);
    assert_string_equal(aitk_str_cstr(&p), want);
    aitk_str_free(&p);
}

/* A host name cannot leave nodes/ or put a control byte in a file name. */
static void test_node_path(void **state)
{
    (void)state;
    expect_path(0, "gpu-07.cluster", "out/nodes/0-gpu-07.cluster.json");
    expect_path(12, "../../etc/x\n", "out/nodes/12-.._.._etc_x_.json");
    expect_path(3, "", "out/nodes/3-unknown.json");
}

/* The fixture with its verdict set: the text a rank would send. */
static char *node_text(const char *verdict)
{
    char *data = NULL;
    size_t len = 0;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_read(AITK_SOURCE_DIR "/tests/reports/fixtures/synthetic-report.json",
                                    1 << 24, &data, &len, &err),
                     AITK_OK);
    cJSON *r = cJSON_ParseWithLength(data, len);
    aitk_free(data);
    assert_non_null(r);
    cJSON *summary = cJSON_GetObjectItemCaseSensitive(r, "summary");
    cJSON_ReplaceItemInObjectCaseSensitive(summary, "verdict", cJSON_CreateString(verdict));
    char *text = cJSON_Print(r);
    cJSON_Delete(r);
    aitk_str_free(&err);
    return text;
}

static char *slurp(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", base, rel);
    char *data = NULL;
    size_t len = 0;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_file_read(path, 1 << 24, &data, &len, &err);
    aitk_str_free(&err);
    return st ? NULL : data;
}

static void test_nodes_written(void **state)
{
    (void)state;
    char *pass = node_text("pass"), *fail = node_text("fail");
    const aitk_mpi_node nodes[] = {
        {.rank = 0, .host = "alpha", .rc = 0, .json = pass, .len = strlen(pass)},
        {.rank = 1, .host = "be/ta", .rc = 1, .json = fail, .len = strlen(fail)},
    };
    /* A failed node report makes rank 0 exit 1. */
    assert_int_equal(aitk_mpi_fleet_write(base, nodes, 2, true), 1);
    char *a = slurp("nodes/0-alpha.json"), *b = slurp("nodes/1-be_ta.json");
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, pass);
    assert_string_equal(b, fail);
    aitk_free(a);
    aitk_free(b);
    /* The fleet report beside them, of both nodes, named by rank and host. */
    char *f = slurp("fleet.json");
    assert_non_null(f);
    cJSON *fleet = cJSON_Parse(f);
    aitk_free(f);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(fleet, "nodes");
    assert_int_equal(cJSON_GetArraySize(list), 2);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetArrayItem(list, 1), "name")),
                        "rank 1 (be/ta)");
    cJSON_Delete(fleet);
    /* Every node passed: 0. */
    assert_int_equal(aitk_mpi_fleet_write(base, nodes, 1, true), 0);
    cJSON_free(pass);
    cJSON_free(fail);
}

/* A rank that made no report, and one whose text is not a report: the
 * others are still written, and rank 0's code is the worst of them. */
static void test_bad_nodes(void **state)
{
    (void)state;
    char *pass = node_text("pass");
    const char junk[] = "{\"schema_version\": 1";
    const aitk_mpi_node refused[] = {
        {.rank = 0, .host = "h", .rc = 0, .json = pass, .len = strlen(pass)},
        {.rank = 1, .host = "h", .rc = 2, .json = NULL},
    };
    assert_int_equal(aitk_mpi_fleet_write(base, refused, 2, true), 2);
    char *gone = slurp("nodes/1-h.json");
    assert_null(gone);
    const aitk_mpi_node broken[] = {
        {.rank = 0, .host = "h", .rc = 0, .json = pass, .len = strlen(pass)},
        {.rank = 4, .host = "h", .rc = 0, .json = junk, .len = strlen(junk)},
    };
    assert_int_equal(aitk_mpi_fleet_write(base, broken, 2, true), 3);
    assert_null(slurp("nodes/4-h.json"));
    char *kept = slurp("nodes/0-h.json");
    assert_non_null(kept);
    aitk_free(kept);
    cJSON_free(pass);
}

/* Rank 0 makes the folder and nodes/ before the run, and holds it. */
static void test_prepare(void **state)
{
    (void)state;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/new/out", base);
    aitk_dir_lock *lock = NULL;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_mpi_outputs_prepare(dir, &lock, &err), AITK_OK);
    aitk_dir_lock *second = NULL;
    assert_int_equal(aitk_mpi_outputs_prepare(dir, &second, &err), AITK_E_IO);
    assert_non_null(strstr(aitk_str_cstr(&err), "another aitk-validate run"));
    aitk_dir_lock_release(lock);
    struct stat sb;
    snprintf(dir, sizeof dir, "%s/new/out/nodes", base);
    assert_int_equal(stat(dir, &sb), 0);
    aitk_str_free(&err);
}

int main(void)
{
    if (!mkdtemp(base))
        return 1;
    char nodes[600];
    snprintf(nodes, sizeof nodes, "%s/nodes", base);
    if (mkdir(nodes, 0700))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),      cmocka_unit_test(test_slow_rank),
        cmocka_unit_test(test_node_path),    cmocka_unit_test(test_nodes_written),
        cmocka_unit_test(test_bad_nodes),    cmocka_unit_test(test_prepare),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (aitk_test_remove_tree(base) != 0)
        rc = rc ? rc : 1;
    return rc;
}
