/* The parts of elf.h's API that need no libelf, so every build has them (the
 * Windows build has no libelf): the 20-byte identity check of a search
 * candidate, machine names, and freeing a result. The few ELF constants are
 * spelled out here because mingw-w64 has no <elf.h>; their values are fixed
 * by the System V ABI (e_ident layout; machine numbers are in elf.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "validate/libdeps/elf.h"

enum {
    IDENT_CLASS = 4,   /* e_ident[EI_CLASS] */
    IDENT_DATA = 5,    /* e_ident[EI_DATA] */
    IDENT_VERSION = 6, /* e_ident[EI_VERSION] */
    IDENT_OSABI = 7,   /* e_ident[EI_OSABI] */
    IDENT_ABIVERSION = 8, /* e_ident[EI_ABIVERSION] */
    IDENT_PAD = 9,     /* e_ident[EI_PAD] */
    DATA_MSB = 2,      /* ELFDATA2MSB */
    TYPE_EXEC = 2,     /* ET_EXEC */
    TYPE_DYN = 3,      /* ET_DYN */
};

aitk_status aitk_elf_peek(const char *path, int *elf_class, unsigned *machine, aitk_str *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        aitk_str_appendf(err, "%s: %s", path, strerror(errno));
        return AITK_E_IO;
    }
    unsigned char h[20];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n != sizeof h || memcmp(h, "\177ELF", 4) != 0) {
        aitk_str_appendf(err, "%s: not an ELF file", path);
        return AITK_E_PARSE;
    }
    *elf_class = h[IDENT_CLASS];
    /* e_machine is the 16-bit field at offset 18, in the file's byte order. */
    *machine = h[IDENT_DATA] == DATA_MSB ? (unsigned)(h[18] << 8 | h[19])
                                         : (unsigned)(h[19] << 8 | h[18]);
    return AITK_OK;
}

static unsigned get16(const unsigned char *h, size_t at, bool msb)
{
    return msb ? (unsigned)(h[at] << 8 | h[at + 1]) : (unsigned)(h[at + 1] << 8 | h[at]);
}

static unsigned long get32(const unsigned char *h, size_t at, bool msb)
{
    return msb ? (unsigned long)get16(h, at, true) << 16 | get16(h, at + 2, true)
               : (unsigned long)get16(h, at + 2, false) << 16 | get16(h, at, false);
}

static aitk_elf_head head_verdict(aitk_str *why, aitk_elf_head kind, const char *text)
{
    aitk_str_append(why, text);
    return kind;
}

/* The size of an ELF header (ElfW(Ehdr)) of this class. */
static size_t ehdr_size(int cls)
{
    return cls == AITK_ELFCLASS32 ? 52 : 64;
}

aitk_elf_head aitk_elf_judge_header(const unsigned char *h, size_t n, int want_class,
                                    unsigned want_machine, aitk_str *why)
{
    const bool root = want_class == 0;
    const bool magic = n >= 4 && memcmp(h, "\177ELF", 4) == 0;
    const int cls = magic && n > IDENT_CLASS ? h[IDENT_CLASS] : 0;
    /* ld.so first reads an ELF header of its own class; a root is read as
     * the class it says it is (64 bytes when it says nothing sensible). */
    const size_t need = ehdr_size(root ? cls : want_class);
    if (n < need) {
        if (!magic)
            return head_verdict(why, AITK_ELF_HEAD_NOT_ELF, "file too short");
        aitk_str_appendf(why, "truncated: the file has %zu bytes, an ELF header needs %zu "
                              "(ld.so: file too short)", n, need);
        return AITK_ELF_HEAD_CUT;
    }
    if (!magic)
        return head_verdict(why, AITK_ELF_HEAD_NOT_ELF, "invalid ELF header");
    if (cls != AITK_ELFCLASS32 && cls != AITK_ELFCLASS64) {
        /* ld.so passes over a file of another class, as it does in a search;
         * a root that says no class at all is damaged. */
        if (!root)
            return AITK_ELF_HEAD_OTHER;
        aitk_str_appendf(why, "corrupt header: ELF class byte %d is neither 32- nor 64-bit", cls);
        return AITK_ELF_HEAD_CORRUPT;
    }
    if (!root && cls != want_class)
        return AITK_ELF_HEAD_OTHER;
    const unsigned data = h[IDENT_DATA];
    if (data != 1 && data != DATA_MSB) {
        aitk_str_appendf(why, "corrupt header: byte order byte (EI_DATA) %u is neither little- "
                              "nor big-endian (ld.so: ELF file data encoding not little-endian)",
                         data);
        return AITK_ELF_HEAD_CORRUPT;
    }
    /* e_version is 1 in every ELF file: read in the wrong order it is 2^24,
     * which tells a flipped byte-order flag from a big-endian build. */
    if (data == DATA_MSB && get32(h, 20, true) != 1 && get32(h, 20, false) == 1)
        return head_verdict(why, AITK_ELF_HEAD_CORRUPT,
                            "corrupt header: its byte order byte (EI_DATA) says big-endian, "
                            "but the header is little-endian (ld.so: ELF file data encoding "
                            "not little-endian)");
    /* Every machine these trees come from is little-endian (x86, Arm and
     * RISC-V Linux); PowerPC64 comes in both, so it is not judged, nor is
     * a big-endian root, examined as the tree of its own machine. */
    if (!root && want_machine != AITK_EM_PPC64 && data != 1)
        return head_verdict(why, AITK_ELF_HEAD_REFUSED,
                            "ELF file data encoding not little-endian");
    const bool msb = data == DATA_MSB;
    if (h[IDENT_VERSION] != 1)
        return head_verdict(why, AITK_ELF_HEAD_CORRUPT,
                            "corrupt header: EI_VERSION is not 1 (ld.so: ELF file version "
                            "ident does not match current one)");
    /* System V or GNU (objects with GNU extensions such as IFUNC). */
    if (h[IDENT_OSABI] != 0 && h[IDENT_OSABI] != 3)
        return head_verdict(why, AITK_ELF_HEAD_REFUSED, "ELF file OS ABI invalid");
    /* EI_ABIVERSION: 0 for System V; for GNU objects below glibc's
     * LIBC_ABI_MAX, which is 4 on glibc 2.36 x86-64 (0..3 load). Other
     * glibc builds may differ: this judges by that one. */
    if ((h[IDENT_OSABI] == 0 && h[IDENT_ABIVERSION] != 0) ||
        (h[IDENT_OSABI] == 3 && h[IDENT_ABIVERSION] > 3))
        return head_verdict(why, AITK_ELF_HEAD_REFUSED, "ELF file ABI version invalid");
    for (size_t k = IDENT_PAD; k < 16; k++)
        if (h[k])
            return head_verdict(why, AITK_ELF_HEAD_CORRUPT,
                                "corrupt header: nonzero padding in e_ident (ld.so: nonzero "
                                "padding in e_ident)");
    if (get32(h, 20, msb) != 1)
        return head_verdict(why, AITK_ELF_HEAD_CORRUPT,
                            "corrupt header: e_version is not 1 (ld.so: ELF file version does "
                            "not match current one)");
    if (!root && get16(h, 18, msb) != want_machine)
        return AITK_ELF_HEAD_OTHER;
    const unsigned type = get16(h, 16, msb);
    /* ET_NONE..ET_CORE, and the OS and processor ranges: anything else is
     * no type at all. */
    if (type > 4 && type < 0xfe00) {
        aitk_str_appendf(why, "corrupt header: e_type %u is no ELF file type (ld.so: only ET_DYN "
                              "and ET_EXEC can be loaded)", type);
        return AITK_ELF_HEAD_CORRUPT;
    }
    if (type != TYPE_DYN && type != TYPE_EXEC)
        return head_verdict(why, AITK_ELF_HEAD_REFUSED, "only ET_DYN and ET_EXEC can be loaded");
    /* open_verify lets an ET_EXEC through; mapping it as a dependency then
     * fails (_dl_map_object_from_fd). A PIE (ET_DYN with DF_1_PIE) fails
     * there too: that needs the dynamic section (tree.c checks it). */
    if (!root && type == TYPE_EXEC)
        return head_verdict(why, AITK_ELF_HEAD_REFUSED, "cannot dynamically load executable");
    /* e_phentsize: the size of Elf64_Phdr / Elf32_Phdr. */
    const unsigned phentsize = get16(h, cls == AITK_ELFCLASS32 ? 42 : 54, msb);
    const unsigned want_phent = cls == AITK_ELFCLASS32 ? 32u : 56u;
    if (phentsize != want_phent) {
        aitk_str_appendf(why, "corrupt header: e_phentsize is %u, a %d-bit program header is %u "
                              "bytes (ld.so: ELF file's phentsize not the expected size)",
                         phentsize, cls == AITK_ELFCLASS32 ? 32 : 64, want_phent);
        return AITK_ELF_HEAD_CORRUPT;
    }
    return AITK_ELF_HEAD_OK;
}

aitk_elf_candidate aitk_elf_check_candidate(const char *path, int want_class, unsigned want_machine,
                                            int *cls, unsigned *machine, int *open_errno,
                                            aitk_elf_head *kind, aitk_str *why)
{
    *cls = 0;
    *machine = 0;
    *open_errno = 0;
    *kind = AITK_ELF_HEAD_REFUSED;
    /* A FIFO would block the read, as it blocks ld.so: said, not read. */
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        /* ld.so opens it, then fails to read it: said so without reading. */
        aitk_str_append(why, "cannot read file data: Is a directory");
        return AITK_ELF_CANDIDATE_STOP;
    }
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        aitk_str_append(why, S_ISFIFO(sb.st_mode) ? "a FIFO (named pipe): ld.so would wait on it"
                                                  : "not a regular file");
        return AITK_ELF_CANDIDATE_STOP;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        *open_errno = errno;
        return AITK_ELF_CANDIDATE_NOT_OPENED;
    }
    unsigned char h[64] = {0};
    size_t n = fread(h, 1, sizeof h, f);
    int read_errno = ferror(f) ? errno : 0;
    fclose(f);
    if (read_errno) {
        aitk_str_appendf(why, "cannot read file data: %s", strerror(read_errno));
        return AITK_ELF_CANDIDATE_STOP;
    }
    /* Known from here: whether it is an ELF file at all (its class). */
    if (n > IDENT_CLASS && memcmp(h, "\177ELF", 4) == 0)
        *cls = h[IDENT_CLASS];
    if (n >= 20 && *cls)
        *machine = get16(h, 18, h[IDENT_DATA] == DATA_MSB);
    *kind = aitk_elf_judge_header(h, n, want_class, want_machine, why);
    switch (*kind) {
    case AITK_ELF_HEAD_OK: return AITK_ELF_CANDIDATE_USE;
    case AITK_ELF_HEAD_OTHER: return AITK_ELF_CANDIDATE_SKIP;
    default: return AITK_ELF_CANDIDATE_STOP;
    }
}

void aitk_elf_machine_name(unsigned machine, aitk_str *out)
{
    switch (machine) {
    case AITK_EM_X86_64: aitk_str_append(out, "x86-64"); break;
    case AITK_EM_386: aitk_str_append(out, "i386"); break;
    case AITK_EM_AARCH64: aitk_str_append(out, "AArch64"); break;
    case AITK_EM_ARM: aitk_str_append(out, "ARM"); break;
    case AITK_EM_PPC64: aitk_str_append(out, "PowerPC64"); break;
    case AITK_EM_RISCV: aitk_str_append(out, "RISC-V"); break;
    default: aitk_str_appendf(out, "machine 0x%x", machine); break;
    }
}

static void free_list(char **items, size_t count)
{
    for (size_t i = 0; i < count; i++)
        aitk_free(items[i]);
    aitk_free(items);
}

void aitk_elf_info_free(aitk_elf_info *info)
{
    if (!info)
        return;
    aitk_free(info->soname);
    aitk_free(info->rpath);
    aitk_free(info->runpath);
    aitk_free(info->interp);
    aitk_free(info->unloadable);
    free_list(info->needed, info->needed_count);
    for (size_t i = 0; i < info->verneed_count; i++) {
        aitk_free(info->verneed[i].file);
        aitk_free(info->verneed[i].version);
    }
    aitk_free(info->verneed);
    free_list(info->verdef, info->verdef_count);
    for (size_t i = 0; i < info->ref_count; i++)
        aitk_free(info->refs[i].name);
    aitk_free(info->refs);
    memset(info, 0, sizeof *info);
}
