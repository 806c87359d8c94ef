/* `aitk-validate --mpi` under a real mpirun: three ranks on this machine,
 * the CPU backend, one workload. Exit 77 when the build has no MPI.
 *
 * The ranks read their workload plan from tests/validate/mpi_data (through
 * AITK_DATA_DIR; why, in that file), so a launch takes seconds, not
 * minutes: the workload step itself is the real one. What is checked here
 * is read from the files rank 0 wrote, not recomputed by the code under
 * test: one node report per rank, each naming its rank, one fleet report of
 * three nodes, and the test-only slow rank standing out by its measured
 * step time, in its own report and in the fleet's outliers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/exe_run.h"
#include "tests/report_json.h"
#include "tests/temp_tree.h"

#define RANKS 3

static char base[] = "/tmp/aitk-mpi-launch-XXXXXX";

/* What a test holds while it checks: a failed check leaves the test at
 * once (cmocka's longjmp), so these are freed by the teardown, on every
 * path, not at the end of the test. */
static struct held {
    ran launch, schema;
    cJSON *fleet, *node;
} held;

static int free_held(void **state)
{
    (void)state;
    ran_free(&held.launch);
    ran_free(&held.schema);
    cJSON_Delete(held.fleet);
    cJSON_Delete(held.node);
    held = (struct held){0};
    return 0;
}

static void path_in(char *out, size_t size, const char *rel)
{
    snprintf(out, size, "%s/%s", base, rel);
}

/* mpirun -np 3 on this machine, then the validator's arguments. */
static ran launch(const char *out_dir, const char *const *extra)
{
    const char *argv[32] = {AITK_MPIEXEC, "-np", "3", "--oversubscribe"};
    size_t n = 4;
    /* OpenMPI refuses root unless told (mpirun(1), OpenMPI 4.1). */
    if (geteuid() == 0)
        argv[n++] = "--allow-run-as-root";
#if defined(__SANITIZE_ADDRESS__)
    /* Under ASan, LeakSanitizer reports OpenMPI's own allocations that
     * outlive MPI_Finalize (in its dlopened components) and turns every
     * rank's exit code into a failure, which would hide the verdicts this
     * test checks. The ranks' leak check is off here only; the validator's
     * own code is leak-checked by every other test of this build. */
    argv[n++] = "-x";
    argv[n++] = "ASAN_OPTIONS=detect_leaks=0";
#endif
    /* Three ranks share this machine's cores. OpenMP threads that spin
     * while they wait (libgomp's default) take the cores from the other
     * ranks, which spreads the ranks' step times apart, and count as CPU
     * time, which the slowed rank's sleep is measured from (bench/runner.c):
     * waiting threads sleep instead, as on a shared node. */
    argv[n++] = "-x";
    argv[n++] = "OMP_WAIT_POLICY=PASSIVE";
    const char *const mine[] = {AITK_EXE, "--mpi", "--cpu", "--model", "flux1-dev", NULL};
    for (size_t i = 0; mine[i]; i++)
        argv[n++] = mine[i];
    if (out_dir) {
        argv[n++] = "--output-dir";
        argv[n++] = out_dir;
    }
    for (size_t i = 0; extra && extra[i] && n < 31; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    return run_program(argv, aitk_test_ms(120000));
}

/* The node report of `rank`, found by listing nodes/: exactly one file
 * begins with "<rank>-", and it is named after the host its report names. */
static cJSON *node_report(const char *out_dir, int rank)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%d-", rank);
    char **names = NULL;
    size_t count = 0;
    aitk_str err = AITK_STR_INIT, dir = AITK_STR_INIT, path = AITK_STR_INIT;
    aitk_str_appendf(&dir, "%s/nodes", out_dir);
    assert_int_equal(aitk_dir_names(aitk_str_cstr(&dir), &names, &count, &err), AITK_OK);
    assert_int_equal(count, RANKS);
    const char *name = NULL;
    for (size_t i = 0; i < count; i++)
        if (strncmp(names[i], prefix, strlen(prefix)) == 0) {
            assert_null(name);
            name = names[i];
        }
    assert_non_null(name);
    aitk_str_appendf(&path, "%s/%s", aitk_str_cstr(&dir), name);
    cJSON *r = load_json(aitk_str_cstr(&path));
    const cJSON *mpi = cJSON_GetObjectItemCaseSensitive(r, "mpi");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(mpi, "rank")), rank);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(mpi, "size")), RANKS);
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(mpi, "host"));
    assert_non_null(host);
    /* This machine's name is plain, so the file carries it unchanged. */
    aitk_str want = AITK_STR_INIT;
    aitk_str_appendf(&want, "%d-%s.json", rank, host);
    assert_string_equal(name, aitk_str_cstr(&want));
    aitk_dir_names_free(names, count);
    aitk_str_free(&want);
    aitk_str_free(&err);
    aitk_str_free(&dir);
    aitk_str_free(&path);
    return r;
}

/* The rank's measured median step time of its one workload. */
static double step_median(const cJSON *report, const char **message)
{
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(report, "workloads"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "status")),
                        "completed");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "step_time_s");
    double median = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "median"));
    assert_true(isfinite(median) && median > 0);
    *message = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "message"));
    return median;
}

static bool failed(const cJSON *report)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(report, "summary");
    return strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "verdict")), "fail") == 0;
}

/* Rank 0's fleet report: one node per rank, its Markdown and HTML beside
 * it. */
static cJSON *fleet_report(const char *out_dir)
{
    static const char *const others[] = {"fleet.md", "fleet.html"};
    aitk_str p = AITK_STR_INIT;
    for (size_t i = 0; i < 2; i++) {
        aitk_str_clear(&p);
        aitk_str_appendf(&p, "%s/%s", out_dir, others[i]);
        struct stat sb;
        assert_int_equal(stat(aitk_str_cstr(&p), &sb), 0);
        assert_true(sb.st_size > 0);
    }
    aitk_str_clear(&p);
    aitk_str_appendf(&p, "%s/fleet.json", out_dir);
    cJSON *fleet = load_json(aitk_str_cstr(&p));
    aitk_str_free(&p);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(fleet, "nodes")), RANKS);
    return fleet;
}

/* Whether the fleet report names node "rank N (host)" an outlier on the
 * workload's median step time. */
static bool slow_flagged(const cJSON *fleet, int rank, const char *host)
{
    aitk_str node = AITK_STR_INIT;
    aitk_str_appendf(&node, "rank %d (%s)", rank, host);
    bool found = false;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(fleet, "outliers"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "node"));
        const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "subject"));
        found |= n && s && strcmp(n, aitk_str_cstr(&node)) == 0 &&
                 strcmp(s, "workload flux1-dev: median step time") == 0;
    }
    aitk_str_free(&node);
    return found;
}

/* `path` (a file or a folder of them) against a schema of reports/schema,
 * by the project's validator; a python3 without jsonschema skips this
 * part, as schema.all_reports does. */
static void schema_valid(const char *schema, const char *path)
{
    aitk_str s = AITK_STR_INIT;
    aitk_str_appendf(&s, "%s/reports/schema/%s", AITK_SOURCE_DIR, schema);
    const char *argv[] = {"python3", AITK_SOURCE_DIR "/tests/tools/validate_reports.py",
                          aitk_str_cstr(&s), path, NULL};
    held.schema = run_program(argv, aitk_test_ms(60000));
    aitk_str_free(&s);
    const ran *r = &held.schema;
    if (r->rc == 77)
        print_message("schema not checked: %s", aitk_str_cstr(&r->out));
    else if (r->rc != 0)
        fail_msg("%s against %s: %s%s", path, schema, aitk_str_cstr(&r->out),
                 aitk_str_cstr(&r->err));
    ran_free(&held.schema);
}

static int fleet_exit_code(const cJSON *fleet)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(fleet, "summary");
    return (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "exit_code"));
}

/* Runs a launch into `rel` and checks its node reports and its fleet
 * report; `slow`: the test-only slow rank, or -1, which the fleet report
 * must flag, and only it. The medians come back in `median`. */
static void launch_and_check(const char *rel, int slow, double median[RANKS])
{
    char out[600];
    path_in(out, sizeof out, rel);
    char value[16];
    snprintf(value, sizeof value, "%d", slow);
    if (slow >= 0)
        setenv("AITK_TEST_SLOW_RANK", value, 1);
    else
        unsetenv("AITK_TEST_SLOW_RANK");
    held.launch = launch(out, NULL);
    const ran *r = &held.launch;
    unsetenv("AITK_TEST_SLOW_RANK");
    bool any_failed = false;
    held.fleet = fleet_report(out);
    const cJSON *fleet = held.fleet;
    /* On the stack: a failed schema check leaves this function at once. */
    char file[700];
    snprintf(file, sizeof file, "%s/nodes", out);
    schema_valid("report.schema.json", file);
    snprintf(file, sizeof file, "%s/fleet.json", out);
    schema_valid("fleet.schema.json", file);
    for (int i = 0; i < RANKS; i++) {
        held.node = node_report(out, i);
        const cJSON *rep = held.node;
        const char *host = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rep, "mpi"), "host"));
        if (slow >= 0 && slow_flagged(fleet, i, host) != (i == slow))
            fail_msg("rank %d: %s by the fleet report", i,
                     i == slow ? "the slowed rank is not flagged" : "flagged, but not slowed");
        const char *message = NULL;
        median[i] = step_median(rep, &message);
        const cJSON *mpi = cJSON_GetObjectItemCaseSensitive(rep, "mpi");
        const cJSON *mark = cJSON_GetObjectItemCaseSensitive(mpi, "test_only_slowdown");
        /* The slowed rank, and only it, says so in its report. */
        assert_int_equal(mark != NULL, i == slow);
        assert_int_equal(message && strstr(message, "TEST ONLY"), i == slow);
        any_failed |= failed(rep);
        cJSON_Delete(held.node);
        held.node = NULL;
    }
    /* mpirun exits with the first non-zero code of any rank; rank 0's is 1
     * when a node failed a check or the fleet report flagged one, and no
     * rank's is 2 or 3. */
    const int fleet_rc = fleet_exit_code(fleet);
    assert_int_equal(fleet_rc, slow >= 0 ? 1 : fleet_rc);
    if (r->rc != (any_failed || fleet_rc ? 1 : 0))
        fail_msg("mpirun exited %d; stderr:\n%s", r->rc, aitk_str_cstr(&r->err));
}

static void test_three_nodes(void **state)
{
    (void)state;
    double median[RANKS];
    launch_and_check("clean", -1, median);
}

/* The slowed rank's steps take more than twice as long as the others'
 * (they are made 30 times slower, counted from their CPU time as well as
 * their wall time, which load does not shrink; the others share the cores). */
static void test_slow_rank(void **state)
{
    (void)state;
    double median[RANKS];
    launch_and_check("slow", 1, median);
    if (!(median[1] > 2 * median[0] && median[1] > 2 * median[2]))
        fail_msg("rank 1 was not slowed: medians %g %g %g s", median[0], median[1], median[2]);
}

/* A refusal on every rank (here a test-only variable naming no rank) ends
 * the launch at once with exit 2: no rank waits in the gather for another. */
static void test_refused_everywhere(void **state)
{
    (void)state;
    char out[600];
    path_in(out, sizeof out, "refused");
    setenv("AITK_TEST_SLOW_RANK", "3", 1);
    held.launch = launch(out, NULL);
    const ran *r = &held.launch;
    unsetenv("AITK_TEST_SLOW_RANK");
    assert_int_equal(r->rc, 2);
    if (!strstr(aitk_str_cstr(&r->err), "AITK_TEST_SLOW_RANK: 3 is out of range"))
        fail_msg("stderr: %s", aitk_str_cstr(&r->err));
    /* Refused before rank 0 prepared anything: not even the folder. */
    struct stat sb;
    assert_int_not_equal(stat(out, &sb), 0);
}

/* A usage error is said once, by rank 0, not once per rank. */
static void test_usage_said_once(void **state)
{
    (void)state;
    held.launch = launch(NULL, NULL);
    assert_int_equal(held.launch.rc, 2);
    const char *e = aitk_str_cstr(&held.launch.err), *said = strstr(e, "--mpi needs --output-dir");
    assert_non_null(said);
    assert_null(strstr(said + 1, "--mpi needs --output-dir"));
}

/* A data folder like the repository's, with the test's workload plan. */
static int make_data_dir(void)
{
    static const char *const links[][2] = {
        {"data/bench/workloads.yaml", AITK_SOURCE_DIR "/tests/validate/mpi_data/workloads.yaml"},
        {"data/validate", AITK_SOURCE_DIR "/validate"},
        {"data/models", AITK_SOURCE_DIR "/models"},
    };
    char p[700];
    path_in(p, sizeof p, "data");
    if (mkdir(p, 0700))
        return -1;
    path_in(p, sizeof p, "data/bench");
    if (mkdir(p, 0700))
        return -1;
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        path_in(p, sizeof p, links[i][0]);
        if (symlink(links[i][1], p))
            return -1;
    }
    path_in(p, sizeof p, "data");
    return setenv("AITK_DATA_DIR", p, 1);
}

int main(void)
{
    if (!AITK_MPIEXEC[0]) {
        puts("this build has no MPI (no mpiexec found): skipped");
        return 77;
    }
    if (!mkdtemp(base) || make_data_dir())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_three_nodes, free_held),
        cmocka_unit_test_teardown(test_slow_rank, free_held),
        cmocka_unit_test_teardown(test_refused_everywhere, free_held),
        cmocka_unit_test_teardown(test_usage_said_once, free_held),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (aitk_test_remove_tree(base) != 0)
        rc = rc ? rc : 1;
    return rc;
}
