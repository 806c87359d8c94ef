/* Python probe on fake environments written here (pyvenv.cfg, dist-info,
 * torch/version.py, and for the deep check an "interpreter" that is a shell
 * script printing what a real one would). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe_test.h"

static cJSON *run_quick(const char *venv, const char *profile)
{
    const char *args[] = {"--quick", "--python", venv, profile ? "--profile" : NULL, profile, NULL};
    int rc = 0;
    char empty[600];
    snprintf(empty, sizeof empty, "%s/nolib", venv);
    return pt_run(empty, NULL, args, NULL, &rc);
}

static void test_variant_mismatch(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-variant");
    const char *pkgs[] = {"torch==2.5.1+cu121", "torchvision==0.20.1+cpu", NULL};
    pt_fake_venv(venv, "3.11.9", pkgs, "12.1");
    cJSON *r = run_quick(venv, NULL);
    const cJSON *c = pt_check(r, "python.torch_companions");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "message"), "torchvision 0.20.1+cpu is built for +cpu");
    pt_assert_contains(pt_text(c, "expected"), "same CUDA variant (+cu121)");
    pt_assert_contains(pt_text(c, "remedy"), "torch==2.5.1 torchvision==0.20.1");
    pt_assert_contains(pt_text(c, "remedy"), "--index-url https://download.pytorch.org/whl/cu121");
    pt_assert_status(pt_check(r, "python.torch"), "pass");
    cJSON_Delete(r);
    free(venv);
}

static void test_companion_wrong_release(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-release");
    const char *pkgs[] = {"torch==2.7.0+cu128", "torchvision==0.21.0+cu128", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    cJSON *r = run_quick(venv, NULL);
    const cJSON *c = pt_check(r, "python.torch_companions");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "expected"), "torchvision 0.22.0");
    cJSON_Delete(r);
    free(venv);
}

static void test_python_out_of_range(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-old");
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    pt_fake_venv(venv, "3.8.18", pkgs, "12.8");
    cJSON *r = run_quick(venv, NULL);
    const cJSON *c = pt_check(r, "python.version");
    pt_assert_status(c, "fail");
    assert_string_equal(pt_text(c, "expected"), ">= 3.10");
    pt_assert_contains(pt_text(c, "source"), "ai-toolkit README");
    pt_assert_contains(pt_text(c, "remedy"), "python=3.10");
    c = pt_check(r, "python.torch_python");
    pt_assert_status(c, "fail");
    assert_string_equal(pt_text(c, "expected"), "3.9-3.13");
    pt_assert_contains(pt_text(c, "source"), "RELEASE.md");
    cJSON_Delete(r);
    free(venv);
}

/* torch 2.15.0 on PyPI has wheels for CPython 3.11 to 3.15, none for 3.10
 * (the cp3XY tags of https://pypi.org/simple/torch/, read 2026-12-05):
 * a Python 3.10 venv holding it is judged, not skipped for want of data. */
static void test_torch_215_python_range(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py310-torch215");
    const char *pkgs[] = {"torch==2.15.0+cu132", NULL};
    pt_fake_venv(venv, "3.10.14", pkgs, "13.2");
    cJSON *r = run_quick(venv, NULL);
    const cJSON *c = pt_check(r, "python.torch_python");
    pt_assert_status(c, "fail");
    assert_string_equal(pt_text(c, "expected"), "3.11-3.15");
    pt_assert_contains(pt_text(c, "source"), "PyPI torch 2.15.0");
    cJSON_Delete(r);
    free(venv);
}

static void test_profiles_judge_python_312(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py312");
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    cJSON *r = run_quick(venv, NULL);
    const cJSON *c = pt_check(r, "python.version");
    pt_assert_status(c, "pass");
    assert_string_equal(pt_text(c, "expected"), ">= 3.10");
    pt_assert_contains(pt_text(c, "source"), "ostris/ai-toolkit README");
    assert_string_equal(pt_text(r, "profile"), "ai-toolkit-current");
    cJSON_Delete(r);
    r = run_quick(venv, "seed-guide");
    c = pt_check(r, "python.version");
    pt_assert_status(c, "warn");
    assert_string_equal(pt_text(c, "expected"), "3.8-3.10");
    pt_assert_contains(pt_text(c, "source"), "seed guide");
    pt_assert_contains(pt_text(c, "message"), "outside 3.8-3.10");
    assert_string_equal(pt_text(r, "profile"), "seed-guide");
    cJSON_Delete(r);
    free(venv);
}

static void test_two_torch_installs(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-shadow");
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    /* A leftover copy on PYTHONPATH comes first on sys.path. */
    char *extra = pt_tempdir("py-shadow-pp");
    pt_write(extra, "torch-2.4.0.dist-info/METADATA", "Name: torch\nVersion: 2.4.0\n\n");
    char pp[700];
    snprintf(pp, sizeof pp, "PYTHONPATH=%s", extra);
    const char *env[] = {pp, NULL};
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(extra, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "python.shadowing");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "2.4.0 in ");
    pt_assert_contains(pt_text(c, "observed"), "2.7.0+cu128 in ");
    pt_assert_contains(pt_text(c, "message"), "Python imports 2.4.0");
    pt_assert_contains(pt_text(c, "remedy"), "pip uninstall -y torch");
    cJSON_Delete(r);
    free(extra);
    free(venv);
}

static void test_two_dist_info_same_site(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-twice");
    const char *pkgs[] = {"torch==2.6.0+cu126", "torch==2.7.0+cu126", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.6");
    cJSON *r = run_quick(venv, NULL);
    pt_assert_status(pt_check(r, "python.shadowing"), "fail");
    cJSON_Delete(r);
    free(venv);
}

/* The first line `cmd` prints, into `line` (newline kept); the test fails
 * when it prints none. */
static void first_line(const char *cmd, char *line, int size)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, size, p));
    pclose(p);
}

/* The site folder of the real venv at `venv` (its Python's X.Y into
 * `ver`, asked of its interpreter), holding torch 2.13.0 for CUDA 13.0,
 * the build ai-toolkit pins (caller frees). */
static char *site_with_torch(const char *venv, char ver[16])
{
    char cmd[900];
    snprintf(cmd, sizeof cmd, "'%s/bin/python3' -c 'import sys; print(\"%%d.%%d\" %% "
                              "sys.version_info[:2])'", venv);
    first_line(cmd, ver, 16);
    ver[strcspn(ver, "\n")] = '\0';
    char *site = pt_site(venv, ver);
    pt_write(site, "torch-2.13.0+cu130.dist-info/METADATA",
             "Name: torch\nVersion: 2.13.0+cu130\n\n");
    pt_write(site, "torch/version.py", "__version__ = '2.13.0+cu130'\ncuda = '13.0'\n");
    return site;
}

/* A real venv made with --system-site-packages that installed its own
 * torch over one it lets through (here the user site's; the finding's was
 * the base installation's): the venv's site-packages comes first on
 * sys.path, so its copy is the one imported, and pip in the venv leaves
 * the other alone. The tool failed that as a shadowed install and told
 * people to uninstall torch until pip says it is gone, which removes the
 * venv's copy first. Two copies in the venv's own folder still fail. */
static void test_venv_layered_over_system_site(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* the venv is made with Linux's layout here */
#else
    char *root = pt_tempdir("py-ssp");
    char cmd[2400], venv[700], home[720], ver[16], line[4096] = "";
    snprintf(venv, sizeof venv, "%s/v", root);
    snprintf(cmd, sizeof cmd, "python3 -m venv --system-site-packages --without-pip '%s' "
                              ">/dev/null 2>&1", venv);
    if (system(cmd) != 0) {
        free(root);
        skip(); /* no python3 with the venv module here */
    }
    char *site = site_with_torch(venv, ver);
    char user_rel[200];
    snprintf(user_rel, sizeof user_rel, ".local/lib/python%s/site-packages/"
                                        "torch-2.5.1.dist-info/METADATA", ver);
    snprintf(home, sizeof home, "%s/home", root);
    pt_write(home, user_rel, "Name: torch\nVersion: 2.5.1\n\n");
    /* The oracle: that interpreter puts the venv's folder before the user site. */
    snprintf(cmd, sizeof cmd, "HOME='%s' PYTHONNOUSERSITE= PYTHONUSERBASE= '%s/bin/python3' -c "
                              "'import sys, site; print(sys.path.index(\"%s\") < "
                              "sys.path.index(site.getusersitepackages()))'",
             home, venv, site);
    first_line(cmd, line, sizeof line);
    assert_string_equal(line, "True\n");
    char home_env[760];
    snprintf(home_env, sizeof home_env, "HOME=%s", home);
    const char *env[] = {home_env, "PYTHONUSERBASE=", "PYTHONNOUSERSITE=", "PYTHONPATH=", NULL};
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "python.shadowing");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "message"), "the venv's own torch 2.13.0+cu130 is imported, "
                                              "over the copies its --system-site-packages "
                                              "lets through");
    assert_null(strstr(pt_text(c, "remedy"), "pip uninstall"));
    cJSON_Delete(r);
    /* A leftover dist-info beside the venv's own: pip's broken upgrade. */
    pt_write(site, "torch-2.12.0.dist-info/METADATA", "Name: torch\nVersion: 2.12.0\n\n");
    r = pt_run(NULL, NULL, args, env, &rc);
    c = pt_check(r, "python.shadowing");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "message"), "torch is installed 3 times");
    cJSON_Delete(r);
    free(site);
    free(root);
#endif
}

/* torch reached through a .pth file's path line (a torch shared on a
 * cluster, `conda develop`): site.py adds each existing path line of the
 * site folder's .pth files to sys.path, relative ones from the site
 * folder, and runs the "import" lines, which are never run here. The tool
 * said "torch is not installed" while import torch worked. */
static void test_pth_path_lines(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* the venv is made with Linux's layout here */
#else
    char *root = pt_tempdir("py-pth");
    char cmd[2400], venv[700], shared[700], line[100] = "";
    snprintf(venv, sizeof venv, "%s/v", root);
    snprintf(shared, sizeof shared, "%s/shared/site", root);
    snprintf(cmd, sizeof cmd, "python3 -m venv --without-pip '%s' >/dev/null 2>&1", venv);
    if (system(cmd) != 0) {
        free(root);
        skip(); /* no python3 with the venv module here */
    }
    char ver[16];
    /* torch 2.13.0 written into the venv, then moved out to the shared folder. */
    char *site = site_with_torch(venv, ver);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && mv '%s'/torch* '%s'/", shared, site, shared);
    assert_int_equal(system(cmd), 0);
    pt_write(site, "extra/diffusers-0.36.0.dist-info/METADATA",
             "Name: diffusers\nVersion: 0.36.0\n\n");
    /* An editable install: pip's dist-info here, the egg-info in its source. */
    pt_write(site, "peft-0.15.0.dist-info/METADATA", "Name: peft\nVersion: 0.15.0\n\n");
    pt_write(site, "extra/peft.egg-info/PKG-INFO", "Name: peft\nVersion: 0.15.0\n\n");
    char pth[1600];
    snprintf(pth, sizeof pth, "# shared torch\nimport os; os.environ.setdefault('X', '1')\n"
                              "%s\nextra  \n/nonexistent/folder\n", shared);
    pt_write(site, "shared_torch.pth", pth);
    /* The oracle: the venv's interpreter has both folders on sys.path. */
    snprintf(cmd, sizeof cmd, "'%s/bin/python3' -c 'import sys; print(\"%s\" in sys.path, "
                              "\"%s/extra\" in sys.path)'", venv, shared, site);
    first_line(cmd, line, sizeof line);
    assert_string_equal(line, "True True\n");
    const char *args[] = {"--quick", "--python", venv, NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "python.torch");
    pt_assert_status(c, "pass");
    assert_string_equal(pt_text(c, "observed"), "2.13.0+cu130 (CUDA 13.0)");
    pt_assert_contains(pt_text(pt_check(r, "python.requirements"), "observed"),
                       "diffusers 0.36.0");
    pt_assert_status(pt_check(r, "python.shadowing"), "pass");
    cJSON_Delete(r);
    free(site);
    free(root);
#endif
}

static void test_cpu_torch(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-cpu");
    const char *pkgs[] = {"torch==2.7.0+cpu", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, NULL);
    cJSON *r = run_quick(venv, NULL);
    const cJSON *c = pt_check(r, "python.torch");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "message"), "CPU-only");
    pt_assert_contains(pt_text(c, "remedy"), "--index-url");
    /* Facts read from version.py land in the environment record. */
    const cJSON *env = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "environment"), "python"),
        "environments"), 0);
    const cJSON *torch = cJSON_GetObjectItemCaseSensitive(env, "torch");
    assert_string_equal(pt_text(torch, "git_version"), "0123456789abcdef");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(torch, "cuda")));
    assert_string_equal(pt_text(torch, "variant"), "cpu");
    cJSON_Delete(r);
    free(venv);
}

static void test_no_torch_and_requirements(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-empty");
    const char *pkgs[] = {"diffusers==0.33.0", "transformers==4.52.0", "peft==0.15.0",
                          "accelerate==1.7.0", "optimum-quanto==0.2.7", "torchao==0.11.0", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, NULL);
    cJSON *r = run_quick(venv, NULL);
    pt_assert_status(pt_check(r, "python.torch"), "fail");
    const cJSON *c = pt_check(r, "python.requirements");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "observed"), "optimum-quanto 0.2.7");
    pt_assert_contains(pt_text(c, "observed"), "missing: bitsandbytes");
    cJSON_Delete(r);
    free(venv);
}

/* include-system-site-packages is read as site.py reads it, lower-cased
 * (CPython Lib/site.py, venv(): system_site = value.lower()): "True"
 * lets the base installation's packages in, as "true" does. */
static void test_system_site_any_case(void **state)
{
    (void)state;
    char *root = pt_tempdir("py-sys-case");
    char base_site[1024], cfg[1200], venv[400];
    snprintf(base_site, sizeof base_site, "%s/base/lib/python3.11/site-packages", root);
    pt_write(base_site, "torch-2.5.1.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\nSummary: x\n\nbody\n");
    snprintf(venv, sizeof venv, "%s/venv", root);
    pt_fake_venv(venv, "3.11.7", NULL, NULL);
    const char *values[] = {"True", "TRUE", "true", "false", "False"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(cfg, sizeof cfg, "home = %s/base/bin\ninclude-system-site-packages = %s\n"
                                  "version = 3.11.7\n", root, values[i]);
        pt_write(venv, "pyvenv.cfg", cfg);
        cJSON *r = run_quick(venv, NULL);
        const char *obs = pt_text(pt_check(r, "python.torch"), "observed");
        const int seen = strstr(obs, "2.5.1") != NULL;
        if (seen != (i < 3))
            fail_msg("include-system-site-packages = %s: python.torch observed '%s'", values[i],
                     obs);
        cJSON_Delete(r);
    }
    free(root);
}

/* A venv uv made (pyvenv.cfg as uv 0.13.10 writes it) has no pip: the
 * remedies say uv's commands for it; the same venv with pip keeps pip's. */
static void test_uv_venv_remedies(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-uv");
    const char *pkgs[] = {"diffusers==0.33.0", NULL};
    pt_fake_venv(venv, "3.11.7", pkgs, NULL);
    pt_write(venv, "pyvenv.cfg",
             "home = /root/.pyenv/versions/3.11.7/bin\nimplementation = CPython\n"
             "uv = 0.13.10\nversion_info = 3.11.7\ninclude-system-site-packages = false\n");
    cJSON *r = run_quick(venv, NULL);
    char want[1024];
    snprintf(want, sizeof want, "e.g. uv pip install --python %s torch torchvision", venv);
    pt_assert_contains(pt_text(pt_check(r, "python.torch"), "remedy"), want);
    snprintf(want, sizeof want, "active: uv pip install --python %s -r requirements.txt", venv);
    pt_assert_contains(pt_text(pt_check(r, "python.requirements"), "remedy"), want);
    cJSON_Delete(r);
    /* uv venv --seed puts pip in: pip's own commands then work. */
    char *site = pt_site(venv, "3.11.7");
    pt_write(site, "pip/__init__.py", "__version__ = \"25.3\"\n");
    r = run_quick(venv, NULL);
    const char *fix = pt_text(pt_check(r, "python.torch"), "remedy");
    pt_assert_contains(fix, "e.g. pip install torch torchvision");
    if (strstr(fix, "uv pip"))
        fail_msg("a venv with pip got uv's commands: %s", fix);
    cJSON_Delete(r);
    free(site);
    free(venv);
}

/* With --aitk-dir the checkout's requirements.txt is read as pip reads it:
 * what it lists and is not installed, and pins the installed versions do
 * not meet, are warnings; all met, the check passes and says how many. */
static void test_checkout_requirements(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-checkout-env");
    const char *pkgs[] = {"torch==2.9.1+cu128", "torchvision==0.24.1+cu128",
                          "diffusers==0.36.0", "transformers==4.57.3", "peft==0.18.1",
                          "accelerate==1.7.0", "optimum-quanto==0.2.4", "torchao==0.10.0",
                          "bitsandbytes==0.48.2", "lycoris-lora==1.8.3", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    char *checkout = pt_tempdir("py-checkout");
    pt_write(checkout, "requirements.txt", "-r requirements_base.txt\nscipy==1.12.0\n");
    pt_write(checkout, "requirements_base.txt",
             "torchao==0.10.0\ngit+https://github.com/huggingface/diffusers.git@c9438378\n"
             "transformers==5.5.3\nlycoris-lora==1.8.3\npeft==0.18.1\n");
    const char *env[] = {"PATH=/nonexistent", NULL};
    const char *args[] = {"--quick", "--python", venv, "--aitk-dir", checkout, NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "python.requirements");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "observed"), "requirements.txt: scipy");
    pt_assert_contains(pt_text(c, "observed"),
                       "not as pinned: transformers 4.57.3 (==5.5.3 at requirements_base.txt:3)");
    pt_assert_contains(pt_text(c, "expected"), "the 6 packages");
    /* diffusers from an index where the file asks for a commit. */
    pt_assert_contains(pt_text(c, "observed"),
                       "not from the commit asked for: diffusers 0.36.0 from a package index (no "
                       "direct_url.json), not git+https://github.com/huggingface/diffusers.git"
                       "@c9438378 "
                       "(requirements_base.txt:2)");
    pt_assert_contains(pt_text(c, "message"), "'Diffusers is out of date'");
    pt_assert_contains(pt_text(c, "remedy"),
                       "pip uninstall -y diffusers, then pip install -r requirements.txt");
    /* No git on PATH: pip would stop at the diffusers line. */
    pt_assert_contains(pt_text(c, "observed"), "; git not on PATH");
    pt_assert_contains(pt_text(c, "message"), "\"Cannot find command 'git'\"");
    pt_assert_contains(pt_text(c, "remedy"), "First install git and open a new terminal (");
    pt_assert_contains(pt_text(c, "remedy"), "; then in the ai-toolkit folder, with the "
                                             "environment active: pip uninstall -y diffusers");
    cJSON_Delete(r);
    /* A git program on PATH: nothing said of it. A folder named git, or a
     * file that cannot run, is no program. */
    char *tools = pt_tempdir("py-checkout-tools");
    pt_write(tools, "not-runnable/git", "#!/bin/sh\n");
    pt_write(tools, "folder/git/README", "a folder named git\n");
    pt_write(tools, "runnable/git", "#!/bin/sh\nexit 0\n");
    char git[4200], path_env[4300];
    snprintf(git, sizeof git, "%s/runnable/git", tools);
    assert_int_equal(chmod(git, 0755), 0);
    snprintf(path_env, sizeof path_env, "PATH=%s/not-runnable:%s/folder:/nonexistent", tools,
             tools);
    const char *no_git_env[] = {path_env, NULL};
    r = pt_run(NULL, NULL, args, no_git_env, &rc);
    pt_assert_contains(pt_text(pt_check(r, "python.requirements"), "observed"),
                       "git not on PATH");
    cJSON_Delete(r);
    snprintf(path_env, sizeof path_env, "PATH=%s/folder::%s/runnable/", tools, tools);
    const char *git_env[] = {path_env, NULL};
    r = pt_run(NULL, NULL, args, git_env, &rc);
    c = pt_check(r, "python.requirements");
    pt_assert_status(c, "warn");
    if (strstr(pt_text(c, "observed"), "PATH") || strstr(pt_text(c, "remedy"), "install git"))
        fail_msg("git is on PATH: %s / %s", pt_text(c, "observed"), pt_text(c, "remedy"));
    cJSON_Delete(r);
    free(tools);
    /* Installed from that commit, as pip records it: nothing said of it. */
    char *site = pt_site(venv, "3.12.3");
    pt_write(site, "diffusers-0.36.0.dist-info/direct_url.json",
             "{\"url\": \"https://github.com/huggingface/diffusers.git\", \"vcs_info\": "
             "{\"commit_id\": \"c943837899b16cbae2f619b8dd4f7bb6f07dd81a\", \"vcs\": "
             "\"git\"}}");
    free(site);
    r = pt_run(NULL, NULL, args, env, &rc);
    c = pt_check(r, "python.requirements");
    pt_assert_status(c, "warn");
    if (strstr(pt_text(c, "observed"), "not from the commit"))
        fail_msg("diffusers from the commit asked for: %s", pt_text(c, "observed"));
    /* Nothing to install from a repository: git is not needed. */
    if (strstr(pt_text(c, "observed"), "git not on PATH"))
        fail_msg("no repository to install from: %s", pt_text(c, "observed"));
    pt_assert_contains(pt_text(c, "remedy"), "pip install -r requirements.txt");
    cJSON_Delete(r);
    /* Everything it lists installed at its pins: a pass. */
    pt_write(checkout, "requirements.txt", "-r requirements_base.txt\n");
    pt_write(checkout, "requirements_base.txt", "torchao==0.10.0\nlycoris-lora==1.8.3\n");
    r = pt_run(NULL, NULL, args, env, &rc);
    c = pt_check(r, "python.requirements");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "expected"), "the 2 packages");
    cJSON_Delete(r);
    /* An include that is not there: pip cannot read the file either. */
    pt_write(checkout, "requirements.txt", "-r gone.txt\n");
    r = pt_run(NULL, NULL, args, env, &rc);
    c = pt_check(r, "python.requirements");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "observed"),
                       "requirements not read: requirements.txt:1: -r gone.txt");
    cJSON_Delete(r);
    free(checkout);
    free(venv);
}

/* A standard run whose environment's interpreter is the shell script
 * `python` (answering as the deep check's real one would, or not), in a fake
 * venv holding `pkgs` (CUDA `cuda`). Returns the report; *venv is freed by
 * the caller. */
static cJSON *run_scripted(const char *name, const char *const *pkgs, const char *cuda,
                           const char *python, char **venv)
{
    *venv = pt_tempdir(name);
    pt_fake_venv(*venv, "3.12.3", pkgs, cuda);
    pt_write(*venv, "bin/python3", python);
    pt_chmod_x(*venv, "bin/python3");
    const char *args[] = {"--python", *venv, "--model", "flux1-dev", "--steps", "1", NULL};
    int rc = 0;
    return pt_run(*venv, NULL, args, NULL, &rc);
}

/* Standard level runs the interpreter: here a script that answers like a
 * real one whose torch import fails. */
static void test_deep_import_error(void **state)
{
    (void)state;
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    char *venv;
    cJSON *r = run_scripted("py-deep", pkgs, "12.8",
                            "#!/bin/sh\necho 'noise before the answer'\n"
                            "echo 'AITK-JSON:{\"python\": \"3.12.3\", \"error\": "
                            "\"ImportError: libcudnn.so.9: "
                            "cannot open shared object file: No such file or directory\"}'\n",
                            &venv);
    const cJSON *c = pt_check(r, "python.import_torch");
    pt_assert_status(c, "fail");
    assert_string_equal(pt_text(c, "observed"),
                        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory");
    cJSON_Delete(r);
    free(venv);
}

/* No torch at all: import torch fails because python.torch does, and says
 * so, so the report's "Fix first" names python.torch alone. */
static void test_deep_no_torch_follows(void **state)
{
    (void)state;
    const char *pkgs[] = {"diffusers==0.33.0", NULL};
    char *venv;
    cJSON *r = run_scripted("py-notorch", pkgs, NULL,
                            "#!/bin/sh\necho 'AITK-JSON:{\"python\": \"3.12.3\", \"error\": "
                            "\"ModuleNotFoundError: No module named '\"'\"'torch'\"'\"'\"}'\n",
                            &venv);
    pt_assert_status(pt_check(r, "python.torch"), "fail");
    const cJSON *c = pt_check(r, "python.import_torch");
    pt_assert_status(c, "fail");
    assert_string_equal(pt_text(c, "observed"), "ModuleNotFoundError: No module named 'torch'");
    assert_string_equal(pt_text(c, "follows"), "python.torch");
    const cJSON *heads = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "summary"), "fix_first");
    const cJSON *h;
    cJSON_ArrayForEach(h, heads)
    {
        if (strcmp(pt_text(h, "id"), "python.import_torch") == 0)
            fail_msg("python.import_torch is listed to fix first beside python.torch");
    }
    cJSON_Delete(r);
    free(venv);
}

/* A CPU-only torch imports but cannot use CUDA: python.torch has the cause
 * and the pip line, and import torch follows it. */
static void test_deep_cpu_torch_follows(void **state)
{
    (void)state;
    const char *pkgs[] = {"torch==2.7.0+cpu", NULL};
    char *venv;
    cJSON *r = run_scripted("py-deepcpu", pkgs, NULL,
                            "#!/bin/sh\necho 'AITK-JSON:{\"python\": \"3.12.3\", "
                            "\"torch\": \"2.7.0+cpu\", \"cuda_build\": null, "
                            "\"cuda_available\": false, \"device_count\": 0}'\n",
                            &venv);
    pt_assert_contains(pt_text(pt_check(r, "python.torch"), "message"), "CPU-only");
    const cJSON *c = pt_check(r, "python.import_torch");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "CUDA build none");
    assert_string_equal(pt_text(c, "follows"), "python.torch");
    cJSON_Delete(r);
    free(venv);
}

/* An interpreter that answers and exits, leaving a grandchild that holds
 * its output pipes: the answer counts at once (it was reported as "no
 * answer within 120 s" after the whole limit, past this test's own). */
static void test_deep_grandchild_holds_pipes(void **state)
{
    (void)state;
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    char *venv;
    cJSON *r = run_scripted("py-grandchild", pkgs, "12.8",
                            "#!/bin/sh\nsleep 600 &\n"
                            "echo 'AITK-JSON:{\"python\": \"3.12.3\", \"error\": "
                            "\"ImportError: from the "
                            "interpreter that left a helper\"}'\n",
                            &venv);
    const cJSON *c = pt_check(r, "python.import_torch");
    pt_assert_status(c, "fail");
    assert_string_equal(pt_text(c, "observed"),
                        "ImportError: from the interpreter that left a helper");
    cJSON_Delete(r);
    free(venv);
}

static void test_deep_garbled_answer(void **state)
{
    (void)state;
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    char *venv;
    cJSON *r = run_scripted("py-garbled", pkgs, "12.8",
                            "#!/bin/sh\necho 'AITK-JSON:[1, 2'\necho 'Segmentation fault' >&2\n"
                            "exit 139\n",
                            &venv);
    const cJSON *c = pt_check(r, "python.import_torch");
    pt_assert_status(c, "fail");
    assert_string_equal(pt_text(c, "observed"), "Segmentation fault");
    pt_assert_contains(pt_text(c, "message"), "exited with 139 before answering");
    cJSON_Delete(r);
    free(venv);
}

/* A venv of torch 2.7.0+cu128 whose interpreter gives the deep probe's
 * answer `fields` (JSON members after torch's version and CUDA build, as a
 * shell echo writes them), and the arguments of a run that asks it. */
static char *deep_venv(const char *name, const char *fields, const char *args[7])
{
    char *venv = pt_tempdir(name);
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    char script[2048];
    int n = snprintf(script, sizeof script,
                     "#!/bin/sh\necho 'AITK-JSON:{\"torch\": \"2.7.0+cu128\", "
                     "\"cuda_build\": \"12.8\", %s}'\n", fields);
    assert_true(n > 0 && (size_t)n < sizeof script);
    pt_write(venv, "bin/python3", script);
    pt_chmod_x(venv, "bin/python3");
    const char *run[] = {"--python", venv, "--model", "flux1-dev", "--steps", "1", NULL};
    memcpy(args, run, sizeof run);
    return venv;
}

static void test_deep_arch_list_wins(void **state)
{
    (void)state;
    /* A custom build whose own arch list lacks sm_120 although the official
     * cu128 wheel has it: the installed wheel's answer must win. */
    const char *args[7];
    char *venv = deep_venv("py-deep-arch",
                           "\"cuda_available\": true, \"device_count\": 1, \"arch_list\": "
                           "[\"sm_80\", \"sm_90\"], \"cudnn\": 90100, \"warnings\": []",
                           args);
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "driver=575.64.03;cuda=12090;gpu=NVIDIA GeForce RTX 5090|12.0|32607",
                      args, NULL, &rc);
    const cJSON *c = pt_check(r, "python.import_torch");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "cuDNN 90100");
    c = pt_check(r, "gpu.arch_for_torch");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "source"), "get_arch_list");
    pt_assert_contains(pt_text(c, "expected"), "sm_80 sm_90");
    cJSON_Delete(r);
    free(venv);
}

/* torch imports and sees the GPU, but torch.backends.cudnn.version() raises
 * (torch 2.15.0 built against cuDNN 9.26 finding 9.19: a minor older than
 * its own, which torch refuses): a FAIL naming the versions, on one line. */
static void test_deep_cudnn_refused(void **state)
{
    (void)state;
    const char *args[7];
    char *venv = deep_venv(
        "py-deep-cudnn",
        "\"cuda_available\": true, \"device_count\": 1, \"arch_list\": [\"sm_90\"], "
        "\"cudnn_error\": \"RuntimeError: cuDNN version incompatibility: PyTorch was compiled  "
        "against (9, 26, 0) but found runtime version (9, 19, 0).\\\\nPyTorch already comes "
        "bundled with cuDNN.\", \"warnings\": []",
        args);
    int rc = 0;
    cJSON *r = pt_run(AITK_STUB_DIR, "driver=575.64.03;cuda=12090;gpu=NVIDIA H100 80GB HBM3|9.0|81559",
                      args, NULL, &rc);
    const cJSON *c = pt_check(r, "python.import_torch");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "message"), "torch imports but refuses its cuDNN: RuntimeError: "
                                              "cuDNN version incompatibility");
    pt_assert_contains(pt_text(c, "message"), "runtime version (9, 19, 0).");
    assert_null(strstr(pt_text(c, "message"), "bundled"));
    pt_assert_contains(pt_text(c, "remedy"), "nvidia-cudnn pin");
    cJSON_Delete(r);
    free(venv);
}

static void test_python_path_missing(void **state)
{
    (void)state;
    const char *args[] = {"--quick", "--python", "/nonexistent/aitk/bin/python3", NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "python.env");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "--python /nonexistent/aitk/bin/python3: no such file");
    assert_null(pt_find_check(r, "python.torch"));
    cJSON_Delete(r);
}

/* --python naming something that is not a Python: a plain file, a folder
 * without an interpreter. Both fail python.env instead of passing as "an
 * installation" in /etc. */
static void test_python_path_not_python(void **state)
{
    (void)state;
    char *empty = pt_tempdir("py-empty");
    /* /bin/false runs, but is no Python: its neighbours (/lib/python3.x)
     * would otherwise be read as its environment. */
    const char *paths[] = {"/etc/passwd", empty, "/bin/false"};
    const char *want[] = {"not an executable program", "no Python interpreter in this folder",
                          "not a Python interpreter"};
    for (size_t i = 0; i < 3; i++) {
        const char *args[] = {"--quick", "--python", paths[i], NULL};
        int rc = 0;
        cJSON *r = pt_run(NULL, NULL, args, NULL, &rc);
        const cJSON *c = pt_check(r, "python.env");
        pt_assert_status(c, "fail");
        pt_assert_contains(pt_text(c, "observed"), want[i]);
        /* A checkout's folder is --aitk-dir's to take, not --python's. */
        pt_assert_contains(pt_text(c, "remedy"), "For an ai-toolkit checkout, give its folder "
                                                 "with --aitk-dir instead");
        cJSON_Delete(r);
    }
    free(empty);
}

static void test_deep_interpreter_not_runnable(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-noexec");
    const char *pkgs[] = {"torch==2.7.0+cu128", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    char py[800];
    snprintf(py, sizeof py, "%s/bin/python3", venv);
    assert_int_equal(chmod(py, 0644), 0); /* exists, cannot be executed */
    const char *args[] = {"--python", venv, "--model", "flux1-dev", "--steps", "1", NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "python.import_torch");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "message"), "could not be started");
    cJSON_Delete(r);
    free(venv);
}

static void test_aitk_dir_venv(void **state)
{
    (void)state;
    char *aitk = pt_tempdir("aitk-checkout");
    char venv[700];
    snprintf(venv, sizeof venv, "%s/venv", aitk);
    const char *pkgs[] = {"torch==2.9.1+cu128", "torchvision==0.24.1+cu128",
                          "torchaudio==2.9.1+cu128", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
    /* No PATH python: the checkout's venv is the only candidate. */
    const char *env[] = {"PATH=/nonexistent", NULL};
    const char *args[] = {"--quick", "--aitk-dir", aitk, NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "python.env");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "aitk-checkout");
    pt_assert_contains(pt_text(c, "observed"), "(--aitk-dir)");
    pt_assert_status(pt_check(r, "python.torch_companions"), "pass");
    pt_assert_status(pt_check(r, "python.torch_python"), "pass");
    cJSON_Delete(r);
    /* With .venv beside venv, ai-toolkit's UI trains in .venv
     * (ui/cron/pythonPath.ts): the one judged. Its torch is CPU-only. */
    char dotvenv[700];
    snprintf(dotvenv, sizeof dotvenv, "%s/.venv", aitk);
    const char *cpu[] = {"torch==2.9.1", NULL};
    pt_fake_venv(dotvenv, "3.12.3", cpu, NULL);
    r = pt_run(NULL, NULL, args, env, &rc);
    pt_assert_contains(pt_text(pt_check(r, "python.env"), "observed"), "/.venv");
    pt_assert_contains(pt_text(pt_check(r, "python.torch"), "observed"), "2.9.1");
    cJSON_Delete(r);
    const char *bad[] = {"--quick", "--aitk-dir", "/nonexistent/ai-toolkit", NULL};
    r = pt_run(NULL, NULL, bad, env, &rc);
    pt_assert_status(pt_check(r, "python.env"), "fail");
    cJSON_Delete(r);
    /* Run from a folder with a .venv of its own: the checkout named is
     * where ai-toolkit runs, so its .venv is judged, not the stray one. */
    char *elsewhere = pt_tempdir("stray-venv");
    char stray[700], here[4096];
    snprintf(stray, sizeof stray, "%s/.venv", elsewhere);
    const char *old[] = {"torch==2.4.0", NULL};
    pt_fake_venv(stray, "3.11.2", old, NULL);
    assert_non_null(getcwd(here, sizeof here));
    assert_int_equal(chdir(elsewhere), 0);
    r = pt_run(NULL, NULL, args, env, &rc);
    assert_int_equal(chdir(here), 0);
    c = pt_check(r, "python.env");
    pt_assert_contains(pt_text(c, "observed"), "aitk-checkout");
    pt_assert_contains(pt_text(c, "observed"), "(--aitk-dir)");
    pt_assert_contains(pt_text(pt_check(r, "python.torch"), "observed"), "2.9.1");
    cJSON_Delete(r);
    free(elsewhere);
    free(aitk);
}

/* A venv put first on PATH without activation (no $VIRTUAL_ENV), as the
 * lent H200's container had it: its bin/python3 is a link to the base
 * interpreter, and following the link judged /usr ("torch: not installed")
 * while `import torch` in the same interpreter worked. The venv is made by
 * Python's own venv module; the oracle is that interpreter's sys.prefix. */
static void test_path_venv_not_activated(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* Windows venvs copy python.exe; there is no link to follow */
#else
    char *root = pt_tempdir("path-venv");
    char cmd[1400], venv[700], prefix[700] = "", path[800];
    snprintf(venv, sizeof venv, "%s/venv", root);
    snprintf(cmd, sizeof cmd, "python3 -m venv --without-pip '%s' >/dev/null 2>&1", venv);
    if (system(cmd) != 0) {
        free(root);
        skip(); /* no python3 with the venv module here */
    }
    snprintf(cmd, sizeof cmd, "'%s/bin/python3' -c 'import sys; print(sys.prefix)'", venv);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(prefix, sizeof prefix, p));
    pclose(p);
    prefix[strcspn(prefix, "\n")] = '\0';
    /* The report names the venv by its real path (a temporary folder may
     * sit behind a symbolic link). */
    char *real = realpath(prefix, NULL);
    assert_non_null(real);
    snprintf(prefix, sizeof prefix, "%s", real);
    free(real);
    snprintf(path, sizeof path, "PATH=%s/bin:/usr/bin:/bin", venv);
    const char *env[] = {path, "VIRTUAL_ENV=", "CONDA_PREFIX=", NULL};
    const char *args[] = {"--quick", NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "python.env");
    pt_assert_contains(pt_text(c, "observed"), prefix);
    pt_assert_contains(pt_text(c, "observed"), "(python3 on PATH)");
    /* The venv has no torch: the message must name the venv, not the base. */
    pt_assert_contains(pt_text(pt_check(r, "python.torch"), "message"), prefix);
    cJSON_Delete(r);
    free(root);
#endif
}

/* A real venv (python3 -m venv) made from a base Python that is then
 * renamed, as uninstalling or moving that Python leaves it: pyvenv.cfg's
 * home names a missing folder and bin/python3 is a dangling link. The
 * venv's packages are all still there, and the tool passed python.env and
 * every torch check while its python could not start. The base here is a
 * folder whose bin/python3 links to this machine's interpreter, so that
 * the venv records that folder as home. */
static void test_venv_base_gone(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* Windows venvs copy python.exe; the link is Linux's layout */
#else
    char *root = pt_tempdir("py-base-gone");
    char cmd[4096], exe[600] = "", base[700], venv[700], moved[720];
    FILE *p = popen("python3 -c 'import sys; print(sys.executable)' 2>/dev/null", "r");
    if (!p || !fgets(exe, sizeof exe, p) || pclose(p) != 0) {
        free(root);
        skip(); /* no python3 here */
    }
    exe[strcspn(exe, "\n")] = '\0';
    snprintf(base, sizeof base, "%s/base312", root);
    snprintf(venv, sizeof venv, "%s/venv", root);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/bin' && ln -s '%s' '%s/bin/python3' && "
                              "'%s/bin/python3' -m venv --without-pip '%s' >/dev/null 2>&1",
             base, exe, base, base, venv);
    if (system(cmd) != 0) {
        free(root);
        skip(); /* no venv module */
    }
    char want[1000];
    snprintf(cmd, sizeof cmd, "grep -qx 'home = %s/bin' '%s/pyvenv.cfg'", base, venv);
    if (system(cmd) != 0) {
        free(root);
        skip(); /* this python3 wrote another home (a shim resolves itself) */
    }
    /* The packages the finding's venv held: torch 2.13.0 for CUDA 13.0. */
    char ver[16];
    free(site_with_torch(venv, ver));
    snprintf(moved, sizeof moved, "%s.renamed", base);
    assert_int_equal(rename(base, moved), 0);
    /* The oracle: the venv's python no longer starts. */
    snprintf(cmd, sizeof cmd, "'%s/bin/python3' -c pass >/dev/null 2>&1", venv);
    assert_int_not_equal(system(cmd), 0);
    /* Found as the active venv (as ./venv is: the finding's case), and
     * named with --python: the venv's folder, its interpreter's link. */
    char link[720], active[720];
    snprintf(link, sizeof link, "%s/bin/python3", venv);
    snprintf(active, sizeof active, "VIRTUAL_ENV=%s", venv);
    const char *named[] = {NULL, venv, link};
    const char *env[] = {active, NULL};
    int rc = 0;
    cJSON *r;
    const cJSON *c;
    for (size_t i = 0; i < 3; i++) {
        const char *args[] = {"--quick", named[i] ? "--python" : NULL, named[i], NULL};
        r = pt_run(NULL, NULL, args, named[i] ? NULL : env, &rc);
        c = pt_check(r, "python.env");
        pt_assert_status(c, "fail");
        snprintf(want, sizeof want, "pyvenv.cfg names home = %s/bin, which no longer exists",
                 base);
        pt_assert_contains(pt_text(c, "message"), want);
        pt_assert_contains(pt_text(c, "remedy"), "python3 -m venv --clear ");
        snprintf(want, sizeof want, "reinstall the Python that was at %s/bin", base);
        pt_assert_contains(pt_text(c, "remedy"), want);
        cJSON_Delete(r);
    }
    /* Beyond --quick, import torch fails for that reason, and says so. */
    const char *standard[] = {"--python", venv, "--model", "flux1-dev", "--steps", "1", NULL};
    r = pt_run(NULL, NULL, standard, NULL, &rc);
    c = pt_check(r, "python.import_torch");
    pt_assert_status(c, "fail");
    assert_string_equal(pt_text(c, "follows"), "python.env");
    cJSON_Delete(r);
    free(root);
#endif
}

/* A venv made on Windows, read by the Linux build (WSL's /mnt/c): its
 * pyvenv.cfg as CPython 3.11's venv writes it there (Lib/venv/__init__.py,
 * create_configuration), Scripts\python.exe, which WSL's drvfs shows as
 * executable. Its home is no folder here, and python.env said that Python
 * was uninstalled or moved and told to recreate the venv in place with
 * --clear, which would wipe the venv Windows trains in. */
static void test_windows_venv_on_linux(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* the Linux build's reading of a Windows venv */
#else
    char *venv = pt_tempdir("py-winvenv");
    pt_write(venv, "pyvenv.cfg",
             "home = C:\\Users\\Ana\\AppData\\Local\\Programs\\Python\\Python311\r\n"
             "include-system-site-packages = false\r\nversion = 3.11.9\r\n"
             "executable = C:\\Users\\Ana\\AppData\\Local\\Programs\\Python\\Python311"
             "\\python.exe\r\ncommand = C:\\Users\\Ana\\AppData\\Local\\Programs\\Python"
             "\\Python311\\python.exe -m venv C:\\ai-toolkit\\venv\r\n");
    pt_write(venv, "Scripts/python.exe", "MZ\n");
    pt_chmod_x(venv, "Scripts/python.exe");
    pt_write(venv, "Lib/site-packages/torch-2.7.1+cu128.dist-info/METADATA",
             "Name: torch\nVersion: 2.7.1+cu128\n\n");
    char exe[700];
    snprintf(exe, sizeof exe, "%s/Scripts/python.exe", venv);
    const char *named[] = {venv, exe};
    for (size_t i = 0; i < 2; i++) {
        cJSON *r = run_quick(named[i], NULL);
        const cJSON *c = pt_check(r, "python.env");
        pt_assert_status(c, "fail");
        pt_assert_contains(pt_text(c, "message"), "this venv was made on Windows: pyvenv.cfg "
                                                  "names home = C:\\Users\\Ana\\AppData");
        pt_assert_contains(pt_text(c, "remedy"), "aitk-validate.exe");
        if (strstr(pt_text(c, "remedy"), "--clear") || strstr(pt_text(c, "message"), "gone"))
            fail_msg("python.env calls the Windows venv broken here: %s %s",
                     pt_text(c, "message"), pt_text(c, "remedy"));
        cJSON_Delete(r);
    }
    free(venv);
#endif
}

/* A torch for another Python in a venv's site-packages (pip install
 * --target with another --python-version, a folder copied from another
 * venv): Python 3.12 imports only extension files tagged for 3.12
 * (CPython Python/dynload_shlib.c), so torch._C of a cp311 wheel is never
 * found. Its WHEEL's Tag says so; the same torch for cp312 passes. */
static void test_torch_wheel_for_another_python(void **state)
{
    (void)state;
    static const char *const tags[] = {"cp312-cp312", "cp311-cp311"};
    for (size_t i = 0; i < 2; i++) {
        char *venv = pt_tempdir(i ? "py-wheel-cp311" : "py-wheel-cp312");
        const char *pkgs[] = {"torch==2.7.1+cu128", NULL};
        pt_fake_venv(venv, "3.12.3", pkgs, "12.8");
        char wheel[200];
        snprintf(wheel, sizeof wheel, "Wheel-Version: 1.0\nGenerator: setuptools (75.8.0)\n"
                                      "Root-Is-Purelib: false\nTag: %s-manylinux_2_28_x86_64\n\n",
                 tags[i]);
        char *site = pt_site(venv, "3.12.3");
        pt_write(site, "torch-2.7.1+cu128.dist-info/WHEEL", wheel);
        free(site);
        cJSON *r = run_quick(venv, NULL);
        const cJSON *c = pt_check(r, "python.torch_python");
        pt_assert_status(c, i ? "fail" : "pass");
        if (i)
            pt_assert_contains(pt_text(c, "message"),
                               "this torch's wheel was built for Python 3.11");
        cJSON_Delete(r);
        free(venv);
    }
}

/* A real venv moved after it was made, then activated: its activate
 * script sets $VIRTUAL_ENV to the old place, which is gone. The tool
 * skipped the missing folder without a word and judged the next
 * environment (here the checkout's venv, the moved one itself): it now
 * warns, naming the variable, the missing folder and what was judged. */
static void test_stale_virtual_env(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* the same rule there; the venv is made with Linux's layout here */
#else
    char *root = pt_tempdir("py-moved");
    char cmd[4096], orig[700], aitk[700], venv[720], want[1600];
    snprintf(orig, sizeof orig, "%s/orig/venv", root);
    snprintf(aitk, sizeof aitk, "%s/moved", root);
    snprintf(venv, sizeof venv, "%s/venv", aitk);
    snprintf(cmd, sizeof cmd, "python3 -m venv --without-pip '%s' >/dev/null 2>&1 && "
                              "mkdir '%s' && mv '%s' '%s'", orig, aitk, orig, venv);
    if (system(cmd) != 0) {
        free(root);
        skip(); /* no python3 with the venv module here */
    }
    char active[720];
    snprintf(active, sizeof active, "VIRTUAL_ENV=%s", orig);
    const char *env[] = {active, "PATH=/nonexistent", "CONDA_PREFIX=", NULL};
    const char *args[] = {"--quick", "--aitk-dir", aitk, NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "python.env");
    pt_assert_status(c, "warn");
    snprintf(want, sizeof want, "$VIRTUAL_ENV names %s, a folder that does not exist", orig);
    pt_assert_contains(pt_text(c, "message"), want);
    pt_assert_contains(pt_text(c, "message"), "(--aitk-dir) was judged instead: it is that "
                                              "venv, moved");
    pt_assert_contains(pt_text(c, "remedy"), "Run deactivate");
    snprintf(want, sizeof want, "or move it back to %s", orig);
    pt_assert_contains(pt_text(c, "remedy"), want);
    cJSON_Delete(r);
    free(root);
#endif
}

/* A Python installation (no venv) with torch at <site_rel> of prefix; its
 * site.py names dist-packages when debian (Debian's and Ubuntu's do). */
static void fake_installation(const char *prefix, int debian, const char *site_rel,
                              const char *torch_version)
{
    pt_write(prefix, "lib/python3.11/site.py",
             debian ? "# Debian: local/lib/python3.X/dist-packages, lib/python3/dist-packages\n"
                    : "# CPython's own site.py\n");
    pt_write(prefix, "bin/python3", "#!/bin/sh\nexit 99\n");
    pt_chmod_x(prefix, "bin/python3");
    char rel[300], meta[300];
    snprintf(rel, sizeof rel, "%s/torch-%s.dist-info/METADATA", site_rel, torch_version);
    snprintf(meta, sizeof meta, "Name: torch\nVersion: %s\n\n", torch_version);
    pt_write(prefix, rel, meta);
}

/* Debian's and Ubuntu's own Python reads <prefix>/local/lib/python3.X/
 * dist-packages (where `pip install --break-system-packages` puts torch,
 * as ai-toolkit's own Docker image does: ostris/ai-toolkit docker/Dockerfile
 * at 27a03a9, Ubuntu 24.04's python3.12) and not lib/python3.X/site-packages
 * (the python3.11 package's site.py, getsitepackages). The tool read only
 * site-packages and said "torch: not installed" of such machines; the
 * real-world test realworld.linux.torch215-debian-system checks the same
 * against the system's python3.11 itself. */
static void test_debian_system_python(void **state)
{
    (void)state;
    char *prefix = pt_tempdir("py-debian");
    fake_installation(prefix, 1, "local/lib/python3.11/dist-packages", "2.7.0");
    /* A folder this Python never reads: its torch must not count. */
    pt_write(prefix, "lib/python3.11/site-packages/torch-2.4.0.dist-info/METADATA",
             "Name: torch\nVersion: 2.4.0\n\n");
    char home[700];
    snprintf(home, sizeof home, "HOME=%s/home", prefix);
    const char *env[] = {home, "PYTHONUSERBASE=", NULL};
    const char *args[] = {"--quick", "--python", prefix, NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "python.torch");
    pt_assert_contains(pt_text(c, "observed"), "2.7.0");
    assert_null(strstr(pt_text(c, "observed"), "2.4.0"));
    pt_assert_status(pt_check(r, "python.shadowing"), "pass");
    cJSON_Delete(r);
    free(prefix);
}

/* Outside a venv Python reads the user site (~/.local, where pip puts
 * packages with --user or when it cannot write the installation's folder)
 * before the installation's own site-packages (site.py's main:
 * addusersitepackages, then addsitepackages); `python3 -c "import sys;
 * print(sys.path)"` shows it so for CPython 3.11. The user site's torch
 * is the one imported. */
static void test_user_site_first_outside_venv(void **state)
{
    (void)state;
    char *prefix = pt_tempdir("py-usersite");
    fake_installation(prefix, 0, "lib/python3.11/site-packages", "2.4.0");
    pt_write(prefix, "home/.local/lib/python3.11/site-packages/torch-2.7.0.dist-info/METADATA",
             "Name: torch\nVersion: 2.7.0\n\n");
    char home[700];
    snprintf(home, sizeof home, "HOME=%s/home", prefix);
    const char *env[] = {home, "PYTHONUSERBASE=", "PYTHONNOUSERSITE=", NULL};
    const char *args[] = {"--quick", "--python", prefix, NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "python.shadowing");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "message"), "Python imports 2.7.0");
    cJSON_Delete(r);
    free(prefix);
}

/* A venv of a free-threaded CPython (3.13t) keeps its packages in
 * lib/python3.13t/site-packages (sysconfig's abiflags in the folder name;
 * torch publishes cp313t wheels). */
static void test_free_threaded_venv(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-ft");
    pt_write(venv, "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n"
                                 "version = 3.13.1\n");
    pt_write(venv, "bin/python3", "#!/bin/sh\nexit 99\n");
    pt_chmod_x(venv, "bin/python3");
    pt_write(venv, "lib/python3.13t/site-packages/torch-2.9.0.dist-info/METADATA",
             "Name: torch\nVersion: 2.9.0\n\n");
    cJSON *r = run_quick(venv, NULL);
    pt_assert_contains(pt_text(pt_check(r, "python.torch"), "observed"), "2.9.0");
    cJSON_Delete(r);
    free(venv);
}

/* conda's base is active in every shell `conda init` set up, so it says
 * nothing about where a person trains: with it active (CONDA_DEFAULT_ENV
 * base, or the root that holds condabin) the checkout's venv is judged,
 * and says which base it was chosen over. An environment activated by
 * name is still judged first. Before, base came first and its missing
 * torch failed a checkout whose venv had one. */
static void test_conda_base_after_checkout_venv(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* the layouts below are POSIX ones */
#endif
    char *root = pt_tempdir("conda-base");
    pt_write(root, "conda/bin/python3", "#!/bin/sh\nexit 99\n");
    pt_chmod_x(root, "conda/bin/python3");
    pt_write(root, "conda/condabin/conda", "#!/bin/sh\nexit 99\n");
    pt_write(root, "conda/lib/python3.12/site-packages/README.txt", "");
    pt_write(root, "conda/envs/train/bin/python3", "#!/bin/sh\nexit 99\n");
    pt_chmod_x(root, "conda/envs/train/bin/python3");
    pt_write(root, "conda/envs/train/lib/python3.11/site-packages/README.txt", "");
    pt_write(root, "aitk/venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.2\n");
    pt_write(root, "aitk/venv/bin/python3", "#!/bin/sh\nexit 99\n");
    pt_chmod_x(root, "aitk/venv/bin/python3");
    pt_write(root, "aitk/venv/lib/python3.11/site-packages/README.txt", "");
    char aitk[800], base[800], named[800];
    snprintf(aitk, sizeof aitk, "%s/aitk", root);
    snprintf(base, sizeof base, "CONDA_PREFIX=%s/conda", root);
    snprintf(named, sizeof named, "CONDA_PREFIX=%s/conda/envs/train", root);
    const char *args[] = {"--quick", "--aitk-dir", aitk, NULL};
    const struct {
        const char *prefix, *name, *judged;
    } cases[] = {
        {base, "CONDA_DEFAULT_ENV=base", "/aitk/venv (--aitk-dir)"},
        {base, "CONDA_DEFAULT_ENV=", "/aitk/venv (--aitk-dir)"}, /* the root, by condabin */
        {named, "CONDA_DEFAULT_ENV=train", "/conda/envs/train ($CONDA_PREFIX)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *env[] = {"PATH=/nonexistent", "VIRTUAL_ENV=", cases[i].prefix, cases[i].name,
                             NULL};
        int rc = 0;
        cJSON *r = pt_run(NULL, NULL, args, env, &rc);
        const cJSON *c = pt_check(r, "python.env");
        pt_assert_contains(pt_text(c, "observed"), cases[i].judged);
        if (i < 2) {
            char want[900];
            snprintf(want, sizeof want, "judged instead of conda's base environment (%s)",
                     cases[i].prefix + strlen("CONDA_PREFIX="));
            pt_assert_contains(pt_text(c, "message"), want);
        } else {
            assert_null(strstr(pt_text(c, "message"), "conda's base"));
        }
        cJSON_Delete(r);
    }
    free(root);
}

/* A fake pyenv root: shims/python3 and the interpreters of the versions
 * named, each bin/<command> a script that is never run. */
static void fake_pyenv_root(const char *root, const char *const *exes)
{
    pt_write(root, "shims/python3", "#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n");
    pt_chmod_x(root, "shims/python3");
    for (; *exes; exes++) {
        pt_write(root, *exes, "#!/bin/sh\nexit 99\n");
        pt_chmod_x(root, *exes);
    }
}

/* The --quick report run with PATH=<root>/shims:<more> and PYENV_DIR in
 * <root>/project/src. */
static cJSON *pyenv_run(const char *root, const char *more, const char *extra_env,
                        const char *aitk_dir)
{
    char path[900], dir_env[800];
    snprintf(path, sizeof path, "PATH=%s/shims:%s", root, more);
    snprintf(dir_env, sizeof dir_env, "PYENV_DIR=%s/project/src", root);
    const char *env[] = {path, dir_env, "VIRTUAL_ENV=", "CONDA_PREFIX=", extra_env, NULL};
    const char *args[] = {"--quick", aitk_dir ? "--aitk-dir" : NULL, aitk_dir, NULL};
    int rc = 0;
    return pt_run(NULL, NULL, args, env, &rc);
}

/* What python.env observed in that run. */
static char *pyenv_observed(const char *root, const char *more, const char *extra_env,
                            const char *aitk_dir)
{
    cJSON *r = pyenv_run(root, more, extra_env, aitk_dir);
    char *observed = strdup(pt_text(pt_check(r, "python.env"), "observed"));
    cJSON_Delete(r);
    return observed;
}

/* pyenv's shim runs the version of the nearest .python-version from the
 * folder up (pyenv-version-file), skipping comments, and a version that is
 * not installed by that name is the newest installed one it prefixes,
 * compared field by field, pre-releases left out (pyenv-latest): 3.10.13,
 * not 3.10.4 (which sorts last as text) nor 3.10.14rc1. The tool read only
 * ./.python-version and took names literally. Checked against pyenv 2.6.30
 * itself: `python3 -c "import sys; print(sys.base_prefix)"` through its
 * shim agreed with the tool on 11 setups (the old code on 1). */
static void test_pyenv_shim_nearest_version_file(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* pyenv-win's shims are .bat files, not searched for */
#endif
    char *root = pt_tempdir("pyenv-file");
    const char *exes[] = {"versions/3.10.4/bin/python3", "versions/3.10.13/bin/python3",
                          "versions/3.10.14rc1/bin/python3", "versions/3.11.7/bin/python3", NULL};
    fake_pyenv_root(root, exes);
    pt_write(root, "version", "3.11.7\n");
    pt_write(root, "project/.python-version", "# pinned for torch\n\n  3.10  \n");
    pt_write(root, "project/src/main.py", "");
    char *observed = pyenv_observed(root, "/usr/bin:/bin", NULL, NULL);
    char want[800];
    snprintf(want, sizeof want, "%s/versions/3.10.13 (python3 on PATH: pyenv's python3 shim", root);
    pt_assert_contains(observed, want);
    pt_assert_contains(observed, "project/.python-version");
    free(observed);
    free(root);
}

/* pyenv-which: of the versions listed, the first whose bin/ holds the
 * command runs it (2.7.18 has python, no python3). */
static void test_pyenv_shim_first_version_with_command(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* pyenv-win's shims are .bat files, not searched for */
#endif
    char *root = pt_tempdir("pyenv-list");
    const char *exes[] = {"versions/2.7.18/bin/python", "versions/3.11.7/bin/python3", NULL};
    fake_pyenv_root(root, exes);
    pt_write(root, "project/src/main.py", "");
    char *observed = pyenv_observed(root, "/usr/bin:/bin", "PYENV_VERSION=2.7.18:3.11.7", NULL);
    char want[800];
    snprintf(want, sizeof want, "%s/versions/3.11.7 (python3 on PATH", root);
    pt_assert_contains(observed, want);
    pt_assert_contains(observed, "PYENV_VERSION");
    free(observed);
    free(root);
}

/* ai-toolkit runs from its checkout (`cd ai-toolkit; python run.py`): with
 * --aitk-dir and no venv there, the checkout's .python-version picks the
 * version, wherever the tool itself runs. */
static void test_pyenv_shim_reads_aitk_dir(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* pyenv-win's shims are .bat files, not searched for */
#endif
    char *root = pt_tempdir("pyenv-aitk");
    const char *exes[] = {"versions/3.11.7/bin/python3", "versions/3.12.1/bin/python3", NULL};
    fake_pyenv_root(root, exes);
    pt_write(root, "version", "3.12.1\n");
    pt_write(root, "ai-toolkit/.python-version", "3.11\n");
    pt_write(root, "project/src/main.py", "");
    char aitk[700], want[800];
    snprintf(aitk, sizeof aitk, "%s/ai-toolkit", root);
    char *observed = pyenv_observed(root, "/usr/bin:/bin", NULL, aitk);
    snprintf(want, sizeof want, "%s/versions/3.11.7 (python3 on PATH", root);
    pt_assert_contains(observed, want);
    free(observed);
    free(root);
}

/* A version that is not installed: pyenv's shim runs the next python3 on
 * PATH without a word (pyenv-which tries "system" last), and that is the
 * environment ai-toolkit would run in. */
static void test_pyenv_shim_not_installed_passes_on(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* pyenv-win's shims are .bat files, not searched for */
#endif
    char *root = pt_tempdir("pyenv-missing");
    const char *exes[] = {"versions/3.11.7/bin/python3", "system/bin/python3", NULL};
    fake_pyenv_root(root, exes);
    pt_write(root, "project/.python-version", "3.9\n");
    pt_write(root, "project/src/main.py", "");
    char more[800];
    snprintf(more, sizeof more, "%s/system/bin:/nonexistent", root);
    char *observed = pyenv_observed(root, more, NULL, NULL);
    char want[800];
    snprintf(want, sizeof want, "%s/system (python3 on PATH: pyenv's python3 shim passes it on: "
                                "version `3.9'", root);
    pt_assert_contains(observed, want);
    pt_assert_contains(observed, "is not installed");
    free(observed);
    /* Not the Python the user asked for: a warning with pyenv's fix. */
    cJSON *r = pyenv_run(root, more, NULL, NULL);
    const cJSON *c = pt_check(r, "python.env");
    pt_assert_status(c, "warn");
    pt_assert_contains(pt_text(c, "remedy"), "pyenv install");
    cJSON_Delete(r);
    /* "system" set on purpose is no warning. */
    pt_write(root, "project/.python-version", "system\n");
    r = pyenv_run(root, more, NULL, NULL);
    pt_assert_status(pt_check(r, "python.env"), "pass");
    cJSON_Delete(r);
    free(root);
}

/* `--python "$(which python3)"` names pyenv's shim: it is followed to the
 * version it runs, as the shim found on PATH is. The tool judged the shims
 * folder ("torch is not installed in .../shims") while python3 imported
 * torch from the version's site-packages. */
static void test_pyenv_shim_given_to_python(void **state)
{
    (void)state;
#ifdef _WIN32
    skip(); /* pyenv-win's shims are .bat files */
#endif
    char *root = pt_tempdir("pyenv-given");
    const char *exes[] = {"versions/3.11.7/bin/python3", "system/bin/python3", NULL};
    fake_pyenv_root(root, exes);
    pt_write(root, "version", "3.11.7\n");
    pt_write(root, "versions/3.11.7/lib/python3.11/site-packages/torch-2.5.1.dist-info/METADATA",
             "Name: torch\nVersion: 2.5.1\n\n");
    pt_write(root, "project/src/main.py", "");
    char shim[800], path[900], want[800];
    snprintf(shim, sizeof shim, "%s/shims/python3", root);
    snprintf(path, sizeof path, "PATH=%s/shims:%s/system/bin:/nonexistent", root, root);
    const char *env[] = {path, "VIRTUAL_ENV=", "CONDA_PREFIX=", NULL};
    const char *args[] = {"--quick", "--python", shim, NULL};
    int rc = 0;
    cJSON *r = pt_run(NULL, NULL, args, env, &rc);
    const cJSON *c = pt_check(r, "python.env");
    pt_assert_status(c, "pass");
    snprintf(want, sizeof want, "%s/versions/3.11.7 (--python: pyenv's python3 shim, version set "
                                "by %s/version)", root, root);
    pt_assert_contains(pt_text(c, "observed"), want);
    pt_assert_contains(pt_text(pt_check(r, "python.torch"), "observed"), "2.5.1");
    cJSON_Delete(r);
    /* Version "system": the shim hands python3 to the next one on PATH. */
    const char *sys_env[] = {path, "VIRTUAL_ENV=", "CONDA_PREFIX=", "PYENV_VERSION=system", NULL};
    r = pt_run(NULL, NULL, args, sys_env, &rc);
    snprintf(want, sizeof want, "%s/system (python3 on PATH: pyenv's python3 shim passes it on",
             root);
    pt_assert_contains(pt_text(pt_check(r, "python.env"), "observed"), want);
    cJSON_Delete(r);
    free(root);
}

/* ai-toolkit imports torchaudio when any job starts (toolkit/config_modules.py
 * since 2025-09) and its requirements.txt does not install it: a job stops
 * with "No module named 'torchaudio'" (ostris/ai-toolkit issues #415, #436).
 * The remedy keeps the installed torch. */
static void test_companion_torchaudio_missing(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-noaudio");
    const char *pkgs[] = {"torch==2.13.0+cu130", "torchvision==0.28.0+cu130", NULL};
    pt_fake_venv(venv, "3.12.3", pkgs, "13.0");
    cJSON *r = run_quick(venv, NULL);
    const cJSON *c = pt_check(r, "python.torch_companions");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "torchaudio not installed");
    pt_assert_contains(pt_text(c, "message"), "No module named 'torchaudio'");
    pt_assert_contains(pt_text(c, "remedy"), "pip install torchaudio==2.11.0 --index-url "
                                             "https://download.pytorch.org/whl/cu130");
    pt_assert_contains(pt_text(c, "source"), "toolkit/config_modules.py");
    cJSON_Delete(r);
    /* The original guide's profile predates ai-toolkit's torchaudio import. */
    r = run_quick(venv, "seed-guide");
    pt_assert_status(pt_check(r, "python.torch_companions"), "pass");
    cJSON_Delete(r);
    /* A checkout from before that import (or one that guards it) starts
     * without torchaudio; one with the import at the top does not. */
    char aitk[700];
    char *checkout = pt_tempdir("py-noaudio-checkout");
    snprintf(aitk, sizeof aitk, "%s", checkout);
    free(checkout);
    pt_write(aitk, "run.py", "import torch\n");
    pt_write(aitk, "requirements.txt", "torch\n");
    pt_write(aitk, "toolkit/config_modules.py",
             "import os\ntry:\n    import torchaudio\nexcept ImportError:\n    pass\n");
    const char *args[] = {"--quick", "--python", venv, "--aitk-dir", aitk, NULL};
    int rc = 0;
    char nolib[800];
    snprintf(nolib, sizeof nolib, "%s/nolib", venv);
    r = pt_run(nolib, NULL, args, NULL, &rc);
    pt_assert_status(pt_check(r, "python.torch_companions"), "pass");
    cJSON_Delete(r);
    /* Each way a top-level line imports it, a byte-order mark before it. */
    static const char *const imports[] = {
        "import os\nimport torchaudio\nimport yaml\n", "\xEF\xBB\xBFimport torchaudio\r\n",
        "import torchaudio.functional as F\n", "import torchaudio, numpy\n",
        "from torchaudio import load\n", "import os\nimport torchaudio"};
    for (size_t i = 0; i < sizeof imports / sizeof *imports; i++) {
        pt_write(aitk, "toolkit/config_modules.py", imports[i]);
        r = pt_run(nolib, NULL, args, NULL, &rc);
        if (strcmp(pt_text(pt_check(r, "python.torch_companions"), "status"), "fail") != 0)
            fail_msg("torchaudio missing, not failed for a checkout importing it as: %s",
                     imports[i]);
        cJSON_Delete(r);
    }
    /* Names that only begin the same. */
    pt_write(aitk, "toolkit/config_modules.py",
             "import torchaudiox\nfrom torchaudio_extra import y\n");
    r = pt_run(nolib, NULL, args, NULL, &rc);
    pt_assert_status(pt_check(r, "python.torch_companions"), "pass");
    cJSON_Delete(r);
    free(venv);
    /* A torch with no row for its companions: pip is told to keep it. */
    venv = pt_tempdir("py-noaudio-new");
    const char *newer[] = {"torch==2.15.0+cu132", "torchvision==0.29.2+cu132", NULL};
    pt_fake_venv(venv, "3.12.3", newer, "13.2");
    r = run_quick(venv, NULL);
    c = pt_check(r, "python.torch_companions");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "remedy"), "pip install \"torch==2.15.0\" torchaudio "
                                             "--index-url https://download.pytorch.org/whl/cu132");
    cJSON_Delete(r);
    free(venv);
}

/* Issue 20: PyPI's torchvision has no local label in its metadata; its
 * version.py has the build's ("0.20.1+cu124"). A plain pip install of
 * torch and torchvision belongs together. */
static void test_companion_label_from_version_py(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-tvlabel");
    const char *pkgs[] = {"torch==2.5.1", "torchvision==0.20.1", "torchaudio==2.5.1", NULL};
    pt_fake_venv(venv, "3.11.9", pkgs, "12.4");
    char *site = pt_site(venv, "3.11.9");
    pt_write(site, "torchvision/version.py",
             "__version__ = '0.20.1+cu124'\ngit_version = 'abc'\n"
             "from torchvision.extension import _check_cuda_version\n");
    cJSON *r = run_quick(venv, NULL);
    const cJSON *c = pt_check(r, "python.torch_companions");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "torchvision 0.20.1+cu124");
    cJSON_Delete(r);
    /* A version.py of another build still fails. */
    pt_write(site, "torchvision/version.py", "__version__ = '0.20.1+cpu'\n");
    r = run_quick(venv, NULL);
    pt_assert_status(pt_check(r, "python.torch_companions"), "fail");
    cJSON_Delete(r);
    free(site);
    free(venv);
}

/* diffusers and transformers load their classes on first use: `import
 * diffusers` passes where `from diffusers import AutoencoderTiny` fails
 * (ostris/ai-toolkit issue #546). The packages here behave as diffusers'
 * _LazyModule does, in a real interpreter. */
static void test_requirement_lazy_class_error(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-lazyclass");
    static const char *const dists[][2] = {
        {"torch", "2.9.1"}, {"diffusers", "0.36.0"}, {"transformers", "4.57.3"}};
    char root[800];
    char *site = pt_real_venv(venv, dists, 3, "12.8", root);
    /* A class that fails to load, with diffusers' own wording (its
     * utils/import_utils.py, _LazyModule._get_module), over two lines. */
    pt_write(site, "diffusers/__init__.py",
             "def __getattr__(name):\n"
             "    if name == 'AutoencoderTiny':\n"
             "        raise RuntimeError('Failed to import diffusers.models.autoencoders."
             "autoencoder_tiny because of the following error (look up to see its "
             "traceback):\\nNo module named \\'torchao.dtypes.uintx.uint4_layout\\'')\n"
             "    return object\n");
    pt_write(site, "transformers/__init__.py",
             "CLIPTextModel = CLIPTokenizer = T5EncoderModel = T5TokenizerFast = object\n");
    const char *args[] = {"--python", root, "--model", "flux1-dev", "--steps", "1", NULL};
    int rc = 0;
    cJSON *r = pt_run(venv, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "python.requirements");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"),
                       "import diffusers: RuntimeError: Failed to import "
                       "diffusers.models.autoencoders.autoencoder_tiny because of the following "
                       "error (look up to see its traceback): No module named "
                       "'torchao.dtypes.uintx.uint4_layout'");
    if (strstr(pt_text(c, "observed"), "import transformers"))
        fail_msg("transformers' classes load, yet: %s", pt_text(c, "observed"));
    cJSON_Delete(r);
    /* A transformers without one of the classes: ai-toolkit's import fails. */
    pt_write(site, "transformers/__init__.py", "CLIPTextModel = CLIPTokenizer = object\n");
    r = pt_run(venv, NULL, args, NULL, &rc);
    c = pt_check(r, "python.requirements");
    pt_assert_contains(pt_text(c, "observed"),
                       "import transformers: ImportError: cannot import name 'T5EncoderModel' "
                       "from 'transformers' (");
    cJSON_Delete(r);
    free(site);
    free(venv);
}

/* The real interpreter imports each installed requirement after torch:
 * diffusers that needs a newer torch (torch.accelerator) is installed but
 * does not import, and that is the finding. The packages are small modules
 * written here. */
static void test_requirement_import_error(void **state)
{
    (void)state;
    char *venv = pt_tempdir("py-reqimport");
    static const char *const dists[][2] = {
        {"torch", "2.5.1"}, {"diffusers", "0.35.0"}, {"peft", "0.17.0"}};
    char root[800];
    char *site = pt_real_venv(venv, dists, 3, "12.4", root);
    pt_write(site, "diffusers/__init__.py", "import torch\ntorch.accelerator\n");
    pt_write(site, "peft/__init__.py", "import torch\n");
    const char *args[] = {"--python", root, "--model", "flux1-dev", "--steps", "1", NULL};
    int rc = 0;
    cJSON *r = pt_run(venv, NULL, args, NULL, &rc);
    const cJSON *c = pt_check(r, "python.requirements");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"),
                       "import diffusers: AttributeError: module 'torch' has no attribute "
                       "'accelerator'");
    if (strstr(pt_text(c, "observed"), "import peft"))
        fail_msg("peft imports, yet: %s", pt_text(c, "observed"));
    pt_assert_contains(pt_text(c, "message"), "importing fails");
    cJSON_Delete(r);
    free(site);
    free(venv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variant_mismatch),
        cmocka_unit_test(test_companion_wrong_release),
        cmocka_unit_test(test_python_out_of_range),
        cmocka_unit_test(test_torch_215_python_range),
        cmocka_unit_test(test_profiles_judge_python_312),
        cmocka_unit_test(test_two_torch_installs),
        cmocka_unit_test(test_two_dist_info_same_site),
        cmocka_unit_test(test_venv_layered_over_system_site),
        cmocka_unit_test(test_pth_path_lines),
        cmocka_unit_test(test_cpu_torch),
        cmocka_unit_test(test_no_torch_and_requirements),
        cmocka_unit_test(test_uv_venv_remedies),
        cmocka_unit_test(test_system_site_any_case),
        cmocka_unit_test(test_checkout_requirements),
        cmocka_unit_test(test_companion_label_from_version_py),
        cmocka_unit_test(test_companion_torchaudio_missing),
        cmocka_unit_test(test_requirement_import_error),
        cmocka_unit_test(test_requirement_lazy_class_error),
        cmocka_unit_test(test_deep_import_error),
        cmocka_unit_test(test_deep_no_torch_follows),
        cmocka_unit_test(test_deep_cpu_torch_follows),
        cmocka_unit_test(test_deep_grandchild_holds_pipes),
        cmocka_unit_test(test_deep_garbled_answer),
        cmocka_unit_test(test_deep_arch_list_wins),
        cmocka_unit_test(test_deep_cudnn_refused),
        cmocka_unit_test(test_python_path_missing),
        cmocka_unit_test(test_python_path_not_python),
        cmocka_unit_test(test_deep_interpreter_not_runnable),
        cmocka_unit_test(test_aitk_dir_venv),
        cmocka_unit_test(test_path_venv_not_activated),
        cmocka_unit_test(test_venv_base_gone),
        cmocka_unit_test(test_windows_venv_on_linux),
        cmocka_unit_test(test_torch_wheel_for_another_python),
        cmocka_unit_test(test_stale_virtual_env),
        cmocka_unit_test(test_debian_system_python),
        cmocka_unit_test(test_user_site_first_outside_venv),
        cmocka_unit_test(test_free_threaded_venv),
        cmocka_unit_test(test_pyenv_shim_nearest_version_file),
        cmocka_unit_test(test_conda_base_after_checkout_venv),
        cmocka_unit_test(test_pyenv_shim_first_version_with_command),
        cmocka_unit_test(test_pyenv_shim_not_installed_passes_on),
        cmocka_unit_test(test_pyenv_shim_reads_aitk_dir),
        cmocka_unit_test(test_pyenv_shim_given_to_python),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
