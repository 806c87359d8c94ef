/* Where Windows would find one imported DLL, for a tree examined from any OS
 * (torch/__init__.py of the torch 2.4.1 win_amd64 wheel, _load_dll_libraries).
 *
 * Safe mode, what torch uses first (LoadLibraryExW with
 * LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR): the
 * loaded DLL's folder, the application folder, the add_dll_directory
 * folders, System32; PATH is not searched. Legacy mode, torch's fallback
 * after error 126 (LoadLibraryW after prepending its folders to PATH): the
 * application folder, System32, the Windows folder, then PATH. Before any
 * search: API-set names are virtual and resolved inside Windows, and
 * KnownDLLs always come from System32. A DLL every Windows 10+ install
 * ships is never "missing" even when --windows-root lacks it. File names
 * compare case-insensitively, as on NTFS. A wrong-machine DLL is not
 * skipped: Windows stops with error 193 / 0xc000007b, so neither do we. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "validate/libdeps/resolve.h"
#include "validate/libdeps/sniff.h"

/* HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\KnownDLLs on
 * Windows 10/11 x64 (Microsoft docs "Dynamic-link library search order"). */
static const char *const known_dlls[] = {
    "advapi32.dll", "clbcatq.dll", "combase.dll", "comdlg32.dll", "coml2.dll", "difxapi.dll",
    "gdi32.dll", "gdiplus.dll", "imagehlp.dll", "imm32.dll", "kernel32.dll", "msctf.dll",
    "msvcrt.dll", "normaliz.dll", "nsi.dll", "ole32.dll", "oleaut32.dll", "psapi.dll",
    "rpcrt4.dll", "sechost.dll", "setupapi.dll", "shcore.dll", "shell32.dll", "shlwapi.dll",
    "user32.dll", "wldap32.dll", "wow64.dll", "wow64win.dll", "ws2_32.dll", NULL};

/* Part of every Windows 10+ System32 (the OS image, not a redistributable);
 * the VC++ runtime and OpenMP DLLs are deliberately absent from this list. */
static const char *const system_dlls[] = {
    "ntdll.dll", "kernelbase.dll", "ucrtbase.dll", "msvcp_win.dll", "bcrypt.dll",
    "bcryptprimitives.dll", "cfgmgr32.dll", "comctl32.dll", "crypt32.dll", "cryptbase.dll",
    "d3d11.dll", "d3d12.dll", "dbghelp.dll", "dnsapi.dll", "dwmapi.dll", "dxgi.dll",
    "iphlpapi.dll", "mpr.dll", "mswsock.dll", "ncrypt.dll", "netapi32.dll", "opengl32.dll",
    "powrprof.dll", "profapi.dll", "secur32.dll", "userenv.dll", "uxtheme.dll", "version.dll",
    "winhttp.dll", "wininet.dll", "winmm.dll", "wintrust.dll", "wtsapi32.dll", "dbgcore.dll",
    "cabinet.dll", "glu32.dll", "hid.dll", "ntmarta.dll", "oleacc.dll", "shfolder.dll",
    "sspicli.dll", "urlmon.dll", "winspool.drv", "wsock32.dll", NULL};

void aitk_deps_win_separators(char *path)
{
#ifdef _WIN32
    for (; path && *path; path++)
        if (*path == '/')
            *path = '\\';
#else
    (void)path;
#endif
}

static bool in_list(const char *const *list, const char *name)
{
    for (size_t i = 0; list[i]; i++)
        if (*list[i] && strcasecmp(list[i], name) == 0)
            return true;
    return false;
}

typedef struct entry {
    char *lower, *real;
} entry;

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->lower, ((const entry *)b)->lower);
}

static char *lower_dup(const char *s)
{
    char *c = aitk_strdup(s);
    for (char *p = c; p && *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return c;
}

static aitk_status list_dir(aitk_dir_listing *l)
{
    DIR *dir = opendir(l->dir);
    if (!dir)
        return AITK_OK; /* a missing folder is searched and holds nothing */
    entry *e = NULL;
    size_t n = 0, cap = 0;
    aitk_status st = AITK_OK;
    for (struct dirent *de; !st && (de = readdir(dir));) {
        if (de->d_name[0] == '.')
            continue;
        entry *g = aitk_grow(e, sizeof *g, n, &cap, 64);
        if (!g) {
            st = AITK_E_NOMEM;
            break;
        }
        e = g;
        e[n].lower = lower_dup(de->d_name);
        e[n].real = aitk_strdup(de->d_name);
        n++;
        if (!e[n - 1].lower || !e[n - 1].real)
            st = AITK_E_NOMEM;
    }
    closedir(dir);
    if (!st && n) {
        qsort(e, n, sizeof *e, entry_cmp);
        l->lower = aitk_malloc(n * sizeof *l->lower);
        l->real = aitk_malloc(n * sizeof *l->real);
        if (!l->lower || !l->real)
            st = AITK_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (!st) {
            l->lower[i] = e[i].lower;
            l->real[i] = e[i].real;
        } else {
            aitk_free(e[i].lower);
            aitk_free(e[i].real);
        }
    }
    if (!st)
        l->count = n;
    aitk_free(e);
    return st;
}

aitk_status aitk_deps_dir_find(aitk_deps *d, const char *dir, const char *name, const char **real)
{
    *real = NULL;
    aitk_dir_listing *l = NULL;
    for (size_t i = 0; i < d->dir_count && !l; i++)
        if (strcmp(d->dirs[i].dir, dir) == 0)
            l = &d->dirs[i];
    if (!l) {
        aitk_dir_listing *g = aitk_realloc(d->dirs, (d->dir_count + 1) * sizeof *g);
        if (!g)
            return AITK_E_NOMEM;
        d->dirs = g;
        l = &g[d->dir_count];
        memset(l, 0, sizeof *l);
        if (!(l->dir = aitk_strdup(dir)))
            return AITK_E_NOMEM;
        d->dir_count++;
        aitk_status st = list_dir(l);
        if (st)
            return st;
    }
    char *key = lower_dup(name);
    if (!key)
        return AITK_E_NOMEM;
    size_t lo = 0, hi = l->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->lower[mid], key);
        if (c == 0) {
            *real = l->real[mid];
            break;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    aitk_free(key);
    return AITK_OK;
}

/* root/Windows/System32 with each component matched case-insensitively. */
static aitk_status windows_dir(aitk_deps *d, bool sys32, aitk_str *out)
{
    const char *root = d->opts.windows_root, *win = NULL, *s32 = NULL;
    aitk_status st = aitk_deps_dir_find(d, root, "Windows", &win);
    aitk_str w = AITK_STR_INIT;
    /* One separator, in the root's own style: "C:\" + "Windows" on Windows. */
    size_t rl = strlen(root);
    bool back = rl && root[rl - 1] == '\\';
    const char *sep = rl && (root[rl - 1] == '/' || back) ? "" : "/";
    aitk_str_appendf(&w, "%s%s%s", root, sep, win ? win : "Windows");
    if (!st && sys32 && !aitk_str_status(&w))
        st = aitk_deps_dir_find(d, w.ptr, "System32", &s32);
    aitk_str_append(out, aitk_str_cstr(&w));
    if (sys32)
        aitk_str_appendf(out, "%s%s", back ? "\\" : "/", s32 ? s32 : "System32");
    aitk_str_free(&w);
    return st ? st : aitk_str_status(out);
}

typedef struct folder {
    char *dir;
    const char *rule;
} folder;

typedef struct folders {
    folder *items;
    size_t count;
    /* The application folder derived from torch's environment when
     * --app-dir is not given (resolve_interp.c), or why none was. */
    aitk_str app, app_why;
    const char *app_dir; /* --app-dir, app, or NULL */
} folders;

static aitk_status add_folder(folders *fs, const char *dir, const char *rule)
{
    char *copy = aitk_strdup(dir);
    if (!copy)
        return AITK_E_NOMEM;
    aitk_deps_win_separators(copy);
    for (size_t i = 0; i < fs->count; i++)
        if (strcmp(fs->items[i].dir, copy) == 0) {
            aitk_free(copy);
            return AITK_OK; /* searched once, at its first place */
        }
    folder *g = aitk_realloc(fs->items, (fs->count + 1) * sizeof *g);
    if (!g) {
        aitk_free(copy);
        return AITK_E_NOMEM;
    }
    fs->items = g;
    g[fs->count].dir = copy;
    g[fs->count++].rule = rule;
    return AITK_OK;
}

/* torch's dll_paths when none were given: torch\lib itself, and the
 * environment's Library\bin (conda) when it exists. */
static aitk_status torch_dirs(const char *root_dir, folders *fs)
{
    char *low = lower_dup(root_dir);
    if (!low)
        return AITK_E_NOMEM;
    /* Compared with '/' whichever separator the path was given with. */
    for (char *p = low; *p; p++)
        if (*p == '\\')
            *p = '/';
    size_t len = strlen(low);
    aitk_status st = AITK_OK;
    if (len >= 10 && strcmp(low + len - 10, "/torch/lib") == 0) {
        st = add_folder(fs, root_dir, "add_dll_directory (torch\\lib)");
        const char *sp = strstr(low, "/lib/site-packages/torch/lib");
        if (!st && sp) {
            aitk_str lib = AITK_STR_INIT;
            aitk_str_appendn(&lib, root_dir, (size_t)(sp - low));
            /* In the separator the path was given with. */
            aitk_str_append(&lib, strchr(root_dir, '\\') ? "\\Library\\bin" : "/Library/bin");
            struct stat sb;
            if (aitk_str_status(&lib))
                st = AITK_E_NOMEM;
            else if (stat(lib.ptr, &sb) == 0 && S_ISDIR(sb.st_mode))
                st = add_folder(fs, lib.ptr, "add_dll_directory (Library\\bin)");
            aitk_str_free(&lib);
        }
    }
    aitk_free(low);
    return st;
}

static aitk_status build_folders(aitk_deps *d, const aitk_dep_tree *t, folders *fs)
{
    const aitk_deps_opts *o = &d->opts;
    /* On Windows the root may be spelled C:\...\torch_cpu.dll: either
     * separator ends its folder. */
    const char *root = t->nodes[0].path, *slash = aitk_path_last_separator(root);
    aitk_str root_dir = AITK_STR_INIT, sys = AITK_STR_INIT, win = AITK_STR_INIT;
    aitk_str_appendn(&root_dir, root, slash ? (size_t)(slash - root) : 0);
    aitk_status st = aitk_str_status(&root_dir);
    const char *app_rule = "application folder";
    fs->app_dir = o->app_dir;
    if (!st && !o->app_dir) {
        st = aitk_deps_interpreter_dir(root_dir.ptr, &fs->app, &app_rule, &fs->app_why);
        fs->app_dir = fs->app.len ? fs->app.ptr : NULL;
    }
    if (!st && o->windows_root)
        st = windows_dir(d, true, &sys);
    if (!st && o->windows_root)
        st = windows_dir(d, false, &win);
    if (!st && o->win_mode == AITK_WIN_SAFE) {
        st = add_folder(fs, root_dir.ptr, "the DLL's folder");
        if (!st && fs->app_dir)
            st = add_folder(fs, fs->app_dir, app_rule);
        for (size_t i = 0; !st && i < o->dll_dirs.count; i++)
            st = add_folder(fs, o->dll_dirs.items[i], "add_dll_directory");
        if (!st && o->dll_dirs.count == 0)
            st = torch_dirs(root_dir.ptr, fs);
        if (!st && o->windows_root)
            st = add_folder(fs, sys.ptr, "System32");
    } else if (!st) {
        if (fs->app_dir)
            st = add_folder(fs, fs->app_dir, app_rule);
        if (!st && o->windows_root)
            st = add_folder(fs, sys.ptr, "System32");
        if (!st && o->windows_root)
            st = add_folder(fs, win.ptr, "Windows folder");
        /* torch's fallback prepends its dll_paths to PATH. */
        size_t before = fs->count;
        for (size_t i = 0; !st && i < o->dll_dirs.count; i++)
            st = add_folder(fs, o->dll_dirs.items[i], "PATH (torch's dll_paths)");
        if (!st && o->dll_dirs.count == 0)
            st = torch_dirs(root_dir.ptr, fs);
        for (size_t i = before; i < fs->count; i++)
            fs->items[i].rule = "PATH (torch's dll_paths)";
        for (size_t i = 0; !st && i < o->win_path.count; i++)
            st = add_folder(fs, o->win_path.items[i], "PATH");
    }
    aitk_str_free(&root_dir);
    aitk_str_free(&sys);
    aitk_str_free(&win);
    return st;
}

static aitk_status set_text(char **slot, const char *text)
{
    aitk_free(*slot);
    return (*slot = aitk_strdup(text)) ? AITK_OK : AITK_E_NOMEM;
}

/* One hit: the first becomes the node's file, later ones are duplicates. */
static aitk_status hit(aitk_deps *d, aitk_dep_tree *t, size_t i, const char *file, const char *rule)
{
    aitk_dep_node *n = &t->nodes[i];
    aitk_str err = AITK_STR_INIT, text = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    if (!n->path) {
        if ((st = set_text(&n->path, file)) || (st = set_text(&n->how, rule)))
            return st;
        unsigned machine = 0, want = d->objs[t->nodes[0].obj].pe.machine;
        n->state = AITK_DEP_FOUND;
        if (aitk_pe_peek(file, &machine, &err) != AITK_OK) {
            /* A Git LFS pointer fbgemm.dll: named for what it is, with the
             * not-a-library remedy, as the same file given as the root. */
            n->state = AITK_DEP_BAD_FILE;
            st = aitk_deps_describe_bad_candidate(file, AITK_DEP_PE, &n->not_library, &text);
            n->refused = n->not_library == AITK_DEP_OTHER_NONE;
            if (!st)
                st = aitk_str_append(&text, "; Windows refuses it (error 193, not a valid Win32 "
                                            "application) and searches no further");
            if (!st)
                st = set_text(&n->detail, text.ptr);
            aitk_str_clear(&text);
        } else if (machine != want) {
            n->state = AITK_DEP_WRONG_ARCH;
            aitk_pe_machine_name(machine, &text);
            st = set_text(&n->arch, aitk_str_cstr(&text));
            aitk_str_clear(&text);
            aitk_pe_machine_name(machine, &text);
            aitk_str_append(&text, " DLL, but the tree is ");
            aitk_pe_machine_name(want, &text);
            aitk_str_append(&text, ": Windows refuses it (error 193, 0xc000007b) and searches "
                                   "no further");
            if (!st)
                st = aitk_str_status(&text) ? AITK_E_NOMEM : set_text(&n->detail, text.ptr);
        }
    } else {
        aitk_file_id a, b;
        if (aitk_file_identity(file, &a) == 0 && aitk_file_identity(n->path, &b) == 0 &&
            a.volume == b.volume && a.index == b.index)
            return AITK_OK;
        aitk_pe_info pe;
        aitk_str_append(&text, file);
        if (aitk_pe_read_file(file, 0, &pe, &err) == AITK_OK) {
            aitk_str_appendf(&text, " (version %s)", pe.file_version ? pe.file_version : "unknown");
            aitk_pe_info_free(&pe);
        }
        st = aitk_str_status(&text) ? AITK_E_NOMEM : aitk_strlist_add(&n->duplicates, text.ptr);
    }
    aitk_str_free(&err);
    aitk_str_free(&text);
    return st;
}

aitk_status aitk_resolve_windows(aitk_deps *d, aitk_dep_tree *t, size_t i)
{
    aitk_dep_node *n = &t->nodes[i];
    const char *name = n->name;
    if (strncasecmp(name, "api-ms-win-", 11) == 0 || strncasecmp(name, "ext-ms-", 7) == 0) {
        n->state = AITK_DEP_SYSTEM;
        return set_text(&n->how, "API set (virtual, resolved inside Windows)");
    }
    folders fs = {0};
    aitk_status st = build_folders(d, t, &fs);
    bool known = in_list(known_dlls, name);
    for (size_t k = 0; !st && k < fs.count; k++) {
        const folder *f = &fs.items[k];
        n = &t->nodes[i];
        /* KnownDLLs come from System32 whatever the order says. */
        if (known && strcmp(f->rule, "System32") != 0)
            continue;
        /* After the first hit the loader stops; later folders are only
         * looked at for duplicate copies, not reported as searched. */
        if (!n->path) {
            aitk_str label = AITK_STR_INIT;
            aitk_str_appendf(&label, "%s (%s)", f->dir, f->rule);
            st = aitk_str_status(&label) ? AITK_E_NOMEM : aitk_strlist_add(&n->searched, label.ptr);
            aitk_str_free(&label);
            if (st)
                break;
        }
        const char *real = NULL;
        if ((st = aitk_deps_dir_find(d, f->dir, name, &real)) || !real)
            continue;
        aitk_str file = AITK_STR_INIT;
        /* In the separator the folder is spelled with (C:\Windows\System32). */
        aitk_str_appendf(&file, "%s%c%s", f->dir, strchr(f->dir, '\\') ? '\\' : '/', real);
        const char *rule = known ? "KnownDLLs (System32)" : f->rule;
        st = aitk_str_status(&file) ? AITK_E_NOMEM : hit(d, t, i, file.ptr, rule);
        aitk_str_free(&file);
    }
    n = &t->nodes[i];
    if (!st && !n->path && (known || in_list(system_dlls, name))) {
        n->state = AITK_DEP_SYSTEM;
        st = set_text(&n->how, known ? "KnownDLLs (part of Windows)"
                                     : "part of every Windows 10+ install (built-in list)");
    } else if (!st && !n->path) {
        st = aitk_resolve_windows_absent(d, t, i, fs.app_dir, aitk_str_cstr(&fs.app_why));
    }
    for (size_t k = 0; k < fs.count; k++)
        aitk_free(fs.items[k].dir);
    aitk_free(fs.items);
    aitk_str_free(&fs.app);
    aitk_str_free(&fs.app_why);
    return st;
}

#ifdef _WIN32
#include <windows.h>

aitk_status aitk_deps_native_windows_root(aitk_str *out)
{
    wchar_t w[MAX_PATH];
    char dir[4 * MAX_PATH];
    UINT n = GetSystemWindowsDirectoryW(w, MAX_PATH);
    if (n == 0 || n >= MAX_PATH ||
        WideCharToMultiByte(CP_UTF8, 0, w, -1, dir, sizeof dir, NULL, NULL) <= 0)
        return AITK_E_NOTFOUND;
    /* "C:\Windows" -> "C:\": the resolver looks for Windows\System32 below. */
    char *sep = strrchr(dir, '\\');
    if (!sep)
        return AITK_E_NOTFOUND;
    sep[1] = '\0';
    return aitk_str_append(out, dir);
}
#else
aitk_status aitk_deps_native_windows_root(aitk_str *out)
{
    (void)out;
    return AITK_E_UNSUPPORTED;
}
#endif
