/* Files: whole-file reads with a size cap, and atomic writes.
 *
 * Reports are written to a temporary file beside the target and renamed into
 * place, so an interrupted run never leaves half a report.json behind. */
#ifndef AITK_COMMON_FILEIO_H
#define AITK_COMMON_FILEIO_H

#include <stddef.h>

#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"

/* Reads at most `max_bytes` (AITK_E_RANGE if the file is larger). The buffer
 * is NUL-terminated; free with aitk_free. `err` gets "path: reason". */
aitk_status aitk_file_read(const char *path, size_t max_bytes, char **data, size_t *len,
                           aitk_str *err);

/* Writes `len` bytes to `path` atomically: temp file in the same folder,
 * fsync, rename. On any failure the target is untouched and the temp removed.
 * A symbolic link is followed (the file it names is replaced, the link
 * stays); a device or FIFO (/dev/null, /dev/stdout) is written in place,
 * never replaced; a folder, an empty name or a dangling link is refused
 * (AITK_E_INVAL, as aitk_output_path_check). */
aitk_status aitk_file_write_atomic(const char *path, const void *data, size_t len,
                                   aitk_str *err);

/* Flushes the folder holding `path` to disk (open it, fsync), so that a
 * rename into it survives a power loss; aitk_file_commit and
 * aitk_file_write_atomic call it after each rename. AITK_E_IO, with the
 * folder named in err, when the folder cannot be opened or flushed; a file
 * system that cannot flush folders at all (EINVAL) is not an error. On
 * Windows a no-op: the CRT cannot open a folder; there the replacement
 * itself is MoveFileExW with MOVEFILE_REPLACE_EXISTING and
 * MOVEFILE_WRITE_THROUGH, which returns once the move is on the disk. */
aitk_status aitk_dir_sync_of(const char *path, aitk_str *err);

/* A file written in two steps, so that several can be replaced together:
 * aitk_file_stage writes the data in full beside the target under a
 * temporary name (the target untouched); aitk_file_commit renames it into
 * place. A run writing report.json, .md, .html and junit.xml stages all four
 * and commits them only when all four are written, so a full disk leaves
 * every old file as it was instead of a new report.json beside an old
 * report.html. A device or FIFO target (/dev/null) is written in place at
 * commit, from `data`, which must outlive the staging. */
typedef struct aitk_staged {
    char *target;   /* the file the temporary copy replaces (a link resolved) */
    char *tmp;      /* the temporary copy; NULL when none */
    char *in_place; /* a device or FIFO to write at commit; NULL when none */
    const void *data;
    size_t len;
} aitk_staged;

/* Refuses what aitk_file_write_atomic refuses; on failure nothing is left
 * behind (call aitk_file_discard all the same: it is harmless). */
aitk_status aitk_file_stage(const char *path, const void *data, size_t len, aitk_staged *out,
                            aitk_str *err);
/* Puts the staged file in place, then releases `s`. */
aitk_status aitk_file_commit(aitk_staged *s, aitk_str *err);
/* Removes the staged copy, if any, and releases `s`; the target is untouched. */
void aitk_file_discard(aitk_staged *s);

/* Whether `path` can name an output file at all: not empty, not a folder,
 * not a symbolic link to nothing. For checking outputs before long work;
 * AITK_E_INVAL with "path: why" in err. */
aitk_status aitk_output_path_check(const char *path, aitk_str *err);

/* aitk_output_path_check, and a file can be created in the folder that would
 * hold `path`: all that can be known before the work whose result it saves. */
aitk_status aitk_output_file_ready(const char *path, aitk_str *err);

/* Removes what aitk_file_stage left beside `path` when its process was
 * killed before the commit ("PATH.tmp.XXXXXX"); `*removed` counts them.
 * Only for a folder this process holds (common/dirlock.h): another run's
 * staging file would look the same. AITK_E_NOMEM only. */
aitk_status aitk_file_remove_stale_stages(const char *path, size_t *removed);

/* True when something (file, folder, link to either) is at `path`. */
bool aitk_path_exists(const char *path);

/* Removes `dir` if it is an empty folder (rmdir); AITK_E_IO otherwise. */
aitk_status aitk_dir_remove_empty(const char *dir);

/* Creates `dir` and its parents (mkdir -p). */
aitk_status aitk_dir_create(const char *dir, aitk_str *err);

/* Checks that a file can be created in `dir` (by creating and removing one),
 * so callers can refuse bad output folders before doing any work. */
aitk_status aitk_dir_check_writable(const char *dir, aitk_str *err);

/* The entry names of folder `dir` (not "." or ".."), in byte order, so a
 * listing is the same on every run and platform. *names has *count entries;
 * free with aitk_dir_names_free. `err` gets "dir: reason". */
aitk_status aitk_dir_names(const char *dir, char ***names, size_t *count, aitk_str *err);
void aitk_dir_names_free(char **names, size_t count);

/* 1 when `path` is a folder (a link to one counts), else 0. */
int aitk_is_dir(const char *path);
/* 1 when `path` exists and is neither a regular file nor a folder: a named
 * pipe, a socket, a device (links followed). */
int aitk_is_special_file(const char *path);

/* The last '/' of `path` (on Windows also '\\'), or NULL: where its folder
 * part ends and its file name begins. */
const char *aitk_path_last_separator(const char *path);
/* The part of `path` after its last separator (the whole of it when there
 * is none): "fbgemm.dll" of "C:\\torch\\lib\\fbgemm.dll" on Windows. */
const char *aitk_path_base_name(const char *path);

/* path = dir + "/" + name, into `out`. */
aitk_status aitk_path_join(aitk_str *out, const char *dir, const char *name);

/* open(2) for reading bytes: binary mode on Windows (no CRLF translation, no
 * stop at ^Z), close-on-exec on POSIX. A file descriptor, or -1 with errno. */
int aitk_open_read(const char *path);

/* realpath(path, NULL): the absolute path with symlinks resolved, or NULL when
 * `path` does not exist. On Windows, the full path (_fullpath) of an existing
 * file. Free the result with free(). */
char *aitk_realpath(const char *path);

/* Which file a path names, so two names of one file compare equal:
 * st_dev/st_ino on POSIX; the volume serial number and file index on Windows,
 * whose C runtime leaves st_ino at 0 for every file. */
typedef struct aitk_file_id {
    unsigned long long volume, index;
} aitk_file_id;

/* 0, or -1 when the file cannot be opened or asked. */
int aitk_file_identity(const char *path, aitk_file_id *out);

/* 1 when `a` and `b` name one regular file, or one place where a file would
 * be created: same identity when both exist (links and hard links count),
 * else the same absolute path (folder resolved, case ignored on Windows).
 * Devices and FIFOs (/dev/stdout) never count: writing them twice loses
 * nothing. */
int aitk_same_file(const char *a, const char *b);

/* A path a command reads or writes, with the option that named it. */
typedef struct aitk_named_path {
    const char *what; /* "--json", "--config", "--output-dir's report.md" */
    const char *path; /* NULL or "": not given */
} aitk_named_path;

/* True for "-": an output option's way to name standard output, as most
 * command-line tools read it (`--json - | jq`). A file named "-" is "./-". */
bool aitk_output_is_stdout(const char *path);

/* Refuses (AITK_E_INVAL, one line naming both options) an output that is the
 * same file as an input or as another output: the run would replace the
 * user's config or report, or one output would overwrite the other; and two
 * outputs that both ask for standard output ("-"), which would run together
 * there. For checking before any work. */
aitk_status aitk_outputs_distinct(const aitk_named_path *outputs, size_t n_outputs,
                                  const aitk_named_path *inputs, size_t n_inputs,
                                  aitk_str *err);

#endif
