/* Which Python a pyenv shim runs. pyenv (the version manager, not this
 * folder's pyenv.c) puts shell scripts named python3, python... in
 * $PYENV_ROOT/shims; each runs the interpreter of the version pyenv selects
 * for the current folder. */
#ifndef AITK_VALIDATE_PROBES_PYSHIM_H
#define AITK_VALIDATE_PROBES_PYSHIM_H

#include "common/str.h"

typedef enum {
    AITK_SHIM_NONE,      /* not a pyenv shim */
    AITK_SHIM_VERSION,   /* runs the interpreter under the prefix given */
    AITK_SHIM_SYSTEM,    /* the version is "system": the next one on PATH runs */
    AITK_SHIM_NOT_INSTALLED /* the version set is not installed: pyenv runs the next one
                               on PATH instead, without a word */
} aitk_shim_kind;

/* path: the PATH entry with links followed (…/shims/python3); run_dir:
 * the folder the command runs in (NULL: the current one). On
 * AITK_SHIM_VERSION, prefix gets $PYENV_ROOT/versions/<version>. how gets
 * where the version was set and, when the next one on PATH runs, why. The version comes from
 * $PYENV_VERSION, else the nearest .python-version from $PYENV_DIR, then
 * from run_dir, up to the root, else $PYENV_ROOT/version, as pyenv reads
 * them. */
aitk_shim_kind aitk_pyenv_shim_resolve(const char *path, const char *run_dir, aitk_str *prefix,
                                       aitk_str *how);

#endif
