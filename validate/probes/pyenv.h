/* Python environments, read statically: no interpreter is run. Finds the
 * environments a user is likely to train in, reads pyvenv.cfg, the
 * dist-info/egg-info of the packages that matter for ai-toolkit, and
 * torch/version.py, and records where each package was found so two installs
 * shadowing each other show up. */
#ifndef AITK_VALIDATE_PROBES_PYENV_H
#define AITK_VALIDATE_PROBES_PYENV_H

#include <stdbool.h>

#include "common/status.h"

typedef struct cJSON cJSON;

typedef struct aitk_pyenv_hints {
    const char *python;   /* --python PATH, or NULL */
    const char *aitk_dir; /* --aitk-dir DIR, or NULL */
} aitk_pyenv_hints;

/* Appends one object per environment found to `envs` (first: the one ai-toolkit
 * would use), each {found_by, prefix, interpreter, pyvenv_cfg, python_version,
 * site_packages[], packages{name: {version, path, copies[]}}, torch{...}},
 * and base_missing{key, path} for a venv whose base Python is gone.
 * Only AITK_E_NOMEM is returned; unreadable files become "errors" entries. */
aitk_status aitk_pyenv_find(const aitk_pyenv_hints *hints, cJSON *envs);

/* Reads one environment rooted at `prefix` into `env` (an object). */
aitk_status aitk_pyenv_read(const char *prefix, const char *interpreter, cJSON *env);

/* Records the distributions of one site-packages folder into `packages` as
 * aitk_pyenv_find does (name normalized with '-': {version, site, installs}),
 * their version from METADATA or PKG-INFO, else the folder's name: every
 * one when `all`, else the ones the python checks read. */
void aitk_pyenv_scan_site(const char *site, bool all, cJSON *packages);

/* The value of environment variable `name` as Python reads it: NULL when it
 * is unset or empty. */
const char *aitk_pyenv_var(const char *name);

/* "2.7.0+cu128" -> major 2, minor 7; false when it does not start with N.N. */
int aitk_pyver_major_minor(const char *version, int *major, int *minor);

#endif
