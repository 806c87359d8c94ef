/* Row-major -> column-major mapping and the algorithm cache (gemm_map.h). */
#include "kernels/cuda/gemm_map.h"

#include <string.h>

bool aitk_lt_map(aitk_lt_problem *p, int m, int n, int k, bool trans_a, bool trans_b, int batch,
                 long long stride_a, long long stride_b, long long stride_c)
{
    if (!p || m <= 0 || n <= 0 || k <= 0 || batch <= 0)
        return false;
    if (stride_a < 0 || stride_b < 0 || stride_c < 0)
        return false;
    if (batch > 1 && stride_c < (long long)m * n)
        return false;
    memset(p, 0, sizeof *p);
    p->m = (uint64_t)n;
    p->n = (uint64_t)m;
    p->k = (uint64_t)k;
    p->batch = batch;
    /* cuBLASLt's A = our B: stored (K,N) row-major = (N,K) column-major,
     * or (N,K) row-major = (K,N) column-major when trans_b. */
    p->a.rows = trans_b ? (uint64_t)k : (uint64_t)n;
    p->a.cols = trans_b ? (uint64_t)n : (uint64_t)k;
    p->a.trans = trans_b;
    p->a.stride = stride_b;
    /* cuBLASLt's B = our A: stored (M,K) row-major = (K,M) column-major,
     * or (K,M) row-major = (M,K) column-major when trans_a. */
    p->b.rows = trans_a ? (uint64_t)m : (uint64_t)k;
    p->b.cols = trans_a ? (uint64_t)k : (uint64_t)m;
    p->b.trans = trans_a;
    p->b.stride = stride_a;
    p->c.rows = (uint64_t)n;
    p->c.cols = (uint64_t)m;
    p->c.stride = stride_c;
    p->a.ld = (int64_t)p->a.rows;
    p->b.ld = (int64_t)p->b.rows;
    p->c.ld = (int64_t)p->c.rows;
    return true;
}

bool aitk_gemm_key_equal(const aitk_gemm_key *x, const aitk_gemm_key *y)
{
    return x->m == y->m && x->n == y->n && x->k == y->k && x->batch == y->batch &&
           x->stride_a == y->stride_a && x->stride_b == y->stride_b &&
           x->stride_c == y->stride_c && x->trans_a == y->trans_a && x->trans_b == y->trans_b &&
           x->beta_nonzero == y->beta_nonzero && x->c_dtype == y->c_dtype &&
           x->epilogue == y->epilogue && x->align == y->align;
}

int aitk_gemm_cache_find(const aitk_gemm_cache *c, const aitk_gemm_key *key)
{
    for (int i = 0; i < AITK_GEMM_CACHE_SLOTS; i++)
        if (c->used[i] && aitk_gemm_key_equal(&c->key[i], key))
            return i;
    return -1;
}

int aitk_gemm_cache_insert(aitk_gemm_cache *c, const aitk_gemm_key *key)
{
    int slot = -1;
    for (int i = 0; i < AITK_GEMM_CACHE_SLOTS && slot < 0; i++)
        if (!c->used[i])
            slot = i;
    if (slot < 0) {
        slot = c->next;
        c->next = (c->next + 1) % AITK_GEMM_CACHE_SLOTS;
    }
    c->key[slot] = *key;
    c->used[slot] = true;
    return slot;
}

unsigned aitk_gemm_alignment(const void *const *ptrs, int count)
{
    unsigned align = 256;
    for (int i = 0; i < count; i++) {
        uintptr_t p = (uintptr_t)ptrs[i];
        while (p && align > 1 && p % align)
            align /= 2;
    }
    return align;
}
