/* ELF reading through libelf (elfutils); see elf.h for what is read and why.
 *
 * libelf bounds-checks section data and string offsets for us; what it cannot
 * know is our loops: version chains are walked with counts capped by the
 * section size and offsets that must move forward, so a hostile file cannot
 * make a walk run forever. Nor does it say that a file is cut short or
 * damaged: it refuses one whose section headers lie past the end ("not an
 * ELF file") and reads one whose segments do as if whole, so every file is
 * judged first from its raw bytes (elf_ident.c, elf_layout.c), as ld.so
 * would judge it, and read through libelf only when whole. */
#include "validate/libdeps/elf.h"

#include <elf.h>
#ifndef DF_1_PIE /* glibc <elf.h> before 2.27: a position-independent executable */
#define DF_1_PIE 0x08000000
#endif
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "validate/libdeps/elf_syms.h"

static aitk_status fail(aitk_str *err, const char *name, const char *what)
{
    aitk_str_appendf(err, "%s: %s", name, what);
    return AITK_E_PARSE;
}

static aitk_status fail_elf(aitk_str *err, const char *name, const char *what)
{
    aitk_str_appendf(err, "%s: %s (%s)", name, what, elf_errmsg(-1));
    return AITK_E_PARSE;
}

static aitk_status list_push(char ***items, size_t *count, const char *text)
{
    char **grown = aitk_realloc(*items, (*count + 1) * sizeof **items);
    if (!grown)
        return AITK_E_NOMEM;
    *items = grown;
    if (!(grown[*count] = aitk_strdup(text)))
        return AITK_E_NOMEM;
    (*count)++;
    return AITK_OK;
}

static aitk_status set_once(char **slot, const char *text)
{
    if (*slot) /* a repeated tag: ld.so uses the last one; keep the first, it is rare */
        return AITK_OK;
    return (*slot = aitk_strdup(text)) ? AITK_OK : AITK_E_NOMEM;
}

/* String `off` of string table section `link`; NULL with a message when the
 * link is not a string table or the offset is out of bounds. */
static const char *str_at(Elf *e, size_t link, size_t off, const char *name, aitk_str *err)
{
    const char *s = elf_strptr(e, link, off);
    if (!s)
        aitk_str_appendf(err, "%s: string offset %zu outside string table (section %zu): %s",
                         name, off, link, elf_errmsg(-1));
    return s;
}

/* Where the dynamic entries' strings are: the bytes DT_STRTAB points at,
 * where ld.so reads them, whatever the section headers say. */
typedef struct dyn_strings {
    const char *raw;   /* DT_STRTAB's bytes in the file (NULL: none) */
    size_t raw_size;
} dyn_strings;

static const char *dyn_str(const dyn_strings *s, size_t off, const char *name, aitk_str *err)
{
    const char *nul = s->raw && off < s->raw_size ? memchr(s->raw + off, 0, s->raw_size - off)
                                                  : NULL;
    if (!s->raw)
        aitk_str_appendf(err, "%s: corrupt dynamic section: it names libraries or paths but has "
                              "no DT_STRTAB to read them from", name);
    else if (!nul)
        aitk_str_appendf(err, "%s: corrupt dynamic section: string offset %zu outside string "
                              "table (DT_STRTAB, %zu bytes in the file)", name, off, s->raw_size);
    return nul ? s->raw + off : NULL;
}

static aitk_status read_dyn_entries(Elf *e, Elf_Data *d, const dyn_strings *strs, const char *name,
                                    aitk_elf_info *out, aitk_str *err)
{
    size_t entsize = gelf_fsize(e, ELF_T_DYN, 1, EV_CURRENT);
    size_t n = entsize ? d->d_size / entsize : 0;
    aitk_status st = AITK_OK;
    /* Bounded by the section size even when DT_NULL never comes. */
    for (size_t i = 0; i < n && !st; i++) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(d, (int)i, &dyn))
            return fail_elf(err, name, "unreadable dynamic entry");
        if (dyn.d_tag == DT_NULL)
            break;
        const char *s = NULL;
        switch (dyn.d_tag) {
        case DT_NEEDED: case DT_SONAME: case DT_RPATH: case DT_RUNPATH:
            if (!(s = dyn_str(strs, dyn.d_un.d_val, name, err)))
                return AITK_E_PARSE;
            break;
        default:
            break;
        }
        if (dyn.d_tag == DT_NEEDED)
            st = list_push(&out->needed, &out->needed_count, s);
        else if (dyn.d_tag == DT_SONAME)
            st = set_once(&out->soname, s);
        else if (dyn.d_tag == DT_RPATH)
            st = set_once(&out->rpath, s);
        else if (dyn.d_tag == DT_RUNPATH)
            st = set_once(&out->runpath, s);
        else if (dyn.d_tag == DT_FLAGS_1) {
            out->nodeflib |= (dyn.d_un.d_val & DF_1_NODEFLIB) != 0;
            out->pie |= (dyn.d_un.d_val & DF_1_PIE) != 0;
        }
    }
    return st;
}

/* The file bytes at virtual address `addr`: the PT_LOAD segment holding it
 * maps p_offset..p_offset+p_filesz to p_vaddr. *avail is how many bytes of
 * that segment follow. False when no segment holds it in the file. */
static bool vaddr_to_off(Elf *e, size_t phnum, uint64_t addr, uint64_t *off, uint64_t *avail)
{
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz) {
            *off = ph.p_offset + (addr - ph.p_vaddr);
            *avail = ph.p_filesz - (addr - ph.p_vaddr);
            return true;
        }
    }
    return false;
}

/* DT_STRTAB and DT_STRSZ among the entries; 0 when absent. */
static void find_strtab(Elf_Data *d, size_t n, uint64_t *addr, uint64_t *size)
{
    *addr = *size = 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
            break;
        if (dyn.d_tag == DT_STRTAB)
            *addr = dyn.d_un.d_ptr;
        else if (dyn.d_tag == DT_STRSZ)
            *size = dyn.d_un.d_val;
    }
}

/* The dynamic string table as ld.so finds it: DT_STRTAB is an address,
 * which must lie in the file bytes of a load segment; there ld.so reads
 * names from the mapped file. Anywhere else it reads memory it never
 * mapped (a crash) or zeros and whatever follows (garbage names), so such a
 * file is damaged, however whole its .dynstr section is. */
static aitk_status dyn_strtab(Elf *e, Elf_Data *d, const char *name, dyn_strings *strs,
                              aitk_str *err)
{
    size_t phnum = 0, size = 0;
    const char *raw = elf_rawfile(e, &size);
    if (elf_getphdrnum(e, &phnum) != 0)
        return fail_elf(err, name, "unreadable program headers");
    size_t entsize = gelf_fsize(e, ELF_T_DYN, 1, EV_CURRENT);
    uint64_t addr, strsz, off = 0, avail = 0;
    find_strtab(d, entsize ? d->d_size / entsize : 0, &addr, &strsz);
    *strs = (dyn_strings){0};
    if (!addr)
        return AITK_OK; /* said when a name is wanted (dyn_str) */
    if (!raw || !vaddr_to_off(e, phnum, addr, &off, &avail) || off >= size) {
        aitk_str_appendf(err, "%s: corrupt dynamic section: DT_STRTAB 0x%llx lies in no loadable "
                              "segment's file bytes (ld.so would read the names it lists from "
                              "memory it never mapped: a crash, or garbage names)",
                         name, (unsigned long long)addr);
        return AITK_E_PARSE;
    }
    strs->raw = raw + off;
    /* DT_STRSZ, but never past the segment or the file. */
    uint64_t room = avail < size - off ? avail : size - off;
    strs->raw_size = (size_t)(strsz && strsz < room ? strsz : room);
    return AITK_OK;
}

static aitk_status read_dynamic(Elf *e, Elf_Scn *scn, const char *name, aitk_elf_info *out,
                                aitk_str *err)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d)
        return fail_elf(err, name, "unreadable dynamic section");
    dyn_strings strs;
    aitk_status st = dyn_strtab(e, d, name, &strs, err);
    return st ? st : read_dyn_entries(e, d, &strs, name, out, err);
}

/* A file with no SHT_DYNAMIC section (section headers stripped or zeroed):
 * the loader never reads section headers, it takes PT_DYNAMIC, so do the
 * same rather than report a library that needs nothing. */
static aitk_status read_dynamic_segment(Elf *e, const char *name, aitk_elf_info *out,
                                        aitk_str *err)
{
    size_t phnum = 0, size = 0;
    const char *raw = elf_rawfile(e, &size);
    if (elf_getphdrnum(e, &phnum) != 0)
        return fail_elf(err, name, "unreadable program headers");
    GElf_Phdr ph = {0};
    size_t i = 0;
    for (; i < phnum; i++)
        if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_DYNAMIC)
            break;
    if (i == phnum || ph.p_filesz == 0)
        return AITK_OK; /* a static executable: nothing to load */
    if (!raw || ph.p_offset >= size || ph.p_filesz > size - ph.p_offset)
        return fail(err, name, "dynamic segment lies outside the file");
    Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_DYN);
    if (!d)
        return fail_elf(err, name, "unreadable dynamic segment");
    dyn_strings strs;
    aitk_status st = dyn_strtab(e, d, name, &strs, err);
    return st ? st : read_dyn_entries(e, d, &strs, name, out, err);
}

static aitk_status read_verneed(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
                                aitk_elf_info *out, aitk_str *err)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d)
        return fail_elf(err, name, "unreadable version-needs section");
    size_t off = 0, max = d->d_size / sizeof(GElf_Verneed) + 1;
    for (size_t i = 0; i < sh->sh_info && i < max; i++) {
        GElf_Verneed vn;
        if (!gelf_getverneed(d, (int)off, &vn))
            return fail_elf(err, name, "version-needs entry outside its section");
        const char *file = str_at(e, sh->sh_link, vn.vn_file, name, err);
        if (!file)
            return AITK_E_PARSE;
        size_t aoff = off + vn.vn_aux;
        for (size_t j = 0; j < vn.vn_cnt && j < max; j++) {
            GElf_Vernaux va;
            if (aoff > (size_t)INT32_MAX || !gelf_getvernaux(d, (int)aoff, &va))
                return fail_elf(err, name, "version-needs auxiliary entry outside its section");
            const char *ver = str_at(e, sh->sh_link, va.vna_name, name, err);
            if (!ver)
                return AITK_E_PARSE;
            aitk_elf_verneed *g = aitk_realloc(out->verneed, (out->verneed_count + 1) * sizeof *g);
            if (!g)
                return AITK_E_NOMEM;
            out->verneed = g;
            g[out->verneed_count] =
                (aitk_elf_verneed){aitk_strdup(file), aitk_strdup(ver), va.vna_other & 0x7fffu};
            out->verneed_count++;
            if (!g[out->verneed_count - 1].file || !g[out->verneed_count - 1].version)
                return AITK_E_NOMEM;
            if (va.vna_next == 0)
                break;
            aoff += va.vna_next;
        }
        if (vn.vn_next == 0)
            break;
        off += vn.vn_next;
        if (off > (size_t)INT32_MAX)
            return fail(err, name, "version-needs chain runs past its section");
    }
    return AITK_OK;
}

/* Walks the version definitions of section `scn`, base entry included,
 * giving `fn` each one's index and name (elf_syms.h). */
aitk_status aitk_elf_walk_verdef(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
                                 aitk_elf_verdef_fn fn, void *ctx, aitk_str *err)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d)
        return fail_elf(err, name, "unreadable version-definitions section");
    size_t off = 0, max = d->d_size / sizeof(GElf_Verdef) + 1;
    for (size_t i = 0; i < sh->sh_info && i < max; i++) {
        GElf_Verdef vd;
        if (!gelf_getverdef(d, (int)off, &vd))
            return fail_elf(err, name, "version definition outside its section");
        if (vd.vd_cnt > 0) {
            GElf_Verdaux va;
            size_t aoff = off + vd.vd_aux;
            if (aoff > (size_t)INT32_MAX || !gelf_getverdaux(d, (int)aoff, &va))
                return fail_elf(err, name, "version definition name outside its section");
            const char *ver = str_at(e, sh->sh_link, va.vda_name, name, err);
            if (!ver)
                return AITK_E_PARSE;
            aitk_status st = fn(ctx, vd.vd_ndx & 0x7fff, (vd.vd_flags & VER_FLG_BASE) != 0, ver);
            if (st)
                return st;
        }
        if (vd.vd_next == 0)
            break;
        off += vd.vd_next;
        if (off > (size_t)INT32_MAX)
            return fail(err, name, "version-definition chain runs past its section");
    }
    return AITK_OK;
}

/* The versions a library provides: its base entry is its own name, which
 * no requester asks for as a version. */
static aitk_status push_verdef(void *ctx, unsigned ndx, bool base, const char *version)
{
    (void)ndx;
    aitk_elf_info *out = ctx;
    return base ? AITK_OK : list_push(&out->verdef, &out->verdef_count, version);
}

static aitk_status read_interp(Elf *e, const char *name, aitk_elf_info *out, aitk_str *err)
{
    size_t phnum = 0, size = 0;
    if (elf_getphdrnum(e, &phnum) != 0)
        return fail_elf(err, name, "unreadable program headers");
    const char *raw = elf_rawfile(e, &size);
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph))
            return fail_elf(err, name, "unreadable program header");
        if (ph.p_type != PT_INTERP)
            continue;
        if (!raw || ph.p_offset >= size || ph.p_filesz > size - ph.p_offset || ph.p_filesz == 0)
            return fail(err, name, "interpreter path lies outside the file");
        out->interp = aitk_strndup(raw + ph.p_offset, ph.p_filesz);
        return out->interp ? AITK_OK : AITK_E_NOMEM;
    }
    return AITK_OK;
}

/* The ELF header fields that say how long the file must be, read from the
 * raw bytes in the file's byte order (libelf may refuse the file). */
typedef struct raw_ehdr {
    uint64_t phoff, shoff;
    unsigned type, machine, phentsize, phnum, shentsize, shnum;
} raw_ehdr;

static uint64_t rd_uint(const unsigned char *p, size_t n, bool msb)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | p[msb ? i : n - 1 - i];
    return v;
}

#define RAW_FIELD(type, field) \
    rd_uint(raw + offsetof(type, field), sizeof((type *)0)->field, msb)

/* The size of the ELF header `raw` starts with, and its fields in `h` when
 * `size` bytes hold all of it; 0 when it is no ELF header of a known class
 * and byte order (libelf then says what it is). */
static size_t raw_header(const unsigned char *raw, size_t size, raw_ehdr *h)
{
    if (size < EI_NIDENT || memcmp(raw, ELFMAG, SELFMAG) != 0)
        return 0;
    bool is64 = raw[EI_CLASS] == ELFCLASS64, msb = raw[EI_DATA] == ELFDATA2MSB;
    if ((!is64 && raw[EI_CLASS] != ELFCLASS32) || (!msb && raw[EI_DATA] != ELFDATA2LSB))
        return 0;
    size_t need = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
    if (size < need)
        return need;
    if (is64)
        *h = (raw_ehdr){RAW_FIELD(Elf64_Ehdr, e_phoff), RAW_FIELD(Elf64_Ehdr, e_shoff),
                        (unsigned)RAW_FIELD(Elf64_Ehdr, e_type),
                        (unsigned)RAW_FIELD(Elf64_Ehdr, e_machine),
                        (unsigned)RAW_FIELD(Elf64_Ehdr, e_phentsize),
                        (unsigned)RAW_FIELD(Elf64_Ehdr, e_phnum),
                        (unsigned)RAW_FIELD(Elf64_Ehdr, e_shentsize),
                        (unsigned)RAW_FIELD(Elf64_Ehdr, e_shnum)};
    else
        *h = (raw_ehdr){RAW_FIELD(Elf32_Ehdr, e_phoff), RAW_FIELD(Elf32_Ehdr, e_shoff),
                        (unsigned)RAW_FIELD(Elf32_Ehdr, e_type),
                        (unsigned)RAW_FIELD(Elf32_Ehdr, e_machine),
                        (unsigned)RAW_FIELD(Elf32_Ehdr, e_phentsize),
                        (unsigned)RAW_FIELD(Elf32_Ehdr, e_phnum),
                        (unsigned)RAW_FIELD(Elf32_Ehdr, e_shentsize),
                        (unsigned)RAW_FIELD(Elf32_Ehdr, e_shnum)};
    return need;
}

static aitk_status note_truncated(aitk_elf_info *out, size_t size, uint64_t described)
{
    out->truncated = true;
    out->file_size = size;
    out->described_size = described;
    return AITK_OK;
}

/* What the file is before libelf reads a byte of it (elf.h): its ELF
 * header as ld.so's open_verify judges it, then whether it ends where its
 * headers say, then ld.so's checks of its load segments. A file cut short
 * (even inside its ELF header) or one ld.so refuses as it is keeps the
 * identity it shows and is read no further (*done); a damaged one is
 * AITK_E_PARSE, saying which field and why it is damage, not a cut. */
static aitk_status judge(const unsigned char *raw, size_t size, const char *name,
                         aitk_elf_info *out, bool *done, aitk_str *err)
{
    *done = true;
    raw_ehdr h;
    if (raw_header(raw, size, &h) && size >= (raw[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr)
                                                                            : sizeof(Elf32_Ehdr))) {
        out->elf_class = raw[EI_CLASS];
        out->osabi = raw[EI_OSABI];
        out->machine = h.machine;
        out->type = h.type;
    }
    aitk_str why = AITK_STR_INIT;
    uint64_t described = 0;
    aitk_status st = AITK_OK;
    aitk_elf_head v = aitk_elf_judge_header(raw, size < 64 ? size : 64, 0, 0, &why);
    if (v == AITK_ELF_HEAD_OK)
        v = aitk_elf_judge_layout(raw, size, &described, &why);
    else if (v == AITK_ELF_HEAD_CUT) /* inside the ELF header, of the size its class says */
        described = size > EI_CLASS && raw[EI_CLASS] == ELFCLASS32 ? 52 : 64;
    if (v == AITK_ELF_HEAD_OK)
        v = aitk_elf_judge_segments(raw, size, &why);
    switch (v) {
    case AITK_ELF_HEAD_OK:
    case AITK_ELF_HEAD_OTHER: *done = false; break;
    case AITK_ELF_HEAD_NOT_ELF: st = fail(err, name, "not an ELF file"); break;
    case AITK_ELF_HEAD_CUT: st = note_truncated(out, size, described); break;
    case AITK_ELF_HEAD_CORRUPT: st = fail(err, name, aitk_str_cstr(&why)); break;
    case AITK_ELF_HEAD_REFUSED:
        st = (out->unloadable = aitk_str_steal(&why)) ? AITK_OK : AITK_E_NOMEM;
        break;
    }
    if (aitk_str_status(&why))
        st = AITK_E_NOMEM;
    aitk_str_free(&why);
    return st;
}

/* Damaged or cut-off files first: reading one further would either fail
 * with a misleading reason or, worse, succeed on what is left. */
static aitk_status read_elf(Elf *e, const char *name, aitk_elf_info *out, aitk_str *err)
{
    size_t size = 0;
    const unsigned char *raw = (const unsigned char *)elf_rawfile(e, &size);
    if (!raw)
        return fail_elf(err, name, "unreadable file");
    bool done;
    aitk_status st = judge(raw, size, name, out, &done, err);
    if (st || done)
        return st;
    if (elf_kind(e) != ELF_K_ELF)
        return fail(err, name, "not an ELF file");
    GElf_Ehdr eh;
    if (!gelf_getehdr(e, &eh))
        return fail_elf(err, name, "unreadable ELF header");
    out->elf_class = gelf_getclass(e);
    out->machine = eh.e_machine;
    out->osabi = eh.e_ident[EI_OSABI];
    out->type = eh.e_type;
    st = read_interp(e, name, out, err);
    size_t shnum = 0;
    if (!st && elf_getshdrnum(e, &shnum) != 0)
        return fail_elf(err, name, "unreadable section headers");
    bool seen_dynamic = false;
    Elf_Scn *dynsym = NULL, *versym = NULL;
    for (size_t i = 1; i < shnum && !st; i++) {
        Elf_Scn *scn = elf_getscn(e, i);
        GElf_Shdr sh;
        if (!scn || !gelf_getshdr(scn, &sh))
            return fail_elf(err, name, "unreadable section header");
        if (sh.sh_type == SHT_DYNAMIC && !seen_dynamic) {
            seen_dynamic = true;
            st = read_dynamic(e, scn, name, out, err);
        } else if (sh.sh_type == SHT_GNU_verneed) {
            st = read_verneed(e, scn, &sh, name, out, err);
        } else if (sh.sh_type == SHT_GNU_verdef) {
            st = aitk_elf_walk_verdef(e, scn, &sh, name, push_verdef, out, err);
        } else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
            dynsym = scn;
        } else if (sh.sh_type == SHT_GNU_versym && !versym) {
            versym = scn;
        }
    }
    /* After the loop: the references name verneed entries, read above. */
    if (!st && dynsym && versym && out->verneed_count)
        st = aitk_elf_read_refs(e, dynsym, versym, out);
    /* Version needs are not read this way: without section headers only
     * DT_VERNEED's address is known, and the search needs the names. */
    if (!st && !seen_dynamic)
        st = read_dynamic_segment(e, name, out, err);
    return st;
}

static aitk_status finish(aitk_status st, aitk_elf_info *out)
{
    if (st)
        aitk_elf_info_free(out);
    return st;
}

aitk_status aitk_elf_read_mem(const char *name, const void *data, size_t len, aitk_elf_info *out,
                              aitk_str *err)
{
    memset(out, 0, sizeof *out);
    elf_version(EV_CURRENT);
    if (len == 0)
        return fail(err, name, "empty file");
    /* libelf may convert in place; the caller's bytes stay untouched. */
    char *copy = aitk_malloc(len);
    if (!copy)
        return AITK_E_NOMEM;
    memcpy(copy, data, len);
    bool done;
    aitk_status st = judge(data, len, name, out, &done, err);
    Elf *e = st || done ? NULL : elf_memory(copy, len);
    if (!st && !done)
        st = e ? read_elf(e, name, out, err) : fail_elf(err, name, "not readable as ELF");
    if (e)
        elf_end(e);
    aitk_free(copy);
    return finish(st, out);
}

/* judge() over the whole file, for when libelf would not open it: mapped,
 * since judging offsets against the first 64 bytes alone would call a file
 * of any size "truncated: the file has 64 bytes". Where it cannot be mapped,
 * the ELF header alone is judged (its own checks need no more). */
static aitk_status judge_fd(int fd, off_t size, const char *name, aitk_elf_info *out,
                            aitk_str *err)
{
    bool done = false;
    aitk_status st = AITK_OK;
    void *map = size > 0 ? mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map != MAP_FAILED) {
        st = judge(map, (size_t)size, name, out, &done, err);
        munmap(map, (size_t)size);
    } else {
        unsigned char head[sizeof(Elf64_Ehdr)];
        ssize_t n = pread(fd, head, sizeof head, 0);
        if (n > 0 && (size_t)n < sizeof head)
            st = judge(head, (size_t)n, name, out, &done, err);
    }
    return st || done ? st : fail_elf(err, name, "not readable as ELF");
}

aitk_status aitk_elf_read_fd(int fd, const char *name, aitk_elf_info *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    elf_version(EV_CURRENT);
    struct stat sb;
    aitk_status st;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = fail(err, name, "not a regular file");
    } else if (sb.st_size == 0) {
        st = fail(err, name, "empty file");
    } else {
        /* libelf maps (or preads) from offset 0: where fd stands does not matter. */
        Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        st = e ? read_elf(e, name, out, err) : judge_fd(fd, sb.st_size, name, out, err);
        if (e)
            elf_end(e);
    }
    return finish(st, out);
}

aitk_status aitk_elf_read_file(const char *path, aitk_elf_info *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        aitk_str_appendf(err, "%s: %s", path, strerror(errno));
        return AITK_E_IO;
    }
    aitk_status st = aitk_elf_read_fd(fd, path, out, err);
    close(fd);
    return st;
}
