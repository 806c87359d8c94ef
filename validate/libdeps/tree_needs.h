/* What a found library must give the one that needs it, checked as each
 * link of the tree is placed (internal to tree.c): ELF symbol versions
 * (GLIBC_2.38), PE imports by name and by ordinal, and the functions a DLL
 * forwards to another. Each marks node i's
 * state and detail when something is missing. */
#ifndef AITK_LIBDEPS_TREE_NEEDS_H
#define AITK_LIBDEPS_TREE_NEEDS_H

#include <stddef.h>

#include "common/status.h"
#include "validate/libdeps/tree.h"

aitk_status aitk_deps_check_versions(aitk_deps *d, aitk_dep_tree *t, size_t i);
/* ELF, once the whole tree is placed: every symbol a library binds to a
 * version of a library it needs (sym@VER) must be defined at that version
 * by the copy the tree loaded for it, or by another object loaded with it,
 * as ld.so looks it up only when every object is mapped. A copy of another
 * release can carry the same version name without the symbol (cuDNN's
 * sub-libraries): "undefined symbol: sym, version VER". Marks each such
 * link AITK_DEP_MISSING_SYMBOL. */
aitk_status aitk_deps_check_bindings(aitk_deps *d, aitk_dep_tree *t);
aitk_status aitk_deps_check_symbols(aitk_deps *d, aitk_dep_tree *t, size_t i);
/* Node i was loaded to bind functions its parent forwards to it: each of
 * funcs (the forwarders' target names, imported as the matching `from`)
 * must be there. */
aitk_status aitk_deps_check_forwarded(aitk_deps *d, aitk_dep_tree *t, size_t i,
                                      const aitk_strlist *funcs, const aitk_strlist *from);

#endif
