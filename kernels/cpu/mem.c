/* Allocation with accounting: the shared bookkeeping (ops.h) and the CPU
 * backend's alloc/free/upload/download.
 *
 * The bookkeeping is backend-neutral so the CUDA plugin reports its device
 * buffers in the same account and the same "allocating N MiB for ..." lines
 * (llm.c's habit), which is what lets the cost model's memory plan be checked
 * against what a step really allocated. */
#include <stdint.h>
#include <string.h>

#include "common/alloc.h"
#include "kernels/cpu/cpu.h"

const char *aitk_mem_tag_name(aitk_mem_tag tag)
{
    switch (tag) {
    case AITK_MEM_WEIGHTS: return "weights";
    case AITK_MEM_ACTIVATIONS: return "activations";
    case AITK_MEM_GRADIENTS: return "gradients";
    case AITK_MEM_OPTIMIZER: return "optimizer";
    case AITK_MEM_WORKSPACE: return "workspace";
    case AITK_MEM_TAG_COUNT: break;
    }
    return "unknown";
}

/* Would `bytes` more fit? Checked before the real allocation, so a
 * simulated 24 GB limit never asks the host for 30 GB first. */
static aitk_status mem_check(const aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag)
{
    if (!acct || (unsigned)tag >= AITK_MEM_TAG_COUNT)
        return AITK_E_INVAL;
    if (bytes > SIZE_MAX - acct->current_total)
        return AITK_E_RANGE;
    if (acct->limit && acct->current_total + bytes > acct->limit)
        return AITK_E_NOMEM;
    return AITK_OK;
}

aitk_status aitk_mem_note_alloc(aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag,
                                const char *what)
{
    aitk_status st = mem_check(acct, bytes, tag);
    if (st)
        return st;
    size_t total = acct->current_total + bytes;
    acct->current_total = total;
    acct->current[tag] += bytes;
    if (acct->current[tag] > acct->peak[tag])
        acct->peak[tag] = acct->current[tag];
    if (total > acct->peak_total)
        acct->peak_total = total;
    if (acct->log)
        fprintf(acct->log, "allocating %.2f MiB for %s (%s)\n",
                (double)bytes / (1024.0 * 1024.0), aitk_mem_tag_name(tag),
                what ? what : "unnamed");
    return AITK_OK;
}

void aitk_mem_note_free(aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag)
{
    if (!acct || (unsigned)tag >= AITK_MEM_TAG_COUNT)
        return;
    /* Clamp instead of wrapping: a double free in the graph must not turn the
     * account into nonsense that hides every later figure. */
    acct->current[tag] -= bytes <= acct->current[tag] ? bytes : acct->current[tag];
    acct->current_total -= bytes <= acct->current_total ? bytes : acct->current_total;
}

aitk_status aitk_cpu_alloc(aitk_mem_account *acct, aitk_buf *out, size_t bytes,
                           aitk_mem_tag tag, const char *what)
{
    if (!acct || !out)
        return AITK_E_INVAL;
    *out = (aitk_buf){NULL, 0, tag};
    if (bytes == 0)
        return AITK_OK;
    aitk_status st = mem_check(acct, bytes, tag);
    if (st)
        return st;
    /* Zeroed: gradients start at 0 and a run repeats bit for bit. */
    void *p = aitk_calloc(1, bytes);
    if (!p)
        return AITK_E_NOMEM; /* nothing was counted: the peak stays honest */
    st = aitk_mem_note_alloc(acct, bytes, tag, what);
    if (st) {
        aitk_free(p);
        return st;
    }
    *out = (aitk_buf){p, bytes, tag};
    return AITK_OK;
}

void aitk_cpu_free(aitk_mem_account *acct, aitk_buf *buf)
{
    if (!buf || !buf->ptr)
        return;
    aitk_free(buf->ptr);
    aitk_mem_note_free(acct, buf->bytes, buf->tag);
    *buf = (aitk_buf){NULL, 0, buf->tag};
}

aitk_status aitk_cpu_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return AITK_OK;
    if (!dst || !src)
        return AITK_E_INVAL;
    memmove(dst, src, bytes);
    return AITK_OK;
}

aitk_status aitk_cpu_zero(void *dst, size_t bytes)
{
    if (bytes == 0)
        return AITK_OK;
    if (!dst)
        return AITK_E_INVAL;
    memset(dst, 0, bytes);
    return AITK_OK;
}
