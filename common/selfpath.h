/* The path of the running program, for re-running itself.
 *
 * `aitk-validate deps --load` loads each library in a copy of itself, so
 * that a library which crashes or ends the process in its constructor takes
 * down the copy, not the tool. argv[0] cannot be trusted for that (it may
 * be a bare name found on PATH, or anything the caller chose). */
#ifndef AITK_COMMON_SELFPATH_H
#define AITK_COMMON_SELFPATH_H

#include "common/status.h"
#include "common/str.h"

/* Appends the absolute path of this executable (UTF-8) to `out`.
 * AITK_E_UNSUPPORTED where the platform cannot tell; AITK_E_IO with the
 * reason in `err` when it could not be read. */
aitk_status aitk_self_path(aitk_str *out, aitk_str *err);

#endif
