/* Helpers for the probe tests: scratch folders, fake Python environments,
 * and running the real aitk-validate binary with a chosen environment. */
#ifndef AITK_TESTS_PROBE_TEST_H
#define AITK_TESTS_PROBE_TEST_H

#include <cjson/cJSON.h>

/* A fresh scratch folder under the build tree (caller frees with free()). */
char *pt_tempdir(const char *tag);
/* Writes `text` to dir/rel, creating parent folders. */
void pt_write(const char *dir, const char *rel, const char *text);
/* Makes dir/rel executable. */
void pt_chmod_x(const char *dir, const char *rel);

/* A fake environment under `root`: pyvenv.cfg with `pyver` ("3.12.3"),
 * lib/pythonX.Y/site-packages with one dist-info per "name==version" in
 * `pkgs` (NULL-terminated), and torch/version.py when torch is listed
 * (`torch_cuda`: "12.8" or NULL for a CPU build). */
void pt_fake_venv(const char *root, const char *pyver, const char *const *pkgs,
                  const char *torch_cuda);
/* site-packages folder of such a venv, into a malloc'ed string. */
char *pt_site(const char *root, const char *pyver);

/* Runs AITK_EXE with `args` (NULL-terminated) plus --json <tmp>, with
 * LD_LIBRARY_PATH=lib_dir and AITK_STUB_GPU=spec (either may be NULL) and
 * the extra "NAME=value" entries in `extra_env`. Returns the parsed report
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
