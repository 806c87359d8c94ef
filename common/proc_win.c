/* Subprocess with timeout on Windows (proc.h): CreateProcessW with three
 * pipes, a reader thread per output pipe, and a job object that a timeout
 * or a stop request ends with everything the child started. The POSIX side
 * is proc_unix.c. */
#include "common/proc.h"
#include "common/proc_platform.h"

#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/stop.h"
#include "common/wide.h"

/* One argument quoted the way CommandLineToArgvW and the C runtime split a
 * command line: backslashes double only before a quote. */
static void quote_arg(aitk_str *cmd, const char *a)
{
    if (cmd->len)
        aitk_str_appendc(cmd, ' ');
    if (*a && !strpbrk(a, " \t\n\v\"")) {
        aitk_str_append(cmd, a);
        return;
    }
    aitk_str_appendc(cmd, '"');
    for (const char *p = a;; p++) {
        size_t slashes = 0;
        while (*p == '\\') {
            p++;
            slashes++;
        }
        if (!*p) {
            for (size_t i = 0; i < slashes * 2; i++)
                aitk_str_appendc(cmd, '\\');
            break;
        }
        size_t n = *p == '"' ? slashes * 2 + 1 : slashes;
        for (size_t i = 0; i < n; i++)
            aitk_str_appendc(cmd, '\\');
        aitk_str_appendc(cmd, *p);
    }
    aitk_str_appendc(cmd, '"');
}

/* "A=1\0B=2\0\0" in UTF-16, as CREATE_UNICODE_ENVIRONMENT wants. */
static wchar_t *env_block(const char *const *env)
{
    aitk_str all = AITK_STR_INIT;
    for (size_t i = 0; env[i]; i++)
        aitk_str_appendn(&all, env[i], strlen(env[i]) + 1);
    aitk_str_appendc(&all, '\0');
    if (aitk_str_status(&all))
        return NULL;
    wchar_t *w = aitk_wide_n(all.ptr, (int)all.len);
    aitk_str_free(&all);
    return w;
}

typedef struct reader {
    HANDLE pipe;
    aitk_str *sink;
    size_t cap;
} reader;

/* Drains one pipe until every writer has closed it; keeps the first `cap`
 * bytes (reading on, so a chatty child never blocks on a full pipe). */
static DWORD WINAPI read_pipe(void *arg)
{
    reader *r = arg;
    char buf[8192];
    DWORD n;
    while (ReadFile(r->pipe, buf, sizeof buf, &n, NULL) && n > 0)
        if (r->sink && r->sink->len < r->cap)
            aitk_str_appendn(r->sink, buf, r->sink->len + n > r->cap ? r->cap - r->sink->len : n);
    return 0;
}

static void win_error(aitk_str *err, const char *what)
{
    if (err)
        aitk_str_appendf(err, "%s failed: [WinError %lu]", what, (unsigned long)GetLastError());
}

/* The handles of one run: the three pipes (the child's ends are closed
 * once it has them), the job, the process. */
typedef struct win_run {
    HANDLE o_rd, o_wr, e_rd, e_wr, i_rd, i_wr;
    HANDLE job;
    PROCESS_INFORMATION pi;
} win_run;

static void close_handle(HANDLE *h)
{
    if (*h)
        CloseHandle(*h);
    *h = NULL;
}

/* Pipes whose parent ends the child does not inherit (or EOF never comes),
 * and the job object that ends the child and all it starts. */
static aitk_status make_pipes_and_job(win_run *w, aitk_str *err)
{
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    if (!CreatePipe(&w->o_rd, &w->o_wr, &sa, 0) || !CreatePipe(&w->e_rd, &w->e_wr, &sa, 0) ||
        !CreatePipe(&w->i_rd, &w->i_wr, &sa, 0)) {
        win_error(err, "CreatePipe");
        return AITK_E_EXEC;
    }
    SetHandleInformation(w->o_rd, HANDLE_FLAG_INHERIT, 0);
    SetHandleInformation(w->e_rd, HANDLE_FLAG_INHERIT, 0);
    SetHandleInformation(w->i_wr, HANDLE_FLAG_INHERIT, 0);
    w->job = CreateJobObjectW(NULL, NULL);
    if (w->job) {
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION li = {0};
        li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        SetInformationJobObject(w->job, JobObjectExtendedLimitInformation, &li, sizeof li);
    }
    return AITK_OK;
}

/* Started suspended, put in the job, then resumed: nothing it starts can
 * escape the job in between. */
static aitk_status start_child(win_run *w, const char *argv0, wchar_t *wcmd, wchar_t *wenv,
                               const wchar_t *wcwd, aitk_str *err)
{
    STARTUPINFOW si = {.cb = sizeof si, .dwFlags = STARTF_USESTDHANDLES,
                       .hStdInput = w->i_rd, .hStdOutput = w->o_wr, .hStdError = w->e_wr};
    if (!CreateProcessW(NULL, wcmd, NULL, NULL, TRUE,
                        CREATE_SUSPENDED | CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT, wenv,
                        wcwd, &si, &w->pi)) {
        if (err)
            aitk_str_appendf(err, "%s: cannot start it: [WinError %lu]", argv0,
                             (unsigned long)GetLastError());
        return AITK_E_EXEC;
    }
    if (w->job)
        AssignProcessToJobObject(w->job, w->pi.hProcess);
    ResumeThread(w->pi.hThread);
    return AITK_OK;
}

/* Waits for the child in short slices, to see a stop request (the C
 * runtime runs the Ctrl-C handler on a thread of its own): true when it
 * ended by itself, false at the deadline (res->timed_out) or on a stop
 * (res->interrupted). There is no SIGTERM to send a program here: the
 * caller ends its job at once. */
static bool wait_or_stop(const win_run *w, const aitk_proc_opts *opts, double t0,
                         aitk_proc_result *res)
{
    for (;;) {
        DWORD slice = 50;
        if (opts->timeout_ms > 0) {
            double left = opts->timeout_ms - (aitk_clock_ms() - t0);
            if (left <= 0) {
                res->timed_out = true;
                return false;
            }
            if (left < slice)
                slice = (DWORD)left + 1;
        }
        if (WaitForSingleObject(w->pi.hProcess, slice) != WAIT_TIMEOUT)
            return true;
        if (aitk_stop_requested()) {
            res->interrupted = true;
            return false;
        }
    }
}

/* Reads both pipes on threads while the child runs, ends the job at the
 * deadline or on a stop request, and fills res. */
static void wait_child(win_run *w, const aitk_proc_opts *opts, double t0, aitk_str *out,
                       aitk_str *errout, aitk_proc_result *res)
{
    size_t cap = opts->max_output ? opts->max_output : (1u << 20);
    reader ro = {w->o_rd, out, cap}, re = {w->e_rd, errout, cap};
    HANDLE threads[2] = {CreateThread(NULL, 0, read_pipe, &ro, 0, NULL),
                         CreateThread(NULL, 0, read_pipe, &re, 0, NULL)};
    if (!wait_or_stop(w, opts, t0, res)) {
        if (w->job)
            TerminateJobObject(w->job, 1);
        else
            TerminateProcess(w->pi.hProcess, 1);
        WaitForSingleObject(w->pi.hProcess, INFINITE);
    }
    /* A grandchild may still hold the pipes: give it what is left of
     * the limit (nothing on a stop), then end the job. */
    double left = res->interrupted     ? 0
                  : opts->timeout_ms > 0 ? opts->timeout_ms - (aitk_clock_ms() - t0)
                                         : 5000;
    if (WaitForMultipleObjects(2, threads, TRUE, left > 0 ? (DWORD)left : 0) == WAIT_TIMEOUT &&
        w->job) {
        TerminateJobObject(w->job, 1);
        WaitForMultipleObjects(2, threads, TRUE, INFINITE);
    }
    CloseHandle(threads[0]);
    CloseHandle(threads[1]);
    DWORD code = 0;
    GetExitCodeProcess(w->pi.hProcess, &code);
    res->exit_code = (int)code;
    res->exited = !res->timed_out && !res->interrupted;
    res->wall_ms = aitk_clock_ms() - t0;
    CloseHandle(w->pi.hThread);
    CloseHandle(w->pi.hProcess);
}

/* The child runs in a job object: a timeout ends it and everything it
 * started, as the POSIX side kills the process group. */
aitk_status aitk_proc_run_platform(const char *const *argv, const aitk_proc_opts *opts,
                                   aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                                   aitk_str *err)
{
    aitk_str cmd = AITK_STR_INIT;
    for (size_t i = 0; argv[i]; i++)
        quote_arg(&cmd, argv[i]);
    if (aitk_str_status(&cmd))
        return AITK_E_NOMEM;
    wchar_t *wcmd = aitk_wide(cmd.ptr);
    wchar_t *wcwd = opts->cwd ? aitk_wide(opts->cwd) : NULL;
    wchar_t *wenv = opts->env ? env_block(opts->env) : NULL;
    aitk_str_free(&cmd);
    aitk_status st = AITK_OK;
    if (!wcmd || (opts->cwd && !wcwd) || (opts->env && !wenv))
        st = AITK_E_NOMEM;
    win_run w = {0};
    if (!st)
        st = make_pipes_and_job(&w, err);
    double t0 = aitk_clock_ms();
    if (!st)
        st = start_child(&w, argv[0], wcmd, wenv, wcwd, err);
    /* Only the child holds the write ends now. */
    close_handle(&w.o_wr);
    close_handle(&w.e_wr);
    close_handle(&w.i_rd);
    if (!st && opts->stdin_text) {
        DWORD written;
        WriteFile(w.i_wr, opts->stdin_text, (DWORD)strlen(opts->stdin_text), &written, NULL);
    }
    close_handle(&w.i_wr);
    if (!st) {
        wait_child(&w, opts, t0, out, errout, res);
        if (res->timed_out)
            st = AITK_E_TIMEOUT;
        else if (res->interrupted)
            st = AITK_E_INTERRUPTED;
    }
    close_handle(&w.o_rd);
    close_handle(&w.e_rd);
    close_handle(&w.job);
    aitk_free(wcmd);
    aitk_free(wcwd);
    aitk_free(wenv);
    return st;
}
