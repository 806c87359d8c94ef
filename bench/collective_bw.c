/* nccl-tests' size and bandwidth conventions (see collective_bw.h). */
#include "bench/collective_bw.h"

#include <math.h>

const char *aitk_collective_name(aitk_collective kind)
{
    switch (kind) {
    case AITK_COLLECTIVE_ALL_REDUCE: return "all_reduce";
    case AITK_COLLECTIVE_ALL_GATHER: return "all_gather";
    case AITK_COLLECTIVE_REDUCE_SCATTER: return "reduce_scatter";
    case AITK_COLLECTIVE_BROADCAST: return "broadcast";
    case AITK_COLLECTIVE_REDUCE: return "reduce";
    case AITK_COLLECTIVE_COUNT: break;
    }
    return "unknown";
}

static int known(aitk_collective kind)
{
    return (int)kind >= 0 && kind < AITK_COLLECTIVE_COUNT;
}

/* All-gather and reduce-scatter split the buffer: each rank's part is
 * rounded down to 16 bytes, as nccl-tests' getCollByteCount does with
 * (count / nranks) & ~(16 / eltSize - 1). */
static int split(aitk_collective kind)
{
    return kind == AITK_COLLECTIVE_ALL_GATHER || kind == AITK_COLLECTIVE_REDUCE_SCATTER;
}

aitk_status aitk_coll_shape_of(aitk_collective kind, size_t size_bytes, size_t elt_bytes,
                               int nranks, aitk_coll_shape *out)
{
    if (!out || !known(kind) || nranks < 1 || elt_bytes < 1 || elt_bytes > 16)
        return AITK_E_INVAL;
    size_t count = size_bytes / elt_bytes;
    if (split(kind)) {
        size_t per_16 = 16 / elt_bytes;
        /* per_16 is a power of two for the element sizes NCCL has (1, 2,
         * 4, 8); the division form rounds down for any size. */
        size_t base = count / (size_t)nranks / per_16 * per_16;
        if (!base)
            return AITK_E_INVAL;
        out->count = base;
        size_t whole = base * (size_t)nranks * elt_bytes, part = base * elt_bytes;
        out->send_bytes = kind == AITK_COLLECTIVE_ALL_GATHER ? part : whole;
        out->recv_bytes = kind == AITK_COLLECTIVE_ALL_GATHER ? whole : part;
    } else {
        if (!count)
            return AITK_E_INVAL;
        out->count = count;
        out->send_bytes = out->recv_bytes = count * elt_bytes;
    }
    out->size_bytes = out->send_bytes > out->recv_bytes ? out->send_bytes : out->recv_bytes;
    return AITK_OK;
}

double aitk_coll_busbw_factor(aitk_collective kind, int nranks)
{
    if (nranks < 1 || !known(kind))
        return 0.0;
    double n = (double)nranks;
    switch (kind) {
    case AITK_COLLECTIVE_ALL_REDUCE: return 2.0 * (n - 1.0) / n;
    case AITK_COLLECTIVE_ALL_GATHER:
    case AITK_COLLECTIVE_REDUCE_SCATTER: return (n - 1.0) / n;
    default: return 1.0;
    }
}

aitk_status aitk_coll_bandwidth(aitk_collective kind, const aitk_coll_shape *shape, int nranks,
                                double seconds, double *algbw_gbs, double *busbw_gbs)
{
    if (!shape || !algbw_gbs || !busbw_gbs || !known(kind) || nranks < 1 ||
        !isfinite(seconds) || seconds <= 0.0)
        return AITK_E_INVAL;
    /* nccl-tests' getBw: count * typesize (* nranks for the split ones), which
     * is the size column: size_bytes. */
    double algbw = (double)shape->size_bytes / 1.0e9 / seconds;
    *algbw_gbs = algbw;
    *busbw_gbs = algbw * aitk_coll_busbw_factor(kind, nranks);
    return AITK_OK;
}
