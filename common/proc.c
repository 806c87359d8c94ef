/* Subprocess with timeout: fork + exec, poll on two pipes, kill the group on timeout. */
#ifndef _WIN32
#define _GNU_SOURCE
#endif
#include "common/proc.h"

#include <string.h>

#include "common/clock.h"

#ifdef _WIN32
aitk_status aitk_proc_run(const char *const *argv, const aitk_proc_opts *opts,
                          aitk_proc_result *res, aitk_str *out, aitk_str *errout,
                          aitk_str *err)
{
    (void)argv; (void)opts; (void)out; (void)errout;
    memset(res, 0, sizeof *res);
    if (err)
        aitk_str_append(err, "running subprocesses is not implemented on Windows yet");
    return AITK_E_UNSUPPORTED;
}
#else
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void drain(int fd, aitk_str *sink, size_t cap, bool *open_flag)
{
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
        if (sink && sink->len < cap) {
            size_t take = (size_t)n;
            if (sink->len + take > cap)
                take = cap - sink->len;
            aitk_str_appendn(sink, buf, take);
        }
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        *open_flag = false;
    }
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

    int po[2], pe[2], pin[2], pexec[2];
    if (pipe(po) || pipe(pe) || pipe(pin) || pipe2(pexec, O_CLOEXEC)) {
        if (err)
            aitk_str_appendf(err, "pipe: %s", strerror(errno));
        return AITK_E_EXEC;
    }
    double t0 = aitk_clock_ms();
    pid_t pid = fork();
    if (pid < 0) {
        if (err)
            aitk_str_appendf(err, "fork: %s", strerror(errno));
        close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
        close(pin[0]); close(pin[1]); close(pexec[0]); close(pexec[1]);
        return AITK_E_EXEC;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(pin[0], 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]); close(pe[0]); close(pin[1]); close(pexec[0]);
        if (opts->cwd && chdir(opts->cwd) != 0) {
            int e = errno;
            (void)!write(pexec[1], &e, sizeof e);
            _exit(127);
        }
        if (opts->env)
            execvpe(argv[0], (char *const *)argv, (char *const *)opts->env);
        else
            execvp(argv[0], (char *const *)argv);
        int e = errno;
        (void)!write(pexec[1], &e, sizeof e);
        _exit(127);
    }
    close(po[1]); close(pe[1]); close(pin[0]); close(pexec[1]);
    setpgid(pid, pid); /* both sides set it: no race with the kill below */

    /* The exec pipe closes on a successful exec and carries errno otherwise. */
    int exec_errno = 0;
    ssize_t got;
    do
        got = read(pexec[0], &exec_errno, sizeof exec_errno);
    while (got < 0 && errno == EINTR);
    close(pexec[0]);

    if (opts->stdin_text && got <= 0) {
        /* Small inputs only (a pipe buffer); the callers send a few lines. */
        signal(SIGPIPE, SIG_IGN);
        (void)!write(pin[1], opts->stdin_text, strlen(opts->stdin_text));
    }
    close(pin[1]);

    bool o_open = true, e_open = true;
    int fl;
    fl = fcntl(po[0], F_GETFL); fcntl(po[0], F_SETFL, fl | O_NONBLOCK);
    fl = fcntl(pe[0], F_GETFL); fcntl(pe[0], F_SETFL, fl | O_NONBLOCK);
    while (o_open || e_open) {
        struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
        int wait_ms = -1;
        if (opts->timeout_ms > 0) {
            double left = opts->timeout_ms - (aitk_clock_ms() - t0);
            if (left <= 0) {
                res->timed_out = true;
                break;
            }
            wait_ms = (int)left + 1;
        }
        int n = poll(fds, 2, wait_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (o_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
            drain(po[0], out, cap, &o_open);
        if (e_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
            drain(pe[0], errout, cap, &e_open);
    }
    if (res->timed_out)
        kill(-pid, SIGKILL);
    close(po[0]);
    close(pe[0]);

    int wst = 0;
    pid_t w;
    if (res->timed_out) {
        do
            w = waitpid(pid, &wst, 0);
        while (w < 0 && errno == EINTR);
    } else {
        /* Output closed; the child may still be running (it closed its
         * streams early): keep honouring the deadline. */
        for (;;) {
            w = waitpid(pid, &wst, WNOHANG);
            if (w != 0)
                break;
            if (opts->timeout_ms > 0 && aitk_clock_ms() - t0 > opts->timeout_ms) {
                res->timed_out = true;
                kill(-pid, SIGKILL);
                waitpid(pid, &wst, 0);
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
