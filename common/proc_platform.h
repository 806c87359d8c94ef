/* The one function each platform's file implements for common/proc.c:
 * proc_unix.c (fork + exec) or proc_win.c (CreateProcessW + a job). */
#ifndef AITK_COMMON_PROC_PLATFORM_H
#define AITK_COMMON_PROC_PLATFORM_H

#include "common/proc.h"

/* aitk_proc_run with `opts` given and `res` zeroed by the caller. Returns
 * AITK_E_TIMEOUT (res->timed_out) or AITK_E_INTERRUPTED (res->interrupted:
 * a stop request came while the program ran) without a message: proc.c
 * words it. */
aitk_status aitk_proc_run_platform(const char *const *argv, const aitk_proc_opts *opts,
                                   aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                                   aitk_str *err);

#endif
