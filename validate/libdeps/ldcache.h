/* /etc/ld.so.cache, parsed directly (no ldconfig subprocess).
 *
 * Two layouts exist: the old "ld.so-1.7.0" table (string offsets relative to
 * the end of its entries) and the new "glibc-ld.so.cache1.1" table (offsets
 * relative to its own header), sometimes both in one file, the new one
 * following the old at an 8-byte boundary. glibc >= 2.32 writes only the new
 * one. Layouts from glibc's sysdeps/generic/dl-cache.h. The cache is
 * untrusted input like any other file: every offset is checked and every
 * string must end inside the file. */
#ifndef AITK_LIBDEPS_LDCACHE_H
#define AITK_LIBDEPS_LDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/str.h"

/* Entry flags: the type in the low byte, the architecture in the next. */
#define AITK_LDCACHE_FLAG_ELF_LIBC6 0x0003u
#define AITK_LDCACHE_FLAG_X8664_LIB64 0x0300u
#define AITK_LDCACHE_FLAG_AARCH64_LIB64 0x0a00u

typedef struct aitk_ldcache_entry {
    const char *soname; /* points into the cache's copy of the file */
    const char *path;
    uint32_t flags;
    uint64_t hwcap;     /* non-zero: a glibc-hwcaps or legacy hwcap subfolder entry */
} aitk_ldcache_entry;

typedef struct aitk_ldcache {
    char *data;
    size_t len;
    aitk_ldcache_entry *entries; /* in file order (ldconfig sorts by priority) */
    size_t count;
    int format;                  /* 1 old only, 2 new only, 3 both (new entries used) */
} aitk_ldcache;

/* Parses a copy of `data`; AITK_E_PARSE with "name: reason" when malformed. */
aitk_status aitk_ldcache_parse(const char *name, const void *data, size_t len,
                               aitk_ldcache *out, aitk_str *err);
/* Reads and parses `path` (normally "/etc/ld.so.cache"). */
aitk_status aitk_ldcache_load(const char *path, aitk_ldcache *out, aitk_str *err);
/* The path ld.so would take for `soname` with exactly these `flags`,
 * preferring entries without hwcap; NULL when none. */
const char *aitk_ldcache_lookup(const aitk_ldcache *c, const char *soname, uint32_t flags);
void aitk_ldcache_free(aitk_ldcache *c);

#endif
