/* PE (Windows DLL/EXE) reader: our own code, bounds-checked on every read.
 *
 * Runs on every platform so a Windows torch install can be diagnosed from
 * Linux. Reads the machine, characteristics, the import and delay-import DLL
 * names, the export names (for missing-symbol checks) and the file version
 * from the version resource when there is one. Nothing from the file is
 * trusted: every RVA is translated through the section table and checked
 * against the file size before a byte is read. */
#ifndef AITK_LIBDEPS_PE_H
#define AITK_LIBDEPS_PE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/str.h"

#define AITK_PE_MACHINE_I386 0x014cu
#define AITK_PE_MACHINE_AMD64 0x8664u
#define AITK_PE_MACHINE_ARM64 0xaa64u

typedef struct aitk_pe_import {
    char *dll;   /* as written in the file ("KERNEL32.dll") */
    bool delay;  /* from the delay-load import table */
    char **symbols;      /* functions imported by name (with AITK_PE_READ_SYMBOLS) */
    size_t symbol_count;
    uint16_t *ordinals;  /* functions imported by ordinal (with AITK_PE_READ_SYMBOLS) */
    size_t ordinal_count;
} aitk_pe_import;

/* A forwarded export: `name` is another DLL's function ("cmiss.realb" or
 * "cmiss.#5"); the loader loads that DLL when it binds the import. */
typedef struct aitk_pe_forward {
    char *name, *target;
} aitk_pe_forward;

typedef struct aitk_pe_info {
    unsigned machine;
    unsigned characteristics;
    bool pe32plus;               /* 64-bit optional header */
    aitk_pe_import *imports;     /* normal imports first, then delay-load ones */
    size_t import_count;
    char **exports;              /* exported names, sorted (strcmp) */
    size_t export_count;
    /* Ordinals run from ordinal_base to ordinal_base + function_count - 1;
     * an import by ordinal outside that range fails to bind. */
    uint32_t ordinal_base, function_count;
    aitk_pe_forward *forwards;   /* exported names that forward, sorted by name */
    size_t forward_count;
    char *file_version;          /* "a.b.c.d" from VS_FIXEDFILEINFO, or NULL */
    /* A cut-off copy: its section table places raw data up to
     * `described_size` bytes, the file holds `file_size`. Only the headers
     * above are read then; Windows refuses the file. */
    bool truncated;
    uint64_t file_size, described_size;
} aitk_pe_info;

/* What to read beyond the header and imports. Export tables of torch DLLs
 * hold ~10^5 names, so the tree walk does not ask for them. */
#define AITK_PE_READ_EXPORTS 1u
#define AITK_PE_READ_SYMBOLS 2u /* the function names each import wants */

/* AITK_E_PARSE with "name: reason" for anything malformed; a file cut short
 * after its section table is AITK_OK with `truncated` set. */
aitk_status aitk_pe_read_mem(const char *name, const unsigned char *data, size_t len,
                             unsigned flags, aitk_pe_info *out, aitk_str *err);
/* Maps the file (reads it where mapping is unavailable). AITK_E_IO when it
 * cannot be opened. */
aitk_status aitk_pe_read_file(const char *path, unsigned flags, aitk_pe_info *out,
                              aitk_str *err);
/* The same over a file already open for reading (the root the tree walk
 * sniffed: one open per root); `name` is used in messages; fd stays open. */
aitk_status aitk_pe_read_fd(int fd, const char *name, unsigned flags, aitk_pe_info *out,
                            aitk_str *err);
/* Cheap: just the machine field of the COFF header. */
aitk_status aitk_pe_peek(const char *path, unsigned *machine, aitk_str *err);
void aitk_pe_info_free(aitk_pe_info *info);

/* Lookups in a file read with AITK_PE_READ_EXPORTS: whether it exports
 * `name` (forwarded names count), whether ordinal `o` is in its export
 * table, whether it exports `fn` given either way ("realfn" or "#7", as a
 * forwarder names its target), and the forwarder of `name`, or NULL. */
bool aitk_pe_exports_name(const aitk_pe_info *pe, const char *name);
bool aitk_pe_exports_ordinal(const aitk_pe_info *pe, uint32_t o);
bool aitk_pe_exports_function(const aitk_pe_info *pe, const char *fn);
const aitk_pe_forward *aitk_pe_find_forward(const aitk_pe_info *pe, const char *name);

/* "x86-64", "i386", "ARM64" or "machine 0x...". */
void aitk_pe_machine_name(unsigned machine, aitk_str *out);

#endif
