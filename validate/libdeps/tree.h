/* The dependency tree: what each library needs, where the loader would find
 * it (which rule, which folder), or that it would not, with the folders
 * searched in order.
 *
 * One analysis emulates one process loading one root file: a name the
 * loader has already loaded is reused, not searched again (ld.so matches
 * DT_NEEDED against loaded names and sonames; Windows against loaded module
 * names), which is also what keeps cycles finite. Nodes live in one array in
 * breadth-first load order; parent/first_child/next_sibling give the shape. */
#ifndef AITK_LIBDEPS_TREE_H
#define AITK_LIBDEPS_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

#define AITK_DEP_NONE ((size_t)-1)

typedef struct aitk_strlist {
    char **items;
    size_t count;
} aitk_strlist;

aitk_status aitk_strlist_add(aitk_strlist *l, const char *text);
void aitk_strlist_free(aitk_strlist *l);

#define AITK_DEP_STATE_LIST(X)                                                 \
    X(AITK_DEP_ROOT, "root")                                                   \
    X(AITK_DEP_FOUND, "found")                                                 \
    X(AITK_DEP_SYSTEM, "system")           /* provided by the OS itself */     \
    X(AITK_DEP_NOT_FOUND, "not_found")                                         \
    X(AITK_DEP_WRONG_ARCH, "wrong_arch")   /* found, but unusable here */      \
    X(AITK_DEP_BAD_FILE, "bad_file")       /* found, but unreadable/corrupt */ \
    X(AITK_DEP_BAD_VERSION, "missing_version") /* found, lacks a needed version */ \
    X(AITK_DEP_MISSING_SYMBOL, "missing_symbol") /* found, lacks an imported function */ \
    X(AITK_DEP_UNKNOWN, "unknown") /* in no folder examined, and the folder that would  \
                                    * hold it was not given: neither found nor missing */

typedef enum aitk_dep_state {
#define AITK_X_ENUM(name, text) name,
    AITK_DEP_STATE_LIST(AITK_X_ENUM)
#undef AITK_X_ENUM
} aitk_dep_state;

const char *aitk_dep_state_name(aitk_dep_state st);
/* True for states that stop a load (missing, wrong arch, corrupt, version). */
bool aitk_dep_state_is_problem(aitk_dep_state st);

typedef enum aitk_dep_format { AITK_DEP_ELF, AITK_DEP_PE } aitk_dep_format;

/* What a file that is not a shared library is, from its first bytes. */
typedef enum aitk_dep_other {
    AITK_DEP_OTHER_NONE,        /* an ELF or PE file */
    AITK_DEP_OTHER_EMPTY,
    AITK_DEP_OTHER_ARCHIVE,     /* "!<arch>": a static library */
    AITK_DEP_OTHER_LD_SCRIPT,   /* libc.so and friends: GROUP ( ... ) */
    AITK_DEP_OTHER_SCRIPT,      /* "#!" */
    AITK_DEP_OTHER_LFS_POINTER, /* "version https://git-lfs.github.com/spec/v1": never fetched */
    AITK_DEP_OTHER_UNKNOWN,
} aitk_dep_other;

typedef struct aitk_dep_node {
    char *name;             /* as the requester wrote it (DT_NEEDED, import name); root: its path */
    char *path;             /* where it was (or would be) loaded from; NULL when not found */
    char *how;              /* the rule that found it: "RUNPATH", "ld.so.cache", "System32"... */
    char *detail;           /* problem text: the reader's error, the missing versions */
    char *arch;             /* "x86-64", "i386"... when the file was read */
    char *version;          /* PE file version when known */
    aitk_dep_state state;
    bool delay;             /* a PE delay-load import: failure shows only when first used */
    bool opened;            /* opened by its parent at run time (opened.yaml), not linked:
                             * `import torch` does not show its failure, the first call
                             * needing it does */
    bool repeat;            /* already loaded earlier in the walk: not expanded again */
    bool forwarder;         /* PE: loaded to bind a forwarded export of its parent */
    bool truncated;         /* BAD_FILE because the file is shorter than its headers say */
    bool corrupt;           /* BAD_FILE because its headers are damaged: values no tool
                             * writes, offsets past the end of a file that is otherwise
                             * whole (not a cut copy, not a foreign kind of file) */
    bool refused;           /* BAD_FILE because the loader refuses the file as it is (a
                             * program, an object file, a folder...), not because it is
                             * unreadable */
    aitk_dep_other not_library; /* BAD_FILE because it is this (an empty file, a Git
                                 * LFS pointer...) under a library's name: the root,
                                 * or the first candidate ld.so stops at */
    aitk_strlist searched;  /* folders in search order, each "folder (rule)" */
    aitk_strlist skipped;   /* candidates passed over: "path (reason)" */
    aitk_strlist duplicates;/* other copies of the same name in searched folders */
    aitk_strlist forwarded; /* PE, forwarder: the functions forwarded to it (its own
                             * forwards of these are the chain's next link) */
    size_t parent, first_child, last_child, next_sibling;
    unsigned depth;
    size_t obj;             /* index into the analysis cache; AITK_DEP_NONE if unread */
} aitk_dep_node;

typedef struct aitk_dep_tree {
    aitk_dep_format format;
    aitk_dep_node *nodes;   /* nodes[0] is the root */
    size_t count, cap;
    /* `deps --load`: the native loader's verdict on the root ("loaded", its
     * own error text, or how the process loading it died); NULL when not
     * asked. load_failed: it did not load, which is a problem even when the
     * static walk found none. */
    char *load;
    bool load_failed;
    /* What the root is when it is not a shared library, else NONE. With
     * AITK_E_UNSUPPORTED from aitk_deps_analyze: skipped (see
     * aitk_deps_not_library_is_problem); with AITK_OK: a broken library,
     * nodes[0] alone, in state AITK_DEP_BAD_FILE; `format` means nothing. */
    aitk_dep_other not_library;
} aitk_dep_tree;

typedef enum aitk_win_mode {
    AITK_WIN_SAFE,   /* LoadLibraryExW(.., LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | _DLL_LOAD_DIR) */
    AITK_WIN_LEGACY, /* LoadLibraryW: torch's fallback, PATH searched */
} aitk_win_mode;

typedef struct aitk_deps_opts {
    const char *windows_root;    /* folder holding Windows/System32; NULL: built-in list only */
    aitk_win_mode win_mode;
    aitk_strlist dll_dirs;       /* add_dll_directory folders; empty: derived as torch does */
    aitk_strlist win_path;       /* PATH folders for the legacy mode */
    const char *app_dir;         /* the application (python.exe) folder, if known */
    const char *ld_library_path; /* NULL: the environment's */
    const char *ldcache_path;    /* NULL: /etc/ld.so.cache */
    unsigned max_depth;          /* 0: unlimited */
    /* Linux: libraries the process loaded by path before the root (torch's
     * own preload of the CUDA wheels from sys.path), with the words that say
     * who loaded them. A name the search does not find is the preloaded
     * library of that file name, as ld.so reuses a loaded object whose
     * name matches; a name the search finds keeps what it found. */
    aitk_strlist preloaded;
    const char *preloaded_by;
} aitk_deps_opts;

typedef struct aitk_deps aitk_deps; /* one analysis session: options + caches */

/* On Windows: the folder holding this system's Windows\System32 ("C:\"), so
 * the tree is resolved against the real system folders; elsewhere
 * AITK_E_UNSUPPORTED (give --windows-root). */
aitk_status aitk_deps_native_windows_root(aitk_str *out);

/* `opts` is copied (its lists are borrowed and must outlive the session). */
aitk_status aitk_deps_new(const aitk_deps_opts *opts, aitk_deps **out, aitk_str *err);
void aitk_deps_free(aitk_deps *d);

/* "a GNU ld script", "an empty file", ... */
const char *aitk_dep_other_text(aitk_dep_other k);
/* The same for programs: "ld_script", "empty", "git_lfs_pointer", ... */
const char *aitk_dep_other_name(aitk_dep_other k);

/* Whether the file name says "shared library": *.so, *.so.N[.N...] (digits
 * and dots after ".so."), and, in any case, *.dll and *.pyd. Not *.dylib:
 * macOS libraries are neither ELF nor PE, nothing here reads them. */
bool aitk_deps_library_name(const char *path);

/* The one rule for a root that is not a shared library (`k`, not NONE):
 * true when it is a broken library (a finding), false when it is to be
 * skipped. A GNU ld script or an ar archive is never a shared library by
 * design: skipped, whatever its name. Anything else (empty, a Git LFS
 * pointer, a script, unknown bytes) is broken when its name says it is a
 * shared library (aitk_deps_library_name), else skipped (README.txt met by
 * a glob). */
bool aitk_deps_not_library_is_problem(aitk_dep_other k, const char *path);

/* Analyses one root file: aitk_deps_read_root, then aitk_deps_walk. */
aitk_status aitk_deps_analyze(aitk_deps *d, const char *path, aitk_dep_tree *out, aitk_str *err);

/* The first half: the root's one read. The file is opened once; its first
 * bytes say what it is, and an ELF or PE object is read whole through the
 * same descriptor into the session (a copy read before, as a dependency or
 * another root, is reused). Nothing is judged from a second read.
 *   AITK_OK: out holds the root node. When the root is not a shared library
 *     but named like one, out->not_library says what it is and nodes[0] is
 *     in state AITK_DEP_BAD_FILE (a finding, not bad input).
 *   AITK_E_UNSUPPORTED with out->not_library set: not a shared library, to
 *     be skipped ("path: a GNU ld script, not a shared library" in err).
 *   AITK_E_IO / AITK_E_INVAL ("path: reason" in err): missing, unreadable,
 *     a folder, a device; out is empty.
 * A malformed ELF or PE root is not an error yet: aitk_deps_walk says so,
 * so a caller that reads every input first reports unreadable paths before
 * malformed files, as it did when it sniffed them separately. */
aitk_status aitk_deps_read_root(aitk_deps *d, const char *path, aitk_dep_tree *out, aitk_str *err);

/* The second half: the tree below a root from aitk_deps_read_root (nothing
 * to do for a broken non-library). AITK_E_PARSE (with "path: reason" in
 * err) when the root object is malformed: bad input, not a finding, and the
 * tree is freed; AITK_E_UNSUPPORTED when this build cannot read its format
 * (an ELF file in the Windows build). Problems further down are nodes, not
 * errors; so is a root that is cut short (its state is then
 * AITK_DEP_BAD_FILE and it is not expanded). */
aitk_status aitk_deps_walk(aitk_deps *d, aitk_dep_tree *t, aitk_str *err);
void aitk_dep_tree_free(aitk_dep_tree *t);

/* True when node i or one of its ancestors is a delay-load import or is
 * opened at run time: its failure shows only when the program first calls
 * into it (a warning, as `import torch` still works). */
bool aitk_dep_tree_deferred(const aitk_dep_tree *t, size_t i);
/* True when node i or one of its ancestors is opened at run time. */
bool aitk_dep_tree_opened(const aitk_dep_tree *t, size_t i);
/* Problems that stop the load (not counting repeats or deferred ones), and
 * the loader's refusal when that is the only sign (aitk_dep_tree_load_problem);
 * when the walk found the cause, the refusal is its witness, not a second
 * problem. */
size_t aitk_dep_tree_problems(const aitk_dep_tree *t);
bool aitk_dep_tree_load_problem(const aitk_dep_tree *t);
/* Warnings: duplicates, and problems behind a delay-load import. */
size_t aitk_dep_tree_warnings(const aitk_dep_tree *t);

/* "a.so -> b.so -> c.so" from the root's base name down to node i. */
aitk_status aitk_dep_tree_chain(const aitk_dep_tree *t, size_t i, aitk_str *out);

#endif
