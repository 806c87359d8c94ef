/* The figures of the fleet (see fleet_parts.h): each workload metric of
 * reports/metrics.h and each microbenchmark value, one series across the
 * nodes that measured it, judged by the robust rule (reports/robust.h).
 * Both directions stand out: a node far faster than the others is as
 * suspect as a slow one (another GPU, a benchmark that did less work). */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fields.h"
#include "reports/fleet_parts.h"
#include "reports/metrics.h"

/* One series being judged: which nodes measured it and their values. */
typedef struct series {
    const char *name, *unit;
    bool higher_is_better;
    size_t *node; /* c->n slots */
    double *value;
    size_t count;
} series;

static aitk_status add_number_or_null(cJSON *o, const char *key, bool has, double v)
{
    cJSON *item = has && isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
    if (!item || !cJSON_AddItemToObject(o, key, item)) {
        cJSON_Delete(item);
        return AITK_E_NOMEM;
    }
    return AITK_OK;
}

/* "1.600 s, +60.0% from the median 1.000 s (z 39.8), worse" */
static aitk_status outlier_of(aitk_fleet_merge_ctx *c, const series *s, size_t k,
                              const aitk_robust_centre *ce, const aitk_robust_verdict *v)
{
    aitk_str value = AITK_STR_INIT, ref = AITK_STR_INIT, detail = AITK_STR_INIT;
    double x = s->value[k];
    aitk_metric_value_text(&value, x, s->unit);
    aitk_metric_value_text(&ref, ce->median, s->unit);
    bool worse = s->higher_is_better ? x < ce->median : x > ce->median;
    aitk_str_appendf(&detail, "%s where the median of %zu nodes is %s (", value.ptr, s->count,
                     ref.ptr);
    if (ce->median != 0)
        aitk_change_delta_text(&detail, (x - ce->median) / fabs(ce->median) * 100);
    else
        aitk_str_append(&detail, "from 0");
    if (v->has_z)
        aitk_str_appendf(&detail, ", modified z %.1f", v->z);
    else
        aitk_str_append(&detail, ", the other nodes agree exactly");
    aitk_str_appendf(&detail, "): %s", worse ? "worse" : "better");
    aitk_status st = aitk_str_status(&value);
    if (!st)
        st = aitk_str_status(&ref);
    if (!st)
        st = aitk_str_status(&detail);
    if (!st)
        st = aitk_fleet_add_outlier(c, s->node[k], "metric", s->name, value.ptr, ref.ptr,
                                    detail.ptr);
    aitk_str_free(&value);
    aitk_str_free(&ref);
    aitk_str_free(&detail);
    return st;
}

static aitk_status value_entry(cJSON *vals, const char *node, double x,
                               const aitk_robust_verdict *v)
{
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToArray(vals, e)) {
        cJSON_Delete(e);
        return AITK_E_NOMEM;
    }
    if (!cJSON_AddStringToObject(e, "node", node) || !cJSON_AddNumberToObject(e, "value", x) ||
        !cJSON_AddBoolToObject(e, "outlier", v->outlier))
        return AITK_E_NOMEM;
    aitk_status st = add_number_or_null(e, "z", v->has_z, v->z);
    return st ? st : add_number_or_null(e, "relative", true, v->relative);
}

static aitk_status judge_series(aitk_fleet_merge_ctx *c, cJSON *list, const series *s)
{
    if (!s->count)
        return AITK_OK;
    aitk_robust_centre ce;
    aitk_status st = aitk_robust_centre_of(s->value, s->count, &c->rule, &ce);
    if (st)
        return st;
    /* A fleet too small to judge claims nothing, whatever one metric has. */
    ce.judged = ce.judged && c->n >= c->rule.min_values;
    cJSON *m = cJSON_CreateObject(), *vals = NULL;
    if (!m || !cJSON_AddItemToArray(list, m)) {
        cJSON_Delete(m);
        return AITK_E_NOMEM;
    }
    if (!cJSON_AddStringToObject(m, "name", s->name) ||
        !cJSON_AddStringToObject(m, "unit", s->unit) ||
        !cJSON_AddBoolToObject(m, "higher_is_better", s->higher_is_better) ||
        !cJSON_AddBoolToObject(m, "judged", ce.judged) ||
        !cJSON_AddNumberToObject(m, "median", ce.median) ||
        !cJSON_AddNumberToObject(m, "mad", ce.mad) ||
        !(vals = cJSON_AddArrayToObject(m, "values")))
        return AITK_E_NOMEM;
    for (size_t k = 0; !st && k < s->count; k++) {
        aitk_robust_verdict v = aitk_robust_judge(&ce, &c->rule, s->value[k]);
        st = value_entry(vals, c->nodes[s->node[k]].name, s->value[k], &v);
        if (!st && v.outlier)
            st = outlier_of(c, s, k, &ce, &v);
    }
    return st;
}

/* workloads[name].<section>.<key> on every node that ran the workload. */
static aitk_status workload_series(aitk_fleet_merge_ctx *c, cJSON *list,
                                   const aitk_fleet_lists *l, const char *name, series *s,
                                   aitk_str *label)
{
    aitk_status st = AITK_OK;
    for (size_t m = 0; !st && m < aitk_workload_metric_count; m++) {
        const aitk_metric_def *d = &aitk_workload_metrics[m];
        aitk_str_clear(label);
        aitk_str_appendf(label, "workload %s: %s", name, d->label);
        if ((st = aitk_str_status(label)))
            break;
        *s = (series){.name = label->ptr, .unit = d->unit, .higher_is_better = d->higher_is_better,
                      .node = s->node, .value = s->value};
        for (size_t i = 0; i < c->n; i++) {
            const cJSON *w = aitk_name_index_find(&l->ix[i], name);
            double x;
            if (aitk_field_num(aitk_field_obj(w, d->section), d->key, &x) && isfinite(x)) {
                s->node[s->count] = i;
                s->value[s->count++] = x;
            }
        }
        st = judge_series(c, list, s);
    }
    return st;
}

/* micro[name].value on every node whose entry has the first node's unit;
 * another unit is a difference (fleet_diff.c), not a figure to compare. */
static aitk_status micro_series(aitk_fleet_merge_ctx *c, cJSON *list, const aitk_fleet_lists *l,
                                const cJSON *first, series *s, aitk_str *label)
{
    const char *name = aitk_field_str(first, "name");
    aitk_str_clear(label);
    aitk_str_appendf(label, "micro %s", name);
    if (aitk_str_status(label))
        return AITK_E_NOMEM;
    *s = (series){.name = label->ptr, .unit = aitk_field_str(first, "unit"),
                  .higher_is_better = aitk_micro_higher_is_better(first), .node = s->node,
                  .value = s->value};
    for (size_t i = 0; i < c->n; i++) {
        const cJSON *e = aitk_name_index_find(&l->ix[i], name);
        double x;
        if (e && strcmp(aitk_field_str(e, "unit"), s->unit) == 0 &&
            aitk_field_num(e, "value", &x) && isfinite(x)) {
            s->node[s->count] = i;
            s->value[s->count++] = x;
        }
    }
    return judge_series(c, list, s);
}

/* Each subject of `listname` once, in the order nodes first name it. */
static aitk_status all_series(aitk_fleet_merge_ctx *c, cJSON *list, const char *listname,
                              series *s, aitk_str *label)
{
    aitk_fleet_lists l;
    bool micro = strcmp(listname, "micro") == 0;
    const char *keyname = micro ? "name" : AITK_WORKLOAD_KEY;
    aitk_str key = AITK_STR_INIT;
    aitk_status st = aitk_fleet_lists_build(&l, c, listname, keyname);
    for (size_t node = 0; !st && node < c->n; node++) {
        const cJSON *e;
        cJSON_ArrayForEach(e, aitk_field_array(c->nodes[node].report, listname))
        {
            const char *name = aitk_entry_key(e, keyname, &key);
            if (!name) {
                st = AITK_E_NOMEM;
                break;
            }
            if (!*name || aitk_fleet_seen_before(&l, node, name) ||
                aitk_name_index_find(&l.ix[node], name) != e)
                continue;
            st = micro ? micro_series(c, list, &l, e, s, label)
                       : workload_series(c, list, &l, name, s, label);
            if (st)
                break;
        }
    }
    aitk_str_free(&key);
    aitk_fleet_lists_free(&l);
    return st;
}

aitk_status aitk_fleet_add_metrics(aitk_fleet_merge_ctx *c, cJSON *fleet)
{
    cJSON *list = cJSON_AddArrayToObject(fleet, "metrics");
    series s = {.node = aitk_calloc(c->n, sizeof *s.node),
                .value = aitk_calloc(c->n, sizeof *s.value)};
    aitk_str label = AITK_STR_INIT;
    aitk_status st = list && s.node && s.value ? AITK_OK : AITK_E_NOMEM;
    if (!st)
        st = all_series(c, list, "workloads", &s, &label);
    if (!st)
        st = all_series(c, list, "micro", &s, &label);
    aitk_free(s.node);
    aitk_free(s.value);
    aitk_str_free(&label);
    return st;
}
