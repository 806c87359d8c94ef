/* UTF-8 to UTF-16, see wide.h. */
#include "common/wide.h"

#include <windows.h>

#include "common/alloc.h"

wchar_t *aitk_wide_n(const char *utf8, int len)
{
    int n = MultiByteToWideChar(CP_UTF8, 0, utf8, len, NULL, 0);
    wchar_t *w = n > 0 ? aitk_malloc((size_t)n * sizeof *w) : NULL;
    if (w && MultiByteToWideChar(CP_UTF8, 0, utf8, len, w, n) != n) {
        aitk_free(w);
        return NULL;
    }
    return w;
}

wchar_t *aitk_wide(const char *utf8)
{
    return aitk_wide_n(utf8, -1);
}
