/* PE parsing over a byte buffer; see pe.h: the headers, the import and
 * delay-import tables, the version resource and the reading of the file.
 * Every read is bounded (pe_view.h); the export table is pe_exports.c. */
#include "validate/libdeps/pe.h"
#include "validate/libdeps/pe_view.h"

/* The largest file read whole (a PE image is at most 4 GiB). */
#define PE_FILE_MAX (4ull << 30)

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef _WIN32
#include <sys/mman.h>
#endif

#include "common/alloc.h"
#include "common/fileio.h"

#define MAX_DESCRIPTORS 65536 /* real DLLs import from < 100 DLLs */

static aitk_status add_import(aitk_pe_info *out, char *dll, bool delay)
{
    aitk_pe_import *g = aitk_realloc(out->imports, (out->import_count + 1) * sizeof *g);
    if (!g) {
        aitk_free(dll);
        return AITK_E_NOMEM;
    }
    out->imports = g;
    g[out->import_count++] = (aitk_pe_import){.dll = dll, .delay = delay};
    return AITK_OK;
}

/* The import lookup table at `rva`: one entry per function, zero-ended;
 * the top bit marks an import by ordinal, else the entry is the RVA of a
 * 2-byte hint followed by the name. */
static aitk_status read_symbols(const view *v, uint32_t rva, bool pe32plus, aitk_pe_import *imp)
{
    size_t esize = pe32plus ? 8 : 4;
    for (size_t i = 0; i < MAX_DESCRIPTORS * 16; i++) {
        size_t off;
        uint64_t e = 0;
        uint32_t e32 = 0;
        uint32_t at = rva + (uint32_t)(i * esize);
        if (at < rva || !rva_to_off(v, at, esize, &off)) {
            aitk_str_appendf(v->err,
                             "%s: import lookup table of %s at RVA 0x%x lies outside the file",
                             v->name, imp->dll, at);
            return AITK_E_PARSE;
        }
        if (pe32plus)
            rd64(v, off, &e);
        else if (rd32(v, off, &e32))
            e = e32;
        if (e == 0)
            return AITK_OK;
        if (e & (pe32plus ? PE_ILT_ORDINAL_FLAG_PE32PLUS : PE_ILT_ORDINAL_FLAG_PE32)) {
            uint16_t *g = aitk_realloc(imp->ordinals, (imp->ordinal_count + 1) * sizeof *g);
            if (!g)
                return AITK_E_NOMEM;
            imp->ordinals = g;
            g[imp->ordinal_count++] = (uint16_t)(e & PE_ILT_ORDINAL_MASK);
            continue;
        }
        char *name = NULL;
        aitk_status st = str_at_rva(v, (uint32_t)(e & PE_ILT_HINT_NAME_RVA_MASK) + PE_HINT_SIZE,
                                    PE_MAX_SYMBOL_NAME,
                                    "imported function name",
                                    &name);
        if (st)
            return st;
        char **g = aitk_realloc(imp->symbols, (imp->symbol_count + 1) * sizeof *g);
        if (!g) {
            aitk_free(name);
            return AITK_E_NOMEM;
        }
        imp->symbols = g;
        g[imp->symbol_count++] = name;
    }
    return AITK_OK;
}

static aitk_status read_imports(const view *v, uint32_t rva, uint32_t size, bool delay,
                                unsigned flags, aitk_pe_info *out)
{
    if (rva == 0 || size == 0)
        return AITK_OK;
    size_t desc = delay ? PE_DELAY_DESCRIPTOR_SIZE : PE_IMPORT_DESCRIPTOR_SIZE;
    /* The loader walks imports to the all-zero descriptor whatever the
     * directory size says (GNU ld writes odd sizes); delay descriptors are
     * also bounded by the size, as GNU ld leaves no terminator after them. */
    size_t limit = delay ? size / desc : MAX_DESCRIPTORS;
    if (limit > MAX_DESCRIPTORS)
        limit = MAX_DESCRIPTORS;
    for (size_t i = 0; i < limit; i++) {
        size_t off;
        uint32_t drva = rva + (uint32_t)(i * desc);
        if (drva < rva || !rva_to_off(v, drva, desc, &off)) {
            aitk_str_appendf(v->err,
                             "%s: %simport descriptor %zu at RVA 0x%x lies outside the file",
                             v->name, delay ? "delay-" : "", i, drva);
            return AITK_E_PARSE;
        }
        uint32_t attrs = 0, name_rva = 0, ilt = 0;
        if (delay) {
            rd32(v, off + PE_DELAY_ATTRIBUTES, &attrs);
            rd32(v, off + PE_DELAY_NAME, &name_rva);
            rd32(v, off + PE_DELAY_IMPORT_NAME_TABLE, &ilt);
        } else {
            rd32(v, off + PE_IMPORT_NAME_RVA, &name_rva);
            rd32(v, off + PE_IMPORT_LOOKUP_TABLE_RVA, &ilt);
            if (ilt == 0) /* no separate lookup table: the IAT holds it on disk */
                rd32(v, off + PE_IMPORT_ADDRESS_TABLE_RVA, &ilt);
        }
        if (name_rva == 0) /* the all-zero terminator */
            return AITK_OK;
        /* Old (VC6) delay descriptors hold virtual addresses, not RVAs. */
        if (delay && !(attrs & PE_DELAY_ATTR_RVA)) {
            uint64_t va = name_rva, iva = ilt;
            if (va < v->image_base || va - v->image_base > UINT32_MAX ||
                (iva && (iva < v->image_base || iva - v->image_base > UINT32_MAX)))
                return bad(v, "delay-import address outside the image");
            name_rva = (uint32_t)(va - v->image_base);
            ilt = iva ? (uint32_t)(iva - v->image_base) : 0;
        }
        char *dll = NULL;
        aitk_status st =
            str_at_rva(v, name_rva, PE_MAX_DLL_NAME,
                       delay ? "delay-import DLL name" : "import DLL name", &dll);
        if (!st)
            st = add_import(out, dll, delay);
        if (!st && (flags & AITK_PE_READ_SYMBOLS) && ilt)
            st = read_symbols(v, ilt, v->pe32plus, &out->imports[out->import_count - 1]);
        if (st)
            return st;
    }
    if (delay)
        return AITK_OK;
    return bad(v, "import table has no terminator");
}

/* One level of the resource tree: the entry with `id`, or the first entry
 * when id is 0. Returns its OffsetToData field. */
static bool res_entry(const view *v, size_t base, size_t dir_off, uint32_t id, uint32_t *data)
{
    uint32_t named, ids;
    if (!rd16(v, base + dir_off + PE_RES_NUMBER_OF_NAME_ENTRIES, &named) ||
        !rd16(v, base + dir_off + PE_RES_NUMBER_OF_ID_ENTRIES, &ids))
        return false;
    for (uint32_t i = 0; i < named + ids; i++) {
        uint32_t name, to;
        size_t e = base + dir_off + PE_RES_DIRECTORY_SIZE + (size_t)i * PE_RES_ENTRY_SIZE;
        if (!rd32(v, e + PE_RES_ENTRY_ID, &name) || !rd32(v, e + PE_RES_ENTRY_OFFSET, &to))
            return false;
        if (id == 0 || name == id) {
            *data = to;
            return true;
        }
    }
    return false;
}

/* Version resource (RT_VERSION) -> VS_FIXEDFILEINFO. Absent or odd
 * resources are not errors: the version is an extra, not a requirement. */
static aitk_status read_version(const view *v, uint32_t rva, uint32_t size, aitk_pe_info *out)
{
    size_t base;
    if (rva == 0 || size < PE_RES_DIRECTORY_SIZE ||
        !rva_to_off(v, rva, PE_RES_DIRECTORY_SIZE, &base))
        return AITK_OK;
    /* Three levels: type (RT_VERSION), then the first name, then the first
     * language. */
    uint32_t to = 0, id = PE_RT_VERSION;
    size_t dir = 0;
    for (int level = 0; level < 3; level++) {
        if (!res_entry(v, base, dir, id, &to))
            return AITK_OK;
        id = 0;
        if (level < 2) {
            if (!(to & PE_RES_SUBDIRECTORY))
                return AITK_OK;
            dir = to & PE_RES_OFFSET_MASK;
        } else if (to & PE_RES_SUBDIRECTORY) {
            return AITK_OK;
        }
    }
    uint32_t data_rva, data_size;
    size_t doff;
    if (!rd32(v, base + to + PE_RES_DATA_RVA, &data_rva) ||
        !rd32(v, base + to + PE_RES_DATA_SIZE, &data_size) ||
        data_size > v->len || !rva_to_off(v, data_rva, data_size, &doff))
        return AITK_OK;
    /* VS_VERSIONINFO starts with a header and a padded UTF-16 key: the
     * fixed info is found by its signature, on a 4-byte boundary. */
    for (size_t i = 0; i + PE_VS_FFI_MIN_SIZE <= data_size; i += 4) {
        uint32_t sig, ms, ls;
        if (!rd32(v, doff + i, &sig) || sig != PE_VS_FFI_SIGNATURE)
            continue;
        if (!rd32(v, doff + i + PE_VS_FFI_FILE_VERSION_MS, &ms) ||
            !rd32(v, doff + i + PE_VS_FFI_FILE_VERSION_LS, &ls))
            return AITK_OK; /* a truncated version block: no version, not an error */
        aitk_str s = AITK_STR_INIT;
        aitk_str_appendf(&s, "%u.%u.%u.%u", ms >> 16, ms & 0xffffu, ls >> 16, ls & 0xffffu);
        if (aitk_str_status(&s))
            return AITK_E_NOMEM;
        out->file_version = aitk_str_steal(&s);
        return AITK_OK;
    }
    return AITK_OK;
}

/* Where the headers and the last section's raw data end. A half-copied DLL
 * still has every header, and its import table may even lie before the cut,
 * so without this it would pass as whole. */
static uint64_t image_end(const view *v)
{
    uint64_t end = v->size_of_headers;
    for (uint32_t i = 0; i < v->nsec; i++) {
        uint32_t rawsize = 0, rawptr = 0;
        size_t s = v->sec_off + (size_t)i * PE_SECTION_HEADER_SIZE;
        if (rd32(v, s + PE_SECTION_SIZE_OF_RAW_DATA, &rawsize) &&
            rd32(v, s + PE_SECTION_POINTER_TO_RAW_DATA, &rawptr) && rawsize &&
            (uint64_t)rawptr + rawsize > end)
            end = (uint64_t)rawptr + rawsize;
    }
    return end;
}

/* The file ends inside its headers, at or after the start of the one that
 * is cut: a cut-off copy (Windows refuses it), not a damaged header. */
static aitk_status cut(const view *v, aitk_pe_info *out, uint64_t described)
{
    out->truncated = true;
    out->file_size = v->len;
    out->described_size = described;
    return AITK_OK;
}

/* What Windows accepts as e_lfanew (RtlImageNtHeaderEx: below 256 MiB). */
#define MAX_LFANEW 0x10000000u
/* Linkers put the PE header within the first few hundred bytes (after the
 * DOS stub and MSVC's Rich header): one placed past the end of a file and
 * beyond 64 KiB is a damaged e_lfanew, not a cut-off copy. */
#define PLAUSIBLE_LFANEW 0x10000u
/* "The Windows loader limits the number of sections to 96" (PE Format). */
#define MAX_SECTIONS 96u

/* A header that the file ends inside is a cut (cut()); one that points past
 * the end of the file, or holds a value no linker writes, is damaged
 * (AITK_E_PARSE, "corrupt ..."), as the ELF reader tells them apart. */
static aitk_status parse(view *v, unsigned flags, aitk_pe_info *out)
{
    uint32_t mz, lfanew, sig, magic, nsec = 0, optsize = 0, ndirs;
    if (v->len == 0)
        return bad(v, "empty file");
    if (!rd16(v, 0, &mz) || mz != PE_DOS_MAGIC)
        return bad(v, "not a PE file (no MZ header)");
    if (!rd32(v, PE_DOS_E_LFANEW, &lfanew))
        return cut(v, out, PE_DOS_HEADER_SIZE);
    if (lfanew >= MAX_LFANEW || (lfanew > v->len && lfanew >= PLAUSIBLE_LFANEW)) {
        aitk_str_appendf(v->err, "%s: corrupt DOS header: e_lfanew 0x%x points %s", v->name,
                         lfanew, lfanew >= MAX_LFANEW ? "beyond what Windows accepts (256 MiB)"
                                                      : "past the end of the file, further than "
                                                        "any linker places the PE header");
        return AITK_E_PARSE;
    }
    size_t coff = (size_t)lfanew + PE_SIGNATURE_SIZE, opt = coff + PE_COFF_HEADER_SIZE;
    if (!rd32(v, lfanew, &sig) || !rd16(v, coff + PE_COFF_CHARACTERISTICS, &out->characteristics))
        return cut(v, out, opt);
    if (sig != PE_SIGNATURE) {
        aitk_str_appendf(v->err, "%s: not a PE file (no PE signature where the DOS header points, "
                                 "e_lfanew 0x%x): a DOS program, or a damaged DLL", v->name, lfanew);
        return AITK_E_PARSE;
    }
    rd16(v, coff + PE_COFF_MACHINE, &out->machine);
    rd16(v, coff + PE_COFF_NUMBER_OF_SECTIONS, &nsec);
    rd16(v, coff + PE_COFF_SIZE_OF_OPTIONAL_HEADER, &optsize);
    if (!rd16(v, opt + PE_OPT_MAGIC, &magic))
        return cut(v, out, opt + 2);
    if (magic != PE_OPT_MAGIC_PE32 && magic != PE_OPT_MAGIC_PE32PLUS) {
        aitk_str_appendf(v->err, "%s: corrupt optional header: magic 0x%x is neither PE32 (0x10b) "
                                 "nor PE32+ (0x20b)", v->name, magic);
        return AITK_E_PARSE;
    }
    out->pe32plus = v->pe32plus = magic == PE_OPT_MAGIC_PE32PLUS;
    const uint32_t opt_min =
        out->pe32plus ? PE_OPT_DATA_DIRECTORIES_PE32PLUS : PE_OPT_DATA_DIRECTORIES_PE32;
    if (optsize < opt_min) {
        aitk_str_appendf(v->err, "%s: corrupt COFF header: SizeOfOptionalHeader %u is smaller than "
                                 "a %s optional header (%u bytes)", v->name, optsize,
                         out->pe32plus ? "PE32+" : "PE32", opt_min);
        return AITK_E_PARSE;
    }
    if (nsec > MAX_SECTIONS) {
        aitk_str_appendf(v->err, "%s: corrupt COFF header: NumberOfSections %u (Windows loads at "
                                 "most %u)", v->name, nsec, MAX_SECTIONS);
        return AITK_E_PARSE;
    }
    size_t dirs = opt + opt_min;
    uint32_t base32 = 0;
    bool ok = rd32(v, opt + PE_OPT_SIZE_OF_HEADERS, &v->size_of_headers) &&
              rd32(v, opt + (out->pe32plus ? PE_OPT_NUMBER_OF_RVA_AND_SIZES_PE32PLUS
                                           : PE_OPT_NUMBER_OF_RVA_AND_SIZES_PE32),
                   &ndirs) &&
              (out->pe32plus ? rd64(v, opt + PE_OPT_IMAGE_BASE_PE32PLUS, &v->image_base)
                             : rd32(v, opt + PE_OPT_IMAGE_BASE_PE32, &base32));
    if (!ok)
        return cut(v, out, dirs);
    if (!out->pe32plus)
        v->image_base = base32;
    v->nsec = nsec;
    v->sec_off = opt + optsize;
    if (v->sec_off > v->len) {
        aitk_str_appendf(v->err, "%s: corrupt COFF header: the section table (after a "
                                 "SizeOfOptionalHeader of %u) starts past the end of the file",
                         v->name, optsize);
        return AITK_E_PARSE;
    }
    if ((v->len - v->sec_off) / PE_SECTION_HEADER_SIZE < nsec)
        return cut(v, out, v->sec_off + (uint64_t)nsec * PE_SECTION_HEADER_SIZE);
    uint64_t end = image_end(v);
    if (end > v->len)
        return cut(v, out, end);
    /* Directories beyond NumberOfRvaAndSizes or the optional header are absent. */
    size_t have = (optsize - (dirs - opt)) / PE_DATA_DIRECTORY_SIZE;
    if (ndirs > have)
        ndirs = (uint32_t)have;
    uint32_t drva[PE_DIR_COUNT_READ] = {0}, dsize[PE_DIR_COUNT_READ] = {0};
    for (uint32_t i = 0; i < ndirs && i < PE_DIR_COUNT_READ; i++) {
        size_t d = dirs + (size_t)i * PE_DATA_DIRECTORY_SIZE;
        if (!rd32(v, d, &drva[i]) || !rd32(v, d + 4, &dsize[i]))
            return bad(v, "data directories run past the end of the file");
    }
    enum { IMP = PE_DIR_IMPORT_TABLE, DELAY = PE_DIR_DELAY_IMPORT_DESCRIPTOR };
    aitk_status st = read_imports(v, drva[IMP], dsize[IMP], false, flags, out);
    if (!st)
        st = read_imports(v, drva[DELAY], dsize[DELAY], true, flags, out);
    if (!st && (flags & AITK_PE_READ_EXPORTS))
        st = aitk_pe_read_exports(v, drva[PE_DIR_EXPORT_TABLE], dsize[PE_DIR_EXPORT_TABLE], out);
    if (!st)
        st = read_version(v, drva[PE_DIR_RESOURCE_TABLE], dsize[PE_DIR_RESOURCE_TABLE], out);
    return st;
}

aitk_status aitk_pe_read_mem(const char *name, const unsigned char *data, size_t len,
                             unsigned flags, aitk_pe_info *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    view v = {.name = name, .p = data, .len = len, .err = err};
    aitk_status st = parse(&v, flags, out);
    if (st)
        aitk_pe_info_free(out);
    return st;
}

aitk_status aitk_pe_read_fd(int fd, const char *name, unsigned flags, aitk_pe_info *out,
                            aitk_str *err)
{
    memset(out, 0, sizeof *out);
#ifdef _WIN32
    /* msvcrt's fstat keeps st_size in a 32-bit long: a file of 2 GiB or
     * more would read as negative; _fstat64 has the whole size. */
    struct _stat64 sb;
    if (_fstat64(fd, &sb) != 0) {
#else
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
#endif
        aitk_str_appendf(err, "%s: %s", name, strerror(errno));
        return AITK_E_IO;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size == 0) {
        aitk_str_appendf(err, "%s: %s", name,
                         S_ISREG(sb.st_mode) ? "empty file" : "not a regular file");
        return AITK_E_PARSE;
    }
    /* A PE image's SizeOfImage is 32 bits: nothing larger is a library. */
    if (sb.st_size < 0 || (unsigned long long)sb.st_size > PE_FILE_MAX) {
        aitk_str_appendf(err, "%s: %lld bytes, more than a PE image can hold (4 GiB)", name,
                         (long long)sb.st_size);
        return AITK_E_RANGE;
    }
#ifndef _WIN32
    void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        aitk_str_appendf(err, "%s: cannot map: %s", name, strerror(errno));
        return AITK_E_IO;
    }
    aitk_status st = aitk_pe_read_mem(name, map, (size_t)sb.st_size, flags, out, err);
    munmap(map, (size_t)sb.st_size);
    return st;
#else
    /* No mapping here: the whole file, from its start (a caller may have
     * read its first bytes through fd already). */
    size_t len = (size_t)sb.st_size, got = 0;
    unsigned char *data = aitk_malloc(len);
    if (!data)
        return AITK_E_NOMEM;
    const char *why = lseek(fd, 0, SEEK_SET) == 0 ? NULL : strerror(errno);
    while (!why && got < len) {
        unsigned want = len - got > (1u << 30) ? (1u << 30) : (unsigned)(len - got);
        int n = read(fd, data + got, want);
        if (n < 0)
            why = strerror(errno);
        else if (n == 0)
            why = "shorter than its size (changed while being read?)";
        else
            got += (size_t)n;
    }
    aitk_status st = AITK_E_IO;
    if (why)
        aitk_str_appendf(err, "%s: %s", name, why);
    else
        st = aitk_pe_read_mem(name, data, len, flags, out, err);
    aitk_free(data);
    return st;
#endif
}

aitk_status aitk_pe_read_file(const char *path, unsigned flags, aitk_pe_info *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    int fd = aitk_open_read(path);
    if (fd < 0) {
        aitk_str_appendf(err, "%s: %s", path, strerror(errno));
        return AITK_E_IO;
    }
    aitk_status st = aitk_pe_read_fd(fd, path, flags, out, err);
    close(fd);
    return st;
}

aitk_status aitk_pe_peek(const char *path, unsigned *machine, aitk_str *err)
{
    int fd = aitk_open_read(path);
    if (fd < 0) {
        aitk_str_appendf(err, "%s: %s", path, strerror(errno));
        return AITK_E_IO;
    }
    unsigned char h[PE_DOS_HEADER_SIZE], c[PE_SIGNATURE_SIZE + 2]; /* + Machine */
    view v = {.name = path, .p = h, .len = 0, .err = err};
    ssize_t n = read(fd, h, sizeof h);
    uint32_t lfanew = 0, sig = 0, mz = 0;
    v.len = n > 0 ? (size_t)n : 0;
    bool ok = rd16(&v, 0, &mz) && mz == PE_DOS_MAGIC && rd32(&v, PE_DOS_E_LFANEW, &lfanew) &&
              lseek(fd, (off_t)lfanew, SEEK_SET) == (off_t)lfanew &&
              read(fd, c, sizeof c) == (ssize_t)sizeof c;
    close(fd);
    view cv = {.name = path, .p = c, .len = sizeof c, .err = err};
    if (!ok || !rd32(&cv, 0, &sig) || sig != PE_SIGNATURE ||
        !rd16(&cv, PE_SIGNATURE_SIZE + PE_COFF_MACHINE, machine))
        return bad(&v, "not a PE file");
    return AITK_OK;
}

void aitk_pe_machine_name(unsigned machine, aitk_str *out)
{
    if (machine == AITK_PE_MACHINE_AMD64)
        aitk_str_append(out, "x86-64");
    else if (machine == AITK_PE_MACHINE_I386)
        aitk_str_append(out, "i386");
    else if (machine == AITK_PE_MACHINE_ARM64)
        aitk_str_append(out, "ARM64");
    else
        aitk_str_appendf(out, "machine 0x%x", machine);
}

void aitk_pe_info_free(aitk_pe_info *info)
{
    if (!info)
        return;
    for (size_t i = 0; i < info->import_count; i++) {
        aitk_free(info->imports[i].dll);
        for (size_t k = 0; k < info->imports[i].symbol_count; k++)
            aitk_free(info->imports[i].symbols[k]);
        aitk_free(info->imports[i].symbols);
        aitk_free(info->imports[i].ordinals);
    }
    for (size_t i = 0; i < info->forward_count; i++) {
        aitk_free(info->forwards[i].name);
        aitk_free(info->forwards[i].target);
    }
    aitk_free(info->forwards);
    aitk_free(info->imports);
    for (size_t i = 0; i < info->export_count; i++)
        aitk_free(info->exports[i]);
    aitk_free(info->exports);
    aitk_free(info->file_version);
    memset(info, 0, sizeof *info);
}
