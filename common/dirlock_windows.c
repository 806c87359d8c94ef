/* Output-folder lock on Windows: a folder cannot be opened for exclusive
 * use, so a file in it is: .aitk-validate.lock, opened with no sharing and
 * deleted when its handle closes (the process ending closes it too). A
 * second run's open fails with a sharing violation. */
#include "common/dirlock.h"

#include <windows.h>

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/wide.h"

struct aitk_dir_lock {
    HANDLE file;
};

aitk_status aitk_dir_lock_take(const char *dir, aitk_dir_lock **out, aitk_str *err)
{
    *out = NULL;
    aitk_str path = AITK_STR_INIT;
    aitk_str_appendf(&path, "%s\\.aitk-validate.lock", dir);
    wchar_t *wpath = aitk_str_status(&path) ? NULL : aitk_wide(aitk_str_cstr(&path));
    aitk_str_free(&path);
    if (!wpath)
        return AITK_E_NOMEM;
    HANDLE h = CreateFileW(wpath, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_ALWAYS,
                           FILE_ATTRIBUTE_HIDDEN | FILE_FLAG_DELETE_ON_CLOSE, NULL);
    DWORD code = GetLastError();
    aitk_free(wpath);
    if (h == INVALID_HANDLE_VALUE) {
        if (code == ERROR_SHARING_VIOLATION)
            aitk_str_appendf(err, "%s: another aitk-validate run is writing its reports here; "
                                  "wait for it to end or choose another folder", dir);
        else
            aitk_str_appendf(err, "%s: cannot lock the folder (Windows error %lu)", dir,
                             (unsigned long)code);
        return AITK_E_IO;
    }
    aitk_dir_lock *l = aitk_malloc(sizeof *l);
    if (!l) {
        CloseHandle(h);
        return AITK_E_NOMEM;
    }
    l->file = h;
    *out = l;
    return AITK_OK;
}

void aitk_dir_lock_release(aitk_dir_lock *lock)
{
    if (!lock)
        return;
    CloseHandle(lock->file);
    aitk_free(lock);
}

aitk_status aitk_dir_remove_if_unheld(const char *dir)
{
    return aitk_dir_remove_empty(dir); /* a held folder holds its lock file */
}
