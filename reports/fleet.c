/* Many node reports -> one fleet report (see fleet.h): the node table, the
 * versions each node runs, and the summary. The differences between nodes
 * are found in fleet_diff.c, the outliers among their figures in
 * fleet_metrics.c. */
#include "reports/fleet.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/compare.h"
#include "reports/fields.h"
#include "reports/fleet_parts.h"

#define FLEET_SCHEMA_VERSION "1.0"

/* Where a report keeps the versions a fleet should agree on: the probes'
 * environment record (validate/probes) and the host section. A node that
 * differs from the others in one of these runs other software than the
 * fleet was validated with, whatever its checks say. */
static const struct version_fact {
    const char *label, *path;
} version_facts[] = {
    {"aitk-validate", "tool.version"},
    {"NVIDIA driver", "environment.gpu.nvml.driver_version"},
    {"CUDA (driver API)", "environment.gpu.cuda_driver.cuda_version"},
    {"CUDA runtime (GPU plugin)", "environment.cuda_plugin.runtime_version"},
    {"cuBLASLt (GPU plugin)", "environment.cuda_plugin.cublaslt_version"},
    {"cuDNN (GPU plugin)", "environment.cuda_plugin.cudnn_version"},
    {"CUDA runtime (found for torch)", "environment.cuda_stack.cudart.version"},
    {"cuBLAS (found for torch)", "environment.cuda_stack.cublas.version"},
    {"cuBLASLt (found for torch)", "environment.cuda_stack.cublaslt.version"},
    {"cuDNN (found for torch)", "environment.cuda_stack.cudnn.version"},
    {"NCCL (found for torch)", "environment.cuda_stack.nccl.version"},
    {"Python", "environment.python.environments.0.python_version"},
    {"torch", "environment.python.environments.0.torch.version"},
    {"C library", "host.os.libc"},
    {"Linux kernel", "host.os.kernel"},
};

/* The item at a dotted path; a segment of digits indexes a list. */
static const cJSON *at_path(const cJSON *root, const char *path)
{
    char seg[64];
    const cJSON *cur = root;
    while (cur && *path) {
        size_t len = strcspn(path, ".");
        if (len >= sizeof seg)
            return NULL;
        memcpy(seg, path, len);
        seg[len] = '\0';
        path += len + (path[len] == '.');
        if (cJSON_IsArray(cur) && seg[0] >= '0' && seg[0] <= '9')
            cur = cJSON_GetArrayItem(cur, (int)strtol(seg, NULL, 10));
        else
            cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, seg) : NULL;
    }
    return cur;
}

/* The fact as text in `buf`, or NULL when the node does not say: absent, an
 * empty text, or 0 (the plugin's "version unknown"). */
static const char *fact_text(const cJSON *report, const char *path, char *buf, size_t cap)
{
    const cJSON *v = at_path(report, path);
    if (cJSON_IsString(v) && v->valuestring && *v->valuestring)
        return v->valuestring;
    if (cJSON_IsNumber(v) && v->valuedouble > 0) {
        snprintf(buf, cap, "%.15g", v->valuedouble);
        return buf;
    }
    return NULL;
}

aitk_status aitk_fleet_add_outlier(aitk_fleet_merge_ctx *c, size_t node, const char *kind,
                                   const char *subject, const char *value,
                                   const char *reference, const char *detail)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(c->outliers, o)) {
        cJSON_Delete(o);
        return AITK_E_NOMEM;
    }
    bool ok = cJSON_AddStringToObject(o, "node", c->nodes[node].name) &&
              cJSON_AddStringToObject(o, "kind", kind) &&
              cJSON_AddStringToObject(o, "subject", subject) &&
              cJSON_AddStringToObject(o, "value", value) &&
              cJSON_AddStringToObject(o, "reference", reference) &&
              cJSON_AddStringToObject(o, "detail", detail);
    return ok ? AITK_OK : AITK_E_NOMEM;
}

/* The value most nodes have (the first seen on a tie) and how many have it. */
static size_t most_common(const char *const *vals, size_t n, size_t *best)
{
    size_t most = 0;
    *best = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        for (size_t j = 0; j < n; j++)
            k += strcmp(vals[i], vals[j]) == 0;
        if (k > most) {
            most = k;
            *best = i;
        }
    }
    return most;
}

/* A node outside a strict majority runs another version than the fleet.
 * Without a majority (two nodes that disagree) no node is blamed: the
 * difference itself is listed and counts. */
static aitk_status version_outliers(aitk_fleet_merge_ctx *c, const struct version_fact *f,
                                    const char *const *vals, cJSON *entry)
{
    size_t ref;
    size_t most = most_common(vals, c->n, &ref);
    bool majority = most * 2 > c->n;
    if (!cJSON_AddStringToObject(entry, "reference", majority ? vals[ref] : "") ||
        !cJSON_AddBoolToObject(entry, "majority", majority))
        return AITK_E_NOMEM;
    aitk_status st = AITK_OK;
    aitk_str detail = AITK_STR_INIT;
    for (size_t i = 0; !st && majority && i < c->n; i++) {
        if (strcmp(vals[i], vals[ref]) == 0)
            continue;
        aitk_str_clear(&detail);
        aitk_str_appendf(&detail, "%s where %zu of %zu nodes have %s", vals[i], most, c->n,
                         vals[ref]);
        st = aitk_str_status(&detail);
        if (!st)
            st = aitk_fleet_add_outlier(c, i, "version", f->label, vals[i], vals[ref],
                                        detail.ptr);
    }
    aitk_str_free(&detail);
    return st;
}

/* fleet.versions: each fact some node states, with every node's value. */
static aitk_status one_version(aitk_fleet_merge_ctx *c, const struct version_fact *f,
                               cJSON *versions, const char **vals, char (*bufs)[32])
{
    size_t stated = 0, distinct_from_first = 0;
    for (size_t i = 0; i < c->n; i++) {
        vals[i] = fact_text(c->nodes[i].report, f->path, bufs[i], sizeof bufs[i]);
        stated += vals[i] != NULL;
        if (!vals[i])
            vals[i] = AITK_FLEET_ABSENT;
    }
    if (!stated)
        return AITK_OK;
    for (size_t i = 1; i < c->n; i++)
        distinct_from_first += strcmp(vals[i], vals[0]) != 0;
    cJSON *e = cJSON_CreateObject(), *list = NULL;
    if (!e || !cJSON_AddItemToArray(versions, e)) {
        cJSON_Delete(e);
        return AITK_E_NOMEM;
    }
    if (!cJSON_AddStringToObject(e, "name", f->label) ||
        !cJSON_AddStringToObject(e, "source", f->path) ||
        !cJSON_AddBoolToObject(e, "differs", distinct_from_first > 0) ||
        !(list = cJSON_AddArrayToObject(e, "values")))
        return AITK_E_NOMEM;
    for (size_t i = 0; i < c->n; i++) {
        cJSON *v = cJSON_CreateObject();
        if (!v || !cJSON_AddItemToArray(list, v)) {
            cJSON_Delete(v);
            return AITK_E_NOMEM;
        }
        if (!cJSON_AddStringToObject(v, "node", c->nodes[i].name) ||
            !cJSON_AddStringToObject(v, "value", vals[i]))
            return AITK_E_NOMEM;
    }
    if (!distinct_from_first)
        return cJSON_AddStringToObject(e, "reference", vals[0]) &&
                       cJSON_AddBoolToObject(e, "majority", true)
                   ? AITK_OK
                   : AITK_E_NOMEM;
    c->version_differences++;
    return version_outliers(c, f, vals, e);
}

static aitk_status add_versions(aitk_fleet_merge_ctx *c, cJSON *fleet)
{
    cJSON *versions = cJSON_AddArrayToObject(fleet, "versions");
    const char **vals = aitk_calloc(c->n, sizeof *vals);
    char(*bufs)[32] = aitk_calloc(c->n, sizeof *bufs);
    aitk_status st = versions && vals && bufs ? AITK_OK : AITK_E_NOMEM;
    for (size_t k = 0; !st && k < sizeof version_facts / sizeof *version_facts; k++)
        st = one_version(c, &version_facts[k], versions, vals, bufs);
    aitk_free(vals);
    aitk_free(bufs);
    return st;
}

/* The first device a workload or microbenchmark names: what the node ran on. */
static void node_device(const cJSON *report, const char **backend, const char **device)
{
    static const char *const lists[] = {"workloads", "micro"};
    *backend = *device = "";
    for (int k = 0; k < 2; k++) {
        const cJSON *e;
        cJSON_ArrayForEach(e, aitk_field_array(report, lists[k]))
        {
            if (!**backend)
                *backend = aitk_field_str(e, "backend");
            if (!**device)
                *device = aitk_field_str(e, "device");
        }
    }
}

static aitk_status one_node(cJSON *list, const aitk_fleet_node *node)
{
    const cJSON *r = node->report, *summary = aitk_field_obj(r, "summary");
    const cJSON *counts = aitk_field_obj(summary, "counts");
    const char *backend, *device;
    node_device(r, &backend, &device);
    cJSON *e = cJSON_CreateObject(), *cn = NULL;
    if (!e || !cJSON_AddItemToArray(list, e)) {
        cJSON_Delete(e);
        return AITK_E_NOMEM;
    }
    bool ok = cJSON_AddStringToObject(e, "name", node->name) &&
              cJSON_AddStringToObject(e, "hostname",
                                      aitk_field_str(aitk_field_obj(r, "host"), "hostname")) &&
              cJSON_AddStringToObject(e, "created_at", aitk_field_str(r, "created_at")) &&
              cJSON_AddStringToObject(e, "level", aitk_field_str(r, "level")) &&
              cJSON_AddStringToObject(e, "verdict", aitk_field_str(summary, "verdict")) &&
              cJSON_AddStringToObject(e, "backend", backend) &&
              cJSON_AddStringToObject(e, "device", device) &&
              (cn = cJSON_AddObjectToObject(e, "counts"));
    static const char *const keys[] = {"pass", "warn", "fail", "skip", "total"};
    for (int k = 0; ok && k < 5; k++) {
        double v = 0;
        /* A count that is not a count reads as 0: the table shows what the
         * node said, and the verdict (checked) is what the merge relies on. */
        if (!aitk_field_num(counts, keys[k], &v) || !(v >= 0) || v > 1e9)
            v = 0;
        ok = cJSON_AddNumberToObject(cn, keys[k], (double)(long)v) != NULL;
    }
    /* The failures the node's report says to fix first (reports/causes.h):
     * a fleet's missing drivers read as one name a node. */
    cJSON *first = ok ? cJSON_AddArrayToObject(e, "fix_first") : NULL;
    ok = first != NULL;
    const cJSON *f;
    cJSON_ArrayForEach(f, aitk_field_array(summary, "fix_first"))
    {
        const char *id = aitk_field_str(f, "id");
        if (ok && *id)
            ok = cJSON_AddItemToArray(first, cJSON_CreateString(id));
    }
    return ok ? AITK_OK : AITK_E_NOMEM;
}

/* Each node's report as compare reads it, named in visible characters: a
 * file name with an ESC sequence must not reach the terminal raw. */
static aitk_status check_nodes(const aitk_fleet_node *nodes, size_t n, aitk_str *err)
{
    aitk_str name = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && i < n; i++) {
        aitk_str_clear(&name);
        aitk_str_append_printable(&name, nodes[i].name ? nodes[i].name : "(unnamed)", false);
        const cJSON *checks = cJSON_GetObjectItemCaseSensitive(nodes[i].report, "checks");
        if ((st = aitk_str_status(&name)))
            break;
        if (!cJSON_IsObject(nodes[i].report)) {
            aitk_str_appendf(err, "%s: not a report (the top level is not an object)", name.ptr);
            st = AITK_E_PARSE;
        } else if (checks && !cJSON_IsArray(checks)) {
            aitk_str_appendf(err, "%s: checks is not a list", name.ptr);
            st = AITK_E_PARSE;
        } else {
            st = aitk_compare_check_report(nodes[i].report, name.ptr, err);
        }
    }
    aitk_str_free(&name);
    return st;
}

static aitk_status add_header(cJSON *f, const aitk_fleet_merge_ctx *c)
{
    cJSON *rule = NULL;
    bool ok = cJSON_AddStringToObject(f, "kind", "aitk-validate fleet") &&
              cJSON_AddStringToObject(f, "fleet_schema_version", FLEET_SCHEMA_VERSION) &&
              (rule = cJSON_AddObjectToObject(f, "rule")) &&
              cJSON_AddStringToObject(rule, "statistic",
                                      "modified z-score 0.6745 (x - median) / MAD") &&
              cJSON_AddNumberToObject(rule, "z_limit", c->rule.z_limit) &&
              cJSON_AddNumberToObject(rule, "min_relative_distance", c->rule.min_relative) &&
              cJSON_AddNumberToObject(rule, "min_nodes", (double)c->rule.min_values) &&
              cJSON_AddStringToObject(rule, "source",
                                      "Iglewicz and Hoaglin; NIST/SEMATECH e-Handbook of "
                                      "Statistical Methods, 1.3.5.17 Detection of Outliers");
    return ok ? AITK_OK : AITK_E_NOMEM;
}

static aitk_status fill_summary(cJSON *s, const aitk_fleet_merge_ctx *c)
{
    size_t outliers = (size_t)cJSON_GetArraySize(c->outliers);
    bool statistical = c->n >= c->rule.min_values;
    bool attention = outliers || c->version_differences || c->differences_that_matter;
    char note[160] = "";
    if (!statistical)
        snprintf(note, sizeof note,
                 "%zu node(s): fewer than %zu, so no statistical outlier is claimed; "
                 "version and check differences are still listed",
                 c->n, c->rule.min_values);
    bool ok = cJSON_AddNumberToObject(s, "nodes", (double)c->n) &&
              cJSON_AddBoolToObject(s, "statistical", statistical) &&
              cJSON_AddStringToObject(s, "note", note) &&
              cJSON_AddNumberToObject(s, "outliers", (double)outliers) &&
              cJSON_AddNumberToObject(s, "version_differences", (double)c->version_differences) &&
              cJSON_AddNumberToObject(s, "differences", (double)c->differences) &&
              cJSON_AddNumberToObject(s, "differences_that_matter",
                                      (double)c->differences_that_matter) &&
              cJSON_AddStringToObject(s, "verdict", attention ? "attention" : "clean") &&
              cJSON_AddNumberToObject(s, "exit_code", attention ? 1 : 0);
    return ok ? AITK_OK : AITK_E_NOMEM;
}

aitk_status aitk_fleet_merge(const aitk_fleet_node *nodes, size_t n, cJSON **fleet, aitk_str *err)
{
    if (!nodes || n == 0 || !fleet)
        return AITK_E_INVAL;
    *fleet = NULL;
    for (size_t i = 0; i < n; i++)
        if (!nodes[i].name)
            return AITK_E_INVAL;
    aitk_str unsaid = AITK_STR_INIT;
    aitk_status st = check_nodes(nodes, n, err ? err : &unsaid);
    aitk_str_free(&unsaid);
    if (st)
        return st;
    aitk_fleet_merge_ctx c = {.nodes = nodes, .n = n, .rule = aitk_robust_default_rule};
    cJSON *f = cJSON_CreateObject(), *summary = NULL, *list = NULL;
    st = f ? add_header(f, &c) : AITK_E_NOMEM;
    if (!st && !((summary = cJSON_AddObjectToObject(f, "summary")) &&
                 (list = cJSON_AddArrayToObject(f, "nodes")) &&
                 (c.outliers = cJSON_AddArrayToObject(f, "outliers"))))
        st = AITK_E_NOMEM;
    for (size_t i = 0; !st && i < n; i++)
        st = one_node(list, &nodes[i]);
    if (!st)
        st = add_versions(&c, f);
    if (!st)
        st = aitk_fleet_add_differences(&c, f);
    if (!st)
        st = aitk_fleet_add_metrics(&c, f);
    if (!st)
        st = fill_summary(summary, &c);
    if (st) {
        cJSON_Delete(f);
        return st;
    }
    *fleet = f;
    return AITK_OK;
}

int aitk_fleet_exit_code(const cJSON *fleet)
{
    double v = 0;
    const cJSON *s = aitk_field_obj(fleet, "summary");
    double outliers = 0, versions = 0, matter = 0;
    aitk_field_num(s, "outliers", &outliers);
    aitk_field_num(s, "version_differences", &versions);
    aitk_field_num(s, "differences_that_matter", &matter);
    v = outliers + versions + matter;
    return v > 0 ? 1 : 0;
}
