/* Shared by the CLI tests: run the real aitk-validate binary and capture it. */
#ifndef AITK_TESTS_CLI_RUN_H
#define AITK_TESTS_CLI_RUN_H

#include <stdio.h>
#include <stdlib.h>

#include "common/proc.h"
#include "common/str.h"
#include "tests/proc_start.h"
#include "tests/test_time.h"
#include "tests/temp_tree.h"

typedef struct cli_result {
    int exit_code;
    aitk_str out, err;
} cli_result;

/* argv without the program; env entries ("K=V") are added to PATH/HOME/NO_COLOR. */
static inline void cli_run(cli_result *r, const char *const *args, const char *const *extra_env)
{
    const char *argv[64] = {AITK_EXE};
    int n = 1;
    for (; args && args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    const char *env[32];
    int e = 0;
    static aitk_str path_env, home_env, asan_env;
    aitk_str_clear(&path_env);
    aitk_str_clear(&home_env);
    aitk_str_clear(&asan_env);
    aitk_str_appendf(&path_env, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    aitk_str_appendf(&home_env, "HOME=%s", getenv("HOME") ? getenv("HOME") : "/tmp");
    env[e++] = path_env.ptr;
    env[e++] = home_env.ptr;
    env[e++] = "NO_COLOR=1";
    if (getenv("ASAN_OPTIONS")) {
        aitk_str_appendf(&asan_env, "ASAN_OPTIONS=%s", getenv("ASAN_OPTIONS"));
        env[e++] = asan_env.ptr;
    }
#ifdef _WIN32
    /* A Windows process cannot start without SystemRoot, and finds its
     * temporary and user folders through these: passed on as they are. */
    static const char *const windows_vars[] = {"SystemRoot", "windir", "TEMP", "TMP",
                                               "USERPROFILE", "ProgramFiles", "LOCALAPPDATA",
                                               "APPDATA", "ComSpec", "PATHEXT"};
    static aitk_str win_env[sizeof windows_vars / sizeof *windows_vars];
    for (size_t i = 0; i < sizeof windows_vars / sizeof *windows_vars && e < 24; i++) {
        const char *v = getenv(windows_vars[i]);
        aitk_str_clear(&win_env[i]);
        if (!v)
            continue;
        aitk_str_appendf(&win_env[i], "%s=%s", windows_vars[i], v);
        env[e++] = win_env[i].ptr;
    }
#endif
    for (int i = 0; extra_env && extra_env[i] && e < 31; i++)
        env[e++] = extra_env[i];
    env[e] = NULL;
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(60000), .env = env};
    aitk_proc_result pr;
    r->out = (aitk_str)AITK_STR_INIT;
    r->err = (aitk_str)AITK_STR_INIT;
    aitk_str why = AITK_STR_INIT;
    aitk_status st = aitk_test_proc_run(argv, &o, &pr, &r->out, &r->err, &why);
    if (st || !pr.exited)
        fail_msg("could not run %s: %s", AITK_EXE, aitk_str_cstr(&why));
    aitk_str_free(&why);
    r->exit_code = pr.exit_code;
}

/* A scratch folder for one test group, made from the mkdtemp template
 * `base` ("/tmp/name-XXXXXX") and removed with all it holds: the group's
 * setup and teardown. */
static inline int cli_scratch_make(char *base) { return mkdtemp(base) ? 0 : -1; }

static inline int cli_scratch_remove(const char *base)
{
    return aitk_test_remove_tree(base);
}

static inline void cli_free(cli_result *r)
{
    aitk_str_free(&r->out);
    aitk_str_free(&r->err);
}

static inline int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

#endif
