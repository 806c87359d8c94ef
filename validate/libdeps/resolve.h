/* Internal to libdeps: the analysis session and the two loader emulations.
 * tree.c walks; resolve_linux.c and resolve_windows.c decide, for one
 * requested name, where the loader would find it. */
#ifndef AITK_LIBDEPS_RESOLVE_H
#define AITK_LIBDEPS_RESOLVE_H

#include <sys/types.h>

#include "validate/libdeps/elf.h"
#include "common/fileio.h"
#include "validate/libdeps/ldcache.h"
#include "validate/libdeps/pe.h"
#include "validate/libdeps/tree.h"

/* One file read once per session, shared by every tree that reaches it. */
typedef struct aitk_dep_obj {
    char *path;
    aitk_file_id id; /* which file, whatever the name (common/fileio.h) */
    bool is_pe;
    aitk_status st;   /* AITK_OK when read */
    char *error;      /* the reader's message otherwise */
    aitk_elf_info elf;
    aitk_pe_info pe;
    /* ELF: its defined symbols, read when a requester first binds symbols
     * to one of its versions (tree_needs.c); NULL when it defines none or
     * they could not be read. */
    aitk_elf_defs *defs;
    bool defs_read;
} aitk_dep_obj;

/* A folder's listing for case-insensitive lookups (Windows names). */
typedef struct aitk_dir_listing {
    char *dir;
    char **lower;     /* sorted lower-case names */
    char **real;      /* the same entries as spelled on disk */
    size_t count;
} aitk_dir_listing;

struct aitk_deps {
    aitk_deps_opts opts;
    aitk_ldcache cache;
    bool cache_loaded, cache_failed;
    char *cache_error;
    aitk_dep_obj *objs;
    size_t obj_count;
    aitk_dir_listing *dirs;
    size_t dir_count;
    /* Linux search folders met this session, hashed by name (resolve_linux.c):
     * whether each is a folder, asked once, and in which folder list it
     * was last met, so a list names each folder once (as glibc keeps the
     * first of repeated entries): a 1000-entry LD_LIBRARY_PATH costs 1000
     * stats a session, not 1000 per library. */
    struct aitk_folder_seen *folders;
    size_t folder_cap, folder_count;
    unsigned list_id;
    /* opened.yaml, read at the first library that may open others. */
    struct aitk_opened *opened;
    bool opened_loaded;
};

/* Reads (or finds in the session cache) the object at `path`. Returns its
 * index; the object's st/error say whether it could be read. */
aitk_status aitk_deps_obj(aitk_deps *d, const char *path, bool is_pe, size_t *index);

/* Fills node `i` (name set, parent set) of `t`: path/how/state, searched,
 * skipped, duplicates. The requester is t->nodes[i].parent. */
aitk_status aitk_resolve_linux(aitk_deps *d, aitk_dep_tree *t, size_t i);
aitk_status aitk_resolve_windows(aitk_deps *d, aitk_dep_tree *t, size_t i);

/* resolve_interp.c: whether `name` is the Python interpreter's DLL
 * (python3.dll, python311.dll, python313t.dll); the interpreter's folder
 * for a DLL folder inside ENV\Lib\site-packages\torch\lib (pyvenv.cfg
 * home, else ENV), with the search-order rule that names it, or nothing
 * and why (`rule` NULL); and the verdict on a DLL no searched folder holds:
 * NOT FOUND where it is knowable, AITK_DEP_UNKNOWN with the reason where
 * it is not (the interpreter's folder or System32 unknown). */
bool aitk_deps_is_python_dll(const char *name);
aitk_status aitk_deps_interpreter_dir(const char *torch_lib, aitk_str *dir, const char **rule,
                                      aitk_str *why);
aitk_status aitk_resolve_windows_absent(aitk_deps *d, aitk_dep_tree *t, size_t i,
                                        const char *app_dir, const char *app_why);

/* On Windows, every '/' of `path` made '\\', so that the paths the tool
 * prints are in one style whatever the user typed (C:/venv/... beside
 * C:\\Windows\\System32); elsewhere paths are the host's and left alone. */
void aitk_deps_win_separators(char *path);

/* Frees the session's folder cache (resolve_linux.c). */
void aitk_deps_folders_free(aitk_deps *d);

/* Case-insensitive file lookup in `dir`: the on-disk name or NULL. */
aitk_status aitk_deps_dir_find(aitk_deps *d, const char *dir, const char *name,
                               const char **real);

#endif
