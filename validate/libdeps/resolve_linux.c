/* Where ld.so would find one DT_NEEDED name (glibc elf/dl-load.c order):
 *   1. a name with a slash is a path;
 *   2. DT_RPATH of the requester, then of the object that loaded it, and on
 *      up to the root, skipping any object that has DT_RUNPATH, and only
 *      when the requester itself has no DT_RUNPATH;
 *   3. LD_LIBRARY_PATH;
 *   4. DT_RUNPATH of the requester only;
 *   5. /etc/ld.so.cache, then 6. the default folders (both skipped under
 *      DF_1_NODEFLIB).
 * $ORIGIN, $LIB and $PLATFORM are expanded as ld.so does; candidates of the
 * wrong ELF class or machine, or that cannot be opened, are skipped and
 * recorded, as ld.so skips them; a candidate that is no ELF file at all (a
 * Git LFS pointer, an empty or cut-off file, a PE file) ends the search, as
 * ld.so ends the load there ("invalid ELF header", "file too short").
 * Not emulated: glibc-hwcaps/ and legacy hwcap subfolders of each path
 * folder, and secure (setuid) mode. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "validate/libdeps/resolve.h"
#include "validate/libdeps/sniff.h"

typedef struct search {
    aitk_deps *d;
    aitk_dep_node *n;
    int elf_class;
    unsigned machine;
    bool end_list; /* a candidate ended the folder list being searched */
} search;

/* One folder in the session's cache (resolve.h). */
typedef struct aitk_folder_seen {
    char *name;       /* NULL: a free slot */
    bool exists;      /* a folder (glibc: "existing"); anything else holds no library */
    unsigned list_id; /* the folder list it was last met in */
} aitk_folder_seen;

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot for `name` in an open-addressed table of `cap` (a power of 2). */
static aitk_folder_seen *folder_slot(aitk_folder_seen *t, size_t cap, const char *name)
{
    for (size_t i = (size_t)name_hash(name) & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!t[i].name || strcmp(t[i].name, name) == 0)
            return &t[i];
}

/* The cache entry of folder `dir`, asked the first time it is met. NULL
 * when out of memory. */
static aitk_folder_seen *folder_seen(aitk_deps *d, const char *dir)
{
    if ((d->folder_count + 1) * 2 > d->folder_cap) {
        size_t cap = d->folder_cap ? d->folder_cap * 2 : 64;
        aitk_folder_seen *t = aitk_calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < d->folder_cap; i++)
            if (d->folders[i].name)
                *folder_slot(t, cap, d->folders[i].name) = d->folders[i];
        aitk_free(d->folders);
        d->folders = t;
        d->folder_cap = cap;
    }
    aitk_folder_seen *f = folder_slot(d->folders, d->folder_cap, dir);
    if (!f->name) {
        if (!(f->name = aitk_strdup(dir)))
            return NULL;
        f->exists = aitk_is_dir(*dir ? dir : ".");
        f->list_id = 0;
        d->folder_count++;
    }
    return f;
}

void aitk_deps_folders_free(aitk_deps *d)
{
    for (size_t i = 0; i < d->folder_cap; i++)
        aitk_free(d->folders[i].name);
    aitk_free(d->folders);
    d->folders = NULL;
    d->folder_cap = d->folder_count = 0;
}

/* aitk_is_dir through the session cache. */
static bool cached_is_dir(aitk_deps *d, const char *dir, aitk_status *st)
{
    const aitk_folder_seen *f = folder_seen(d, dir);
    if (!f)
        *st = AITK_E_NOMEM;
    return f && f->exists;
}

static const char *triplet(unsigned machine, int elf_class)
{
    if (machine == AITK_EM_X86_64)
        return elf_class == AITK_ELFCLASS64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
    if (machine == AITK_EM_386)
        return "i386-linux-gnu";
    if (machine == AITK_EM_AARCH64)
        return "aarch64-linux-gnu";
    if (machine == AITK_EM_PPC64)
        return "powerpc64le-linux-gnu";
    return NULL;
}

static const char *platform(unsigned machine)
{
    return machine == AITK_EM_X86_64 ? "x86_64" : machine == AITK_EM_386 ? "i686"
           : machine == AITK_EM_AARCH64 ? "aarch64" : "unknown";
}

/* ld.so.cache flags for this class/machine (dl-cache.h _DL_CACHE_DEFAULT_ID). */
static uint32_t cache_flags(unsigned machine, int elf_class)
{
    if (machine == AITK_EM_X86_64 && elf_class == AITK_ELFCLASS64)
        return AITK_LDCACHE_FLAG_ELF_LIBC6 | AITK_LDCACHE_FLAG_X8664_LIB64;
    if (machine == AITK_EM_X86_64)
        return AITK_LDCACHE_FLAG_ELF_LIBC6 | 0x0800u; /* x32 */
    if (machine == AITK_EM_AARCH64)
        return AITK_LDCACHE_FLAG_ELF_LIBC6 | AITK_LDCACHE_FLAG_AARCH64_LIB64;
    return AITK_LDCACHE_FLAG_ELF_LIBC6;
}

/* Another usable copy of an already found library, further down the
 * search order: ld.so never loads it, but a different version there is how
 * "works in one shell, fails in another" happens (LD_LIBRARY_PATH, pip's
 * nvidia-* packages next to a CUDA toolkit). */
static aitk_status note_duplicate(search *s, const char *file, const char *rule)
{
    struct stat a, b;
    int cls = 0;
    unsigned mach = 0;
    aitk_str err = AITK_STR_INIT, text = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    if (stat(file, &a) == 0 && S_ISREG(a.st_mode) && stat(s->n->path, &b) == 0 &&
        (a.st_dev != b.st_dev || a.st_ino != b.st_ino) &&
        aitk_elf_peek(file, &cls, &mach, &err) == AITK_OK && cls == s->elf_class &&
        mach == s->machine) {
        for (size_t i = 0; i < s->n->duplicates.count; i++)
            if (strncmp(s->n->duplicates.items[i], file, strlen(file)) == 0 &&
                s->n->duplicates.items[i][strlen(file)] == ' ')
                goto out; /* the same file reached by two rules */
        aitk_str_appendf(&text, "%s (%s, %lld bytes; %s: %lld bytes)", file, rule,
                         (long long)a.st_size,
                         s->n->state == AITK_DEP_BAD_FILE ? "the refused first copy" : "loaded copy",
                         (long long)b.st_size);
        st = aitk_str_status(&text) ? AITK_E_NOMEM : aitk_strlist_add(&s->n->duplicates, text.ptr);
    }
out:
    aitk_str_free(&err);
    aitk_str_free(&text);
    return st;
}

/* The first file of the name that ld.so refuses outright: open_verify
 * gives up the whole load there (glibc elf/dl-load.c: "invalid ELF header",
 * "file too short", "only ET_DYN and ET_EXEC can be loaded"); only another
 * class or machine sends it on to the next folder. So the node is this
 * file, unusable, and later copies are duplicates. What a file that is no
 * ELF at all is instead (a Git LFS pointer never fetched) picks the remedy. */
static aitk_status found_refused(search *s, const char *file, const char *rule,
                                 const char *loader_says, bool is_elf, aitk_elf_head kind)
{
    aitk_dep_node *n = s->n;
    aitk_str why = AITK_STR_INIT;
    aitk_status st;
    /* A cut or damaged ELF file is said so in the words a root gets
     * (aitk_elf_judge_header), which end in ld.so's own. */
    const bool damaged = is_elf && (kind == AITK_ELF_HEAD_CUT || kind == AITK_ELF_HEAD_CORRUPT);
    if (!is_elf)
        st = aitk_deps_describe_bad_candidate(file, AITK_DEP_ELF, &n->not_library, &why);
    else if (damaged)
        st = aitk_str_append(&why, loader_says);
    else
        st = aitk_str_appendf(&why, "an ELF file ld.so cannot load (ld.so: %s)", loader_says);
    if (!st && !is_elf)
        st = aitk_str_appendf(&why, " (ld.so: %s)", loader_says);
    if (!st)
        st = aitk_str_append(&why, "; ld.so stops at this file and does not look further");
    n->state = AITK_DEP_BAD_FILE;
    n->truncated = damaged && kind == AITK_ELF_HEAD_CUT;
    n->corrupt = damaged && kind == AITK_ELF_HEAD_CORRUPT;
    n->refused = n->not_library == AITK_DEP_OTHER_NONE;
    n->detail = st ? NULL : aitk_str_steal(&why);
    aitk_str_free(&why);
    n->path = aitk_strdup(file);
    n->how = aitk_strdup(rule);
    return n->detail && n->path && n->how ? AITK_OK : AITK_E_NOMEM;
}

/* Whether the folder part of `file` is a folder. */
static bool folder_exists(const char *file)
{
    const char *sep = aitk_path_last_separator(file);
    if (!sep)
        return aitk_is_dir(".");
    aitk_str dir = AITK_STR_INIT;
    aitk_str_appendn(&dir, file, sep == file ? 1 : (size_t)(sep - file));
    bool yes = !aitk_str_status(&dir) && aitk_is_dir(dir.ptr);
    aitk_str_free(&dir);
    return yes;
}

static bool note_skipped(search *s, aitk_str *why, aitk_status *st)
{
    *st = aitk_str_status(why);
    if (!*st)
        *st = aitk_strlist_add(&s->n->skipped, why->ptr);
    aitk_str_free(why);
    return *st != AITK_OK;
}

/* Checks one candidate file. Returns true only when the search must stop
 * (out of memory); a found library is recorded in the node and the search
 * goes on, looking only for further copies. A candidate that cannot be
 * opened for another reason than "not there" or "not allowed" (a symbolic
 * link loop) ends the folder list it came from, as in glibc's open_path:
 * s->end_list. */
static bool try_path(search *s, const char *file, const char *rule, aitk_status *st)
{
    if (s->n->path) {
        *st = note_duplicate(s, file, rule); /* a file not there is no copy */
        return *st != AITK_OK;
    }
    int cls = 0, open_errno = 0;
    unsigned mach = 0;
    aitk_elf_head kind;
    aitk_str why = AITK_STR_INIT;
    switch (aitk_elf_check_candidate(file, s->elf_class, s->machine, &cls, &mach, &open_errno,
                                     &kind, &why)) {
    case AITK_ELF_CANDIDATE_USE: break;
    case AITK_ELF_CANDIDATE_STOP:
        *st = aitk_str_status(&why);
        if (!*st)
            *st = found_refused(s, file, rule, why.ptr, cls != 0, kind);
        aitk_str_free(&why);
        return *st != AITK_OK;
    case AITK_ELF_CANDIDATE_SKIP:
        if (cls != AITK_ELFCLASS32 && cls != AITK_ELFCLASS64) {
            aitk_str_appendf(&why, "%s (ELF of no valid class, %d)", file, cls);
            return note_skipped(s, &why, st);
        }
        aitk_str_appendf(&why, "%s (ELF %d-bit ", file, cls == AITK_ELFCLASS32 ? 32 : 64);
        aitk_elf_machine_name(mach, &why);
        aitk_str_appendf(&why, ", the tree is %d-bit ", s->elf_class == AITK_ELFCLASS32 ? 32 : 64);
        aitk_elf_machine_name(s->machine, &why);
        aitk_str_append(&why, ")");
        return note_skipped(s, &why, st);
    case AITK_ELF_CANDIDATE_NOT_OPENED:
        if (open_errno == ENOENT) {
#ifndef _WIN32
            /* A link named like the library that leads nowhere: ld.so
             * passes over it, and the user should see why it did not count. */
            struct stat lsb;
            if (lstat(file, &lsb) == 0 && S_ISLNK(lsb.st_mode)) {
                aitk_str_appendf(&why, "%s (a broken symbolic link)", file);
                return note_skipped(s, &why, st);
            }
#endif
            return false;
        }
        if (open_errno == EACCES) {
            aitk_str_appendf(&why, "%s (cannot be read: %s)", file, strerror(open_errno));
            return note_skipped(s, &why, st);
        }
        /* glibc ends the list only when the folder itself is there (its
         * "existing" status): a RUNPATH entry that is a file, or a loop,
         * is a folder that is not there, passed over quietly. */
        if (!folder_exists(file))
            return false;
        aitk_str_appendf(&why, "%s (%s: ld.so gives up the rest of this folder list, %s)", file,
                         open_errno == ELOOP ? "a symbolic link loop" : strerror(open_errno),
                         rule);
        s->end_list = true;
        return note_skipped(s, &why, st);
    }
    s->n->state = AITK_DEP_FOUND;
    if (!(s->n->path = aitk_strdup(file)) || !(s->n->how = aitk_strdup(rule)))
        *st = AITK_E_NOMEM;
    return *st != AITK_OK;
}

static bool try_dir(search *s, const char *dir, const char *rule, aitk_status *st)
{
    /* Runs once per folder per library: a long LD_LIBRARY_PATH makes it hot,
     * so the file name is built only for a folder that is there. */
    if (!s->n->path) {
        aitk_str label = AITK_STR_INIT;
        aitk_str_append(&label, *dir ? dir : ".");
        aitk_str_append(&label, " (");
        aitk_str_append(&label, rule);
        aitk_str_append(&label, ")");
        if (!(*st = aitk_str_status(&label)))
            *st = aitk_strlist_add(&s->n->searched, label.ptr);
        aitk_str_free(&label);
        if (*st)
            return true;
    }
    if (!cached_is_dir(s->d, dir, st)) /* no folder holds no file: nothing to open */
        return *st != AITK_OK;
    aitk_str file = AITK_STR_INIT;
    aitk_str_appendf(&file, "%s%s%s", dir, *dir && dir[strlen(dir) - 1] != '/' ? "/" : "",
                     s->n->name);
    bool done = (*st = aitk_str_status(&file)) != AITK_OK || try_path(s, file.ptr, rule, st);
    aitk_str_free(&file);
    return done;
}

/* Replaces $ORIGIN, $LIB, $PLATFORM (and ${...}) in one path element. */
static aitk_status expand(const search *s, const char *elem, size_t len, const char *origin,
                          aitk_str *out)
{
    if (!memchr(elem, '$', len)) /* most elements: copied as they are */
        return aitk_str_appendn(out, elem, len);
    const char *trip = triplet(s->machine, s->elf_class);
    aitk_str lib = AITK_STR_INIT;
    aitk_str_appendf(&lib, "lib/%s", trip ? trip : "");
    bool multiarch = false;
    aitk_status st = AITK_OK;
    if (trip) {
        aitk_str probe = AITK_STR_INIT;
        aitk_str_appendf(&probe, "/%s", lib.ptr);
        multiarch = !aitk_str_status(&probe) && cached_is_dir(s->d, probe.ptr, &st);
        aitk_str_free(&probe);
    }
    if (st) {
        aitk_str_free(&lib);
        return st;
    }
    if (!multiarch) {
        aitk_str_clear(&lib);
        aitk_str_append(&lib, s->elf_class == AITK_ELFCLASS64 ? "lib64" : "lib");
    }
    static const char *const names[] = {"ORIGIN", "LIB", "PLATFORM"};
    for (size_t i = 0; i < len;) {
        bool hit = false;
        if (elem[i] == '$') {
            for (size_t k = 0; k < 3 && !hit; k++) {
                size_t nl = strlen(names[k]), skip = 0;
                if (len - i > nl && strncmp(elem + i + 1, names[k], nl) == 0)
                    skip = 1 + nl;
                else if (len - i > nl + 2 && elem[i + 1] == '{' &&
                         strncmp(elem + i + 2, names[k], nl) == 0 && elem[i + 2 + nl] == '}')
                    skip = 3 + nl;
                if (skip) {
                    aitk_str_append(out, k == 0 ? origin : k == 1 ? lib.ptr : platform(s->machine));
                    i += skip;
                    hit = true;
                }
            }
        }
        if (!hit)
            aitk_str_appendc(out, elem[i++]);
    }
    aitk_str_free(&lib);
    return aitk_str_status(out);
}

/* Searches each folder of a ':'-separated list; true when it must stop.
 * A folder named again later in the same list is searched once, where it
 * first comes (glibc's fillin_rpath keeps the first of repeated entries),
 * which cannot change what is found. */
static bool try_list(search *s, const char *list, const char *origin, const char *rule,
                     aitk_status *st)
{
    const unsigned id = ++s->d->list_id;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ":;");
        aitk_str dir = AITK_STR_INIT;
        *st = expand(s, p, len, origin, &dir);
        aitk_folder_seen *f = *st ? NULL : folder_seen(s->d, aitk_str_cstr(&dir));
        if (!*st && !f)
            *st = AITK_E_NOMEM;
        const bool again = f && f->list_id == id;
        if (f)
            f->list_id = id;
        bool done = *st ? true : again ? false : try_dir(s, aitk_str_cstr(&dir), rule, st);
        aitk_str_free(&dir);
        if (done)
            return true;
        if (s->end_list) {
            s->end_list = false;
            return false;
        }
        if (!p[len])
            return false;
        p += len + 1;
    }
}

static aitk_status origin_of(const aitk_dep_node *n, aitk_str *out)
{
    const char *slash = n->path ? strrchr(n->path, '/') : NULL;
    if (slash == n->path && slash)
        aitk_str_append(out, "/");
    else if (slash)
        aitk_str_appendn(out, n->path, (size_t)(slash - n->path));
    else
        aitk_str_append(out, ".");
    return aitk_str_status(out);
}

static bool try_object_path(search *s, const aitk_dep_tree *t, size_t j, bool runpath,
                            aitk_status *st)
{
    const aitk_dep_node *o = &t->nodes[j];
    const aitk_elf_info *e = &s->d->objs[o->obj].elf;
    const char *list = runpath ? e->runpath : e->rpath;
    if (!list)
        return false;
    const char *slash = strrchr(o->name, '/');
    aitk_str origin = AITK_STR_INIT, rule = AITK_STR_INIT;
    origin_of(o, &origin);
    aitk_str_appendf(&rule, "%s of %s", runpath ? "DT_RUNPATH" : "DT_RPATH",
                     slash ? slash + 1 : o->name);
    bool done = (*st = aitk_str_status(&origin)) || (*st = aitk_str_status(&rule)) ||
                try_list(s, list, origin.ptr, rule.ptr, st);
    aitk_str_free(&origin);
    aitk_str_free(&rule);
    return done;
}

static aitk_status load_cache(aitk_deps *d)
{
    if (d->cache_loaded || d->cache_failed)
        return AITK_OK;
    aitk_str err = AITK_STR_INIT;
    const char *path = d->opts.ldcache_path ? d->opts.ldcache_path : "/etc/ld.so.cache";
    aitk_status st = aitk_ldcache_load(path, &d->cache, &err);
    if (st == AITK_E_NOMEM) {
        aitk_str_free(&err);
        return st;
    }
    d->cache_loaded = st == AITK_OK;
    d->cache_failed = st != AITK_OK;
    if (st)
        d->cache_error = aitk_str_steal(&err);
    aitk_str_free(&err);
    return AITK_OK;
}

static aitk_status search_linux(aitk_deps *d, aitk_dep_tree *t, size_t i)
{
    const aitk_elf_info *root = &d->objs[t->nodes[0].obj].elf;
    search s = {d, &t->nodes[i], root->elf_class, root->machine, false};
    aitk_status st = AITK_OK;
    size_t req = t->nodes[i].parent;
    const aitk_elf_info *re = &d->objs[t->nodes[req].obj].elf;
    const char *name = s.n->name;
    s.n->state = AITK_DEP_NOT_FOUND;
    if (strchr(name, '/')) {
        if (!try_path(&s, name, "path in DT_NEEDED", &st) && !st && !s.n->path)
            st = aitk_strlist_add(&s.n->searched, name);
        return st;
    }
    if (!re->runpath) {
        for (size_t j = req; j != AITK_DEP_NONE; j = t->nodes[j].parent)
            if (!d->objs[t->nodes[j].obj].elf.runpath && try_object_path(&s, t, j, false, &st))
                return st;
    }
    const char *llp = d->opts.ld_library_path ? d->opts.ld_library_path : getenv("LD_LIBRARY_PATH");
    if (llp && *llp && try_list(&s, llp, ".", "LD_LIBRARY_PATH", &st))
        return st;
    if (try_object_path(&s, t, req, true, &st))
        return st;
    if (re->nodeflib)
        return AITK_OK;
    if ((st = load_cache(d)))
        return st;
    if (d->cache_loaded) {
        if (!s.n->path && (st = aitk_strlist_add(&s.n->searched, d->opts.ldcache_path
                                                                      ? d->opts.ldcache_path
                                                                      : "/etc/ld.so.cache")))
            return st;
        const char *hit = aitk_ldcache_lookup(&d->cache, name, cache_flags(s.machine, s.elf_class));
        if (hit && try_path(&s, hit, "ld.so.cache", &st))
            return st;
        s.end_list = false; /* the default folders are searched still */
    }
    /* The default folders of this glibc build (Debian: multiarch first). */
    const char *trip = triplet(s.machine, s.elf_class);
    aitk_str a = AITK_STR_INIT, b = AITK_STR_INIT;
    aitk_str_appendf(&a, "/lib/%s", trip ? trip : "");
    aitk_str_appendf(&b, "/usr/lib/%s", trip ? trip : "");
    bool multi = trip && !aitk_str_status(&a) && cached_is_dir(d, a.ptr, &st);
    if (st) {
        aitk_str_free(&a);
        aitk_str_free(&b);
        return st;
    }
    const char *dirs[4] = {multi ? a.ptr : (s.elf_class == AITK_ELFCLASS64 ? "/lib64" : "/lib"),
                           multi ? b.ptr : (s.elf_class == AITK_ELFCLASS64 ? "/usr/lib64" : "/usr/lib"),
                           multi ? "/lib" : NULL, multi ? "/usr/lib" : NULL};
    if ((st = aitk_str_status(&a)) == AITK_OK && (st = aitk_str_status(&b)) == AITK_OK)
        for (size_t k = 0; k < 4 && dirs[k] && !s.end_list; k++)
            if (try_dir(&s, dirs[k], "default folder", &st))
                break;
    aitk_str_free(&a);
    aitk_str_free(&b);
    return st;
}

/* A name the search left unfound may be a library the process loaded by
 * path before (opts.preloaded): ld.so matches a requested name against the
 * objects already loaded before it searches, so that copy is the one
 * bound. Asked only after the search, so a name the search finds keeps
 * its verdict. */
static aitk_status try_preloaded(aitk_deps *d, aitk_dep_node *n, search *s)
{
    const aitk_strlist *pre = &d->opts.preloaded;
    aitk_status st = AITK_OK;
    for (size_t k = 0; k < pre->count && !n->path && !st; k++) {
        const char *slash = strrchr(pre->items[k], '/');
        if (strcmp(slash ? slash + 1 : pre->items[k], n->name) != 0)
            continue;
        const char *rule = d->opts.preloaded_by ? d->opts.preloaded_by : "loaded before";
        aitk_str label = AITK_STR_INIT;
        aitk_str_appendf(&label, "%s (%s)", pre->items[k], rule);
        if (!(st = aitk_str_status(&label)))
            st = aitk_strlist_add(&n->searched, label.ptr);
        aitk_str_free(&label);
        if (!st)
            try_path(s, pre->items[k], rule, &st);
    }
    return st;
}

aitk_status aitk_resolve_linux(aitk_deps *d, aitk_dep_tree *t, size_t i)
{
    aitk_status st = search_linux(d, t, i);
    if (st || t->nodes[i].path || !d->opts.preloaded.count)
        return st;
    const aitk_elf_info *root = &d->objs[t->nodes[0].obj].elf;
    search s = {d, &t->nodes[i], root->elf_class, root->machine, false};
    return try_preloaded(d, &t->nodes[i], &s);
}
