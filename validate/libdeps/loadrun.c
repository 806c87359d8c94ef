/* The `deps --load` child runner (loadrun.h): ends when the loading process
 * ends, and leaves nothing it started running. */
#include "validate/libdeps/loadrun.h"

#ifdef _WIN32
aitk_status aitk_deps_load_run(const char *const *argv, long timeout_ms, size_t max_output,
                               aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                               aitk_str *err)
{
    /* The job object ends every process of the tree when the run ends. A
     * helper holding the pipes delays the answer up to the limit there,
     * but does not change it (see common/proc.c). */
    aitk_proc_opts o = {.timeout_ms = timeout_ms, .max_output = max_output};
    return aitk_proc_run(argv, &o, res, out, errout, err);
}
#else
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

/* Everything readable now, without blocking; *open is cleared at EOF. */
static void drain(int fd, aitk_str *sink, size_t cap, bool *open)
{
    char buf[8192];
    while (*open) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            if (sink && sink->len < cap)
                aitk_str_appendn(sink, buf, sink->len + (size_t)n > cap ? cap - sink->len
                                                                        : (size_t)n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            if (n == 0 || errno != EAGAIN)
                *open = false;
            return;
        }
    }
}

#ifdef __linux__
/* Our children's pids from /proc but `child`: after the loading process
 * ended, only processes it left behind (re-parented to us as subreaper). */
static size_t orphans(pid_t child, pid_t *pids, size_t cap)
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
        const char *close = strrchr(line, ')');
        int ppid = 0;
        if (close && sscanf(close + 1, " %*c %d", &ppid) == 1 && ppid == self)
            pids[n++] = (pid_t)pid;
    }
    closedir(dir);
    return n;
}
#endif

/* Kills what the run left behind: the child's process group, then (Linux)
 * whatever came back to us as an orphan, round after round, as killing one
 * orphan re-parents its own children to us. */
static void sweep(pid_t group)
{
    kill(-group, SIGKILL);
#ifdef __linux__
    /* Its children come back to us only once it has ended; not collected
     * yet (WNOWAIT): the caller reads its status. */
    siginfo_t si;
    while (waitid(P_PID, (id_t)group, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    for (int round = 0; round < 64; round++) {
        pid_t pids[256];
        size_t n = orphans(group, pids, 256);
        if (!n)
            break;
        for (size_t i = 0; i < n; i++) {
            kill(pids[i], SIGKILL);
            while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
                ;
        }
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
#endif
}

static void close_all(const int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

aitk_status aitk_deps_load_run(const char *const *argv, long timeout_ms, size_t max_output,
                               aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                               aitk_str *err)
{
    memset(res, 0, sizeof *res);
    size_t cap = max_output ? max_output : (1u << 20);
    /* out, err, exec-status pipes: read end, write end each. */
    int fds[6] = {-1, -1, -1, -1, -1, -1};
    if (pipe(fds) || pipe(fds + 2) || pipe(fds + 4)) {
        aitk_str_appendf(err, "pipe: %s", strerror(errno));
        close_all(fds, 6);
        return AITK_E_EXEC;
    }
    for (int i = 0; i < 6; i++)
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
#ifdef __linux__
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
    double t0 = aitk_clock_ms();
    pid_t pid = fork();
    if (pid < 0) {
        aitk_str_appendf(err, "fork: %s", strerror(errno));
        close_all(fds, 6);
        return AITK_E_EXEC;
    }
    if (pid == 0) {
        setpgid(0, 0);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        dup2(fds[1], 1); /* dup2 clears close-on-exec on the copies */
        dup2(fds[3], 2);
        execv(argv[0], (char *const *)argv);
        int e = errno;
        (void)!write(fds[5], &e, sizeof e);
        _exit(127);
    }
    setpgid(pid, pid); /* both sides: no window in which a kill misses it */
    close(fds[1]);
    close(fds[3]);
    close(fds[5]);
    fds[1] = fds[3] = fds[5] = -1;
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(fds[4], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    fcntl(fds[2], F_SETFL, fcntl(fds[2], F_GETFL) | O_NONBLOCK);

    bool o_open = true, e_open = true, ended = false;
    while (!ended) {
        /* Ended, but not yet collected (WNOWAIT): its pid, and so its
         * group id, cannot be reused before the sweep below. */
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) {
            ended = true; /* what it wrote is in the pipes: take it and stop */
            drain(fds[0], out, cap, &o_open);
            drain(fds[2], errout, cap, &e_open);
            break;
        }
        double left = timeout_ms > 0 ? timeout_ms - (aitk_clock_ms() - t0) : 1e9;
        if (left <= 0) {
            res->timed_out = true;
            break;
        }
        /* Wake at least every 20 ms to notice the child's end while a
         * helper keeps the pipes open and quiet. */
        struct pollfd p[2] = {{o_open ? fds[0] : -1, POLLIN, 0}, {e_open ? fds[2] : -1, POLLIN, 0}};
        int n = poll(p, 2, left < 20 ? (int)left + 1 : 20);
        if (n > 0) {
            if (p[0].revents)
                drain(fds[0], out, cap, &o_open);
            if (p[1].revents)
                drain(fds[2], errout, cap, &e_open);
        }
    }
    sweep(pid); /* the group and any orphans; the child too when it timed out */
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    res->wall_ms = aitk_clock_ms() - t0;
    if (WIFEXITED(wst)) {
        res->exited = !res->timed_out;
        res->exit_code = WEXITSTATUS(wst);
    } else if (WIFSIGNALED(wst) && !res->timed_out) {
        res->term_signal = WTERMSIG(wst);
    }
    close_all(fds, 6);
    if (got > 0) {
        aitk_str_appendf(err, "%s: %s", argv[0], strerror(exec_errno));
        return AITK_E_EXEC;
    }
    if (res->timed_out) {
        aitk_str_appendf(err, "%s: killed after %ld ms", argv[0], timeout_ms);
        return AITK_E_TIMEOUT;
    }
    return AITK_OK;
}
#endif
