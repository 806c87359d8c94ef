/* See libload.h: why every load of an examined library is another process. */
#include "common/libload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#endif

#include "common/alloc.h"
#include "common/dynload.h"
#include "common/proc.h"

#define MARK_LOAD "AITK-LOAD:"
#define MARK_VER "AITK-VER:"
#define MARK_VER_ERR "AITK-VER-ERR:"

static char *helper;

aitk_status aitk_libload_set_helper(const char *exe)
{
    char *copy = exe ? aitk_strdup(exe) : NULL;
    if (exe && !copy)
        return AITK_E_NOMEM;
    aitk_free(helper);
    helper = copy;
    return AITK_OK;
}

/* ---- the child ---------------------------------------------------------- */

typedef int (*fn_int_out)(int *);
typedef int (*fn_prop)(int, int *);
typedef size_t (*fn_size)(void);

/* The version functions the probes ask, by their documented signatures:
 * cudaRuntimeGetVersion(int *) and ncclGetVersion(int *) return 0 on
 * success; cublasGetProperty(libraryPropertyType, int *) with MAJOR_VERSION
 * 0, MINOR_VERSION 1, PATCH_LEVEL 2; cublasLtGetVersion and cudnnGetVersion
 * return a size_t. Values are printed raw: the caller knows each encoding. */
static int call_version(void *fn, const char *name, long v[3])
{
    if (strcmp(name, "cudaRuntimeGetVersion") == 0 || strcmp(name, "ncclGetVersion") == 0) {
        int x = 0;
        if (((fn_int_out)fn)(&x) != 0)
            return 0;
        v[0] = x;
        return 1;
    }
    if (strcmp(name, "cublasGetProperty") == 0) {
        int a = 0, b = 0, c = 0;
        if (((fn_prop)fn)(0, &a) || ((fn_prop)fn)(1, &b) || ((fn_prop)fn)(2, &c))
            return 0;
        v[0] = a, v[1] = b, v[2] = c;
        return 3;
    }
    if (strcmp(name, "cublasLtGetVersion") == 0 || strcmp(name, "cudnnGetVersion") == 0) {
        v[0] = (long)((fn_size)fn)();
        return 1;
    }
    return -1;
}

/* One line of text: a loader message may hold newlines. */
static void print_line(const char *mark, const char *text)
{
    fputs(mark, stdout);
    for (const char *p = text; *p; p++)
        putchar(*p == '\n' || *p == '\r' ? ' ' : *p);
    putchar('\n');
}

int aitk_libload_child(int argc, char **argv)
{
#ifdef _WIN32
    /* No "missing DLL" dialog: nobody would see it, the parent would wait. */
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
#endif
    if (argc < 1)
        _Exit(2);
    aitk_str err = AITK_STR_INIT, mapped = AITK_STR_INIT;
    aitk_dl *dl = NULL;
    aitk_status st = AITK_OK;
    /* Libraries the process loaded before (aitk_libload_probe_after): kept
     * open, so the library's links bind to them as they would there. */
    for (int i = 2; i < argc && !st; i++) {
        aitk_dl *pre = NULL;
        if ((st = aitk_dl_open(argv[i], AITK_DL_DEFAULT, &pre, &err)) != AITK_OK) {
            aitk_str msg = AITK_STR_INIT;
            aitk_str_appendf(&msg, "loading %s before it: %s", argv[i], aitk_str_cstr(&err));
            aitk_str_clear(&err);
            aitk_str_append(&err, aitk_str_cstr(&msg));
            aitk_str_free(&msg);
        }
    }
    if (!st)
        st = aitk_dl_open(argv[0], AITK_DL_DEFAULT, &dl, &err);
    putchar('\n'); /* on a fresh line: a constructor may have left one unfinished */
    if (st) {
        print_line(MARK_LOAD "err\t", aitk_str_cstr(&err));
    } else {
        aitk_dl_path(dl, &mapped);
        print_line(MARK_LOAD "ok\t", aitk_str_cstr(&mapped));
    }
    fflush(stdout);
    if (!st && argc > 1 && argv[1][0]) {
        void *fn = NULL;
        long v[3] = {0};
        aitk_str_clear(&err);
        int n = 0;
        if (aitk_dl_sym(dl, argv[1], &fn, &err) == AITK_OK && (n = call_version(fn, argv[1], v)) > 0)
            printf(MARK_VER "%ld %ld %ld %d\n", v[0], v[1], v[2], n);
        else
            print_line(MARK_VER_ERR, err.len ? aitk_str_cstr(&err)
                                     : n < 0 ? "not a version function this program knows"
                                             : "the version function reported an error");
        fflush(stdout);
    }
    _Exit(st ? 1 : 0);
}

/* ---- the parent --------------------------------------------------------- */

/* The rest of the last line of `text` that starts with `mark`; NULL if none. */
static const char *find_mark(const char *text, const char *mark, size_t *len)
{
    const char *last = NULL;
    for (const char *p = text; (p = strstr(p, mark)) != NULL; p++)
        if (p == text || p[-1] == '\n')
            last = p;
    if (!last)
        return NULL;
    last += strlen(mark);
    *len = strcspn(last, "\r\n");
    return last;
}

/* The loader refused the file only for a symbol of Python's C API: it is an
 * extension module (libtorch_python.so), which links no libpython on
 * purpose and gets those symbols from the interpreter that imports it
 * (PEP 513, "libpythonX.Y.so.1" is not among the allowed libraries). */
static bool python_symbol_error(const char *err)
{
    const char *u = strstr(err, "undefined symbol: ");
    if (!u)
        return false;
    u += strlen("undefined symbol: ");
    return strncmp(u, "Py", 2) == 0 || strncmp(u, "_Py", 3) == 0;
}

static void read_answer(const aitk_str *out, aitk_libload *r)
{
    size_t n = 0;
    const char *load = find_mark(aitk_str_cstr(out), MARK_LOAD, &n);
    if (load && n >= 3 && strncmp(load, "ok\t", 3) == 0) {
        r->loaded = true;
        aitk_str_appendn(&r->mapped, load + 3, n - 3);
    } else if (load && n >= 4 && strncmp(load, "err\t", 4) == 0) {
        aitk_str_appendn(&r->error, load + 4, n - 4);
        r->python_ext = python_symbol_error(aitk_str_cstr(&r->error));
    }
    const char *ver = find_mark(aitk_str_cstr(out), MARK_VER, &n);
    if (ver && sscanf(ver, "%ld %ld %ld %d", &r->values[0], &r->values[1], &r->values[2],
                      &r->n_values) != 4)
        r->n_values = 0;
    const char *verr = find_mark(aitk_str_cstr(out), MARK_VER_ERR, &n);
    if (verr)
        aitk_str_appendn(&r->fn_error, verr, n);
}

/* How the process ended when it gave no loader verdict. */
static void describe_end(aitk_status st, const aitk_proc_result *res, long timeout_ms,
                         const aitk_str *errout, aitk_libload *r)
{
    if (st == AITK_E_TIMEOUT)
        aitk_str_appendf(&r->error, "the loader did not finish within %ld s (a library "
                                    "constructor that waits or loops?); it was stopped",
                         timeout_ms / 1000);
    else if (res->term_signal)
        aitk_str_appendf(&r->error, "the loading process was killed by signal %d",
                         res->term_signal);
    else
        aitk_str_appendf(&r->error, "the loading process ended with status %d and no verdict",
                         res->exit_code);
    const char *t = aitk_str_cstr(errout);
    size_t end = errout->len;
    while (end && (t[end - 1] == '\n' || t[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start && t[start - 1] != '\n')
        start--;
    if (end > start)
        aitk_str_appendf(&r->error, "; its last error output: %.*s", (int)(end - start), t + start);
}

static aitk_status probe_argv(const char *const *argv, long timeout_ms, aitk_libload *r,
                              aitk_str *err);

aitk_status aitk_libload_probe(const char *path, const char *fn, long timeout_ms,
                               aitk_libload *r, aitk_str *err)
{
    const char *argv[] = {helper, AITK_LIBLOAD_CHILD_ARG, path, fn, NULL};
    return probe_argv(argv, timeout_ms, r, err);
}

aitk_status aitk_libload_probe_after(const char *path, const char *const *before,
                                     size_t n_before, long timeout_ms, aitk_libload *r,
                                     aitk_str *err)
{
    const char **argv = aitk_calloc(n_before + 5, sizeof *argv);
    if (!argv)
        return AITK_E_NOMEM;
    argv[0] = helper;
    argv[1] = AITK_LIBLOAD_CHILD_ARG;
    argv[2] = path;
    argv[3] = ""; /* no version function */
    for (size_t i = 0; i < n_before; i++)
        argv[4 + i] = before[i];
    aitk_status st = probe_argv(argv, timeout_ms, r, err);
    aitk_free((void *)argv);
    return st;
}

static aitk_status probe_argv(const char *const *argv, long timeout_ms, aitk_libload *r,
                              aitk_str *err)
{
    memset(r, 0, sizeof *r);
    if (!helper) {
        aitk_str_append(err, "no loading process is configured in this program");
        return AITK_E_UNSUPPORTED;
    }
    /* The verdict is the loading process's: a helper a constructor forks
     * must neither hold the pipes open nor outlive the run. */
    const aitk_proc_opts po = {
        .timeout_ms = timeout_ms, .max_output = 64u << 10, .end_with_child = true};
    aitk_proc_result res = {0};
    aitk_str out = AITK_STR_INIT, errout = AITK_STR_INIT;
    aitk_status st = aitk_proc_run(argv, &po, &res, &out, &errout, err);
    if (st == AITK_OK || st == AITK_E_TIMEOUT) {
        if (st == AITK_OK)
            read_answer(&out, r);
        if (!r->loaded && !r->error.len)
            describe_end(st, &res, timeout_ms, &errout, r);
        st = AITK_OK;
    }
    if (!st && (aitk_str_status(&r->error) || aitk_str_status(&r->mapped) ||
                aitk_str_status(&r->fn_error)))
        st = AITK_E_NOMEM;
    aitk_str_free(&out);
    aitk_str_free(&errout);
    return st;
}

void aitk_libload_free(aitk_libload *r)
{
    aitk_str_free(&r->error);
    aitk_str_free(&r->mapped);
    aitk_str_free(&r->fn_error);
}
