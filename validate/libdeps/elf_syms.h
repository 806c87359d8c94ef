/* Internal to the ELF reader (the Linux build, through libelf): the
 * dynamic symbol table, read for the versioned-symbol check (elf.h:
 * aitk_elf_symref, aitk_elf_defs), and the walk over version definitions
 * that elf.c and elf_syms.c both make. */
#ifndef AITK_LIBDEPS_ELF_SYMS_H
#define AITK_LIBDEPS_ELF_SYMS_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>

#include "validate/libdeps/elf.h"

/* Called for each version definition: its index (vd_ndx, the number the
 * symbols defined at it carry in .gnu.version), whether it is the base
 * entry (the file's own name) and its name. A status other than AITK_OK
 * ends the walk with it. */
typedef aitk_status (*aitk_elf_verdef_fn)(void *ctx, unsigned ndx, bool base, const char *version);

/* Walks SHT_GNU_verdef section `scn` (header `sh`) of `e`; `name` is the
 * file in messages. AITK_E_PARSE when the chain leaves its section. */
aitk_status aitk_elf_walk_verdef(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
                                 aitk_elf_verdef_fn fn, void *ctx, aitk_str *err);

/* Fills out->refs from .dynsym and .gnu.version, once out->verneed is
 * read. A symbol table libelf cannot read leaves refs empty rather than
 * failing the file: ld.so never reads section headers, so what they
 * describe cannot make a library unloadable, and a check that cannot be
 * made is not a finding. Only AITK_E_NOMEM is returned. */
aitk_status aitk_elf_read_refs(Elf *e, Elf_Scn *dynsym, Elf_Scn *versym, aitk_elf_info *out);

#endif
