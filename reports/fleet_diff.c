/* The differences between nodes (see fleet_parts.h): for each check,
 * workload and microbenchmark any node has, its status on every node, then
 * its observed value or unit. A status that differs matters (one node fails
 * what the others pass, or lacks a workload they ran); so does a unit that
 * differs (the figures cannot be set side by side). An observed value that
 * differs under the same status is listed and does not matter by itself:
 * free disk and available memory differ on every fleet. */
#include <cjson/cJSON.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fields.h"
#include "reports/fleet_parts.h"

aitk_status aitk_fleet_lists_build(aitk_fleet_lists *l, const aitk_fleet_merge_ctx *c,
                                   const char *list, const char *key)
{
    l->n = 0;
    l->ix = aitk_calloc(c->n, sizeof *l->ix);
    if (!l->ix)
        return AITK_E_NOMEM;
    for (; l->n < c->n; l->n++) {
        const cJSON *arr = aitk_field_array(c->nodes[l->n].report, list);
        if (aitk_name_index_build(&l->ix[l->n], arr, key)) {
            aitk_fleet_lists_free(l);
            return AITK_E_NOMEM;
        }
    }
    return AITK_OK;
}

void aitk_fleet_lists_free(aitk_fleet_lists *l)
{
    for (size_t i = 0; i < l->n; i++)
        aitk_name_index_free(&l->ix[i]);
    aitk_free(l->ix);
    *l = (aitk_fleet_lists){0};
}

bool aitk_fleet_seen_before(const aitk_fleet_lists *l, size_t node, const char *name)
{
    for (size_t j = 0; j < node; j++)
        if (aitk_name_index_find(&l->ix[j], name))
            return true;
    return false;
}

/* One kind of subject: checks by id (status, observed), workloads by name
 * (status), microbenchmarks by name (unit). */
typedef struct diff_kind {
    const char *list, *key, *label;
    const char *status;   /* field compared first; NULL: none */
    const char *observed; /* field compared when the statuses agree */
    bool observed_matters;
} diff_kind;

static const diff_kind kinds[] = {
    {"checks", "id", "check", "status", "observed", false},
    {"workloads", AITK_WORKLOAD_KEY, "workload", "status", NULL, false},
    {"micro", "name", "micro", NULL, "unit", true},
};

static const char *field_or_absent(const cJSON *entry, const char *field)
{
    return entry ? aitk_field_str(entry, field) : AITK_FLEET_ABSENT;
}

/* Whether `field` has one text on every node; absent nodes count as
 * "(absent)". */
static bool all_same(const cJSON *const *entries, size_t n, const char *field)
{
    for (size_t i = 1; i < n; i++)
        if (strcmp(field_or_absent(entries[i], field), field_or_absent(entries[0], field)) != 0)
            return false;
    return true;
}

static aitk_status add_difference(aitk_fleet_merge_ctx *c, cJSON *list, const diff_kind *k,
                                  const char *name, const cJSON *const *entries,
                                  const char *field, bool matters)
{
    cJSON *d = cJSON_CreateObject(), *vals = NULL;
    if (!d || !cJSON_AddItemToArray(list, d)) {
        cJSON_Delete(d);
        return AITK_E_NOMEM;
    }
    const char *title = "";
    for (size_t i = 0; i < c->n && !*title; i++)
        title = aitk_field_str(entries[i], "title");
    aitk_str subject = AITK_STR_INIT;
    aitk_str_appendf(&subject, "%s %s", k->label, name);
    bool ok = !aitk_str_status(&subject) &&
              cJSON_AddStringToObject(d, "subject", subject.ptr) &&
              cJSON_AddStringToObject(d, "title", title) &&
              cJSON_AddStringToObject(d, "what", field) &&
              cJSON_AddBoolToObject(d, "matters", matters) &&
              (vals = cJSON_AddArrayToObject(d, "values"));
    aitk_str_free(&subject);
    for (size_t i = 0; ok && i < c->n; i++) {
        cJSON *v = cJSON_CreateObject();
        ok = v && cJSON_AddItemToArray(vals, v);
        if (!ok) {
            cJSON_Delete(v);
            break;
        }
        ok = cJSON_AddStringToObject(v, "node", c->nodes[i].name) &&
             cJSON_AddStringToObject(v, "value", field_or_absent(entries[i], field));
        /* A status that differs is read with what each node saw. */
        if (ok && entries[i] && k->observed && field != k->observed)
            ok = cJSON_AddStringToObject(v, "observed",
                                         aitk_field_str(entries[i], k->observed)) != NULL;
    }
    c->differences++;
    c->differences_that_matter += matters;
    return ok ? AITK_OK : AITK_E_NOMEM;
}

/* Every subject of one kind, in the order nodes first name them. */
static aitk_status diff_kind_all(aitk_fleet_merge_ctx *c, cJSON *list, const diff_kind *k,
                                 const cJSON **entries)
{
    aitk_fleet_lists l;
    aitk_str key = AITK_STR_INIT;
    aitk_status st = aitk_fleet_lists_build(&l, c, k->list, k->key);
    for (size_t node = 0; !st && node < c->n; node++) {
        const cJSON *e;
        cJSON_ArrayForEach(e, aitk_field_array(c->nodes[node].report, k->list))
        {
            const char *name = aitk_entry_key(e, k->key, &key);
            if (!name) {
                st = AITK_E_NOMEM;
                break;
            }
            if (!*name || aitk_name_index_find(&l.ix[node], name) != e ||
                aitk_fleet_seen_before(&l, node, name))
                continue;
            for (size_t i = 0; i < c->n; i++)
                entries[i] = aitk_name_index_find(&l.ix[i], name);
            if (k->status && !all_same(entries, c->n, k->status))
                st = add_difference(c, list, k, name, entries, k->status, true);
            else if (k->observed && !all_same(entries, c->n, k->observed))
                st = add_difference(c, list, k, name, entries, k->observed,
                                    k->observed_matters || !k->status);
            if (st)
                break;
        }
    }
    aitk_str_free(&key);
    aitk_fleet_lists_free(&l);
    return st;
}

aitk_status aitk_fleet_add_differences(aitk_fleet_merge_ctx *c, cJSON *fleet)
{
    cJSON *list = cJSON_AddArrayToObject(fleet, "differences");
    const cJSON **entries = aitk_calloc(c->n, sizeof *entries);
    aitk_status st = list && entries ? AITK_OK : AITK_E_NOMEM;
    for (size_t k = 0; !st && k < sizeof kinds / sizeof *kinds; k++)
        st = diff_kind_all(c, list, &kinds[k], entries);
    aitk_free(entries);
    return st;
}
