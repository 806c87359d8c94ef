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
#include "common/str.h"

typedef struct aitk_named_entry {
    const char *name; /* the field's text; "" when absent or not a string */
    const cJSON *node;
    size_t order;     /* position in the array */
    char *owned;      /* `name`'s storage when the key is composed */
} aitk_named_entry;

/* The key that names a workload: its "name", then " (BACKEND)" when its
 * backend is not the CPU's. A GPU run reports each model twice, at full
 * size on the GPU and in the small configuration on the CPU, under one
 * name; by name alone, compare and render refused the lent H200's report
 * ("both named 'flux1-dev'"), and trend would have mixed the two series.
 * CPU entries keep the bare name, so CPU baselines still match. */
#define AITK_WORKLOAD_KEY "name (backend)"

/* The text entry `e` has for `key`: the field itself, or for
 * AITK_WORKLOAD_KEY the composed name, written into `buf` (NULL when it
 * could not grow). */
const char *aitk_entry_key(const cJSON *e, const char *key, aitk_str *buf);

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
