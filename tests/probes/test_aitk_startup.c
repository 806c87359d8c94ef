/* python.aitk_startup through the binary: a small checkout laid out as
 * ai-toolkit's (run.py, toolkit/job.py, toolkit/extension.py,
 * jobs/ExtensionJob.py, extensions_built_in/<name>/) in a real python3
 * venv. What real ai-toolkit checkouts do is judged against run.py itself
 * by realworld.linux.aitk-startup; here each verdict's path is driven. */
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

/* A torch the deep check can ask its questions of (no GPU). */
static const char fake_torch[] =
    "__version__ = '2.9.1'\n"
    "from . import version\n"
    "class cuda:\n"
    "    is_available = staticmethod(lambda: False)\n"
    "    get_arch_list = staticmethod(lambda: [])\n"
    "    device_count = staticmethod(lambda: 0)\n"
    "class backends:\n"
    "    class cudnn:\n"
    "        version = staticmethod(lambda: None)\n";

/* toolkit/extension.py as ai-toolkit's: every package of extensions_built_in
 * imported, each one's AI_TOOLKIT_EXTENSIONS collected, get_process()
 * called. run.py's body below its imports must not run. */
static void write_checkout(const char *aitk)
{
    pt_write(aitk, "requirements.txt", "torch\n");
    /* Its top level runs, as `python run.py` runs it; main() must not,
     * called bare or under the __main__ guard. */
    pt_write(aitk, "run.py",
             "import os\nimport sys\nos.environ['AITK_TEST_SET_BY_RUN_PY'] = '1'\n"
             "from toolkit.job import get_job\n"
             "def main():\n"
             "    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'MAIN_RAN'), "
             "'w')\n"
             "main()\n"
             "if __name__ == '__main__':\n    main()\n");
    pt_write(aitk, "toolkit/__init__.py", "");
    pt_write(aitk, "toolkit/job.py", "def get_job(config, name=None):\n    return None\n");
    pt_write(aitk, "toolkit/extension.py",
             "import importlib, os, pkgutil\n"
             "ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n"
             "def get_all_extensions_process_dict():\n"
             "    found = {}\n"
             "    for _, name, _ in pkgutil.iter_modules([os.path.join(ROOT, "
             "'extensions_built_in')]):\n"
             "        m = importlib.import_module('extensions_built_in.' + name)\n"
             "        for e in getattr(m, 'AI_TOOLKIT_EXTENSIONS', []):\n"
             "            found[e.uid] = e.get_process()\n"
             "    return found\n");
    pt_write(aitk, "jobs/__init__.py", "from .ExtensionJob import ExtensionJob\n");
    pt_write(aitk, "jobs/ExtensionJob.py",
             "from toolkit.extension import get_all_extensions_process_dict\n"
             "class ExtensionJob:\n    pass\n");
    pt_write(aitk, "extensions_built_in/__init__.py", "");
    pt_write(aitk, "extensions_built_in/sd_trainer/__init__.py",
             "import os\nassert os.environ['AITK_TEST_SET_BY_RUN_PY'] == '1'\n"
             "class SDTrainerExtension:\n    uid = 'sd_trainer'\n"
             "    @classmethod\n    def get_process(cls):\n"
             "        from .SDTrainer import SDTrainer\n        return SDTrainer\n"
             "AI_TOOLKIT_EXTENSIONS = [SDTrainerExtension]\n");
    pt_write(aitk, "extensions_built_in/sd_trainer/SDTrainer.py", "class SDTrainer:\n    pass\n");
}

static cJSON *run_standard(const char *root, const char *aitk)
{
    const char *args[] = {"--python", root, "--aitk-dir", aitk, "--model", "flux1-dev",
                          "--steps", "1", NULL};
    int rc = 0;
    return pt_run(NULL, NULL, args, NULL, &rc);
}

static int exists(const char *dir, const char *rel)
{
    char path[1200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return stat(path, &st) == 0;
}

/* What an extension module does when imported, and what the check must
 * say of it: status, then up to three fields and a text each holds. */
static const struct extension_case {
    const char *text, *status, *field, *says, *field2, *says2, *field3, *says3;
} extension_cases[] = {
    /* A module nothing installs: the line named. */
    {"import os\n\nimport not_installed_anywhere\n", "fail", "observed",
     "ModuleNotFoundError: No module named 'not_installed_anywhere' "
     "(at extensions_built_in/audio/__init__.py:3)",
     "message", "importing its extensions", "remedy", "pip install -r requirements.txt"},
    /* ai-toolkit's own words for a diffusers older than its commit. */
    {"raise ImportError('Diffusers is out of date. Update diffusers to the latest version by "
     "doing pip uninstall diffusers and then pip install -r requirements.txt')\n",
     "fail", "remedy", "pip uninstall -y diffusers", NULL, NULL, NULL, NULL},
    /* Two packages that do not fit: diffusers' words over transformers'. */
    {"raise RuntimeError(\"Failed to import diffusers.pipelines.stable_diffusion because of the "
     "following error (look up to see its traceback):\\ncannot import name "
     "'FLAX_WEIGHTS_NAME' from 'transformers.utils'\")\n",
     "fail", "observed", "(look up to see its traceback): cannot import name 'FLAX_WEIGHTS_NAME'",
     "remedy", "versions that do not fit", NULL, NULL},
    /* A module of ai-toolkit's own that its checkout lacks (ostris/ai-toolkit
     * issue #1044): no pip package brings it back. */
    {"from extensions_built_in.llm_models import Captioner\n", "fail", "observed",
     "No module named 'extensions_built_in.llm_models'", "remedy",
     "'extensions_built_in.llm_models' is ai-toolkit's own code", "remedy", "git status"},
    /* Its own names that do not fit each other: files of two versions. */
    {"from toolkit.job import run_job_now\n", "fail", "remedy",
     "'toolkit.job' is ai-toolkit's own code", NULL, NULL, NULL, NULL},
    /* A diffusers older than ai-toolkit's code (ostris/ai-toolkit issue
     * #553): pip keeps an installed diffusers of the same version number. */
    {"raise ImportError(\"cannot import name 'HiDreamImageLoraLoaderMixin' from "
     "'diffusers.loaders' (/v/diffusers/loaders/__init__.py)\", name='diffusers.loaders')\n",
     "fail", "remedy", "pip uninstall -y diffusers", NULL, NULL, NULL, NULL},
    /* More output than the tool keeps does not hide the answer. */
    {"import sys\nfor _ in range(40000):\n    print('x' * 60)\n", "pass", "observed",
     "run.py loaded", NULL, NULL, NULL, NULL},
    /* The interpreter dies inside an import (a native library's abort). */
    {"import os\nos._exit(3)\n", "fail", "message", "exited with 3", NULL, NULL, NULL, NULL},
};

static void test_startup_verdicts(void **state)
{
    (void)state;
    char *base = pt_tempdir("aitk-startup");
    char root[800], aitk[900];
    static const char *const dists[][2] = {{"torch", "2.9.1"}};
    char *site = pt_real_venv(base, dists, 1, "12.8", root);
    pt_write(site, "torch/__init__.py", fake_torch);
    snprintf(aitk, sizeof aitk, "%s/ai-toolkit", base);
    write_checkout(aitk);
    cJSON *r = run_standard(root, aitk);
    const cJSON *c = pt_check(r, "python.aitk_startup");
    pt_assert_status(c, "pass");
    pt_assert_contains(pt_text(c, "observed"), "run.py loaded and 1 job types");
    cJSON_Delete(r);
    if (exists(aitk, "MAIN_RAN"))
        fail_msg("run.py's main() ran; only its top level should");
    if (exists(aitk, "toolkit/__pycache__") || exists(aitk, "extensions_built_in/__pycache__"))
        fail_msg("bytecode was written into the checkout");

    /* An import in run.py itself. */
    pt_write(aitk, "run.py", "from dotenv_missing_here import load_dotenv\nload_dotenv()\n");
    r = run_standard(root, aitk);
    c = pt_check(r, "python.aitk_startup");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "message"), "while run.py loads");
    pt_assert_contains(pt_text(c, "observed"), "(at run.py:1)");
    cJSON_Delete(r);
    pt_write(aitk, "run.py", "import os\nos.environ['AITK_TEST_SET_BY_RUN_PY'] = '1'\n");

    for (size_t i = 0; i < sizeof extension_cases / sizeof *extension_cases; i++) {
        const struct extension_case *e = &extension_cases[i];
        pt_write(aitk, "extensions_built_in/audio/__init__.py", e->text);
        r = run_standard(root, aitk);
        c = pt_check(r, "python.aitk_startup");
        pt_assert_status(c, e->status);
        pt_assert_contains(pt_text(c, e->field), e->says);
        if (e->field2)
            pt_assert_contains(pt_text(c, e->field2), e->says2);
        if (e->field3)
            pt_assert_contains(pt_text(c, e->field3), e->says3);
        cJSON_Delete(r);
    }

    /* A checkout from before ai-toolkit dropped its submodules, cloned
     * without them: the module is in an empty submodule folder. */
    pt_write(aitk, ".gitmodules", "[submodule \"repositories/sd-scripts\"]\n"
                                  "\tpath = repositories/sd-scripts\n"
                                  "\turl = https://github.com/kohya-ss/sd-scripts.git\n");
    char sub[1000];
    snprintf(sub, sizeof sub, "%s/repositories/sd-scripts", aitk);
    pt_write(aitk, "repositories/README", "submodules live below\n");
    assert_int_equal(mkdir(sub, 0755), 0);
    pt_write(aitk, "extensions_built_in/audio/__init__.py", "from networks.lora import LoRA\n");
    r = run_standard(root, aitk);
    c = pt_check(r, "python.aitk_startup");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "remedy"), "submodules are not there (repositories/sd-scripts "
                                             "empty), so 'networks' cannot be found");
    pt_assert_contains(pt_text(c, "remedy"), "git submodule update --init --recursive");
    cJSON_Delete(r);
    /* The same checkout missing a pip package: not the submodules' fault. */
    pt_write(aitk, "extensions_built_in/audio/__init__.py", "import torchaudio\n");
    r = run_standard(root, aitk);
    c = pt_check(r, "python.aitk_startup");
    pt_assert_contains(pt_text(c, "remedy"), "torchaudio --index-url");
    if (strstr(pt_text(c, "remedy"), "submodule"))
        fail_msg("a missing torchaudio was blamed on the submodules: %s", pt_text(c, "remedy"));
    cJSON_Delete(r);
    free(site);
    free(base);
}

/* ai-toolkit's README makes its venv inside the checkout: the line named
 * is the checkout's own, not a file of the venv's site-packages; relative
 * paths to the checkout and to the environment still name them. */
static void test_startup_venv_inside(void **state)
{
    (void)state;
    char *base = pt_tempdir("aitk-startup-inside");
    char aitk[900], root[800], cwd[1024];
    snprintf(aitk, sizeof aitk, "%s/ai-toolkit", base);
    write_checkout(aitk);
    static const char *const dists[][2] = {{"torch", "2.9.1"}};
    char *site = pt_real_venv(aitk, dists, 1, "12.8", root);
    pt_write(site, "torch/__init__.py", fake_torch);
    pt_write(site, "badlib/__init__.py", "raise RuntimeError('badlib cannot start')\n");
    pt_write(aitk, "extensions_built_in/audio/__init__.py", "import os\nimport badlib\n");
    cJSON *r = run_standard(root, aitk);
    const cJSON *c = pt_check(r, "python.aitk_startup");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "RuntimeError: badlib cannot start "
                                               "(at extensions_built_in/audio/__init__.py:2)");
    cJSON_Delete(r);
    /* From the checkout's parent, both given relative to it. */
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(base), 0);
    r = run_standard("ai-toolkit/v", "ai-toolkit");
    assert_int_equal(chdir(cwd), 0);
    c = pt_check(r, "python.aitk_startup");
    pt_assert_status(c, "fail");
    pt_assert_contains(pt_text(c, "observed"), "(at extensions_built_in/audio/__init__.py:2)");
    cJSON_Delete(r);
    free(site);
    free(base);
}

static void test_startup_not_run(void **state)
{
    (void)state;
    char *base = pt_tempdir("aitk-startup-skip");
    char root[800], aitk[900];
    static const char *const dists[][2] = {{"torch", "2.9.1"}};
    char *site = pt_real_venv(base, dists, 1, "12.8", root);
    snprintf(aitk, sizeof aitk, "%s/ai-toolkit", base);
    write_checkout(aitk);
    /* torch's import fails: python.import_torch says so, this waits. */
    pt_write(site, "torch/__init__.py", "raise ImportError('DLL load failed')\n");
    cJSON *r = run_standard(root, aitk);
    const cJSON *c = pt_check(r, "python.aitk_startup");
    pt_assert_status(c, "skip");
    pt_assert_contains(pt_text(c, "message"), "import torch fails first");
    cJSON_Delete(r);
    /* torch's import kills the interpreter: no second failure for it. */
    pt_write(site, "torch/__init__.py", "import os\nos._exit(139)\n");
    r = run_standard(root, aitk);
    c = pt_check(r, "python.aitk_startup");
    pt_assert_status(c, "skip");
    pt_assert_contains(pt_text(c, "message"), "import torch did not answer");
    cJSON_Delete(r);
    /* No checkout given and none in the current folder. */
    pt_write(site, "torch/__init__.py", fake_torch);
    const char *args[] = {"--python", root, "--model", "flux1-dev", "--steps", "1", NULL};
    int rc = 0;
    r = pt_run(NULL, NULL, args, NULL, &rc);
    c = pt_check(r, "python.aitk_startup");
    pt_assert_status(c, "skip");
    pt_assert_contains(pt_text(c, "message"), "no ai-toolkit checkout");
    cJSON_Delete(r);
    /* --quick runs no interpreter: the check is not made. */
    const char *quick[] = {"--quick", "--python", root, "--aitk-dir", aitk, NULL};
    r = pt_run(NULL, NULL, quick, NULL, &rc);
    if (pt_find_check(r, "python.aitk_startup"))
        fail_msg("python.aitk_startup was made at --quick");
    cJSON_Delete(r);
    free(site);
    free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_startup_verdicts),
        cmocka_unit_test(test_startup_venv_inside),
        cmocka_unit_test(test_startup_not_run),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
