/* What the Windows checks read from Windows, in UTF-8: registry values
 * (of the 64-bit view, or of the 32-bit one where a 32-bit installer wrote
 * them), the version resource of a DLL, and the System32 folder. Windows
 * only. */
#ifndef AITK_VALIDATE_PROBES_WIN_SYS_H
#define AITK_VALIDATE_PROBES_WIN_SYS_H

#include <stdbool.h>
#include <windows.h>

#include "common/status.h"
#include "common/str.h"

/* Which registry a key is read from. A 64-bit program sees the 64-bit
 * view; what a 32-bit installer writes under SOFTWARE lands in the 32-bit
 * view (SOFTWARE\Wow6432Node in regedit). */
typedef enum aitk_win_reg_view {
    AITK_WIN_REG_64,
    AITK_WIN_REG_32,
} aitk_win_reg_view;

/* A REG_DWORD under HKEY_LOCAL_MACHINE\key: true when it exists and is a DWORD. */
bool aitk_win_reg_dword(aitk_win_reg_view view, const wchar_t *key, const wchar_t *value,
                        DWORD *out);

/* A REG_SZ under HKEY_LOCAL_MACHINE\key, appended to `out` in UTF-8. */
bool aitk_win_reg_string(aitk_win_reg_view view, const wchar_t *key, const wchar_t *value,
                         aitk_str *out);

/* True when HKEY_LOCAL_MACHINE\key exists. */
bool aitk_win_reg_key_exists(aitk_win_reg_view view, const wchar_t *key);

/* The file version of a DLL's version resource (VS_FIXEDFILEINFO), as
 * four numbers: 14, 40, 33810, 0. False when it has none. */
bool aitk_win_file_version(const wchar_t *path, unsigned version[4]);

/* UTF-16 to UTF-8, appended to `out`. */
aitk_status aitk_win_utf8(const wchar_t *w, aitk_str *out);

/* GetSystemDirectoryW: the folder the loader searches for torch's imports
 * after the application's own folder. UTF-16, in `out` (MAX_PATH). */
bool aitk_win_system32(wchar_t *out, size_t size);

/* An environment variable read as UTF-16 and given in UTF-8 (the process's
 * own environment, whatever its code page). False when unset. */
bool aitk_win_env(const wchar_t *name, aitk_str *out);

#endif
