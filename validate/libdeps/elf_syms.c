/* The dynamic symbol table (elf_syms.h, elf.h): the symbols a library
 * binds to versions of the libraries it needs, read with the rest of the
 * file, and the symbols a library defines, read only when a requester
 * binds to it. Lookups are a binary search over the definitions sorted
 * once by the hash of their names (C++ names share long prefixes, which
 * makes comparing them slow): libstdc++ defines thousands, and each torch
 * library binds hundreds. */
#include "validate/libdeps/elf_syms.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"

/* .dynsym with its string table, and .gnu.version when there is one. */
typedef struct symtab {
    Elf *e;
    Elf_Data *syms, *vers;
    size_t link;   /* the string table's section */
    size_t count;  /* symbols */
    size_t vcount; /* .gnu.version entries */
} symtab;

static bool open_symtab(Elf *e, Elf_Scn *dynsym, Elf_Scn *versym, symtab *t)
{
    GElf_Shdr sh;
    size_t ent = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
    *t = (symtab){.e = e};
    if (!ent || !gelf_getshdr(dynsym, &sh) || !(t->syms = elf_getdata(dynsym, NULL)))
        return false;
    t->link = sh.sh_link;
    t->count = t->syms->d_size / ent;
    if (versym && (t->vers = elf_getdata(versym, NULL)))
        t->vcount = t->vers->d_size / sizeof(GElf_Versym);
    return true;
}

/* Symbol i's .gnu.version entry, hidden bit included; without one,
 * VER_NDX_LOCAL, which names no version (glibc leaves its entry empty). */
static unsigned versym_at(const symtab *t, size_t i)
{
    GElf_Versym v;
    if (!t->vers || i >= t->vcount || !gelf_getversym(t->vers, (int)i, &v))
        return VER_NDX_LOCAL;
    return v;
}

static void refs_free(aitk_elf_info *out)
{
    for (size_t i = 0; i < out->ref_count; i++)
        aitk_free(out->refs[i].name);
    aitk_free(out->refs);
    out->refs = NULL;
    out->ref_count = 0;
}

/* glibc's own versions (GLIBC_2.x, GLIBC_PRIVATE): the version check is
 * the whole check for them, since glibc keeps every symbol of a version it
 * ships, and it moves symbols between its own libraries under the same
 * version (pthread_create@GLIBC_2.2.5, needed from libpthread.so.0, is in
 * libc.so.6 since 2.34), which ld.so finds across the loaded objects.
 * Every library binds hundreds of them: not reading them is most of what
 * keeps this check cheap. */
static bool glibc_version(const char *version)
{
    return strncmp(version, "GLIBC_", 6) == 0;
}

/* Symbol i's version index, when it is an undefined, non-weak reference
 * bound to a version `need` maps (its .gnu.version entry is looked at
 * first: most symbols of a large library are its own definitions); 0
 * otherwise. */
static unsigned ref_version(const symtab *t, size_t i, const size_t *need, unsigned top,
                            GElf_Sym *s)
{
    unsigned ndx = versym_at(t, i) & 0x7fffu;
    if (ndx <= VER_NDX_GLOBAL || ndx > top || need[ndx] == SIZE_MAX)
        return 0;
    if (!gelf_getsym(t->syms, (int)i, s) || s->st_shndx != SHN_UNDEF || s->st_name == 0)
        return 0;
    if (GELF_ST_BIND(s->st_info) == STB_WEAK || GELF_ST_BIND(s->st_info) == STB_LOCAL)
        return 0;
    return ndx;
}

aitk_status aitk_elf_read_refs(Elf *e, Elf_Scn *dynsym, Elf_Scn *versym, aitk_elf_info *out)
{
    symtab t;
    if (!open_symtab(e, dynsym, versym, &t) || !t.vers || t.count > INT32_MAX)
        return AITK_OK;
    /* Version index -> verneed entry (indexes are 15 bits). */
    unsigned top = 0;
    for (size_t v = 0; v < out->verneed_count; v++)
        top = out->verneed[v].index > top ? out->verneed[v].index : top;
    size_t *need = aitk_malloc(((size_t)top + 1) * sizeof *need);
    if (!need)
        return AITK_E_NOMEM;
    for (size_t k = 0; k <= top; k++)
        need[k] = SIZE_MAX;
    for (size_t v = out->verneed_count; v-- > 0;) /* the first entry of an index wins */
        if (!glibc_version(out->verneed[v].version))
            need[out->verneed[v].index] = v;
    aitk_status st = AITK_OK;
    size_t cap = 0;
    for (size_t i = 1; i < t.count && !st; i++) {
        GElf_Sym s;
        unsigned ndx = ref_version(&t, i, need, top, &s);
        if (!ndx)
            continue;
        const char *name = elf_strptr(e, t.link, s.st_name);
        if (!name) { /* unreadable: no judgement, rather than a wrong one */
            refs_free(out);
            break;
        }
        aitk_elf_symref *g = aitk_grow(out->refs, sizeof *g, out->ref_count, &cap, 64);
        if (!g || !(g[out->ref_count].name = aitk_strdup(name))) {
            st = AITK_E_NOMEM;
            if (g)
                out->refs = g;
            break;
        }
        out->refs = g;
        g[out->ref_count++].need = need[ndx];
    }
    aitk_free(need);
    return st;
}

/* One definition: its name, the version it is defined at (NULL: none,
 * VER_NDX_LOCAL or an index no definition names) and the hidden bit. */
typedef struct def {
    uint32_t hash; /* name_hash(name) */
    bool hidden;
    const char *name;
    const char *version;
} def;

struct aitk_elf_defs {
    def *defs;       /* sorted by name */
    size_t count;
    char *names;     /* the names the entries point into, NUL-separated */
    char **versions; /* version names by index (vd_ndx) */
    size_t version_count;
};

void aitk_elf_defs_free(aitk_elf_defs *defs)
{
    if (!defs)
        return;
    for (size_t i = 0; i < defs->version_count; i++)
        aitk_free(defs->versions[i]);
    aitk_free(defs->versions);
    aitk_free(defs->defs);
    aitk_free(defs->names);
    aitk_free(defs);
}

static aitk_status add_version(void *ctx, unsigned ndx, bool base, const char *version)
{
    (void)base; /* glibc fills the base entry (index 1, the file's own name) too */
    aitk_elf_defs *d = ctx;
    if (ndx >= d->version_count) {
        char **g = aitk_realloc(d->versions, ((size_t)ndx + 1) * sizeof *g);
        if (!g)
            return AITK_E_NOMEM;
        memset(g + d->version_count, 0, (ndx + 1 - d->version_count) * sizeof *g);
        d->versions = g;
        d->version_count = (size_t)ndx + 1;
    }
    if (d->versions[ndx]) /* glibc keeps the first entry of an index */
        return AITK_OK;
    return (d->versions[ndx] = aitk_strdup(version)) ? AITK_OK : AITK_E_NOMEM;
}

/* What ld.so takes for a definition (glibc elf/dl-lookup.c, check_match
 * and do_lookup_x): defined, global, of a code or data type, with a value. */
static const char *defined_name(const symtab *t, size_t i)
{
    GElf_Sym s;
    if (!gelf_getsym(t->syms, (int)i, &s) || s.st_shndx == SHN_UNDEF || s.st_name == 0)
        return NULL;
    unsigned type = GELF_ST_TYPE(s.st_info), bind = GELF_ST_BIND(s.st_info);
    if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)
        return NULL;
    if (type != STT_NOTYPE && type != STT_OBJECT && type != STT_FUNC && type != STT_COMMON &&
        type != STT_TLS && type != STT_GNU_IFUNC)
        return NULL;
    if (s.st_value == 0 && s.st_shndx != SHN_ABS && type != STT_TLS)
        return NULL;
    return elf_strptr(t->e, t->link, s.st_name);
}

/* The GNU hash function (the one DT_GNU_HASH tables use). */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

/* By hash alone: entries of one hash are compared by name when looked up. */
static int cmp_def(const void *a, const void *b)
{
    uint32_t x = ((const def *)a)->hash, y = ((const def *)b)->hash;
    return x < y ? -1 : x > y;
}

/* The definitions of `t` into d: names copied into one block (sized by a
 * first pass), then sorted. */
static aitk_status collect_defs(const symtab *t, aitk_elf_defs *d)
{
    size_t bytes = 0, count = 0;
    for (size_t i = 1; i < t->count; i++) {
        const char *name = defined_name(t, i);
        bytes += name ? strlen(name) + 1 : 0;
        count += name != NULL;
    }
    if (!count)
        return AITK_OK;
    if (!(d->names = aitk_malloc(bytes)) || !(d->defs = aitk_calloc(count, sizeof *d->defs)))
        return AITK_E_NOMEM;
    char *at = d->names;
    for (size_t i = 1; i < t->count && d->count < count; i++) {
        const char *name = defined_name(t, i);
        if (!name)
            continue;
        size_t len = strlen(name) + 1;
        memcpy(at, name, len);
        unsigned v = versym_at(t, i);
        size_t ndx = v & 0x7fffu;
        d->defs[d->count++] = (def){name_hash(at), (v & 0x8000u) != 0, at,
                                    ndx < d->version_count ? d->versions[ndx] : NULL};
        at += len;
    }
    qsort(d->defs, d->count, sizeof *d->defs, cmp_def);
    return AITK_OK;
}

static aitk_status read_defs(Elf *e, const char *path, aitk_elf_defs **out, aitk_str *err)
{
    size_t shnum = 0;
    if (elf_getshdrnum(e, &shnum) != 0) {
        aitk_str_appendf(err, "%s: unreadable section headers (%s)", path, elf_errmsg(-1));
        return AITK_E_PARSE;
    }
    Elf_Scn *dynsym = NULL, *versym = NULL;
    aitk_elf_defs *d = aitk_calloc(1, sizeof *d);
    if (!d)
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    for (size_t i = 1; i < shnum && !st; i++) {
        Elf_Scn *scn = elf_getscn(e, i);
        GElf_Shdr sh;
        if (!scn || !gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_DYNSYM && !dynsym)
            dynsym = scn;
        else if (sh.sh_type == SHT_GNU_versym && !versym)
            versym = scn;
        else if (sh.sh_type == SHT_GNU_verdef)
            st = aitk_elf_walk_verdef(e, scn, &sh, path, add_version, d, err);
    }
    symtab t;
    if (!st && dynsym && open_symtab(e, dynsym, versym, &t) && t.count <= INT32_MAX) {
        st = collect_defs(&t, d);
        *out = st ? NULL : d;
    }
    if (*out != d)
        aitk_elf_defs_free(d);
    return st;
}

aitk_status aitk_elf_read_defs(const char *path, aitk_elf_defs **out, aitk_str *err)
{
    *out = NULL;
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        aitk_str_appendf(err, "%s: %s", path, strerror(errno));
        return AITK_E_IO;
    }
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    aitk_status st;
    if (e && elf_kind(e) == ELF_K_ELF) {
        st = read_defs(e, path, out, err);
    } else {
        aitk_str_appendf(err, "%s: not readable as ELF (%s)", path, elf_errmsg(-1));
        st = AITK_E_PARSE;
    }
    if (e)
        elf_end(e);
    close(fd);
    return st;
}

bool aitk_elf_defs_binds(const aitk_elf_defs *defs, const char *name, const char *version)
{
    uint32_t h = name_hash(name);
    size_t lo = 0, hi = defs->count; /* the first entry of hash h, if any */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (defs->defs[mid].hash < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* glibc: the version asked for, or a definition with no version of its
     * own that is not hidden. */
    for (; lo < defs->count && defs->defs[lo].hash == h; lo++) {
        const def *x = &defs->defs[lo];
        if (strcmp(x->name, name) == 0 &&
            (x->version ? strcmp(x->version, version) == 0 : !x->hidden))
            return true;
    }
    return false;
}
