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
/* strdup / strndup through the same seam; NULL in -> NULL out. */
char *aitk_strdup(const char *s);
char *aitk_strndup(const char *s, size_t n);

/* Tests only: make the allocation after `n` more successful ones fail
 * (n = 0: the very next one). Negative disables injection. */
void aitk_alloc_fail_after(long n);

#endif
