/* One run at a time in an output folder.
 *
 * Two runs writing their reports into one --output-dir at once left mixed
 * sets (a report.json of one run beside the report.html of the other). A
 * run takes its output folders for itself before it writes anything there
 * and keeps them until it ends; a second run is refused at once, naming the
 * folder. The lock is the kernel's: it ends with the process, however the
 * process ends, so a killed run never leaves a stale lock behind. */
#ifndef AITK_COMMON_DIRLOCK_H
#define AITK_COMMON_DIRLOCK_H

#include "common/status.h"
#include "common/str.h"

typedef struct aitk_dir_lock aitk_dir_lock;

/* Takes `dir` (an existing folder) for this process. AITK_E_IO with "DIR:
 * another aitk-validate run is writing its reports here" when another
 * process holds it, or with the system's words when the folder cannot be
 * locked; AITK_E_NOMEM. */
aitk_status aitk_dir_lock_take(const char *dir, aitk_dir_lock **out, aitk_str *err);

/* Releases the folder (NULL is fine). */
void aitk_dir_lock_release(aitk_dir_lock *lock);

/* Removes `dir` if it is empty and no run holds it; AITK_E_IO otherwise. A
 * run refused at a folder it made must not remove it from under the run
 * that took it meanwhile, which leaves it empty until it publishes. On
 * POSIX the folder is removed under its own lock; on Windows a held folder
 * holds the lock file, so it is not empty and a plain removal fails. */
aitk_status aitk_dir_remove_if_unheld(const char *dir);

#endif
