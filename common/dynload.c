/* dlopen / LoadLibraryExW behind one interface; keeps the loader's own error text. */
#ifndef _WIN32
#define _GNU_SOURCE /* dlinfo, RTLD_DI_LINKMAP */
#endif
#include "common/dynload.h"

#include "common/alloc.h"
#include "common/wide.h"

#ifdef _WIN32
#include <string.h>
#include <windows.h>

struct aitk_dl {
    HMODULE module;
    struct aitk_dl *next_kept;
};

static void append_win_error(aitk_str *err, const char *what, DWORD code)
{
    wchar_t *wmsg = NULL;
    DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM |
                                 FORMAT_MESSAGE_IGNORE_INSERTS,
                             NULL, code, 0, (LPWSTR)&wmsg, 0, NULL);
    char msg[1024] = "";
    if (n && wmsg) {
        WideCharToMultiByte(CP_UTF8, 0, wmsg, -1, msg, sizeof msg, NULL, NULL);
        LocalFree(wmsg);
        /* FormatMessage ends with "\r\n"; the report wants one line. */
        for (char *p = msg; *p; p++)
            if (*p == '\r' || *p == '\n')
                *p = ' ';
    }
    aitk_str_appendf(err, "%s: [WinError %lu] %s", what, (unsigned long)code, msg);
}

aitk_status aitk_dl_open(const char *name, int flags, aitk_dl **out, aitk_str *err)
{
    (void)flags;
    *out = NULL;
    wchar_t *wname = aitk_wide(name);
    if (!wname)
        return AITK_E_NOMEM;
    /* A path gets the flags torch uses so dependencies resolve beside it. */
    int is_path = strchr(name, '\\') || strchr(name, '/');
    DWORD lflags = is_path ? 0x00001100 : 0;
    HMODULE m = LoadLibraryExW(wname, NULL, lflags);
    DWORD code = GetLastError();
    aitk_free(wname);
    if (!m) {
        if (err)
            append_win_error(err, name, code);
        return AITK_E_DLOPEN;
    }
    aitk_dl *dl = aitk_malloc(sizeof *dl);
    if (!dl) {
        FreeLibrary(m);
        return AITK_E_NOMEM;
    }
    dl->module = m;
    dl->next_kept = NULL;
    *out = dl;
    return AITK_OK;
}

aitk_status aitk_dl_sym(aitk_dl *dl, const char *symbol, void **out, aitk_str *err)
{
    FARPROC p = GetProcAddress(dl->module, symbol);
    if (!p) {
        if (err)
            append_win_error(err, symbol, GetLastError());
        *out = NULL;
        return AITK_E_DLSYM;
    }
    *out = (void *)p;
    return AITK_OK;
}

aitk_status aitk_dl_path(aitk_dl *dl, aitk_str *out)
{
    wchar_t wpath[MAX_PATH * 4];
    DWORD n = GetModuleFileNameW(dl->module, wpath, (DWORD)(sizeof wpath / sizeof *wpath));
    if (!n)
        return AITK_E_NOTFOUND;
    char path[MAX_PATH * 8];
    WideCharToMultiByte(CP_UTF8, 0, wpath, (int)n + 1, path, sizeof path, NULL, NULL);
    return aitk_str_append(out, path);
}

void aitk_dl_close(aitk_dl *dl)
{
    if (!dl)
        return;
    FreeLibrary(dl->module);
    aitk_free(dl);
}

#else /* POSIX */
#include <dlfcn.h>
#include <link.h>

struct aitk_dl {
    void *handle;
    struct aitk_dl *next_kept;
};

aitk_status aitk_dl_open(const char *name, int flags, aitk_dl **out, aitk_str *err)
{
    *out = NULL;
    int mode = RTLD_LOCAL | ((flags & AITK_DL_NOW) ? RTLD_NOW : RTLD_LAZY);
    dlerror();
    void *h = dlopen(name, mode);
    if (!h) {
        const char *msg = dlerror();
        if (err)
            aitk_str_append(err, msg ? msg : "dlopen failed without a message");
        return AITK_E_DLOPEN;
    }
    aitk_dl *dl = aitk_malloc(sizeof *dl);
    if (!dl) {
        dlclose(h);
        return AITK_E_NOMEM;
    }
    dl->handle = h;
    dl->next_kept = NULL;
    *out = dl;
    return AITK_OK;
}

aitk_status aitk_dl_sym(aitk_dl *dl, const char *symbol, void **out, aitk_str *err)
{
    dlerror();
    void *p = dlsym(dl->handle, symbol);
    const char *msg = dlerror();
    if (msg || !p) {
        if (err)
            aitk_str_append(err, msg ? msg : "symbol resolved to NULL");
        *out = NULL;
        return AITK_E_DLSYM;
    }
    *out = p;
    return AITK_OK;
}

aitk_status aitk_dl_path(aitk_dl *dl, aitk_str *out)
{
    struct link_map *lm = NULL;
    if (dlinfo(dl->handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
        return AITK_E_NOTFOUND;
    return aitk_str_append(out, lm->l_name);
}

void aitk_dl_close(aitk_dl *dl)
{
    if (!dl)
        return;
    dlclose(dl->handle);
    aitk_free(dl);
}
#endif

aitk_status aitk_dl_open_first(const char *const *names, int flags, aitk_dl **out,
                               const char **which, aitk_str *err)
{
    aitk_status last = AITK_E_NOTFOUND;
    *out = NULL;
    for (const char *const *n = names; *n; n++) {
        if (err && err->len)
            aitk_str_append(err, "; ");
        last = aitk_dl_open(*n, flags, out, err);
        if (last == AITK_OK) {
            if (which)
                *which = *n;
            return AITK_OK;
        }
        if (last == AITK_E_NOMEM)
            return last;
    }
    return last;
}

static aitk_dl *kept_head; /* libraries kept loaded until exit (aitk_dl_keep) */

void aitk_dl_keep(aitk_dl *dl)
{
    if (!dl)
        return;
    dl->next_kept = kept_head;
    kept_head = dl;
}
