/* Internal to the PE reader (pe.c, pe_exports.c): the whole file as one
 * bounded view. Every read goes through rd16/rd32/rd64 or rva_to_off, which
 * refuse anything past the end, so malformed input ends in a message, never
 * in a read outside the buffer. Field offsets are those of the Microsoft
 * PE/COFF specification ("PE Format", learn.microsoft.com). */
#ifndef AITK_LIBDEPS_PE_VIEW_H
#define AITK_LIBDEPS_PE_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/alloc.h"
#include "validate/libdeps/pe.h"
#include "validate/libdeps/pe_format.h"

/* A DLL name is a file name: NTFS holds at most 255 characters in one, so
 * a longer "DLL name" is garbage. */
#define PE_MAX_DLL_NAME 1024
/* A function name is not a file name and the loader sets it no limit: it
 * compares NUL-terminated strings. MSVC-mangled C++ names in torch 2.4's
 * torch_cpu.dll run to 3,199 bytes (torch 2.4.0 to 2.15.0), so the only bound
 * is one that keeps a hostile table from making every name a scan of the
 * whole file: 64 KiB, twenty times the longest name met in torch's DLLs. */
#define PE_MAX_SYMBOL_NAME 65536

typedef struct view {
    const char *name;
    const unsigned char *p;
    size_t len;
    uint32_t nsec;
    size_t sec_off;     /* file offset of the section table */
    uint32_t size_of_headers;
    uint64_t image_base;
    bool pe32plus;
    aitk_str *err;
} view;

static inline aitk_status bad(const view *v, const char *what)
{
    aitk_str_appendf(v->err, "%s: %s", v->name, what);
    return AITK_E_PARSE;
}

static inline bool rd16(const view *v, size_t off, uint32_t *out)
{
    if (off > v->len || v->len - off < 2)
        return false;
    *out = (uint32_t)v->p[off] | (uint32_t)v->p[off + 1] << 8;
    return true;
}

static inline bool rd32(const view *v, size_t off, uint32_t *out)
{
    if (off > v->len || v->len - off < 4)
        return false;
    *out = (uint32_t)v->p[off] | (uint32_t)v->p[off + 1] << 8 | (uint32_t)v->p[off + 2] << 16 |
           (uint32_t)v->p[off + 3] << 24;
    return true;
}

static inline bool rd64(const view *v, size_t off, uint64_t *out)
{
    uint32_t lo, hi;
    if (!rd32(v, off, &lo) || !rd32(v, off + 4, &hi))
        return false;
    *out = (uint64_t)hi << 32 | lo;
    return true;
}

/* File offset of `rva`, with at least `need` bytes readable there. */
static inline bool rva_to_off(const view *v, uint32_t rva, size_t need, size_t *out)
{
    if (rva < v->size_of_headers) {
        if (rva > v->len || v->len - rva < need)
            return false;
        *out = rva;
        return true;
    }
    for (uint32_t i = 0; i < v->nsec; i++) {
        size_t s = v->sec_off + (size_t)i * PE_SECTION_HEADER_SIZE;
        uint32_t vsize, va, rawsize, rawptr;
        if (!rd32(v, s + PE_SECTION_VIRTUAL_SIZE, &vsize) ||
            !rd32(v, s + PE_SECTION_VIRTUAL_ADDRESS, &va) ||
            !rd32(v, s + PE_SECTION_SIZE_OF_RAW_DATA, &rawsize) ||
            !rd32(v, s + PE_SECTION_POINTER_TO_RAW_DATA, &rawptr))
            return false;
        uint64_t span = vsize > rawsize ? vsize : rawsize;
        if (rva < va || (uint64_t)rva >= (uint64_t)va + span)
            continue;
        uint64_t delta = rva - va;
        if (delta + need > rawsize) /* in the section's zero-filled tail: not in the file */
            return false;
        uint64_t off = (uint64_t)rawptr + delta;
        if (off > v->len || v->len - off < need)
            return false;
        *out = (size_t)off;
        return true;
    }
    return false;
}

/* A NUL-terminated string of at most `max` bytes at `rva`, copied. */
static inline aitk_status str_at_rva(const view *v, uint32_t rva, size_t max,
                                      const char *what, char **out)
{
    size_t off;
    if (!rva_to_off(v, rva, 1, &off)) {
        aitk_str_appendf(v->err, "%s: %s at RVA 0x%x lies outside the file", v->name, what, rva);
        return AITK_E_PARSE;
    }
    size_t room = v->len - off < max ? v->len - off : max;
    const unsigned char *nul = memchr(v->p + off, 0, room);
    if (!nul || nul == v->p + off) {
        aitk_str_appendf(v->err, "%s: %s at RVA 0x%x is not a terminated name", v->name, what, rva);
        return AITK_E_PARSE;
    }
    *out = aitk_strndup((const char *)v->p + off, (size_t)(nul - (v->p + off)));
    return *out ? AITK_OK : AITK_E_NOMEM;
}

/* The export directory at `rva` (pe_exports.c): names, sorted, forwarders. */
aitk_status aitk_pe_read_exports(const view *v, uint32_t rva, uint32_t size, aitk_pe_info *out);

#endif
