/* OpenBLAS opened on first use (see blas.h for why it is not linked). */
#ifndef _WIN32
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#endif
#include "kernels/cpu/blas.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#if !defined(_WIN32)
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/dynload.h"
#endif

#if defined(_WIN32)

/* Static OpenBLAS (USE_OPENMP=1): nothing to open, nothing started at load. */
aitk_status aitk_cpu_blas_load(void)
{
    return AITK_OK;
}

const char *aitk_cpu_blas_error(void)
{
    return "";
}

void aitk_cpu_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *b, int ldb, float beta, float *c,
                    int ldc)
{
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
}

#else

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE,
                         blasint, blasint, blasint, float, const float *, blasint,
                         const float *, blasint, float, float *, blasint);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static aitk_status load_status = AITK_E_INTERNAL;
static char load_error[512];
static sgemm_fn sgemm;

enum {
    MIB = 1 << 20,
    /* What one OpenBLAS thread takes: its work buffer (BUFFER_SIZE, 128 MiB on
     * x86_64, plus a page: the 134221824-byte malloc seen under strace), the
     * glibc arena its first malloc creates (HEAP_MAX_SIZE, 64 MiB on 64-bit)
     * and its stack (8 MiB, the usual RLIMIT_STACK). */
    PER_THREAD_MIB = 128 + 1 + 64 + 8,
    /* The library and what it links (libopenblas.so.0 is 35 MiB, libgfortran
     * and libquadmath a few more), and glibc's 128 MiB attempt to align a new
     * arena, which it retries at 64 MiB when that fails. */
    FIXED_MIB = 64 + 64,
};

/* The thread count OpenBLAS will choose: the first of its three variables
 * that holds a positive number (OpenBLAS 0.3.21, driver/others/openblas_env.c),
 * at most the online CPUs. */
static long openblas_threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    static const char *const vars[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                       "OMP_NUM_THREADS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        long n = v ? strtol(v, NULL, 10) : 0;
        if (n > 0)
            return n < cpus ? n : cpus;
    }
    return cpus;
}

/* Whether `mib` MiB of address space can still be mapped: a PROT_NONE
 * reservation counts against RLIMIT_AS like any mapping, and is given back
 * at once. */
static bool room_for(long mib)
{
    size_t bytes = (size_t)mib * MIB;
    void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return false;
    munmap(p, bytes);
    return true;
}

/* Fewer threads when the address-space limit cannot hold one buffer each:
 * OpenBLAS reads OPENBLAS_NUM_THREADS in its constructor, which has not run
 * yet. Refuses when not even one thread fits, since OpenBLAS would then loop
 * for ever on its first allocation. */
static aitk_status fit_threads(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
        return AITK_OK;
    const long want = openblas_threads();
    long t = want;
    while (t > 0 && !room_for(FIXED_MIB + t * PER_THREAD_MIB))
        t--;
    if (t == 0) {
        snprintf(load_error, sizeof load_error,
                 "the address-space limit (ulimit -v %llu KiB) leaves less free than the "
                 "%d MiB OpenBLAS needs for one thread's buffers: raise the limit or lift it "
                 "(ulimit -v unlimited)",
                 (unsigned long long)(lim.rlim_cur / 1024), (int)(FIXED_MIB + PER_THREAD_MIB));
        return AITK_E_NOMEM;
    }
    if (t < want) {
        char n[24];
        snprintf(n, sizeof n, "%ld", t);
        if (setenv("OPENBLAS_NUM_THREADS", n, 1) != 0)
            return AITK_E_NOMEM;
    }
    return AITK_OK;
}

/* The library the build linked against first (pkg-config's libdir, which
 * the executable's RUNPATH used to name), then whatever the system's
 * alternatives make libopenblas.so.0. */
static aitk_status open_library(void)
{
    static const char *const names[] = {
#ifdef AITK_OPENBLAS_LIBDIR
        AITK_OPENBLAS_LIBDIR "/libopenblas.so.0",
#endif
        "libopenblas.so.0", "libopenblas.so", NULL};
    aitk_dl *dl = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_dl_open_first(names, AITK_DL_DEFAULT, &dl, NULL, &err);
    void *fn = NULL;
    if (!st)
        st = aitk_dl_sym(dl, "cblas_sgemm", &fn, &err);
    if (st) {
        snprintf(load_error, sizeof load_error, "OpenBLAS could not be loaded: %s",
                 err.len ? aitk_str_cstr(&err) : aitk_strerror(st));
        if (dl)
            aitk_dl_close(dl);
    } else {
        /* Its threads and buffers live until exit: never dlclose it. */
        aitk_dl_keep(dl);
        *(void **)&sgemm = fn;
    }
    aitk_str_free(&err);
    return st;
}

/* One product big enough for OpenBLAS to use every thread: when it returns,
 * each worker has taken its buffer, while the room checked above is still
 * free, and no later allocation of theirs can spin. */
static void warm_up(void)
{
    enum { N = 256 };
    float *m = calloc(3 * (size_t)N * N, sizeof *m);
    if (!m)
        return; /* the workers take their buffers anyway, at thread start */
    sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, m, N, m + N * N, N, 0.0f,
          m + 2 * N * N, N);
    free(m);
}

static void load_once(void)
{
    load_status = fit_threads();
    if (!load_status)
        load_status = open_library();
    if (!load_status)
        warm_up();
}

aitk_status aitk_cpu_blas_load(void)
{
    pthread_once(&once, load_once);
    return load_status;
}

const char *aitk_cpu_blas_error(void)
{
    return load_error;
}

void aitk_cpu_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *b, int ldb, float beta, float *c,
                    int ldc)
{
    sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
          trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

#endif
