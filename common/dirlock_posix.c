/* Output-folder lock on POSIX: flock on the folder itself, so nothing is
 * left in it. flock locks belong to the open file description: they end
 * when the process ends, and a second open in another process conflicts. */
#include "common/dirlock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/fileio.h"

struct aitk_dir_lock {
    int fd;
};

aitk_status aitk_dir_lock_take(const char *dir, aitk_dir_lock **out, aitk_str *err)
{
    *out = NULL;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        aitk_str_appendf(err, "%s: cannot open the folder to lock it: %s", dir, strerror(errno));
        return AITK_E_IO;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            aitk_str_appendf(err, "%s: another aitk-validate run is writing its reports here; "
                                  "wait for it to end or choose another folder", dir);
        else
            aitk_str_appendf(err, "%s: cannot lock the folder: %s", dir, strerror(e));
        return AITK_E_IO;
    }
    /* The folder may have been removed, or replaced, between the open and
     * the lock (a refused run removing the folder it made): a lock on a
     * folder no longer at `dir` guards nothing, and every file written
     * there would fail. Refuse it, naming what happened. */
    struct stat now, held;
    if (fstat(fd, &held) != 0 || stat(dir, &now) != 0 || now.st_dev != held.st_dev ||
        now.st_ino != held.st_ino) {
        close(fd);
        aitk_str_appendf(err, "%s: the folder was removed while this run was taking it "
                              "(another aitk-validate run was refused there); run again", dir);
        return AITK_E_IO;
    }
    aitk_dir_lock *l = aitk_malloc(sizeof *l);
    if (!l) {
        close(fd);
        return AITK_E_NOMEM;
    }
    l->fd = fd;
    *out = l;
    return AITK_OK;
}

void aitk_dir_lock_release(aitk_dir_lock *lock)
{
    if (!lock)
        return;
    close(lock->fd); /* closing the last descriptor releases the flock */
    aitk_free(lock);
}

aitk_status aitk_dir_remove_if_unheld(const char *dir)
{
    aitk_dir_lock *held = NULL;
    aitk_str busy = AITK_STR_INIT;
    aitk_status st = aitk_dir_lock_take(dir, &held, &busy);
    aitk_str_free(&busy);
    if (!st)
        st = aitk_dir_remove_empty(dir);
    aitk_dir_lock_release(held);
    return st ? AITK_E_IO : AITK_OK;
}
