/* The bookkeeping of op timing's event pool (op_timer.c), in plain C so the
 * tests run it without a GPU: which pair of events the next timed call
 * takes, which pairs are still waiting to be read, and which path each
 * one's time belongs to. Pairs are used in order and read in order (a
 * ring), because the one stream finishes them in the order they were
 * queued: the oldest pending pair is always the first to be ready. */
#ifndef AITK_KERNELS_CUDA_OP_TIMER_RING_H
#define AITK_KERNELS_CUDA_OP_TIMER_RING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Enough pairs that a FLUX block's GEMMs and attention calls queue without
 * a wait; when all are pending, the oldest is waited for and read. */
#define AITK_OP_TIMER_PAIRS 256

typedef struct aitk_op_timer_ring {
    int path[AITK_OP_TIMER_PAIRS]; /* the path each pending pair times */
    int head;                      /* the oldest pending pair */
    int count;                     /* pairs pending */
} aitk_op_timer_ring;

/* The pair the next timed call of `path` takes, now pending; -1 when every
 * pair is pending (read and retire the oldest first). */
int aitk_op_timer_ring_claim(aitk_op_timer_ring *r, int path);
/* The oldest pending pair, or -1 when none is pending. */
int aitk_op_timer_ring_oldest(const aitk_op_timer_ring *r);
/* The oldest pending pair is read (or abandoned): free again. */
void aitk_op_timer_ring_retire(aitk_op_timer_ring *r);
/* The newest claim is given back unread: its call failed before its end
 * was recorded. */
void aitk_op_timer_ring_unclaim(aitk_op_timer_ring *r);

#ifdef __cplusplus
}
#endif

#endif
