/* The GEMM dispatcher's host logic, in plain C so the tests run it without a
 * GPU: the row-major -> column-major mapping of ops.h's gemm onto cuBLASLt,
 * and the small table that caches the heuristic's algorithm per shape.
 *
 * Mapping: a row-major (r,c) matrix is a column-major (c,r) one with the
 * same leading dimension, so the row-major C (M,N) = op(A) op(B) is the
 * column-major C^T (N,M) = op(B)^T op(A)^T: cuBLASLt's first operand is our
 * B, its second is our A, and its m, n are our N, M. The transposes keep
 * their flags: B stored (K,N) row-major is column-major (N,K) and needs no
 * op to give the (N,K) first operand; B stored (N,K) (trans_b) needs op T. */
#ifndef AITK_KERNELS_CUDA_GEMM_MAP_H
#define AITK_KERNELS_CUDA_GEMM_MAP_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One column-major operand as cuBLASLt's matrix layout describes it. */
typedef struct aitk_lt_operand {
    uint64_t rows, cols; /* of the stored matrix, column-major */
    int64_t ld;          /* leading dimension = rows */
    bool trans;          /* cuBLASLt op T on it */
    int64_t stride;      /* elements between batches */
} aitk_lt_operand;

typedef struct aitk_lt_problem {
    uint64_t m, n, k;           /* cuBLASLt's: m = our N, n = our M */
    aitk_lt_operand a, b, c;    /* a = our B, b = our A, c = our C */
    int batch;
} aitk_lt_problem;

/* Fills *p for ops.h's row-major gemm; false for an impossible shape (a
 * non-positive size or batch, a negative stride, or batches writing the
 * same C), the checks the CPU backend makes. */
bool aitk_lt_map(aitk_lt_problem *p, int m, int n, int k, bool trans_a, bool trans_b, int batch,
                 long long stride_a, long long stride_b, long long stride_c);

/* What selects an algorithm: two calls with equal keys can reuse one. */
typedef struct aitk_gemm_key {
    int m, n, k, batch;
    long long stride_a, stride_b, stride_c;
    bool trans_a, trans_b;
    bool beta_nonzero; /* beta != 0 reads C: a different kernel family */
    int c_dtype;       /* 0: bf16 C/D, 1: fp32 C/D (LoRA gradients) */
    int epilogue;      /* 0: none, 1: bias */
    unsigned align;    /* bytes all operands are aligned to (aitk_gemm_alignment) */
} aitk_gemm_key;

/* The largest power of two, at most 256, that divides every address given
 * (0 addresses are ignored). cuBLASLt's heuristic assumes 256-byte aligned
 * operands unless told otherwise, and the graph passes views into larger
 * buffers (a chunk of a modulation output, one head of a fused projection)
 * that are only element-aligned; the alignment is told to the heuristic
 * and is part of the cache key. */
unsigned aitk_gemm_alignment(const void *const *ptrs, int count);

#define AITK_GEMM_CACHE_SLOTS 64

/* Keys in slots; the caller keeps what it caches (the cuBLASLt algorithm)
 * in a parallel array indexed by slot. Full: the oldest slot is reused. */
typedef struct aitk_gemm_cache {
    aitk_gemm_key key[AITK_GEMM_CACHE_SLOTS];
    bool used[AITK_GEMM_CACHE_SLOTS];
    int next; /* slot the next insert takes when all are used (round robin) */
} aitk_gemm_cache;

bool aitk_gemm_key_equal(const aitk_gemm_key *x, const aitk_gemm_key *y);
/* Slot holding key, or -1. */
int aitk_gemm_cache_find(const aitk_gemm_cache *c, const aitk_gemm_key *key);
/* A slot for key (a free one, else the oldest), marked used. */
int aitk_gemm_cache_insert(aitk_gemm_cache *c, const aitk_gemm_key *key);

#ifdef __cplusplus
}
#endif

#endif
