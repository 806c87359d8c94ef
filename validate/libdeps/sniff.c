/* What a root file is, from its first bytes, read through the one open the
 * tree walk then reads the whole object from (sniff.h); and the one rule
 * for a file that is not a shared library (tree.h), which the deps command
 * and the deps.* report checks both get through aitk_deps_analyze.
 *
 * The rule: a GNU ld script (libc.so) or an ar archive is never a shared
 * library by design, whatever its name: skipped. Anything else that is not
 * ELF or PE (empty, text, a script, a Git LFS pointer) is a broken library
 * when its name says it is one, because the loader will be asked for it
 * under that name and refuse it; under another name (README.txt met by a
 * glob) it is skipped. */
#include "validate/libdeps/sniff.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _WIN32
#include <io.h>
#include <windows.h>
#endif

/* Enough for the longest signature below (a Git LFS version line). */
#define HEAD_BYTES 64
/* git-lfs docs/spec.md: pointer files are less than 1024 bytes. */
#define LFS_POINTER_MAX 1024

/* The first line of a Git LFS pointer (git-lfs docs/spec.md: "version
 * https://git-lfs.github.com/spec/v1", then "oid sha256:..." and "size N"):
 * the text git checks out in place of the real file when Git LFS is not
 * installed or `git lfs pull` never ran. git-lfs still reads the
 * pre-release spelling (hawser). Compared up to "spec/" so a later spec
 * version is still recognised. */
static bool lfs_pointer(const unsigned char *h, size_t n, long long size)
{
    static const char *const versions[] = {"version https://git-lfs.github.com/spec/",
                                           "version https://hawser.github.com/spec/"};
    if (size >= LFS_POINTER_MAX)
        return false;
    for (size_t i = 0; i < sizeof versions / sizeof *versions; i++) {
        size_t k = strlen(versions[i]);
        if (n >= k && memcmp(h, versions[i], k) == 0)
            return true;
    }
    return false;
}

/* What a readable file that is neither ELF nor PE is, from its first bytes:
 * a glob over a library folder meets these (libc.so is a GNU ld script). */
static aitk_dep_other not_a_library(const unsigned char *h, size_t n, long long size)
{
    if (n == 0)
        return AITK_DEP_OTHER_EMPTY;
    if (n >= 8 && memcmp(h, "!<arch>\n", 8) == 0)
        return AITK_DEP_OTHER_ARCHIVE;
    static const char *const ld_words[] = {"/* GNU ld script", "GROUP", "INPUT", "OUTPUT_FORMAT",
                                           "SEARCH_DIR", "INCLUDE"};
    for (size_t i = 0; i < sizeof ld_words / sizeof *ld_words; i++) {
        size_t k = strlen(ld_words[i]);
        if (n >= k && memcmp(h, ld_words[i], k) == 0)
            return AITK_DEP_OTHER_LD_SCRIPT;
    }
    if (n >= 2 && h[0] == '#' && h[1] == '!')
        return AITK_DEP_OTHER_SCRIPT;
    if (lfs_pointer(h, n, size))
        return AITK_DEP_OTHER_LFS_POINTER;
    return AITK_DEP_OTHER_UNKNOWN;
}

const char *aitk_dep_other_text(aitk_dep_other k)
{
    switch (k) {
    case AITK_DEP_OTHER_NONE: return "a shared library";
    case AITK_DEP_OTHER_EMPTY: return "an empty file";
    case AITK_DEP_OTHER_ARCHIVE: return "an ar archive (a static library)";
    case AITK_DEP_OTHER_LD_SCRIPT: return "a GNU ld script";
    case AITK_DEP_OTHER_SCRIPT: return "a script";
    case AITK_DEP_OTHER_LFS_POINTER:
        return "a Git LFS pointer: a small text file standing in for the real one, which was "
               "never fetched";
    case AITK_DEP_OTHER_UNKNOWN: break;
    }
    return "neither an ELF nor a PE (Windows) file";
}

const char *aitk_dep_other_name(aitk_dep_other k)
{
    switch (k) {
    case AITK_DEP_OTHER_NONE: return "library";
    case AITK_DEP_OTHER_EMPTY: return "empty";
    case AITK_DEP_OTHER_ARCHIVE: return "ar_archive";
    case AITK_DEP_OTHER_LD_SCRIPT: return "ld_script";
    case AITK_DEP_OTHER_SCRIPT: return "script";
    case AITK_DEP_OTHER_LFS_POINTER: return "git_lfs_pointer";
    case AITK_DEP_OTHER_UNKNOWN: break;
    }
    return "unknown";
}

bool aitk_deps_library_name(const char *path)
{
    const char *name = aitk_path_base_name(path);
    size_t len = strlen(name);
    if (len <= 3)
        return false;
    /* Windows names ignore case; Linux ones do not, and say ".so". */
    static const char *const win_ends[] = {".dll", ".pyd"};
    for (size_t i = 0; i < sizeof win_ends / sizeof *win_ends; i++)
        if (strcasecmp(name + len - 4, win_ends[i]) == 0)
            return true;
    if (strcmp(name + len - 3, ".so") == 0)
        return true;
    /* libcudnn.so.9, libstdc++.so.6.0.33: a version of digits and dots
     * (not libstdc++.so.6.0.33-gdb.py, gdb's helper script). */
    for (const char *so = strstr(name + 1, ".so."); so; so = strstr(so + 1, ".so.")) {
        const char *v = so + 4;
        if (*v < '0' || *v > '9')
            continue;
        while ((*v >= '0' && *v <= '9') || *v == '.')
            v++;
        if (!*v)
            return true;
    }
    return false;
}

bool aitk_deps_not_library_is_problem(aitk_dep_other k, const char *path)
{
    if (k == AITK_DEP_OTHER_NONE || k == AITK_DEP_OTHER_LD_SCRIPT || k == AITK_DEP_OTHER_ARCHIVE)
        return false;
    return aitk_deps_library_name(path);
}

/* Which file fd is, as aitk_file_identity says for a path: the same values,
 * so the session cache matches a root with a dependency met by name. */
static bool fd_identity(int fd, const struct stat *sb, aitk_file_id *id)
{
#ifdef _WIN32
    (void)sb;
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    BY_HANDLE_FILE_INFORMATION info;
    if (h == INVALID_HANDLE_VALUE || !GetFileInformationByHandle(h, &info))
        return false;
    id->volume = info.dwVolumeSerialNumber;
    id->index = (unsigned long long)info.nFileIndexHigh << 32 | info.nFileIndexLow;
#else
    (void)fd;
    id->volume = (unsigned long long)sb->st_dev;
    id->index = (unsigned long long)sb->st_ino;
#endif
    return true;
}

static aitk_status io_error(aitk_str *err, const char *path, int e, int fd)
{
    aitk_str_appendf(err, "%s: %s", path, strerror(e));
    if (fd >= 0)
        close(fd);
    return AITK_E_IO;
}

aitk_status aitk_deps_sniff_open(const char *path, const char *shown, aitk_dep_sniffed *s,
                                 aitk_str *err)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    /* stat before open: Windows cannot open() a folder at all, and a FIFO
     * would block the open. */
    struct stat sb;
    if (stat(path, &sb) != 0)
        return io_error(err, shown, errno, -1);
    if (S_ISDIR(sb.st_mode)) {
        aitk_str_appendf(err, "%s: is a folder; give the library files (for example %s/*.so*)",
                         shown, shown);
        return AITK_E_INVAL;
    }
    if (!S_ISREG(sb.st_mode)) {
        aitk_str_appendf(err, "%s: not a regular file", shown);
        return AITK_E_INVAL;
    }
    int fd = aitk_open_read(path);
    if (fd < 0)
        return io_error(err, shown, errno, -1);
    /* From here on, everything is about the file fd names: one replaced
     * (renamed over) since the stat above is judged whole, as it is now. */
    if (fstat(fd, &sb) != 0)
        return io_error(err, shown, errno, fd);
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        aitk_str_appendf(err, "%s: not a regular file", shown);
        return AITK_E_INVAL;
    }
    unsigned char h[HEAD_BYTES];
    size_t n = 0;
    while (n < sizeof h) {
        ssize_t got = read(fd, h + n, sizeof h - n);
        if (got < 0)
            return io_error(err, shown, errno, fd);
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (n >= 4 && memcmp(h, "\177ELF", 4) == 0)
        s->format = AITK_DEP_ELF;
    else if (n >= 2 && h[0] == 'M' && h[1] == 'Z')
        s->format = AITK_DEP_PE;
    else
        s->other = not_a_library(h, n, (long long)sb.st_size);
    s->have_id = fd_identity(fd, &sb, &s->id);
    s->fd = fd;
    return AITK_OK;
}

aitk_status aitk_deps_describe_bad_candidate(const char *file, aitk_dep_format want,
                                             aitk_dep_other *other, aitk_str *why)
{
    *other = AITK_DEP_OTHER_NONE;
    struct stat sb;
    if (stat(file, &sb) == 0 && S_ISDIR(sb.st_mode))
        return aitk_str_append(why, "a folder named like the library");
    aitk_dep_sniffed f;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_deps_sniff_open(file, file, &f, &err);
    if (st == AITK_OK) {
        close(f.fd);
        *other = f.other;
        if (f.other != AITK_DEP_OTHER_NONE)
            st = aitk_str_append(why, aitk_dep_other_text(f.other));
        else if (f.format != want)
            st = aitk_str_append(why, f.format == AITK_DEP_PE ? "a PE (Windows) file"
                                                              : "an ELF (Linux) file");
        else
            st = aitk_str_append(why, f.format == AITK_DEP_PE
                                          ? "a PE file whose headers cannot be read"
                                          : "an ELF file whose header cannot be read");
    } else {
        /* Unreadable since the loader's look: say so, in the reader's words. */
        st = aitk_str_append(why, aitk_str_cstr(&err));
    }
    aitk_str_free(&err);
    return st;
}
