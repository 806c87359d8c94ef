/* Reader of the golden files written by gen_golden.py (format: see there).
 *
 * Golden files are inputs like any other: a truncated or corrupted one gives
 * AITK_E_PARSE with "path: what was expected at byte N", never a crash. */
#ifndef AITK_TESTS_GOLDEN_GOLDEN_H
#define AITK_TESTS_GOLDEN_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/str.h"

#define AITK_GOLDEN_MAX_DIMS 8

typedef struct aitk_golden_tensor {
    char *name;
    int ndim;
    uint32_t dims[AITK_GOLDEN_MAX_DIMS];
    size_t count; /* number of values */
    float *data;
} aitk_golden_tensor;

typedef struct aitk_golden {
    aitk_golden_tensor *tensors;
    size_t count;
} aitk_golden;

/* Loads `path` (at most 64 MiB); `err` gets the reason on failure. */
aitk_status aitk_golden_load(aitk_golden *g, const char *path, aitk_str *err);
/* The tensor called `name`, or NULL. */
const aitk_golden_tensor *aitk_golden_get(const aitk_golden *g, const char *name);
void aitk_golden_free(aitk_golden *g);

#endif
