/* What a found library must give its requester: symbol versions (ELF) and
 * imported functions (PE), see tree_needs.h. */
#include "validate/libdeps/tree_needs.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/str.h"
#include "validate/libdeps/resolve.h"

/* Dotted numeric comparison of the part after the last '_' ("2.34" < "2.38"). */
static int version_cmp(const char *a, const char *b)
{
    const char *pa = strrchr(a, '_'), *pb = strrchr(b, '_');
    pa = pa ? pa + 1 : a;
    pb = pb ? pb + 1 : b;
    while (*pa || *pb) {
        unsigned long x = strtoul(pa, (char **)&pa, 10), y = strtoul(pb, (char **)&pb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        if (*pa == '.')
            pa++;
        if (*pb == '.')
            pb++;
        if ((*pa && (*pa < '0' || *pa > '9')) || (*pb && (*pb < '0' || *pb > '9')))
            return strcmp(pa, pb);
    }
    return 0;
}

/* GLIBC_2.x style needs of the requester from node i against what node i
 * defines: a missing one stops the load ("version `GLIBC_2.38' not found"). */
aitk_status aitk_deps_check_versions(aitk_deps *d, aitk_dep_tree *t, size_t i)
{
    aitk_dep_node *n = &t->nodes[i];
    size_t pobj = t->nodes[n->parent].obj;
    if (n->obj == AITK_DEP_NONE || pobj == AITK_DEP_NONE || d->objs[n->obj].st)
        return AITK_OK;
    const aitk_elf_info *req = &d->objs[pobj].elf, *prov = &d->objs[n->obj].elf;
    if (prov->verdef_count == 0) /* unversioned provider: ld.so only warns */
        return AITK_OK;
    aitk_str missing = AITK_STR_INIT;
    const char *newest = NULL;
    for (size_t v = 0; v < req->verneed_count; v++) {
        if (strcmp(req->verneed[v].file, n->name) != 0)
            continue;
        const char *want = req->verneed[v].version;
        bool have = false;
        for (size_t k = 0; k < prov->verdef_count && !have; k++)
            have = strcmp(prov->verdef[k], want) == 0;
        if (have)
            continue;
        aitk_str_appendf(&missing, "%s%s", missing.len ? ", " : "", want);
        size_t plen = strcspn(want, "_");
        for (size_t k = 0; k < prov->verdef_count; k++)
            if (strncmp(prov->verdef[k], want, plen) == 0 && prov->verdef[k][plen] == '_' &&
                (!newest || version_cmp(prov->verdef[k], newest) > 0))
                newest = prov->verdef[k];
    }
    if (missing.len) {
        aitk_str msg = AITK_STR_INIT;
        aitk_str_appendf(&msg, "needs version %s, which %s does not provide", missing.ptr, n->path);
        if (newest)
            aitk_str_appendf(&msg, " (newest it has: %s)", newest);
        aitk_free(n->detail);
        n->detail = aitk_str_steal(&msg);
        n->state = AITK_DEP_BAD_VERSION;
        n->repeat = false;
        if (!n->detail) {
            aitk_str_free(&missing);
            return AITK_E_NOMEM;
        }
    }
    aitk_status st = aitk_str_status(&missing);
    aitk_str_free(&missing);
    return st;
}

/* Marks node i as lacking functions or symbols: `msg` (taken) says which,
 * and what the loader says. Returns AITK_E_NOMEM when either text ran out of memory. */
static aitk_status mark_missing(aitk_dep_node *n, aitk_str *msg, const aitk_str *missing)
{
    aitk_free(n->detail);
    n->detail = aitk_str_steal(msg);
    n->state = AITK_DEP_MISSING_SYMBOL;
    n->repeat = false;
    return n->detail && !aitk_str_status(missing) ? AITK_OK : AITK_E_NOMEM;
}

/* Object o's defined symbols, read at first need (resolve.h); *defs NULL
 * when they cannot be read, and then nothing is judged against them. */
static aitk_status obj_defs(aitk_deps *d, size_t o, const aitk_elf_defs **defs)
{
    aitk_dep_obj *x = &d->objs[o];
    if (!x->defs_read) {
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_elf_read_defs(x->path, &x->defs, &err);
        aitk_str_free(&err);
        if (st == AITK_E_NOMEM)
            return st;
        x->defs_read = true;
    }
    *defs = x->defs;
    return AITK_OK;
}

/* Whether `name` at `version` binds somewhere in the tree: ld.so looks a
 * symbol up in every loaded object, not only in the one its version names
 * (a definition at the same version elsewhere, or an unversioned one in a
 * library without versions, satisfies it). Asked only for what the named
 * copy lacks. */
static aitk_status binds_in_tree(aitk_deps *d, const aitk_dep_tree *t, const char *name,
                                 const char *version, bool *found)
{
    *found = false;
    for (size_t j = 0; j < t->count && !*found; j++) {
        const aitk_dep_node *m = &t->nodes[j];
        const aitk_elf_defs *defs = NULL;
        if (m->obj == AITK_DEP_NONE || d->objs[m->obj].st ||
            (m->state != AITK_DEP_ROOT && m->state != AITK_DEP_FOUND &&
             m->state != AITK_DEP_MISSING_SYMBOL))
            continue;
        aitk_status st = obj_defs(d, m->obj, &defs);
        if (st)
            return st;
        *found = defs && aitk_elf_defs_binds(defs, name, version);
    }
    return AITK_OK;
}

/* Node i's requester binds symbols to versions of node i: those no loaded
 * object defines so, listed (the first three) in `missing`; *count of them,
 * *first the first one's index in the requester's refs. Which verneed
 * entries name node i is settled once per link (`wanted`), not per symbol:
 * torch's libraries bind thousands. */
static aitk_status unbound_refs(aitk_deps *d, const aitk_dep_tree *t, size_t i, bool *wanted,
                                aitk_str *missing, size_t *count, size_t *first)
{
    const aitk_dep_node *n = &t->nodes[i];
    const aitk_elf_info *req = &d->objs[t->nodes[n->parent].obj].elf;
    const aitk_elf_defs *defs = NULL;
    bool any = false;
    for (size_t v = 0; v < req->verneed_count; v++) {
        wanted[v] = strcmp(req->verneed[v].file, n->name) == 0;
        any |= wanted[v];
    }
    *count = 0;
    for (size_t k = 0; any && k < req->ref_count; k++) {
        const aitk_elf_symref *r = &req->refs[k];
        const char *version = req->verneed[r->need].version;
        if (!wanted[r->need])
            continue;
        bool found = false;
        aitk_status st = defs ? AITK_OK : obj_defs(d, n->obj, &defs);
        if (st)
            return st;
        if (!defs) /* its symbols unreadable: no judgement, rather than a wrong one */
            return AITK_OK;
        if (aitk_elf_defs_binds(defs, r->name, version))
            continue;
        if ((st = binds_in_tree(d, t, r->name, version, &found)))
            return st;
        if (found)
            continue;
        if (!(*count)++)
            *first = k;
        if (*count <= 3)
            aitk_str_appendf(missing, "%s%s@%s", missing->len ? ", " : "", r->name, version);
    }
    return aitk_str_status(missing);
}

aitk_status aitk_deps_check_bindings(aitk_deps *d, aitk_dep_tree *t)
{
    for (size_t i = 1; i < t->count; i++) {
        aitk_dep_node *n = &t->nodes[i];
        size_t pobj = t->nodes[n->parent].obj;
        if (n->state != AITK_DEP_FOUND || n->obj == AITK_DEP_NONE || pobj == AITK_DEP_NONE ||
            d->objs[n->obj].st || d->objs[pobj].st || !d->objs[pobj].elf.ref_count ||
            d->objs[n->obj].elf.verdef_count == 0) /* unversioned provider: as above */
            continue;
        aitk_str missing = AITK_STR_INIT;
        size_t count = 0, first = 0;
        bool *wanted = aitk_calloc(d->objs[pobj].elf.verneed_count, sizeof *wanted);
        aitk_status st = wanted ? unbound_refs(d, t, i, wanted, &missing, &count, &first)
                                : AITK_E_NOMEM;
        aitk_free(wanted);
        if (!st && count) {
            const aitk_elf_info *req = &d->objs[pobj].elf;
            const char *who = aitk_path_base_name(t->nodes[n->parent].name);
            aitk_str msg = AITK_STR_INIT;
            aitk_str_appendf(&msg, "%s needs %s%s, which %s does not define: it is another "
                                   "release of %s than the one %s was built against, with the "
                                   "same version name (ld.so: undefined symbol: %s, version %s)",
                             who, aitk_str_cstr(&missing), count > 3 ? ", ..." : "", n->path,
                             n->name, who, req->refs[first].name,
                             req->verneed[req->refs[first].need].version);
            if (count > 3)
                aitk_str_appendf(&msg, "; %zu symbols missing in all", count);
            st = mark_missing(n, &msg, &missing);
        }
        aitk_str_free(&missing);
        if (st)
            return st;
    }
    return AITK_OK;
}

/* Functions the requester imports by name from node i that node i does not
 * export: Windows refuses the load ("The specified procedure could not be
 * found", error 127). Forwarded exports count as exports. */
aitk_status aitk_deps_check_symbols(aitk_deps *d, aitk_dep_tree *t, size_t i)
{
    aitk_dep_node *n = &t->nodes[i];
    size_t pobj = t->nodes[n->parent].obj;
    if (n->obj == AITK_DEP_NONE || pobj == AITK_DEP_NONE || d->objs[n->obj].st)
        return AITK_OK;
    const aitk_pe_info *req = &d->objs[pobj].pe, *prov = &d->objs[n->obj].pe;
    aitk_str missing = AITK_STR_INIT;
    size_t count = 0;
    uint32_t first_ordinal = 0;
    for (size_t k = 0; k < req->import_count; k++) {
        const aitk_pe_import *imp = &req->imports[k];
        if (strcasecmp(imp->dll, n->name) != 0 || imp->delay != n->delay)
            continue;
        for (size_t s = 0; s < imp->symbol_count; s++) {
            if (aitk_pe_exports_name(prov, imp->symbols[s]))
                continue;
            if (count++ < 5)
                aitk_str_appendf(&missing, "%s%s", missing.len ? ", " : "", imp->symbols[s]);
        }
        for (size_t s = 0; s < imp->ordinal_count; s++) {
            uint32_t o = imp->ordinals[s];
            if (aitk_pe_exports_ordinal(prov, o))
                continue;
            if (!first_ordinal)
                first_ordinal = o;
            if (count++ < 5)
                aitk_str_appendf(&missing, "%sordinal %" PRIu32, missing.len ? ", " : "", o);
        }
    }
    aitk_status st = AITK_OK;
    if (count) {
        aitk_str msg = AITK_STR_INIT;
        aitk_str_appendf(&msg, "%s does not export %s%s (%zu missing): Windows stops with ",
                         n->path, aitk_str_cstr(&missing), count > 5 ? ", ..." : "", count);
        if (first_ordinal && count == 1)
            aitk_str_appendf(&msg, "\"The ordinal %" PRIu32 " could not be located in the "
                                   "dynamic link library\" (error 182)", first_ordinal);
        else
            aitk_str_append(&msg, first_ordinal ? "\"The specified procedure could not be found\" "
                                                  "(error 127) or \"The ordinal ... could not be "
                                                  "located\" (error 182)"
                                                : "\"The specified procedure could not be found\" "
                                                  "(error 127)");
        st = mark_missing(n, &msg, &missing);
    }
    aitk_str_free(&missing);
    return st;
}


/* Node i is a DLL its parent forwards exports to ("cmiss.realfn"): the
 * loader binds each forwarded function the parent's requester imports by
 * looking it up in node i (funcs: as the forwarders name them, "realfn" or
 * "#7"; from: the names the requester imported), and fails the load as for
 * a missing import when it is not there ("The specified procedure could not
 * be found", error 127). */
aitk_status aitk_deps_check_forwarded(aitk_deps *d, aitk_dep_tree *t, size_t i,
                                      const aitk_strlist *funcs, const aitk_strlist *from)
{
    aitk_dep_node *n = &t->nodes[i];
    if (n->state != AITK_DEP_FOUND || n->obj == AITK_DEP_NONE || d->objs[n->obj].st)
        return AITK_OK;
    const aitk_pe_info *prov = &d->objs[n->obj].pe;
    aitk_str missing = AITK_STR_INIT;
    size_t count = 0;
    for (size_t k = 0; k < funcs->count; k++)
        if (!aitk_pe_exports_function(prov, funcs->items[k]) && count++ < 5)
            aitk_str_appendf(&missing, "%s%s (forwarded from %s)", missing.len ? ", " : "",
                             funcs->items[k], from->items[k]);
    aitk_status st = AITK_OK;
    if (count) {
        aitk_str msg = AITK_STR_INIT;
        aitk_str_appendf(&msg, "%s does not export %s%s (%zu missing), which %s forwards to it: "
                               "Windows stops with \"The specified procedure could not be "
                               "found\" (error 127)",
                         n->path, aitk_str_cstr(&missing), count > 5 ? ", ..." : "", count,
                         t->nodes[n->parent].name);
        st = mark_missing(n, &msg, &missing);
    }
    aitk_str_free(&missing);
    return st;
}
