/* Allocation wrappers; the countdown makes allocation failures testable. */
#include "common/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long fail_countdown = -1;

static int should_fail(void)
{
    if (fail_countdown < 0)
        return 0;
    if (fail_countdown == 0) {
        fail_countdown = -1;
        return 1;
    }
    fail_countdown--;
    return 0;
}

static unsigned long failures;

void aitk_alloc_fail_after(long n) { fail_countdown = n; }

unsigned long aitk_alloc_failures(void) { return failures; }

/* Counts a failed allocation, injected or real, and passes the result on. */
static void *counted(void *p)
{
    if (!p)
        failures++;
    return p;
}

void *aitk_malloc(size_t n) { return counted(should_fail() ? NULL : malloc(n ? n : 1)); }

void *aitk_calloc(size_t count, size_t size)
{
    return counted(should_fail() ? NULL : calloc(count ? count : 1, size ? size : 1));
}

void *aitk_realloc(void *p, size_t n)
{
    return counted(should_fail() ? NULL : realloc(p, n ? n : 1));
}

void aitk_free(void *p) { free(p); }

void *aitk_grow(void *items, size_t size, size_t count, size_t *cap, size_t first)
{
    if (count < *cap)
        return items;
    size_t ncap = *cap ? *cap : (first ? first : 1);
    if (*cap) {
        if (ncap > SIZE_MAX / 2)
            return NULL;
        ncap *= 2;
    }
    if (size && ncap > SIZE_MAX / size)
        return NULL;
    void *p = aitk_realloc(items, ncap * size);
    if (p)
        *cap = ncap;
    return p;
}

char *aitk_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    size_t len = strnlen(s, n);
    char *d = aitk_malloc(len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *aitk_strdup(const char *s) { return s ? aitk_strndup(s, strlen(s)) : NULL; }
