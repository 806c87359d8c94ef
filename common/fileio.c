/* File helpers: capped reads, atomic writes, mkdir -p. POSIX; Win32 through mingw's CRT. */
#include "common/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/wide.h"

#ifdef _WIN32
#include <direct.h>
#include <io.h>
#include <windows.h>
#define aitk_mkdir(p) _mkdir(p)
#define fsync(fd) _commit(fd)
#else
#define aitk_mkdir(p) mkdir((p), 0777)
#endif

/* fopen(path, "rb"), except that a named pipe nobody writes to does not
 * block the open: a stray FIFO among nightly reports, or given as a file,
 * would otherwise hang the run for ever. The open does not wait; reading
 * then blocks as usual, so a pipe with a writer (`--config <(cat f.yaml)`) is
 * read whole, and one without reads as empty (POSIX: end of file when no
 * process has it open for writing). */
static FILE *open_for_reading(const char *path)
{
#ifdef _WIN32
    return fopen(path, "rb");
#else
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    int flags = fcntl(fd, F_GETFL);
    FILE *f = NULL;
    if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0)
        f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
#endif
}

aitk_status aitk_file_read(const char *path, size_t max_bytes, char **data, size_t *len,
                           aitk_str *err)
{
    *data = NULL;
    if (len)
        *len = 0;
    FILE *f = open_for_reading(path);
    if (!f) {
        int e = errno;
        if (err)
            aitk_str_appendf(err, "%s: %s", path, strerror(e));
        return e == ENOENT ? AITK_E_NOTFOUND : AITK_E_IO;
    }
    /* A folder opens on POSIX and then fails to read: say what it is. */
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        if (err)
            aitk_str_appendf(err, "%s: is a folder, not a file", path);
        return AITK_E_IO;
    }
    aitk_str buf = AITK_STR_INIT;
    char chunk[65536];
    size_t n;
    aitk_status st = AITK_OK;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (buf.len + n > max_bytes) {
            st = AITK_E_RANGE;
            if (err)
                aitk_str_appendf(err, "%s: larger than the %zu-byte limit", path, max_bytes);
            break;
        }
        if ((st = aitk_str_appendn(&buf, chunk, n)))
            break;
    }
    if (!st && ferror(f)) {
        st = AITK_E_IO;
        if (err)
            aitk_str_appendf(err, "%s: read error: %s", path, strerror(errno));
    }
    fclose(f);
    if (st) {
        aitk_str_free(&buf);
        return st;
    }
    size_t got = buf.len;
    *data = aitk_str_steal(&buf);
    if (!*data)
        return AITK_E_NOMEM;
    if (len)
        *len = got;
    return AITK_OK;
}

/* Writes all of data to fd, retrying short writes and EINTR. */
static aitk_status write_all(int fd, const char *path, const void *data, size_t len,
                             aitk_str *err)
{
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (err)
                aitk_str_appendf(err, "%s: write failed: %s", path, strerror(errno));
            return AITK_E_IO;
        }
        p += w;
        left -= (size_t)w;
    }
    return AITK_OK;
}

/* A temporary file beside `path`, then rename over it: readers see the old
 * file or the new one, never half of one. */
/* Writes data in full to a new temporary file beside `path`; on success
 * *tmp_out is its name (free with aitk_free). */
static aitk_status write_temporary(const char *path, const void *data, size_t len,
                                   char **tmp_out, aitk_str *err)
{
    *tmp_out = NULL;
    aitk_str tmp = AITK_STR_INIT;
    if (aitk_str_appendf(&tmp, "%s.tmp.XXXXXX", path))
        return AITK_E_NOMEM;
    char *tpath = tmp.ptr;
#ifdef _WIN32
    int fd = _mktemp_s(tpath, tmp.len + 1) == 0
                 ? _open(tpath, _O_CREAT | _O_EXCL | _O_WRONLY | _O_BINARY, 0666)
                 : -1;
#else
    int fd = mkstemp(tpath);
#endif
    if (fd < 0) {
        if (err)
            aitk_str_appendf(err, "%s: cannot create a file there: %s", path, strerror(errno));
        aitk_str_free(&tmp);
        return AITK_E_IO;
    }
    aitk_status st = write_all(fd, path, data, len, err);
    if (!st && fsync(fd) != 0) {
        st = AITK_E_IO;
        if (err)
            aitk_str_appendf(err, "%s: fsync failed: %s", path, strerror(errno));
    }
#ifndef _WIN32
    /* mkstemp creates 0600; a report is an ordinary file. */
    if (!st) {
        mode_t um = umask(0);
        umask(um);
        fchmod(fd, 0666 & ~um);
    }
#endif
    if (close(fd) != 0 && !st) {
        st = AITK_E_IO;
        if (err)
            aitk_str_appendf(err, "%s: close failed: %s", path, strerror(errno));
    }
    if (st) {
        remove(tpath);
        aitk_str_free(&tmp);
        return st;
    }
    *tmp_out = aitk_str_steal(&tmp);
    return *tmp_out ? AITK_OK : AITK_E_NOMEM;
}

aitk_status aitk_dir_sync_of(const char *path, aitk_str *err)
{
#ifdef _WIN32
    /* The CRT cannot open a folder, and NTFS journals its metadata itself:
     * there is no folder to flush (see fileio.h). */
    (void)path;
    (void)err;
    return AITK_OK;
#else
    const char *slash = strrchr(path, '/');
    aitk_str dir = AITK_STR_INIT;
    if (!slash)
        aitk_str_append(&dir, ".");
    else
        aitk_str_appendn(&dir, path, slash == path ? 1 : (size_t)(slash - path));
    if (aitk_str_status(&dir))
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    int fd = open(dir.ptr, O_RDONLY | O_DIRECTORY);
    /* EINVAL: a file system that cannot flush a folder (some FUSE and
     * network mounts): nothing more can be done there, and it is no error. */
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL)) {
        st = AITK_E_IO;
        if (err)
            aitk_str_appendf(err, "%s: cannot flush the folder to disk (%s): the file may not "
                                  "survive a power loss",
                             dir.ptr, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    aitk_str_free(&dir);
    return st;
#endif
}

/* Moves the written temporary file over `path`, then makes the rename
 * itself durable: fsync of the file made its bytes durable, but the name
 * lives in the folder, which a power loss can roll back to the old name
 * (POSIX.1-2017, fsync: "the file's directory entry" needs its own fsync). */
#ifdef _WIN32
/* Windows has no folder fsync; MoveFileExW replaces the old file in one step
 * (the CRT's rename refuses an existing target, and remove-then-rename
 * leaves a moment with no file at all), and MOVEFILE_WRITE_THROUGH makes it
 * return only once the move is on the disk (Microsoft Learn, "MoveFileExW
 * function (winbase.h)"). */
static aitk_status replace_with(const char *path, const char *tpath, aitk_str *err)
{
    wchar_t *wfrom = aitk_wide(tpath), *wto = aitk_wide(path);
    BOOL ok = wfrom && wto &&
              MoveFileExW(wfrom, wto, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
    DWORD code = ok ? 0 : (wfrom && wto ? GetLastError() : ERROR_NOT_ENOUGH_MEMORY);
    aitk_free(wfrom);
    aitk_free(wto);
    if (ok)
        return AITK_OK;
    if (err)
        aitk_str_appendf(err, "%s: cannot replace the file (WinError %lu)", path,
                         (unsigned long)code);
    remove(tpath);
    return code == ERROR_NOT_ENOUGH_MEMORY ? AITK_E_NOMEM : AITK_E_IO;
}
#else
static aitk_status replace_with(const char *path, const char *tpath, aitk_str *err)
{
    if (rename(tpath, path) != 0) {
        if (err)
            aitk_str_appendf(err, "%s: rename failed: %s", path, strerror(errno));
        remove(tpath);
        return AITK_E_IO;
    }
    return aitk_dir_sync_of(path, err);
}
#endif

#ifndef _WIN32
/* A device or FIFO (/dev/null, /dev/stdout into a pipe) is written where it
 * is: renaming a file over it would destroy it, and as root that once
 * turned /dev/null into a regular file. */
static aitk_status write_in_place(const char *path, const void *data, size_t len, aitk_str *err)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (err)
            aitk_str_appendf(err, "%s: cannot open for writing: %s", path, strerror(errno));
        return AITK_E_IO;
    }
    aitk_status st = write_all(fd, path, data, len, err);
    if (close(fd) != 0 && !st) {
        st = AITK_E_IO;
        if (err)
            aitk_str_appendf(err, "%s: close failed: %s", path, strerror(errno));
    }
    return st;
}
#endif

aitk_status aitk_output_path_check(const char *path, aitk_str *err)
{
    if (!path || !*path) {
        if (err)
            aitk_str_append(err, "an output file name is empty");
        return AITK_E_INVAL;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (err)
            aitk_str_appendf(err, "%s: is a folder, not a file", path);
        return AITK_E_INVAL;
    }
#ifndef _WIN32
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && stat(path, &st) != 0) {
        if (err)
            aitk_str_appendf(err, "%s: is a symbolic link to nothing (%s)", path,
                             strerror(errno));
        return AITK_E_INVAL;
    }
#endif
    return AITK_OK;
}

aitk_status aitk_output_file_ready(const char *path, aitk_str *err)
{
    aitk_status st = aitk_output_path_check(path, err);
    if (st)
        return st;
    /* A device or FIFO is written in place (/dev/stdout): nothing is
     * created beside it, so its folder need not take new files. */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return AITK_OK;
    aitk_str dir = AITK_STR_INIT;
    const char *slash = aitk_path_last_separator(path);
    if (slash)
        st = aitk_str_appendn(&dir, path, slash == path ? 1 : (size_t)(slash - path));
    else
        st = aitk_str_append(&dir, ".");
    if (!st)
        st = aitk_dir_check_writable(aitk_str_cstr(&dir), err);
    aitk_str_free(&dir);
    return st;
}

aitk_status aitk_file_stage(const char *path, const void *data, size_t len, aitk_staged *out,
                            aitk_str *err)
{
    *out = (aitk_staged){.data = data, .len = len};
    aitk_status st = aitk_output_path_check(path, err);
    if (st)
        return st;
    char *target = NULL;
#ifndef _WIN32
    struct stat sb, lsb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        /* Written where it is, at commit: nothing to stage. */
        out->in_place = aitk_strdup(path);
        return out->in_place ? AITK_OK : AITK_E_NOMEM;
    }
    if (lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode)) {
        /* Through a link to a regular file, as the shell's `>` would: the
         * link stays, the file it names is replaced. */
        char *resolved = aitk_realpath(path);
        if (!resolved) {
            if (err)
                aitk_str_appendf(err, "%s: cannot resolve the link: %s", path, strerror(errno));
            return AITK_E_IO;
        }
        target = aitk_strdup(resolved);
        free(resolved); /* aitk_realpath's contract */
    }
#endif
    if (!target)
        target = aitk_strdup(path);
    if (!target)
        return AITK_E_NOMEM;
    st = write_temporary(target, data, len, &out->tmp, err);
    if (st) {
        aitk_free(target);
        return st;
    }
    out->target = target;
    return AITK_OK;
}

aitk_status aitk_file_commit(aitk_staged *s, aitk_str *err)
{
    aitk_status st = AITK_OK;
#ifndef _WIN32
    if (s->in_place)
        st = write_in_place(s->in_place, s->data, s->len, err);
#endif
    if (s->tmp) {
        st = replace_with(s->target, s->tmp, err);
        aitk_free(s->tmp);
        s->tmp = NULL;
    }
    aitk_file_discard(s);
    return st;
}

void aitk_file_discard(aitk_staged *s)
{
    if (s->tmp)
        remove(s->tmp);
    aitk_free(s->tmp);
    aitk_free(s->target);
    aitk_free(s->in_place);
    *s = (aitk_staged){0};
}

aitk_status aitk_file_write_atomic(const char *path, const void *data, size_t len, aitk_str *err)
{
    aitk_staged s;
    aitk_status st = aitk_file_stage(path, data, len, &s, err);
    if (st) {
        aitk_file_discard(&s);
        return st;
    }
    return aitk_file_commit(&s, err);
}

aitk_status aitk_dir_create(const char *dir, aitk_str *err)
{
    char *copy = aitk_strdup(dir);
    if (!copy)
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    size_t n = strlen(copy);
    for (size_t i = 1; i <= n; i++) {
        if (copy[i] != '/' && copy[i] != '\0')
            continue;
        char saved = copy[i];
        copy[i] = '\0';
        if (aitk_mkdir(copy) != 0 && errno != EEXIST) {
            st = AITK_E_IO;
            if (err)
                aitk_str_appendf(err, "%s: cannot create folder: %s", copy, strerror(errno));
            break;
        }
        copy[i] = saved;
    }
    if (!st) {
        struct stat sb;
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            st = AITK_E_IO;
            if (err)
                aitk_str_appendf(err, "%s: exists and is not a folder", dir);
        }
    }
    aitk_free(copy);
    return st;
}

aitk_status aitk_dir_check_writable(const char *dir, aitk_str *err)
{
    aitk_str probe = AITK_STR_INIT;
    if (aitk_path_join(&probe, dir, ".aitk-write-test.XXXXXX"))
        return AITK_E_NOMEM;
#ifdef _WIN32
    int fd = _mktemp_s(probe.ptr, probe.len + 1) == 0
                 ? _open(probe.ptr, _O_CREAT | _O_EXCL | _O_WRONLY, 0666)
                 : -1;
#else
    int fd = mkstemp(probe.ptr);
#endif
    if (fd < 0) {
        if (err)
            aitk_str_appendf(err, "%s: cannot create a file in this folder: %s", dir,
                             strerror(errno));
        aitk_str_free(&probe);
        return AITK_E_IO;
    }
    close(fd);
    remove(probe.ptr);
    aitk_str_free(&probe);
    return AITK_OK;
}

aitk_status aitk_file_remove_stale_stages(const char *path, size_t *removed)
{
    *removed = 0;
    const char *sep = aitk_path_last_separator(path);
    aitk_str dir = AITK_STR_INIT, prefix = AITK_STR_INIT, victim = AITK_STR_INIT;
    if (sep)
        aitk_str_appendn(&dir, path, (size_t)(sep - path));
    else
        aitk_str_append(&dir, ".");
    aitk_str_appendf(&prefix, "%s.tmp.", sep ? sep + 1 : path);
    if (aitk_str_status(&dir) || aitk_str_status(&prefix)) {
        aitk_str_free(&dir);
        aitk_str_free(&prefix);
        return AITK_E_NOMEM;
    }
    char **names = NULL;
    size_t count = 0;
    aitk_status st = aitk_dir_names(aitk_str_cstr(&dir), &names, &count, NULL);
    for (size_t i = 0; !st && i < count; i++) {
        /* The staging name: the target's, ".tmp." and mkstemp's 6 characters. */
        if (strncmp(names[i], prefix.ptr, prefix.len) != 0 || strlen(names[i]) != prefix.len + 6)
            continue;
        aitk_str_clear(&victim);
        if ((st = aitk_path_join(&victim, aitk_str_cstr(&dir), names[i])))
            break;
        if (remove(aitk_str_cstr(&victim)) == 0)
            (*removed)++;
    }
    aitk_dir_names_free(names, count);
    aitk_str_free(&dir);
    aitk_str_free(&prefix);
    aitk_str_free(&victim);
    return st == AITK_E_NOMEM ? st : AITK_OK;
}

bool aitk_path_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

aitk_status aitk_dir_remove_empty(const char *dir)
{
#ifdef _WIN32
    return _rmdir(dir) == 0 ? AITK_OK : AITK_E_IO;
#else
    return rmdir(dir) == 0 ? AITK_OK : AITK_E_IO;
#endif
}

const char *aitk_path_last_separator(const char *path)
{
    const char *slash = strrchr(path, '/');
#ifdef _WIN32
    const char *back = strrchr(path, '\\');
    if (back && (!slash || back > slash))
        slash = back;
#endif
    return slash;
}

aitk_status aitk_path_join(aitk_str *out, const char *dir, const char *name)
{
    aitk_str_clear(out);
    size_t n = strlen(dir);
    int slash = n > 0 && (dir[n - 1] == '/' || dir[n - 1] == '\\');
    return aitk_str_appendf(out, "%s%s%s", dir, slash || n == 0 ? "" : "/", name);
}

int aitk_open_read(const char *path)
{
#ifdef _WIN32
    return open(path, O_RDONLY | O_BINARY);
#else
    return open(path, O_RDONLY | O_CLOEXEC);
#endif
}

char *aitk_realpath(const char *path)
{
#ifdef _WIN32
    struct stat sb;
    return stat(path, &sb) == 0 ? _fullpath(NULL, path, 0) : NULL;
#else
    return realpath(path, NULL);
#endif
}

#ifdef _WIN32
int aitk_file_identity(const char *path, aitk_file_id *out)
{
    wchar_t *w = aitk_wide(path);
    if (!w)
        return -1;
    /* FILE_FLAG_BACKUP_SEMANTICS: folders open too. */
    HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    aitk_free(w);
    if (h == INVALID_HANDLE_VALUE)
        return -1;
    BY_HANDLE_FILE_INFORMATION info;
    BOOL ok = GetFileInformationByHandle(h, &info);
    CloseHandle(h);
    if (!ok)
        return -1;
    out->volume = info.dwVolumeSerialNumber;
    out->index = (unsigned long long)info.nFileIndexHigh << 32 | info.nFileIndexLow;
    return 0;
}
#else
int aitk_file_identity(const char *path, aitk_file_id *out)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    out->volume = (unsigned long long)sb.st_dev;
    out->index = (unsigned long long)sb.st_ino;
    return 0;
}
#endif

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void aitk_dir_names_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        aitk_free(names[i]);
    aitk_free(names);
}

aitk_status aitk_dir_names(const char *dir, char ***names, size_t *count, aitk_str *err)
{
    *names = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        if (err)
            aitk_str_appendf(err, "%s: %s", dir, strerror(e));
        return e == ENOENT || e == ENOTDIR ? AITK_E_NOTFOUND : AITK_E_IO;
    }
    char **list = NULL;
    size_t n = 0, cap = 0;
    aitk_status st = AITK_OK;
    const struct dirent *e;
    while (!st && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char **grown = aitk_grow(list, sizeof *grown, n, &cap, 16);
        if (!grown) {
            st = AITK_E_NOMEM;
            break;
        }
        list = grown;
        if (!(list[n] = aitk_strdup(e->d_name)))
            st = AITK_E_NOMEM;
        else
            n++;
    }
    closedir(d);
    if (st) {
        aitk_dir_names_free(list, n);
        return st;
    }
    if (n)
        qsort(list, n, sizeof *list, by_name);
    *names = list;
    *count = n;
    return AITK_OK;
}

int aitk_is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_special(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

int aitk_is_special_file(const char *path) { return !aitk_is_dir(path) && is_special(path); }

/* The absolute form of a path that need not exist: its folder resolved, the
 * last name kept. NULL when the folder does not exist either. */
static char *absolute_path(const char *path)
{
#ifdef _WIN32
    return _fullpath(NULL, path, 0);
#else
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = NULL;
    if (!slash)
        dir = realpath(".", NULL);
    else if (slash == path)
        dir = realpath("/", NULL);
    else {
        char *parent = aitk_strdup(path);
        if (!parent)
            return NULL;
        parent[slash - path] = '\0';
        dir = realpath(parent, NULL);
        aitk_free(parent);
    }
    if (!dir)
        return NULL;
    size_t n = strlen(dir) + strlen(base) + 2;
    char *out = malloc(n); /* free()d, as realpath's */
    if (out)
        snprintf(out, n, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", base);
    free(dir);
    return out;
#endif
}

int aitk_same_file(const char *a, const char *b)
{
    if (!a || !b || !*a || !*b || is_special(a) || is_special(b))
        return 0;
    aitk_file_id ia, ib;
    int ea = aitk_file_identity(a, &ia), eb = aitk_file_identity(b, &ib);
    if (ea == 0 && eb == 0)
        return ia.volume == ib.volume && ia.index == ib.index;
    if (ea == 0 || eb == 0)
        return 0; /* one exists, the other does not */
    char *pa = absolute_path(a), *pb = absolute_path(b);
    int same;
    if (!pa || !pb)
        same = strcmp(a, b) == 0;
    else
#ifdef _WIN32
        same = _stricmp(pa, pb) == 0;
#else
        same = strcmp(pa, pb) == 0;
#endif
    free(pa);
    free(pb);
    return same;
}

bool aitk_output_is_stdout(const char *path)
{
    return path && path[0] == '-' && path[1] == '\0';
}

/* Two outputs on standard output: AITK_E_INVAL, said. */
static aitk_status one_stdout(const aitk_named_path *outputs, size_t n, aitk_str *err)
{
    const aitk_named_path *first = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!aitk_output_is_stdout(outputs[i].path))
            continue;
        if (first) {
            if (err)
                aitk_str_appendf(err, "%s - and %s - both ask for standard output: only one "
                                      "output can go there; give the other a file name",
                                 first->what, outputs[i].what);
            return AITK_E_INVAL;
        }
        first = &outputs[i];
    }
    return AITK_OK;
}

aitk_status aitk_outputs_distinct(const aitk_named_path *outputs, size_t n_outputs,
                                  const aitk_named_path *inputs, size_t n_inputs,
                                  aitk_str *err)
{
    aitk_status st = one_stdout(outputs, n_outputs, err);
    if (st)
        return st;
    for (size_t i = 0; i < n_outputs; i++) {
        const aitk_named_path *o = &outputs[i];
        if (!o->path || !*o->path || aitk_output_is_stdout(o->path))
            continue;
        for (size_t k = 0; k < n_inputs; k++)
            if (aitk_same_file(o->path, inputs[k].path)) {
                if (err)
                    aitk_str_appendf(err,
                                     "%s %s is the file %s %s reads: writing it would replace "
                                     "that input; name another output file",
                                     o->what, o->path, inputs[k].what, inputs[k].path);
                return AITK_E_INVAL;
            }
        for (size_t k = 0; k < i; k++)
            if (!aitk_output_is_stdout(outputs[k].path) &&
                aitk_same_file(o->path, outputs[k].path)) {
                if (err)
                    aitk_str_appendf(err,
                                     "%s %s and %s %s are one file: one output would "
                                     "overwrite the other",
                                     outputs[k].what, outputs[k].path, o->what, o->path);
                return AITK_E_INVAL;
            }
    }
    return AITK_OK;
}

const char *aitk_path_base_name(const char *path)
{
    const char *sep = aitk_path_last_separator(path);
    return sep ? sep + 1 : path;
}
