/* Subprocess with timeout (proc.h): what both platforms share. The running
 * itself is proc_unix.c or proc_win.c (proc_platform.h), one file per
 * platform as libuv keeps src/unix and src/win apart. */
#include "common/proc.h"

#include <string.h>

#include "common/proc_platform.h"
#include "common/stop.h"

aitk_status aitk_proc_run(const char *const *argv, const aitk_proc_opts *opts,
                          aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                          aitk_str *err)
{
    static const aitk_proc_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    memset(res, 0, sizeof *res);
    /* The run is stopping: a program started now would only delay its
     * reports. */
    if (aitk_stop_requested()) {
        res->interrupted = true;
        if (err)
            aitk_str_appendf(err, "%s: not started: %s", argv[0], aitk_stop_words());
        return AITK_E_INTERRUPTED;
    }
    aitk_status st = aitk_proc_run_platform(argv, opts, res, out, errout, err);
    if (st == AITK_E_TIMEOUT && err)
        aitk_str_appendf(err, "%s: killed after %ld ms", argv[0], opts->timeout_ms);
    else if (st == AITK_E_INTERRUPTED && err)
        aitk_str_appendf(err, "%s: ended after %.1f s: %s", argv[0], res->wall_ms / 1000,
                         aitk_stop_words());
    return st;
}
