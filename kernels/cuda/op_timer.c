/* Op timing: device time per path (kernels/backend.h, aitk_backend_path.ms)
 * from CUDA events around the timed calls, off unless AITK_TIME_OPS=1 was
 * set when open() ran, because each pair of events is two more commands
 * between kernels and the measured s/step must not carry them.
 *
 * A timed call records a start event before its work and an end event
 * after it on the one stream; the pair and its path wait in a fixed pool
 * (op_timer_ring.h) and are read with cudaEventElapsedTime when paths()
 * asks (after a wait for the stream) or when the pool is full (after a
 * wait for the oldest pair's end event). cudaEventElapsedTime measures
 * between two events on a stream in milliseconds, "with a resolution of
 * around 0.5 microseconds" (CUDA Runtime API, 5.5 Event Management,
 * cudaEventElapsedTime). */
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/internal.h"
#include "kernels/cuda/op_timer_ring.h"

static struct {
    bool on;
    int created;        /* pairs whose events exist */
    cudaEvent_t start[AITK_OP_TIMER_PAIRS], end[AITK_OP_TIMER_PAIRS];
    aitk_op_timer_ring ring;
} timer;

bool aitk_cuda_timer_requested(void)
{
    const char *v = getenv("AITK_TIME_OPS");
    return v && !strcmp(v, "1");
}

aitk_status aitk_cuda_timer_open(void)
{
    aitk_cuda_timer_close();
    if (!aitk_cuda_timer_requested())
        return AITK_OK;
    aitk_status st = AITK_OK;
    for (int i = 0; i < AITK_OP_TIMER_PAIRS && !st; i++) {
        st = aitk_cuda_check(cudaEventCreate(&timer.start[i]), "cudaEventCreate(op timing)");
        if (!st) {
            st = aitk_cuda_check(cudaEventCreate(&timer.end[i]), "cudaEventCreate(op timing)");
            if (st)
                cudaEventDestroy(timer.start[i]);
        }
        if (!st)
            timer.created = i + 1;
    }
    timer.on = !st;
    if (st)
        aitk_cuda_timer_close();
    return st;
}

/* Reads the oldest pending pair into its path; the caller has made sure
 * its end event has completed. */
static aitk_status read_oldest(void)
{
    int slot = aitk_op_timer_ring_oldest(&timer.ring);
    float ms = 0.0f;
    aitk_status st = aitk_cuda_check(cudaEventElapsedTime(&ms, timer.start[slot],
                                                          timer.end[slot]),
                                     "cudaEventElapsedTime(op timing)");
    if (!st)
        aitk_cuda_path_add_ms(timer.ring.path[slot], (double)ms);
    aitk_op_timer_ring_retire(&timer.ring);
    return st;
}

aitk_status aitk_cuda_timer_start(int path, int *slot)
{
    *slot = -1;
    if (!timer.on || (path < 0 && path != AITK_CUDA_PATH_LATER))
        return AITK_OK;
    int s = aitk_op_timer_ring_claim(&timer.ring, path);
    if (s < 0) {
        /* Every pair is pending: wait for the oldest, the first to finish. */
        int old = aitk_op_timer_ring_oldest(&timer.ring);
        aitk_status st = aitk_cuda_check(cudaEventSynchronize(timer.end[old]),
                                         "cudaEventSynchronize(op timing)");
        if (!st)
            st = read_oldest();
        if (st)
            return st;
        s = aitk_op_timer_ring_claim(&timer.ring, path);
    }
    aitk_status st = aitk_cuda_check(cudaEventRecord(timer.start[s], aitk_cuda.stream),
                                     "cudaEventRecord(op timing start)");
    if (st) {
        aitk_op_timer_ring_unclaim(&timer.ring);
        return st;
    }
    *slot = s;
    return AITK_OK;
}

void aitk_cuda_timer_name(int slot, int path)
{
    if (slot >= 0)
        timer.ring.path[slot] = path; /* a path of -1 (table full) is read and dropped */
}

aitk_status aitk_cuda_timer_stop(int slot, aitk_status call)
{
    if (slot < 0)
        return call;
    if (call) {
        /* The call failed: nothing to time, and its error is the one to keep. */
        aitk_op_timer_ring_unclaim(&timer.ring);
        return call;
    }
    aitk_status st = aitk_cuda_check(cudaEventRecord(timer.end[slot], aitk_cuda.stream),
                                     "cudaEventRecord(op timing end)");
    if (st)
        aitk_op_timer_ring_unclaim(&timer.ring);
    return st;
}

aitk_status aitk_cuda_timer_collect(void)
{
    if (!timer.on || !timer.ring.count)
        return AITK_OK;
    aitk_status st = aitk_cuda_check(cudaStreamSynchronize(aitk_cuda.stream),
                                     "cudaStreamSynchronize(op timing)");
    while (!st && timer.ring.count)
        st = read_oldest();
    return st;
}

void aitk_cuda_timer_close(void)
{
    for (int i = 0; i < timer.created; i++) {
        cudaEventDestroy(timer.start[i]);
        cudaEventDestroy(timer.end[i]);
    }
    memset(&timer, 0, sizeof timer);
}
