/* Requirements files as pip reads them (pyreqs.h). The expected readings
 * are pip's, written by hand from pip's "Requirements File Format" and
 * PEP 440/503/508; realworld.linux.aitk-requirements sets the tool beside
 * pip's own parser on ai-toolkit's files and real environments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "probe_test.h"
#include "validate/probes/path_search.h"
#include "validate/probes/pep440.h"
#include "validate/probes/pyenv.h"
#include "validate/probes/pyreqs.h"
#include "validate/probes/vcs_url.h"

static void test_normalize(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"Jinja2", "jinja2"}, {"No.Such_Package--aitk-two", "no-such-package-aitk-two"},
        {"optimum_quanto", "optimum-quanto"}, {"open_clip_torch", "open-clip-torch"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aitk_str s = AITK_STR_INIT;
        assert_int_equal(aitk_pyreq_normalize(cases[i][0], strlen(cases[i][0]), &s), AITK_OK);
        assert_string_equal(aitk_str_cstr(&s), cases[i][1]);
        aitk_str_free(&s);
    }
}

static void test_pins(void **state)
{
    (void)state;
    static const struct {
        const char *pin, *installed;
        bool matches;
    } cases[] = {
        {"2.5.1", "2.5.1+cu124", true},   /* a local label is ignored by a pin without one */
        {"2.5.1+cu124", "2.5.1", false},  /* but not the other way round */
        {"1.0", "1.0.0", true},           /* release segments padded with zeros */
        {"1.0.0", "1.0.1", false},
        {"1.4.15", "1.4.15.post0", false}, /* a post-release is another version */
        {"2.0.0rc1", "2.0.0rc1", true},
        {"2.0.0rc1", "2.0.0", false},
        {"5.5.3", "5.24.0", false},
        /* PEP 440's normalization: each pair is one version to pip. */
        {"1.0.0-rc1", "1.0.0rc1", true},
        {"1.0.0.rc1", "1.0.0rc1", true},
        {"2.0-post1", "2.0.post1", true},
        {"2.0-1", "2.0.post1", true},
        {"v1.0", "1.0", true},
        {"1.0a", "1.0a0", true},
        {"1.0.0rc01", "1.0.0rc1", true},
        {"1.0c1", "1.0rc1", true},
        {"1.0ALPHA2", "1.0a2", true},
        {"1.0.dev3", "1.0dev3", true},
        {"1!2.0", "2.0", false}, /* another epoch */
        {"1.0rc1", "1.0b1", false},
        {"1.0.post1", "1.0.post2", false},
        {"1.0+Ubuntu-1", "1.0+ubuntu.1", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (aitk_pep440_pin_matches(cases[i].pin, cases[i].installed) != cases[i].matches)
            fail_msg("==%s against %s: expected %s", cases[i].pin, cases[i].installed,
                     cases[i].matches ? "a match" : "no match");
}

static const aitk_pyreq *find(const aitk_pyreqs *r, const char *name)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->items[i].name, name) == 0)
            return &r->items[i];
    return NULL;
}

static void test_read(void **state)
{
    (void)state;
    char *dir = pt_tempdir("pyreqs");
    pt_write(dir, "requirements.txt",
             "# a comment\n"
             "--index-url https://pypi.org/simple\n"
             "-r base.txt\n"
             "torch==2.5.1   # an inline comment\n"
             "Accelerate[torch] == 1.0\n"
             "Jinja2==3.1.*\n"
             "filelock===3.0\n"
             "typing_extensions>=4.0,<5\n"
             "fsspec \\\n"
             "  ==2024.1 --hash=sha256:00\n"
             "marked ; sys_platform == \"win32\"\n"
             "byurl @ https://example.org/byurl-1.0-py3-none-any.whl\n"
             "git+https://github.com/huggingface/diffusers.git@c943837\n"
             "git+https://github.com/x/y.git@v1#egg=from-egg\n"
             "-e git+https://github.com/x/z.git#egg=editable_one\n"
             "https://example.org/wheelname-2.0-py3-none-any.whl\n"
             "./a/local/folder\n"
             "extras_url[torch] @ git+https://github.com/huggingface/diffusers@main\n"
             "git+https://github.com/huggingface/diffusers.git@refs/pull/13432/head\n"
             "git+https://github.com/x/mono.git#subdirectory=pkgs/foo&egg=in-subdir\n"
             "https://example.org/archive/refs/heads/main.zip\n"
             "vendor/mypkg\n"
             "wheels/local_wheel-1.5-py3-none-any.whl\n"
             "C:\\wheels\\win_wheel-2.5-py3-none-any.whl\n"
             "baz-1.0.tar.gz\n"
             "# an old line \\\n"
             "kept==1.0\n");
    /* With a UTF-8 byte-order mark, as Notepad saves it. */
    pt_write(dir, "base.txt", "\xEF\xBB\xBF--requirement=sub/more.txt\nnumpy\n");
    pt_write(dir, "sub/more.txt", "sympy==1.13\r\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/requirements.txt", dir);
    aitk_pyreqs r;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_pyreqs_read(path, &r, &err), AITK_OK);
    static const struct {
        const char *name, *pin, *where;
    } want[] = {
        {"sympy", "1.13", "more.txt:1"},
        {"numpy", NULL, "base.txt:2"},
        {"torch", "2.5.1", "requirements.txt:4"},
        {"accelerate", "1.0", "requirements.txt:5"},
        {"jinja2", NULL, NULL},            /* a wildcard is no pin */
        {"filelock", NULL, NULL},          /* nor is arbitrary equality */
        {"typing-extensions", NULL, NULL}, /* nor two specifiers */
        {"fsspec", "2024.1", "requirements.txt:9"}, /* at the line it starts on */
        {"byurl", NULL, NULL},
        {"diffusers", NULL, "requirements.txt:13"}, /* again at line 19: judged at its first */
        {"from-egg", NULL, NULL},
        {"editable-one", NULL, NULL},
        {"wheelname", "2.0", NULL}, /* a wheel's name and version: pip pins it */
        {"extras-url", NULL, NULL},
        {"in-subdir", NULL, NULL}, /* egg= after another fragment parameter */
        {"local-wheel", "1.5", NULL},
        {"win-wheel", "2.5", NULL},
        {"kept", "1.0", "requirements.txt:27"}, /* a comment ending in '\\' goes on no line */
    };
    /* diffusers twice: at lines 13 and 19 (the pull request's head). */
    assert_int_equal(r.count, sizeof want / sizeof *want + 1);
    size_t seen = 0;
    for (size_t i = 0; i < r.count; i++)
        if (strcmp(r.items[i].name, "diffusers") == 0 && ++seen == 2)
            assert_string_equal(r.items[i].revision, "refs/pull/13432/head");
    assert_int_equal(seen, 2);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const aitk_pyreq *q = find(&r, want[i].name);
        if (!q)
            fail_msg("%s not read", want[i].name);
        if (want[i].pin)
            assert_string_equal(q->pin, want[i].pin);
        else
            assert_null(q->pin);
        if (want[i].where)
            assert_string_equal(q->where, want[i].where);
    }
    /* A VCS URL without a name is named by its repository, as the build
     * pip makes of it names it (diffusers' setup.py: name="diffusers"). */
    const aitk_pyreq *vcs = find(&r, "diffusers");
    assert_non_null(vcs);
    assert_true(vcs->named_by_url);
    assert_string_equal(vcs->repo, "git+https://github.com/huggingface/diffusers.git");
    assert_string_equal(vcs->revision, "c943837");
    assert_string_equal(vcs->where, "requirements.txt:13");
    const aitk_pyreq *egg = find(&r, "from-egg");
    assert_false(egg->named_by_url);
    assert_string_equal(egg->repo, "git+https://github.com/x/y.git");
    assert_string_equal(egg->revision, "v1");
    assert_null(find(&r, "editable-one")->revision);
    assert_string_equal(find(&r, "extras-url")->repo,
                        "git+https://github.com/huggingface/diffusers");
    assert_null(find(&r, "byurl")->repo); /* a wheel's URL is no repository */
    /* Not judged: a marker; archives and paths pip names only once built. */
    static const char *const unnamed[] = {"marked", "head", "main-zip", "vendor",
                                          "baz", "baz-1-0-tar-gz", "c", "mono"};
    for (size_t i = 0; i < sizeof unnamed / sizeof *unnamed; i++)
        if (find(&r, unnamed[i]))
            fail_msg("'%s' read as a name", unnamed[i]);
    aitk_pyreqs_free(&r);

    /* An include that is not there, and one that loops, are named where
     * they stand; a missing top file is an I/O error. */
    pt_write(dir, "broken.txt", "numpy\n-r nowhere.txt\n");
    snprintf(path, sizeof path, "%s/broken.txt", dir);
    assert_int_equal(aitk_pyreqs_read(path, &r, &err), AITK_E_INVAL);
    pt_assert_contains(aitk_str_cstr(&err), "broken.txt:2: -r nowhere.txt: ");
    aitk_str_clear(&err);
    pt_write(dir, "loop_a.txt", "-r loop_b.txt\n");
    pt_write(dir, "loop_b.txt", "six\n-r sub/../loop_a.txt\n");
    snprintf(path, sizeof path, "%s/loop_a.txt", dir);
    assert_int_equal(aitk_pyreqs_read(path, &r, &err), AITK_E_INVAL);
    pt_assert_contains(aitk_str_cstr(&err),
                       "loop_b.txt:2: -r sub/../loop_a.txt closes an include loop back to "
                       "loop_a.txt");
    aitk_str_clear(&err);
    snprintf(path, sizeof path, "%s/absent.txt", dir);
    assert_int_equal(aitk_pyreqs_read(path, &r, &err), AITK_E_IO);
    aitk_str_free(&err);
    free(dir);
}

static void test_installed_and_judged(void **state)
{
    (void)state;
    char *site = pt_tempdir("pysite");
    pt_write(site, "numpy-2.1.0.dist-info/METADATA", "");
    pt_write(site, "Foo_Bar-1.0.dist-info/METADATA", "");
    pt_write(site, "torch-2.5.1+cu124.dist-info/METADATA", "");
    pt_write(site, "baz-0.1-py3.11.egg-info/PKG-INFO", "");
    pt_write(site, "qux.egg-info/PKG-INFO", "");
    pt_write(site, "readme.txt", "");
    /* Every distribution, as the python checks read theirs (pyenv.c):
     * empty METADATA here, so the folder names tell the versions. */
    cJSON *dists = cJSON_CreateObject();
    aitk_pyenv_scan_site(site, true, dists);
    static const char *const want[][2] = {{"numpy", "2.1.0"}, {"foo-bar", "1.0"},
                                          {"torch", "2.5.1+cu124"}, {"baz", "0.1"},
                                          {"qux", ""}};
    assert_int_equal(cJSON_GetArraySize(dists), 5);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        assert_string_equal(
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(dists, want[i][0]), "version")),
            want[i][1]);
    cJSON_Delete(dists);
    /* A version METADATA gives wins over the folder's, as pip's does. */
    pt_write(site, "qux.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: qux\nVersion: 3.2\n");

    char *checkout = pt_tempdir("pycheckout");
    pt_write(checkout, "requirements.txt",
             "numpy==2.1\ntorch==2.5.1\nfoo-bar==2.0\nmissing-one\nbitsandbytes\n"
             "bitsandbytes==1.0\nbaz\nqux==3.2\n");
    cJSON *sites = cJSON_CreateArray();
    cJSON *one = cJSON_CreateObject();
    cJSON_AddStringToObject(one, "path", site);
    cJSON_AddItemToArray(sites, one);
    static const char *const skip[] = {"bitsandbytes", NULL};
    aitk_pyreqs_verdict v;
    assert_int_equal(aitk_pyreqs_judge(checkout, sites, skip, &v), AITK_OK);
    assert_string_equal(aitk_str_cstr(&v.problem), "");
    assert_string_equal(aitk_str_cstr(&v.missing), "missing-one"); /* bitsandbytes: skipped */
    assert_string_equal(aitk_str_cstr(&v.unpinned), "foo-bar 1.0 (==2.0 at requirements.txt:3)");
    assert_int_equal(v.listed, 7); /* bitsandbytes once; qux 3.2 meets its pin */
    aitk_pyreqs_verdict_free(&v);
    /* A checkout without a requirements file: said, nothing judged. */
    assert_int_equal(aitk_pyreqs_judge(site, sites, skip, &v), AITK_OK);
    pt_assert_contains(aitk_str_cstr(&v.problem), "requirements.txt");
    assert_int_equal(v.listed, 0);
    aitk_pyreqs_verdict_free(&v);
    cJSON_Delete(sites);
    free(checkout);
    free(site);
}

/* VCS URLs as pip's "VCS Support" writes them; the repositories as
 * direct_url.json records them (PEP 610: no "git+", no revision, no
 * credentials). */
static void test_vcs_urls(void **state)
{
    (void)state;
    static const struct {
        const char *url, *repo, *revision, *name;
    } cases[] = {
        {"git+https://github.com/huggingface/diffusers.git@c943837899b16cbae2f619b8dd4f7bb6f07dd81a",
         "git+https://github.com/huggingface/diffusers.git",
         "c943837899b16cbae2f619b8dd4f7bb6f07dd81a", "diffusers"},
        /* credentials never reach a report */
        {"git+https://user:ghp_secret@github.com/o/Private_Pkg.git@v2.0#egg=x",
         "git+https://github.com/o/Private_Pkg.git", "v2.0", "Private_Pkg"},
        {"git+ssh://git@github.com/o/r.git@refs/pull/7/head", "git+ssh://github.com/o/r.git",
         "refs/pull/7/head", "r"},
        {"hg+https://hg.example.org/repo/", "hg+https://hg.example.org/repo/", "", "repo"},
        {"git+file:///tmp/x/diffusers@main", "git+file:///tmp/x/diffusers", "main", "diffusers"},
        /* a query is not the revision's: pip keeps it in the URL */
        {"git+https://github.com/huggingface/diffusers.git@c943837?x=1",
         "git+https://github.com/huggingface/diffusers.git?x=1", "c943837", "diffusers"},
        {"git+ssh://git@host.example:2222/o/r.git@v1#egg=r&subdirectory=sub",
         "git+ssh://host.example:2222/o/r.git", "v1", "r"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aitk_vcs_url u;
        if (!aitk_vcs_url_parse(cases[i].url, strlen(cases[i].url), &u))
            fail_msg("%s not read as a VCS URL", cases[i].url);
        assert_string_equal(aitk_str_cstr(&u.repo), cases[i].repo);
        assert_string_equal(aitk_str_cstr(&u.revision), cases[i].revision);
        assert_string_equal(aitk_str_cstr(&u.name), cases[i].name);
        aitk_vcs_url_free(&u);
    }
    /* pip's Link takes none of these for a VCS URL; the '#' before "://"
     * once sent the parser past the end of the string. */
    static const char *const not_vcs[] = {"https://example.org/a-1.0-py3-none-any.whl",
                                          "git+github.com/o/r", "./local", "git+x#://a",
                                          "git+://x", "git+"};
    for (size_t i = 0; i < sizeof not_vcs / sizeof *not_vcs; i++) {
        aitk_vcs_url u;
        if (aitk_vcs_url_parse(not_vcs[i], strlen(not_vcs[i]), &u))
            fail_msg("%s read as a VCS URL", not_vcs[i]);
    }
    assert_true(aitk_vcs_same_repo("git+https://github.com/huggingface/diffusers.git",
                                   "https://GitHub.com/huggingface/diffusers/"));
    assert_true(aitk_vcs_same_repo("git+ssh://github.com/o/r.git", "ssh://git@github.com/o/r"));
    assert_false(aitk_vcs_same_repo("git+https://github.com/huggingface/diffusers.git",
                                    "https://github.com/fork/diffusers.git"));
    assert_false(aitk_vcs_same_repo("git+https://github.com/o/R.git", "https://github.com/o/r"));
    assert_true(aitk_vcs_commit_matches("C943837", "c943837899b16cbae2f619b8dd4f7bb6f07dd81a"));
    assert_false(aitk_vcs_commit_matches("c94383", "c943837899b16cbae2f619b8dd4f7bb6f07dd81a"));
    assert_false(aitk_vcs_commit_matches("main", "c943837899b16cbae2f619b8dd4f7bb6f07dd81a"));
    assert_false(aitk_vcs_commit_matches("dcc9a5c", "c943837899b16cbae2f619b8dd4f7bb6f07dd81a"));
}

/* A requirement from a commit, set against how pip recorded each install
 * (direct_url.json, written here as pip 23.2.1 wrote it for
 * `pip install git+file:///tmp/vcs/repo@<commit>`; none for an index's
 * package). realworld.linux.aitk-vcs does the same with real installs. */
static void test_from_a_commit(void **state)
{
    (void)state;
    char *site = pt_tempdir("pysite-vcs");
    pt_write(site, "diffusers-0.37.0.dev0.dist-info/METADATA", "");
    pt_write(site, "diffusers-0.37.0.dev0.dist-info/direct_url.json",
             "{\"url\": \"https://github.com/huggingface/diffusers.git\", \"vcs_info\": "
             "{\"commit_id\": \"c943837899b16cbae2f619b8dd4f7bb6f07dd81a\", "
             "\"requested_revision\": \"c943837899b16cbae2f619b8dd4f7bb6f07dd81a\", "
             "\"vcs\": \"git\"}}");
    pt_write(site, "peft-0.18.1.dist-info/METADATA", ""); /* from an index: no direct_url */
    pt_write(site, "Renamed_Pkg-1.0.dist-info/METADATA", "");
    pt_write(site, "Renamed_Pkg-1.0.dist-info/direct_url.json",
             "{\"url\": \"https://tok@example.org/o/repo-name\", \"vcs_info\": "
             "{\"commit_id\": \"1111111111111111111111111111111111111111\", "
             "\"vcs\": \"git\"}}");
    pt_write(site, "localdev-2.0.dist-info/METADATA", "");
    pt_write(site, "localdev-2.0.dist-info/direct_url.json",
             "{\"url\": \"file:///home/u/localdev\", \"dir_info\": {\"editable\": true}}");
    pt_write(site, "fromzip-3.0.dist-info/METADATA", "");
    pt_write(site, "fromzip-3.0.dist-info/direct_url.json",
             "{\"url\": \"https://example.org/fromzip.zip\", \"archive_info\": {}}");
    cJSON *sites = cJSON_CreateArray();
    cJSON *one = cJSON_CreateObject();
    cJSON_AddStringToObject(one, "path", site);
    cJSON_AddItemToArray(sites, one);
    pt_write(site, "pkg_a-1.0.dist-info/METADATA", "");
    pt_write(site, "pkg_a-1.0.dist-info/direct_url.json",
             "{\"url\": \"https://example.org/o/mono.git\", \"subdirectory\": \"a\", "
             "\"vcs_info\": {\"commit_id\": \"6666666666666666666666666666666666666666\", "
             "\"vcs\": \"git\"}}");
    static const struct {
        const char *requirements, *elsewhere, *missing;
        /* what aitk_pyreqs_verdict's vcs_programs and elsewhere_names hold */
        const char *programs, *names;
    } cases[] = {
        /* the commit asked for, in full and short */
        {"git+https://github.com/huggingface/diffusers.git@c943837899b16cbae2f619b8dd4f7bb6f07dd81a\n",
         "", "", "", ""},
        {"diffusers @ git+https://github.com/huggingface/diffusers@c943837\n", "", "", "", ""},
        /* the same name from another repository on a later line: judged too */
        {"git+https://github.com/huggingface/diffusers.git@c943837\n"
         "diffusers @ git+https://github.com/fork/diffusers@dead123\n",
         "diffusers 0.37.0.dev0 from https://github.com/huggingface/diffusers.git, not "
         "git+https://github.com/fork/diffusers@dead123 (requirements.txt:2)",
         "", "git", "diffusers"},
        /* one repository, two projects: each its own folder */
        {"git+https://example.org/o/mono.git@6666666#subdirectory=a&egg=pkg-a\n"
         "git+https://example.org/o/mono.git@6666666#subdirectory=b&egg=pkg-b\n", "",
         "pkg-b", "git", ""},
        /* another commit: the line ai-toolkit's next pin would be */
        {"git+https://github.com/huggingface/diffusers.git@dc8d9032171c83741fd37ed2b12bc9d8274464f3\n",
         "diffusers 0.37.0.dev0 at commit c943837899b1, not "
         "git+https://github.com/huggingface/diffusers.git@dc8d9032171c (requirements.txt:1)",
         "", "git", "diffusers"},
        /* a branch: only the revision pip was asked for can match it */
        {"git+https://github.com/huggingface/diffusers.git@main\n",
         "diffusers 0.37.0.dev0 at commit c943837899b1, not "
         "git+https://github.com/huggingface/diffusers.git@main (requirements.txt:1)",
         "", "git", "diffusers"},
        /* no revision: any commit of the repository */
        {"-e git+https://github.com/huggingface/diffusers.git#egg=diffusers\n", "", "", "", ""},
        /* a fork */
        {"git+https://github.com/fork/diffusers.git@c943837\n",
         "diffusers 0.37.0.dev0 from https://github.com/huggingface/diffusers.git, not "
         "git+https://github.com/fork/diffusers.git@c943837 (requirements.txt:1)",
         "", "git", "diffusers"},
        /* from an index */
        {"peft @ git+https://github.com/huggingface/peft@v0.18.1\n",
         "peft 0.18.1 from a package index (no direct_url.json), not "
         "git+https://github.com/huggingface/peft@v0.18.1 (requirements.txt:1)", "", "git", "peft"},
        /* found by the repository pip recorded, whatever its name */
        {"git+https://example.org/o/repo-name.git@1111111\n", "", "", "", ""},
        {"git+https://example.org/o/repo-name.git@2222222\n",
         "renamed-pkg 1.0 at commit 111111111111, not "
         "git+https://example.org/o/repo-name.git@2222222 (requirements.txt:1)",
         "", "git", "renamed-pkg"},
        /* a developer's folder is at its own commit: not judged */
        {"git+https://example.org/localdev.git@3333333\n", "", "", "", ""},
        {"git+https://example.org/fromzip.git@4444444\n",
         "fromzip 3.0 from the archive https://example.org/fromzip.zip, not "
         "git+https://example.org/fromzip.git@4444444 (requirements.txt:1)", "", "git", "fromzip"},
        {"git+https://example.org/absent.git@5555555\n", "",
         "absent (named by its repository)", "git", ""},
        /* each program once, as pip's backends name them (hg+: Mercurial) */
        {"git+https://example.org/absent.git@5555555\n"
         "hg+https://example.org/hgrepo@abc1234#egg=hgpkg\n"
         "git+https://github.com/fork/diffusers.git@c943837\n"
         "peft @ git+https://github.com/huggingface/peft@v0.18.1\n",
         "diffusers 0.37.0.dev0 from https://github.com/huggingface/diffusers.git, not "
         "git+https://github.com/fork/diffusers.git@c943837 (requirements.txt:3); peft 0.18.1 "
         "from a package index (no direct_url.json), not "
         "git+https://github.com/huggingface/peft@v0.18.1 (requirements.txt:4)",
         "absent (named by its repository), hgpkg", "git hg", "diffusers peft"},
    };
    char *checkout = pt_tempdir("pycheckout-vcs");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pt_write(checkout, "requirements.txt", cases[i].requirements);
        aitk_pyreqs_verdict v;
        assert_int_equal(aitk_pyreqs_judge(checkout, sites, NULL, &v), AITK_OK);
        if (strcmp(aitk_str_cstr(&v.elsewhere), cases[i].elsewhere) != 0 ||
            strcmp(aitk_str_cstr(&v.missing), cases[i].missing) != 0 ||
            strcmp(aitk_str_cstr(&v.vcs_programs), cases[i].programs) != 0 ||
            strcmp(aitk_str_cstr(&v.elsewhere_names), cases[i].names) != 0)
            fail_msg("%s: elsewhere '%s', missing '%s', programs '%s', names '%s'",
                     cases[i].requirements, aitk_str_cstr(&v.elsewhere),
                     aitk_str_cstr(&v.missing), aitk_str_cstr(&v.vcs_programs),
                     aitk_str_cstr(&v.elsewhere_names));
        aitk_pyreqs_verdict_free(&v);
    }
    free(checkout);
    /* The environment's record keeps where each came from, without the token. */
    cJSON *dists = cJSON_CreateObject();
    aitk_pyenv_scan_site(site, true, dists);
    const cJSON *du = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(dists, "renamed-pkg"), "direct_url");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(du, "url")),
                        "https://example.org/o/repo-name");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(du, "source")),
                        "vcs");
    assert_null(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(dists, "peft"), "direct_url"));
    cJSON_Delete(dists);
    cJSON_Delete(sites);
    free(site);
}

#ifdef _WIN32
#define PROGRAM "git.exe"
#define SEP ";"
#define SLASH "\\"
#else
#define PROGRAM "git"
#define SEP ":"
#define SLASH "/"
#endif

/* The shell's own answer (POSIX `command -v`, dash here) for `path`, with
 * runs of '/' made one: the oracle beside the answers written below. */
#ifndef _WIN32
static void shell_finds(const char *path, aitk_str *out)
{
    aitk_str cmd = AITK_STR_INIT;
    aitk_str_appendf(&cmd, "/bin/sh -c 'PATH=\"%s\"; command -v git' 2>/dev/null", path);
    FILE *f = popen(aitk_str_cstr(&cmd), "r");
    aitk_str_free(&cmd);
    assert_non_null(f);
    char line[4200] = "";
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    line[strcspn(line, "\n")] = '\0';
    pclose(f);
    /* "dir//git" (an entry written with its slash) names the same file. */
    for (const char *c = line; *c; c++)
        if (!(c[0] == '/' && c[1] == '/'))
            aitk_str_appendf(out, "%c", *c);
}
#endif

/* pip runs git by its bare name (path_search.h): the first PATH entry with
 * a runnable file of that name is the one, a folder named git is not. */
static void test_program_on_path(void **state)
{
    (void)state;
    char *d = pt_tempdir("path-search");
    pt_write(d, "folder/" PROGRAM "/README", "a folder named git\n");
    pt_write(d, "first/" PROGRAM, "#!/bin/sh\nexit 0\n");
    pt_write(d, "second/" PROGRAM, "#!/bin/sh\nexit 0\n");
    pt_write(d, "plain/" PROGRAM, "not a program\n");
#ifndef _WIN32
    char file[4200];
    snprintf(file, sizeof file, "%s/first/git", d);
    assert_int_equal(chmod(file, 0755), 0);
    snprintf(file, sizeof file, "%s/second/git", d);
    assert_int_equal(chmod(file, 0755), 0);
    snprintf(file, sizeof file, "%s/plain/git", d);
    assert_int_equal(chmod(file, 0644), 0);
#endif
    static const struct {
        const char *entries; /* '@': the test's folder */
        const char *found;   /* the entry that holds it, or "" */
    } cases[] = {
        {"@" SLASH "folder" SEP "@" SLASH "first" SEP "@" SLASH "second", "first"},
        {"@" SLASH "second" SLASH SEP "@" SLASH "first", "second"},
        {"@" SLASH "folder" SEP SEP "@" SLASH "nothing", ""},
        {"", ""},
#ifndef _WIN32
        /* a file without the execute bit: execvp passes it by */
        {"@/plain:@/second", "second"},
#else
        /* a quoted entry, as Windows' PATH may hold */
        {"\"@\\first\";@\\second", "first"},
#endif
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aitk_str entries = AITK_STR_INIT;
        for (const char *e = cases[i].entries; *e; e++)
            aitk_str_appendf(&entries, *e == '@' ? "%s" : "%.1s", *e == '@' ? d : e);
        const char *path = aitk_str_cstr(&entries);
        char want[4300] = "";
        if (*cases[i].found)
            snprintf(want, sizeof want, "%s" SLASH "%s" SLASH PROGRAM, d, cases[i].found);
        aitk_str found = AITK_STR_INIT;
        const bool hit = aitk_path_find_program(path, "git", &found);
        if (hit != (*want != '\0') || strcmp(aitk_str_cstr(&found), want) != 0)
            fail_msg("PATH=%s: found '%s', want '%s'", path, aitk_str_cstr(&found), want);
#ifndef _WIN32
        aitk_str shell = AITK_STR_INIT;
        shell_finds(path, &shell);
        if (strcmp(aitk_str_cstr(&shell), want) != 0)
            fail_msg("PATH=%s: the shell finds '%s', the test wants '%s'", path,
                     aitk_str_cstr(&shell), want);
        aitk_str_free(&shell);
#endif
        aitk_str_free(&found);
        aitk_str_free(&entries);
    }
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_pins),
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_installed_and_judged),
        cmocka_unit_test(test_vcs_urls),
        cmocka_unit_test(test_from_a_commit),
        cmocka_unit_test(test_program_on_path),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
