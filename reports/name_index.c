/* See name_index.h. */
#include "reports/name_index.h"

#include <stdbool.h>
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

const char *aitk_entry_key(const cJSON *e, const char *key, aitk_str *buf)
{
    if (strcmp(key, AITK_WORKLOAD_KEY) != 0)
        return aitk_field_str(e, key);
    const char *name = aitk_field_str(e, "name"), *backend = aitk_field_str(e, "backend");
    aitk_str_clear(buf);
    aitk_str_append(buf, name);
    if (*name && *backend && strcmp(backend, "cpu") != 0)
        aitk_str_appendf(buf, " (%s)", backend);
    return aitk_str_status(buf) ? NULL : aitk_str_cstr(buf);
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
    bool composed = strcmp(key, AITK_WORKLOAD_KEY) == 0;
    aitk_str buf = AITK_STR_INIT;
    cJSON_ArrayForEach(e, array)
    {
        aitk_named_entry *x = &ix->entries[ix->count];
        *x = (aitk_named_entry){aitk_field_str(e, key), e, ix->count, NULL};
        ix->count++;
        if (composed) {
            const char *k = aitk_entry_key(e, key, &buf);
            if (!k || !(x->owned = aitk_strdup(k))) {
                aitk_str_free(&buf);
                aitk_name_index_free(ix);
                return AITK_E_NOMEM;
            }
            x->name = x->owned;
        }
    }
    aitk_str_free(&buf);
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
    for (size_t i = 0; ix->entries && i < ix->count; i++)
        aitk_free(ix->entries[i].owned);
    aitk_free(ix->entries);
    ix->entries = NULL;
    ix->count = 0;
}
