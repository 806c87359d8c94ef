/* The allocation bookkeeping every backend shares (kernels/ops.h):
 * aitk_buf_alloc/aitk_buf_free around a backend's raw alloc/free, and the
 * per-tag account with its peaks, limit and "allocating N MiB for ..." lines
 * (llm.c's habit).
 *
 * It lives outside kernels/cpu so that the CUDA plugin can link this same
 * file: its device buffers are then counted exactly as the CPU's are, which
 * is what lets the cost model's memory plan be checked against what a step
 * really allocated on either backend. For that reason it uses libc and
 * common/status.h only (no OpenBLAS, no common/alloc.h). */
#include <stdint.h>
#include <stdio.h>

#include "kernels/ops.h"

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
 * simulated 24 GB limit never asks the backend for 30 GB first. */
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

/* Keeps the failed allocation's name, so "does not fit" can say which
 * buffer did not fit instead of only that something did not. */
static void note_failure(aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag,
                         const char *what)
{
    if (!acct)
        return;
    acct->failed_what = what ? what : "unnamed";
    acct->failed_tag = tag;
    acct->failed_bytes = bytes;
}

/* Counts bytes that mem_check has already admitted. */
static void mem_count(aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag, const char *what)
{
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
}

aitk_status aitk_mem_note_alloc(aitk_mem_account *acct, size_t bytes, aitk_mem_tag tag,
                                const char *what)
{
    aitk_status st = mem_check(acct, bytes, tag);
    if (st) {
        if (st != AITK_E_INVAL)
            note_failure(acct, bytes, tag, what);
        return st;
    }
    mem_count(acct, bytes, tag, what);
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

aitk_status aitk_buf_alloc(const aitk_ops *ops, aitk_mem_account *acct, aitk_buf *out,
                           size_t bytes, aitk_mem_tag tag, const char *what)
{
    if (!out)
        return AITK_E_INVAL;
    *out = (aitk_buf){NULL, 0, tag};
    if (!ops || !ops->alloc || !acct)
        return AITK_E_INVAL;
    if (bytes == 0)
        return (unsigned)tag < AITK_MEM_TAG_COUNT ? AITK_OK : AITK_E_INVAL;
    aitk_status st = mem_check(acct, bytes, tag);
    if (st) {
        if (st != AITK_E_INVAL)
            note_failure(acct, bytes, tag, what);
        return st;
    }
    void *p = NULL;
    st = ops->alloc(&p, bytes);
    if (st || !p) {
        /* nothing was counted: the peak stays honest */
        note_failure(acct, bytes, tag, what);
        return st ? st : AITK_E_NOMEM;
    }
    mem_count(acct, bytes, tag, what);
    *out = (aitk_buf){p, bytes, tag};
    return AITK_OK;
}

void aitk_buf_free(const aitk_ops *ops, aitk_mem_account *acct, aitk_buf *buf)
{
    if (!buf || !buf->ptr)
        return;
    if (ops && ops->free)
        ops->free(buf->ptr);
    aitk_mem_note_free(acct, buf->bytes, buf->tag);
    *buf = (aitk_buf){NULL, 0, buf->tag};
}
