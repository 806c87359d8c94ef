/* The tree walk (see tree.h): breadth-first like both loaders, each name
 * resolved by the platform's rules, each file read once per session.
 *
 * Node pointers are re-taken after every append because the node array
 * grows; indexes are the stable handle. */
#include "validate/libdeps/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "validate/libdeps/resolve.h"
#include "validate/libdeps/tree_needs.h"

aitk_status aitk_strlist_add(aitk_strlist *l, const char *text)
{
    char **g = aitk_realloc(l->items, (l->count + 1) * sizeof *g);
    if (!g)
        return AITK_E_NOMEM;
    l->items = g;
    if (!(g[l->count] = aitk_strdup(text)))
        return AITK_E_NOMEM;
    l->count++;
    return AITK_OK;
}

void aitk_strlist_free(aitk_strlist *l)
{
    for (size_t i = 0; i < l->count; i++)
        aitk_free(l->items[i]);
    aitk_free(l->items);
    l->items = NULL;
    l->count = 0;
}

const char *aitk_dep_state_name(aitk_dep_state st)
{
    switch (st) {
#define AITK_X_CASE(name, text) case name: return text;
        AITK_DEP_STATE_LIST(AITK_X_CASE)
#undef AITK_X_CASE
    }
    return "unknown";
}

bool aitk_dep_state_is_problem(aitk_dep_state st)
{
    return st == AITK_DEP_NOT_FOUND || st == AITK_DEP_WRONG_ARCH || st == AITK_DEP_BAD_FILE ||
           st == AITK_DEP_BAD_VERSION || st == AITK_DEP_MISSING_SYMBOL;
}

aitk_status aitk_deps_new(const aitk_deps_opts *opts, aitk_deps **out, aitk_str *err)
{
    (void)err;
    *out = aitk_calloc(1, sizeof **out);
    if (!*out)
        return AITK_E_NOMEM;
    (*out)->opts = *opts;
    return AITK_OK;
}

static void obj_free(aitk_dep_obj *o)
{
    aitk_free(o->path);
    aitk_free(o->error);
    aitk_elf_info_free(&o->elf);
    aitk_pe_info_free(&o->pe);
}

void aitk_deps_free(aitk_deps *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->obj_count; i++)
        obj_free(&d->objs[i]);
    aitk_free(d->objs);
    for (size_t i = 0; i < d->dir_count; i++) {
        aitk_dir_listing *l = &d->dirs[i];
        for (size_t j = 0; j < l->count; j++) {
            aitk_free(l->lower[j]);
            aitk_free(l->real[j]);
        }
        aitk_free(l->lower);
        aitk_free(l->real);
        aitk_free(l->dir);
    }
    aitk_free(d->dirs);
    aitk_ldcache_free(&d->cache);
    aitk_free(d->cache_error);
    aitk_free(d);
}

aitk_status aitk_deps_obj(aitk_deps *d, const char *path, bool is_pe, size_t *index)
{
    aitk_file_id id = {0};
    bool have_id = aitk_file_identity(path, &id) == 0;
    for (size_t i = 0; i < d->obj_count; i++) {
        aitk_dep_obj *o = &d->objs[i];
        if (have_id ? (o->id.volume == id.volume && o->id.index == id.index &&
                       o->st != AITK_E_IO)
                    : strcmp(o->path, path) == 0) {
            *index = i;
            return AITK_OK;
        }
    }
    aitk_dep_obj *g = aitk_realloc(d->objs, (d->obj_count + 1) * sizeof *g);
    if (!g)
        return AITK_E_NOMEM;
    d->objs = g;
    aitk_dep_obj *o = &g[d->obj_count];
    memset(o, 0, sizeof *o);
    if (!(o->path = aitk_strdup(path)))
        return AITK_E_NOMEM;
    d->obj_count++;
    o->is_pe = is_pe;
    o->id = id;
    aitk_str err = AITK_STR_INIT;
    unsigned pe_flags = AITK_PE_READ_EXPORTS | AITK_PE_READ_SYMBOLS;
    o->st = is_pe ? aitk_pe_read_file(path, pe_flags, &o->pe, &err)
                  : aitk_elf_read_file(path, &o->elf, &err);
    if (o->st == AITK_E_NOMEM) {
        aitk_str_free(&err);
        return AITK_E_NOMEM;
    }
    if (o->st && !(o->error = aitk_str_steal(&err)))
        return AITK_E_NOMEM;
    aitk_str_free(&err);
    *index = d->obj_count - 1;
    return AITK_OK;
}

static aitk_status add_node(aitk_dep_tree *t, const char *name, size_t parent, size_t *index)
{
    aitk_dep_node *g = aitk_grow(t->nodes, sizeof *g, t->count, &t->cap, 32);
    if (!g)
        return AITK_E_NOMEM;
    t->nodes = g;
    aitk_dep_node *n = &t->nodes[t->count];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->first_child = n->last_child = n->next_sibling = AITK_DEP_NONE;
    n->obj = AITK_DEP_NONE;
    if (!(n->name = aitk_strdup(name)))
        return AITK_E_NOMEM;
    *index = t->count++;
    if (parent != AITK_DEP_NONE) {
        aitk_dep_node *p = &t->nodes[parent];
        n->depth = p->depth + 1;
        if (p->last_child == AITK_DEP_NONE)
            p->first_child = *index;
        else
            t->nodes[p->last_child].next_sibling = *index;
        p->last_child = *index;
    }
    return AITK_OK;
}

static const char *base_name(const char *path)
{
    const char *s = aitk_path_last_separator(path);
    return s ? s + 1 : path;
}

/* "/x", and on Windows also "C:\x", "C:/x" and "\\server\share". */
static bool is_absolute(const char *path)
{
#ifdef _WIN32
    if (path[0] == '\\' ||
        (((path[0] | 0x20) >= 'a' && (path[0] | 0x20) <= 'z') && path[1] == ':'))
        return true;
#endif
    return path[0] == '/';
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *c = aitk_strdup(s);
    if (!c)
        *oom = true;
    return c;
}

/* An earlier node the loader would reuse for `name` instead of searching. */
static size_t find_loaded(const aitk_deps *d, const aitk_dep_tree *t, size_t upto, const char *name)
{
    for (size_t j = 0; j < upto; j++) {
        const aitk_dep_node *n = &t->nodes[j];
        if (n->repeat || !(n->state == AITK_DEP_ROOT || n->state == AITK_DEP_FOUND ||
                           n->state == AITK_DEP_SYSTEM))
            continue;
        if (t->format == AITK_DEP_PE) {
            if (strcasecmp(base_name(n->name), name) == 0)
                return j;
        } else if (strcmp(j == 0 ? base_name(n->name) : n->name, name) == 0 ||
                   (n->obj != AITK_DEP_NONE && d->objs[n->obj].elf.soname &&
                    strcmp(d->objs[n->obj].elf.soname, name) == 0)) {
            return j;
        }
    }
    return AITK_DEP_NONE;
}

static aitk_status set_arch(aitk_deps *d, aitk_dep_node *n)
{
    const aitk_dep_obj *o = &d->objs[n->obj];
    aitk_str s = AITK_STR_INIT;
    if (o->is_pe)
        aitk_pe_machine_name(o->pe.machine, &s);
    else
        aitk_elf_machine_name(o->elf.machine, &s);
    if (!o->is_pe)
        aitk_str_append(&s, o->elf.elf_class == 1 ? " (32-bit)" : " (64-bit)");
    n->arch = aitk_str_steal(&s);
    if (o->is_pe && o->pe.file_version && !(n->version = aitk_strdup(o->pe.file_version)))
        return AITK_E_NOMEM;
    return n->arch ? AITK_OK : AITK_E_NOMEM;
}

/* A file cut short (elf.h, pe.h) is found but unusable: ld.so faults
 * mapping it, Windows refuses it; its own needs are not read. */
static aitk_status mark_damaged(aitk_deps *d, aitk_dep_node *n)
{
    const aitk_dep_obj *o = &d->objs[n->obj];
    if (!(o->is_pe ? o->pe.truncated : o->elf.truncated))
        return AITK_OK;
    aitk_str s = AITK_STR_INIT;
    aitk_str_appendf(&s, "truncated: the file has %" PRIu64 " bytes, its headers describe %" PRIu64
                         " (an interrupted download or copy?)",
                     o->is_pe ? o->pe.file_size : o->elf.file_size,
                     o->is_pe ? o->pe.described_size : o->elf.described_size);
    aitk_free(n->detail);
    n->state = AITK_DEP_BAD_FILE;
    n->truncated = true;
    return (n->detail = aitk_str_steal(&s)) ? AITK_OK : AITK_E_NOMEM;
}

/* After the resolver found a file: read it, note corrupt files and files
 * that are already loaded under another name. */
static aitk_status open_found(aitk_deps *d, aitk_dep_tree *t, size_t i)
{
    aitk_dep_node *n = &t->nodes[i];
    size_t obj;
    aitk_status st = aitk_deps_obj(d, n->path, t->format == AITK_DEP_PE, &obj);
    if (st)
        return st;
    n->obj = obj;
    if (d->objs[obj].st) {
        n->state = AITK_DEP_BAD_FILE;
        return (n->detail = aitk_strdup(d->objs[obj].error)) ? AITK_OK : AITK_E_NOMEM;
    }
    if ((st = set_arch(d, n)) || (st = mark_damaged(d, n)) || n->state == AITK_DEP_BAD_FILE)
        return st;
    for (size_t j = 0; j < i; j++)
        if (t->nodes[j].obj == obj && !t->nodes[j].repeat)
            n->repeat = true;
    return AITK_OK;
}

static aitk_status add_child(aitk_deps *d, aitk_dep_tree *t, size_t parent, const char *name,
                             bool delay)
{
    size_t i;
    aitk_status st = add_node(t, name, parent, &i);
    if (st)
        return st;
    t->nodes[i].delay = delay;
    size_t prev = find_loaded(d, t, i, name);
    if (prev != AITK_DEP_NONE) {
        aitk_dep_node *n = &t->nodes[i];
        const aitk_dep_node *p = &t->nodes[prev];
        bool oom = false;
        n->path = dup_or_null(p->path, &oom);
        n->how = dup_or_null(prev == 0 ? "the root itself" : p->how, &oom);
        n->arch = dup_or_null(p->arch, &oom);
        n->version = dup_or_null(p->version, &oom);
        n->state = p->state == AITK_DEP_ROOT ? AITK_DEP_FOUND : p->state;
        n->obj = p->obj;
        n->repeat = true;
        if (oom)
            return AITK_E_NOMEM;
    } else {
        st = t->format == AITK_DEP_PE ? aitk_resolve_windows(d, t, i) : aitk_resolve_linux(d, t, i);
        if (!st && t->nodes[i].state == AITK_DEP_FOUND && t->nodes[i].path)
            st = open_found(d, t, i);
    }
    if (!st && t->format == AITK_DEP_ELF && t->nodes[i].state == AITK_DEP_FOUND)
        st = aitk_deps_check_versions(d, t, i);
    if (!st && t->format == AITK_DEP_PE && t->nodes[i].state == AITK_DEP_FOUND)
        st = aitk_deps_check_symbols(d, t, i);
    return st;
}

/* DLLs node i forwards the functions its requester imports from it to
 * ("cmiss.realb": cmiss.dll): the loader loads them while binding those
 * imports, and a missing one fails the load (error 126), so each is a
 * child of node i; and each must export the functions forwarded to it
 * (error 127). Per link: a DLL met again (a repeat) is not expanded, but
 * its new requester's forwarded imports are still bound. */
/* Whether the forwards node i binds for its parent were bound already: an
 * earlier node is the same file under the same requesting file. Without
 * this, two DLLs forwarding to each other (A forwards f to B, B forwards h
 * to A, each importing the other's) would add repeat after repeat without
 * end. */
static bool pair_done(const aitk_dep_tree *t, size_t i)
{
    const aitk_dep_node *n = &t->nodes[i];
    if (n->parent == AITK_DEP_NONE)
        return false;
    for (size_t j = 0; j < i; j++) {
        const aitk_dep_node *m = &t->nodes[j];
        if (m->obj == n->obj && m->parent != AITK_DEP_NONE &&
            t->nodes[m->parent].obj == t->nodes[n->parent].obj)
            return true;
    }
    return false;
}

static aitk_status expand_forwarders(aitk_deps *d, aitk_dep_tree *t, size_t i)
{
    const aitk_dep_node *n = &t->nodes[i];
    if (n->parent == AITK_DEP_NONE || t->nodes[n->parent].obj == AITK_DEP_NONE)
        return AITK_OK;
    const aitk_pe_info *req = &d->objs[t->nodes[n->parent].obj].pe;
    const aitk_pe_info *prov = &d->objs[n->obj].pe;
    /* One entry per forwarded import: its target DLL and function, and the
     * name the requester imported. */
    aitk_strlist dlls = {0}, funcs = {0}, from = {0};
    aitk_status st = AITK_OK;
    for (size_t k = 0; !st && prov->forward_count && k < req->import_count; k++) {
        const aitk_pe_import *imp = &req->imports[k];
        if (strcasecmp(imp->dll, n->name) != 0 || imp->delay != n->delay)
            continue;
        for (size_t s = 0; !st && s < imp->symbol_count; s++) {
            const aitk_pe_forward *f = aitk_pe_find_forward(prov, imp->symbols[s]);
            const char *dot = f ? strrchr(f->target, '.') : NULL;
            if (!dot || dot == f->target)
                continue;
            aitk_str dll = AITK_STR_INIT;
            aitk_str_appendf(&dll, "%.*s.dll", (int)(dot - f->target), f->target);
            st = aitk_str_status(&dll);
            if (!st && (st = aitk_strlist_add(&dlls, dll.ptr)) == AITK_OK &&
                (st = aitk_strlist_add(&funcs, dot + 1)) == AITK_OK)
                st = aitk_strlist_add(&from, f->name);
            aitk_str_free(&dll);
        }
    }
    /* Each target DLL once, as a child; then its functions. */
    for (size_t j = 0; !st && j < dlls.count; j++) {
        bool seen = false;
        for (size_t k = 0; k < j && !seen; k++)
            seen = strcasecmp(dlls.items[k], dlls.items[j]) == 0;
        if (seen)
            continue;
        size_t before = t->count;
        st = add_child(d, t, i, dlls.items[j], t->nodes[i].delay);
        if (st || t->count == before)
            continue;
        aitk_dep_node *c = &t->nodes[before];
        c->forwarder = true;
        aitk_strlist fj = {0}, wj = {0};
        for (size_t k = j; !st && k < dlls.count; k++)
            if (strcasecmp(dlls.items[k], dlls.items[j]) == 0 &&
                (st = aitk_strlist_add(&fj, funcs.items[k])) == AITK_OK)
                st = aitk_strlist_add(&wj, from.items[k]);
        if (!st && !c->detail && aitk_dep_state_is_problem(c->state)) {
            aitk_str why = AITK_STR_INIT;
            aitk_str_appendf(&why, "%s forwards %s to %.*s.%s; Windows loads %s while binding "
                                   "it and fails the load when it cannot (error 126)",
                             base_name(n->name), wj.items[0], (int)(strlen(c->name) - 4),
                             c->name, fj.items[0], c->name);
            st = aitk_str_status(&why);
            c = &t->nodes[before];
            if (!st)
                c->detail = aitk_str_steal(&why);
            aitk_str_free(&why);
        }
        if (!st)
            st = aitk_deps_check_forwarded(d, t, before, &fj, &wj);
        aitk_strlist_free(&fj);
        aitk_strlist_free(&wj);
    }
    aitk_strlist_free(&dlls);
    aitk_strlist_free(&funcs);
    aitk_strlist_free(&from);
    return st;
}

static aitk_status expand(aitk_deps *d, aitk_dep_tree *t, size_t i)
{
    const aitk_dep_obj *o = &d->objs[t->nodes[i].obj];
    size_t n = o->is_pe ? o->pe.import_count : o->elf.needed_count;
    for (size_t k = 0; k < n; k++) {
        /* `o` stays valid: the object cache only grows in open_found, so re-take it. */
        o = &d->objs[t->nodes[i].obj];
        const char *name = o->is_pe ? o->pe.imports[k].dll : o->elf.needed[k];
        bool delay = o->is_pe && o->pe.imports[k].delay;
        char *copy = aitk_strdup(name);
        if (!copy)
            return AITK_E_NOMEM;
        aitk_status st = add_child(d, t, i, copy, delay);
        aitk_free(copy);
        if (st)
            return st;
    }
    return d->objs[t->nodes[i].obj].is_pe ? expand_forwarders(d, t, i) : AITK_OK;
}

/* What a readable file that is neither ELF nor PE is, from its first bytes:
 * a glob over a library folder meets these (libc.so is a GNU ld script). */
static aitk_dep_other not_a_library(const unsigned char *h, size_t n)
{
    if (n == 0)
        return AITK_DEP_OTHER_EMPTY;
    if (n >= 8 && memcmp(h, "!<arch>\n", 8) == 0)
        return AITK_DEP_OTHER_ARCHIVE;
    static const char *const ld_words[] = {"/* GNU ld script", "GROUP", "INPUT", "OUTPUT_FORMAT",
                                           "SEARCH_DIR", "INCLUDE"};
    for (size_t i = 0; i < sizeof ld_words / sizeof *ld_words; i++) {
        size_t k = strlen(ld_words[i]);
        if (n >= k && memcmp(h, ld_words[i], k) == 0)
            return AITK_DEP_OTHER_LD_SCRIPT;
    }
    if (n >= 2 && h[0] == '#' && h[1] == '!')
        return AITK_DEP_OTHER_SCRIPT;
    return AITK_DEP_OTHER_UNKNOWN;
}

const char *aitk_dep_other_text(aitk_dep_other k)
{
    switch (k) {
    case AITK_DEP_OTHER_NONE: return "a shared library";
    case AITK_DEP_OTHER_EMPTY: return "an empty file";
    case AITK_DEP_OTHER_ARCHIVE: return "an ar archive (a static library)";
    case AITK_DEP_OTHER_LD_SCRIPT: return "a GNU ld script";
    case AITK_DEP_OTHER_SCRIPT: return "a script";
    case AITK_DEP_OTHER_UNKNOWN: break;
    }
    return "neither an ELF nor a PE (Windows) file";
}

aitk_status aitk_deps_sniff(const char *path, aitk_dep_format *fmt, aitk_dep_other *other,
                            aitk_str *err)
{
    *other = AITK_DEP_OTHER_NONE;
    /* stat before open: Windows cannot open() a folder at all. */
    struct stat sb;
    if (stat(path, &sb) != 0) {
        aitk_str_appendf(err, "%s: %s", path, strerror(errno));
        return AITK_E_IO;
    }
    if (S_ISDIR(sb.st_mode)) {
        aitk_str_appendf(err, "%s: is a folder; give the library files (for example %s/*.so*)",
                         path, path);
        return AITK_E_INVAL;
    }
    if (!S_ISREG(sb.st_mode)) {
        aitk_str_appendf(err, "%s: not a regular file", path);
        return AITK_E_INVAL;
    }
    int fd = aitk_open_read(path);
    if (fd < 0) {
        aitk_str_appendf(err, "%s: %s", path, strerror(errno));
        return AITK_E_IO;
    }
    unsigned char h[16];
    ssize_t n = read(fd, h, sizeof h);
    int e = errno;
    close(fd);
    if (n < 0) {
        aitk_str_appendf(err, "%s: %s", path, strerror(e));
        return AITK_E_IO;
    }
    if (n >= 4 && memcmp(h, "\177ELF", 4) == 0)
        *fmt = AITK_DEP_ELF;
    else if (n >= 2 && h[0] == 'M' && h[1] == 'Z')
        *fmt = AITK_DEP_PE;
    else
        *other = not_a_library(h, (size_t)n);
    return AITK_OK;
}

aitk_status aitk_deps_analyze(aitk_deps *d, const char *path, aitk_dep_tree *t, aitk_str *err)
{
    memset(t, 0, sizeof *t);
    aitk_str abs = AITK_STR_INIT;
    if (!is_absolute(path)) {
        /* ld.so makes $ORIGIN absolute the same way: cwd + name, no realpath. */
        char *cwd = getcwd(NULL, 0);
        if (cwd)
            aitk_str_appendf(&abs, "%s/", cwd);
        free(cwd);
    }
    aitk_str_append(&abs, path);
    if (aitk_str_status(&abs))
        return AITK_E_NOMEM;
    aitk_dep_other other;
    aitk_status st = aitk_deps_sniff(abs.ptr, &t->format, &other, err);
    if (!st && other != AITK_DEP_OTHER_NONE) {
        /* A linker script or a static archive is what it should be, under a
         * library's name; anything else there is a library that is broken. */
        bool legit = other == AITK_DEP_OTHER_LD_SCRIPT || other == AITK_DEP_OTHER_ARCHIVE;
        aitk_str_appendf(err, "%s: %s%s", abs.ptr, aitk_dep_other_text(other),
                         legit ? ", not a shared library" : "");
        st = legit ? AITK_E_UNSUPPORTED : AITK_E_PARSE;
    }
    size_t root = 0;
    if (!st)
        st = add_node(t, abs.ptr, AITK_DEP_NONE, &root);
    if (!st) {
        t->nodes[0].state = AITK_DEP_ROOT;
        if (!(t->nodes[0].path = aitk_strdup(abs.ptr)) || !(t->nodes[0].how = aitk_strdup("given")))
            st = AITK_E_NOMEM;
    }
    if (!st)
        st = aitk_deps_obj(d, abs.ptr, t->format == AITK_DEP_PE, &t->nodes[0].obj);
    aitk_str_free(&abs);
    if (!st && d->objs[t->nodes[0].obj].st) {
        aitk_str_append(err, d->objs[t->nodes[0].obj].error);
        st = d->objs[t->nodes[0].obj].st;
    }
    if (!st)
        st = set_arch(d, &t->nodes[0]);
    /* A cut-off root is a finding (exit 1), not unreadable input (exit 2):
     * the file is there and says what it is, it is just not whole. */
    if (!st)
        st = mark_damaged(d, &t->nodes[0]);
    for (size_t i = 0; !st && i < t->count; i++) {
        const aitk_dep_node *n = &t->nodes[i];
        if ((n->state != AITK_DEP_ROOT && n->state != AITK_DEP_FOUND) ||
            n->obj == AITK_DEP_NONE || d->objs[n->obj].st)
            continue;
        if (d->opts.max_depth && n->depth >= d->opts.max_depth)
            continue;
        if (!n->repeat)
            st = expand(d, t, i);
        else if (d->objs[n->obj].is_pe && !pair_done(t, i))
            st = expand_forwarders(d, t, i); /* this requester's forwarded imports */
    }
    if (st)
        aitk_dep_tree_free(t);
    if (st == AITK_E_UNSUPPORTED)
        t->not_library = other;
    return st;
}

void aitk_dep_tree_free(aitk_dep_tree *t)
{
    for (size_t i = 0; i < t->count; i++) {
        aitk_dep_node *n = &t->nodes[i];
        aitk_free(n->name);
        aitk_free(n->path);
        aitk_free(n->how);
        aitk_free(n->detail);
        aitk_free(n->arch);
        aitk_free(n->version);
        aitk_strlist_free(&n->searched);
        aitk_strlist_free(&n->skipped);
        aitk_strlist_free(&n->duplicates);
    }
    aitk_free(t->nodes);
    aitk_free(t->load);
    memset(t, 0, sizeof *t);
}

bool aitk_dep_tree_deferred(const aitk_dep_tree *t, size_t i)
{
    for (size_t j = i; j != AITK_DEP_NONE; j = t->nodes[j].parent)
        if (t->nodes[j].delay)
            return true;
    return false;
}

static size_t static_problems(const aitk_dep_tree *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        n += !t->nodes[i].repeat && aitk_dep_state_is_problem(t->nodes[i].state) &&
             !aitk_dep_tree_deferred(t, i);
    return n;
}

bool aitk_dep_tree_load_problem(const aitk_dep_tree *t)
{
    return t->load_failed && static_problems(t) == 0;
}

size_t aitk_dep_tree_problems(const aitk_dep_tree *t)
{
    return static_problems(t) + aitk_dep_tree_load_problem(t);
}

size_t aitk_dep_tree_warnings(const aitk_dep_tree *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        n += !t->nodes[i].repeat &&
             (t->nodes[i].duplicates.count > 0 ||
              (aitk_dep_state_is_problem(t->nodes[i].state) && aitk_dep_tree_deferred(t, i)));
    return n;
}

aitk_status aitk_dep_tree_chain(const aitk_dep_tree *t, size_t i, aitk_str *out)
{
    size_t n = t->nodes[i].depth + 1;
    size_t *path = aitk_malloc(n * sizeof *path);
    if (!path)
        return AITK_E_NOMEM;
    size_t k = n;
    for (size_t j = i; j != AITK_DEP_NONE && k > 0; j = t->nodes[j].parent)
        path[--k] = j;
    for (size_t start = k; k < n; k++)
        aitk_str_appendf(out, "%s%s", k == start ? "" : " -> ", base_name(t->nodes[path[k]].name));
    aitk_free(path);
    return aitk_str_status(out);
}
