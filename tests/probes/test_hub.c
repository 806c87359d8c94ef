/* hub.access (validate/probes/hub_access.c): whether the job can download
 * the gated FLUX.1-dev. The expected answers are written by hand from
 * huggingface_hub's and python-dotenv's documented rules (hub_token.h);
 * realworld.linux.hub-access sets the tool beside those libraries
 * themselves. Run through the real binary, so the token's value can be
 * looked for in the report it writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_test.h"
#include "validate/probes/dotenv.h"
#include "validate/probes/hub_access.h"
#include "validate/probes/hub_token.h"

#define SECRET "hf_aitkTestSecret0123456789abcdefghij"
/* What the tool puts after HF_HOME, as huggingface_hub's os.path.join
 * does (validate/probes/host.c, aitk_host_hf_home's callers); the cache's
 * own folders below it are joined with '/'. */
#ifdef _WIN32
#define HF_SEP "\\"
#else
#define HF_SEP "/"
#endif

/* .env lines as python-dotenv reads them (its README, "File format"). */
static void test_dotenv(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool sets;
    } cases[] = {
        {"HF_TOKEN=" SECRET "\n", true},
        {"export HF_TOKEN=" SECRET "\n", true},
        {"  HF_TOKEN = '" SECRET "'\r\n", true},
        {"HF_TOKEN=\"" SECRET "\" # mine\n", true},
        {"HF_TOKEN=abc#def\n", true},
        {"HF_TOKEN=\n", false},
        {"HF_TOKEN=\"\"\n", false},
        {"HF_TOKEN= # set me\n", false},
        {"# HF_TOKEN=" SECRET "\n", false},
        {"HF_TOKENS=" SECRET "\n", false},
        {"OTHER=1\nHF_TOKEN=" SECRET "\nHF_TOKEN=\n", false},
        {"HF_TOKEN=\nHF_TOKEN=" SECRET, true},
        /* a byte-order mark, which python-dotenv takes off */
        {"\xEF\xBB\xBFHF_TOKEN=" SECRET "\n", true},
        /* spaces alone, quoted: huggingface_hub strips them */
        {"HF_TOKEN='   '\n", false},
        {"HF_TOKEN='" SECRET "\n", false},
        /* ${...} expanded from the environment, in any quotes (python-dotenv
         * 1.2.4, as realworld.linux.hub-access saw) */
        {"HF_TOKEN=${AITK_TEST_NEVER_SET}\n", false},
        {"HF_TOKEN=\"${AITK_TEST_NEVER_SET}\"\n", false},
        {"HF_TOKEN=${AITK_TEST_NEVER_SET:-" SECRET "}\n", true},
        {"HF_TOKEN='${AITK_TEST_NEVER_SET}'\n", false},
        {"HF_TOKEN=${AITK_TEST_HUB_TOKEN}\n", true},
        /* else from the lines above, the latest value of each name; a name
         * set blank (or with no '=') keeps the default out */
        {"MY_KEY=" SECRET "\nHF_TOKEN=${MY_KEY}\n", true},
        {"HF_TOKEN=${MY_KEY}\nMY_KEY=" SECRET "\n", false},
        {"A_KEY=" SECRET "\nB_KEY=\"${A_KEY}\"\nHF_TOKEN=${B_KEY}\n", true},
        {"MY_KEY=" SECRET "\nMY_KEY=\nHF_TOKEN=${MY_KEY}\n", false},
        {"MY_KEY=\nHF_TOKEN=${MY_KEY:-" SECRET "}\n", false},
        {"MY_KEY\nHF_TOKEN=${MY_KEY:-" SECRET "}\n", false},
        /* the environment before the file */
        {"AITK_TEST_HUB_TOKEN=\nHF_TOKEN=${AITK_TEST_HUB_TOKEN}\n", true},
    };
#ifdef _WIN32
    _putenv_s("AITK_TEST_HUB_TOKEN", SECRET);
#else
    setenv("AITK_TEST_HUB_TOKEN", SECRET, 1);
#endif
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (aitk_dotenv_sets(cases[i].text, "HF_TOKEN") != cases[i].sets)
            fail_msg("%s: want %s", cases[i].text, cases[i].sets ? "set" : "not set");
}

/* The run's environment with no token anywhere but where a case puts
 * one: HF_HOME in the scratch folder, the other names empty unless
 * `extra` or `extra2` ("NAME=value") sets them. */
static void env_for(const char *hf_home, const char *extra, const char *extra2,
                    const char *env[9])
{
    static char home[1200];
    static const char *const cleared[] = {"HF_HUB_CACHE=", "HF_TOKEN_PATH=", "HF_TOKEN=",
                                          "HUGGING_FACE_HUB_TOKEN="};
    snprintf(home, sizeof home, "HF_HOME=%s", hf_home);
    size_t k = 0;
    env[k++] = home;
    for (size_t i = 0; i < sizeof cleared / sizeof *cleared; i++) {
        const size_t n = strlen(cleared[i]);
        if (!(extra && strncmp(extra, cleared[i], n) == 0) &&
            !(extra2 && strncmp(extra2, cleared[i], n) == 0))
            env[k++] = cleared[i];
    }
    if (extra)
        env[k++] = extra;
    if (extra2)
        env[k++] = extra2;
    env[k] = NULL;
}

/* hub.access of a --quick run for FLUX.1-dev; `extra` one more "NAME=value". */
static cJSON *run_hub(const char *checkout, const char *hf_home, const char *extra,
                      const char *extra2)
{
    const char *env[9];
    env_for(hf_home, extra, extra2, env);
    const char *args[] = {"--quick", "--model", "flux1-dev", "--aitk-dir", checkout, NULL};
    int rc = 0;
    return pt_run(NULL, NULL, args, env, &rc);
}

static void test_token_places(void **state)
{
    (void)state;
    char *d = pt_tempdir("hub-token");
    char checkout[1100], hf_home[1100], text[1300];
    snprintf(checkout, sizeof checkout, "%s/work/ai-toolkit", d);
    snprintf(hf_home, sizeof hf_home, "%s/hf", d);
    pt_write(checkout, "run.py", "");
    pt_write(hf_home, "hub/README", "an empty cache\n");
    /* None anywhere: a warning with the fix. */
    cJSON *r = run_hub(checkout, hf_home, NULL, NULL);
    const cJSON *c = pt_check(r, "hub.access");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "observed"), "no token (looked in: HF_TOKEN; "
                                               "HUGGING_FACE_HUB_TOKEN; ");
    pt_assert_contains(pt_text(c, "observed"), "black-forest-labs/FLUX.1-dev not in the model "
                                               "cache");
    pt_assert_contains(pt_text(c, "message"), "Cannot access gated repo");
    pt_assert_contains(pt_text(c, "remedy"), "https://huggingface.co/black-forest-labs/FLUX.1-dev");
    cJSON_Delete(r);
    /* In the environment: a pass that names the place, never the token. */
    r = run_hub(checkout, hf_home, "HF_TOKEN=" SECRET, NULL);
    c = pt_check(r, "hub.access");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "token: HF_TOKEN in the environment");
    char *all = cJSON_PrintUnformatted(r);
    if (strstr(all, SECRET) || strstr(all, "aitkTestSecret"))
        fail_msg("the report holds the token");
    free(all);
    cJSON_Delete(r);
    /* HF_TOKEN set to spaces hides the older name (huggingface_hub's `or`). */
    r = run_hub(checkout, hf_home, "HF_TOKEN=   ", "HUGGING_FACE_HUB_TOKEN=" SECRET);
    pt_assert_status(pt_check(r, "hub.access"), "warn");
    cJSON_Delete(r);
    r = run_hub(checkout, hf_home, "HUGGING_FACE_HUB_TOKEN=" SECRET, NULL);
    pt_assert_contains(pt_text(pt_check(r, "hub.access"), "observed"),
                       "token: HUGGING_FACE_HUB_TOKEN in the environment");
    cJSON_Delete(r);
    /* The token file `hf auth login` writes, and HF_TOKEN_PATH's. */
    pt_write(hf_home, "token", SECRET "\n");
    r = run_hub(checkout, hf_home, NULL, NULL);
    snprintf(text, sizeof text, "token: the token file %s" HF_SEP "token", hf_home);
    pt_assert_contains(pt_text(pt_check(r, "hub.access"), "observed"), text);
    cJSON_Delete(r);
    pt_write(hf_home, "token", "  \n");
    pt_write(d, "elsewhere/tok", SECRET);
    snprintf(text, sizeof text, "HF_TOKEN_PATH=%s/elsewhere/tok", d);
    r = run_hub(checkout, hf_home, text, NULL);
    pt_assert_status(pt_check(r, "hub.access"), "pass");
    cJSON_Delete(r);
    /* A .env in a folder above the checkout: find_dotenv walks up. */
    pt_write(d, "work/.env", "HF_TOKEN=" SECRET "\n");
    r = run_hub(checkout, hf_home, NULL, NULL);
    /* The folder as the system resolves it: its own separators. */
#ifdef _WIN32
    pt_assert_contains(pt_text(pt_check(r, "hub.access"), "observed"), "\\work\\.env");
#else
    snprintf(text, sizeof text, "token: HF_TOKEN in %s/work/.env", d);
    pt_assert_contains(pt_text(pt_check(r, "hub.access"), "observed"), text);
#endif
    pt_assert_contains(pt_text(pt_check(r, "hub.access"), "observed"), "token: HF_TOKEN in ");
    cJSON_Delete(r);
    /* The checkout's own, first found, sets none: no token. */
    pt_write(checkout, ".env", "HF_TOKEN=\n");
    r = run_hub(checkout, hf_home, NULL, NULL);
    pt_assert_status(pt_check(r, "hub.access"), "warn");
    cJSON_Delete(r);
    free(d);
}

#ifndef _WIN32
/* The UI's settings, in a SQLite file made by Python's sqlite3 with the
 * table ui/prisma/schema.prisma describes. */
static void ui_db(const char *checkout, const char *value)
{
    char cmd[2400];
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
             "c.execute('CREATE TABLE IF NOT EXISTS Settings (id INTEGER PRIMARY KEY "
             "AUTOINCREMENT, key TEXT NOT NULL UNIQUE, value TEXT NOT NULL)'); "
             "c.execute('INSERT OR REPLACE INTO Settings (key, value) VALUES (?, ?)', "
             "('HF_TOKEN', sys.argv[2])); c.commit()\" '%s/aitk_db.db' '%s'",
             checkout, value);
    if (system(cmd) != 0)
        skip();
}

static void test_ui_settings(void **state)
{
    (void)state;
    char *d = pt_tempdir("hub-ui");
    char hf_home[1100];
    snprintf(hf_home, sizeof hf_home, "%s/hf", d);
    pt_write(d, "run.py", "");
    ui_db(d, SECRET);
    cJSON *r = run_hub(d, hf_home, NULL, NULL);
    const cJSON *c = pt_check(r, "hub.access");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "token: the UI's settings (");
    char *all = cJSON_PrintUnformatted(r);
    if (strstr(all, "aitkTestSecret"))
        fail_msg("the report holds the token");
    free(all);
    cJSON_Delete(r);
    ui_db(d, " ");
    r = run_hub(d, hf_home, NULL, NULL);
    pt_assert_status(pt_check(r, "hub.access"), "warn");
    cJSON_Delete(r);
    /* A file that is not a database: said, not taken for a token. */
    pt_write(d, "aitk_db.db", "not a database, but long enough to be read as one's header\n");
    r = run_hub(d, hf_home, NULL, NULL);
    c = pt_check(r, "hub.access");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "observed"), "not read: the UI's settings (");
    pt_assert_contains(pt_text(c, "observed"), "DatabaseError");
    cJSON_Delete(r);
    free(d);
}
#endif

/* The model in huggingface_hub's cache: the job loads without the Hub. */
static void test_cached_model(void **state)
{
    (void)state;
    char *d = pt_tempdir("hub-cache");
    char hf_home[1100], snap[1300];
    snprintf(hf_home, sizeof hf_home, "%s/hf", d);
    const char *repo = "hub/models--black-forest-labs--FLUX.1-dev";
    char rel[400];
    snprintf(rel, sizeof rel, "%s/refs/main", repo);
    pt_write(hf_home, rel, "0ef5fff789c832c5c7f4e127f94c8b54bbcced44");
    snprintf(snap, sizeof snap, "%s/%s/snapshots/0ef5fff789c832c5c7f4e127f94c8b54bbcced44",
             hf_home, repo);
    static const char *const files[] = {
        "transformer/diffusion_pytorch_model-00001-of-00002.safetensors",
        "transformer/diffusion_pytorch_model-00002-of-00002.safetensors",
        "text_encoder/model.safetensors", "text_encoder_2/model-00001-of-00001.safetensors",
        "vae/diffusion_pytorch_model.safetensors"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        pt_write(snap, files[i], "weights");
    pt_write(snap, "transformer/diffusion_pytorch_model.safetensors.index.json",
             "{\"metadata\": {}, \"weight_map\": {\"a\": "
             "\"diffusion_pytorch_model-00001-of-00002.safetensors\", \"b\": "
             "\"diffusion_pytorch_model-00002-of-00002.safetensors\"}}");
    pt_write(snap, "text_encoder_2/model.safetensors.index.json",
             "{\"weight_map\": {\"a\": \"model-00001-of-00001.safetensors\"}}");
    pt_write(d, "run.py", "");
    cJSON *r = run_hub(d, hf_home, NULL, NULL);
    const cJSON *c = pt_check(r, "hub.access");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"),
                       "black-forest-labs/FLUX.1-dev in the model cache (");
    pt_assert_contains(pt_text(c, "message"),
                       "no token is set, but the job's files are in the cache");
    cJSON_Delete(r);
    /* A shard the index names, gone (an interrupted download): not cached. */
    char shard[1500];
    snprintf(shard, sizeof shard,
             "%s/transformer/diffusion_pytorch_model-00002-of-00002.safetensors", snap);
    assert_int_equal(unlink(shard), 0);
    r = run_hub(d, hf_home, NULL, NULL);
    c = pt_check(r, "hub.access");
    pt_assert_status(c, "warn");
    char named[1600];
    snprintf(named, sizeof named,
             "%s" HF_SEP "%s/snapshots/0ef5fff789c832c5c7f4e127f94c8b54bbcced44/transformer/"
             "diffusion_pytorch_model-00002-of-00002.safetensors", hf_home, repo);
    pt_assert_contains(pt_text(c, "observed"), named);
    cJSON_Delete(r);
#ifndef _WIN32
    /* A link into blobs/ whose blob never finished: not there either. */
    assert_int_equal(symlink("../../../blobs/0123abcd", shard), 0);
    r = run_hub(d, hf_home, NULL, NULL);
    pt_assert_status(pt_check(r, "hub.access"), "warn");
    cJSON_Delete(r);
#endif
    free(d);
}

/* Only FLUX.1-dev is gated among the reference models; a config that loads
 * the model from a local file downloads nothing. */
static void test_not_gated(void **state)
{
    (void)state;
    char *d = pt_tempdir("hub-skip");
    const char *env[] = {"HF_TOKEN=", "HUGGING_FACE_HUB_TOKEN=", NULL};
    const char *args[] = {"--quick", "--model", "chroma,omnigen2", NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "hub.access");
    pt_assert_status(c, "skip");
    pt_assert_contains(pt_text(c, "message"), "no workload run here downloads a gated");
    cJSON_Delete(r);
    pt_write(d, "local.yaml",
             "job: extension\nconfig:\n  name: t\n  process:\n    - type: sd_trainer\n"
             "      network: {type: lora, linear: 16, linear_alpha: 16}\n"
             "      train: {batch_size: 1, steps: 10}\n"
             "      model: {name_or_path: /models/flux1-dev, is_flux: true, quantize: true}\n");
    char cfg[1200];
    snprintf(cfg, sizeof cfg, "%s/local.yaml", d);
    const char *cargs[] = {"--quick", "--config", cfg, NULL};
    r = pt_run(NULL, NULL, cargs, env, &rc);
    c = pt_check(r, "hub.access");
    pt_assert_status(c, "skip");
    pt_assert_contains(pt_text(c, "message"),
                       "model.name_or_path (/models/flux1-dev) is not one of the gated");
    cJSON_Delete(r);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dotenv),
        cmocka_unit_test(test_token_places),
#ifndef _WIN32
        cmocka_unit_test(test_ui_settings),
#endif
        cmocka_unit_test(test_cached_model),
        cmocka_unit_test(test_not_gated),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
