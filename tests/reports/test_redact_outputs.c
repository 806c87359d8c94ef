/* Redaction, whole program: planted private values do not survive in any
 * output file the real binary writes (JSON, Markdown, HTML, JUnit), neither
 * through `render --redact` nor through `--support-bundle DIR`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ctype.h>
#include <sys/utsname.h>

#include "report_test_util.h"

#define HF "hf_QwErTyUiOpAsDfGhJkLzXcVbNm012345"
#define AWS_SECRET "Zq3vR8kLm2Np5Xt9Wb4Yc7Hd1Gf6Js0Ae+Uo/Ki"
#define AWS_EXAMPLE "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define UUID "3f1c2b4a-9d8e-4f7a-b6c5-1a2b3c4d5e6f"
#define SERIAL "1324021045678"
#define HOST "gpu-box-17.corp.example.com"
#define USER "jdoe"

static const char *const planted[] = {HF,   AWS_SECRET, AWS_EXAMPLE, UUID, SERIAL, HOST,
                                      "gpu-box-17", "/home/" USER, "192.168.7.21",
                                      "10.20.30.40", "9.8.7", "2b3c"};

static int is_word(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* `value` in `text`; as a whole word only when `whole` (a short host name
 * such as "vm" is also a piece of "NVML"). */
static const char *find_value(const char *text, const char *value, int whole)
{
    size_t n = strlen(value);
    for (const char *p = strstr(text, value); p; p = strstr(p + 1, value))
        if (!whole || ((p == text || !is_word(p[-1])) && !is_word(p[n])))
            return p;
    return NULL;
}

static void assert_clean(const char *path, const char *const *values, size_t n, int whole)
{
    char *text = rt_read(path);
    if (!text)
        fail_msg("%s was not written", path);
    assert_true(strlen(text) > 100);
    for (size_t i = 0; i < n; i++)
        if (values[i] && strlen(values[i]) >= 2 && find_value(text, values[i], whole))
            fail_msg("'%s' survived redaction in %s", values[i], path);
    aitk_free(text);
}

static void test_render_redact(void **state)
{
    (void)state;
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "host"),
                                           "hostname", cJSON_CreateString(HOST));
    cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
    cJSON_AddStringToObject(env, "HOME", "/home/" USER);
    cJSON_AddStringToObject(env, "HF_TOKEN", HF);
    cJSON_AddStringToObject(env, "AWS_SECRET_ACCESS_KEY", AWS_EXAMPLE);
    cJSON *gpu = cJSON_AddObjectToObject(env, "gpu0");
    cJSON_AddStringToObject(gpu, "uuid", "GPU-" UUID);
    cJSON_AddStringToObject(gpu, "serial", SERIAL);
    /* In the places people read: a failed check's text and a workload message. */
    cJSON *check = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 2);
    cJSON_ReplaceItemInObjectCaseSensitive(
        check, "observed",
        cJSON_CreateString("/home/" USER "/venv on gpu-box-17 (192.168.7.21), GPU-" UUID
                           ", MASTER_ADDR:10.20.30.40 peer ::ffff:10.9.8.7 mac 001a.2b3c.4d5e"));
    cJSON_ReplaceItemInObjectCaseSensitive(
        check, "remedy", cJSON_CreateString("export HF_TOKEN=" HF " AWS key " AWS_SECRET));
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "workloads"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(w, "message",
                                           cJSON_CreateString("board " SERIAL " on " HOST));

    aitk_str dir = AITK_STR_INIT, in = AITK_STR_INIT;
    rt_dir(&dir, "redact");
    aitk_str_appendf(&in, "%s/planted.json", aitk_str_cstr(&dir));
    assert_int_equal(rt_write_json(aitk_str_cstr(&in), r), 0);
    cJSON_Delete(r);

    static const char *const names[] = {"out.json", "out.md", "out.html", "junit.xml"};
    aitk_str paths[4] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    for (int i = 0; i < 4; i++)
        aitk_str_appendf(&paths[i], "%s/%s", aitk_str_cstr(&dir), names[i]);
    const char *argv[] = {AITK_EXE, "render", aitk_str_cstr(&in), "--redact",
                          "--json", paths[0].ptr, "--markdown", paths[1].ptr,
                          "--html", paths[2].ptr, "--junit", paths[3].ptr, NULL};
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(rt_run(argv, NULL, NULL, &err), 0);
    for (int i = 0; i < 4; i++)
        assert_clean(paths[i].ptr, planted, sizeof planted / sizeof *planted, 0);

    /* The placeholders are there, consistent across the files. */
    char *html = rt_read(paths[2].ptr);
    char *junit = rt_read(paths[3].ptr);
    assert_non_null(strstr(html, "GPU-[uuid-1]"));
    assert_non_null(strstr(junit, "GPU-[uuid-1]"));
    assert_non_null(strstr(junit, "hostname=\"[host-1]\""));
    aitk_free(html);
    aitk_free(junit);

    /* Without --redact the same render keeps names and UUIDs (the test can
     * fail), but never a token: that sweep runs on every report. */
    const char *plain[] = {AITK_EXE, "render", aitk_str_cstr(&in), "--html", paths[2].ptr, NULL};
    assert_int_equal(rt_run(plain, NULL, NULL, &err), 0);
    html = rt_read(paths[2].ptr);
    assert_non_null(strstr(html, UUID));
    assert_non_null(strstr(html, "/home/" USER));
    assert_null(strstr(html, HF));
    aitk_free(html);

    for (int i = 0; i < 4; i++)
        aitk_str_free(&paths[i]);
    aitk_str_free(&dir);
    aitk_str_free(&in);
    aitk_str_free(&err);
}

/* Secrets by shape alone, in a check's text: no output keeps them, with
 * --redact or without (the scrub every report gets); the rest of the URL
 * stays readable. */
static void test_render_secret_shapes(void **state)
{
    (void)state;
    static const char *const secrets[] = {"S3cretPassw0rd", "DbPassw0rdXYZ", "hunter2",
                                          "abcdef123456ABCDEF7890xyzXYZqq",
                                          "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
                                          "MIIEowIBAAKCAQEA7bq98", "p4ssw0rdp4ss"};
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    cJSON *check = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 2);
    cJSON_ReplaceItemInObjectCaseSensitive(
        check, "message",
        cJSON_CreateString("loading from https://jdoe:S3cretPassw0rd@pypi.internal.example.com/"
                           "simple; postgres://dbuser:DbPassw0rdXYZ@db.internal:5432/app; "
                           "MY_PASSWORD=hunter2 set; Authorization: Bearer "
                           "abcdef123456ABCDEF7890xyzXYZqq; jwt eyJhbGciOiJIUzI1NiJ9."
                           "eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c;"
                           " -----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCAQEA7bq98 -----END RSA "
                           "PRIVATE KEY-----; {\"password\": \"p4ssw0rdp4ss\"}"));
    aitk_str dir = AITK_STR_INIT, in = AITK_STR_INIT, err = AITK_STR_INIT;
    rt_dir(&dir, "redact-secret-shapes");
    aitk_str_appendf(&in, "%s/planted.json", aitk_str_cstr(&dir));
    assert_int_equal(rt_write_json(aitk_str_cstr(&in), r), 0);
    cJSON_Delete(r);
    static const char *const names[] = {"out.json", "out.md", "out.html", "junit.xml"};
    aitk_str paths[4] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    for (int i = 0; i < 4; i++)
        aitk_str_appendf(&paths[i], "%s/%s", aitk_str_cstr(&dir), names[i]);
    for (int redact = 0; redact < 2; redact++) {
        const char *argv[] = {AITK_EXE, "render", aitk_str_cstr(&in), "--json", paths[0].ptr,
                              "--markdown", paths[1].ptr, "--html", paths[2].ptr,
                              "--junit", paths[3].ptr, redact ? "--redact" : NULL, NULL};
        assert_int_equal(rt_run(argv, NULL, NULL, &err), 0);
        for (int i = 0; i < 4; i++)
            assert_clean(paths[i].ptr, secrets, sizeof secrets / sizeof *secrets, 0);
        char *json = rt_read(paths[0].ptr);
        assert_non_null(strstr(json, "@pypi.internal.example.com/simple"));
        /* The user of the URL is a name: --redact's, not the scrub's. */
        assert_int_equal(strstr(json, "//jdoe:") == NULL, redact);
        /* --redact numbers secrets, seven distinct values here. */
        assert_int_equal(strstr(json, "[secret]") == NULL, redact);
        assert_int_equal(strstr(json, "[secret-7]") != NULL, redact);
        aitk_free(json);
    }
    for (int i = 0; i < 4; i++)
        aitk_str_free(&paths[i]);
    aitk_str_free(&dir);
    aitk_str_free(&in);
    aitk_str_free(&err);
}

/* render --redact learns names from the report alone: profiles with
 * spaces, upper-case C:\USERS, /home2 and /nfs/homes, a host whose short
 * name starts with a digit. None survives in any output, as a word. */
static void test_render_learns_names(void **state)
{
    (void)state;
    static const char *const names[] = {"John", "Smith", "Mary", "Ann", "carol",
                                         "erin", "frank", "7gpu"};
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "host"),
                                           "hostname", cJSON_CreateString("7gpu.lab.example.org"));
    cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
    cJSON_AddStringToObject(env, "HF_HOME", "C:\\Users\\John Smith\\.cache\\huggingface");
    cJSON_AddStringToObject(env, "CONDA_PREFIX", "/Users/Mary Ann/miniconda3");
    cJSON_AddStringToObject(env, "VENV", "C:\\USERS\\carol\\venv");
    cJSON_AddStringToObject(env, "PYTHONPATH", "/nfs/homes/erin/src:/home2/frank/lib");
    cJSON *check = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 2);
    cJSON_ReplaceItemInObjectCaseSensitive(
        check, "message",
        cJSON_CreateString("John Smith, Mary Ann, carol, erin and frank ran on 7gpu"));
    aitk_str dir = AITK_STR_INIT, in = AITK_STR_INIT, err = AITK_STR_INIT;
    rt_dir(&dir, "redact-learn-names");
    aitk_str_appendf(&in, "%s/planted.json", aitk_str_cstr(&dir));
    assert_int_equal(rt_write_json(aitk_str_cstr(&in), r), 0);
    cJSON_Delete(r);
    static const char *const outs[] = {"out.json", "out.md", "out.html", "junit.xml"};
    aitk_str paths[4] = {AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT, AITK_STR_INIT};
    for (int i = 0; i < 4; i++)
        aitk_str_appendf(&paths[i], "%s/%s", aitk_str_cstr(&dir), outs[i]);
    const char *argv[] = {AITK_EXE, "render", aitk_str_cstr(&in), "--redact",
                          "--json", paths[0].ptr, "--markdown", paths[1].ptr,
                          "--html", paths[2].ptr, "--junit", paths[3].ptr, NULL};
    assert_int_equal(rt_run(argv, NULL, NULL, &err), 0);
    for (int i = 0; i < 4; i++) {
        assert_clean(paths[i].ptr, names, sizeof names / sizeof *names, 1);
        aitk_str_free(&paths[i]);
    }
    aitk_str_free(&dir);
    aitk_str_free(&in);
    aitk_str_free(&err);
}

static void test_support_bundle(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, path_env = AITK_STR_INIT, out = AITK_STR_INIT,
             err = AITK_STR_INIT;
    rt_dir(&dir, "support-bundle");
    aitk_str_appendf(&path_env, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    /* A run as user "plantuser" with tokens in its environment. */
    const char *env[] = {path_env.ptr,
                         "HOME=/home/plantuser",
                         "USER=plantuser",
                         "LOGNAME=plantuser",
                         "HF_TOKEN=" HF,
                         "AWS_SECRET_ACCESS_KEY=" AWS_SECRET,
                         "NO_COLOR=1",
                         NULL};
    const char *argv[] = {AITK_EXE, "--quick", "--support-bundle", dir.ptr, NULL};
    int rc = rt_run(argv, env, &out, &err);
    if (rc != 0 && rc != 1)
        fail_msg("exit %d\n%s\n%s", rc, aitk_str_cstr(&out), aitk_str_cstr(&err));
    struct utsname un;
    assert_int_equal(uname(&un), 0);
    /* A generic node name identifies nobody and is kept on purpose. */
    int generic = strcmp(un.nodename, "localhost") == 0 || strlen(un.nodename) < 2;
    const char *values[] = {"plantuser", HF, AWS_SECRET, generic ? NULL : un.nodename};
    static const char *const names[] = {"report.md", "report.html", "report.json"};
    aitk_str p = AITK_STR_INIT;
    for (int i = 0; i < 3; i++) {
        aitk_str_clear(&p);
        aitk_str_appendf(&p, "%s/%s", dir.ptr, names[i]);
        assert_clean(p.ptr, values, sizeof values / sizeof *values, 1);
    }
    /* No JUnit in a bundle: it is for people, not CI. */
    aitk_str_clear(&p);
    aitk_str_appendf(&p, "%s/junit.xml", dir.ptr);
    assert_false(rt_exists(p.ptr));
    aitk_str_clear(&p);
    aitk_str_appendf(&p, "%s/report.json", dir.ptr);
    cJSON *r = rt_load(p.ptr);
    assert_non_null(r);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "redacted")));
    cJSON_Delete(r);
    aitk_str_free(&p);
    aitk_str_free(&dir);
    aitk_str_free(&path_env);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* A redacted run redacts what it prints too: the summary (a bundle is
 * always redacted, so its summary is), the config warning on stderr and the
 * closing "Report (redacted): PATH" lines. The same run without redaction
 * prints the name, so the checks can fail. */
static void test_redacted_run_prints_nothing_private(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, path_env = AITK_STR_INIT, cfg = AITK_STR_INIT,
             bundle = AITK_STR_INIT, json = AITK_STR_INIT;
    rt_dir(&dir, "redact-terminal");
    aitk_str_appendf(&path_env, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    aitk_str_appendf(&cfg, "%s/plantuser-job.yaml", dir.ptr);
    aitk_str_appendf(&bundle, "%s/plantuser-bundle", dir.ptr);
    aitk_str_appendf(&json, "%s/plantuser.json", dir.ptr);
    /* A key nothing reads: the run warns about it, naming the file. */
    static const char yaml[] = "job: extension\nconfig:\n  process:\n    - model: {is_flux: true}\n"
                               "      train: {batchsize: 4}\n";
    assert_int_equal(aitk_file_write_atomic(cfg.ptr, yaml, sizeof yaml - 1, NULL), AITK_OK);
    const char *env[] = {path_env.ptr, "HOME=/home/plantuser", "USER=plantuser",
                         "LOGNAME=plantuser", "NO_COLOR=1", NULL};
    const char *runs[][8] = {
        {AITK_EXE, "--quick", "--config", cfg.ptr, "--support-bundle", bundle.ptr, NULL},
        {AITK_EXE, "--quick", "--config", cfg.ptr, "--redact", "--json", json.ptr, NULL},
        {AITK_EXE, "--quick", "--config", cfg.ptr, "--json", json.ptr, NULL},
    };
    for (int i = 0; i < 3; i++) {
        aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
        int rc = rt_run(runs[i], env, &out, &err);
        if (rc != 0 && rc != 1)
            fail_msg("exit %d\n%s\n%s", rc, aitk_str_cstr(&out), aitk_str_cstr(&err));
        const char *o = aitk_str_cstr(&out), *e = aitk_str_cstr(&err);
        if (!strstr(e, "train.batchsize") || !strstr(o, "Verdict:"))
            fail_msg("run %d: no warning or no summary:\n%s\n%s", i, o, e);
        bool redacted = i < 2;
        if (redacted && (strstr(o, "plantuser") || strstr(e, "plantuser")))
            fail_msg("run %d printed the user name:\n--- stdout\n%s\n--- stderr\n%s", i, o, e);
        if (!redacted && (!strstr(o, "plantuser") || !strstr(e, "plantuser")))
            fail_msg("the plain run should name the user:\n%s\n%s", o, e);
        if (redacted && !strstr(o, "(redacted): "))
            fail_msg("run %d: no closing line:\n%s", i, o);
        aitk_str_free(&out);
        aitk_str_free(&err);
    }
    aitk_str *all[] = {&dir, &path_env, &cfg, &bundle, &json};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        aitk_str_free(all[k]);
}

/* Without --redact, a report still never copies a secret, even one inside a
 * variable it shows (the allocator configuration), nor a token its checks
 * quote from their own text. */
static void test_unredacted_run_keeps_no_secret(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, path_env = AITK_STR_INIT, out = AITK_STR_INIT,
             err = AITK_STR_INIT;
    rt_dir(&dir, "unredacted");
    aitk_str_appendf(&path_env, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    const char *env[] = {path_env.ptr, "HOME=/tmp",
                         "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,token=plantedsecret99",
                         "CUDA_HOME=/opt/" HF, "NO_COLOR=1", NULL};
    const char *argv[] = {AITK_EXE, "--quick", "--output-dir", dir.ptr, NULL};
    int rc = rt_run(argv, env, &out, &err);
    if (rc != 0 && rc != 1)
        fail_msg("exit %d\n%s\n%s", rc, aitk_str_cstr(&out), aitk_str_cstr(&err));
    const char *values[] = {"plantedsecret99", HF};
    static const char *const names[] = {"report.md", "report.html", "report.json", "junit.xml"};
    aitk_str p = AITK_STR_INIT;
    for (int i = 0; i < 4; i++) {
        aitk_str_clear(&p);
        aitk_str_appendf(&p, "%s/%s", dir.ptr, names[i]);
        assert_clean(p.ptr, values, 2, 0);
    }
    /* The variable itself is still shown, with the secret replaced. */
    aitk_str_clear(&p);
    aitk_str_appendf(&p, "%s/report.json", dir.ptr);
    char *text = rt_read(p.ptr);
    assert_non_null(strstr(text, "expandable_segments:True,token=[secret]"));
    aitk_free(text);
    /* --redact numbers the same secret instead. */
    aitk_str_appendf(&p, ".redacted");
    const char *redacted[] = {AITK_EXE, "--quick", "-Q", "--redact", "--json", p.ptr, NULL};
    rc = rt_run(redacted, env, NULL, NULL);
    if (rc != 0 && rc != 1)
        fail_msg("exit %d with --redact", rc);
    text = rt_read(p.ptr);
    assert_non_null(strstr(text, "expandable_segments:True,token=[secret-"));
    assert_null(strstr(text, "[secret]"));
    aitk_free(text);
    aitk_str_free(&p);
    aitk_str_free(&dir);
    aitk_str_free(&path_env);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

/* "id/category/status " of every check, in order. */
static void structure_of(const char *path, aitk_str *out)
{
    cJSON *r = rt_load(path);
    if (!r)
        fail_msg("%s was not written or does not parse", path);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "checks"))
    {
        aitk_str_appendf(out, "%s/%s/%s ", cJSON_GetObjectItemCaseSensitive(c, "id")->valuestring,
                         cJSON_GetObjectItemCaseSensitive(c, "category")->valuestring,
                         cJSON_GetObjectItemCaseSensitive(c, "status")->valuestring);
    }
    cJSON_Delete(r);
}

/* A host called "gpu", "cuda" or "debian" and a user called "python": the
 * rendered report keeps its check ids, categories and OS; the host line and
 * home path still lose the names. out-<host>.json stays in the test reports
 * folder for schema.all_reports. */
static void test_render_common_names(void **state)
{
    (void)state;
    static const char *const hosts[] = {"gpu", "cuda", "debian"};
    aitk_str dir = AITK_STR_INIT, in = AITK_STR_INIT, json = AITK_STR_INIT, md = AITK_STR_INIT,
             err = AITK_STR_INIT, want = AITK_STR_INIT, got = AITK_STR_INIT;
    rt_dir(&dir, "redact-names");
    structure_of(FIXTURE, &want);
    for (size_t h = 0; h < sizeof hosts / sizeof *hosts; h++) {
        cJSON *r = rt_load(FIXTURE);
        assert_non_null(r);
        cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "host"),
                                               "hostname", cJSON_CreateString(hosts[h]));
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(r, "environment"), "HOME",
                                "/home/python");
        aitk_str_clear(&in);
        aitk_str_clear(&json);
        aitk_str_clear(&md);
        aitk_str_appendf(&in, "%s/in-%s.json", dir.ptr, hosts[h]);
        aitk_str_appendf(&json, "%s/out-%s.json", dir.ptr, hosts[h]);
        aitk_str_appendf(&md, "%s/out-%s.md", dir.ptr, hosts[h]);
        assert_int_equal(rt_write_json(in.ptr, r), 0);
        cJSON_Delete(r);
        const char *argv[] = {AITK_EXE, "render", in.ptr,  "--redact", "--json",
                              json.ptr, "--markdown", md.ptr, NULL};
        assert_int_equal(rt_run(argv, NULL, NULL, &err), 0);
        aitk_str_clear(&got);
        structure_of(json.ptr, &got);
        assert_string_equal(aitk_str_cstr(&got), aitk_str_cstr(&want));
        char *text = rt_read(md.ptr);
        assert_non_null(text);
        if (!strstr(text, "Debian GNU/Linux 12") || !strstr(text, "`gpu.driver`") ||
            !strstr(text, "`cuda.cudnn`") || !strstr(text, "`python.torch`"))
            fail_msg("host %s: the Markdown lost its own words:\n%s", hosts[h], text);
        aitk_free(text);
        text = rt_read(json.ptr);
        assert_non_null(text);
        assert_null(strstr(text, "/home/python"));
        assert_non_null(strstr(text, "/home/[user-1]"));
        assert_non_null(strstr(text, "\"hostname\":\t\"[host-1]\""));
        aitk_free(text);
    }
    aitk_str *all[] = {&dir, &in, &json, &md, &err, &want, &got};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        aitk_str_free(all[i]);
}

/* The real binary run by a user called "python": the redacted report has
 * the same checks as the plain one, and the home path loses the name. */
static void test_run_as_common_user(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, path_env = AITK_STR_INIT, plain = AITK_STR_INIT,
             redacted = AITK_STR_INIT, want = AITK_STR_INIT, got = AITK_STR_INIT;
    rt_dir(&dir, "redact-user-python");
    aitk_str_appendf(&path_env, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    aitk_str_appendf(&plain, "%s/plain.json", dir.ptr);
    aitk_str_appendf(&redacted, "%s/redacted.json", dir.ptr);
    const char *env[] = {path_env.ptr, "HOME=/home/python", "USER=python", "LOGNAME=python",
                         "NO_COLOR=1", NULL};
    const char *run_plain[] = {AITK_EXE, "--quick", "-Q", "--json", plain.ptr, NULL};
    const char *run_redacted[] = {AITK_EXE,  "--quick",    "-Q", "--redact",
                                  "--json", redacted.ptr, NULL};
    int rc = rt_run(run_plain, env, NULL, NULL);
    assert_true(rc == 0 || rc == 1);
    rc = rt_run(run_redacted, env, NULL, NULL);
    assert_true(rc == 0 || rc == 1);
    structure_of(plain.ptr, &want);
    structure_of(redacted.ptr, &got);
    assert_non_null(strstr(aitk_str_cstr(&want), "python.env/python/"));
    assert_string_equal(aitk_str_cstr(&got), aitk_str_cstr(&want));
    char *text = rt_read(plain.ptr);
    assert_non_null(text);
    assert_non_null(strstr(text, "/home/python/")); /* the check below can fail */
    aitk_free(text);
    text = rt_read(redacted.ptr);
    assert_non_null(text);
    assert_null(strstr(text, "/home/python"));
    assert_non_null(strstr(text, "/home/[user-1]/"));
    aitk_free(text);
    aitk_str *all[] = {&dir, &path_env, &plain, &redacted, &want, &got};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        aitk_str_free(all[i]);
}

/* Runs --quick as `user` (HOME=/home/<user>, plus `extra` variables),
 * writing `path`; --redact when `redact`. */
static void run_as(const char *user, const char *const *extra, int redact, const char *path)
{
    aitk_str path_env = AITK_STR_INIT, home = AITK_STR_INIT, u = AITK_STR_INIT;
    aitk_str_appendf(&path_env, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    aitk_str_appendf(&home, "HOME=/home/%s", user);
    aitk_str_appendf(&u, "USER=%s", user);
    const char *env[16] = {path_env.ptr, home.ptr, u.ptr, "NO_COLOR=1"};
    size_t n = 4;
    for (size_t i = 0; extra && extra[i] && n < 15; i++)
        env[n++] = extra[i];
    env[n] = NULL;
    const char *argv[] = {AITK_EXE, "--quick", "-Q", "--json", path, redact ? "--redact" : NULL,
                          NULL};
    int rc = rt_run(argv, env, NULL, NULL);
    if (rc != 0 && rc != 1)
        fail_msg("exit %d as %s", rc, user);
    aitk_str_free(&path_env);
    aitk_str_free(&home);
    aitk_str_free(&u);
}

/* The words people read in every check, one string, with `from` replaced by
 * `to` and each run of digits by '#' (free disk space moves between two runs). */
static void prose_of(const char *path, const char *from, const char *to, aitk_str *out)
{
    static const char *const fields[] = {"title", "observed", "expected", "message", "remedy"};
    cJSON *r = rt_load(path);
    if (!r)
        fail_msg("%s was not written or does not parse", path);
    aitk_str_appendf(out, "profile %s\n",
                     cJSON_GetObjectItemCaseSensitive(r, "profile")->valuestring);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "checks"))
    for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, fields[f]);
        const char *t = cJSON_IsString(v) ? v->valuestring : "";
        size_t n = from ? strlen(from) : 0;
        for (const char *hit; from && (hit = strstr(t, from)); t = hit + n) {
            aitk_str_appendn(out, t, (size_t)(hit - t));
            aitk_str_append(out, to);
        }
        aitk_str_appendf(out, "%s\n", t);
    }
    cJSON_Delete(r);
    size_t w = 0;
    for (size_t i = 0; i < out->len; i++)
        if (!isdigit((unsigned char)out->ptr[i]))
            out->ptr[w++] = out->ptr[i];
        else if (w == 0 || out->ptr[w - 1] != '#')
            out->ptr[w++] = '#';
    out->ptr[w] = '\0';
    out->len = w;
}

/* Users named like the tool's vocabulary (the Jetson's "nvidia", "cuda",
 * "python", "ai", "lib", ...): the redacted report's titles, remedies and
 * messages read as the plain run's, except that the home folder lost the
 * name. */
static void test_run_as_technical_users(void **state)
{
    (void)state;
    static const char *const users[] = {"nvidia", "cuda", "python", "ai",
                                        "lib",    "local", "bin",   "torch"};
    aitk_str dir = AITK_STR_INIT, plain = AITK_STR_INIT, redacted = AITK_STR_INIT,
             home = AITK_STR_INIT, want = AITK_STR_INIT, got = AITK_STR_INIT;
    rt_dir(&dir, "redact-technical-users");
    for (size_t i = 0; i < sizeof users / sizeof *users; i++) {
        aitk_str *all[] = {&plain, &redacted, &home, &want, &got};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++)
            aitk_str_clear(all[k]);
        aitk_str_appendf(&plain, "%s/%s-plain.json", dir.ptr, users[i]);
        aitk_str_appendf(&redacted, "%s/%s-redacted.json", dir.ptr, users[i]);
        aitk_str_appendf(&home, "/home/%s", users[i]);
        run_as(users[i], NULL, 0, plain.ptr);
        run_as(users[i], NULL, 1, redacted.ptr);
        prose_of(plain.ptr, home.ptr, "/home/[user-1]", &want);
        prose_of(redacted.ptr, NULL, NULL, &got);
        if (strcmp(got.ptr, want.ptr) != 0)
            fail_msg("user %s: the redacted prose differs:\n--- plain\n%s\n--- redacted\n%s",
                     users[i], want.ptr, got.ptr);
        char *text = rt_read(redacted.ptr);
        assert_null(strstr(text, home.ptr));
        aitk_free(text);
    }
    aitk_str *all[] = {&dir, &plain, &redacted, &home, &want, &got};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        aitk_str_free(all[k]);
}

/* A user's folders outside /home (a shared conda's envs/<user>, /opt/<user>,
 * /usr/local/<user>-tools), names that '_' or a digit touch, and the local
 * part of an SSSD login: the plain run shows them all, the redacted one
 * none. */
static void test_run_private_places(void **state)
{
    (void)state;
    static const struct {
        const char *user, *name;
        const char *env[8];
    } runs[] = {
        {"jdoe", "jdoe", {"CONDA_PREFIX=/opt/conda/envs/jdoe", "HF_HUB_CACHE=/opt/jdoe/hf-cache",
                          "CUDA_HOME=/opt/jdoe/cuda-12.6",
                          "LD_LIBRARY_PATH=/opt/jdoe/cuda-12.6/lib64",
                          "CUDA_INJECTION64_PATH=/usr/local/jdoe-tools/inject.so",
                          "HF_HOME=/home/jdoe/hf_jdoe", NULL}},
        {"jdoe", "jdoe", {"CONDA_PREFIX=/data/jdoe_envs/jdoe2_py311", NULL}},
        {"mroe@corp.example.com", "mroe", {"CONDA_PREFIX=/data/mroe_envs/x", NULL}},
    };
    aitk_str dir = AITK_STR_INIT, plain = AITK_STR_INIT, redacted = AITK_STR_INIT;
    rt_dir(&dir, "redact-private-places");
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        aitk_str_clear(&plain);
        aitk_str_clear(&redacted);
        aitk_str_appendf(&plain, "%s/plain-%zu.json", dir.ptr, i);
        aitk_str_appendf(&redacted, "%s/redacted-%zu.json", dir.ptr, i);
        run_as(runs[i].user, runs[i].env, 0, plain.ptr);
        run_as(runs[i].user, runs[i].env, 1, redacted.ptr);
        char *text = rt_read(plain.ptr);
        /* Each planted place is in the plain report: the check below can fail. */
        for (size_t k = 0; runs[i].env[k]; k++)
            if (!strstr(text, strchr(runs[i].env[k], '=') + 1))
                fail_msg("%s is not in the plain report", runs[i].env[k]);
        aitk_free(text);
        const char *values[] = {runs[i].name};
        assert_clean(redacted.ptr, values, 1, 0);
    }
    aitk_str_free(&dir);
    aitk_str_free(&plain);
    aitk_str_free(&redacted);
}

/* HOME with a trailing '/' and no USER or LOGNAME (env -i, containers):
 * the account name is still learnt from the home folder. The plain run
 * shows it, so the check can fail. */
static void test_run_home_with_trailing_slash(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, path_env = AITK_STR_INIT, plain = AITK_STR_INIT,
             redacted = AITK_STR_INIT;
    rt_dir(&dir, "redact-home-slash");
    aitk_str_appendf(&path_env, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    aitk_str_appendf(&plain, "%s/plain.json", dir.ptr);
    aitk_str_appendf(&redacted, "%s/redacted.json", dir.ptr);
    const char *env[] = {path_env.ptr, "HOME=/data/jdoe7/", "NO_COLOR=1", NULL};
    const char *runs[][7] = {
        {AITK_EXE, "--quick", "-Q", "--json", plain.ptr, NULL},
        {AITK_EXE, "--quick", "-Q", "--json", redacted.ptr, "--redact", NULL},
    };
    for (int i = 0; i < 2; i++) {
        int rc = rt_run(runs[i], env, NULL, NULL);
        if (rc != 0 && rc != 1)
            fail_msg("exit %d", rc);
    }
    char *text = rt_read(plain.ptr);
    if (!text || !strstr(text, "/data/jdoe7/"))
        fail_msg("the plain report does not show the home folder");
    aitk_free(text);
    const char *values[] = {"jdoe7"};
    assert_clean(redacted.ptr, values, 1, 0);
    aitk_str *all[] = {&dir, &path_env, &plain, &redacted};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        aitk_str_free(all[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_redact),
        cmocka_unit_test(test_render_secret_shapes),
        cmocka_unit_test(test_render_learns_names),
        cmocka_unit_test(test_support_bundle),
        cmocka_unit_test(test_redacted_run_prints_nothing_private),
        cmocka_unit_test(test_unredacted_run_keeps_no_secret),
        cmocka_unit_test(test_render_common_names),
        cmocka_unit_test(test_run_as_common_user),
        cmocka_unit_test(test_run_as_technical_users),
        cmocka_unit_test(test_run_private_places),
        cmocka_unit_test(test_run_home_with_trailing_slash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
