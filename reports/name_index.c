/* See name_index.h. */
#include "reports/name_index.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fields.h"

static int by_name_then_order(const void *a, const void *b)
{
    const aitk_named_entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

aitk_status aitk_name_index_build(aitk_name_index *ix, const cJSON *array, const char *key)
{
    ix->entries = NULL;
    ix->count = 0;
    if (!cJSON_IsArray(array))
        return AITK_OK;
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, array) n++;
    if (!n)
        return AITK_OK;
    ix->entries = aitk_calloc(n, sizeof *ix->entries);
    if (!ix->entries)
        return AITK_E_NOMEM;
    cJSON_ArrayForEach(e, array)
    {
        ix->entries[ix->count] = (aitk_named_entry){aitk_field_str(e, key), e, ix->count};
        ix->count++;
    }
    qsort(ix->entries, ix->count, sizeof *ix->entries, by_name_then_order);
    return AITK_OK;
}

const aitk_named_entry *aitk_name_index_first(const aitk_name_index *ix, const char *name)
{
    /* The lowest position whose name is not below `name`: with the order as
     * the second key, the first of equal names in array order. */
    size_t lo = 0, hi = ix->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ix->entries[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->count && strcmp(ix->entries[lo].name, name) == 0 ? &ix->entries[lo] : NULL;
}

const cJSON *aitk_name_index_find(const aitk_name_index *ix, const char *name)
{
    const aitk_named_entry *e = aitk_name_index_first(ix, name);
    return e ? e->node : NULL;
}

void aitk_name_index_free(aitk_name_index *ix)
{
    aitk_free(ix->entries);
    ix->entries = NULL;
    ix->count = 0;
}
