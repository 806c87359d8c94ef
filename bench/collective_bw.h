/* Bandwidth of a collective the way nccl-tests reports it, so a figure here
 * reads like the column a person has seen in nccl-tests' output.
 *
 * Sources: NVIDIA/nccl-tests doc/PERFORMANCE.md ("Bandwidth": algbw is
 * size / time; busbw is algbw times 2(n-1)/n for all-reduce, (n-1)/n for
 * reduce-scatter and all-gather, 1 for broadcast and reduce), and its code
 * for what "size" is: src/common.cu setupArgs and the getCollByteCount /
 * getBw functions of src/all_reduce.cu, src/all_gather.cu and
 * src/reduce_scatter.cu (github.com/NVIDIA/nccl-tests, master of
 * 2026-07-09, commit a0b82b2). There, the size asked for is split into
 * count elements; all-gather and reduce-scatter give each rank
 * (count / n) elements rounded down to a multiple of 16 bytes, and the
 * reported size is the larger buffer of a rank, max(send, recv): the whole
 * gathered output, or the whole input of reduce-scatter. algbw uses the
 * same bytes: count * typesize (* n for the two split collectives), over
 * the mean time of one iteration, in GB/s of 10^9 bytes. Pure arithmetic,
 * so tests/bench/test_collective_bw.c checks it against hand-worked figures. */
#ifndef AITK_BENCH_COLLECTIVE_BW_H
#define AITK_BENCH_COLLECTIVE_BW_H

#include <stddef.h>

#include "common/status.h"
#include "kernels/backend.h"

typedef struct aitk_coll_shape {
    size_t count;      /* the library's count argument (see aitk_backend_collectives.time) */
    size_t send_bytes; /* one rank's input */
    size_t recv_bytes; /* one rank's output */
    size_t size_bytes; /* nccl-tests' "size" column: max(send_bytes, recv_bytes) */
} aitk_coll_shape;

/* "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce";
 * "unknown" out of range. */
const char *aitk_collective_name(aitk_collective kind);

/* The buffers nccl-tests runs for `size_bytes` asked of `kind` over
 * `nranks` ranks with elements of `elt_bytes` (1 to 16). AITK_E_INVAL for
 * an unknown kind, nranks < 1, elt_bytes out of range, or a size too small
 * to give every rank one element. */
aitk_status aitk_coll_shape_of(aitk_collective kind, size_t size_bytes, size_t elt_bytes,
                               int nranks, aitk_coll_shape *out);

/* busbw / algbw: 2(n-1)/n, (n-1)/n or 1; 0 for n < 1 or an unknown kind. */
double aitk_coll_busbw_factor(aitk_collective kind, int nranks);

/* algbw and busbw in GB/s (10^9 bytes) of one iteration taking `seconds`.
 * AITK_E_INVAL for seconds <= 0 or not finite, nranks < 1, an unknown kind. */
aitk_status aitk_coll_bandwidth(aitk_collective kind, const aitk_coll_shape *shape, int nranks,
                                double seconds, double *algbw_gbs, double *busbw_gbs);

#endif
