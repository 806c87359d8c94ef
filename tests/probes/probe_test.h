/* Helpers for the probe tests: scratch folders, fake Python environments,
 * and running the real aitk-validate binary with a chosen environment. */
#ifndef AITK_TESTS_PROBE_TEST_H
#define AITK_TESTS_PROBE_TEST_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* The driver's libraries as the probes name them, and how a list of stub
 * folders is written (searched in order, as the loader searches): on Linux
 * LD_LIBRARY_PATH's ':'; on Windows ';', where the Z: of each folder has
 * its own colon. On Windows the stubs are installed into this test's
 * scratch Wine prefix's System32, where the driver puts them. */
#ifdef _WIN32
#define PT_NVML_LIB "nvml.dll"
#define PT_CUDA_LIB "nvcuda.dll"
#define PT_DIRS(a, b) a ";" b
#else
#define PT_NVML_LIB "libnvidia-ml.so.1"
#define PT_CUDA_LIB "libcuda.so.1"
#define PT_DIRS(a, b) a ":" b
#endif

/* A folder holding only the NVML stub of `stub_dir` (no CUDA driver). */
void pt_nvml_only(const char *stub_dir, const char *dir);

/* A fresh scratch folder under the build tree (caller frees with free()). */
char *pt_tempdir(const char *tag);
/* The end of a test program: `failed` is cmocka_run_group_tests' count.
 * When every test passed, removes the scratch folders pt_tempdir made
 * (1 if one could not be removed); when one failed, keeps them all to be
 * looked at and says where. Returns the program's exit status. */
int pt_finish(int failed);
/* Writes `text` to dir/rel, creating parent folders. */
void pt_write(const char *dir, const char *rel, const char *text);
/* Makes dir/rel executable. */
void pt_chmod_x(const char *dir, const char *rel);

/* A fake environment under `root`: pyvenv.cfg with `pyver` ("3.12.3"),
 * lib/pythonX.Y/site-packages (on Windows: Lib/site-packages and
 * Scripts/python.exe, venv's Windows layout) with one dist-info per "name==version" in
 * `pkgs` (NULL-terminated), and torch/version.py when torch is listed
 * (`torch_cuda`: "12.8" or NULL for a CPU build). */
void pt_fake_venv(const char *root, const char *pyver, const char *const *pkgs,
                  const char *torch_cuda);
/* site-packages folder of such a venv, into a malloc'ed string. */
char *pt_site(const char *root, const char *pyver);

/* A real environment (python3 -m venv, without pip) in VENV/v whose site
 * folder holds the distributions `dists` (name and version; the first is
 * torch, with its version files, built for CUDA `cuda`): its folder into
 * `root`, its site folder returned (caller frees). Skips the test where
 * python3 cannot make one. */
char *pt_real_venv(const char *venv, const char *const dists[][2], size_t n, const char *cuda,
                   char root[800]);

/* Runs AITK_EXE with `args` (NULL-terminated) plus --json <tmp>, with
 * LD_LIBRARY_PATH=lib_dir (on Windows: lib_dir's stubs in System32) and AITK_STUB_GPU=spec (either may be NULL) and
 * the extra "NAME=value" entries in `extra_env`. Unless extra_env names
 * AITK_DATA_DIR, the data files are the build's with the microbenchmarks
 * cut to 64 px shapes (Linux: probe_test.c fast_data_env). Returns the parsed report
 * (the test fails when there is none); *exit_code gets the exit status. */
cJSON *pt_run(const char *lib_dir, const char *spec, const char *const *args,
              const char *const *extra_env, int *exit_code);

/* The check with `id`; fails the test when absent. */
const cJSON *pt_check(const cJSON *report, const char *id);
/* The check with `id` or NULL. */
const cJSON *pt_find_check(const cJSON *report, const char *id);
/* Field text ("" when absent). */
const char *pt_text(const cJSON *o, const char *key);
/* Asserts `hay` contains `needle`, printing both when not. */
#define pt_assert_contains(hay, needle) pt_assert_contains_at(hay, needle, __FILE__, __LINE__)
void pt_assert_contains_at(const char *hay, const char *needle, const char *file, int line);
/* Asserts a check's status. */
#define pt_assert_status(check, st) pt_assert_status_at(check, st, __FILE__, __LINE__)
void pt_assert_status_at(const cJSON *check, const char *status, const char *file, int line);

#endif
