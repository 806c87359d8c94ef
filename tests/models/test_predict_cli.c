/* `aitk-validate predict` and `aitk-validate gpus` run as a person runs them:
 * the Done-when commands (checked against reported figures), the
 * explanations a non-fitting plan must show, and every bad input giving exit
 * code 2 with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/proc.h"

#define FIXTURE(name) AITK_SOURCE_DIR "/tests/models/fixtures/" name
#define GIB 1073741824.0

#include "tests/exe_run.h"

static cJSON *read_json(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(path, 1 << 24, &text, &len, NULL), AITK_OK);
    cJSON *j = cJSON_ParseWithLength(text, len);
    aitk_free(text);
    assert_non_null(j);
    return j;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(n))
        fail_msg("no number '%s'", key);
    return n->valuedouble;
}

/* Issue 5: FLUX on an RTX 4090 at 1024 px (fp8 base, rank 16, checkpointing)
 * predicts a peak under 24 GB and a step within 1.5x of the reported 3.5 s
 * (SimpleTuner FLUX quickstart, FACTS.md section 8). */
static void test_flux_4090_json(void **state)
{
    (void)state;
    char path[] = "/tmp/aitk-predict-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *args[] = {"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                          "--resolution", "1024", "--json", path, NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    cJSON *j = read_json(path);
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "predictions"), 0);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(p, "workload");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(w, "base_dtype")->valuestring, "fp8");
    assert_int_equal((int)num(w, "rank"), 16);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "gradient_checkpointing")));
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "gpus"), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(g, "gpu")->valuestring, "RTX 4090");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "fits")));
    assert_true(num(g, "peak_bytes") < 24 * GIB);
    double s = num(g, "step_seconds");
    if (s > 3.5 * 1.5 || s < 3.5 / 1.5)
        fail_msg("predicted %.2f s/step, reported 3.5", s);
    cJSON_Delete(j);
    unlink(path);
    ran_free(&r);
}

/* Issue 5: bf16 base weights do not fit in 24 GB, and the terms are shown. */
static void test_flux_bf16_terms(void **state)
{
    (void)state;
    const char *args[] = {"predict", "--model", "flux1-dev", "--gpu", "4090", "--quantize",
                          "none", NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    const char *out = aitk_str_cstr(&r.out);
    assert_non_null(strstr(out, "NO"));
    assert_non_null(strstr(out, "largest terms: base weights"));
    ran_free(&r);
}

static void test_explain_and_price(void **state)
{
    (void)state;
    const char *args[] = {"predict", "--model", "chroma", "--gpu", "A40,L40S", "--explain",
                          "--price-per-hour", "L40S=1.00", NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    const char *out = aitk_str_cstr(&r.out);
    assert_non_null(strstr(out, "Memory plan"));
    assert_non_null(strstr(out, "fragmentation allowance"));
    assert_non_null(strstr(out, "attention, backward"));
    assert_non_null(strstr(out, "L40S"));
    ran_free(&r);
}

/* Every model on every GPU; the run is also the one timed for the < 50 ms
 * target (measured with hyperfine, not asserted here). */
static void test_all(void **state)
{
    (void)state;
    const char *args[] = {"predict", "--all-gpus", "--model", "flux1-dev,chroma,omnigen2", NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    const char *out = aitk_str_cstr(&r.out);
    assert_non_null(strstr(out, "flux1-dev"));
    assert_non_null(strstr(out, "chroma"));
    assert_non_null(strstr(out, "omnigen2"));
    assert_non_null(strstr(out, "B200"));
    ran_free(&r);
}

static void test_config(void **state)
{
    (void)state;
    const char *ok[] = {"predict", "--config", FIXTURE("chroma_24gb.yaml"), "--gpu", "A40", NULL};
    ran r = run(ok);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(aitk_str_cstr(&r.out), "chroma"));
    assert_non_null(strstr(aitk_str_cstr(&r.err), "some_future_option"));
    ran_free(&r);
    const char *bad[] = {"predict", "--config", FIXTURE("omnigen2_unterminated.yaml"), NULL};
    r = run(bad);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(aitk_str_cstr(&r.err), "omnigen2_unterminated.yaml:"));
    ran_free(&r);
}

static void test_bad_usage(void **state)
{
    (void)state;
    static const char *const cases[][8] = {
        {"predict", "--gpu", "Voodoo", NULL},
        {"predict", "--gpu", "A100", NULL},
        {"predict", "--model", "sdxl", NULL},
        {"predict", "--resolution", "big", NULL},
        {"predict", "--batch", "0", NULL},
        {"predict", "--quantize", "int3", NULL},
        {"predict", "--price-per-hour", "4090", NULL},
        {"predict", "--calibrate", "report.json", NULL},
        {"predict", "--model", "chroma", "--config", "x.yaml", NULL},
        {"predict", "--gpu", "A40", "--all-gpus", NULL},
        {"predict", "--config", FIXTURE("both_accumulation.yaml"), NULL},
        {"predict", "--config", "/nonexistent.yaml", NULL},
        {"predict", "--json", "/nonexistent-dir/out.json", "--model", "chroma", NULL},
        {"predict", "stray", NULL},
        {"gpus", "--bogus", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ran r = run(cases[i]);
        if (r.rc != 2 || r.err.len == 0)
            fail_msg("case %zu (%s %s): exit %d, stderr '%s'", i, cases[i][1],
                     cases[i][2] ? cases[i][2] : "", r.rc, aitk_str_cstr(&r.err));
        ran_free(&r);
    }
}

static void test_gpus(void **state)
{
    (void)state;
    const char *args[] = {"gpus", "--sources", NULL};
    ran r = run(args);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(aitk_str_cstr(&r.out), "NVIDIA GeForce RTX 4090"));
    assert_non_null(strstr(aitk_str_cstr(&r.out), "unverified"));
    ran_free(&r);
    const char *json[] = {"gpus", "--json", NULL};
    r = run(json);
    assert_int_equal(r.rc, 0);
    cJSON *j = cJSON_Parse(aitk_str_cstr(&r.out));
    assert_true(cJSON_IsArray(j));
    assert_int_equal(cJSON_GetArraySize(j), 18); /* the rows of FACTS.md section 7 */
    cJSON_Delete(j);
    ran_free(&r);
}

/* Copies a data file of the source tree into the folder `dir`/`name`. */
static void copy_data(const char *dir, const char *name)
{
    aitk_str from = AITK_STR_INIT, to = AITK_STR_INIT;
    aitk_str_appendf(&from, "%s/%s", AITK_SOURCE_DIR, name);
    aitk_str_appendf(&to, "%s/%s", dir, name);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(aitk_str_cstr(&from), 1 << 20, &text, &len, NULL), AITK_OK);
    assert_int_equal(aitk_file_write_atomic(aitk_str_cstr(&to), text, len, NULL), AITK_OK);
    aitk_free(text);
    aitk_str_free(&from);
    aitk_str_free(&to);
}

/* A broken model spec read from disk (AITK_DATA_DIR): exit 2, positioned. */
static void test_broken_data(void **state)
{
    (void)state;
    char dir[] = "/tmp/aitk-models-XXXXXX";
    assert_non_null(mkdtemp(dir));
    aitk_str sub = AITK_STR_INIT, file = AITK_STR_INIT, bench = AITK_STR_INIT;
    aitk_str_appendf(&sub, "%s/models", dir);
    aitk_str_appendf(&bench, "%s/bench", dir);
    assert_int_equal(aitk_dir_create(aitk_str_cstr(&sub), NULL), AITK_OK);
    assert_int_equal(aitk_dir_create(aitk_str_cstr(&bench), NULL), AITK_OK);
    copy_data(dir, "bench/gpus.yaml");
    copy_data(dir, "models/cost.yaml");
    aitk_str_appendf(&file, "%s/chroma.yaml", aitk_str_cstr(&sub));
    const char *text = "schema: 1\nid: chroma\ntitle: [unclosed\n";
    assert_int_equal(aitk_file_write_atomic(aitk_str_cstr(&file), text, strlen(text), NULL),
                     AITK_OK);
    setenv("AITK_DATA_DIR", dir, 1);
    const char *args[] = {"predict", "--model", "chroma", NULL};
    ran r = run(args);
    unsetenv("AITK_DATA_DIR");
    assert_int_equal(r.rc, 2);
    const char *at = strstr(aitk_str_cstr(&r.err), "models/chroma.yaml:");
    assert_non_null(at);
    const char digit = at[strlen("models/chroma.yaml:")];
    assert_true(digit >= '1' && digit <= '9');
    ran_free(&r);
    unlink(aitk_str_cstr(&file));
    aitk_str_append(&sub, "/cost.yaml");
    unlink(aitk_str_cstr(&sub));
    aitk_str_append(&bench, "/gpus.yaml");
    unlink(aitk_str_cstr(&bench));
    aitk_str_clear(&sub);
    aitk_str_appendf(&sub, "%s/models", dir);
    rmdir(aitk_str_cstr(&sub));
    aitk_str_clear(&bench);
    aitk_str_appendf(&bench, "%s/bench", dir);
    rmdir(aitk_str_cstr(&bench));
    rmdir(dir);
    aitk_str_free(&sub);
    aitk_str_free(&bench);
    aitk_str_free(&file);
}

int main(void)
{
    unsetenv("AITK_DATA_DIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flux_4090_json), cmocka_unit_test(test_flux_bf16_terms),
        cmocka_unit_test(test_explain_and_price), cmocka_unit_test(test_all),
        cmocka_unit_test(test_config),         cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_gpus),           cmocka_unit_test(test_broken_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
