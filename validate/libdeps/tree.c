/* The tree walk (see tree.h): breadth-first like both loaders, each name
 * resolved by the platform's rules, each file read once per session (a
 * root through the one open that sniffed it, sniff.c).
 *
 * Node pointers are re-taken after every append because the node array
 * grows; indexes are the stable handle. */
#include "validate/libdeps/tree.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "validate/libdeps/opened.h"
#include "validate/libdeps/resolve.h"
#include "validate/libdeps/sniff.h"
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
    aitk_elf_defs_free(o->defs);
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
    aitk_deps_folders_free(d);
    aitk_ldcache_free(&d->cache);
    aitk_opened_free(d->opened);
    aitk_free(d->cache_error);
    aitk_free(d);
}

/* The cached object that is this file: the same file by identity when it
 * is known (links and other names of one file meet here), else by path. */
static bool obj_find(const aitk_deps *d, const char *path, const aitk_file_id *id, size_t *index)
{
    for (size_t i = 0; i < d->obj_count; i++) {
        const aitk_dep_obj *o = &d->objs[i];
        if (id ? (o->id.volume == id->volume && o->id.index == id->index && o->st != AITK_E_IO)
               : strcmp(o->path, path) == 0) {
            *index = i;
            return true;
        }
    }
    return false;
}

/* Reads a new object into the cache: through fd when the caller holds the
 * file open (a root, sniffed through it), else by path. */
static aitk_status obj_add(aitk_deps *d, const char *path, const aitk_file_id *id, int fd,
                           bool is_pe, size_t *index)
{
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
    o->id = *id;
    aitk_str err = AITK_STR_INIT;
    unsigned pe_flags = AITK_PE_READ_EXPORTS | AITK_PE_READ_SYMBOLS;
    if (fd >= 0)
        o->st = is_pe ? aitk_pe_read_fd(fd, path, pe_flags, &o->pe, &err)
                      : aitk_elf_read_fd(fd, path, &o->elf, &err);
    else
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

aitk_status aitk_deps_obj(aitk_deps *d, const char *path, bool is_pe, size_t *index)
{
    aitk_file_id id = {0};
    bool have_id = aitk_file_identity(path, &id) == 0;
    if (obj_find(d, path, have_id ? &id : NULL, index))
        return AITK_OK;
    return obj_add(d, path, &id, -1, is_pe, index);
}

static void node_free(aitk_dep_node *n)
{
    aitk_free(n->name);
    aitk_free(n->path);
    aitk_free(n->how);
    aitk_free(n->detail);
    aitk_free(n->arch);
    aitk_free(n->version);
    aitk_strlist_free(&n->searched);
    aitk_strlist_free(&n->skipped);
    aitk_strlist_free(&n->duplicates);
    aitk_strlist_free(&n->forwarded);
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

/* An earlier node the loader would reuse for `name` instead of searching.
 * ELF: glibc's _dl_name_match_p compares the name with the names each
 * object was asked for by (the root's: the path it was opened by) and
 * with its SONAME, never with a base name: a root without a SONAME that a
 * dependency needs by its file name is searched for like any other name
 * (ld.so then reuses it only if the search finds that very file). */
static size_t find_loaded(const aitk_deps *d, const aitk_dep_tree *t, size_t upto, const char *name)
{
    for (size_t j = 0; j < upto; j++) {
        const aitk_dep_node *n = &t->nodes[j];
        /* An unknown one is said once: asking again cannot learn more. */
        if (n->repeat || !(n->state == AITK_DEP_ROOT || n->state == AITK_DEP_FOUND ||
                           n->state == AITK_DEP_SYSTEM || n->state == AITK_DEP_UNKNOWN))
            continue;
        if (t->format == AITK_DEP_PE) {
            if (strcasecmp(aitk_path_base_name(n->name), name) == 0)
                return j;
        } else if (strcmp(n->name, name) == 0 ||
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
    if (!o->is_pe && !o->elf.elf_class)
        return AITK_OK; /* cut inside its ELF header: no class to say */
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
 * mapping it, Windows refuses it; its own needs are not read. So is one
 * ld.so refuses as it stands (elf.h: `unloadable`). */
static aitk_status mark_damaged(aitk_deps *d, aitk_dep_node *n)
{
    const aitk_dep_obj *o = &d->objs[n->obj];
    const bool cut = o->is_pe ? o->pe.truncated : o->elf.truncated;
    const char *unloadable = o->is_pe ? NULL : o->elf.unloadable;
    if (!cut && !unloadable)
        return AITK_OK;
    aitk_str s = AITK_STR_INIT;
    const uint64_t has = o->is_pe ? o->pe.file_size : o->elf.file_size;
    const uint64_t described = o->is_pe ? o->pe.described_size : o->elf.described_size;
    if (!cut)
        aitk_str_appendf(&s, "an ELF file ld.so cannot load (ld.so: %s)", unloadable);
    else if (!o->is_pe && described <= 64) /* cut inside its ELF header */
        aitk_str_appendf(&s, "truncated: the file has %" PRIu64 " bytes, an ELF header needs %"
                             PRIu64 " (ld.so: file too short)", has, described);
    else
        aitk_str_appendf(&s, "truncated: the file has %" PRIu64 " bytes, its headers describe %"
                             PRIu64 " (an interrupted download or copy?)", has, described);
    aitk_free(n->detail);
    n->state = AITK_DEP_BAD_FILE;
    n->truncated = cut;
    n->refused = !cut;
    return (n->detail = aitk_str_steal(&s)) ? AITK_OK : AITK_E_NOMEM;
}

/* A file the reader found malformed (AITK_E_PARSE, or a PE file too large
 * to be one): damaged headers, a finding for a root as for a dependency. */
static bool read_failure_is_damage(aitk_status st)
{
    return st == AITK_E_PARSE || st == AITK_E_RANGE;
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
        n->corrupt = read_failure_is_damage(d->objs[obj].st);
        return (n->detail = aitk_strdup(d->objs[obj].error)) ? AITK_OK : AITK_E_NOMEM;
    }
    if ((st = set_arch(d, n)) || (st = mark_damaged(d, n)) || n->state == AITK_DEP_BAD_FILE)
        return st;
    /* A PIE program under a library's name: ld.so maps it, then refuses
     * (_dl_map_object_from_fd), and the load fails there. */
    if (!d->objs[obj].is_pe && d->objs[obj].elf.pie) {
        n->state = AITK_DEP_BAD_FILE;
        n->refused = true;
        return (n->detail = aitk_strdup("a program, not a library (ld.so: cannot dynamically load "
                                        "position-independent executable)"))
                   ? AITK_OK
                   : AITK_E_NOMEM;
    }
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

/* DLLs node i forwards the functions its requester binds from it to
 * ("cmiss.realb": cmiss.dll): the loader loads them while binding those
 * imports, and a missing one fails the load (error 126), so each is a
 * child of node i; and each must export the functions forwarded to it
 * (error 127), or forward them on (a chain, followed link by link as the
 * walk reaches each). Per link: a DLL met again (a repeat) is not
 * expanded, but its new requester's forwarded imports are still bound. */
/* Whether the forwards node i binds for its parent were bound already: an
 * earlier node is the same file under the same requesting file. Without
 * this, two DLLs forwarding to each other (A forwards f to B, B forwards h
 * to A, each importing the other's) would add repeat after repeat without
 * end. */
/* Whether node m bound at least what node n binds: the same kind of link
 * (an import, or a forward), and for a forward every function forwarded
 * to n forwarded to m too. A DLL met first as a plain import and then as
 * the middle of a forward chain must still pass the chain on. */
static bool binds_as_much(const aitk_dep_node *m, const aitk_dep_node *n)
{
    if (m->forwarder != n->forwarder)
        return false;
    for (size_t k = 0; k < n->forwarded.count; k++) {
        bool found = false;
        for (size_t j = 0; j < m->forwarded.count && !found; j++)
            found = strcmp(m->forwarded.items[j], n->forwarded.items[k]) == 0;
        if (!found)
            return false;
    }
    return true;
}

static bool pair_done(const aitk_dep_tree *t, size_t i)
{
    const aitk_dep_node *n = &t->nodes[i];
    if (n->parent == AITK_DEP_NONE)
        return false;
    for (size_t j = 0; j < i; j++) {
        const aitk_dep_node *m = &t->nodes[j];
        if (m->obj == n->obj && m->parent != AITK_DEP_NONE &&
            t->nodes[m->parent].obj == t->nodes[n->parent].obj && binds_as_much(m, n))
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
    /* What the requester binds from node i: the functions it imports from
     * it, or, when node i was loaded for a forward, the functions forwarded
     * to it, so a chain (a forwards f to b.f, b forwards f to c.f) is
     * followed to its end as the loader follows it. */
    aitk_strlist wanted = {0};
    aitk_status st = AITK_OK;
    for (size_t k = 0; !st && prov->forward_count && k < req->import_count && !n->forwarder;
         k++) {
        const aitk_pe_import *imp = &req->imports[k];
        if (strcasecmp(imp->dll, n->name) != 0 || imp->delay != n->delay)
            continue;
        for (size_t s = 0; !st && s < imp->symbol_count; s++)
            st = aitk_strlist_add(&wanted, imp->symbols[s]);
    }
    for (size_t k = 0; !st && prov->forward_count && k < n->forwarded.count; k++)
        st = aitk_strlist_add(&wanted, n->forwarded.items[k]);
    /* One entry per forwarded function: its target DLL and function, and
     * the name the requester bound. */
    aitk_strlist dlls = {0}, funcs = {0}, from = {0};
    for (size_t k = 0; !st && k < wanted.count; k++) {
        const aitk_pe_forward *f = aitk_pe_find_forward(prov, wanted.items[k]);
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
    aitk_strlist_free(&wanted);
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
                             aitk_path_base_name(n->name), wj.items[0], (int)(strlen(c->name) - 4),
                             c->name, fj.items[0], c->name);
            st = aitk_str_status(&why);
            c = &t->nodes[before];
            if (!st)
                c->detail = aitk_str_steal(&why);
            aitk_str_free(&why);
        }
        if (!st)
            st = aitk_deps_check_forwarded(d, t, before, &fj, &wj);
        /* Kept on the node: its own forwards of these are bound when the
         * walk reaches it (the chain's next link). */
        if (!st) {
            t->nodes[before].forwarded = fj;
            fj = (aitk_strlist){0};
        }
        aitk_strlist_free(&fj);
        aitk_strlist_free(&wj);
    }
    aitk_strlist_free(&dlls);
    aitk_strlist_free(&funcs);
    aitk_strlist_free(&from);
    return st;
}

/* Takes back the node just added as node i's last child (it had no
 * children of its own yet). */
static void drop_last_child(aitk_dep_tree *t, size_t i)
{
    const size_t last = t->count - 1;
    aitk_dep_node *p = &t->nodes[i];
    size_t prev = AITK_DEP_NONE;
    for (size_t c = p->first_child; c != last; c = t->nodes[c].next_sibling)
        prev = c;
    if (prev == AITK_DEP_NONE)
        p->first_child = p->last_child = AITK_DEP_NONE;
    else {
        t->nodes[prev].next_sibling = AITK_DEP_NONE;
        p->last_child = prev;
    }
    node_free(&t->nodes[last]);
    t->count = last;
}

/* The libraries node i opens at run time (opened.yaml), as children found
 * by its own search path, as dlopen from it finds them (on Windows, as the
 * walk finds its imports: cuDNN's LoadLibrary of a sub-DLL by name gets
 * the copy torch already loaded from torch\lib); those it already needs
 * are not repeated. A missing one says what fails and when. */
static aitk_status expand_opened(aitk_deps *d, aitk_dep_tree *t, size_t i, aitk_str *err)
{
    if (!d->opened_loaded) {
        d->opened_loaded = true;
        aitk_status st = aitk_opened_load(&d->opened, err);
        if (st)
            return st;
    }
    const bool pe = d->objs[t->nodes[i].obj].is_pe;
    const char *const *names = NULL;
    const char *when_missing = NULL;
    size_t n = aitk_opened_by(d->opened, aitk_path_base_name(t->nodes[i].name), pe,
                              aitk_opened_graph_jit_only(), &names, &when_missing);
    for (size_t k = 0; k < n; k++) {
        const aitk_dep_obj *o = &d->objs[t->nodes[i].obj];
        bool needed = false;
        for (size_t j = 0; pe && j < o->pe.import_count && !needed; j++)
            needed = strcasecmp(o->pe.imports[j].dll, names[k]) == 0;
        for (size_t j = 0; !pe && j < o->elf.needed_count && !needed; j++)
            needed = strcmp(o->elf.needed[j], names[k]) == 0;
        if (needed)
            continue;
        const size_t child = t->count;
        aitk_status st = add_child(d, t, i, names[k], false);
        if (st)
            return st;
        aitk_dep_node *c = &t->nodes[child];
        /* The list holds every cuDNN 9 release's names: one this opener's
         * file does not hold is not one it opens (read only when the walk
         * did not find it, so a healthy tree costs no reading). */
        if (c->state != AITK_DEP_FOUND && t->nodes[i].path &&
            !aitk_opened_named_in(t->nodes[i].path, names[k])) {
            drop_last_child(t, i);
            continue;
        }
        c->opened = true;
        if (aitk_dep_state_is_problem(c->state) && !c->detail) {
            aitk_str why = AITK_STR_INIT;
            aitk_str_appendf(&why, "%s opens it at run time, not as a link: %s",
                             aitk_path_base_name(t->nodes[i].name), when_missing);
            if ((st = aitk_str_status(&why)) != AITK_OK) {
                aitk_str_free(&why);
                return st;
            }
            t->nodes[child].detail = aitk_str_steal(&why);
        }
    }
    return AITK_OK;
}

static aitk_status expand(aitk_deps *d, aitk_dep_tree *t, size_t i, aitk_str *err)
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
    aitk_status st = d->objs[t->nodes[i].obj].is_pe ? expand_forwarders(d, t, i) : AITK_OK;
    return st ? st : expand_opened(d, t, i, err);
}

aitk_status aitk_deps_read_root(aitk_deps *d, const char *path, aitk_dep_tree *t, aitk_str *err)
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
    aitk_deps_win_separators(abs.ptr); /* "C:\cwd" + "/" + "venv/Lib/...": one style */
    aitk_dep_sniffed s;
    aitk_status st = aitk_deps_sniff_open(abs.ptr, path, &s, err);
    const aitk_dep_other other = st ? AITK_DEP_OTHER_NONE : s.other;
    if (other != AITK_DEP_OTHER_NONE && !aitk_deps_not_library_is_problem(other, abs.ptr)) {
        aitk_str_appendf(err, "%s: %s, not a shared library", abs.ptr, aitk_dep_other_text(other));
        st = AITK_E_UNSUPPORTED;
    }
    size_t root = 0;
    if (!st)
        st = add_node(t, abs.ptr, AITK_DEP_NONE, &root);
    if (!st) {
        t->nodes[0].state = AITK_DEP_ROOT;
        if (!(t->nodes[0].path = aitk_strdup(abs.ptr)) || !(t->nodes[0].how = aitk_strdup("given")))
            st = AITK_E_NOMEM;
    }
    if (!st && other != AITK_DEP_OTHER_NONE) {
        /* Named like a library, it will be asked for as one, and the loader
         * refuses it: a finding (a Git LFS pointer where libtorch_cuda.so
         * should be), not input to be turned away. */
        t->nodes[0].state = AITK_DEP_BAD_FILE;
        t->nodes[0].not_library = other;
        if (!(t->nodes[0].detail = aitk_strdup(aitk_dep_other_text(other))))
            st = AITK_E_NOMEM;
    } else if (!st) {
        t->format = s.format;
        if (!obj_find(d, abs.ptr, s.have_id ? &s.id : NULL, &t->nodes[0].obj))
            st = obj_add(d, abs.ptr, &s.id, s.fd, s.format == AITK_DEP_PE, &t->nodes[0].obj);
    }
    if (s.fd >= 0)
        close(s.fd);
    aitk_str_free(&abs);
    if (st)
        aitk_dep_tree_free(t);
    if (st == AITK_E_UNSUPPORTED || !st)
        t->not_library = other;
    return st;
}

aitk_status aitk_deps_walk(aitk_deps *d, aitk_dep_tree *t, aitk_str *err)
{
    if (t->not_library != AITK_DEP_OTHER_NONE)
        return AITK_OK; /* nothing below a file that is no library */
    aitk_status st = AITK_OK;
    const aitk_dep_obj *o = &d->objs[t->nodes[0].obj];
    aitk_dep_node *root = &t->nodes[0];
    /* A damaged root (cut short, a corrupt header, one ld.so refuses) is a
     * finding (exit 1), not unreadable input (exit 2), whatever byte is
     * damaged: the file is there, it is the broken link, and a dependency in
     * the same state is a problem node too. Only what this build cannot read
     * at all (an ELF file in the Windows build) or an I/O error is an error. */
    if (o->st && read_failure_is_damage(o->st)) {
        root->state = AITK_DEP_BAD_FILE;
        root->corrupt = true;
        if (!(root->detail = aitk_strdup(o->error)))
            st = AITK_E_NOMEM;
    } else if (o->st) {
        aitk_str_append(err, o->error);
        st = o->st;
    } else {
        st = set_arch(d, root);
        if (!st)
            st = mark_damaged(d, root);
    }
    for (size_t i = 0; !st && i < t->count; i++) {
        const aitk_dep_node *n = &t->nodes[i];
        if ((n->state != AITK_DEP_ROOT && n->state != AITK_DEP_FOUND) ||
            n->obj == AITK_DEP_NONE || d->objs[n->obj].st)
            continue;
        if (d->opts.max_depth && n->depth >= d->opts.max_depth)
            continue;
        if (!n->repeat)
            st = expand(d, t, i, err);
        else if (d->objs[n->obj].is_pe && !pair_done(t, i))
            st = expand_forwarders(d, t, i); /* this requester's forwarded imports */
    }
    if (!st && t->format == AITK_DEP_ELF)
        st = aitk_deps_check_bindings(d, t);
    if (st)
        aitk_dep_tree_free(t);
    return st;
}

aitk_status aitk_deps_analyze(aitk_deps *d, const char *path, aitk_dep_tree *t, aitk_str *err)
{
    aitk_status st = aitk_deps_read_root(d, path, t, err);
    return st ? st : aitk_deps_walk(d, t, err);
}

void aitk_dep_tree_free(aitk_dep_tree *t)
{
    for (size_t i = 0; i < t->count; i++)
        node_free(&t->nodes[i]);
    aitk_free(t->nodes);
    aitk_free(t->load);
    memset(t, 0, sizeof *t);
}

bool aitk_dep_tree_opened(const aitk_dep_tree *t, size_t i)
{
    for (size_t j = i; j != AITK_DEP_NONE; j = t->nodes[j].parent)
        if (t->nodes[j].opened)
            return true;
    return false;
}

bool aitk_dep_tree_deferred(const aitk_dep_tree *t, size_t i)
{
    for (size_t j = i; j != AITK_DEP_NONE; j = t->nodes[j].parent)
        if (t->nodes[j].delay || t->nodes[j].opened)
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
        aitk_str_appendf(out, "%s%s", k == start ? "" : " -> ", aitk_path_base_name(t->nodes[path[k]].name));
    aitk_free(path);
    return aitk_str_status(out);
}
