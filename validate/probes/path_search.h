/* Finding a program on PATH the way a process start finds it: pip runs
 * `git clone` for a git+ requirement by its bare name, so whether
 * `pip install -r requirements.txt` can work turns on this. */
#ifndef AITK_VALIDATE_PROBES_PATH_SEARCH_H
#define AITK_VALIDATE_PROBES_PATH_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/str.h"

#ifdef _WIN32
#define AITK_PATH_LIST_SEP ";"
#else
#define AITK_PATH_LIST_SEP ":"
#endif

/* `name` in the PATH entry s[0..n), into `out`: a Windows entry may be
 * quoted and may end in a separator ("C:\\Python311\\"), which a shell
 * ignores; an empty entry is the current folder, as execvp reads it. */
void aitk_path_entry_join(aitk_str *out, const char *s, size_t n, const char *name);

/* Where `command` ("git") is on `path` (a PATH value; NULL: the default
 * search path execvp uses, /bin:/usr/bin; on Windows the current folder): the first entry that holds it
 * as a program (on Windows `command`.exe, the name CreateProcess looks for
 * when none has an extension), into `found`. False when none does. */
bool aitk_path_find_program(const char *path, const char *command, aitk_str *found);

#endif
