/* Redaction, unit level: each kind of private value is replaced, the same
 * value always by the same placeholder, and ordinary report text (versions,
 * paths, GPU names, timestamps) is left alone. Expected outputs are written
 * out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "reports/redact.h"
#include "report_test_util.h"

/* Planted values, shared with the tree test. */
#define HF "hf_QwErTyUiOpAsDfGhJkLzXcVbNm012345"
#define AWS_SECRET "Zq3vR8kLm2Np5Xt9Wb4Yc7Hd1Gf6Js0Ae+Uo/Ki"
#define AWS_EXAMPLE "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define UUID "3f1c2b4a-9d8e-4f7a-b6c5-1a2b3c4d5e6f"
#define SERIAL "1324021045678"
#define HOST "gpu-box-17.corp.example.com"
#define USER "jdoe"

static void expect(aitk_redactor *r, const char *in, const char *want)
{
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_redactor_text(r, in, &out), AITK_OK);
    if (strcmp(aitk_str_cstr(&out), want) != 0)
        fail_msg("redact(\"%s\")\n  got  \"%s\"\n  want \"%s\"", in, aitk_str_cstr(&out), want);
    aitk_str_free(&out);
}

/* Texts the redactor must leave as they are. */
static void expect_keeps(aitk_redactor *r, const char *const *texts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect(r, texts[i], texts[i]);
}

static void test_patterns(void **state)
{
    (void)state;
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    expect(r, "GPU-" UUID " ready", "GPU-[uuid-1] ready");
    expect(r, "mac 00:1A:2b:3C:4d:5E up", "mac [mac-1] up");
    expect(r, "from 10.1.2.33 and fe80::1ff:fe23:4567:890a", "from [ip-1] and [ip-2]");
    /* Four-part versions after the software they are of stay: the CUDA
     * stack's findings need them. */
    expect(r, "found cuDNN 9.1.0.70 (needs >= 9.0)", "found cuDNN 9.1.0.70 (needs >= 9.0)");
    expect(r, "/usr/lib/libcudnn.so.9 9.1.0.70, TensorRT 10.0.1.6",
           "/usr/lib/libcudnn.so.9 9.1.0.70, TensorRT 10.0.1.6");
    expect(r, "HF_TOKEN=" HF, "HF_TOKEN=[secret-1]");
    expect(r, "token " HF " again", "token [secret-1] again");
    expect(r, "key AKIAIOSFODNN7EXAMPLE", "key [secret-2]");
    expect(r, "secret " AWS_SECRET ".", "secret [secret-3].");
    expect(r, "AWS_SECRET_ACCESS_KEY=" AWS_EXAMPLE, "AWS_SECRET_ACCESS_KEY=[secret-4]");
    expect(r, "gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh [secret-5]");
    expect(r, "api_key: \"s3cr3t-value-42\"", "api_key: \"[secret-6]\"");
    expect(r, "hex deadbeefdeadbeefdeadbeefdeadbeef00112233", "hex [secret-7]");
    assert_int_equal(aitk_redactor_count(r, AITK_REDACT_SECRET), 7);
    assert_int_equal(aitk_redactor_count(r, AITK_REDACT_IP), 2);
    aitk_redactor_free(r);
}

/* Addresses after ':' and in IPv6's mapped form, Cisco MACs; and the other
 * side: versions after ':' (fewer than four parts, or single digits), a
 * longer dotted run. */
static void test_addresses_after_colons(void **state)
{
    (void)state;
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    expect(r, "MASTER_ADDR:10.20.30.40 inet addr:192.168.7.9 eth0:10.0.0.5<0>",
           "MASTER_ADDR:[ip-1] inet addr:[ip-2] eth0:[ip-3]<0>");
    expect(r, "peer ::ffff:10.9.8.7 and [::ffff:192.168.7.9]:29500",
           "peer [ip-4] and [[ip-5]]:29500");
    expect(r, "mac 001a.2b3c.4d5e up", "mac [mac-1] up");
    static const char *const keep[] = {
        "cuda:12.4 torch:2.4.1 pkg:1.2.0.1 time 12:30:45.5",
        "build 1.2024.0101.1234 and 1234.5678.9abc.0",
        "peer ::ffff:10.9.8.1.6",
    };
    expect_keeps(r, keep, sizeof keep / sizeof *keep);
    aitk_redactor_free(r);
}

static void test_leaves_ordinary_text(void **state)
{
    (void)state;
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    static const char *const keep[] = {
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.9",
        "NVIDIA_GeForce_RTX_4090_Laptop_GPU",
        "created 2026-12-01T05:00:00Z, step 12:30:45",
        "cuDNN 9.1.0.70.1 and CUDA 12.4.1",
        "pip install nvidia-cudnn-cu12==9.1.0.70",
        "torch 2.5.1+cu124 on glibc 2.36",
        "/root/.cache/huggingface",
        "FluxTransformer2DModel.from_pretrained",
        "",
    };
    expect_keeps(r, keep, sizeof keep / sizeof *keep);
    for (int k = 0; k < AITK_REDACT_KIND_COUNT; k++)
        assert_int_equal(aitk_redactor_count(r, (aitk_redact_kind)k), 0);
    aitk_redactor_free(r);
}

static void test_known_values_consistent(void **state)
{
    (void)state;
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_USER, USER), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_HOST, HOST), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_USER, "root"), AITK_OK); /* ignored */
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_USER, "alice"), AITK_OK);
    expect(r, "/home/jdoe/ai-toolkit on " HOST, "/home/[user-1]/ai-toolkit on [host-1]");
    /* The short host name is learnt from the full one; case does not matter. */
    expect(r, "ssh JDOE@GPU-BOX-17", "ssh [user-1]@[host-2]");
    /* A digit or '_' does not continue a name that ends in a letter; a
     * letter does. */
    expect(r, "alice and jdoe; jdoe2, hf_jdoe, jdoe_envs; xjdoe, jdoes stay",
           "[user-2] and [user-1]; [user-1]2, hf_[user-1], [user-1]_envs; xjdoe, jdoes stay");
    expect(r, "/root/x", "/root/x");
    assert_int_equal(aitk_redactor_add(r, 99, "x"), AITK_E_INVAL);
    aitk_redactor_free(r);
}

/* Host and user names that are technical words ("cuda", "python") are
 * replaced only as a home folder or a whole field: system paths, package
 * names and prose keep them. */
static void test_technical_names(void **state)
{
    (void)state;
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_HOST, "cuda"), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_USER, "python"), AITK_OK);
    static const char *const keep[] = {
        "/usr/local/cuda/lib64/libcudart.so",
        "CUDA_HOME=/usr/local/cuda",
        "/opt/python/bin/python3.11",
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin",
        "libcudart, python3, cudart64_12.dll, pythonic",
        "nvidia-cuda-toolkit, torch.cuda, cuda_12 and the CUDA 13.0 runtime",
        "/data/python-project/x and /data/cuda/ckpt",
        "ssh python@cuda. logs in cuda.log",
        "/home/pythonista/x and /home/python3/x",
        "Python environment (--python)",
    };
    expect_keeps(r, keep, sizeof keep / sizeof *keep);
    expect(r, "/home/python/cuda/x", "/home/[user-1]/cuda/x");
    expect(r, "PATH=/usr/local/cuda/bin:/home/python/bin",
           "PATH=/usr/local/cuda/bin:/home/[user-1]/bin");
    expect(r, "C:\\Users\\Python\\cuda and /nfs/homes/python", 
           "C:\\Users\\[user-1]\\cuda and /nfs/homes/[user-1]");
    expect(r, "cuda", "cuda"); /* a check's title could be just that */
    /* A field that holds a name loses it whole; other fields keep the word. */
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "hostname", "cuda");
    cJSON_AddStringToObject(t, "USER", "Python");
    cJSON_AddStringToObject(t, "title", "cuda");
    assert_int_equal(aitk_redactor_apply(r, t), AITK_OK);
    assert_string_equal(cJSON_GetObjectItem(t, "hostname")->valuestring, "[host-1]");
    assert_string_equal(cJSON_GetObjectItem(t, "USER")->valuestring, "[user-1]");
    assert_string_equal(cJSON_GetObjectItem(t, "title")->valuestring, "cuda");
    cJSON_Delete(t);
    aitk_redactor_free(r);
}

/* Any other name goes wherever it stands, system paths included, and
 * whatever digit or '_' touches it; a letter still continues it. */
static void test_other_names_everywhere(void **state)
{
    (void)state;
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_USER, "jdoe"), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_HOST, "gpu7.cluster.example.org"), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_USER, "ann"), AITK_OK);
    expect(r, "/opt/conda/envs/jdoe, /opt/jdoe/hf-cache, /usr/local/jdoe-tools/inject.so",
           "/opt/conda/envs/[user-1], /opt/[user-1]/hf-cache, /usr/local/[user-1]-tools/inject.so");
    expect(r, "/data/jdoe_envs/jdoe_py311 /home/jdoe/hf_jdoe jdoe2",
           "/data/[user-1]_envs/[user-1]_py311 /home/[user-1]/hf_[user-1] [user-1]2");
    expect(r, "C:\\Program Files\\jdoe\\x", "C:\\Program Files\\[user-1]\\x");
    expect(r, "gpu7_scratch on gpu7.cluster.example.org, not gpu70",
           "[host-2]_scratch on [host-1], not gpu70");
    /* Under 4 characters a name stands alone or not at all (see
     * test_short_names). */
    expect(r, "ann: annotation, Ann2, joann", "[user-2]: annotation, Ann2, joann");
    /* SSSD: jdoe@corp.example.com is learnt with its local part. */
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_USER, "mroe@corp.example.com"), AITK_OK);
    expect(r, "/home/mroe@corp.example.com/x prompt mroe-lora",
           "/home/[user-3]/x prompt [user-4]-lora");
    aitk_redactor_free(r);
}

/* render --redact knows no $USER: the home folders a saved report's paths
 * give away are learnt, under a home parent (/home1/<group>/...) and by
 * the dot folders a home holds (.cache, .local, ...) wherever homes live. */
static void test_homes_learnt_from_paths(void **state)
{
    (void)state;
    cJSON *t = cJSON_Parse("{\"a\": \"free in /home1/grp/maxime/.cache (from (~/.cache/x))\","
                           " \"b\": \"/scratch/u/quentin/.local/lib/python3.11\","
                           " \"c\": \"maxime and quentin ran x/.config and ./.conda/envs\","
                           " \"d\": \"/work/proj/.venv/lib and /srv/app/.git\", \"e\": \"\"}");
    assert_non_null(t);
    assert_int_equal(aitk_redact_report(t, NULL, NULL), AITK_OK);
    char *out = cJSON_PrintUnformatted(t);
    if (strstr(out, "maxime") || strstr(out, "quentin") || strstr(out, "grp/") ||
        !strstr(out, "(~/.cache/x)") || !strstr(out, " x/.config and ./.conda/envs") ||
        !strstr(out, "/work/proj/.venv/lib and /srv/app/.git"))
        fail_msg("%s", out);
    cJSON_free(out);
    cJSON_Delete(t);
}

/* Names under 4 characters: the identifiers they hide in stay (the NVML
 * library's name, an allocator setting), and so do words of the report's
 * text that are names here; the places where they are the name do not. */
static void test_short_names(void **state)
{
    (void)state;
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    /* In this order: user-1 max, host-1 ml, user-2 so, user-3 amd, ... */
    static const struct {
        aitk_redact_kind kind;
        const char *name;
    } names[] = {{AITK_REDACT_USER, "max"},  {AITK_REDACT_HOST, "ml"},
                 {AITK_REDACT_USER, "so"},   {AITK_REDACT_USER, "amd"},
                 {AITK_REDACT_HOST, "main"}, {AITK_REDACT_HOST, "node"},
                 {AITK_REDACT_USER, "free"}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        assert_int_equal(aitk_redactor_add(r, names[i].kind, names[i].name), AITK_OK);
    static const char *const keep[] = {
        "libnvidia-ml.so.1: cannot open shared object file",
        "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,expandable_segments:True",
        "libcudart.so.13, so every GPU check fails",
        "AMD EPYC 7763, 47.9 GB free on device node 0",
        "git+https://github.com/huggingface/diffusers.git@main (refs/main)",
        "ml2, ml-tools, maxima, x.max, max.y and ml.so.1",
    };
    expect_keeps(r, keep, sizeof keep / sizeof *keep);
    expect(r, "/home/max/ai-toolkit on max@ml:~$ (ml.example.org), /opt/max, by max",
           "/home/[user-1]/ai-toolkit on [user-1]@[host-1]:~$ ([host-1].example.org), "
           "/opt/[user-1], by [user-1]");
    expect(r, "/home/so/x /home/free/y", "/home/[user-2]/x /home/[user-4]/y");
    aitk_redactor_free(r);
}

/* A learnt name never cuts a pattern's match in two (user "ace" in a UUID). */
static void test_names_after_patterns(void **state)
{
    (void)state;
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_USER, "ace"), AITK_OK);
    expect(r, "GPU-3ace1f2b-9d8e-4f7a-b6c5-1a2b3c4d5e6f and ace",
           "GPU-[uuid-1] and [user-1]");
    aitk_redactor_free(r);
}

/* The always-on sweep takes secrets by their shape and nothing else. */
static void test_scrub_secrets(void **state)
{
    (void)state;
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "a", "expandable_segments:True,token=abcdefgh123");
    cJSON_AddStringToObject(t, "b", "export HF_TOKEN=hf_QwErTyUiOpAsDfGhJkLzXcVbNm012345 now");
    static const char *const kept[] = {"max_split_size_mb:512,expandable_segments:True",
                                       "/home/jdoe/cuda on gpu7 at 10.1.2.3",
                                       "GPU-8f1c2d3e-1111-2222-3333-444455556666",
                                       "token count 12345678"};
    cJSON *arr = cJSON_AddArrayToObject(t, "kept");
    for (size_t i = 0; i < 4; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(kept[i]));
    assert_int_equal(aitk_scrub_secrets(t), AITK_OK);
    assert_string_equal(cJSON_GetObjectItem(t, "a")->valuestring,
                        "expandable_segments:True,token=[secret]");
    assert_string_equal(cJSON_GetObjectItem(t, "b")->valuestring, "export HF_TOKEN=[secret] now");
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(cJSON_GetArrayItem(arr, (int)i)->valuestring, kept[i]);
    cJSON_Delete(t);
}

/* The scrub every report gets, on one text. */
static void expect_scrub(const char *in, const char *want)
{
    cJSON *t = cJSON_CreateString(in);
    assert_int_equal(aitk_scrub_secrets(t), AITK_OK);
    if (strcmp(t->valuestring, want) != 0)
        fail_msg("scrub(\"%s\")\n  got  \"%s\"\n  want \"%s\"", in, t->valuestring, want);
    cJSON_Delete(t);
}

/* Texts the scrub must leave as they are. */
static void expect_scrub_keeps(const char *const *texts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_scrub(texts[i], texts[i]);
}

/* One text through a fresh redactor, so that placeholders count from 1. */
static void expect_fresh(const char *in, const char *want)
{
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    expect(r, in, want);
    aitk_redactor_free(r);
}

#define JWT "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

/* Shapes that are secrets whatever their length or alphabet: the scrub
 * (no --redact) takes them, and so does --redact, with placeholders. */
static void test_secret_shapes(void **state)
{
    (void)state;
    expect_scrub("from https://jdoe:S3cretPassw0rd@pypi.internal.example.com/simple on x",
                 "from https://jdoe:[secret]@pypi.internal.example.com/simple on x");
    expect_scrub("postgres://dbuser:p@ss@db.internal:5432/app",
                 "postgres://dbuser:[secret]@db.internal:5432/app");
    expect_scrub("MY_PASSWORD=hunter2, set", "MY_PASSWORD=[secret], set");
    /* A passphrase is words: a .env line's value runs to its end
     * (python-dotenv), and so does the secret. */
    expect_scrub("PASSWORD=correct horse battery staple \nnext line",
                 "PASSWORD=[secret] \nnext line");
    /* Ordinary text after names that contain KEY or TOKEN, or after
     * "Bearer", is kept: the missing state-dict key is the clue of a
     * loading failure, and throughput figures are the report. */
    static const char *const ordinary[] = {
        "KeyError: 'model.diffusion_model.input_blocks'",
        "missing_key: transformer.blocks.0.attn",
        "tokens_per_second: 12345.678",
        "max_tokens: 100000000",
        "secret_name=my-secret-name",
        "Bearer authentication required for downloads",
    };
    for (size_t i = 0; i < sizeof ordinary / sizeof *ordinary; i++)
        expect_scrub(ordinary[i], ordinary[i]);
    expect_scrub("DB_PASS=Sup3r MYSQL_PWD=x9", "DB_PASS=[secret] MYSQL_PWD=[secret]");
    expect_scrub("{\"password\": \"p4ss w0rd\", \"user\": \"x\"}",
                 "{\"password\": \"[secret]\", \"user\": \"x\"}");
    expect_scrub("dbPassword: abc", "dbPassword: [secret]");
    expect_scrub("Authorization: Bearer abcdef123456ABCDEF7890xyzXYZqq",
                 "Authorization: Bearer [secret]");
    expect_scrub("curl -H 'bearer 9f8e7d6c5b4a39281726'", "curl -H 'bearer [secret]'");
    expect_scrub("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [secret]");
    expect_scrub("jwt " JWT " end", "jwt [secret] end");
    expect_scrub("key: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98\n"
                 "-----END RSA PRIVATE KEY----- after",
                 "key: -----BEGIN RSA PRIVATE KEY-----[secret] after");
    expect_scrub("-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA (cut",
                 "-----BEGIN OPENSSH PRIVATE KEY-----[secret]");
    expect_scrub("SSH_KEY=AAAAB3NzaC1yc2E", "SSH_KEY=[secret]");
    /* The other side: ordinary words of reports and code stay. */
    static const char *const kept[] = {
        "https://pypi.org/simple and ssh://git@github.com/x/y.git",
        "http://[::1]:8080/path?a=b@c",
        "forward pass: 12 ms, bytes_per_pass: 4096, PASS: 3",
        "elementwise_per_token: 2, max_tokens=77, tokenizer: t5",
        "PWD=/tmp/work OLDPWD=/tmp",
        "missing key: lr; sort_key=name",
        "the bearer of bad news",
        "-----BEGIN CERTIFICATE----- MIIB",
        "HF_TOKEN: (set; value not shown)",
        "eyJhbGciOiJIUzI1NiJ9 alone",
        "--python /etc/passwd: not an executable program",
    };
    expect_scrub_keeps(kept, sizeof kept / sizeof *kept);

    /* --redact: the URL's user goes too, and each secret has its placeholder. */
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    expect(r, "pip error: https://bob:Tr0ub4dor3x@pypi.corp.example.net/simple",
           "pip error: https://[user-1]:[secret-1]@pypi.corp.example.net/simple");
    expect(r, "again bob and Tr0ub4dor3x", "again [user-1] and [secret-1]");
    expect(r, "MY_PASSWORD=hunter2; and " JWT, "MY_PASSWORD=[secret-2]; and [secret-3]");
    aitk_redactor_free(r);
}

#define SAS_SIG "Xy%2BAzSasSIGabc123DEF456ghi789JKL%2Fmno%3D"
#define HEX64 "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

/* A signed URL (pip's direct_url.json keeps the one an archive came from)
 * loses the values of its credential parameters without --redact, escapes
 * and all; the rest of the query stays, and so do ordinary queries. */
static void test_query_credentials(void **state)
{
    (void)state;
    expect_scrub("diffusers from https://acct.blob.core.windows.net/w/d.whl?sv=2022-11-02&sr=b&sp=r"
                 "&sig=" SAS_SIG " ok",
                 "diffusers from https://acct.blob.core.windows.net/w/d.whl?sv=2022-11-02&sr=b&sp=r"
                 "&sig=[secret] ok");
    expect_scrub("https://b.s3.amazonaws.com/d.whl?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                 "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20240101%2Fus-east-1%2Fs3%2Faws4_request"
                 "&X-Amz-Expires=3600&X-Amz-Signature=" HEX64,
                 "https://b.s3.amazonaws.com/d.whl?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                 "&X-Amz-Credential=[secret]&X-Amz-Expires=3600&X-Amz-Signature=[secret]");
    expect_scrub("\"https://storage.googleapis.com/b/d.whl?X-Goog-Signature=" HEX64 "\"",
                 "\"https://storage.googleapis.com/b/d.whl?X-Goog-Signature=[secret]\"");
    expect_scrub("https://h.example/x?access_token=abc&token=t0k&api-key=k1&key=k2#top",
                 "https://h.example/x?access_token=[secret]&token=[secret]&api-key=[secret]"
                 "&key=[secret]#top");
    static const char *const kept[] = {
        "https://pypi.org/simple/?page=2&sort=name&keyword=lora&tokens=77&monkey=1",
        "sig=abc and token=t0k outside a query",
        "https://h.example/x?token=[secret]&sig=",
    };
    expect_scrub_keeps(kept, sizeof kept / sizeof *kept);
    expect_fresh("https://a.example/d.whl?se=2030-01-01&sig=" SAS_SIG,
                 "https://a.example/d.whl?se=2030-01-01&sig=[secret-1]");
}

static const char *string_at(const cJSON *t, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, key);
    if (!cJSON_IsString(v))
        fail_msg("\"%s\" is not a string", key);
    return v->valuestring;
}

/* A field named like a secret loses its whole value, whatever its shape
 * (a short password, words); the tool's own marker and fields that only
 * mention a secret (a path, a name, a count) stay. Keys are scrubbed like
 * values. */
static cJSON *secret_fields(void)
{
    cJSON *t = cJSON_Parse(
        "{\"DB_PASSWORD\": \"hunter2\", \"password\": \"shortpw\","
        " \"MY_SECRET\": \"two words secret\", \"Api_Key\": \"k1\", \"auth\": \"x\","
        " \"HF_TOKEN\": \"(set; value not shown)\", \"HF_TOKEN_PATH\": \"/srv/hf/token\","
        " \"secret_name\": \"my-secret\", \"text_tokens\": \"77\", \"key\": \"train.lr\","
        " \"https://keyuser:KeyPassword123@proxy.example:3128\": \"proxy\","
        " \"hf_KeyTokenAAAAbbbbCCCCdddd4444\": \"owner\","
        " \"pair\": {\"name\": \"DB_PASSWORD\", \"value\": \"hunter3\"}}");
    assert_non_null(t);
    return t;
}

static void test_secret_fields(void **state)
{
    (void)state;
    cJSON *t = secret_fields();
    assert_int_equal(aitk_scrub_secrets(t), AITK_OK);
    static const char *const gone[] = {"DB_PASSWORD", "password", "MY_SECRET", "Api_Key", "auth"};
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
        assert_string_equal(string_at(t, gone[i]), "[secret]");
    static const char *const kept[][2] = {
        {"HF_TOKEN", "(set; value not shown)"}, {"HF_TOKEN_PATH", "/srv/hf/token"},
        {"secret_name", "my-secret"}, {"text_tokens", "77"}, {"key", "train.lr"},
        {"https://keyuser:[secret]@proxy.example:3128", "proxy"}, {"[secret]", "owner"},
    };
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        assert_string_equal(string_at(t, kept[i][0]), kept[i][1]);
    assert_string_equal(string_at(cJSON_GetObjectItem(t, "pair"), "value"), "[secret]");
    cJSON_Delete(t);

    t = secret_fields();
    assert_int_equal(aitk_redact_report(t, NULL, NULL), AITK_OK);
    char *text = cJSON_PrintUnformatted(t);
    static const char *const planted_values[] = {"hunter2", "shortpw", "two words", "hunter3",
                                                 "KeyPassword123", "KeyTokenAAAA"};
    for (size_t i = 0; i < sizeof planted_values / sizeof *planted_values; i++)
        if (strstr(text, planted_values[i]))
            fail_msg("'%s' survived --redact: %s", planted_values[i], text);
    /* Numbered like any secret: two values, two numbers. */
    assert_memory_equal(string_at(t, "auth"), "[secret-", 8);
    assert_memory_equal(string_at(t, "password"), "[secret-", 8);
    assert_string_not_equal(string_at(t, "auth"), string_at(t, "password"));
    cJSON_free(text);
    cJSON_Delete(t);
}

/* A secret written as a JSON number: a PIN under a password's name, a long
 * integer under a token's; counts under names that end in a secret word
 * stay numbers. */
static void test_secret_numbers(void **state)
{
    (void)state;
    cJSON *t = cJSON_Parse("{\"password\": 4711, \"DB_PASS\": 123456789,"
                           " \"hf_token\": 8675309123, \"api_key\": 12345678,"
                           " \"per_token\": 2, \"HF_TOKEN\": 1234567, \"ratio\": 98765432,"
                           " \"env\": [{\"name\": \"MY_PASSWORD\", \"value\": 12}]}");
    assert_non_null(t);
    assert_int_equal(aitk_scrub_secrets(t), AITK_OK);
    static const char *const gone[] = {"password", "DB_PASS", "hf_token", "api_key"};
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
        assert_string_equal(string_at(t, gone[i]), "[secret]");
    static const char *const kept[][2] = {{"per_token", "2"}, {"HF_TOKEN", "1234567"},
                                          {"ratio", "98765432"}};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, kept[i][0]);
        assert_true(cJSON_IsNumber(v));
        assert_int_equal(v->valueint, atoi(kept[i][1]));
    }
    const cJSON *pair = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "env"), 0);
    assert_string_equal(string_at(pair, "value"), "[secret]");
    cJSON_Delete(t);

    /* --redact: the same secret in text and as a number has one placeholder. */
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    t = cJSON_Parse("{\"hf_token\": 8675309123, \"message\": \"HF_TOKEN=8675309123 refused\"}");
    assert_non_null(t);
    assert_int_equal(aitk_redactor_apply(r, t), AITK_OK);
    assert_string_equal(string_at(t, "hf_token"), "[secret-1]");
    assert_string_equal(string_at(t, "message"), "HF_TOKEN=[secret-1] refused");
    cJSON_Delete(t);
    aitk_redactor_free(r);
}

/* A token used as a URL's user name, alone or with an empty password, and
 * a proxy's password written without a scheme; logins and look-alikes
 * (git@, an image digest, mailto:) stay. */
static void test_userinfo(void **state)
{
    (void)state;
    expect_scrub("pip https://TokOnlyUser0123abcdXYZ@pypi.fury.io/acct/ done",
                 "pip https://[secret]@pypi.fury.io/acct/ done");
    expect_scrub("https://FuryTok3nABCdef123xyz:@pypi.fury.io/acct/",
                 "https://[secret]:@pypi.fury.io/acct/");
    expect_scrub("http_proxy=pxuserB:ProxyPassB456@proxy.corp.example:8080",
                 "http_proxy=pxuserB:[secret]@proxy.corp.example:8080");
    expect_scrub("{\"https_proxy\": \"u_1:pw@squid:3128\"}", "{\"https_proxy\": \"u_1:[secret]@squid:3128\"}");
    /* A password with '#', '/' or '?' left unencoded: the '@' further on,
     * before a host, still ends it. */
    expect_scrub("index-url = https://alice:pa#ss9@pypi.corp.example/simple x",
                 "index-url = https://alice:[secret]@pypi.corp.example/simple x");
    expect_scrub("https://alice:pa/ss9@pypi.corp.example/ https://bob:q?w@h.example:8443/",
                 "https://alice:[secret]@pypi.corp.example/ https://bob:[secret]@h.example:8443/");
    static const char *const kept[] = {
        "https://host.example:8080/path/user@example.com",
        "https://h.example/a:b/c@d.example and https://x.example/y#z then bob@corp.example",
        "ssh://git@github.com/x/y.git and https://jdoe@host.example/x",
        "git@github.com:org/repo.git, mailto:alice@example.org",
        "nvcr.io/nvidia/pytorch:24.01-py3@sha256:0123abcdef",
        "time 12:30, see note:x@y",
    };
    expect_scrub_keeps(kept, sizeof kept / sizeof *kept);
    expect_fresh("https://TokOnlyUser0123abcdXYZ@h.example/ and proxy u:pw@p.example",
                 "https://[secret-1]@h.example/ and proxy [user-1]:[secret-2]@p.example");
}

/* Credentials in the plain-text forms commands, headers and .netrc use,
 * and tokens by their published prefixes; the words around them, and
 * ordinary text that looks alike, stay. */
static void test_plain_text_forms(void **state)
{
    (void)state;
    expect_scrub("huggingface-cli login --token CliTokH4x0r0123456789 --api-key=ApiKeyFlag0123 "
                 "--api_key 'two words'",
                 "huggingface-cli login --token [secret] --api-key=[secret] --api_key '[secret]'");
    expect_scrub("Authorization: token 0123456789abcdef0123456789abcdef01234567",
                 "Authorization: token [secret]");
    expect_scrub("Authorization: onlyonecredential9", "Authorization: [secret]");
    expect_scrub("Authorization: Bearer abc123def; jwt eyJ", "Authorization: Bearer [secret]; jwt eyJ");
    expect_scrub("curl -H 'x-api-key: XApiKey0123' -H 'Cookie: session=Sess01; csrf=abc' x",
                 "curl -H 'x-api-key: [secret]' -H 'Cookie: [secret]' x");
    expect_scrub("{\"Authorization\": \"Bearer abc\"}", "{\"Authorization\": \"Bearer [secret]\"}");
    expect_scrub("machine api.example.com login jdoe password NetrcPassG123 # netrc",
                 "machine api.example.com login jdoe password [secret] # netrc");
    expect_scrub("machine h.example\n  login jdoe\n  password pw1\n",
                 "machine h.example\n  login jdoe\n  password [secret]\n");
    expect_scrub("keys sk_live_4eC39HqLyjWDarjtT1zdp7dc rk_test_4eC39HqLyjWDarjtT1zdp7dc",
                 "keys [secret] [secret]");
    expect_scrub("npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 r8_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789a",
                 "[secret] [secret]");
    expect_scrub("api_org_aBcDeFgHiJkLmNoPqRsTuVwXyZabcdefgh AIzaSyA1b2C3d4E5f6G7h8I9j0K-lMnOpQrStU",
                 "[secret] [secret]");
    expect_scrub("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 ACCESS_TOKEN=ya29.a0AfH6SMBx1y2z3-abcdefghij",
                 "[secret] ACCESS_TOKEN=[secret]");
    expect_scrub("twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmcCJGE3ZmQ5NmRhLTk4ZjQtNDg4Ni1hN2E1LWU1Zjg3ZTM4MmZhYQ",
                 "twine upload -u __token__ -p [secret]");
    expect_scrub("-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0abc\n-----END PGP PRIVATE KEY BLOCK-----",
                 "-----BEGIN PGP PRIVATE KEY BLOCK-----[secret]");
    /* Digits alone after a name whose last word is a secret's; a count
     * after other names stays. */
    expect_scrub("HF_TOKEN=8675309123456789 {\"api_key\": 12345678901234}",
                 "HF_TOKEN=[secret] {\"api_key\": [secret]}");
    static const char *const kept[] = {
        "max_tokens=12345678 text_tokens: 512 HF_TOKEN=1234 hub_token_count: 123456789012",
        "--tokenizer t5 --max-tokens 77 --token <your token> --token $HF_TOKEN --key name",
        "the machine learns; by default login is slow",
        "Authorization failed; x-request-id: abc123; set-cookie-policy: strict",
        "sk_live_ keys are refused; npm_config_cache=/tmp/npm; AIzaSy; pypi-simple-index",
        "huggingface-cli login --token [secret]",
    };
    expect_scrub_keeps(kept, sizeof kept / sizeof *kept);
}

/* A header or a password's name with nothing after it hides nothing: the
 * scrub puts no placeholder there, and --redact, which learnt the empty
 * "secret" and matched it everywhere without moving on, finishes. */
static void test_empty_values(void **state)
{
    (void)state;
    static const char *const texts[] = {"X-Auth-Token:\n(x) y", "x-api-key: \nfoo bar",
                                        "DB-PASSWORD:\n- a"};
    const size_t n = sizeof texts / sizeof *texts;
    expect_scrub_keeps(texts, n);
    for (size_t i = 0; i < n; i++)
        expect_fresh(texts[i], texts[i]);
}

/* A report with every planted kind, in the places probes put them. */
static cJSON *planted_report(void)
{
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    cJSON *host = cJSON_GetObjectItemCaseSensitive(r, "host");
    cJSON_ReplaceItemInObjectCaseSensitive(host, "hostname", cJSON_CreateString(HOST));
    cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
    cJSON_AddStringToObject(env, "HOME", "/home/" USER);
    cJSON_AddStringToObject(env, "HF_TOKEN", HF);
    cJSON_AddStringToObject(env, "AWS_SECRET_ACCESS_KEY", AWS_EXAMPLE);
    cJSON *vars = cJSON_AddArrayToObject(env, "variables");
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "name", "WANDB_API_KEY");
    cJSON_AddStringToObject(v, "value", "0a1b2c3d4e5f60718293");
    cJSON_AddItemToArray(vars, v);
    cJSON *gpu = cJSON_AddObjectToObject(env, "gpu0");
    cJSON_AddStringToObject(gpu, "uuid", "GPU-" UUID);
    cJSON_AddStringToObject(gpu, "serial", SERIAL);
    cJSON_AddStringToObject(gpu, "mac", "00:1a:2b:3c:4d:5e");
    cJSON *check = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(
        check, "message",
        cJSON_CreateString("cache at /home/" USER "/.cache on gpu-box-17 from 192.168.7.21, "
                           "board " SERIAL ", key " AWS_SECRET));
    return r;
}

static const char *const planted[] = {HF, AWS_SECRET, AWS_EXAMPLE, UUID, SERIAL, HOST,
                                      "gpu-box-17", USER, "192.168.7.21", "00:1a:2b:3c:4d:5e",
                                      "0a1b2c3d4e5f60718293"};

static void test_tree(void **state)
{
    (void)state;
    cJSON *r = planted_report();
    assert_int_equal(aitk_redact_report(r, NULL, NULL), AITK_OK);
    char *text = cJSON_Print(r);
    for (size_t i = 0; i < sizeof planted / sizeof *planted; i++)
        if (strstr(text, planted[i]))
            fail_msg("'%s' survived redaction:\n%s", planted[i], text);
    /* Same value, same placeholder: the serial in its field and in the message. */
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(env, "gpu0");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(gpu, "serial")->valuestring, "[serial-1]");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(gpu, "uuid")->valuestring,
                        "GPU-[uuid-1]");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(env, "HF_TOKEN")->valuestring,
                        "[secret-1]");
    assert_non_null(strstr(text, "board [serial-1]"));
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(r, "host");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(host, "hostname")->valuestring,
                        "[host-1]");
    assert_non_null(strstr(text, "/home/[user-1]/.cache"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "redacted")));
    /* The tool's own commit is long hex, and public. */
    assert_non_null(strstr(text, "0123456789abcdef0123456789abcdef01234567"));
    /* Ordinary fields are untouched. */
    assert_non_null(strstr(text, "pip install nvidia-cudnn-cu12==9.1.0.70"));
    cJSON_free(text);
    cJSON_Delete(r);
}

/* The fixture's check ids and categories, in order, one string. */
static void structure_of(const cJSON *report, aitk_str *out)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "checks"))
    {
        aitk_str_appendf(out, "%s/%s/%s ", cJSON_GetObjectItemCaseSensitive(c, "id")->valuestring,
                         cJSON_GetObjectItemCaseSensitive(c, "category")->valuestring,
                         cJSON_GetObjectItemCaseSensitive(c, "status")->valuestring);
    }
}

/* Common cloud host and user names are ordinary words of the report too:
 * check ids (gpu.driver, cuda.cudnn, python.torch), categories, the OS
 * (Debian GNU/Linux), keys (environment.python) and system paths keep them,
 * while the host's own field and the home path lose them (free text keeps
 * them: see test_technical_names). The
 * redacted reports go to the test reports folder, where schema.all_reports
 * holds them to the schema (check ids must stay ^[a-z0-9_]+(\.[a-z0-9_-]+)+$). */
static void test_common_names_keep_structure(void **state)
{
    (void)state;
    static const char *const hosts[] = {"gpu", "cuda", "debian"};
    aitk_str dir = AITK_STR_INIT, path = AITK_STR_INIT;
    rt_dir(&dir, "redact-common-names");
    for (size_t h = 0; h < sizeof hosts / sizeof *hosts; h++) {
        cJSON *r = rt_load(FIXTURE);
        assert_non_null(r);
        cJSON *host = cJSON_GetObjectItemCaseSensitive(r, "host");
        cJSON_ReplaceItemInObjectCaseSensitive(host, "hostname", cJSON_CreateString(hosts[h]));
        cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
        cJSON_AddStringToObject(env, "HOME", "/home/python");
        cJSON_AddStringToObject(env, "CUDA_HOME", "/usr/local/cuda");
        cJSON_AddStringToObject(env, "cudart", "/usr/local/cuda/lib64/libcudart.so.12");
        aitk_str msg = AITK_STR_INIT;
        aitk_str_appendf(&msg, "ssh python@%s; cache at /home/python/.cache", hosts[h]);
        cJSON *check = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 0);
        cJSON_ReplaceItemInObjectCaseSensitive(check, "message",
                                               cJSON_CreateString(aitk_str_cstr(&msg)));
        aitk_str_free(&msg);
        /* Only the report's host.os is the OS's own words: an "os" object
         * anywhere else is redacted like any other text. */
        cJSON *elsewhere = cJSON_AddObjectToObject(env, "os");
        cJSON_AddStringToObject(elsewhere, "cwd", "/home/python/work");
        aitk_str_appendf(&msg, "built on %s", hosts[h]);
        cJSON_AddStringToObject(elsewhere, "note", aitk_str_cstr(&msg));
        aitk_str_free(&msg);
        aitk_str before = AITK_STR_INIT, after = AITK_STR_INIT;
        structure_of(r, &before);
        char *os_before = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(host, "os"));

        assert_int_equal(aitk_redact_report(r, "python", hosts[h]), AITK_OK);

        structure_of(r, &after);
        assert_string_equal(aitk_str_cstr(&after), aitk_str_cstr(&before));
        char *os_after = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(host, "os"));
        assert_string_equal(os_after, os_before);
        assert_non_null(cJSON_GetObjectItemCaseSensitive(env, "python"));
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(env, "CUDA_HOME")->valuestring,
                            "/usr/local/cuda");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(env, "cudart")->valuestring,
                            "/usr/local/cuda/lib64/libcudart.so.12");
        /* The private values are still gone. */
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(host, "hostname")->valuestring,
                            "[host-1]");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(env, "HOME")->valuestring,
                            "/home/[user-1]");
        /* Technical words as names: only the home folder and the host's
         * own field lose them (see test_technical_names). */
        aitk_str_clear(&msg);
        aitk_str_appendf(&msg, "ssh python@%s; cache at /home/[user-1]/.cache", hosts[h]);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(check, "message")->valuestring,
                            aitk_str_cstr(&msg));
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(elsewhere, "cwd")->valuestring,
                            "/home/[user-1]/work");
        aitk_str_clear(&msg);
        aitk_str_appendf(&msg, "built on %s", hosts[h]);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(elsewhere, "note")->valuestring,
                            aitk_str_cstr(&msg));
        aitk_str_free(&msg);

        aitk_str_clear(&path);
        aitk_str_appendf(&path, "%s/%s.json", aitk_str_cstr(&dir), hosts[h]);
        assert_int_equal(rt_write_json(aitk_str_cstr(&path), r), 0);
        cJSON_free(os_before);
        cJSON_free(os_after);
        aitk_str_free(&before);
        aitk_str_free(&after);
        cJSON_Delete(r);
    }
    aitk_str_free(&dir);
    aitk_str_free(&path);
}

/* Each allocation fails in turn: NOMEM, or the same redacted tree as without
 * failures; never a crash or a half-redacted report claiming success. */
static void test_allocation_failures(void **state)
{
    (void)state;
    cJSON *ref = planted_report();
    assert_int_equal(aitk_redact_report(ref, USER, HOST), AITK_OK);
    char *want = cJSON_Print(ref);
    cJSON_Delete(ref);
    int failures = 0, ok_in_a_row = 0;
    for (long n = 0; n < 20000 && ok_in_a_row < 20; n++) {
        cJSON *r = planted_report();
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_redact_report(r, USER, HOST);
        aitk_alloc_fail_after(-1);
        assert_true(st == AITK_OK || st == AITK_E_NOMEM);
        if (st == AITK_OK) {
            ok_in_a_row++;
            char *got = cJSON_Print(r);
            assert_string_equal(got, want);
            cJSON_free(got);
        } else {
            ok_in_a_row = 0;
            failures++;
        }
        cJSON_Delete(r);
    }
    assert_true(failures > 0);
    assert_int_equal(ok_in_a_row, 20);
    cJSON_free(want);
}

/* Random text built from the characters the patterns care about: never a
 * crash or an overread (ASan), and a learnt value never survives. */
static void test_random_text(void **state)
{
    (void)state;
    static const char alphabet[] = "0123456789abcdefABCDEF:.-=_/+hf_GPU xyz\"'\xc3\xa9\xff";
    unsigned long long seed = 12345; /* 64 bits on Windows too (LLP64) */
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    assert_int_equal(aitk_redactor_add(r, AITK_REDACT_HOST, "node7"), AITK_OK);
    aitk_str in = AITK_STR_INIT, out = AITK_STR_INIT;
    for (int i = 0; i < 3000; i++) {
        aitk_str_clear(&in);
        aitk_str_clear(&out);
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t n = (seed >> 33) % 120;
        for (size_t k = 0; k < n; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            aitk_str_appendc(&in, alphabet[(seed >> 33) % (sizeof alphabet - 1)]);
        }
        if (i % 3 == 0)
            aitk_str_append(&in, " node7 ");
        assert_int_equal(aitk_redactor_text(r, aitk_str_cstr(&in), &out), AITK_OK);
        const char *hit = strstr(aitk_str_cstr(&out), " node7 ");
        if (hit)
            fail_msg("'%s' -> '%s'", in.ptr, out.ptr);
    }
    aitk_str_free(&in);
    aitk_str_free(&out);
    aitk_redactor_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_addresses_after_colons),
        cmocka_unit_test(test_leaves_ordinary_text),
        cmocka_unit_test(test_known_values_consistent),
        cmocka_unit_test(test_technical_names), cmocka_unit_test(test_other_names_everywhere),
        cmocka_unit_test(test_names_after_patterns), cmocka_unit_test(test_scrub_secrets),
        cmocka_unit_test(test_short_names),
        cmocka_unit_test(test_homes_learnt_from_paths),
        cmocka_unit_test(test_secret_shapes),
        cmocka_unit_test(test_query_credentials),
        cmocka_unit_test(test_secret_fields),
        cmocka_unit_test(test_secret_numbers),
        cmocka_unit_test(test_userinfo),
        cmocka_unit_test(test_plain_text_forms),
        cmocka_unit_test(test_empty_values),
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_common_names_keep_structure),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_random_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
