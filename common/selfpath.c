/* aitk_self_path (selfpath.h): /proc/self/exe on Linux, the module file
 * name on Windows. Both can be longer than any fixed buffer, so the buffer
 * grows until the answer fits. */
#include "common/selfpath.h"

#include <errno.h>
#include <string.h>

#include "common/alloc.h"

#ifdef _WIN32
#include <windows.h>

aitk_status aitk_self_path(aitk_str *out, aitk_str *err)
{
    for (DWORD cap = 512; cap <= 32768 * 2; cap *= 2) {
        wchar_t *w = aitk_malloc(cap * sizeof *w);
        if (!w)
            return AITK_E_NOMEM;
        DWORD n = GetModuleFileNameW(NULL, w, cap);
        if (n == 0) {
            aitk_str_appendf(err, "GetModuleFileNameW failed: [WinError %lu]",
                             (unsigned long)GetLastError());
            aitk_free(w);
            return AITK_E_IO;
        }
        if (n < cap) { /* n == cap: cut short, try a bigger buffer */
            int len = WideCharToMultiByte(CP_UTF8, 0, w, (int)n, NULL, 0, NULL, NULL);
            char *u = len > 0 ? aitk_malloc((size_t)len) : NULL;
            if (u)
                WideCharToMultiByte(CP_UTF8, 0, w, (int)n, u, len, NULL, NULL);
            aitk_free(w);
            if (!u)
                return AITK_E_NOMEM;
            aitk_status st = aitk_str_appendn(out, u, (size_t)len);
            aitk_free(u);
            return st;
        }
        aitk_free(w);
    }
    aitk_str_append(err, "the program's path is longer than Windows allows");
    return AITK_E_IO;
}
#elif defined(__linux__)
#include <unistd.h>

aitk_status aitk_self_path(aitk_str *out, aitk_str *err)
{
    for (size_t cap = 256; cap <= 65536; cap *= 2) {
        char *buf = aitk_malloc(cap);
        if (!buf)
            return AITK_E_NOMEM;
        ssize_t n = readlink("/proc/self/exe", buf, cap);
        if (n < 0) {
            aitk_str_appendf(err, "/proc/self/exe: %s", strerror(errno));
            aitk_free(buf);
            return AITK_E_IO;
        }
        aitk_status st = AITK_E_RANGE;
        if ((size_t)n < cap) /* readlink does not say when it cut the link short */
            st = aitk_str_appendn(out, buf, (size_t)n);
        aitk_free(buf);
        if (st != AITK_E_RANGE)
            return st;
    }
    aitk_str_append(err, "/proc/self/exe: the program's path is longer than 64 KiB");
    return AITK_E_IO;
}
#else
aitk_status aitk_self_path(aitk_str *out, aitk_str *err)
{
    (void)out;
    aitk_str_append(err, "finding the program's own path is not implemented on this platform");
    return AITK_E_UNSUPPORTED;
}
#endif
