/* The parts of elf.h's API that need no libelf, so every build has them (the
 * Windows build has no libelf): the 20-byte identity check of a search
 * candidate, machine names, and freeing a result. The few ELF constants are
 * spelled out here because mingw-w64 has no <elf.h>; their values are fixed
 * by the System V ABI (e_ident layout; machine numbers are in elf.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "validate/libdeps/elf.h"

enum {
    IDENT_CLASS = 4, /* e_ident[EI_CLASS] */
    IDENT_DATA = 5,  /* e_ident[EI_DATA] */
    DATA_MSB = 2,    /* ELFDATA2MSB */
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
