/* Subprocess with timeout on POSIX (proc.h): fork + exec, poll on two
 * pipes, kill the group on timeout or on a stop request (and, with
 * end_with_child, whatever the child left behind). The Windows side is
 * proc_win.c. */
#define _GNU_SOURCE
#include "common/proc.h"
#include "common/proc_platform.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "common/clock.h"
#include "common/stop.h"

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

/* stdout, stderr, stdin and exec-status pipes: read end, write end each. */
enum { OUT_R, OUT_W, ERR_R, ERR_W, IN_R, IN_W, EXEC_R, EXEC_W, NFDS };

/* In the child, after fork: the pipes onto 0-2, then exec. A failure
 * (chdir or exec) goes back to the parent as errno on the exec pipe. */
static _Noreturn void child_exec(const char *const *argv, const aitk_proc_opts *opts,
                                 const int *fds)
{
    setpgid(0, 0);
    /* An ignored signal stays ignored across exec; the caller may ignore
     * SIGPIPE for itself (validate/run.c, exec_outcome), and the programs it
     * runs should get theirs as from a shell. */
    signal(SIGPIPE, SIG_DFL);
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

/* The pipes, then the child in its own process group. On AITK_OK the
 * parent holds only its ends (OUT_R, ERR_R, IN_W, EXEC_R). */
static aitk_status spawn(const char *const *argv, const aitk_proc_opts *opts, int *fds,
                         reaper *reap, pid_t *pid, double *t0, aitk_str *err)
{
    /* Close-on-exec: the child keeps only its copies on 0-2 (dup2 clears
     * the flag there). */
    if (pipe2(fds + OUT_R, O_CLOEXEC) || pipe2(fds + ERR_R, O_CLOEXEC) ||
        pipe2(fds + IN_R, O_CLOEXEC) || pipe2(fds + EXEC_R, O_CLOEXEC)) {
        if (err)
            aitk_str_appendf(err, "pipe: %s", strerror(errno));
        close_all(fds, NFDS);
        return AITK_E_EXEC;
    }
    if (opts->end_with_child)
        reaper_start(reap);
    *t0 = aitk_clock_ms(); /* the run's time starts at the fork */
    *pid = fork();
    if (*pid < 0) {
        if (err)
            aitk_str_appendf(err, "fork: %s", strerror(errno));
        if (opts->end_with_child)
            reaper_end(reap);
        close_all(fds, NFDS);
        return AITK_E_EXEC;
    }
    if (*pid == 0)
        child_exec(argv, opts, fds);
    setpgid(*pid, *pid); /* both sides set it: no window in which a kill misses it */
    close(fds[OUT_W]);
    close(fds[ERR_W]);
    close(fds[IN_R]);
    close(fds[EXEC_W]);
    fds[OUT_W] = fds[ERR_W] = fds[IN_R] = fds[EXEC_W] = -1;
    return AITK_OK;
}

/* Waits for the exec (the exec pipe closes on success and carries errno
 * otherwise), then gives a started child its stdin. Returns what the read
 * of the exec pipe returned: > 0 when the exec failed, with *exec_errno. */
static ssize_t exec_outcome(const aitk_proc_opts *opts, int *fds, int *exec_errno)
{
    ssize_t got;
    while ((got = read(fds[EXEC_R], exec_errno, sizeof *exec_errno)) < 0 && errno == EINTR)
        ;
    if (opts->stdin_text && got <= 0) {
        /* Small inputs only (a pipe buffer); the callers send a few lines. */
        signal(SIGPIPE, SIG_IGN);
        (void)!write(fds[IN_W], opts->stdin_text, strlen(opts->stdin_text));
    }
    close(fds[IN_W]);
    fds[IN_W] = -1;
    return got;
}

/* A stop request while the child runs: SIGTERM to its group the first time
 * it is seen (res->interrupted), then true, to stop waiting, once the grace
 * has passed; collect() kills what is left. */
static bool stop_child(pid_t pid, double *since, aitk_proc_result *res)
{
    if (!aitk_stop_requested())
        return false;
    if (!res->interrupted) {
        res->interrupted = true;
        *since = aitk_clock_ms();
        kill(-pid, SIGTERM);
        return false;
    }
    return aitk_clock_ms() - *since >= AITK_PROC_STOP_GRACE_MS;
}

/* Reads both output pipes until they close (or, with end_with_child, until
 * the child ends), the deadline passes (res->timed_out) or a stop request's
 * grace runs out (res->interrupted). */
static void pump_output(pid_t pid, const aitk_proc_opts *opts, const int *fds, double t0,
                        aitk_str *out, aitk_str *errout, aitk_proc_result *res)
{
    const size_t cap = opts->max_output ? opts->max_output : (1u << 20);
    const bool with_child = opts->end_with_child;
    fcntl(fds[OUT_R], F_SETFL, fcntl(fds[OUT_R], F_GETFL) | O_NONBLOCK);
    fcntl(fds[ERR_R], F_SETFL, fcntl(fds[ERR_R], F_GETFL) | O_NONBLOCK);
    bool o_open = true, e_open = true;
    double stop_since = 0;
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
        if (stop_child(pid, &stop_since, res))
            break;
        double left = opts->timeout_ms > 0 ? opts->timeout_ms - (aitk_clock_ms() - t0) : 1e9;
        if (left <= 0) {
            res->timed_out = true;
            break;
        }
        /* With end_with_child, wake every 20 ms to notice the child's end
         * while a helper keeps the pipes open and quiet; else every 50 ms,
         * to see a stop request whose signal another thread took (poll is
         * not interrupted then). */
        int wait_ms = opts->timeout_ms > 0 ? (int)left + 1 : -1;
        const int wake_ms = with_child ? 20 : 50;
        if (wait_ms < 0 || wait_ms > wake_ms)
            wait_ms = wake_ms;
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
}

/* The process group of the program running now (its pid), 0 when none:
 * read by aitk_proc_kill_running from a signal handler. */
static volatile sig_atomic_t running_group;

void aitk_proc_kill_running(void)
{
    pid_t group = (pid_t)running_group;
    if (group > 0)
        kill(-group, SIGKILL);
}

static void kill_and_wait(pid_t pid, int *wst)
{
    kill(-pid, SIGKILL);
    while (waitpid(pid, wst, 0) < 0 && errno == EINTR)
        ;
}

/* Collects the child's status: after the sweep with end_with_child, after
 * killing its group on a timeout or a stop request, else still within the
 * deadline. */
static int collect(pid_t pid, const aitk_proc_opts *opts, const reaper *reap, double t0,
                   aitk_proc_result *res)
{
    int wst = 0;
    if (opts->end_with_child) {
        sweep(pid, reap); /* the group and any orphans; the child too when it timed out */
        reaper_end(reap);
        while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
            ;
    } else if (res->timed_out || res->interrupted) {
        kill_and_wait(pid, &wst);
    } else {
        /* Output closed; the child may still be running (it closed its
         * streams early): keep honouring the deadline. */
        for (;;) {
            pid_t w = waitpid(pid, &wst, WNOHANG);
            if (w != 0 && !(w < 0 && errno == EINTR))
                break;
            if (opts->timeout_ms > 0 && aitk_clock_ms() - t0 > opts->timeout_ms) {
                res->timed_out = true;
                kill_and_wait(pid, &wst);
                break;
            }
            aitk_sleep_ms(2);
        }
    }
    return wst;
}

/* A program named by a relative path with a folder in it ("venv/bin/python")
 * names a file from this process's folder, as CreateProcess reads it on
 * Windows; the child's exec runs after its chdir to opts->cwd, so such a
 * path is made absolute here first (links kept: a venv's python is a link,
 * and only its own path makes Python find the venv). NULL when argv[0]
 * needs nothing, or when memory ran out (then it is run as given). */
static char *program_from_here(const char *const *argv, const aitk_proc_opts *opts)
{
    if (!opts->cwd || argv[0][0] == '/' || !strchr(argv[0], '/'))
        return NULL;
    char *cwd = getcwd(NULL, 0);
    char *path = cwd ? malloc(strlen(cwd) + strlen(argv[0]) + 2) : NULL;
    if (path)
        sprintf(path, "%s/%s", cwd, argv[0]);
    free(cwd);
    return path;
}

aitk_status aitk_proc_run_platform(const char *const *argv, const aitk_proc_opts *opts,
                                   aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                                   aitk_str *err)
{
    int fds[NFDS] = {-1, -1, -1, -1, -1, -1, -1, -1};
    reaper reap;
    pid_t pid;
    double t0 = 0;
    size_t argc = 0;
    while (argv[argc])
        argc++;
    char *program = program_from_here(argv, opts);
    const char **run = program ? malloc((argc + 1) * sizeof *run) : NULL;
    if (run) {
        memcpy(run, argv, (argc + 1) * sizeof *run);
        run[0] = program;
    }
    aitk_status st = spawn(run ? run : argv, opts, fds, &reap, &pid, &t0, err);
    free(run);
    free(program);
    if (st)
        return st;
    running_group = (sig_atomic_t)pid;
    int exec_errno = 0;
    ssize_t got = exec_outcome(opts, fds, &exec_errno);
    pump_output(pid, opts, fds, t0, out, errout, res);
    close_all(fds, NFDS);
    int wst = collect(pid, opts, &reap, t0, res);
    running_group = 0;
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
    return res->timed_out     ? AITK_E_TIMEOUT
           : res->interrupted ? AITK_E_INTERRUPTED
                              : AITK_OK;
}
