/* Secrets in the forms they take in the wild, through the scrub every
 * report gets (no --redact): command lines (mysql -pSECRET, sshpass -p,
 * docker login -p, curl -u), URLs whose password has spaces or escapes,
 * package-index settings (PIP_INDEX_URL, UV_INDEX_URL, extra-index-url),
 * environment dumps (HF_TOKEN, WANDB_API_KEY, AWS keys, PGPASSWORD),
 * headers, .netrc and Python source lines a traceback quotes. One table of
 * what must go, one of look-alikes that must stay (a port after -p, a
 * prompting -p, prose about passwords, versions): a report that is all
 * [secret] tells a maintainer nothing. Each table reports every row that
 * fails, not only the first. Expected outputs are written out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

#include "common/str.h"
#include "reports/redact.h"

typedef struct form {
    const char *in, *want;
} form;

/* The scrub of `in`; prints the difference and says false when it is not
 * `want`. */
static bool scrubs_to(const char *in, const char *want)
{
    cJSON *t = cJSON_CreateString(in);
    assert_non_null(t);
    assert_int_equal(aitk_scrub_secrets(t), AITK_OK);
    bool same = strcmp(t->valuestring, want) == 0;
    if (!same)
        print_error("scrub(\"%s\")\n    got  \"%s\"\n    want \"%s\"\n", in, t->valuestring,
                    want);
    cJSON_Delete(t);
    return same;
}

static void check_all(const form *forms, size_t n)
{
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += !scrubs_to(forms[i].in, forms[i].want);
    if (failed)
        fail_msg("%zu of %zu texts scrubbed otherwise", failed, n);
}

#define HF "hf_QwErTyUiOpAsDfGhJkLzXcVbNm012345"
#define WANDB "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
#define GHP "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
#define PAT "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"

/* Command lines that carry a password: the flag and the words around it
 * stay, the password goes. mysql and its kin take -pPASSWORD attached
 * (their -p with a space prompts, and the next word is the database);
 * sshpass takes -p PASSWORD either way, before the command it runs. */
static void test_command_lines(void **state)
{
    (void)state;
    static const form forms[] = {
        {"mysql -u root -pS3cretPw mydb", "mysql -u root -p[secret] mydb"},
        {"mysql -uroot -pS3cretPw -h db.example mydb",
         "mysql -uroot -p[secret] -h db.example mydb"},
        {"mysqldump -u root -phunter2 db > out.sql", "mysqldump -u root -p[secret] db > out.sql"},
        {"mariadb -u admin -phunter2", "mariadb -u admin -p[secret]"},
        {"/usr/bin/mysql -uroot -phunter2 app", "/usr/bin/mysql -uroot -p[secret] app"},
        {"mysql -u root -p'two words' db", "mysql -u root -p'[secret]' db"},
        {"mysql -u root -p\"hunter2\" db", "mysql -u root -p\"[secret]\" db"},
        {"sudo -u backup mysqldump -phunter2 --all-databases; ls",
         "sudo -u backup mysqldump -p[secret] --all-databases; ls"},
        {"bash -c \"mysql -phunter2 -e 'select 1'\"", "bash -c \"mysql -p[secret] -e 'select 1'\""},
        {"sshpass -p 'my pass' ssh user@host", "sshpass -p '[secret]' ssh user@host"},
        {"sshpass -p hunter2 ssh user@host", "sshpass -p [secret] ssh user@host"},
        {"sshpass -phunter2 ssh -p 2222 host", "sshpass -p[secret] ssh -p 2222 host"},
        {"sshpass -p hunter2 ssh -p 2222 host", "sshpass -p [secret] ssh -p 2222 host"},
        {"docker login -u jdoe -p hunter2 registry.example.com",
         "docker login -u jdoe -p [secret] registry.example.com"},
        {"twine upload -u jdoe -p hunter2 dist/*", "twine upload -u jdoe -p [secret] dist/*"},
        {"curl -u jdoe:hunter2 https://example.com/x",
         "curl -u jdoe:[secret] https://example.com/x"},
        {"curl -fsSL --user 'jdoe:two words' https://example.com/x",
         "curl -fsSL --user 'jdoe:[secret]' https://example.com/x"},
        /* Forms the scrub took before: the flag names the secret. */
        {"mysql --user=root --password=S3cretPw mydb",
         "mysql --user=root --password=[secret] mydb"},
        {"huggingface-cli login --token " HF, "huggingface-cli login --token [secret]"},
    };
    check_all(forms, sizeof forms / sizeof *forms);
}

/* URLs: a password with percent-escapes, and one with spaces where a
 * quoted argument holds it (git clone "https://user:my pass@host/..."):
 * the quotes say where the URL ends. Index settings with credentials. */
static void test_urls(void **state)
{
    (void)state;
    static const form forms[] = {
        {"https://user:pa%20ss@pypi.example.com/simple",
         "https://user:[secret]@pypi.example.com/simple"},
        {"ftp://anonymous:me%40example.com@ftp.example.com/",
         "ftp://anonymous:[secret]@ftp.example.com/"},
        {"git clone \"https://user:my pass word@git.example.com/repo.git\" x",
         "git clone \"https://user:[secret]@git.example.com/repo.git\" x"},
        {"pip install --index-url 'https://alice:two words@pypi.corp.example:8443/simple' torch",
         "pip install --index-url 'https://alice:[secret]@pypi.corp.example:8443/simple' torch"},
        {"git clone 'https://user:p@ss w0rd@git.example.com/x.git'",
         "git clone 'https://user:[secret]@git.example.com/x.git'"},
        {"'https://jdoe:pw1@h.example/x then ask jdoe@corp.example'",
         "'https://jdoe:[secret]@h.example/x then ask jdoe@corp.example'"},
        {"PIP_INDEX_URL=https://alice:S3cretPassw0rd@pypi.corp.example/simple",
         "PIP_INDEX_URL=https://alice:[secret]@pypi.corp.example/simple"},
        {"PIP_EXTRA_INDEX_URL=https://__token__:glpat-abcdefghij1234567890@gitlab.example.com/"
         "api/v4/projects/1/packages/pypi/simple",
         "PIP_EXTRA_INDEX_URL=https://__token__:[secret]@gitlab.example.com/"
         "api/v4/projects/1/packages/pypi/simple"},
        {"UV_INDEX_URL=https://user:pw@pypi.example/simple",
         "UV_INDEX_URL=https://user:[secret]@pypi.example/simple"},
        {"extra-index-url = https://user:hunter2@pypi.example/simple",
         "extra-index-url = https://user:[secret]@pypi.example/simple"},
        {"channels:\n  - https://user:Passw0rd@conda.example.com/mychannel",
         "channels:\n  - https://user:[secret]@conda.example.com/mychannel"},
        {"https://x-access-token:ghs_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git",
         "https://x-access-token:[secret]@github.com/o/r.git"},
    };
    check_all(forms, sizeof forms / sizeof *forms);
}

/* Environment dumps, config files, headers and the Python lines a
 * traceback quotes. */
static void test_environment_and_config(void **state)
{
    (void)state;
    static const form forms[] = {
        {"PGPASSWORD=hunter2", "PGPASSWORD=[secret]"},
        {"REDISPASSWORD=hunter2", "REDISPASSWORD=[secret]"},
        {"HF_TOKEN=" HF, "HF_TOKEN=[secret]"},
        {"HUGGING_FACE_HUB_TOKEN=" HF, "HUGGING_FACE_HUB_TOKEN=[secret]"},
        {"WANDB_API_KEY=" WANDB, "WANDB_API_KEY=[secret]"},
        {"os.environ[\"WANDB_API_KEY\"] = \"" WANDB "\"",
         "os.environ[\"WANDB_API_KEY\"] = \"[secret]\""},
        {"os.environ['DB_PASSWORD']='hunter2'", "os.environ['DB_PASSWORD']='[secret]'"},
        {"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID=[secret]"},
        {"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "aws_secret_access_key = [secret]"},
        {"curl -H \"Authorization: Bearer " HF "\" x",
         "curl -H \"Authorization: Bearer [secret]\" x"},
        {"machine huggingface.co login jdoe password " HF,
         "machine huggingface.co login jdoe password [secret]"},
        {"[pypi]\n  username = __token__\n  password = pypi-AgEIcHlwaS5vcmc",
         "[pypi]\n  username = __token__\n  password = [secret]"},
        {"GITHUB_TOKEN=" GHP " and " PAT, "GITHUB_TOKEN=[secret] and [secret]"},
    };
    check_all(forms, sizeof forms / sizeof *forms);
}

/* Look-alikes: -p as a port or a prompt, the database after mysql's bare
 * -p, sshpass reading its password from elsewhere, prose and versions. */
static void test_look_alikes_stay(void **state)
{
    (void)state;
    static const char *const kept[] = {
        "docker run -p 8080:80 img",
        "ssh -p 2222 host; scp -P 2222 a host:b",
        "python -m http.server -p 8080",
        "mkdir -p /tmp/x && cp -p a b",
        "mysql -P 3306 -u root -p mydb",
        "mysql -u root -p",
        "mysql -u root -p -h db.example mydb",
        "mysql -u root -p S3cretDbName",
        "mysql -u root -p$MYSQL_PWD db",
        "sshpass -f /run/pw ssh host",
        "sshpass -e ssh -p 2222 host",
        "docker run -p 8080:80 mysql -u root",
        "curl -u jdoe https://example.com/x",
        "password policy requires 12 characters",
        "The password prompt timed out",
        "HF_TOKEN is not set; WANDB_API_KEY not set; export WANDB_MODE=offline",
        "torch 2.5.1+cu124, CUDA 12.4.1, cuDNN 9.1.0.70",
        "extra-index-url = https://download.pytorch.org/whl/cu124",
        "git@github.com:ostris/ai-toolkit.git",
        "\"https://pypi.org/simple\" and 'https://h.example/a b@c'",
        "'see https://pypi.org/simple/ or mail help@pypi.org'",
    };
    form forms[sizeof kept / sizeof *kept];
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        forms[i] = (form){kept[i], kept[i]};
    check_all(forms, sizeof forms / sizeof *forms);
}

/* --redact numbers them like any secret: the same password on two command
 * lines has one placeholder. */
static void test_under_redact(void **state)
{
    (void)state;
    aitk_redactor *r;
    assert_int_equal(aitk_redactor_new(&r), AITK_OK);
    aitk_str out = AITK_STR_INIT;
    static const char in[] = "mysql -pS3cretPw; sshpass -p S3cretPw ssh h; "
                             "git clone \"https://u:a b@h.example/r\"";
    assert_int_equal(aitk_redactor_text(r, in, &out), AITK_OK);
    assert_string_equal(aitk_str_cstr(&out),
                        "mysql -p[secret-1]; sshpass -p [secret-1] ssh h; "
                        "git clone \"https://[user-1]:[secret-2]@h.example/r\"");
    aitk_str_free(&out);
    aitk_redactor_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_lines),
        cmocka_unit_test(test_urls),
        cmocka_unit_test(test_environment_and_config),
        cmocka_unit_test(test_look_alikes_stay),
        cmocka_unit_test(test_under_redact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
