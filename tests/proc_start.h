/* Starting a program from a test: aitk_proc_run, with one emulator fault
 * taken out of the verdict.
 *
 * On Windows (here: under Wine) a program that could not be started never
 * ran, so starting it again changes nothing it would have done. Wine under
 * load has refused a CreateProcess now and then with ERROR_INTERNAL_ERROR
 * ("[WinError 1359]"), in this project's Windows CI in the report, CLI and
 * probe tests alike, and the next try got through. That refusal is retried,
 * three starts at most, each retry said on stderr; any other start failure
 * (a missing program) is reported at once, and what a started program does
 * is never retried. Every test that runs a program goes through here, so
 * the rule is one. */
#ifndef AITK_TESTS_PROC_START_H
#define AITK_TESTS_PROC_START_H

#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/proc.h"
#include "common/str.h"

static inline aitk_status aitk_test_proc_run(const char *const *argv, const aitk_proc_opts *o,
                                             aitk_proc_result *res, aitk_str *out,
                                             aitk_str *errout, aitk_str *err)
{
    aitk_str why = AITK_STR_INIT;
    aitk_status st = aitk_proc_run(argv, o, res, out, errout, &why);
    for (int again = 0;
         again < 2 && st == AITK_E_EXEC && strstr(aitk_str_cstr(&why), "[WinError 1359]");
         again++) {
        fprintf(stderr, "%s: %s; starting it again\n", argv[0], aitk_str_cstr(&why));
        aitk_str_clear(&why);
        if (out)
            aitk_str_clear(out);
        if (errout)
            aitk_str_clear(errout);
        aitk_sleep_ms(500);
        st = aitk_proc_run(argv, o, res, out, errout, &why);
    }
    if (err)
        aitk_str_append(err, aitk_str_cstr(&why));
    aitk_str_free(&why);
    return st;
}

#endif
