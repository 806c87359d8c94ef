/* The event pool's ring (op_timer_ring.h). */
#include "kernels/cuda/op_timer_ring.h"

int aitk_op_timer_ring_claim(aitk_op_timer_ring *r, int path)
{
    if (r->count == AITK_OP_TIMER_PAIRS)
        return -1;
    int slot = (r->head + r->count) % AITK_OP_TIMER_PAIRS;
    r->path[slot] = path;
    r->count++;
    return slot;
}

int aitk_op_timer_ring_oldest(const aitk_op_timer_ring *r)
{
    return r->count ? r->head : -1;
}

void aitk_op_timer_ring_retire(aitk_op_timer_ring *r)
{
    if (!r->count)
        return;
    r->head = (r->head + 1) % AITK_OP_TIMER_PAIRS;
    r->count--;
}

void aitk_op_timer_ring_unclaim(aitk_op_timer_ring *r)
{
    if (r->count)
        r->count--;
}
