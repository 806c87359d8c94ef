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

#include "common/alloc.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/str.h"

#define FX AITK_LIBDEPS_FIXTURES
#define FX_TORCH FX "/pe/env/Lib/site-packages/torch/lib"
#define FX_WINROOT FX "/pe/winroot"

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
    aitk_proc_opts o = {.timeout_ms = 60000, .max_output = 16u << 20};
    aitk_proc_result r = {0};
    aitk_str err = AITK_STR_INIT, errout = AITK_STR_INIT;
    aitk_status st = aitk_proc_run(argv, &o, &r, out, &errout, &err);
    if (st || !r.exited)
        fprintf(stderr, "%s: %s %s\n", argv[0], aitk_str_cstr(&err), aitk_str_cstr(&errout));
    aitk_str_free(&err);
    aitk_str_free(&errout);
    return st || !r.exited ? -1 : r.exit_code;
}

static inline uint32_t fx_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

#endif
