/* Where an ELF file's headers place things, against where the file ends:
 * whether a file is whole, cut short (an interrupted download: it is
 * shorter than what plausible headers describe) or damaged (a header points
 * past the end of a file that is otherwise whole, or beyond any size a
 * library has), and what ld.so checks in the
 * program headers before it maps anything (glibc elf/dl-load.c,
 * _dl_map_object_from_fd). Raw bytes in the file's byte order, no libelf:
 * libelf refuses a file whose section headers lie past its end, which is
 * exactly the file this has to judge. See elf.h. */
#include <elf.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "validate/libdeps/elf.h"

/* No shared library comes near 64 GiB (the largest CUDA and torch ones are
 * 1-3 GiB): a header that places anything beyond it is damaged, whatever
 * else the file looks like, and a cut copy never describes such a size. */
#define PLAUSIBLE_END (64ull << 30)
/* ld.so wants PT_LOAD alignments that are multiples of the page size; 4 KiB,
 * the smallest Linux page, so a file is never refused here that a 4 KiB
 * system loads (a 64 KiB-page system is stricter still). */
#define MIN_PAGE 4096u

typedef struct raw_file {
    const unsigned char *p;
    size_t size;
    bool is64, msb;
} raw_file;

static uint64_t rd(const raw_file *f, uint64_t at, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | f->p[at + (f->msb ? i : n - 1 - i)];
    return v;
}

/* A field of the ELF header, of a program header or of a section header:
 * its offset and width in each class. */
#define FIELD(f, base, T64, T32, field)                                            \
    rd(f, (base) + ((f)->is64 ? offsetof(T64, field) : offsetof(T32, field)),     \
       (f)->is64 ? sizeof(((T64 *)0)->field) : sizeof(((T32 *)0)->field))
#define EH(f, field) FIELD(f, 0, Elf64_Ehdr, Elf32_Ehdr, field)
#define PH(f, at, field) FIELD(f, at, Elf64_Phdr, Elf32_Phdr, field)
#define SH(f, at, field) FIELD(f, at, Elf64_Shdr, Elf32_Shdr, field)

static uint64_t end_of(uint64_t off, uint64_t len)
{
    return len > UINT64_MAX - off ? UINT64_MAX : off + len;
}

/* What the headers describe, seen from the file's end. */
typedef struct layout {
    uint64_t size;     /* the file's */
    uint64_t end;      /* the furthest end described */
    bool past;         /* something ends past the file's end */
    bool first_sht;    /* the first structure past the end is the section header table */
    aitk_str first;    /* the first structure past the end, in words */
    aitk_str absurd;   /* the first one placed beyond PLAUSIBLE_END, in words */
} layout;

static void add(layout *l, uint64_t start, uint64_t len, const char *fmt, ...)
{
    const uint64_t end = end_of(start, len);
    if (end > l->end)
        l->end = end;
    if (end <= l->size)
        return;
    if (!l->past || (end > PLAUSIBLE_END && !l->absurd.len)) {
        va_list ap;
        va_start(ap, fmt);
        aitk_str_vappendf(!l->past ? &l->first : &l->absurd, fmt, ap);
        va_end(ap);
        if (!l->past && end > PLAUSIBLE_END)
            aitk_str_append(&l->absurd, aitk_str_cstr(&l->first));
    }
    l->past = true;
}

aitk_elf_head aitk_elf_judge_layout(const unsigned char *raw, size_t size, uint64_t *described,
                                    aitk_str *why)
{
    const raw_file f = {raw, size, raw[EI_CLASS] == ELFCLASS64, raw[EI_DATA] == ELFDATA2MSB};
    const uint64_t phentsize = f.is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
    const uint64_t shentsize = f.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
    const uint64_t phoff = EH(&f, e_phoff), shoff = EH(&f, e_shoff);
    const uint64_t phnum = EH(&f, e_phnum), shnum = EH(&f, e_shnum);
    /* aitk_elf_judge_header has checked e_phentsize; these are the section
     * side's, which ld.so never reads but every tool writes so. */
    if (shoff && EH(&f, e_shentsize) != shentsize) {
        aitk_str_appendf(why, "corrupt header: e_shentsize is %llu, a section header is %llu "
                              "bytes", (unsigned long long)EH(&f, e_shentsize),
                         (unsigned long long)shentsize);
        return AITK_ELF_HEAD_CORRUPT;
    }
    if (shnum >= SHN_LORESERVE) {
        aitk_str_appendf(why, "corrupt header: e_shnum is %llu; from %u up the count is kept in "
                              "section 0 and e_shnum is 0 (ld.so reads no section headers and "
                              "may load it all the same, but the copy is damaged)",
                         (unsigned long long)shnum, SHN_LORESERVE);
        return AITK_ELF_HEAD_CORRUPT;
    }
    layout l = {.size = size, .first = AITK_STR_INIT, .absurd = AITK_STR_INIT};
    if (phnum)
        add(&l, phoff, phnum * phentsize,
            "the program header table (e_phoff %llu, e_phnum %llu; ld.so: cannot read file data)",
            (unsigned long long)phoff, (unsigned long long)phnum);
    /* e_shnum 0 with an e_shoff: the count is in section 0, one entry at least. */
    const uint64_t sht_len = (shnum ? shnum : 1) * shentsize;
    if (shoff) {
        l.first_sht = !l.past;
        add(&l, shoff, sht_len, "the section header table (e_shoff %llu, e_shnum %llu)",
            (unsigned long long)shoff, (unsigned long long)shnum);
        l.first_sht &= l.past;
    }
    /* The entries of each table that the file holds. */
    for (uint64_t i = 0; i < phnum; i++) {
        const uint64_t at = phoff + i * phentsize;
        if (phoff > size || end_of(at, phentsize) > size)
            break;
        if (PH(&f, at, p_type) != PT_NULL)
            add(&l, PH(&f, at, p_offset), PH(&f, at, p_filesz),
                "program header %llu (p_offset %llu, p_filesz %llu)", (unsigned long long)i,
                (unsigned long long)PH(&f, at, p_offset),
                (unsigned long long)PH(&f, at, p_filesz));
    }
    for (uint64_t i = 1; shoff && i < shnum; i++) {
        const uint64_t at = shoff + i * shentsize;
        if (shoff > size || end_of(at, shentsize) > size)
            break;
        const uint64_t type = SH(&f, at, sh_type);
        if (type != SHT_NOBITS && type != SHT_NULL)
            add(&l, SH(&f, at, sh_offset), SH(&f, at, sh_size),
                "section header %llu (sh_offset %llu, sh_size %llu)", (unsigned long long)i,
                (unsigned long long)SH(&f, at, sh_offset),
                (unsigned long long)SH(&f, at, sh_size));
    }
    aitk_elf_head verdict = AITK_ELF_HEAD_OK;
    /* Every linker and strip writes the section header table last: one
     * that ends where the file does says the file is whole. Without that
     * sign a file shorter than its headers say is taken as cut, unless
     * what they say is beyond any library's size: where a cut copy's lost
     * tail lay cannot be told from a header pointing there (a damaged
     * e_shoff of a few MiB reads as a cut; the remedy, reinstall, is the
     * same). */
    const bool sht_at_end = shoff && shnum && end_of(shoff, sht_len) == size;
    /* ld.so reads no section headers: damage there alone still loads, and
     * the reader says so beside the damage. */
    const char *still = l.first_sht ? "; ld.so reads no section headers and may load it all the "
                                      "same, but the copy is damaged"
                                    : "";
    if (!l.past) {
        verdict = AITK_ELF_HEAD_OK;
    } else if (sht_at_end) {
        aitk_str_appendf(why, "corrupt header: %s runs past the end of the file (%zu bytes), "
                              "which is whole: its section header table ends where the file "
                              "does", aitk_str_cstr(&l.first), size);
        verdict = AITK_ELF_HEAD_CORRUPT;
    } else if (l.absurd.len) {
        aitk_str_appendf(why, "corrupt header: %s lies beyond any plausible file size, not in a "
                              "cut-off copy%s", aitk_str_cstr(&l.absurd), still);
        verdict = AITK_ELF_HEAD_CORRUPT;
    } else {
        *described = l.end;
        verdict = AITK_ELF_HEAD_CUT;
    }
    aitk_str_free(&l.first);
    aitk_str_free(&l.absurd);
    return verdict;
}

aitk_elf_head aitk_elf_judge_segments(const unsigned char *raw, size_t size, aitk_str *why)
{
    /* aitk_elf_judge_layout found the program headers inside the file. */
    const raw_file f = {raw, size, raw[EI_CLASS] == ELFCLASS64, raw[EI_DATA] == ELFDATA2MSB};
    const uint64_t phentsize = f.is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
    const uint64_t phoff = EH(&f, e_phoff), phnum = EH(&f, e_phnum);
    bool load = false, dynamic = false;
    for (uint64_t i = 0; i < phnum; i++) {
        const uint64_t at = phoff + i * phentsize, type = PH(&f, at, p_type);
        dynamic |= type == PT_DYNAMIC && PH(&f, at, p_filesz) != 0;
        if (type != PT_LOAD)
            continue;
        load = true;
        const uint64_t align = PH(&f, at, p_align);
        if (align & (MIN_PAGE - 1)) {
            aitk_str_appendf(why, "ELF load command alignment not page-aligned (program header "
                                  "%llu: p_align %llu)", (unsigned long long)i,
                             (unsigned long long)align);
            return AITK_ELF_HEAD_REFUSED;
        }
        if ((PH(&f, at, p_vaddr) - PH(&f, at, p_offset)) & (align - 1)) {
            aitk_str_appendf(why, "ELF load command address/offset not properly aligned "
                                  "(program header %llu)", (unsigned long long)i);
            return AITK_ELF_HEAD_REFUSED;
        }
    }
    const char *no = !load ? "object file has no loadable segments"
                     /* A library (ET_DYN) must have one; a program may be static. */
                     : !dynamic && EH(&f, e_type) == ET_DYN ? "object file has no dynamic section"
                                                             : NULL;
    if (!no)
        return AITK_ELF_HEAD_OK;
    aitk_str_append(why, no);
    return AITK_ELF_HEAD_REFUSED;
}
