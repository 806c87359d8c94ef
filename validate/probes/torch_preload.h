/* What `import torch` loads by path before its own libraries, on Linux.
 *
 * torch's pip wheels find the CUDA libraries of the nvidia-* wheels through
 * their RPATH, $ORIGIN/../../nvidia/<part>/lib: the same site-packages. When
 * torch sits apart from those wheels (pip install --user or --target, a
 * distribution whose platlib and purelib differ, a PYTHONPATH folder), that
 * RPATH leads nowhere, and torch/__init__.py repairs it itself:
 * _load_global_deps catches the loader's error on libtorch_global_deps.so,
 * and when it names one of the CUDA libraries of its list it loads each of
 * them by path from the first sys.path folder holding
 * nvidia/<part>/lib/<pattern> (_preload_cuda_deps), then loads
 * libtorch_global_deps.so again (pytorch/pytorch torch/__init__.py,
 * v2.5.1 and v2.15.0). Every library of the list is required then: one
 * that no folder holds makes it raise ValueError, and import fails.
 *
 * The list is read from the installed torch's own __init__.py, so each
 * release is judged by its own list. Only that error path is modelled:
 * newer releases also preload, best effort, after libtorch_global_deps.so
 * loaded; a library found that way is not counted (the check may then
 * fail a layout that imports, never pass one that does not). */
#ifndef AITK_PROBES_TORCH_PRELOAD_H
#define AITK_PROBES_TORCH_PRELOAD_H

#include <cjson/cJSON.h>

#include "common/str.h"
#include "validate/libdeps/tree.h"

/* Who loaded them, for the dependency tree's "how". */
#define AITK_TORCH_PRELOADED_BY \
    "loaded by path from sys.path by torch/__init__.py (_preload_cuda_deps)"

/* The libraries torch would preload for the torch/lib folder `torch_lib`
 * of the environment `python_env` (an entry of the python checks'
 * "environments": its site_packages are sys.path's site folders, its
 * torch.cuda the CUDA release), added to `out` as paths. Nothing is added
 * when torch would not take that path (libtorch_global_deps.so loads, or
 * fails for another library, or __init__.py has no such list). When it
 * would but a library of the list is on no site folder, nothing is added
 * and `why_not` says which (torch raises ValueError there). Only running
 * out of memory fails. Linux only; elsewhere nothing is added. */
aitk_status aitk_torch_preloads(const char *torch_lib, const cJSON *python_env,
                                aitk_strlist *out, aitk_str *why_not);

#endif
