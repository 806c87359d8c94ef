/* NCCL collectives across every visible GPU, for the multi-GPU check:
 * all-reduce, all-gather and reduce-scatter timed with device events the
 * way nccl-tests times them (one process driving all GPUs, a communicator
 * per GPU from ncclCommInitAll, one stream per GPU, each iteration one
 * ncclGroupStart/ncclGroupEnd over the GPUs; NCCL's documentation, "Using
 * multiple NCCL communicators concurrently" and "Group Calls",
 * docs.nvidia.com/deeplearning/nccl/user-guide). The bandwidth arithmetic
 * is the caller's (bench/collective_bw.h).
 *
 * Why dlopen and not a link: as with cuDNN (cudnn_api.c), libnccl is
 * a separate package (libnccl2, or the nvidia-nccl wheel torch brings) and
 * often absent. Linked, the whole plugin would fail to load on such a
 * machine and the report would lose every GPU figure; opened at run time,
 * only these checks say "libnccl.so.2 not found". nccl.h supplies the types
 * and constants at build time; this file is compiled only when CMake finds
 * it (kernels/cuda/CMakeLists.txt). Never run on a GPU in this project's
 * CI: see tests/gpu/test_gpu_collectives.c. */
#include <string.h>

#include <nccl.h>

#include "kernels/cuda/internal.h"
#include "kernels/cuda/runtime_lib.h"

static struct {
    void *lib;
    bool tried;
    char load_error[256];
    ncclResult_t (*GetVersion)(int *);
    const char *(*GetErrorString)(ncclResult_t);
    ncclResult_t (*CommInitAll)(ncclComm_t *, int, const int *);
    ncclResult_t (*CommDestroy)(ncclComm_t);
    ncclResult_t (*GroupStart)(void);
    ncclResult_t (*GroupEnd)(void);
    ncclResult_t (*AllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                              ncclComm_t, cudaStream_t);
    ncclResult_t (*AllGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                              cudaStream_t);
    ncclResult_t (*ReduceScatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                  ncclComm_t, cudaStream_t);
} nc;

/* What the communicator needs, per device; made by the first time call. */
static struct {
    int n;
    ncclComm_t comm[AITK_BACKEND_MAX_DEVICES];
    cudaStream_t stream[AITK_BACKEND_MAX_DEVICES];
    cudaEvent_t start[AITK_BACKEND_MAX_DEVICES], stop[AITK_BACKEND_MAX_DEVICES];
    void *send[AITK_BACKEND_MAX_DEVICES], *recv[AITK_BACKEND_MAX_DEVICES];
    size_t send_bytes, recv_bytes; /* what each device's buffers hold */
} co;

static bool load(void)
{
    if (nc.tried)
        return nc.lib != NULL;
    nc.tried = true;
    static const char *const names[] = {"libnccl.so.2", "libnccl.so"};
    const aitk_lib_symbol symbols[] = {
        {"ncclGetVersion", &nc.GetVersion},
        {"ncclGetErrorString", &nc.GetErrorString},
        {"ncclCommInitAll", &nc.CommInitAll},
        {"ncclCommDestroy", &nc.CommDestroy},
        {"ncclGroupStart", &nc.GroupStart},
        {"ncclGroupEnd", &nc.GroupEnd},
        {"ncclAllReduce", &nc.AllReduce},
        {"ncclAllGather", &nc.AllGather},
        {"ncclReduceScatter", &nc.ReduceScatter},
    };
    nc.lib = aitk_lib_open(names, sizeof names / sizeof *names, symbols,
                           sizeof symbols / sizeof *symbols, nc.load_error, sizeof nc.load_error);
    return nc.lib != NULL;
}

static aitk_status nccl_check(ncclResult_t r, const char *call)
{
    if (r == ncclSuccess)
        return AITK_OK;
    aitk_cuda_errorf(aitk_cuda.error, sizeof aitk_cuda.error, "%s: %s", call,
                     nc.GetErrorString ? nc.GetErrorString(r) : "NCCL error");
    return r == ncclInvalidArgument || r == ncclInvalidUsage ? AITK_E_INVAL : AITK_E_INTERNAL;
}

/* The visible devices, at most AITK_BACKEND_MAX_DEVICES of them. */
static aitk_status device_count(int *n)
{
    *n = 0;
    aitk_status st = aitk_cuda_check(cudaGetDeviceCount(n), "cudaGetDeviceCount");
    if (*n > AITK_BACKEND_MAX_DEVICES)
        *n = AITK_BACKEND_MAX_DEVICES;
    return st;
}

static aitk_status peers(aitk_backend_peers *out)
{
    if (!out)
        return aitk_cuda_inval("collectives.peers", "NULL pointer");
    memset(out, 0, sizeof *out);
    int n = 0;
    aitk_status st = device_count(&n);
    if (st) {
        aitk_cuda_errorf(out->error, sizeof out->error, "%s", aitk_cuda.error);
        return st;
    }
    out->n_devices = n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int can = i == j;
            if (i != j && cudaDeviceCanAccessPeer(&can, i, j) != cudaSuccess)
                can = 0;
            out->can_access[i][j] = (unsigned char)(can != 0);
        }
    (void)cudaGetLastError(); /* a refused pair is an answer, not a sticky error */
    if (!load()) {
        aitk_cuda_errorf(out->error, sizeof out->error, "%s", nc.load_error);
        return AITK_E_NOTFOUND;
    }
    if (nc.GetVersion(&out->library_version) != ncclSuccess)
        out->library_version = 0;
    return AITK_OK;
}

static void free_buffers(void)
{
    for (int d = 0; d < co.n; d++) {
        cudaSetDevice(d);
        cudaFree(co.send[d]);
        cudaFree(co.recv[d]);
        co.send[d] = co.recv[d] = NULL;
    }
    co.send_bytes = co.recv_bytes = 0;
}

static void collectives_close(void)
{
    int keep = 0;
    bool had = cudaGetDevice(&keep) == cudaSuccess;
    free_buffers();
    for (int d = 0; d < co.n; d++) {
        cudaSetDevice(d);
        if (co.comm[d] && nc.CommDestroy)
            nc.CommDestroy(co.comm[d]);
        if (co.start[d])
            cudaEventDestroy(co.start[d]);
        if (co.stop[d])
            cudaEventDestroy(co.stop[d]);
        if (co.stream[d])
            cudaStreamDestroy(co.stream[d]);
    }
    memset(&co, 0, sizeof co);
    if (had)
        cudaSetDevice(keep);
}

/* One communicator per visible device, its stream and its two events. */
static aitk_status ensure_comm(void)
{
    if (co.n)
        return AITK_OK;
    if (!load()) {
        aitk_cuda_errorf(aitk_cuda.error, sizeof aitk_cuda.error, "%s", nc.load_error);
        return AITK_E_NOTFOUND;
    }
    int n = 0;
    aitk_status st = device_count(&n);
    if (!st && n < 2) {
        aitk_cuda_errorf(aitk_cuda.error, sizeof aitk_cuda.error,
                         "collectives need two GPUs; %d visible", n);
        st = AITK_E_UNSUPPORTED;
    }
    if (st)
        return st;
    co.n = n;
    st = nccl_check(nc.CommInitAll(co.comm, n, NULL), "ncclCommInitAll");
    if (st) /* nothing to destroy: NCCL cleans up what a failed init made */
        memset(co.comm, 0, sizeof co.comm);
    for (int d = 0; d < n && !st; d++) {
        st = aitk_cuda_check(cudaSetDevice(d), "cudaSetDevice");
        if (!st)
            st = aitk_cuda_check(cudaStreamCreateWithFlags(&co.stream[d], cudaStreamNonBlocking),
                                 "cudaStreamCreateWithFlags");
        if (!st)
            st = aitk_cuda_check(cudaEventCreate(&co.start[d]), "cudaEventCreate");
        if (!st)
            st = aitk_cuda_check(cudaEventCreate(&co.stop[d]), "cudaEventCreate");
    }
    if (st)
        collectives_close();
    return st;
}

/* Buffers of at least the given sizes on every device, zeroed: a
 * collective's speed does not depend on the values, and zeros cannot turn
 * into NaN or denormals while being summed. */
static aitk_status ensure_buffers(size_t send_bytes, size_t recv_bytes)
{
    if (co.send_bytes >= send_bytes && co.recv_bytes >= recv_bytes)
        return AITK_OK;
    free_buffers();
    aitk_status st = AITK_OK;
    for (int d = 0; d < co.n && !st; d++) {
        st = aitk_cuda_check(cudaSetDevice(d), "cudaSetDevice");
        if (!st)
            st = aitk_cuda_check(cudaMalloc(&co.send[d], send_bytes), "cudaMalloc(collective send)");
        if (!st)
            st = aitk_cuda_check(cudaMalloc(&co.recv[d], recv_bytes), "cudaMalloc(collective recv)");
        if (!st)
            st = aitk_cuda_check(cudaMemset(co.send[d], 0, send_bytes), "cudaMemset");
        if (!st)
            st = aitk_cuda_check(cudaMemset(co.recv[d], 0, recv_bytes), "cudaMemset");
    }
    if (st) {
        free_buffers();
        (void)cudaGetLastError(); /* an allocation failure is not sticky */
        return st;
    }
    co.send_bytes = send_bytes;
    co.recv_bytes = recv_bytes;
    return AITK_OK;
}

/* One iteration: the collective on every device, as one group. */
static aitk_status launch(aitk_collective kind, size_t count, ncclDataType_t type)
{
    aitk_status st = nccl_check(nc.GroupStart(), "ncclGroupStart");
    for (int d = 0; d < co.n && !st; d++) {
        if (kind == AITK_COLLECTIVE_ALL_REDUCE)
            st = nccl_check(nc.AllReduce(co.send[d], co.recv[d], count, type, ncclSum, co.comm[d],
                                         co.stream[d]), "ncclAllReduce");
        else if (kind == AITK_COLLECTIVE_ALL_GATHER)
            st = nccl_check(nc.AllGather(co.send[d], co.recv[d], count, type, co.comm[d],
                                         co.stream[d]), "ncclAllGather");
        else
            st = nccl_check(nc.ReduceScatter(co.send[d], co.recv[d], count, type, ncclSum,
                                             co.comm[d], co.stream[d]), "ncclReduceScatter");
    }
    /* The group is closed even after a failed call, or NCCL stays in it. */
    aitk_status end = nccl_check(nc.GroupEnd(), "ncclGroupEnd");
    return st ? st : end;
}

/* The slowest device's time from its start to its stop event. */
static aitk_status slowest_ms(float *ms)
{
    *ms = 0.0f;
    aitk_status st = AITK_OK;
    for (int d = 0; d < co.n && !st; d++) {
        float t = 0.0f;
        st = aitk_cuda_check(cudaEventSynchronize(co.stop[d]), "cudaEventSynchronize");
        if (!st)
            st = aitk_cuda_check(cudaEventElapsedTime(&t, co.start[d], co.stop[d]),
                                 "cudaEventElapsedTime");
        if (!st && t > *ms)
            *ms = t;
    }
    return st;
}

static aitk_status run_timed(aitk_collective kind, size_t count, ncclDataType_t type,
                             int warmup, int iters, double *seconds)
{
    aitk_status st = AITK_OK;
    for (int i = 0; i < warmup && !st; i++)
        st = launch(kind, count, type);
    for (int d = 0; d < co.n && !st; d++)
        st = aitk_cuda_check(cudaEventRecord(co.start[d], co.stream[d]), "cudaEventRecord");
    for (int i = 0; i < iters && !st; i++)
        st = launch(kind, count, type);
    for (int d = 0; d < co.n && !st; d++)
        st = aitk_cuda_check(cudaEventRecord(co.stop[d], co.stream[d]), "cudaEventRecord");
    float ms = 0.0f;
    if (!st)
        st = slowest_ms(&ms);
    if (!st)
        *seconds = (double)ms / 1e3 / iters;
    return st;
}

static aitk_status time_collective(aitk_collective kind, size_t count, aitk_dtype dtype,
                                   int warmup, int iters, double *seconds)
{
    if (!seconds || iters < 1 || warmup < 0 || !count)
        return aitk_cuda_inval("collectives.time", "needs count > 0, iters > 0, an output");
    *seconds = 0.0;
    if (dtype != AITK_DTYPE_F32 && dtype != AITK_DTYPE_BF16)
        return aitk_cuda_inval("collectives.time", "dtype must be f32 or bf16");
    if (kind != AITK_COLLECTIVE_ALL_REDUCE && kind != AITK_COLLECTIVE_ALL_GATHER &&
        kind != AITK_COLLECTIVE_REDUCE_SCATTER) {
        aitk_cuda_errorf(aitk_cuda.error, sizeof aitk_cuda.error,
                         "collectives.time: only all-reduce, all-gather and reduce-scatter");
        return AITK_E_UNSUPPORTED;
    }
    int keep = 0;
    bool had = cudaGetDevice(&keep) == cudaSuccess;
    aitk_status st = ensure_comm();
    size_t esz = dtype == AITK_DTYPE_F32 ? 4 : 2, part = count * esz;
    /* count is one rank's part for the split collectives (backend.h). */
    size_t whole = kind == AITK_COLLECTIVE_ALL_REDUCE ? part : part * (size_t)co.n;
    size_t send = kind == AITK_COLLECTIVE_ALL_GATHER ? part : whole;
    size_t recv = kind == AITK_COLLECTIVE_REDUCE_SCATTER ? part : whole;
    if (!st)
        st = ensure_buffers(send, recv);
    if (!st)
        st = run_timed(kind, count, dtype == AITK_DTYPE_F32 ? ncclFloat32 : ncclBfloat16,
                       warmup, iters, seconds);
    if (had)
        cudaSetDevice(keep);
    return st;
}

const aitk_backend_collectives aitk_cuda_nccl = {
    .peers = peers,
    .time = time_collective,
    .close = collectives_close,
};
