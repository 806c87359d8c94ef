/* Internal to libdeps: the one open of a root file. aitk_deps_read_root
 * (tree.c) sniffs what the file is through it and, for an ELF or PE file,
 * reads the whole object through the same descriptor, so what is judged
 * and what is read are one file, read once, even if the path is replaced
 * meanwhile. */
#ifndef AITK_LIBDEPS_SNIFF_H
#define AITK_LIBDEPS_SNIFF_H

#include <stdbool.h>

#include "common/fileio.h"
#include "common/status.h"
#include "common/str.h"
#include "validate/libdeps/tree.h"

typedef struct aitk_dep_sniffed {
    int fd;                /* open for reading; readers read from offset 0 */
    aitk_dep_format format; /* with other == AITK_DEP_OTHER_NONE */
    aitk_dep_other other;  /* what it is when not ELF or PE */
    aitk_file_id id;       /* which file, as aitk_file_identity says */
    bool have_id;
} aitk_dep_sniffed;

/* Opens `path` and reads its first bytes. AITK_OK: the caller closes
 * s->fd. AITK_E_IO (missing, unreadable) or AITK_E_INVAL (a folder, a
 * device, a FIFO: never opened) with "shown: reason" in err, nothing open;
 * `shown` is the path as the user gave it. */
aitk_status aitk_deps_sniff_open(const char *path, const char *shown, aitk_dep_sniffed *s,
                                 aitk_str *err);

/* A search candidate the loader stops at (not a library of the tree's
 * format `want`, or one whose header cannot be read): what it is, in words
 * appended to `why` ("a Git LFS pointer: ...", "a folder named like the
 * library", "a PE (Windows) file"), and *other set when it is no ELF or PE
 * file at all, which picks the not-a-library remedy. AITK_E_NOMEM only. */
aitk_status aitk_deps_describe_bad_candidate(const char *file, aitk_dep_format want,
                                             aitk_dep_other *other, aitk_str *why);

#endif
