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

aitk_elf_candidate aitk_elf_check_candidate(const char *path, int want_class, unsigned want_machine,
                                            int *cls, unsigned *machine, int *open_errno,
                                            aitk_str *why)
{
    *cls = 0;
    *machine = 0;
    *open_errno = 0;
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
    /* The ELF header's size in the tree's class (ElfW(Ehdr) to glibc). */
    const size_t ehdr = want_class == AITK_ELFCLASS32 ? 52 : 64;
    if (read_errno) {
        aitk_str_appendf(why, "cannot read file data: %s", strerror(read_errno));
        return AITK_ELF_CANDIDATE_STOP;
    }
    /* Known from here: whether it is an ELF file at all (its class). */
    if (n > IDENT_CLASS && memcmp(h, "\177ELF", 4) == 0)
        *cls = h[IDENT_CLASS];
    if (n < ehdr) {
        aitk_str_append(why, "file too short");
        return AITK_ELF_CANDIDATE_STOP;
    }
    if (memcmp(h, "\177ELF", 4) != 0) {
        aitk_str_append(why, "invalid ELF header");
        return AITK_ELF_CANDIDATE_STOP;
    }
    const bool msb = h[IDENT_DATA] == DATA_MSB;
    *machine = get16(h, 18, msb);
    if (*cls != want_class)
        return AITK_ELF_CANDIDATE_SKIP;
    /* Every machine these trees come from is little-endian (x86, Arm and
     * RISC-V Linux); PowerPC64 comes in both, so it is not judged. */
    if (want_machine != AITK_EM_PPC64 && h[IDENT_DATA] != 1) {
        aitk_str_append(why, "ELF file data encoding not little-endian");
        return AITK_ELF_CANDIDATE_STOP;
    }
    if (h[IDENT_VERSION] != 1) {
        aitk_str_append(why, "ELF file version ident does not match current one");
        return AITK_ELF_CANDIDATE_STOP;
    }
    /* System V or GNU (objects with GNU extensions such as IFUNC). */
    if (h[IDENT_OSABI] != 0 && h[IDENT_OSABI] != 3) {
        aitk_str_append(why, "ELF file OS ABI invalid");
        return AITK_ELF_CANDIDATE_STOP;
    }
    /* EI_ABIVERSION: 0 for System V; for GNU objects below glibc's
     * LIBC_ABI_MAX, which is 4 on glibc 2.36 x86-64 (0..3 load). Other
     * glibc builds may differ: this judges by that one. */
    if ((h[IDENT_OSABI] == 0 && h[IDENT_ABIVERSION] != 0) ||
        (h[IDENT_OSABI] == 3 && h[IDENT_ABIVERSION] > 3)) {
        aitk_str_append(why, "ELF file ABI version invalid");
        return AITK_ELF_CANDIDATE_STOP;
    }
    for (size_t k = IDENT_PAD; k < 16; k++)
        if (h[k]) {
            aitk_str_append(why, "nonzero padding in e_ident");
            return AITK_ELF_CANDIDATE_STOP;
        }
    if (get32(h, 20, msb) != 1) {
        aitk_str_append(why, "ELF file version does not match current one");
        return AITK_ELF_CANDIDATE_STOP;
    }
    if (*machine != want_machine)
        return AITK_ELF_CANDIDATE_SKIP;
    const unsigned type = get16(h, 16, msb);
    if (type != TYPE_DYN && type != TYPE_EXEC) {
        aitk_str_append(why, "only ET_DYN and ET_EXEC can be loaded");
        return AITK_ELF_CANDIDATE_STOP;
    }
    /* open_verify lets an ET_EXEC through; mapping it as a dependency then
     * fails (_dl_map_object_from_fd). A PIE (ET_DYN with DF_1_PIE) fails
     * there too: that needs the dynamic section (tree.c checks it). */
    if (type == TYPE_EXEC) {
        aitk_str_append(why, "cannot dynamically load executable");
        return AITK_ELF_CANDIDATE_STOP;
    }
    /* e_phentsize: the size of Elf64_Phdr / Elf32_Phdr. */
    const unsigned phentsize = get16(h, want_class == AITK_ELFCLASS32 ? 42 : 54, msb);
    if (phentsize != (want_class == AITK_ELFCLASS32 ? 32u : 56u)) {
        aitk_str_append(why, "ELF file's phentsize not the expected size");
        return AITK_ELF_CANDIDATE_STOP;
    }
    return AITK_ELF_CANDIDATE_USE;
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
    free_list(info->needed, info->needed_count);
    for (size_t i = 0; i < info->verneed_count; i++) {
        aitk_free(info->verneed[i].file);
        aitk_free(info->verneed[i].version);
    }
    aitk_free(info->verneed);
    free_list(info->verdef, info->verdef_count);
    memset(info, 0, sizeof *info);
}
