/* Helpers shared by the reports.* tests: load the synthetic fixture, read
 * and write files, run the real aitk-validate binary. Test code only. */
#ifndef AITK_TESTS_REPORT_TEST_UTIL_H
#define AITK_TESTS_REPORT_TEST_UTIL_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/str.h"
#include "reports/report.h"
#include "tests/proc_start.h"
#include "tests/test_time.h"

#define FIXTURE AITK_SOURCE_DIR "/tests/reports/fixtures/synthetic-report.json"

/* The whole file as a NUL-terminated string (free with aitk_free); NULL if unreadable. */
static inline char *rt_read(const char *path)
{
    char *data = NULL;
    size_t len = 0;
    if (aitk_file_read(path, 64u << 20, &data, &len, NULL))
        return NULL;
    return data;
}

static inline cJSON *rt_load(const char *path)
{
    char *text = rt_read(path);
    if (!text)
        return NULL;
    cJSON *r = NULL;
    aitk_report_parse(path, text, strlen(text), &r, NULL);
    aitk_free(text);
    return r;
}

static inline int rt_write_json(const char *path, const cJSON *tree)
{
    char *text = cJSON_Print(tree);
    if (!text)
        return -1;
    int rc = aitk_file_write_atomic(path, text, strlen(text), NULL) ? -1 : 0;
    cJSON_free(text);
    return rc;
}

static inline size_t rt_count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* A fresh folder under the test reports folder. */
static inline void rt_dir(aitk_str *out, const char *name)
{
    aitk_str_clear(out);
    aitk_str_appendf(out, "%s/%s", AITK_TEST_REPORTS, name);
    aitk_dir_create(aitk_str_cstr(out), NULL);
}

/* Runs argv; returns the exit code, or -1 when it did not exit normally. */
static inline int rt_run(const char *const *argv, const char *const *env, aitk_str *out,
                         aitk_str *errout)
{
    aitk_proc_opts opts = {.timeout_ms = aitk_test_ms(180000), .env = env};
    aitk_proc_result res = {0};
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_test_proc_run(argv, &opts, &res, out, errout, &err);
    /* A run that did not exit normally says why, so an intermittent
     * failure (seen once under Wine) can be read from the test log. */
    if (st || !res.exited)
        fprintf(stderr, "rt_run %s: %s%s\n", argv[0],
                st ? aitk_str_cstr(&err) : "did not exit normally",
                res.timed_out ? " (timed out)" : "");
    aitk_str_free(&err);
    if (st || !res.exited)
        return -1;
    return res.exit_code;
}

/* The first of `names` (NULL-terminated) found as a program on PATH, or
 * NULL: for the tests that judge a report with an outside tool (a browser,
 * GitHub's Markdown renderer). The path stays valid until the next call. */
static inline const char *rt_which(const char *const *names)
{
    static aitk_str path;
    const char *env_path = getenv("PATH");
    for (size_t i = 0; names[i]; i++) {
        for (const char *p = env_path ? env_path : "/usr/bin"; *p;) {
            size_t n = strcspn(p, ":");
            aitk_str_clear(&path);
            aitk_str_appendf(&path, "%.*s/%s", (int)n, p, names[i]);
            if (access(path.ptr, X_OK) == 0)
                return path.ptr;
            p += n;
            if (*p == ':')
                p++;
        }
    }
    return NULL;
}

static inline int rt_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

#endif
