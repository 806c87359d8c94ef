/* Registry, version resources and folders for the Windows checks
 * (win_sys.h). Every string crosses into the program as UTF-8, so a user
 * folder such as C:\Users\张伟 reads the same in the report as on screen. */
#include "validate/probes/win_sys.h"

#include "common/alloc.h"

/* The view is named explicitly, so a 32-bit build would still read the
 * 64-bit registry when asked for it. */
static DWORD value_view(aitk_win_reg_view view)
{
    return view == AITK_WIN_REG_32 ? RRF_SUBKEY_WOW6432KEY : RRF_SUBKEY_WOW6464KEY;
}

bool aitk_win_reg_dword(aitk_win_reg_view view, const wchar_t *key, const wchar_t *value,
                        DWORD *out)
{
    DWORD bytes = sizeof *out;
    return RegGetValueW(HKEY_LOCAL_MACHINE, key, value, RRF_RT_REG_DWORD | value_view(view), NULL,
                        out, &bytes) == ERROR_SUCCESS;
}

bool aitk_win_reg_string(aitk_win_reg_view view, const wchar_t *key, const wchar_t *value,
                         aitk_str *out)
{
    wchar_t w[512];
    DWORD bytes = sizeof w;
    if (RegGetValueW(HKEY_LOCAL_MACHINE, key, value, RRF_RT_REG_SZ | value_view(view), NULL, w,
                     &bytes) != ERROR_SUCCESS)
        return false;
    return aitk_win_utf8(w, out) == AITK_OK;
}

bool aitk_win_reg_key_exists(aitk_win_reg_view view, const wchar_t *key)
{
    HKEY h;
    REGSAM sam = KEY_READ | (view == AITK_WIN_REG_32 ? KEY_WOW64_32KEY : KEY_WOW64_64KEY);
    if (RegOpenKeyExW(HKEY_LOCAL_MACHINE, key, 0, sam, &h) != ERROR_SUCCESS)
        return false;
    RegCloseKey(h);
    return true;
}

bool aitk_win_file_version(const wchar_t *path, unsigned version[4])
{
    DWORD ignored = 0, size = GetFileVersionInfoSizeW(path, &ignored);
    if (size == 0)
        return false;
    void *data = aitk_malloc(size);
    VS_FIXEDFILEINFO *info = NULL;
    UINT len = 0;
    bool ok = data && GetFileVersionInfoW(path, 0, size, data) &&
              VerQueryValueW(data, L"\\", (void **)&info, &len) && info &&
              len >= sizeof *info && info->dwSignature == 0xFEEF04BDu;
    if (ok) {
        version[0] = HIWORD(info->dwFileVersionMS);
        version[1] = LOWORD(info->dwFileVersionMS);
        version[2] = HIWORD(info->dwFileVersionLS);
        version[3] = LOWORD(info->dwFileVersionLS);
    }
    aitk_free(data);
    return ok;
}

aitk_status aitk_win_utf8(const wchar_t *w, aitk_str *out)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    if (n <= 0)
        return AITK_E_INVAL;
    char *s = aitk_malloc((size_t)n);
    if (!s)
        return AITK_E_NOMEM;
    WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
    aitk_status st = aitk_str_append(out, s);
    aitk_free(s);
    return st;
}

bool aitk_win_system32(wchar_t *out, size_t size)
{
    UINT n = GetSystemDirectoryW(out, (UINT)size);
    return n > 0 && n < size;
}

bool aitk_win_env(const wchar_t *name, aitk_str *out)
{
    DWORD n = GetEnvironmentVariableW(name, NULL, 0);
    if (n == 0)
        return false;
    wchar_t *w = aitk_malloc((size_t)n * sizeof *w);
    bool ok = w && GetEnvironmentVariableW(name, w, n) < n && aitk_win_utf8(w, out) == AITK_OK;
    aitk_free(w);
    return ok;
}
