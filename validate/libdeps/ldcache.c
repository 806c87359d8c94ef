/* ld.so.cache parsing; see ldcache.h for the two layouts.
 *
 * Old layout: "ld.so-1.7.0" (11 bytes, padded to 12), uint32 nlibs, then
 * nlibs x {int32 flags, uint32 key, uint32 value}; strings follow.
 * New layout: "glibc-ld.so.cache" "1.1" (20 bytes), uint32 nlibs,
 * uint32 len_strings, uint8 flags, 3 pad, uint32 extension_offset,
 * 3 x uint32 unused, then nlibs x {int32 flags, uint32 key, uint32 value,
 * uint32 osversion, uint64 hwcap}. Host byte order in both. */
#include "validate/libdeps/ldcache.h"

#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"

#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define OLD_HDR 16u
#define OLD_ENTRY 12u
#define NEW_HDR 48u
#define NEW_ENTRY 24u
#define MAX_CACHE_BYTES (256u << 20)

static uint32_t u32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t u64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static aitk_status bad(aitk_str *err, const char *name, const char *what, size_t index)
{
    if (index == (size_t)-1)
        aitk_str_appendf(err, "%s: %s", name, what);
    else
        aitk_str_appendf(err, "%s: entry %zu: %s", name, index, what);
    return AITK_E_PARSE;
}

/* A string at `base + off` that ends (NUL) inside the file. */
static const char *string_at(const aitk_ldcache *c, size_t base, uint32_t off)
{
    if (base > c->len || off >= c->len - base)
        return NULL;
    const char *s = c->data + base + off;
    return memchr(s, 0, c->len - base - off) ? s : NULL;
}

static aitk_status parse_table(aitk_ldcache *c, const char *name, size_t hdr, bool is_new,
                               aitk_str *err)
{
    size_t hsize = is_new ? NEW_HDR : OLD_HDR, esize = is_new ? NEW_ENTRY : OLD_ENTRY;
    if (c->len - hdr < hsize)
        return bad(err, name, "truncated header", (size_t)-1);
    uint32_t n = u32(c->data + hdr + (is_new ? 20 : 12));
    if (n > (c->len - hdr - hsize) / esize)
        return bad(err, name, "entry count larger than the file could hold", (size_t)-1);
    /* New: offsets from the new header; old: from the end of the entries. */
    size_t base = is_new ? hdr : hdr + hsize + (size_t)n * esize;
    aitk_ldcache_entry *e = aitk_calloc(n ? n : 1, sizeof *e);
    if (!e)
        return AITK_E_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const char *p = c->data + hdr + hsize + (size_t)i * esize;
        e[i].flags = u32(p);
        e[i].soname = string_at(c, base, u32(p + 4));
        e[i].path = string_at(c, base, u32(p + 8));
        e[i].hwcap = is_new ? u64(p + 16) : 0;
        if (!e[i].soname || !e[i].path) {
            aitk_free(e);
            return bad(err, name, "string offset outside the file or unterminated", i);
        }
    }
    aitk_free(c->entries);
    c->entries = e;
    c->count = n;
    return AITK_OK;
}

aitk_status aitk_ldcache_parse(const char *name, const void *data, size_t len,
                               aitk_ldcache *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    out->data = aitk_malloc(len ? len : 1);
    if (!out->data)
        return AITK_E_NOMEM;
    if (len)
        memcpy(out->data, data, len);
    out->len = len;
    aitk_status st;
    if (len >= sizeof NEW_MAGIC - 1 && memcmp(out->data, NEW_MAGIC, sizeof NEW_MAGIC - 1) == 0) {
        out->format = 2;
        st = parse_table(out, name, 0, true, err);
    } else if (len >= sizeof OLD_MAGIC - 1 &&
               memcmp(out->data, OLD_MAGIC, sizeof OLD_MAGIC - 1) == 0) {
        out->format = 1;
        st = parse_table(out, name, 0, false, err);
        if (!st) {
            /* A new table may follow the old one's strings, 8-byte aligned;
             * ld.so prefers it. Find it after the old entries. */
            size_t after = OLD_HDR + out->count * OLD_ENTRY;
            for (size_t at = (after + 7) & ~(size_t)7; at + NEW_HDR <= len; at += 8) {
                if (memcmp(out->data + at, NEW_MAGIC, sizeof NEW_MAGIC - 1) == 0) {
                    out->format = 3;
                    st = parse_table(out, name, at, true, err);
                    break;
                }
            }
        }
    } else {
        st = bad(err, name, len ? "not an ld.so.cache file (unknown magic)" : "empty file",
                 (size_t)-1);
    }
    if (st)
        aitk_ldcache_free(out);
    return st;
}

aitk_status aitk_ldcache_load(const char *path, aitk_ldcache *out, aitk_str *err)
{
    char *data = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    aitk_status st = aitk_file_read(path, MAX_CACHE_BYTES, &data, &len, err);
    if (!st)
        st = aitk_ldcache_parse(path, data, len, out, err);
    aitk_free(data);
    return st;
}

const char *aitk_ldcache_lookup(const aitk_ldcache *c, const char *soname, uint32_t flags)
{
    const char *fallback = NULL;
    for (size_t i = 0; i < c->count; i++) {
        const aitk_ldcache_entry *e = &c->entries[i];
        if (e->flags != flags || strcmp(e->soname, soname) != 0)
            continue;
        if (e->hwcap == 0)
            return e->path;
        if (!fallback)
            fallback = e->path;
    }
    return fallback;
}

void aitk_ldcache_free(aitk_ldcache *c)
{
    if (!c)
        return;
    aitk_free(c->data);
    aitk_free(c->entries);
    memset(c, 0, sizeof *c);
}
