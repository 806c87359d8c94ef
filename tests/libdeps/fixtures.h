/* Shared by the libdeps tests: where the fixtures are (built at test time by
 * make_fixtures.sh, the CTest setup `libdeps.fixtures`), reading a whole
 * file, running a tool and a small deterministic random generator for the
 * corrupt-input tests. */
#ifndef AITK_TESTS_LIBDEPS_FIXTURES_H
#define AITK_TESTS_LIBDEPS_FIXTURES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/str.h"

#include "validate/libdeps/tree.h"
#include "tests/test_time.h"

#define FX AITK_LIBDEPS_FIXTURES
#define FX_TORCH FX "/pe/env/Lib/site-packages/torch/lib"
#define FX_WINROOT FX "/pe/winroot"

/* One whole analysis of `path` with the n-th allocation made to fail
 * (aitk_alloc_fail_after): the status it ends with, everything freed. */
static inline aitk_status fx_analyze_failing_at(const aitk_deps_opts *o, const char *path, long n)
{
    aitk_deps *d = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_dep_tree t;
    aitk_alloc_fail_after(n);
    aitk_status st = aitk_deps_new(o, &d, &err);
    if (!st) {
        st = aitk_deps_analyze(d, path, &t, &err);
        if (!st)
            aitk_dep_tree_free(&t);
    }
    aitk_alloc_fail_after(-1);
    aitk_deps_free(d);
    aitk_str_free(&err);
    return st;
}

static inline bool fx_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static inline unsigned char *fx_read(const char *path, size_t *len)
{
    char *data = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_file_read(path, (size_t)1 << 31, &data, len, &err) != AITK_OK) {
        fprintf(stderr, "cannot read %s: %s\n", path, aitk_str_cstr(&err));
        aitk_str_free(&err);
        return NULL;
    }
    aitk_str_free(&err);
    return (unsigned char *)data;
}

/* Runs a tool; its stdout in `out`. Returns the exit code, or -1. */
static inline int fx_run(const char *const *argv, aitk_str *out)
{
    aitk_proc_opts o = {.timeout_ms = aitk_test_ms(60000), .max_output = 16u << 20};
    aitk_proc_result r = {0};
    aitk_str err = AITK_STR_INIT, errout = AITK_STR_INIT;
    aitk_status st = aitk_proc_run(argv, &o, &r, out, &errout, &err);
    if (st || !r.exited)
        fprintf(stderr, "%s: %s %s\n", argv[0], aitk_str_cstr(&err), aitk_str_cstr(&errout));
    aitk_str_free(&err);
    aitk_str_free(&errout);
    return st || !r.exited ? -1 : r.exit_code;
}

/* Writes `n` bytes to dir/name (a file the test makes itself, as a user's
 * broken install has them); false when it cannot. */
static inline bool fx_put(const char *dir, const char *name, const void *data, size_t n)
{
    aitk_str path = AITK_STR_INIT;
    aitk_str_appendf(&path, "%s/%s", dir, name);
    FILE *f = fopen(aitk_str_cstr(&path), "wb");
    bool ok = f && fwrite(data, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = false;
    aitk_str_free(&path);
    return ok;
}

#ifdef __linux__
/* How often a file is opened, told by the kernel (inotify), whoever opens
 * it: this process or a child. fx_watch_opens before, fx_count_opens after;
 * -1 when inotify is not available. The kernel merges identical events
 * that follow each other unread, so two opens with nothing between them
 * would count once; reads (IN_ACCESS) are watched too, so that an open
 * after a read of the first bytes (a sniff, then a second open to read
 * the object) counts as the second open it is. */
static inline int fx_watch_opens(const char *path)
{
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd >= 0 && inotify_add_watch(fd, path, IN_OPEN | IN_ACCESS | IN_CLOSE) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static inline void fx_count_opens(int fd, int *opens, int *closes)
{
    *opens = *closes = 0;
    union {
        struct inotify_event e;
        char bytes[4096];
    } buf;
    ssize_t n;
    while ((n = read(fd, buf.bytes, sizeof buf.bytes)) > 0) {
        for (ssize_t at = 0; at < n;) {
            const struct inotify_event *e = (const struct inotify_event *)(buf.bytes + at);
            *opens += (e->mask & IN_OPEN) != 0;
            *closes += (e->mask & IN_CLOSE) != 0;
            at += (ssize_t)(sizeof *e + e->len);
        }
    }
}
#endif

static inline uint32_t fx_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

#endif
