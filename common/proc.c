/* Subprocess with timeout: fork + exec, poll on two pipes, kill the group on
 * timeout (and, with end_with_child, whatever the child left behind). */
#ifndef _WIN32
#define _GNU_SOURCE
#endif
#include "common/proc.h"

#include <string.h>

#include "common/clock.h"

#ifdef _WIN32
#include <stdlib.h>
#include <windows.h>

#include "common/alloc.h"

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

/* UTF-8 -> a new UTF-16 string of `extra` more characters (for blocks). */
static wchar_t *widen(const char *s, int *chars)
{
    int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
    wchar_t *w = n > 0 ? aitk_malloc((size_t)n * sizeof *w) : NULL;
    if (w)
        MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n);
    if (chars)
        *chars = n;
    return w;
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
    int n = MultiByteToWideChar(CP_UTF8, 0, all.ptr, (int)all.len, NULL, 0);
    wchar_t *w = n > 0 ? aitk_malloc((size_t)n * sizeof *w) : NULL;
    if (w)
        MultiByteToWideChar(CP_UTF8, 0, all.ptr, (int)all.len, w, n);
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

/* The child runs in a job object: a timeout ends it and everything it
 * started, as the POSIX side kills the process group. */
aitk_status aitk_proc_run(const char *const *argv, const aitk_proc_opts *opts,
                          aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                          aitk_str *err)
{
    static const aitk_proc_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    memset(res, 0, sizeof *res);
    size_t cap = opts->max_output ? opts->max_output : (1u << 20);
    aitk_str cmd = AITK_STR_INIT;
    for (size_t i = 0; argv[i]; i++)
        quote_arg(&cmd, argv[i]);
    if (aitk_str_status(&cmd))
        return AITK_E_NOMEM;
    wchar_t *wcmd = widen(cmd.ptr, NULL);
    wchar_t *wcwd = opts->cwd ? widen(opts->cwd, NULL) : NULL;
    wchar_t *wenv = opts->env ? env_block(opts->env) : NULL;
    aitk_str_free(&cmd);
    aitk_status st = AITK_OK;
    if (!wcmd || (opts->cwd && !wcwd) || (opts->env && !wenv))
        st = AITK_E_NOMEM;

    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    HANDLE o_rd = NULL, o_wr = NULL, e_rd = NULL, e_wr = NULL, i_rd = NULL, i_wr = NULL;
    if (!st && (!CreatePipe(&o_rd, &o_wr, &sa, 0) || !CreatePipe(&e_rd, &e_wr, &sa, 0) ||
                !CreatePipe(&i_rd, &i_wr, &sa, 0))) {
        win_error(err, "CreatePipe");
        st = AITK_E_EXEC;
    }
    /* The parent's ends must not leak into the child, or EOF never comes. */
    if (!st) {
        SetHandleInformation(o_rd, HANDLE_FLAG_INHERIT, 0);
        SetHandleInformation(e_rd, HANDLE_FLAG_INHERIT, 0);
        SetHandleInformation(i_wr, HANDLE_FLAG_INHERIT, 0);
    }
    HANDLE job = st ? NULL : CreateJobObjectW(NULL, NULL);
    if (job) {
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION li = {0};
        li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        SetInformationJobObject(job, JobObjectExtendedLimitInformation, &li, sizeof li);
    }
    PROCESS_INFORMATION pi = {0};
    double t0 = aitk_clock_ms();
    if (!st) {
        STARTUPINFOW si = {.cb = sizeof si, .dwFlags = STARTF_USESTDHANDLES,
                           .hStdInput = i_rd, .hStdOutput = o_wr, .hStdError = e_wr};
        if (!CreateProcessW(NULL, wcmd, NULL, NULL, TRUE,
                            CREATE_SUSPENDED | CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT,
                            wenv, wcwd, &si, &pi)) {
            if (err)
                aitk_str_appendf(err, "%s: cannot start it: [WinError %lu]", argv[0],
                                 (unsigned long)GetLastError());
            st = AITK_E_EXEC;
        } else {
            if (job)
                AssignProcessToJobObject(job, pi.hProcess);
            ResumeThread(pi.hThread);
        }
    }
    /* Only the child holds the write ends now. */
    if (o_wr)
        CloseHandle(o_wr);
    if (e_wr)
        CloseHandle(e_wr);
    if (i_rd)
        CloseHandle(i_rd);
    if (!st && opts->stdin_text) {
        DWORD written;
        WriteFile(i_wr, opts->stdin_text, (DWORD)strlen(opts->stdin_text), &written, NULL);
    }
    if (i_wr)
        CloseHandle(i_wr);
    if (!st) {
        reader ro = {o_rd, out, cap}, re = {e_rd, errout, cap};
        HANDLE threads[2] = {CreateThread(NULL, 0, read_pipe, &ro, 0, NULL),
                             CreateThread(NULL, 0, read_pipe, &re, 0, NULL)};
        DWORD limit = INFINITE;
        if (opts->timeout_ms > 0)
            limit = (DWORD)opts->timeout_ms;
        if (WaitForSingleObject(pi.hProcess, limit) == WAIT_TIMEOUT) {
            res->timed_out = true;
            if (job)
                TerminateJobObject(job, 1);
            else
                TerminateProcess(pi.hProcess, 1);
            WaitForSingleObject(pi.hProcess, INFINITE);
        }
        /* A grandchild may still hold the pipes: give it what is left of
         * the limit, then end the job. */
        double left = opts->timeout_ms > 0 ? opts->timeout_ms - (aitk_clock_ms() - t0) : 5000;
        if (WaitForMultipleObjects(2, threads, TRUE, left > 0 ? (DWORD)left : 0) ==
                WAIT_TIMEOUT &&
            job) {
            TerminateJobObject(job, 1);
            WaitForMultipleObjects(2, threads, TRUE, INFINITE);
        }
        CloseHandle(threads[0]);
        CloseHandle(threads[1]);
        DWORD code = 0;
        GetExitCodeProcess(pi.hProcess, &code);
        res->exit_code = (int)code;
        res->exited = !res->timed_out;
        res->wall_ms = aitk_clock_ms() - t0;
        CloseHandle(pi.hThread);
        CloseHandle(pi.hProcess);
        if (res->timed_out) {
            if (err)
                aitk_str_appendf(err, "%s: killed after %ld ms", argv[0], opts->timeout_ms);
            st = AITK_E_TIMEOUT;
        }
    }
    if (o_rd)
        CloseHandle(o_rd);
    if (e_rd)
        CloseHandle(e_rd);
    if (job)
        CloseHandle(job);
    aitk_free(wcmd);
    aitk_free(wcwd);
    aitk_free(wenv);
    return st;
}
#else
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* Everything readable now, without blocking; *open_flag is cleared at EOF. */
static void drain(int fd, aitk_str *sink, size_t cap, bool *open_flag)
{
    char buf[8192];
    while (*open_flag) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            if (sink && sink->len < cap)
                aitk_str_appendn(sink, buf,
                                 sink->len + (size_t)n > cap ? cap - sink->len : (size_t)n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            if (n == 0 || errno != EAGAIN)
                *open_flag = false;
            return;
        }
    }
}

/* end_with_child's state: on Linux this process is the run's child
 * subreaper (restored to what it was after), and the children it already had
 * are not the run's: the sweep leaves them alone. */
enum { REAP_MAX = 256 };
typedef struct reaper {
    int was_subreaper;
    size_t nprior;
    bool prior_complete; /* all listed: else no orphan is swept, to be safe */
    pid_t prior[REAP_MAX];
} reaper;

#ifdef __linux__
/* Our children's pids from /proc but `child`. */
static size_t children(pid_t child, pid_t *pids, size_t cap)
{
    size_t n = 0;
    DIR *dir = opendir("/proc");
    if (!dir)
        return 0;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(dir)) && n < cap) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == child)
            continue;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t got = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[got] = '\0';
        /* "pid (comm) state ppid ...": comm may hold spaces and ')'. */
        const char *close_paren = strrchr(line, ')');
        int ppid = 0;
        if (close_paren && sscanf(close_paren + 1, " %*c %d", &ppid) == 1 && ppid == self)
            pids[n++] = (pid_t)pid;
    }
    closedir(dir);
    return n;
}
#endif

/* Before the fork: note the children we have and become the subreaper. */
static void reaper_start(reaper *r)
{
    memset(r, 0, sizeof *r);
#ifdef __linux__
    prctl(PR_GET_CHILD_SUBREAPER, &r->was_subreaper, 0, 0, 0);
    r->nprior = children(0, r->prior, REAP_MAX);
    r->prior_complete = r->nprior < REAP_MAX;
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
}

static void reaper_end(const reaper *r)
{
#ifdef __linux__
    prctl(PR_SET_CHILD_SUBREAPER, r->was_subreaper, 0, 0, 0);
#else
    (void)r;
#endif
}

static bool prior_child(const reaper *r, pid_t pid)
{
    for (size_t i = 0; i < r->nprior; i++)
        if (r->prior[i] == pid)
            return true;
    return false;
}

/* end_with_child: kills what the run left behind, the child's process group,
 * then (Linux) whatever came back to us as an orphan, round after round, as
 * killing one orphan re-parents its own children to us. */
static void sweep(pid_t group, const reaper *r)
{
    kill(-group, SIGKILL);
#ifdef __linux__
    /* Its children come back to us only once it has ended; not collected
     * yet (WNOWAIT): the caller reads its status. */
    siginfo_t si;
    while (waitid(P_PID, (id_t)group, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    for (int round = 0; r->prior_complete && round < 64; round++) {
        pid_t pids[REAP_MAX];
        size_t n = children(group, pids, REAP_MAX), swept = 0;
        for (size_t i = 0; i < n; i++) {
            if (prior_child(r, pids[i]))
                continue;
            kill(pids[i], SIGKILL);
            while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
                ;
            swept++;
        }
        if (!swept)
            break;
    }
#else
    (void)r;
#endif
}

static void close_all(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0) {
            close(fds[i]);
            fds[i] = -1;
        }
}

/* In the child: `fd` becomes `target`, open across exec. dup2 onto itself
 * would keep close-on-exec set (a pipe end that is already 0, 1 or 2 when
 * the caller runs with that stream closed). */
static void onto(int fd, int target)
{
    if (fd == target)
        fcntl(fd, F_SETFD, 0);
    else
        dup2(fd, target);
}

/* Whether the child has ended; not collected (WNOWAIT), so that its pid,
 * and with it its group id, cannot be reused before the sweep. */
static bool ended(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

aitk_status aitk_proc_run(const char *const *argv, const aitk_proc_opts *opts,
                          aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                          aitk_str *err)
{
    static const aitk_proc_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    memset(res, 0, sizeof *res);
    size_t cap = opts->max_output ? opts->max_output : (1u << 20);
    const bool with_child = opts->end_with_child;

    /* stdout, stderr, stdin and exec-status pipes: read end, write end each. */
    enum { OUT_R, OUT_W, ERR_R, ERR_W, IN_R, IN_W, EXEC_R, EXEC_W, NFDS };
    int fds[NFDS] = {-1, -1, -1, -1, -1, -1, -1, -1};
    /* Close-on-exec: the child keeps only its copies on 0-2 (dup2 clears
     * the flag there). */
    if (pipe2(fds + OUT_R, O_CLOEXEC) || pipe2(fds + ERR_R, O_CLOEXEC) ||
        pipe2(fds + IN_R, O_CLOEXEC) || pipe2(fds + EXEC_R, O_CLOEXEC)) {
        if (err)
            aitk_str_appendf(err, "pipe: %s", strerror(errno));
        close_all(fds, NFDS);
        return AITK_E_EXEC;
    }
    reaper reap;
    if (with_child)
        reaper_start(&reap);
    double t0 = aitk_clock_ms();
    pid_t pid = fork();
    if (pid < 0) {
        if (err)
            aitk_str_appendf(err, "fork: %s", strerror(errno));
        if (with_child)
            reaper_end(&reap);
        close_all(fds, NFDS);
        return AITK_E_EXEC;
    }
    if (pid == 0) {
        setpgid(0, 0);
        onto(fds[IN_R], 0);
        onto(fds[OUT_W], 1);
        onto(fds[ERR_W], 2);
        if (opts->cwd && chdir(opts->cwd) != 0) {
            int e = errno;
            (void)!write(fds[EXEC_W], &e, sizeof e);
            _exit(127);
        }
        if (opts->env)
            execvpe(argv[0], (char *const *)argv, (char *const *)opts->env);
        else
            execvp(argv[0], (char *const *)argv);
        int e = errno;
        (void)!write(fds[EXEC_W], &e, sizeof e);
        _exit(127);
    }
    setpgid(pid, pid); /* both sides set it: no window in which a kill misses it */
    close(fds[OUT_W]);
    close(fds[ERR_W]);
    close(fds[IN_R]);
    close(fds[EXEC_W]);
    fds[OUT_W] = fds[ERR_W] = fds[IN_R] = fds[EXEC_W] = -1;

    /* The exec pipe closes on a successful exec and carries errno otherwise. */
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(fds[EXEC_R], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    if (opts->stdin_text && got <= 0) {
        /* Small inputs only (a pipe buffer); the callers send a few lines. */
        signal(SIGPIPE, SIG_IGN);
        (void)!write(fds[IN_W], opts->stdin_text, strlen(opts->stdin_text));
    }
    close(fds[IN_W]);
    fds[IN_W] = -1;

    fcntl(fds[OUT_R], F_SETFL, fcntl(fds[OUT_R], F_GETFL) | O_NONBLOCK);
    fcntl(fds[ERR_R], F_SETFL, fcntl(fds[ERR_R], F_GETFL) | O_NONBLOCK);
    bool o_open = true, e_open = true;
    for (;;) {
        if (with_child && ended(pid)) {
            /* What it wrote is in the pipes: take it and stop, whoever else
             * still holds them. */
            drain(fds[OUT_R], out, cap, &o_open);
            drain(fds[ERR_R], errout, cap, &e_open);
            break;
        }
        if (!with_child && !o_open && !e_open)
            break;
        double left = opts->timeout_ms > 0 ? opts->timeout_ms - (aitk_clock_ms() - t0) : 1e9;
        if (left <= 0) {
            res->timed_out = true;
            break;
        }
        /* With end_with_child, wake every 20 ms to notice the child's end
         * while a helper keeps the pipes open and quiet. */
        int wait_ms = opts->timeout_ms > 0 ? (int)left + 1 : -1;
        if (with_child && (wait_ms < 0 || wait_ms > 20))
            wait_ms = 20;
        struct pollfd p[2] = {{o_open ? fds[OUT_R] : -1, POLLIN, 0},
                              {e_open ? fds[ERR_R] : -1, POLLIN, 0}};
        int n = poll(p, 2, wait_ms);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0) {
            if (p[0].revents)
                drain(fds[OUT_R], out, cap, &o_open);
            if (p[1].revents)
                drain(fds[ERR_R], errout, cap, &e_open);
        }
    }
    close_all(fds, NFDS);

    int wst = 0;
    if (with_child) {
        sweep(pid, &reap); /* the group and any orphans; the child too when it timed out */
        reaper_end(&reap);
        while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
            ;
    } else if (res->timed_out) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
            ;
    } else {
        /* Output closed; the child may still be running (it closed its
         * streams early): keep honouring the deadline. */
        for (;;) {
            pid_t w = waitpid(pid, &wst, WNOHANG);
            if (w != 0 && !(w < 0 && errno == EINTR))
                break;
            if (opts->timeout_ms > 0 && aitk_clock_ms() - t0 > opts->timeout_ms) {
                res->timed_out = true;
                kill(-pid, SIGKILL);
                while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
                    ;
                break;
            }
            aitk_sleep_ms(2);
        }
    }
    res->wall_ms = aitk_clock_ms() - t0;
    if (WIFEXITED(wst)) {
        res->exited = true;
        res->exit_code = WEXITSTATUS(wst);
    } else if (WIFSIGNALED(wst)) {
        res->term_signal = WTERMSIG(wst);
    }
    if (got > 0) {
        if (err)
            aitk_str_appendf(err, "%s: %s", argv[0], strerror(exec_errno));
        return AITK_E_EXEC;
    }
    if (res->timed_out) {
        if (err)
            aitk_str_appendf(err, "%s: killed after %ld ms", argv[0], opts->timeout_ms);
        return AITK_E_TIMEOUT;
    }
    return AITK_OK;
}
#endif
