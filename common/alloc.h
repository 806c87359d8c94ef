/* Allocation with a fault-injection seam (SQLite style).
 *
 * All project code allocates through these so a test can make the N-th
 * allocation fail and check that the failure is reported, not crashed on. */
#ifndef AITK_COMMON_ALLOC_H
#define AITK_COMMON_ALLOC_H
#include <stddef.h>

void *aitk_malloc(size_t n);
void *aitk_calloc(size_t count, size_t size);
void *aitk_realloc(void *p, size_t n);
void aitk_free(void *p);
/* Room for one more item in a growable array of `count` items of `size`
 * bytes whose capacity is *cap: the array itself while count < *cap, else
 * the array grown to twice its capacity (`first` items at first), with *cap
 * updated. NULL when out of memory or the size would overflow: the old
 * array and *cap are left as they were. */
void *aitk_grow(void *items, size_t size, size_t count, size_t *cap, size_t first);

/* strdup / strndup through the same seam; NULL in -> NULL out. */
char *aitk_strdup(const char *s);
char *aitk_strndup(const char *s, size_t n);

/* How many allocations through these functions have failed so far. A
 * parser that answers NULL both for bad input and for no memory (cJSON) is
 * told apart by this count changing across the call. */
unsigned long aitk_alloc_failures(void);

/* Tests only: make the allocation after `n` more successful ones fail
 * (n = 0: the very next one). Negative disables injection. */
void aitk_alloc_fail_after(long n);

#endif
