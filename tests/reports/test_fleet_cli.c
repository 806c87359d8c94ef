/* `aitk-validate fleet` on node reports made at test time from a real
 * --quick report of the built binary, edited per node: a planted outlier
 * (one node's step time 1.6x) is flagged and exits 1; ordinary noise (within
 * 4%) exits 0; another driver version is flagged; a malformed report exits 2
 * with one line naming the file and the place; a folder of node folders is
 * read; two nodes claim no statistical outlier; control characters in node
 * names and values never reach the terminal or the pages raw. The fleet
 * JSON written here is held to reports/schema/fleet.schema.json by
 * schema.fleet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report_test_util.h"

#define OUT_DIR AITK_BINARY_DIR "/tests/fleet-out"

static cJSON *quick_report;

static int setup(void **state)
{
    (void)state;
    aitk_dir_create(OUT_DIR, NULL);
    aitk_dir_create(OUT_DIR "/json", NULL);
    const char *json = OUT_DIR "/quick.json";
    const char *argv[] = {AITK_EXE, "--quick", "--json", json, "--quiet", NULL};
    int rc = rt_run(argv, NULL, NULL, NULL);
    if (rc != 0 && rc != 1)
        return -1;
    quick_report = rt_load(json);
    return quick_report ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cJSON_Delete(quick_report);
    return 0;
}

/* The quick report with one workload (median step time `step`) and one
 * microbenchmark (`gbps`), and the NVIDIA driver `driver`. */
static cJSON *node_report(double step, double gbps, const char *driver)
{
    cJSON *r = cJSON_Duplicate(quick_report, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(r, "workloads");
    cJSON_DeleteItemFromObjectCaseSensitive(r, "micro");
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "name", "flux1-dev");
    cJSON_AddStringToObject(w, "title", "FLUX.1-dev LoRA");
    cJSON_AddStringToObject(w, "status", "completed");
    cJSON_AddStringToObject(w, "backend", "cuda");
    cJSON_AddStringToObject(w, "device", "NVIDIA H200");
    cJSON *st = cJSON_AddObjectToObject(w, "step_time_s");
    cJSON_AddNumberToObject(st, "median", step);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "workloads"), w);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", "memcpy.host");
    cJSON_AddNumberToObject(m, "value", gbps);
    cJSON_AddStringToObject(m, "unit", "GB/s");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "micro"), m);
    cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
    cJSON *gpu = cJSON_GetObjectItemCaseSensitive(env, "gpu");
    if (!gpu)
        gpu = cJSON_AddObjectToObject(env, "gpu");
    cJSON_DeleteItemFromObjectCaseSensitive(gpu, "nvml");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(gpu, "nvml"), "driver_version", driver);
    return r;
}

/* Writes node reports into `dir`: as DIR/nodeK/report.json when `nested`,
 * else DIR/nodeK.json; `paths` gets the files. */
static void write_nodes(const char *dir, const double *step, const double *gbps,
                        const char *const *driver, int n, bool nested, aitk_str *paths)
{
    aitk_dir_create(dir, NULL);
    for (int k = 0; k < n; k++) {
        aitk_str_clear(&paths[k]);
        if (nested) {
            aitk_str sub = AITK_STR_INIT;
            aitk_str_appendf(&sub, "%s/node%d", dir, k);
            aitk_dir_create(sub.ptr, NULL);
            aitk_str_appendf(&paths[k], "%s/report.json", sub.ptr);
            aitk_str_free(&sub);
        } else {
            aitk_str_appendf(&paths[k], "%s/node%d.json", dir, k);
        }
        cJSON *r = node_report(step[k], gbps[k], driver ? driver[k] : "550.54.15");
        assert_int_equal(rt_write_json(paths[k].ptr, r), 0);
        cJSON_Delete(r);
    }
}

/* A fleet report is no node report: read as plain JSON. */
static cJSON *outliers_of(const char *fleet_json)
{
    char *text = rt_read(fleet_json);
    assert_non_null(text);
    cJSON *f = cJSON_Parse(text);
    aitk_free(text);
    assert_non_null(f);
    return f;
}

/* The outliers of `f` with this node and kind. */
static int count_outliers(const cJSON *f, const char *node, const char *kind)
{
    int n = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(f, "outliers"))
    {
        const char *on = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "node"));
        const char *ok = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "kind"));
        n += (!node || strcmp(on, node) == 0) && strcmp(ok, kind) == 0;
    }
    return n;
}

static void test_planted_outlier_in_folder(void **state)
{
    (void)state;
    const double step[] = {1.00, 1.02, 0.98, 1.01, 1.60}, gbps[] = {20, 20.3, 19.8, 20.1, 20};
    aitk_str paths[5] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT,
                         AITK_STR_INIT};
    aitk_str out = AITK_STR_INIT;
    write_nodes(OUT_DIR "/planted", step, gbps, NULL, 5, true, paths);
    const char *argv[] = {AITK_EXE, "fleet", OUT_DIR "/planted", "--output-dir",
                          OUT_DIR "/json/planted", NULL};
    assert_int_equal(rt_run(argv, NULL, &out, NULL), 1);
    assert_non_null(strstr(aitk_str_cstr(&out), "node4"));
    cJSON *f = outliers_of(OUT_DIR "/json/planted/fleet.json");
    assert_int_equal(count_outliers(f, "node4", "metric"), 1);
    assert_int_equal(count_outliers(f, NULL, "metric"), 1);
    assert_int_equal(count_outliers(f, NULL, "version"), 0);
    cJSON_Delete(f);
    char *md = rt_read(OUT_DIR "/json/planted/fleet.md");
    char *html = rt_read(OUT_DIR "/json/planted/fleet.html");
    assert_non_null(md);
    assert_non_null(html);
    assert_non_null(strstr(md, "| node4 | metric | workload flux1-dev (cuda): median step time |"));
    assert_non_null(strstr(html, "<tr class=\"outlier\"><td>node4</td><td>metric</td>"));
    aitk_free(md);
    aitk_free(html);
    for (int k = 0; k < 5; k++)
        aitk_str_free(&paths[k]);
    aitk_str_free(&out);
}

static void test_noise_is_clean(void **state)
{
    (void)state;
    const double step[] = {1.00, 1.04, 0.96, 1.03, 0.97}, gbps[] = {20, 20.8, 19.2, 20.5, 19.6};
    aitk_str paths[5] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT,
                         AITK_STR_INIT};
    write_nodes(OUT_DIR "/clean", step, gbps, NULL, 5, false, paths);
    const char *argv[] = {AITK_EXE, "fleet", paths[0].ptr, paths[1].ptr, paths[2].ptr,
                          paths[3].ptr, paths[4].ptr, "--format", "json", "--output",
                          OUT_DIR "/json/clean.json", NULL};
    assert_int_equal(rt_run(argv, NULL, NULL, NULL), 0);
    cJSON *f = outliers_of(OUT_DIR "/json/clean.json");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(f, "outliers")), 0);
    cJSON_Delete(f);
    /* A report named directly and through its folder is one node. */
    aitk_str out = AITK_STR_INIT;
    const char *twice[] = {AITK_EXE, "fleet", paths[3].ptr, OUT_DIR "/clean", "--format", "json",
                           NULL};
    assert_int_equal(rt_run(twice, NULL, &out, NULL), 0);
    f = cJSON_Parse(out.ptr);
    assert_non_null(f);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(f, "nodes")), 5);
    cJSON_Delete(f);
    aitk_str_free(&out);
    for (int k = 0; k < 5; k++)
        aitk_str_free(&paths[k]);
}

static void test_other_driver(void **state)
{
    (void)state;
    const double step[] = {1, 1, 1, 1, 1}, gbps[] = {20, 20, 20, 20, 20};
    const char *driver[] = {"550.54.15", "550.54.15", "535.183.01", "550.54.15", "550.54.15"};
    aitk_str paths[5] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT,
                         AITK_STR_INIT};
    aitk_str out = AITK_STR_INIT;
    write_nodes(OUT_DIR "/driver", step, gbps, driver, 5, false, paths);
    const char *argv[] = {AITK_EXE, "fleet", OUT_DIR "/driver", "--format", "json", NULL};
    assert_int_equal(rt_run(argv, NULL, &out, NULL), 1);
    assert_int_equal(aitk_file_write_atomic(OUT_DIR "/json/driver.json", out.ptr, out.len, NULL),
                     AITK_OK);
    cJSON *f = outliers_of(OUT_DIR "/json/driver.json");
    assert_int_equal(count_outliers(f, "node2", "version"), 1);
    assert_int_equal(count_outliers(f, NULL, "version"), 1);
    assert_int_equal(count_outliers(f, NULL, "metric"), 0);
    assert_non_null(strstr(out.ptr, "535.183.01"));
    cJSON_Delete(f);
    for (int k = 0; k < 5; k++)
        aitk_str_free(&paths[k]);
    aitk_str_free(&out);
}

static void test_malformed(void **state)
{
    (void)state;
    const double step[] = {1, 1, 1}, gbps[] = {20, 20, 20};
    aitk_str paths[3] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    write_nodes(OUT_DIR "/malformed", step, gbps, NULL, 3, false, paths);
    cJSON *r = rt_load(paths[1].ptr);
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "workloads"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(w, "step_time_s"),
                                           "median", cJSON_CreateString("fast"));
    assert_int_equal(rt_write_json(paths[1].ptr, r), 0);
    cJSON_Delete(r);
    const char *argv[] = {AITK_EXE, "fleet", OUT_DIR "/malformed", NULL};
    assert_int_equal(rt_run(argv, NULL, &out, &err), 2);
    assert_int_equal(out.len, 0);
    assert_int_equal(rt_count(err.ptr, "\n"), 1);
    assert_non_null(strstr(err.ptr, paths[1].ptr));
    assert_non_null(strstr(err.ptr, "workloads[0].step_time_s.median"));
    /* Not JSON at all: the file and the place too. */
    assert_int_equal(aitk_file_write_atomic(paths[2].ptr, "{\"summary\": ", 12, NULL), AITK_OK);
    aitk_str_clear(&err);
    const char *one[] = {AITK_EXE, "fleet", paths[0].ptr, paths[2].ptr, NULL};
    assert_int_equal(rt_run(one, NULL, NULL, &err), 2);
    assert_int_equal(rt_count(err.ptr, "\n"), 1);
    assert_non_null(strstr(err.ptr, paths[2].ptr));
    /* Refused, the run leaves no output folder behind. */
    const char *refused[] = {AITK_EXE, "fleet", paths[2].ptr, "--output-dir",
                             OUT_DIR "/malformed-out", NULL};
    assert_int_equal(rt_run(refused, NULL, NULL, NULL), 2);
    assert_false(aitk_is_dir(OUT_DIR "/malformed-out"));
    /* An output folder that cannot be made is bad usage, said before any
     * report is read. */
    const char *nowhere[] = {AITK_EXE, "fleet", paths[0].ptr, "--output-dir",
                             OUT_DIR "/quick.json/sub", NULL};
    aitk_str_clear(&err);
    assert_int_equal(rt_run(nowhere, NULL, NULL, &err), 2);
    assert_non_null(strstr(err.ptr, "quick.json"));
    for (int k = 0; k < 3; k++)
        aitk_str_free(&paths[k]);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void test_two_nodes_claim_nothing(void **state)
{
    (void)state;
    const double step[] = {1.0, 1.6}, gbps[] = {20, 20};
    aitk_str paths[2] = {AITK_STR_INIT, AITK_STR_INIT};
    aitk_str out = AITK_STR_INIT;
    write_nodes(OUT_DIR "/two", step, gbps, NULL, 2, false, paths);
    const char *argv[] = {AITK_EXE, "fleet", OUT_DIR "/two", NULL};
    assert_int_equal(rt_run(argv, NULL, &out, NULL), 0);
    assert_non_null(strstr(out.ptr, "no statistical outlier is claimed"));
    for (int k = 0; k < 2; k++)
        aitk_str_free(&paths[k]);
    aitk_str_free(&out);
}

/* Two racks' node01: named by their paths. A fleet report left in the
 * nodes' folder by the run before is passed over, not read as a node. */
static void test_same_names_and_rerun(void **state)
{
    (void)state;
    const double step[] = {1.0, 1.0}, gbps[] = {20, 20};
    aitk_str paths[2] = {AITK_STR_INIT, AITK_STR_INIT}, out = AITK_STR_INIT;
    write_nodes(OUT_DIR "/rack1", step, gbps, NULL, 2, true, paths);
    write_nodes(OUT_DIR "/rack2", step, gbps, NULL, 1, true, paths);
    const char *argv[] = {AITK_EXE, "fleet", OUT_DIR "/rack1", OUT_DIR "/rack2", "--format",
                          "json", NULL};
    assert_int_equal(rt_run(argv, NULL, &out, NULL), 0);
    cJSON *f = cJSON_Parse(out.ptr);
    assert_non_null(f);
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(f, "nodes");
    assert_int_equal(cJSON_GetArraySize(nodes), 3);
    static const char *const names[] = {OUT_DIR "/rack1/node0/report.json", "node1",
                                        OUT_DIR "/rack2/node0/report.json"};
    for (int k = 0; k < 3; k++)
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetArrayItem(nodes, k), "name")),
                            names[k]);
    cJSON_Delete(f);
    const char *twice[] = {AITK_EXE, "fleet", OUT_DIR "/rack1", "--output-dir", OUT_DIR "/rack1",
                           NULL};
    assert_int_equal(rt_run(twice, NULL, NULL, NULL), 0);
    assert_true(rt_exists(OUT_DIR "/rack1/fleet.json"));
    assert_int_equal(rt_run(twice, NULL, NULL, NULL), 0);
    /* Named outright, it is refused: it is no node's report. */
    const char *named[] = {AITK_EXE, "fleet", OUT_DIR "/rack1/fleet.json", NULL};
    aitk_str_clear(&out);
    assert_int_equal(rt_run(named, NULL, NULL, &out), 2);
    assert_non_null(strstr(out.ptr, "a fleet report, not a node's report"));
    for (int k = 0; k < 2; k++)
        aitk_str_free(&paths[k]);
    aitk_str_free(&out);
}

static bool has_raw_control(const char *s)
{
    for (; *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') || *s == 0x7f)
            return true;
    return false;
}

static void test_control_characters(void **state)
{
    (void)state;
    const double step[] = {1, 1, 1}, gbps[] = {20, 20, 20};
    aitk_str paths[3] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    aitk_str out = AITK_STR_INIT;
    write_nodes(OUT_DIR "/control", step, gbps, NULL, 3, false, paths);
    /* A node whose file name and a check's observed value hold ESC
     * sequences, and whose driver differs (so its values are shown). */
    cJSON *r = rt_load(paths[2].ptr);
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(c, "observed", cJSON_CreateString("\x1b]0;pwned\x07"));
    cJSON *nvml = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "environment"), "gpu"),
        "nvml");
    cJSON_ReplaceItemInObjectCaseSensitive(nvml, "driver_version", cJSON_CreateString("1\x1b[2J"));
    remove(paths[2].ptr);
    assert_int_equal(rt_write_json(OUT_DIR "/control/evil\x1b[31m.json", r), 0);
    cJSON_Delete(r);
    const char *argv[] = {AITK_EXE, "fleet", OUT_DIR "/control", "--output-dir",
                          OUT_DIR "/json/control", NULL};
    assert_int_equal(rt_run(argv, NULL, &out, NULL), 1);
    assert_false(has_raw_control(out.ptr));
    assert_non_null(strstr(out.ptr, "evil\\x1b[31m"));
    static const char *const files[] = {"fleet.md", "fleet.html"};
    for (int k = 0; k < 2; k++) {
        aitk_str p = AITK_STR_INIT;
        aitk_str_appendf(&p, "%s/%s", OUT_DIR "/json/control", files[k]);
        char *text = rt_read(p.ptr);
        assert_non_null(text);
        assert_false(has_raw_control(text));
        assert_non_null(strstr(text, "\\x1b]0;pwned\\x07"));
        aitk_free(text);
        aitk_str_free(&p);
    }
    for (int k = 0; k < 3; k++)
        aitk_str_free(&paths[k]);
    aitk_str_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_outlier_in_folder),
        cmocka_unit_test(test_noise_is_clean),
        cmocka_unit_test(test_other_driver),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_two_nodes_claim_nothing),
        cmocka_unit_test(test_same_names_and_rerun),
        cmocka_unit_test(test_control_characters),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
