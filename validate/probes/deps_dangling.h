/* Dangling links in a library folder: a symbolic link named like a library
 * whose target does not exist. Linux distributions' torch packages leave
 * some that nothing opens (Debian 12's python3-torch 1.13.1+dfsg-4 links
 * torch/lib/libcaffe2_*.so to libcaffe2_*.so.1.13, which libtorch1.13
 * links on to files it does not ship: the packages' file lists, dpkg-deb
 * --contents; and `import torch` works); the same under a name that is
 * needed breaks torch. These say which is which; deps.c counts them.
 * Linux only: on Windows torch loads every DLL of torch\lib
 * (pytorch/pytorch torch/__init__.py, _load_dll_libraries), so none is
 * harmless there. */
#ifndef AITK_VALIDATE_PROBES_DEPS_DANGLING_H
#define AITK_VALIDATE_PROBES_DEPS_DANGLING_H

#include <stdbool.h>

#include "common/str.h"
#include "common/yaml.h"
#include "validate/libdeps/tree.h"

/* `path` is a link whose target does not exist; `target` gets the link's
 * text. Always false on Windows. */
bool aitk_dangling_link(const char *path, aitk_str *target);

/* The direct links (DT_NEEDED) of torch's Python extension, torch/_C*.so,
 * the folder above `lib_dir`: it needs libraries of torch/lib without
 * being among them. Nothing is added when there is none. Only running out
 * of memory fails. */
aitk_status aitk_dangling_extension_needs(aitk_deps *d, const char *lib_dir, aitk_strlist *out);

/* deps.yaml, read once per folder judged. */
aitk_status aitk_dangling_data_load(aitk_yaml_doc **out, aitk_str *err);

/* Whether torch opens `name` by name while it runs (`data`, deps.yaml);
 * `why` gets the source. With no data (`load_error` says why) every name
 * counts as opened, so no link is called harmless unchecked. */
bool aitk_dangling_opened_by_name(const aitk_yaml_doc *data, const char *load_error,
                                  const char *name, aitk_str *why);

#endif
