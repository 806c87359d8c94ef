/* The entries of a report's JSON array by one string field (a workload's or
 * microbenchmark's name, a check's id), for lookups in O(log n).
 *
 * A report may hold thousands of microbenchmarks; matching each against the
 * other report by a walk from the head made `compare` quadratic (20,000
 * entries took over 20 s, and the read limit allows far more). */
#ifndef AITK_REPORTS_NAME_INDEX_H
#define AITK_REPORTS_NAME_INDEX_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "common/status.h"

typedef struct aitk_named_entry {
    const char *name; /* the field's text; "" when absent or not a string */
    const cJSON *node;
    size_t order;     /* position in the array */
} aitk_named_entry;

typedef struct aitk_name_index {
    aitk_named_entry *entries; /* sorted by name, then order */
    size_t count;
} aitk_name_index;

/* Indexes `array` (NULL or a non-array: no entries) by each entry's `key`. */
aitk_status aitk_name_index_build(aitk_name_index *ix, const cJSON *array, const char *key);
/* The first entry, in array order, whose field is `name`; NULL when none. */
const aitk_named_entry *aitk_name_index_first(const aitk_name_index *ix, const char *name);
/* Its node, or NULL. */
const cJSON *aitk_name_index_find(const aitk_name_index *ix, const char *name);
void aitk_name_index_free(aitk_name_index *ix);

#endif
