/* aitk-validate: arguments -> plan -> probes -> report -> files -> exit code.
 *
 * The entry point: a named command (commands.h) or the validation run
 * (run.h), and the checks that whatever either printed reached stdout. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#endif

#include "common/cliopt.h"
#include "common/libload.h"
#include "common/log.h"
#include "common/selfpath.h"
#include "validate/cli.h"
#include "validate/commands.h"
#include "validate/mpi_run.h"
#include "validate/run.h"
#include "validate/version.h"

/* What was printed must have reached standard output: `render r.json >
 * issue.md` on a full disk would otherwise leave half an issue body and exit
 * 0. A write that failed is exit 3, as a report file that could not be
 * written is. */
static int finish_stdout(int rc)
{
    errno = 0;
    const bool flushed = fflush(stdout) == 0;
    if (flushed && !ferror(stdout))
        return rc;
    /* The cause is known only when this flush failed; an earlier write's
     * errno is long gone. */
    if (!flushed && errno)
        aitk_log(AITK_LOG_ERROR, "standard output: write failed: %s", strerror(errno));
    else
        aitk_log(AITK_LOG_ERROR, "standard output: write failed");
    return AITK_EXIT_INTERNAL;
}

static int run_main(int argc, char **argv);

#ifdef _WIN32
/* A console shows bytes in its own output code page (437, 936, ...); this
 * program prints UTF-8 (its manifest makes that its code page), so the
 * console is switched to UTF-8 while it runs and switched back after. */
static UINT console_cp_before;
static void restore_console_code_page(void) { SetConsoleOutputCP(console_cp_before); }
static void console_utf8(void)
{
    console_cp_before = GetConsoleOutputCP(); /* 0 when there is no console */
    if (console_cp_before && console_cp_before != CP_UTF8 && SetConsoleOutputCP(CP_UTF8))
        atexit(restore_console_code_page);
}
#endif

int main(int argc, char **argv)
{
#ifdef _WIN32
    console_utf8();
#endif
    return finish_stdout(run_main(argc, argv));
}

/* This program loads the libraries it examines in copies of itself
 * (common/libload.h). Without its own path, nothing is loaded and the
 * checks say so. */
static void set_load_helper(void)
{
    aitk_str self = AITK_STR_INIT, err = AITK_STR_INIT;
    if (aitk_self_path(&self, &err) == AITK_OK)
        aitk_libload_set_helper(aitk_str_cstr(&self));
    aitk_str_free(&self);
    aitk_str_free(&err);
}

static int run_main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], AITK_LIBLOAD_CHILD_ARG) == 0)
        return aitk_libload_child(argc - 2, argv + 2);
    aitk_log_init(AITK_LOG_INFO, true);
    set_load_helper();
    if (argc > 1 && argv[1][0] != '-') {
        const aitk_command *cmd = aitk_command_find(argv[1]);
        if (!cmd) {
            aitk_log(AITK_LOG_ERROR, "unknown command '%s' (see --help)", argv[1]);
            return AITK_EXIT_USAGE;
        }
        return cmd->run(argc - 1, argv + 1);
    }
    aitk_options o;
    aitk_str err = AITK_STR_INIT;
    if (aitk_cli_parse(argc, argv, &o, &err))
        return aitk_opt_usage_error(NULL, &err);
    aitk_str_free(&err);
    if (o.help) {
        aitk_cli_print_help();
        return AITK_EXIT_OK;
    }
    if (o.version) {
        printf("aitk-validate %s (%s)\n", AITK_VERSION, AITK_GIT_COMMIT);
        return AITK_EXIT_OK;
    }
    aitk_log_init(o.verbosity < 0 ? AITK_LOG_ERROR : o.verbosity > 0 ? AITK_LOG_DEBUG : AITK_LOG_INFO,
                  !o.no_color);
    return o.mpi ? aitk_mpi_run(&o) : aitk_run_validate(&o);
}
