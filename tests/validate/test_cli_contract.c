/* The command-line contract, checked on the real binary: bad usage is one
 * line on stderr and exit 2 with nothing written; good runs leave reports
 * whose verdict matches the exit code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#ifndef _WIN32
#include <iconv.h>
#endif
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "cli_run.h"
#include "tests/exe_run.h"

static char tmp[256];

/* Scratch folders: /tmp on Linux; under Wine, the build tree (Z:), which
 * the Linux side can inspect and which has no rm to empty it. */
#ifdef _WIN32
#define SCRATCH_ROOT AITK_BINARY_DIR
#else
#define SCRATCH_ROOT "/tmp"
#endif

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, SCRATCH_ROOT "/aitk-cli-XXXXXX");
    return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return aitk_test_remove_tree(tmp);
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

/* One line on stderr that contains `needle`, nothing on stdout, exit 2. */
static void expect_usage_error(const char *const *args, const char *needle)
{
    cli_result r;
    cli_run(&r, args, NULL);
    assert_int_equal(r.exit_code, 2);
    if (count_lines(aitk_str_cstr(&r.err)) != 1 || !strstr(aitk_str_cstr(&r.err), needle))
        fail_msg("stderr should be one line with '%s', got: %s", needle, aitk_str_cstr(&r.err));
    assert_int_equal(r.out.len, 0);
    cli_free(&r);
}

static void test_bad_usage(void **state)
{
    (void)state;
    expect_usage_error((const char *[]){"--bogus", NULL}, "unknown option '--bogus'");
    /* A value given to a flag: the flag is named, not getopt's internal code. */
    expect_usage_error((const char *[]){"--no-color=1", NULL}, "--no-color takes no value");
    expect_usage_error((const char *[]){"--quick=yes", NULL}, "--quick takes no value");
    expect_usage_error((const char *[]){"--qui", NULL}, "ambiguous: it begins --quick, --quiet");
    expect_usage_error((const char *[]){"--model", "flux1-dev,chroma,flux1-dev", NULL},
                       "'flux1-dev' is named twice");
    /* One value given twice loses neither silently; nor do opposites. */
    expect_usage_error((const char *[]){"--quick", "--json", "a.json", "--json", "b.json", NULL},
                       "--json is given twice");
    /* Every command words these alike (common/cliopt.c), naming the option. */
    expect_usage_error((const char *[]){"render", "r.json", "--html", "a", "--html", "b", NULL},
                       "render: --html is given twice");
    expect_usage_error((const char *[]){"compare", "--threshold", "1", "--thr", "2", "a", "b",
                                        NULL},
                       "compare: --threshold is given twice");
    expect_usage_error((const char *[]){"trend", "--last", "2", "--last", "3", "x", NULL},
                       "trend: --last is given twice");
    expect_usage_error((const char *[]){"deps", "--depth", "2", "--depth", "3", "x", NULL},
                       "deps: --depth is given twice");
    expect_usage_error((const char *[]){"deps", "--depth", "two", "x", NULL},
                       "deps: --depth: 'two' is not a whole number");
    expect_usage_error((const char *[]){"deps", "--jso=1", "x", NULL},
                       "deps: --json takes no value (see deps --help)");
    expect_usage_error((const char *[]){"render", "--red=1", "x", NULL},
                       "render: --redact takes no value");
    expect_usage_error((const char *[]){"trend", "--form", NULL}, "trend: --format needs a value");
    expect_usage_error((const char *[]){"--htm", NULL}, "--html needs a value");
    /* An unknown short option inside a cluster is named, not the word before. */
    expect_usage_error((const char *[]){"--quick", "-xq", NULL}, "unknown option '-x'");
    expect_usage_error((const char *[]){"deps", "--all", "-xh", NULL},
                       "deps: unknown option '-x'");
    expect_usage_error((const char *[]){"--quick", "--quiet", "--verbose", NULL},
                       "--quiet and --verbose cannot be combined");
    expect_usage_error((const char *[]){"--steps", "-5", NULL}, "--steps: -5 is out of range");
    expect_usage_error((const char *[]){"--steps", "abc", NULL}, "--steps: 'abc' is not a whole number");
    expect_usage_error((const char *[]){"--steps", "12x", NULL}, "not a whole number");
    expect_usage_error((const char *[]){"--steps", NULL}, "--steps needs a value");
    expect_usage_error((const char *[]){"--quick", "--full", NULL}, "cannot be combined");
    expect_usage_error((const char *[]){"--standard", "--full", NULL}, "cannot be combined");
    expect_usage_error((const char *[]){"--quick", "--standard", NULL}, "cannot be combined");
    expect_usage_error((const char *[]){"--model", "sdxl", NULL}, "unknown model 'sdxl'");
    expect_usage_error((const char *[]){"frobnicate", NULL}, "unknown command 'frobnicate'");
    expect_usage_error((const char *[]){"--quick", "stray", NULL}, "unexpected argument 'stray'");
    expect_usage_error((const char *[]){"--quick", "--profile", "nope", NULL},
                       "unknown profile 'nope' (known: ai-toolkit-current");
}

static void test_unwritable_output_dir_writes_nothing(void **state)
{
    (void)state;
    /* A folder below a regular file cannot be created, even by root. */
    aitk_str file = AITK_STR_INIT, out = AITK_STR_INIT;
    aitk_path_join(&file, tmp, "a-file");
    assert_int_equal(aitk_file_write_atomic(file.ptr, "x", 1, NULL), AITK_OK);
    aitk_str_appendf(&out, "%s/reports", file.ptr);
    const char *args[] = {"--quick", "--output-dir", out.ptr, NULL};
    expect_usage_error(args, out.ptr);
    assert_int_equal(entries(tmp), 1); /* only a-file: no temp, no partial report */
    /* Same for --json into a folder that does not exist. */
    aitk_str_clear(&out);
    aitk_str_appendf(&out, "%s/missing/r.json", tmp);
    const char *args2[] = {"--quick", "--json", out.ptr, NULL};
    expect_usage_error(args2, "missing");
    assert_int_equal(entries(tmp), 1);
    /* An output that names a folder, or no file at all, is refused before
     * the run: the good --json beside it is not written either. */
    aitk_str ok = AITK_STR_INIT;
    aitk_path_join(&ok, tmp, "ok.json");
    const char *args3[] = {"--quick", "--json", ok.ptr, "--markdown", tmp, NULL};
    expect_usage_error(args3, "is a folder");
    const char *args4[] = {"--quick", "--json", ok.ptr, "--html", "", NULL};
    expect_usage_error(args4, "empty");
    assert_int_equal(entries(tmp), 1);
    aitk_str_free(&ok);
    aitk_str_free(&file);
    aitk_str_free(&out);
}

#ifndef _WIN32 /* Windows' file names are UTF-16: a name that is not UTF-8 cannot exist. */
/* glibc's iconv, not our code, judges whether text is UTF-8. */
static bool utf8_by_iconv(const char *text)
{
    iconv_t cd = iconv_open("UTF-8", "UTF-8");
    assert_true(cd != (iconv_t)-1);
    char *in = (char *)text, buf[4096];
    size_t left = strlen(text);
    bool ok = true;
    while (ok && left > 0) {
        char *out = buf;
        size_t room = sizeof buf;
        if (iconv(cd, &in, &left, &out, &room) == (size_t)-1 && errno != E2BIG)
            ok = false;
    }
    iconv_close(cd);
    return ok;
}

/* A folder name that is not UTF-8 (Latin-1 "café") ends up in the report's
 * text; report.json and report.md must still be UTF-8 (the JSON also goes
 * to the schema test, whose Python reader refuses anything else). */
static void test_non_utf8_path_gives_utf8_reports(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, keep = AITK_STR_INIT, md = AITK_STR_INIT;
    aitk_str_appendf(&dir, "%s/caf\xe9", tmp);
    aitk_path_join(&keep, AITK_TEST_REPORTS, "cli-latin1-path.json");
    aitk_path_join(&md, dir.ptr, "report.md");
    cli_result r;
    cli_run(&r, (const char *[]){"--quick", "--output-dir", dir.ptr, "--json", keep.ptr, NULL},
            NULL);
    if (r.exit_code != 0 && r.exit_code != 1)
        fail_msg("exit %d: %s", r.exit_code, aitk_str_cstr(&r.err));
    const char *files[] = {keep.ptr, md.ptr};
    for (size_t i = 0; i < 2; i++) {
        char *text = NULL;
        assert_int_equal(aitk_file_read(files[i], 1 << 22, &text, NULL, NULL), AITK_OK);
        assert_non_null(strstr(text, "caf\xEF\xBF\xBD")); /* the path is there, repaired */
        if (!utf8_by_iconv(text))
            fail_msg("%s is not UTF-8", files[i]);
        aitk_free(text);
    }
    cli_free(&r);
    aitk_str_free(&dir);
    aitk_str_free(&keep);
    aitk_str_free(&md);
}

#endif
static void test_help_and_version(void **state)
{
    (void)state;
    cli_result r;
    cli_run(&r, (const char *[]){"--help", NULL}, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out.ptr, "Exit codes:"));
    assert_non_null(strstr(r.out.ptr, "Examples:"));
    assert_non_null(strstr(r.out.ptr, "--output-dir"));
    cli_free(&r);
    cli_run(&r, (const char *[]){"--version", NULL}, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_true(strncmp(r.out.ptr, "aitk-validate ", 14) == 0);
    cli_free(&r);
}

static cJSON *load_json(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(path, 1 << 24, &text, &len, NULL), AITK_OK);
    cJSON *j = cJSON_ParseWithLength(text, len);
    aitk_free(text);
    assert_non_null(j);
    return j;
}

/* --quick into --output-dir: both files, and the exit code agrees with the
 * verdict inside. The JSON also goes to the shared folder that the schema
 * test validates. */
static void test_quick_writes_reports(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, json = AITK_STR_INIT, md = AITK_STR_INIT, keep = AITK_STR_INIT;
    aitk_path_join(&dir, tmp, "out/nested");
    aitk_path_join(&keep, AITK_TEST_REPORTS, "cli-quick.json");
    const char *args[] = {"--quick", "--output-dir", dir.ptr, "--json", keep.ptr, NULL};
    cli_result r;
    cli_run(&r, args, NULL);
    if (r.exit_code != 0 && r.exit_code != 1)
        fail_msg("exit %d: %s", r.exit_code, aitk_str_cstr(&r.err));
    aitk_path_join(&json, dir.ptr, "report.json");
    aitk_path_join(&md, dir.ptr, "report.md");
    cJSON *rep = load_json(json.ptr);
    const cJSON *summary = cJSON_GetObjectItem(rep, "summary");
    const char *verdict = cJSON_GetObjectItem(summary, "verdict")->valuestring;
    assert_int_equal(r.exit_code, strcmp(verdict, "fail") == 0 ? 1 : 0);
    assert_int_equal(cJSON_GetObjectItem(summary, "exit_code")->valueint, r.exit_code);
    assert_string_equal(cJSON_GetObjectItem(rep, "level")->valuestring, "quick");
    /* --quick runs no workload; the console says why each skipped check
     * was skipped (here deps.torch skips: no torch is installed). */
    const cJSON *c;
    int skips_seen = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(rep, "checks"))
    {
        assert_false(strncmp(cJSON_GetObjectItem(c, "id")->valuestring, "workload.", 9) == 0);
        const char *msg = cJSON_GetObjectItem(c, "message")->valuestring;
        if (strcmp(cJSON_GetObjectItem(c, "status")->valuestring, "skip") == 0 && *msg) {
            if (!strstr(r.out.ptr, msg))
                fail_msg("skip reason '%s' missing from the console output", msg);
            skips_seen++;
        }
    }
    print_message("%d skipped check(s) with their reasons on the console\n", skips_seen);
    char *mdtext = NULL;
    assert_int_equal(aitk_file_read(md.ptr, 1 << 20, &mdtext, NULL, NULL), AITK_OK);
    assert_non_null(strstr(mdtext, "## aitk-validate: "));
    assert_non_null(strstr(r.out.ptr, "Verdict: "));

    /* render reproduces report.md byte for byte from report.json. */
    aitk_str again = AITK_STR_INIT;
    aitk_path_join(&again, tmp, "again.md");
    cli_result rr;
    cli_run(&rr, (const char *[]){"render", json.ptr, "--markdown", again.ptr, NULL}, NULL);
    assert_int_equal(rr.exit_code, 0);
    char *again_text = NULL;
    assert_int_equal(aitk_file_read(again.ptr, 1 << 20, &again_text, NULL, NULL), AITK_OK);
    assert_string_equal(again_text, mdtext);
    cli_free(&rr);
    aitk_free(again_text);
    aitk_str_free(&again);

    aitk_free(mdtext);
    cJSON_Delete(rep);
    cli_free(&r);
    aitk_str_free(&dir);
    aitk_str_free(&json);
    aitk_str_free(&md);
    aitk_str_free(&keep);
}

/* A workload check may say "pass" only when that workload really ran to
 * completion; otherwise it says skip (or warn/fail) with a reason. */
static void test_standard_level_workload_claims_match_what_ran(void **state)
{
    (void)state;
    aitk_str keep = AITK_STR_INIT;
    aitk_path_join(&keep, AITK_TEST_REPORTS, "cli-standard-flux.json");
    cli_result r;
    cli_run(&r, (const char *[]){"--model", "flux1-dev", "--steps", "3", "--json", keep.ptr, "-Q", NULL},
            NULL);
    assert_true(r.exit_code == 0 || r.exit_code == 1);
    assert_int_equal(r.out.len, 0); /* --quiet */
    cJSON *rep = load_json(keep.ptr);
    const char *ran_status = NULL;
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(rep, "workloads"))
    {
        assert_string_equal(cJSON_GetObjectItem(w, "name")->valuestring, "flux1-dev");
        ran_status = cJSON_GetObjectItem(w, "status")->valuestring;
    }
    int flux = 0, others = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(rep, "checks"))
    {
        const char *id = cJSON_GetObjectItem(c, "id")->valuestring;
        const char *st = cJSON_GetObjectItem(c, "status")->valuestring;
        if (strcmp(id, "workload.flux1-dev") == 0) {
            flux++;
            if (strcmp(st, "pass") == 0 && !(ran_status && strcmp(ran_status, "completed") == 0))
                fail_msg("workload.flux1-dev says pass but the workload status is %s",
                         ran_status ? ran_status : "(absent)");
            if (strcmp(st, "skip") == 0)
                assert_true(strlen(cJSON_GetObjectItem(c, "message")->valuestring) > 0);
        } else if (strncmp(id, "workload.", 9) == 0 && strncmp(id, "workload.flux1-dev.", 19) != 0) {
            others++;
        }
    }
    assert_int_equal(flux, 1);
    assert_int_equal(others, 0); /* --model selected one */
    cJSON_Delete(rep);
    cli_free(&r);
    aitk_str_free(&keep);
}

/* --config runs the job the user means: its model, with its LoRA and
 * optimizer choices, said in the report; a broken config is refused with
 * its position before anything runs. */
static void test_config_selects_the_workload(void **state)
{
    (void)state;
    const char *chroma = AITK_SOURCE_DIR "/tests/models/fixtures/chroma_24gb.yaml";
    expect_usage_error((const char *[]){"--config", AITK_SOURCE_DIR
                                        "/tests/models/fixtures/omnigen2_unterminated.yaml", NULL},
                       "omnigen2_unterminated.yaml:9:23");
    expect_usage_error((const char *[]){"--config", chroma, "--model", "flux1-dev", NULL},
                       "conflicts with --config");
    expect_usage_error((const char *[]){"--config", "/no/such/config.yaml", NULL},
                       "/no/such/config.yaml");

    aitk_str keep = AITK_STR_INIT;
    aitk_path_join(&keep, AITK_TEST_REPORTS, "cli-config-chroma.json");
    cli_result r;
    cli_run(&r, (const char *[]){"--config", chroma, "--steps", "3", "--json", keep.ptr, "-Q", NULL},
            NULL);
    assert_true(r.exit_code == 0 || r.exit_code == 1);
    cJSON *rep = load_json(keep.ptr);
    int config_checks = 0, workloads = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(rep, "checks"))
    {
        const char *id = cJSON_GetObjectItem(c, "id")->valuestring;
        if (strcmp(id, "config.file") == 0) {
            config_checks++;
            /* chroma_24gb.yaml: arch chroma, linear 16, adamw8bit, quantize */
            const char *obs = cJSON_GetObjectItem(c, "observed")->valuestring;
            assert_non_null(strstr(obs, "chroma, LoRA rank 16"));
            assert_non_null(strstr(obs, "adamw8bit"));
        }
        assert_false(strcmp(id, "workload.flux1-dev") == 0 || strcmp(id, "workload.omnigen2") == 0);
    }
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(rep, "workloads"))
    {
        workloads++;
        assert_string_equal(cJSON_GetObjectItem(w, "name")->valuestring, "chroma");
        const cJSON *conf = cJSON_GetObjectItem(w, "configuration");
        /* This build has the CPU step graph: the workload must really run,
         * or the assertions below would pass without testing anything. */
        assert_string_equal(cJSON_GetObjectItem(w, "status")->valuestring, "completed");
        assert_non_null(cJSON_GetObjectItem(conf, "from_config"));
    }
    assert_int_equal(config_checks, 1);
    assert_int_equal(workloads, 1);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "environment"), "config"),
                            "model")->valuestring,
        "chroma");
    cJSON_Delete(rep);
    cli_free(&r);

    /* The config's rank and batch reach the step that runs. */
    char dir[] = SCRATCH_ROOT "/aitk-cfg-XXXXXX";
    assert_non_null(mkdtemp(dir));
    aitk_str cfg = AITK_STR_INIT;
    aitk_path_join(&cfg, dir, "flux_r4_b2.yaml");
    const char *text = "job: extension\nconfig:\n  process:\n    - network: {type: lora, linear: 4, "
                       "linear_alpha: 4}\n      train: {batch_size: 2, optimizer: adamw, "
                       "gradient_checkpointing: false}\n"
                       "      model: {is_flux: true}\n";
    assert_int_equal(aitk_file_write_atomic(cfg.ptr, text, strlen(text), NULL), AITK_OK);
    aitk_str_clear(&keep);
    aitk_path_join(&keep, AITK_TEST_REPORTS, "cli-config-flux-r4.json");
    cli_run(&r, (const char *[]){"--config", cfg.ptr, "--steps", "3", "--json", keep.ptr, "-Q", NULL},
            NULL);
    assert_true(r.exit_code == 0 || r.exit_code == 1);
    rep = load_json(keep.ptr);
    w = cJSON_GetArrayItem(cJSON_GetObjectItem(rep, "workloads"), 0);
    assert_non_null(w);
    assert_string_equal(cJSON_GetObjectItem(w, "name")->valuestring, "flux1-dev");
    assert_string_equal(cJSON_GetObjectItem(w, "status")->valuestring, "completed");
    {
        assert_non_null(strstr(cJSON_GetObjectItem(w, "title")->valuestring, "LoRA r4,"));
        assert_int_equal(
            cJSON_GetObjectItem(cJSON_GetObjectItem(w, "configuration"), "batch")->valueint, 2);
        /* LoRA parameters are r * (in + out) per adapted layer: rank 4 has a
         * quarter of the default rank 16's (the run of the test above). */
        aitk_str base = AITK_STR_INIT;
        aitk_path_join(&base, AITK_TEST_REPORTS, "cli-standard-flux.json");
        cJSON *r16 = load_json(base.ptr);
        const cJSON *w16 = cJSON_GetArrayItem(cJSON_GetObjectItem(r16, "workloads"), 0);
        double p4 = cJSON_GetObjectItem(cJSON_GetObjectItem(w, "configuration"), "lora_params")
                        ->valuedouble;
        double p16 = cJSON_GetObjectItem(cJSON_GetObjectItem(w16, "configuration"), "lora_params")
                         ->valuedouble;
        assert_true(p4 > 0);
        assert_true(p16 == 4 * p4);
        /* The report says which job ran: the config's, and the default
         * (ai-toolkit's example config: adamw8bit, checkpointing). */
        const cJSON *c4 = cJSON_GetObjectItem(w, "configuration");
        const cJSON *c16 = cJSON_GetObjectItem(w16, "configuration");
        assert_int_equal(cJSON_GetObjectItem(c4, "rank")->valueint, 4);
        assert_string_equal(cJSON_GetObjectItem(c4, "optimizer")->valuestring, "adamw");
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(c4, "gradient_checkpointing")));
        assert_int_equal(cJSON_GetObjectItem(c16, "rank")->valueint, 16);
        assert_string_equal(cJSON_GetObjectItem(c16, "optimizer")->valuestring, "adamw8bit");
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c16, "gradient_checkpointing")));
        cJSON_Delete(r16);
        aitk_str_free(&base);
    }
    cJSON_Delete(rep);
    cli_free(&r);
    remove(cfg.ptr);
    rmdir(dir);
    aitk_str_free(&cfg);
    aitk_str_free(&keep);
}

static void test_broken_data_file_is_positioned(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, file = AITK_STR_INIT, env = AITK_STR_INIT;
    aitk_path_join(&dir, tmp, "data/validate");
    assert_int_equal(aitk_dir_create(dir.ptr, NULL), AITK_OK);
    aitk_path_join(&file, dir.ptr, "compat.yaml");
    const char *broken = "schema: 1\ndefault_profile: p\nprofiles:\n  p:\n    host:\n"
                         "      min_glibc: {value: \"2.17, source: x}\n";
    assert_int_equal(aitk_file_write_atomic(file.ptr, broken, strlen(broken), NULL), AITK_OK);
    aitk_str_appendf(&env, "AITK_DATA_DIR=%s/data", tmp);
    cli_result r;
    cli_run(&r, (const char *[]){"--quick", NULL}, (const char *[]){env.ptr, NULL});
    assert_int_equal(r.exit_code, 2);
    assert_non_null(strstr(r.err.ptr, "validate/compat.yaml:"));
    assert_non_null(strstr(r.err.ptr, "line 6, column 26"));
    cli_free(&r);
    aitk_str_free(&dir);
    aitk_str_free(&file);
    aitk_str_free(&env);
}

static void test_render_rejects_bad_input(void **state)
{
    (void)state;
    aitk_str f = AITK_STR_INIT;
    aitk_path_join(&f, tmp, "bad.json");
    assert_int_equal(aitk_file_write_atomic(f.ptr, "{\n  \"a\": [1,\n}", 15, NULL), AITK_OK);
    expect_usage_error((const char *[]){"render", f.ptr, NULL}, "bad.json:3:1: not valid JSON");
    assert_int_equal(aitk_file_write_atomic(f.ptr, "{\"checks\": []}", 14, NULL), AITK_OK);
    expect_usage_error((const char *[]){"render", f.ptr, NULL}, "no schema_version");
    /* Two values in one file (a report with an old tail): not one report. */
    assert_int_equal(aitk_file_write_atomic(f.ptr, "{}\n  \n {\"x\": 1}\n", 16, NULL), AITK_OK);
    expect_usage_error((const char *[]){"render", f.ptr, NULL},
                       "bad.json:3:2: text after the end of the JSON value");
    expect_usage_error((const char *[]){"render", "/no/such/report.json", NULL},
                       "/no/such/report.json: No such file");
    expect_usage_error((const char *[]){"render", NULL}, "exactly one report");
    aitk_str_free(&f);
}

#ifndef _WIN32 /* /dev/full, /bin/sh, ulimit: see main() */
/* Every output that cannot be written is named, each apart from the next:
 * /dev/full refuses every write (ENOSPC), and, a device, is written in
 * place, so two outputs there fail twice. Exit 3: the run itself was fine. */
static void test_failed_writes_each_named(void **state)
{
    (void)state;
    cli_result r;
    cli_run(&r, (const char *[]){"--quick", "-Q", "--json", "/dev/full", "--junit", "/dev/full", NULL},
            NULL);
    assert_int_equal(r.exit_code, 3);
    const char *e = aitk_str_cstr(&r.err);
    const char *first = strstr(e, "/dev/full: write failed");
    assert_non_null(first);
    if (!strstr(first + 1, "; /dev/full: write failed"))
        fail_msg("two failures, separated, expected: %s", e);
    cli_free(&r);
}

/* `render r.json > issue.md` on a full disk must not pass for success: every
 * command whose result goes to standard output says the write failed and
 * exits 3 (/dev/full fails every write with ENOSPC). */
static void test_stdout_write_failure_is_exit_3(void **state)
{
    (void)state;
    aitk_str rep = AITK_STR_INIT, dir = AITK_STR_INIT;
    aitk_path_join(&dir, tmp, "nightly");
    assert_int_equal(aitk_dir_create(dir.ptr, NULL), AITK_OK);
    aitk_path_join(&rep, dir.ptr, "report.json");
    cli_result q;
    cli_run(&q, (const char *[]){"--quick", "-Q", "--json", rep.ptr, NULL}, NULL);
    if (q.exit_code != 0 && q.exit_code != 1)
        fail_msg("--quick exited %d: %s", q.exit_code, aitk_str_cstr(&q.err));
    cli_free(&q);
    const char *const *runs[] = {
        (const char *[]){"render", rep.ptr, NULL},
        (const char *[]){"compare", rep.ptr, rep.ptr, NULL},
        (const char *[]){"trend", dir.ptr, NULL},
        (const char *[]){"gpus", NULL},
        (const char *[]){"predict", "--model", "flux1-dev", "--gpu", "RTX 4090", NULL},
        (const char *[]){"deps", "/bin/sh", NULL},
        (const char *[]){"deps", "/bin/sh", "--markdown", "-", NULL},
        (const char *[]){"predict", "--model", "flux1-dev", "--gpu", "RTX 4090", "--json", "-",
                         NULL},
        (const char *[]){"--quick", NULL},
        (const char *[]){"--quick", "--json", "-", NULL},
        (const char *[]){"--help", NULL},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        const char *argv[16] = {"/bin/sh", "-c", "exec \"$0\" \"$@\" > /dev/full", AITK_EXE};
        size_t n = 4;
        for (const char *const *a = runs[i]; *a && n < 15; a++)
            argv[n++] = *a;
        argv[n] = NULL;
        ran r = run_program(argv, 60000);
        if (r.rc != 3 || !strstr(aitk_str_cstr(&r.err), "standard output: write failed"))
            fail_msg("%s: exit %d, stderr '%s'", runs[i][0], r.rc, aitk_str_cstr(&r.err));
        ran_free(&r);
    }
    aitk_str_free(&rep);
    aitk_str_free(&dir);
}

/* The four report files are replaced together or not at all: with a file
 * size limit too small for report.html (ulimit -f 20: 10 KiB; SIGXFSZ
 * ignored so the write fails with EFBIG), the run is exit 3, names the
 * failure, and every file of the run before is still there, unchanged, with
 * no temporary copy left beside them. */
static void test_output_set_replaced_together(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, f = AITK_STR_INIT;
    aitk_path_join(&dir, tmp, "out");
    assert_int_equal(aitk_dir_create(dir.ptr, NULL), AITK_OK);
    static const char *const names[] = {"report.json", "report.md", "report.html", "junit.xml"};
    for (size_t i = 0; i < 4; i++) {
        aitk_str_clear(&f);
        aitk_path_join(&f, dir.ptr, names[i]);
        assert_int_equal(aitk_file_write_atomic(f.ptr, "OLD", 3, NULL), AITK_OK);
    }
    const char *argv[] = {"/bin/sh", "-c", "trap '' XFSZ; ulimit -f 20; exec \"$0\" \"$@\"",
                          AITK_EXE, "--quick", "-Q", "-o", dir.ptr, NULL};
    ran r = run_program(argv, 60000);
    if (r.rc != 3 || !strstr(aitk_str_cstr(&r.err), "report.html: write failed") ||
        !strstr(aitk_str_cstr(&r.err), "no report file was replaced"))
        fail_msg("exit %d, stderr '%s'", r.rc, aitk_str_cstr(&r.err));
    ran_free(&r);
    for (size_t i = 0; i < 4; i++) {
        aitk_str_clear(&f);
        aitk_path_join(&f, dir.ptr, names[i]);
        char *data = NULL;
        size_t len = 0;
        assert_int_equal(aitk_file_read(f.ptr, 100, &data, &len, NULL), AITK_OK);
        if (strcmp(data, "OLD") != 0)
            fail_msg("%s was replaced: '%.20s'", names[i], data);
        aitk_free(data);
    }
    assert_int_equal(entries(dir.ptr), 4);
    aitk_str_free(&f);
    aitk_str_free(&dir);
}

#endif

/* A report from elsewhere rendered to the terminal cannot send it control
 * sequences (retitle the window, clear the screen): they are shown, escaped. */
static void test_render_to_terminal_is_inert(void **state)
{
    (void)state;
    aitk_str rep = AITK_STR_INIT;
    aitk_path_join(&rep, tmp, "esc.json");
    static const char json[] =
        "{\"schema_version\": \"1.0\", \"summary\": {\"verdict\": \"fail\", \"counts\": "
        "{\"total\": 1, \"fail\": 1, \"warn\": 0, \"pass\": 0, \"skip\": 0}}, \"checks\": [{\"id\": \"x.y\", "
        "\"status\": \"fail\", \"title\": \"t\", \"message\": \"boom\\u001b]0;PWN\\u0007\\u001b[2J\"}]}";
    assert_int_equal(aitk_file_write_atomic(rep.ptr, json, sizeof json - 1, NULL), AITK_OK);
    cli_result r;
    cli_run(&r, (const char *[]){"render", rep.ptr, NULL}, NULL);
    assert_int_equal(r.exit_code, 0);
    const char *out = aitk_str_cstr(&r.out);
    /* Markdown, so the '[' that could open a link is escaped too. */
    if (!strstr(out, "boom\\x1b]0;PWN\\x07\\x1b\\[2J"))
        fail_msg("the message should be shown escaped: %s", out);
    assert_null(strchr(out, 0x1b));
    assert_null(strchr(out, 0x07));
    cli_free(&r);
    aitk_str_free(&rep);
}

/* `--config` and `predict --config` give one verdict on one file: an
 * optimizer the memory model lacks is refused, at its place in the file. */
static void test_config_optimizer_verdict(void **state)
{
    (void)state;
    aitk_str cfg = AITK_STR_INIT, where = AITK_STR_INIT;
    aitk_path_join(&cfg, tmp, "job.yaml");
    static const char yaml[] = "job: extension\nconfig:\n  process:\n    - model: {is_flux: true}\n"
                               "      train: {optimizer: sgd-magic, dtype: bf16}\n";
    assert_int_equal(aitk_file_write_atomic(cfg.ptr, yaml, sizeof yaml - 1, NULL), AITK_OK);
    aitk_str_appendf(&where, "%s:5:26: optimizer 'sgd-magic'", cfg.ptr);
    expect_usage_error((const char *[]){"--quick", "--config", cfg.ptr, NULL}, where.ptr);
    expect_usage_error((const char *[]){"predict", "--config", cfg.ptr, "--gpu", "4090", NULL},
                       where.ptr);
    /* A key neither reads (a typo) is said by both, without -v. */
    static const char typo[] = "job: extension\nconfig:\n  process:\n    - model: {is_flux: true}\n"
                               "      train: {batchsize: 4}\n";
    assert_int_equal(aitk_file_write_atomic(cfg.ptr, typo, sizeof typo - 1, NULL), AITK_OK);
    static const char *const runs[][6] = {{"--quick", "--config", NULL},
                                          {"predict", "--gpu", "4090", "--config", NULL}};
    for (int i = 0; i < 2; i++) {
        const char *args[8] = {0};
        int n = 0;
        for (; runs[i][n]; n++)
            args[n] = runs[i][n];
        args[n] = cfg.ptr;
        cli_result r;
        cli_run(&r, args, NULL);
        if (!strstr(aitk_str_cstr(&r.err), "train.batchsize"))
            fail_msg("%s: the ignored key is not said: %s", runs[i][0], aitk_str_cstr(&r.err));
        cli_free(&r);
    }
    aitk_str_free(&where);
    aitk_str_free(&cfg);
}

/* An output may not replace an input or another output: the user's training
 * config, the report being rendered or compared, or one output by another.
 * Refused before any work, and every file keeps its content. */
static void test_output_clashes_are_refused(void **state)
{
    (void)state;
    aitk_str cfg = AITK_STR_INIT, rep = AITK_STR_INIT, fresh = AITK_STR_INIT,
             via_dot = AITK_STR_INIT;
    aitk_path_join(&cfg, tmp, "job.yaml");
    aitk_path_join(&rep, tmp, "report.json");
    aitk_path_join(&fresh, tmp, "a.json");
    aitk_str_appendf(&via_dot, "%s/./a.json", tmp);
    static const char yaml[] = "job: extension\nconfig:\n  process:\n    - model: {is_flux: true}\n";
    assert_int_equal(aitk_file_write_atomic(cfg.ptr, yaml, sizeof yaml - 1, NULL), AITK_OK);
    /* A valid report, so render, compare and trend would have written over
     * it had the clash not been refused. */
    char *json = NULL;
    assert_int_equal(aitk_file_read(AITK_SOURCE_DIR "/tests/reports/fixtures/synthetic-report.json",
                                    1 << 20, &json, NULL, NULL),
                     AITK_OK);
    assert_int_equal(aitk_file_write_atomic(rep.ptr, json, strlen(json), NULL), AITK_OK);
    expect_usage_error((const char *[]){"--quick", "--config", cfg.ptr, "--json", cfg.ptr, NULL},
                       "--config");
    expect_usage_error(
        (const char *[]){"--quick", "--json", fresh.ptr, "--markdown", via_dot.ptr, NULL},
        "one output would overwrite the other");
    expect_usage_error(
        (const char *[]){"predict", "--config", cfg.ptr, "--gpu", "4090", "--json", cfg.ptr, NULL},
        "--config");
    expect_usage_error((const char *[]){"render", rep.ptr, "--markdown", rep.ptr, NULL},
                       "render");
    expect_usage_error(
        (const char *[]){"compare", rep.ptr, fresh.ptr, "--output", rep.ptr, NULL}, "BASE");
    expect_usage_error((const char *[]){"trend", rep.ptr, "--output", rep.ptr, NULL}, "trend");
    char *data = NULL;
    assert_int_equal(aitk_file_read(cfg.ptr, 4096, &data, NULL, NULL), AITK_OK);
    assert_string_equal(data, yaml);
    aitk_free(data);
    assert_int_equal(aitk_file_read(rep.ptr, 1 << 20, &data, NULL, NULL), AITK_OK);
    assert_string_equal(data, json);
    aitk_free(data);
    aitk_free(json);
    assert_int_equal(entries(tmp), 2); /* a.json never written */
    aitk_str_free(&cfg);
    aitk_str_free(&rep);
    aitk_str_free(&fresh);
    aitk_str_free(&via_dot);
}

/* Runs `args` in folder `dir` (so that a file named "-" would land there)
 * and returns the result; the test's own folder is kept. */
static void cli_run_in(const char *dir, cli_result *r, const char *const *args)
{
    char here[4096];
    assert_non_null(getcwd(here, sizeof here));
    assert_int_equal(chdir(dir), 0);
    cli_run(r, args, NULL);
    assert_int_equal(chdir(here), 0);
}

/* stdout parsed as JSON, failing the test (with what was there) when it
 * is not exactly one JSON document. */
static cJSON *stdout_json(const cli_result *r, const char *what)
{
    cJSON *j = cJSON_ParseWithOpts(aitk_str_cstr(&r->out), NULL, true);
    if (!j)
        fail_msg("%s: standard output is not one JSON document (exit %d): %.300s\nstderr: %s",
                 what, r->exit_code, aitk_str_cstr(&r->out), aitk_str_cstr(&r->err));
    return j;
}

/* "-" as an output file is standard output, as command-line tools read
 * it: `aitk-validate --quick --json - | python3 -m json.tool` gets the
 * report alone, the summary and the report lines going to stderr, and no
 * file named "-" is written. Only one output may take standard output. */
static void test_dash_is_standard_output(void **state)
{
    (void)state;
    cli_result r;
    cli_run_in(tmp, &r, (const char *[]){"--quick", "--json", "-", NULL});
    if (r.exit_code != 0 && r.exit_code != 1)
        fail_msg("exit %d: %s", r.exit_code, aitk_str_cstr(&r.err));
    cJSON *rep = stdout_json(&r, "--quick --json -");
    const cJSON *summary = cJSON_GetObjectItem(rep, "summary");
    assert_int_equal(cJSON_GetObjectItem(summary, "exit_code")->valueint, r.exit_code);
    assert_string_equal(cJSON_GetObjectItem(rep, "level")->valuestring, "quick");
    assert_non_null(strstr(aitk_str_cstr(&r.err), "Verdict: "));
    assert_non_null(strstr(aitk_str_cstr(&r.err), "Report: standard output"));
    cJSON_Delete(rep);
    cli_free(&r);
    assert_int_equal(entries(tmp), 0); /* no file named "-" */

    /* Another output beside it still goes to its file. */
    aitk_str json = AITK_STR_INIT;
    aitk_path_join(&json, tmp, "r.json");
    cli_run_in(tmp, &r, (const char *[]){"--quick", "--markdown", "-", "--json", json.ptr, NULL});
    assert_true(r.exit_code == 0 || r.exit_code == 1);
    if (strncmp(aitk_str_cstr(&r.out), "## aitk-validate: ", 18) != 0)
        fail_msg("--markdown -: stdout is not the Markdown alone: %.300s", aitk_str_cstr(&r.out));
    cJSON_Delete(load_json(json.ptr));
    cli_free(&r);
    assert_int_equal(entries(tmp), 1);

    /* Two on standard output would run together: refused, nothing run. */
    expect_usage_error((const char *[]){"--quick", "--json", "-", "--markdown", "-", NULL},
                       "--json - and --markdown - both ask for standard output");
    expect_usage_error((const char *[]){"render", json.ptr, "--html", "-", "--json", "-", NULL},
                       "both ask for standard output");
    expect_usage_error((const char *[]){"deps", AITK_EXE, "--json", "--markdown", "-", NULL},
                       "both ask for standard output");

    /* The other commands read "-" alike. */
    cli_run_in(tmp, &r, (const char *[]){"render", json.ptr, "--json", "-", NULL});
    assert_int_equal(r.exit_code, 0);
    cJSON_Delete(stdout_json(&r, "render --json -"));
    cli_free(&r);
    cli_run_in(tmp, &r, (const char *[]){"compare", json.ptr, json.ptr, "--output", "-", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(aitk_str_cstr(&r.out), "no regression"));
    cli_free(&r);
    cli_run_in(tmp, &r, (const char *[]){"trend", json.ptr, "--format", "csv", "--output", "-",
                                         NULL});
    assert_int_equal(r.exit_code, 0);
    assert_true(r.out.len > 0);
    cli_free(&r);
    cli_run_in(tmp, &r, (const char *[]){"predict", "--model", "flux1-dev", "--gpu", "RTX 4090",
                                         "--json", "-", NULL});
    assert_int_equal(r.exit_code, 0);
    cJSON_Delete(stdout_json(&r, "predict --json -"));
    assert_non_null(strstr(aitk_str_cstr(&r.err), "flux1-dev")); /* the table, on stderr */
    cli_free(&r);
    cli_run_in(tmp, &r, (const char *[]){"deps", AITK_EXE, "--markdown", "-", NULL});
    if (r.exit_code != 0 && r.exit_code != 1)
        fail_msg("deps --markdown -: exit %d: %s", r.exit_code, aitk_str_cstr(&r.err));
    if (strncmp(aitk_str_cstr(&r.out), "## aitk-validate deps: ", 23) != 0)
        fail_msg("deps --markdown -: stdout is not the Markdown alone: %.300s",
                 aitk_str_cstr(&r.out));
    cli_free(&r);
    assert_int_equal(entries(tmp), 1); /* still only r.json */
    aitk_str_free(&json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test_setup_teardown(test_unwritable_output_dir_writes_nothing, setup, teardown),
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test_setup_teardown(test_quick_writes_reports, setup, teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(test_non_utf8_path_gives_utf8_reports, setup, teardown),
#endif
        cmocka_unit_test(test_standard_level_workload_claims_match_what_ran),
        cmocka_unit_test(test_config_selects_the_workload),
        cmocka_unit_test_setup_teardown(test_broken_data_file_is_positioned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_render_rejects_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_clashes_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dash_is_standard_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_optimizer_verdict, setup, teardown),
#ifndef _WIN32
        /* Linux only: /dev/full, /bin/sh and ulimit -f (SIGXFSZ) make the
         * failed writes; Windows has none of the three. */
        cmocka_unit_test(test_failed_writes_each_named),
        cmocka_unit_test_setup_teardown(test_stdout_write_failure_is_exit_3, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_set_replaced_together, setup, teardown),
#endif
        cmocka_unit_test_setup_teardown(test_render_to_terminal_is_inert, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
