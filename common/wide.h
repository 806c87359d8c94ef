/* UTF-8 to UTF-16 for the Windows API. The house keeps paths and text in
 * UTF-8; the W functions (CreateFileW, LoadLibraryExW, CreateProcessW,
 * RegOpenKeyExW, MoveFileExW) take UTF-16, so a non-ASCII user name in a
 * path survives, which the ANSI code page would mangle. Windows only. */
#ifndef AITK_COMMON_WIDE_H
#define AITK_COMMON_WIDE_H

#ifdef _WIN32
#include <wchar.h>

/* `len` bytes of UTF-8 (-1: up to and including the NUL) as a new UTF-16
 * string (free with aitk_free); NULL when out of memory or not convertible. */
wchar_t *aitk_wide_n(const char *utf8, int len);

/* A NUL-terminated UTF-8 string as a new UTF-16 one; as aitk_wide_n. */
wchar_t *aitk_wide(const char *utf8);
#endif

#endif
