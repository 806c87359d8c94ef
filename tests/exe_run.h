/* Running the real aitk-validate binary from a test: arguments without the
 * program, the test's own environment inherited (a Windows process needs
 * SystemRoot and friends, so nothing is dropped), stdout and stderr
 * captured. Tests that need a pinned environment use tests/validate/cli_run.h. */
#ifndef AITK_TESTS_EXE_RUN_H
#define AITK_TESTS_EXE_RUN_H

#include <stdio.h>
#include <string.h>

#include "common/proc.h"
#include "common/str.h"
#include "tests/proc_start.h"
#include "tests/test_time.h"

typedef struct ran {
    int rc;
    aitk_str out, err;
} ran;

static inline void ran_free(ran *r)
{
    aitk_str_free(&r->out);
    aitk_str_free(&r->err);
}

/* Any program: argv[0] is searched on PATH (a test driving a script runs
 * "python3" or "bash" this way). */
static inline ran run_program(const char *const *argv, long timeout_ms)
{
    ran r = {0};
    aitk_proc_opts o = {.timeout_ms = timeout_ms};
    aitk_proc_result res;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_test_proc_run(argv, &o, &res, &r.out, &r.err, &err);
    if (st || !res.exited) {
        /* fail_msg does not return: what was captured is freed first. */
        char why[1024];
        snprintf(why, sizeof why, "%s", aitk_str_cstr(&err));
        aitk_str_free(&err);
        ran_free(&r);
        fail_msg("could not run %s: %s", argv[0], why);
    }
    aitk_str_free(&err);
    r.rc = res.exit_code;
    return r;
}

static inline ran run_timeout(const char *const *args, long timeout_ms)
{
    const char *argv[32] = {AITK_EXE};
    size_t n = 1;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    return run_program(argv, timeout_ms);
}

static inline ran run(const char *const *args) { return run_timeout(args, aitk_test_ms(60000)); }

#endif
